"""Structured inputs for parser modules, built from the module's own grammar (tt_inputs.py).

A parser reads documents, not words: a random string rarely gets past its first regex, and a
constant of the module on its own rarely reaches a second section. So for a module that parses
(a callable named like a parser, or regexes over lines), this builds multi-line documents from
what the module itself says its input looks like:

- its regexes: strings that match them, and near misses (one character off);
- the line markers its anchored regexes require (`^:`, `^@`, `^\\.\\.`) and the separators
  its regexes and format strings spell (`:`, ` = `, `(...)`);
- its keywords and section names: identifier-like string constants of the source, and the
  strings of the collections the module holds (imported ones too, such as a keyword set);
- its format strings (f-strings and `{}` / `%s` templates), filled with those words;
- its own multi-line string constants (docstrings included), which a parser's authors write in
  the formats it reads.

A document is a first line, maybe a paragraph, then one to three blocks: a header (a section
name, with a colon, an underline or a marker) over indented entries, marker lines, or filled
templates. Everything here is text: nothing is evaluated, in any process.
"""

import ast
import re

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,29}$")
SYMBOL = re.compile(r"^[^\w\s]{1,3}$")
PARSER_NAMES = re.compile(r"parse|load|decode|read|token|lex|scan|split|unpack|from_str|deseriali", re.I)
SEPARATORS = [": ", ":", " : ", " = ", " -- ", " "]
PROSE = ["A short summary.", "Does the thing", "first line", "Some text here.", "x", "More words follow"]
MAX_DOCUMENT = 600


def _strings_of(value, depth=0):
    """The strings a module-level collection holds (a set of keywords, a dict's keys). Only the
    builtin collection types are read, so no code of the module runs here."""
    if depth > 2:
        return []
    if type(value) is str:
        return [value]
    if type(value) is dict:
        return [k for k in list(value)[:60] if type(k) is str]
    if type(value) in (set, frozenset):
        return sorted(v for v in value if type(v) is str)[:60]
    if type(value) in (list, tuple):
        return [s for v in value[:60] for s in _strings_of(v, depth + 1)]
    return []


def _templates(tree):
    """Format strings of the source as lists of literal pieces (a slot between two)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            pieces, text = [], ""
            for part in node.values:
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    text += part.value
                else:
                    pieces.append(text)
                    text = ""
            pieces.append(text)
            if len(pieces) > 1 and _readable(pieces):
                out.append(pieces)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) <= 80:
            pieces = re.split(r"\{[^{}]*\}|%[sdr]", node.value)
            if len(pieces) > 1 and _readable(pieces):
                out.append(pieces)
    return out[:60]


def _readable(pieces):
    """A template's text is a document's (not a regex's, a path's or a long message's)."""
    text = "".join(pieces)
    return bool(text.strip()) and len(text) <= 80 and "\\" not in text and not text.startswith("^")


def _marker(pattern, flags, sre):
    """The literal text an anchored regex requires at a line's start (`^:` gives ':')."""
    parser, c = sre
    try:
        items = list(parser.parse(pattern, flags))
    except Exception:  # noqa: BLE001
        return None
    if not items or items[0][0] is not c.AT:
        return None
    text = ""
    for op, av in items[1:]:
        if op is not c.LITERAL:
            break
        text += chr(av)
    return text or None


def _literals(pattern):
    """Punctuation a regex spells literally (separators a document may use)."""
    plain = re.sub(r"\\[A-Za-z]|\[[^\]]*\]|\(\?[^)]*\)|[()|*+?{}^$.\\]", " ", pattern)
    return sorted({ch for ch in plain if ch in ":=@#-,;[]<>"})


class Grammar:
    """What a parser module's input looks like, and documents drawn from it."""

    def __init__(self, source, module, patterns, sre, sample):
        """`patterns`: the module's (pattern, flags); `sre`: (re's parser, its constants);
        `sample(pattern, flags, rng)`: a string the pattern matches (tt_analysis.regex_sample)."""
        self.patterns, self.sample = list(patterns), sample
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            tree = ast.Module(body=[], type_ignores=[])
        constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        held = [s for name, v in sorted(vars(module).items()) if not name.startswith("__")
                and isinstance(v, (list, tuple, set, frozenset, dict)) for s in _strings_of(v)]
        words = sorted({s for s in constants + held if IDENTIFIER.match(s)})
        self.words = words or ["name"]
        self.titles = [w for w in words if w[:1].isupper() and len(w) > 2] or [w.capitalize() for w in self.words[:8]]
        self.keywords = [w for w in words if w[:1].islower()] or self.words
        self.markers = sorted({m for p, f in self.patterns for m in [_marker(p, f, sre)] if m})
        self.punct = sorted({ch for p, _ in self.patterns for ch in _literals(p)})
        self.symbols = sorted({s for s in constants if SYMBOL.match(s) and s.isprintable()})
        self.templates = _templates(tree)
        self.documents = sorted({s.strip("\n") for s in constants if "\n" in s and 20 <= len(s) <= 2000})
        self.active = bool(self.patterns or self.markers) and any(
            PARSER_NAMES.search(name) for name in vars(module) if callable(vars(module)[name]))

    # -- pieces --

    def word(self, rng):
        return rng.choice(self.keywords if rng.random() < 0.6 else self.words)

    def matching(self, rng, anchored=False):
        """A string one of the module's regexes matches (an anchored one only if asked)."""
        options = [p for p in self.patterns if anchored or not p[0].startswith("^")] or self.patterns
        if not options:
            return self.word(rng)
        for _ in range(3):
            pattern, flags = rng.choice(options)
            text = self.sample(pattern, flags, rng)
            if text and "\n" not in text.strip("\n"):
                return text.strip("\n")
        return self.word(rng)

    def near_miss(self, text, rng):
        """`text` one character off: dropped, doubled, or a separator swapped."""
        if not text:
            return text
        i = rng.randrange(len(text))
        roll = rng.random()
        if roll < 0.4:
            return text[:i] + text[i + 1:]
        if roll < 0.7:
            return text[:i] + text[i] + text[i:]
        swap = rng.choice(self.punct or [":", " "])
        return text[:i] + swap + text[i + 1:]

    def fill(self, rng):
        """A format string of the module with its slots filled by words."""
        pieces = rng.choice(self.templates)
        out = pieces[0]
        for piece in pieces[1:]:
            out += self.word(rng) + piece
        return out.strip("\n")

    def entry(self, rng):
        """One item of a block: a regex match, maybe then a separator and some words."""
        text = self.matching(rng)
        roll = rng.random()
        if "=" in self.symbols and roll < 0.5:
            return f"{self.word(rng)} = {self.value(rng)}"
        if roll < 0.45:
            text = f"{self.word(rng)}{rng.choice(SEPARATORS)}{rng.choice(PROSE)}"
        elif roll < 0.75:
            text += rng.choice(SEPARATORS) + rng.choice(PROSE)
        return text

    def header(self, rng):
        """A section's first line(s): a title with a colon, underlined, alone, or in the brackets
        the source compares lines with (`[name]`, `[[name]]`)."""
        title = rng.choice(self.titles)
        style = rng.random()
        if "[" in self.symbols and "]" in self.symbols and style < 0.5:
            name = rng.choice(self.keywords + self.titles)
            return [f"[[{name}]]" if "]]" in self.symbols and rng.random() < 0.3 else f"[{name}]"]
        if style < 0.6:
            return [title + ":"]
        return [title, "-" * len(title)] if style < 0.85 else [title]

    def value(self, rng, depth=0):
        """Something a key may be given: a regex match, a keyword, a number, quoted words, or a
        list or table in the brackets the source uses."""
        quote = rng.choice([q for q in ('"', "'") if q in self.symbols] or ['"'])
        roll = rng.random()
        if depth < 2 and roll < 0.15 and {"[", "]", ","} <= set(self.symbols):
            return "[" + ", ".join(self.value(rng, depth + 1) for _ in range(rng.randint(0, 3))) + "]"
        if depth < 2 and roll < 0.25 and {"{", "}"} <= set(self.symbols):
            return "{ " + f"{self.word(rng)} = {self.value(rng, depth + 1)}" + " }"
        return rng.choice([self.matching(rng), self.word(rng), str(rng.randint(-5, 1000)),
                           quote + rng.choice(PROSE) + quote])

    # -- blocks and documents --

    def block(self, rng):
        """A header over indented entries, marker lines, or filled templates."""
        roll = rng.random()
        count = rng.randint(1, 3)
        if self.markers and roll < 0.3:
            marker = rng.choice(self.markers)
            return [f"{marker}{self.word(rng)}" + rng.choice(["", " " + self.word(rng)]) + rng.choice(
                [": ", ":", " "]) + rng.choice(PROSE) for _ in range(count)]
        if self.templates and roll < 0.4:
            return [self.fill(rng) for _ in range(count)]
        if "=" in self.symbols and roll < 0.55:
            return [f"{self.word(rng)} = {self.value(rng)}" for _ in range(count)]
        head = self.header(rng)
        indent = rng.choice(["    ", "  ", "\t", ""])
        lines = head + [indent + self.entry(rng) for _ in range(count)]
        if rng.random() < 0.3:
            lines.insert(len(head) + 1, indent * 2 + rng.choice(PROSE))  # a continuation line
        return lines

    def document(self, rng):
        """A multi-line document in the module's grammar; a near miss of one line now and then,
        or one of the module's own multi-line strings (cut or mixed with a block)."""
        if self.documents and rng.random() < 0.2:
            text = rng.choice(self.documents)
            if rng.random() < 0.5:
                text += "\n\n" + "\n".join(self.block(rng))
            return text[:MAX_DOCUMENT]
        lines = [rng.choice(PROSE)] if rng.random() < 0.7 else []
        if lines and rng.random() < 0.5:
            lines += ["", rng.choice(PROSE) + " " + self.word(rng)]
        for _ in range(rng.randint(1, 3)):
            lines += [""] if lines and rng.random() < 0.7 else []
            lines += self.block(rng)
            if "#" in self.symbols and rng.random() < 0.2:
                lines.append("# " + rng.choice(PROSE))
        if rng.random() < 0.2:
            i = rng.randrange(len(lines))
            lines[i] = self.near_miss(lines[i], rng)
        return "\n".join(lines)[:MAX_DOCUMENT]
