"""The generator's inputs stage: the argument expressions (Python source) a call is built from.

`Inputs` draws a value for a parameter from its annotation, its name and the module's literals,
from strings of common formats (valid checksums included), the module's regular expressions and,
for a parser, documents in its own grammar; from small callables, boundary and wrong-type values,
files and folders made inside the test's tmp_path, results of earlier calls and instances of the
module's classes. `CallBuilding` turns one discovered item into a use of it: a call, a
constructor, a method on an owner, a property read or write, a dunder through its operator form,
and the statements that put an object in some state first. Nothing is evaluated here: inputs are
text, run only in the execution stage's forked call. Also here: the boundary variants of a call
(the same call with one argument at a boundary of its kind, or a default left out), and the command
lines an entry point of layer L3 runs with. Imports only the analysis stage.
"""

import ast
import inspect
import os
import pathlib
import typing

import tt_oracle
from tt_analysis import BINARY, UNARY, hints_of, is_any, is_union, regex_sample

# Strings of common formats, every one valid (checksums included) unless it says otherwise.
FORMATS = {
    "email": ["user@example.com", "first.last+tag@mail.example.org", "a@b.co", "no-at-sign.example.com",
              "\"quoted\"@example.com", "user@[192.168.0.1]", "x@localhost"],
    "url": ["https://example.com/path?q=1#frag", "http://user:pass@localhost:8080/a/b",
            "ftp://ftp.example.org/file.txt", "https://sub.example.co.uk", "http://192.168.0.1:80/",
            "https://[2001:db8::1]/x", "example.com", "http://xn--80ak6aa92e.com/"],
    "ip": ["192.168.0.1", "255.255.255.255", "0.0.0.0", "10.0.0.0/8", "256.1.1.1", "::1",
           "2001:db8::8a2e:370:7334", "fe80::1%eth0", "::ffff:192.0.2.128", "1.2.3"],
    "isbn": ["0306406152", "9780306406157", "0-306-40615-2", "978-0-306-40615-7", "123456789X"],
    "card": ["4111111111111111", "5555555555554444", "378282246310005", "6011111111111117",
             "30569309025904", "3530111333300000", "6200000000000005", "4111111111111112",
             "2223003122003222", "6759649826438453"],
    "iban": ["GB82WEST12345698765432", "DE89370400440532013000", "FR1420041010050500013M02606",
             "GB82WEST12345698765433"],
    "json": ['{"a": 1, "b": [1, 2]}', "[1, 2, 3]", "null", '"text"', "{"],
    "uuid": ["12345678-1234-5678-1234-567812345678", "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
             "6ba7b8109dad11d180b400c04fd430c8", "not-a-uuid"],
    "roman": ["XIV", "MCMXCIV", "iv", "MMMM", "IIII"],
    "case": ["camelCase", "snake_case", "kebab-case", "PascalCase", "SCREAMING_SNAKE", "Title Case",
             "person", "people", "octopus", "Sheep", "category_id", "APIResponse", "the_Man-from.uk"],
    "date": ["2024-02-29", "2024-01-31T12:30:00Z", "1979-05-27T07:32:00-08:00", "12:30:45", "2023-13-45"],
    "number": ["42", "-3.5", "1e10", "0x1F", "0b101", "0o17", "1_000", "inf", "nan", "+7"],
    "hash": ["d41d8cd98f00b204e9800998ecf8427e", "da39a3ee5e6b4b0d3255bfef95601890afd80709",
             "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    "misc": ["1.2.3-beta+build", "#ff00aa", "00:1A:2B:3C:4D:5E", "hello-world", "*/5 * * * *",
             "1BoatSLRHtKNngkdXEeobR76b53LETtpyT", "0x52908400098527886E0F7030069857D2E4169EE7",
             "example.com", "a.b-c.example", "xn--d1acufc.xn--p1ai"],
    "toml": ['a = 1\nb = "x"\n[t]\nc = [1, 2]\n', 'x = { y = 1.5, z = true }\n', '[[arr]]\nk = 1979-05-27\n',
             's = """multi\nline"""\n', "bad = \n", "key = 'lit'\n# comment\n"],
    "format": ["{}", "{:d}", "{name}", "{} {}", "{:w}-{:d}", "{x:f}", "{:>5}", "{:%Y-%m-%d}", "{:ti}",
               "{a.b}", "{:3d}", "{:s}"],
    "argv": ["['--help']", "['-v', 'file.txt']", "['ship', 'new', 'Guardian']", "['--speed=10', 'x']",
             "[]", "['--version']", "['-h']", "['go', '-q', 'a.txt', 'b.txt']", "['--', '-x']"],
    "usage": ["Usage: prog [options] <x>\n\nOptions:\n  -h --help  Show.\n  -v  Verbose.\n",
              "Usage:\n  prog ship new <name>...\n  prog ship <name> move <x> <y> [--speed=<kn>]\n",
              "usage: prog (go|stop) [-q | -v] [FILE...]"],
}
NAME_FORMATS = [
    (("email", "mail", "address"), "email"), (("url", "uri", "link", "href", "website", "endpoint"), "url"),
    (("ip", "host", "addr", "cidr", "network"), "ip"), (("isbn",), "isbn"),
    (("card", "cc", "credit", "pan"), "card"), (("iban", "account"), "iban"),
    (("json", "payload"), "json"), (("uuid", "guid", "id"), "uuid"),
    (("roman", "numeral"), "roman"), (("word", "name", "camel", "snake", "underscore", "string", "text"), "case"),
    (("date", "time", "when", "timestamp"), "date"), (("number", "num", "digits", "code"), "number"),
    (("hash", "md5", "sha", "digest"), "hash"), (("toml", "src", "source", "content"), "toml"),
    (("format", "fmt", "pattern", "template", "spec"), "format"), (("doc", "usage", "help"), "usage"),
]
FN_NAMES = ("fn", "func", "function", "f", "g", "callback", "cb", "mapper", "map_fn", "predicate", "pred",
            "key", "reducer", "handler", "transform", "op", "action", "hook", "factory", "default_factory",
            "getter", "setter", "on_error", "on_success", "callable", "filter_fn", "kleisli_function",
            "listener", "apply", "compose", "then", "method", "fun", "parse_float", "converter",
            "type_converter", "extra_types", "evaluate", "condition", "timer", "getsizeof", "sizeof",
            "choice", "ttu", "missing", "key_func", "sort_key", "cmp", "compare", "visit", "visitor")
# Small callables: identity, constant, predicate, *args-absorbing, raising, recorder.
CALLABLES = ["lambda x: x", "lambda *args, **kwargs: 0", "lambda x: bool(x)", "lambda *args: args",
             "lambda *args, **kwargs: (_ for _ in ()).throw(ValueError('raised on purpose'))",
             "lambda x: [x]", "lambda x, y=0: x", "lambda *a: None", "str", "len", "RECORDER",
             "lambda *args, **kwargs: 10 ** 9"]
RECORDER = "lambda *args, **kwargs: calls.append(args) or (args[0] if args else None)"
WRONG = ["None", "object()", "1.5", "'x'", "[]", "{}", "-1", "b''", "(1, 2)"]
# Files and folders a path parameter may get, each made by the test inside its tmp_path.
PATH_CANDIDATES = [
    ("data.txt", ["(tmp_path / 'data.txt').write_text('hello\\n')"]),
    ("folder", ["(tmp_path / 'folder').mkdir(exist_ok=True)",
                "(tmp_path / 'folder' / 'a.txt').write_text('a\\n')",
                "(tmp_path / 'folder' / 'b.txt').write_text('b\\n')"]),
    ("empty", ["(tmp_path / 'empty').mkdir(exist_ok=True)"]),
    ("missing.txt", []),
    (None, []),
]
DOCUMENT_NAMES = ("text", "doc", "docstring", "source", "src", "content", "contents", "string", "s", "data",
                  "input", "body", "document", "raw", "markup", "lines", "code")
PATH_NAMES = ("path", "file", "filename", "fname", "filepath", "dir", "dirname", "directory", "folder",
              "dest", "destination", "src", "source_path", "target", "root", "location", "where")
PATH_SUFFIXES = ("_path", "_dir", "_file", "_folder", "_filename", "path", "dir")


def _hint_of_callable(hint):
    origin = typing.get_origin(hint)
    import collections.abc as abc
    return hint is abc.Callable or origin is abc.Callable or hint is typing.Callable or \
        getattr(hint, "__name__", "") == "Callable"


def path_hint(hint):
    """Whether an annotation asks for a path (os.PathLike, pathlib's classes, unions of them)."""
    if hint is inspect.Parameter.empty or hint is None:
        return False
    if inspect.isclass(hint):
        try:
            return issubclass(hint, (os.PathLike, pathlib.PurePath))
        except TypeError:
            return False
    return any(path_hint(a) for a in typing.get_args(hint) if a is not type(None))


def _allows_str(hint):
    return hint is str or str in typing.get_args(hint)


class Inputs:
    """Argument expressions (Python source) for a parameter, from hints, names and constants,
    formats, the module's regexes, small callables, earlier results and class instances."""

    def __init__(self, rng, constants, classes, patterns=()):
        self.rng = rng
        self.ints, self.floats, self.strs = constants
        self.classes = classes          # class name -> list of constructor expressions that worked
        self.patterns = list(patterns)  # (pattern, flags) of the module's regexes
        self.setup = []                 # statements the drawn arguments need (files in tmp_path)
        self.pathy = set()              # functions whose string arguments turned out to be paths
        self.callee = None              # the function the arguments are drawn for
        self.wants_callable = set()     # functions whose calls failed with "not callable"
        self.produced = []              # expressions of earlier results (fed to other functions)
        self.mode = "normal"            # "boundary", "wrong" or "normal" for the next draws
        self.regex_cache = {}
        self.grammar = None             # a parser module's grammar (tt_grammar): documents to parse
        self.made = {}                  # "module.Class" -> calls that returned one (for annotations)

    def take_setup(self):
        setup, self.setup = self.setup, []
        return setup

    def path_(self, as_path=False):
        """A place to work for a path parameter: a file, a folder with files, an empty folder, a
        path that does not exist yet, or tmp_path itself; always inside the test's tmp_path."""
        name, setup = self.rng.choice(PATH_CANDIDATES)
        for stmt in setup:
            if stmt not in self.setup:
                self.setup.append(stmt)
        expr = "tmp_path" if name is None else f"tmp_path / {name!r}"
        if as_path:
            return expr if name is None else f"({expr})"
        return f"str({expr})"

    def int_(self):
        if self.mode == "boundary":
            return self.rng.choice(["0", "-1", "1"])
        return repr(self.rng.choice([0, 1, 2, -1, 3, 10, 1000, self.rng.randint(-50, 50)] + self.ints))

    def float_(self):
        if self.mode == "boundary":
            return self.rng.choice(["0.0", "-1.0"])
        return repr(self.rng.choice([0.0, 1.5, -2.5, 2.0, 100.0, 0.1] + self.floats))

    def regex_(self):
        if not self.patterns:
            return None
        pattern, flags = self.rng.choice(self.patterns)
        text = regex_sample(pattern, flags, self.rng)
        return None if text is None else repr(text)

    def format_(self, kind=None):
        kind = kind or self.rng.choice(sorted(FORMATS))
        return repr(self.rng.choice(FORMATS[kind]))

    def str_(self, name=""):
        if self.mode == "boundary":
            return self.rng.choice(["''", "' '"])
        roll = self.rng.random()
        low = name.lower()
        if roll < 0.15 and self.callee:
            low = self.callee.split(".")[-1].lower()  # is_isbn13(code): an ISBN, whatever the name
        if roll < 0.3 and low:
            for words, kind in NAME_FORMATS:
                if any(w == low or low.startswith(w + "_") or low.endswith("_" + w) or
                       (len(w) > 3 and w in low) for w in words):
                    return self.format_(kind)
        if self.grammar is not None and self.rng.random() < (0.6 if name.lower().strip("_") in DOCUMENT_NAMES else 0.3):
            # A parser's input: a document in its own grammar (after a format its name asks for).
            return repr(self.grammar.document(self.rng))
        if roll < 0.5:
            found = self.regex_()
            if found is not None:
                return found
        if roll < 0.65:
            return self.format_()
        return repr(self.rng.choice(["", "a", "abc", "Hello World", "1 + 2", "x-y_z", " ", "ÄÖü ß",
                                     "line1\nline2", "a,b;c"] + self.strs))

    def callable_(self):
        pick = self.rng.choice(CALLABLES)
        if pick == "RECORDER":
            if "calls = []" not in self.setup:
                self.setup.append("calls = []")
            return RECORDER
        return pick

    def list_(self, item=None):
        n = 0 if self.mode == "boundary" else self.rng.randint(0, 4)
        make = item or self.rng.choice([self.int_, self.str_])
        return "[" + ", ".join(make() for _ in range(n)) + "]"

    def owner_(self, cls=None):
        names = [cls] if cls else [c for c in sorted(self.classes) if self.classes[c]]
        names = [c for c in names if self.classes.get(c)]
        if not names:
            return None
        return self.rng.choice(self.classes[self.rng.choice(names)])

    def by_name(self, name):
        low = name.lower()
        if low in PATH_NAMES or low.endswith(PATH_SUFFIXES):
            return self.path_(as_path=self.rng.random() < 0.3)
        if low in FN_NAMES or low.endswith(("_fn", "_func", "_callback", "_hook", "_handler", "_factory")) \
                or (low.startswith("get") and len(low) > 3 and "_" not in low) \
                or self.callee in self.wants_callable and self.rng.random() < 0.5:
            return self.callable_()
        if low in ("n", "count", "size", "index", "i", "j", "k", "times", "turns", "quantity", "sides",
                   "maxsize", "max_size", "ttl", "length", "min", "max", "start", "stop", "step", "width",
                   "precision", "offset", "limit", "depth", "level", "pos") or \
                low.endswith(("_count", "_index", "_size", "_len", "_length", "_max", "_min")):
            return self.int_()
        if low in ("text", "s", "name", "word", "expr", "expression", "string", "code", "label", "value_str",
                   "line", "prefix", "suffix", "sep", "separator", "char", "pattern", "fmt", "format",
                   "doc", "message", "msg") or any(w in low for words, _ in NAME_FORMATS for w in words
                                                   if len(w) > 3):
            return self.str_(name)
        if low in ("argv", "arguments", "cli_args", "command_line", "cmdline"):
            return self.rng.choice(FORMATS["argv"])  # already source: a list of tokens
        if low in ("items", "values", "xs", "numbers", "nums", "seq", "data", "elements", "args",
                   "iterable", "lst", "list"):
            return self.list_(self.rng.choice([self.int_, self.str_]))
        if low in ("x", "y", "a", "b", "value", "price", "amount", "factor", "rate", "height", "v"):
            return self.rng.choice([self.int_, self.float_, self.str_])()
        if low in ("flag", "strict", "verbose", "enabled", "force") or low.startswith(("is_", "has_", "allow")):
            return self.rng.choice(["True", "False"])
        return None

    def wrong_(self, hint):
        """A value of another type than the annotation asks for: reaches the isinstance guards."""
        avoid = {int: ("-1",), float: ("1.5", "-1"), str: ("'x'",), list: ("[]",), dict: ("{}",),
                 bytes: ("b''",), tuple: ("(1, 2)",)}.get(hint, ())
        return self.rng.choice([w for w in WRONG if w not in avoid])

    def for_hint(self, hint, depth=0):
        if depth > 2 or hint is inspect.Parameter.empty or is_any(hint):
            return None
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if hint is type(None) or hint is None:
            return "None"
        if hint is bool:
            return self.rng.choice(["True", "False"])
        if hint is int:
            return self.int_()
        if hint is float:
            return self.float_()
        if hint is str:
            return self.str_()
        if hint is bytes:
            return repr(self.rng.choice([b"", b"abc", b"\x00\xff", b"hello world"]))
        if _hint_of_callable(hint):
            return self.callable_()
        if hint is list or origin is list or hint is set or origin is set or hint is frozenset:
            inner = args[0] if args else None
            text = self.list_((lambda: self.for_hint(inner, depth + 1) or self.int_()) if inner else None)
            return text if hint is list or origin is list else f"set({text})"
        if hint is tuple or origin is tuple:
            items = [self.for_hint(a, depth + 1) or self.int_() for a in args if a is not Ellipsis]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if hint is dict or origin is dict:
            if self.mode == "boundary":
                return "{}"
            return self.rng.choice(["{}", "{'a': 1}", "{'a': 1, 'b': 2}", "{'key': 'value', 'n': [1, 2]}"])
        if is_union(hint):
            if self.mode == "boundary" and type(None) in args:
                return "None"
            choice = self.rng.choice(args)
            return "None" if choice is type(None) else self.for_hint(choice, depth + 1)
        base = origin if inspect.isclass(origin) else hint
        if inspect.isclass(base) and self.classes.get(base.__name__):
            return self.rng.choice(self.classes[base.__name__])
        made = self.made.get(f"{getattr(base, '__module__', '')}.{getattr(base, '__qualname__', '')}")
        if made and self.rng.random() < 0.8:
            return self.rng.choice(made)  # an object another call of the module returned
        return None

    def any_(self):
        if self.mode == "boundary":
            return self.rng.choice(["''", "0", "[]", "{}", "None", "' '", "-1"])
        roll = self.rng.random()
        if roll < 0.12 and self.produced:
            return self.rng.choice(self.produced)
        if roll < 0.25:
            owner = self.owner_()
            if owner:
                return owner
        pick = self.rng.choice([self.int_, self.str_, self.float_, self.list_, self.str_])
        return pick()

    def for_param(self, param, hint):
        if param.default is not inspect.Parameter.empty and (self.mode == "required" or self.rng.random() < 0.25):
            return None  # leave it to the default
        if self.mode == "wrong" and self.rng.random() < 0.5:
            return self.wrong_(hint)
        if self.mode == "boundary" and hint is inspect.Parameter.empty and self.rng.random() < 0.5 \
                and param.name.lower() not in FN_NAMES:
            return self.any_()
        if path_hint(hint):
            return self.path_(as_path=not _allows_str(hint) or self.rng.random() < 0.5)
        stringy = hint in (str, inspect.Parameter.empty) or _allows_str(hint)
        named = param.name.lower() in PATH_NAMES or param.name.lower().endswith(PATH_SUFFIXES)
        if stringy and (self.callee in self.pathy or named) and self.rng.random() < 0.8:
            return self.path_()
        if self.produced and self.rng.random() < 0.08:
            return self.rng.choice(self.produced)  # one function's output into another
        if hint is str and self.rng.random() < 0.6:
            return self.str_(param.name)
        return self.for_hint(hint) or self.by_name(param.name) or self.any_()


class _FakeParam:
    """A stand-in parameter (a property's value) for Inputs.for_param."""
    default = inspect.Parameter.empty

    def __init__(self, name):
        self.name = name


# ---- one use of a discovered item -----------------------------------------------------------------

KWARG_NAMES = ["key", "value", "name", "flag", "x", "default", "sep", "typed"]


class CallBuilding:
    """The uses of a module's items (a part of tt_search.ModuleSearch: needs its `rng`, `inputs`,
    `items`, `classes`, `attributes`, `bad_owners` and `namespace`)."""

    def arguments(self, item, skip_first=None):
        """Argument source for a call of `item` and the (expression, annotation) pairs, or None."""
        fn = item["obj"]
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return None, []
        hints = hints_of(fn if item["kind"] != "class" else getattr(fn, "__init__", fn))
        self.inputs.callee = item["name"]
        params = list(sig.parameters.values())
        if skip_first is None:
            skip_first = item["kind"] in ("method", "classmethod", "dunder", "property")
        if skip_first and params:
            params = params[1:]
        args, typed, keyword = [], [], False
        named = {p.name for p in params}
        try:
            ranges = tt_oracle.documented_ranges(fn)
        except Exception:  # noqa: BLE001 - an odd docstring or signature: no ranges
            ranges = {}
        for p in params:
            hint = hints.get(p.name, inspect.Parameter.empty)
            if p.kind == p.VAR_KEYWORD:
                # **kwargs: none, or one or two keywords no other parameter takes
                for word in self.rng.sample(KWARG_NAMES, self.rng.choice([0, 0, 1, 2])):
                    if word not in named:
                        args.append(f"{word}={self.inputs.any_()}")
                continue
            if p.kind == p.VAR_POSITIONAL:
                if keyword:
                    continue
                for _ in range(self.rng.randint(0, 3)):  # *args: 0 to 3 values
                    owner = self.inputs.owner_() if hint is inspect.Parameter.empty and \
                        self.rng.random() < 0.4 else None
                    expr = owner or self.inputs.for_hint(hint) or self.inputs.by_name(p.name.rstrip("s")) \
                        or self.inputs.any_()
                    args.append(expr)
                continue
            expr = None
            if item.get("cls") and hint is inspect.Parameter.empty and self.rng.random() < 0.2 \
                    and p.name.lower() not in FN_NAMES:
                expr = self.owner(item["cls"])  # another object of the same class (other, monad_value)
            if expr is None:
                expr = self.inputs.for_param(p, hint)
            if expr is None:
                if p.default is inspect.Parameter.empty:
                    return None, []
                keyword = True  # a parameter left to its default: name the ones after it
                continue
            if p.kind == p.KEYWORD_ONLY or (keyword and p.kind != p.POSITIONAL_ONLY):
                args.append(f"{p.name}={expr}")
            else:
                args.append(expr)
            typed.append((expr, hint, p.name, ranges.get(p.name)))
        return ", ".join(args), typed

    def owner(self, cls):
        owners = self.classes.get(cls) or []
        good = [o for o in owners if self.bad_owners.get(o, 0) < 3]
        owners = good or owners
        return self.rng.choice(owners) if owners else None

    def setup_failed(self, statements, outcome):
        """An owner whose use keeps failing before the call is left aside; a failure saying
        "not callable" makes the constructor's next arguments callables more often."""
        first = statements[0] if statements else ""
        for cls, owners in self.classes.items():
            for o in owners:
                if first == f"obj = {o}" or first.startswith(f"obj = {o}"):
                    self.bad_owners[o] = self.bad_owners.get(o, 0) + 1
                    if "not callable" in (outcome.get("msg") or ""):
                        self.inputs.wants_callable.add(cls)

    def call_expr(self, item, owner=None):
        """(statements, expression, typed arguments) of one use of `item`: a call of a function,
        a constructor, a method on `owner` (an instance expression), a class or static method, a
        property read or write, or a dunder through its operator; (None, None, []) when it cannot."""
        kind, cls = item["kind"], item.get("cls")
        short = item["name"].split(".", 1)[-1]
        if kind in ("function", "class", "staticmethod"):
            args, typed = self.arguments(item, skip_first=False)
            return (None, None, []) if args is None else ([], f"{item['name']}({args})", typed)
        if kind == "classmethod":
            args, typed = self.arguments(item)
            return (None, None, []) if args is None else ([], f"{item['name']}({args})", typed)
        owner = owner or self.owner(cls)
        if owner is None:
            return None, None, []
        if kind == "method":
            args, typed = self.arguments(item)
            return (None, None, []) if args is None else ([], f"{owner}.{short}({args})", typed)
        if kind == "property":
            if item.get("setter") is not None and self.rng.random() < 0.5:
                value = self.inputs.for_param(_FakeParam(short), hints_of(item["setter"]).get(
                    list(inspect.signature(item["setter"]).parameters)[-1], inspect.Parameter.empty)) \
                    or self.inputs.any_()
                pre = [] if owner == "obj" else [f"obj = {owner}"]
                return pre + [f"obj.{short} = {value}"], f"obj.{short}", []
            return [], f"{owner}.{short}", []
        op = item["op"]
        if op in UNARY:
            return [], UNARY[op].format(O=owner), []
        if op in BINARY:
            other = None
            if op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__sub__",
                      "__or__", "__and__") and self.rng.random() < 0.5:
                other = self.owner(cls)
            if other is None:
                args, typed = self.arguments(item)
                if args is None or "=" in args.split(",")[0] or not args:
                    other = self.inputs.any_()
                else:
                    other = args.split(", ")[0] if args.count(",") == 0 else args.split(", ")[0]
            return [], BINARY[op].format(O=owner, A=other), []
        pre = [] if owner == "obj" else [f"obj = {owner}"]
        if op == "__call__":
            args, typed = self.arguments(item)
            return (None, None, []) if args is None else (pre, f"obj({args})", typed)
        if op in ("__enter__", "__exit__", "__aenter__"):
            if op == "__aenter__":
                return None, None, []
            return pre + ["with obj as entered:\n    pass"], "entered", []
        if op == "__setitem__":
            key, value = self.inputs.any_(), self.inputs.any_()
            if self.rng.random() < 0.5:
                key = self.inputs.str_()
            observe = f"obj[{key}]" if hasattr(item["obj"], "__qualname__") and \
                "__getitem__" in dir(self.namespace.get(cls)) else "obj"
            return pre + [f"obj[{key}] = {value}"], observe, []
        if op == "__delitem__":
            key = self.inputs.str_() if self.rng.random() < 0.5 else self.inputs.any_()
            steps = [f"obj[{key}] = {self.inputs.any_()}"] if self.rng.random() < 0.5 and \
                "__setitem__" in dir(self.namespace.get(cls)) else []
            return pre + steps, f"obj.__delitem__({key})", []
        if op == "__setattr__":
            return pre + [f"obj.tt_attribute = {self.inputs.any_()}"], "obj.tt_attribute", []
        if op == "__delattr__":
            return pre, "delattr(obj, 'tt_attribute')", []
        if op == "__missing__":
            return [], f"{owner}[{self.inputs.any_()}]", []
        return None, None, []

    def state_changes(self, cls):
        """1 to 3 statements that put `obj` in some state: method calls, attribute and property
        assignments, item assignments."""
        steps = []
        options = [i for i in self.items if i.get("cls") == cls and i["kind"] in ("method", "property", "dunder")
                   and (i["kind"] != "dunder" or i["op"] in ("__setitem__", "__call__", "__enter__"))]
        attrs = self.attributes.get(cls, [])
        for _ in range(self.rng.randint(1, 3)):
            if attrs and self.rng.random() < 0.25:
                steps.append(f"obj.{self.rng.choice(attrs)} = {self.inputs.any_()}")
                continue
            if not options:
                break
            step = self.rng.choice(options)
            pre, expr, _ = self.call_expr(step, owner="obj")
            if expr is None:
                continue
            steps.extend(pre)
            if step["kind"] != "property" and expr not in ("obj", "entered"):
                steps.append(expr)
        return steps


# ---- the boundary variants of a call ---------------------------------------------------------------

BOUNDARY_KINDS = (bool, int, float, str, bytes, list, tuple, dict)
UNKNOWN = object()  # an argument whose value is not a literal: only its annotation tells its kind


def boundary_values(kind, value=UNKNOWN):
    """The source of the boundary values of a kind (other than `value`, the argument's own): the
    empty and the smallest ones, a blank string, a negative and a large number, the other bool.
    None has none: it stays."""
    if kind is bool:
        out = [not value] if value is not UNKNOWN else [True, False]
    elif kind is int:
        out = [0, 1, -1, 2 ** 31]
    elif kind is float:
        out = [0.0, -1.5]
    elif kind is str:
        out = ["", " ", "a", "A b"]
    elif kind is bytes:
        out = [b""]
    elif kind in (list, tuple):
        out = [kind()] + ([kind([value[0]])] if value is not UNKNOWN and value else [])
    elif kind is dict:
        out = [{}]
    else:
        return []
    return [repr(v) for v in out if value is UNKNOWN or type(v) is not type(value) or v != value]


def _argument_kind(node, hint):
    """(kind, value) of an argument: its literal's, else its annotation's when a plain one."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return (hint, UNKNOWN) if hint in BOUNDARY_KINDS else (None, UNKNOWN)
    return type(value), value


def _calls_item(func, item, text):
    """Whether a call's function part is `item`: its name (Basket, Basket.make), or a method of it
    on some owner (obj.add)."""
    if item["kind"] in ("function", "class", "staticmethod", "classmethod"):
        return ast.get_source_segment(text, func) == item["name"]
    return item["kind"] == "method" and isinstance(func, ast.Attribute) \
        and func.attr == item["name"].split(".", 1)[-1]


def boundary_variants(item, expr, typed):
    """(expression, typed arguments) of the calls like `expr` (a call of `item`) with one argument
    at a boundary of its kind (boundary_values), then with one parameter that has a default left
    out; none when `expr` is not a plain call of `item`. The other arguments keep their text."""
    text = expr.strip()
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    if not isinstance(node, ast.Call) or not _calls_item(node.func, item, text) \
            or any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return []
    func = ast.get_source_segment(text, node.func)
    args = [ast.get_source_segment(text, a) for a in node.args]
    keywords = [(k.arg, ast.get_source_segment(text, k.value)) for k in node.keywords]
    if func is None or None in args or any(v is None for _, v in keywords):
        return []
    try:
        params = list(inspect.signature(item["obj"]).parameters.values())
    except (TypeError, ValueError):
        params = []
    if item["kind"] in ("method", "classmethod") and params:
        params = params[1:]
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [params[i].name if i < len(params) and params[i].kind in positional else None for i in range(len(args))]
    by_name = {p.name: p for p in params}
    hints = {t[2]: t[1] for t in typed}

    def spell(new_args, new_keywords):
        return f"{func}({', '.join(list(new_args) + [f'{k}={v}' for k, v in new_keywords])})"

    def retyped(name, value=None):
        """The typed arguments with `name`'s value replaced (None: left out)."""
        return [t if t[2] != name else (value,) + tuple(t[1:]) for t in typed if t[2] != name or value is not None]

    out = []
    for i, arg in enumerate(node.args):
        kind, value = _argument_kind(arg, hints.get(names[i]))
        for new in boundary_values(kind, value):
            out.append((spell(args[:i] + [new] + args[i + 1:], keywords), retyped(names[i], new)))
    for j, keyword in enumerate(node.keywords):
        kind, value = _argument_kind(keyword.value, hints.get(keyword.arg))
        for new in boundary_values(kind, value):
            changed = keywords[:j] + [(keyword.arg, new)] + keywords[j + 1:]
            out.append((spell(args, changed), retyped(keyword.arg, new)))
    for p in params:
        if p.default is inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if any(k == p.name for k, _ in keywords):
            out.append((spell(args, [(k, v) for k, v in keywords if k != p.name]), retyped(p.name)))
        elif p.name in names:
            # Left out of the positional ones: those after it are named instead.
            i = names.index(p.name)
            later = names[i + 1:]
            if any(n is None or by_name[n].kind == p.POSITIONAL_ONLY for n in later):
                continue
            out.append((spell(args[:i], list(zip(later, args[i + 1:])) + keywords), retyped(p.name)))
    return out


# ---- L3: an entry point's command lines ---------------------------------------------------------

def entry_argvs(flags, positionals, rng):
    """The argument lists an entry point runs with: none, `--help`, and up to six more drawn from
    the options and positionals its argparse (or click) definition declares."""
    samples = ["1", "abc", "1 + 2", "0"]
    argvs = [[], ["--help"]]
    for _ in range(6):
        argv = [rng.choice(samples) for _ in positionals]
        for flag, takes_value in flags:
            if flag in ("-h", "--help") or rng.random() < 0.5:
                continue
            argv += [flag, rng.choice(samples)] if takes_value else [flag]
        if argv not in argvs:
            argvs.append(argv)
    return argvs
