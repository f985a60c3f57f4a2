"""The generator's analysis stage: what a module offers to test, read before any of it is called.

Discovery (the module's own functions, classes, methods, class and static methods, properties and
dunders, each with the lines it can reach), the literals, regular expressions and grammar of its
source (what the inputs stage draws from), the lines a call can reach at all, the type predicates
every stage judges annotations with, and the entry points layer L3 runs. The stage at the bottom:
it imports no other stage.
"""

import ast
import inspect
import os
import re
import typing

import tt_grammar


# ---- discovery ------------------------------------------------------------------------------------

# Dunders exercised through their operator form: how to spell a use of each on an owner `O` with an
# argument `A` ("stmt" ones are statements on `obj`, observed afterwards).
BINARY = {"__eq__": "{O} == {A}", "__ne__": "{O} != {A}", "__lt__": "{O} < {A}", "__le__": "{O} <= {A}",
          "__gt__": "{O} > {A}", "__ge__": "{O} >= {A}", "__add__": "{O} + {A}", "__radd__": "{A} + {O}",
          "__sub__": "{O} - {A}", "__rsub__": "{A} - {O}", "__mul__": "{O} * {A}", "__rmul__": "{A} * {O}",
          "__truediv__": "{O} / {A}", "__floordiv__": "{O} // {A}", "__mod__": "{O} % {A}",
          "__pow__": "{O} ** {A}", "__matmul__": "{O} @ {A}", "__and__": "{O} & {A}", "__or__": "{O} | {A}",
          "__xor__": "{O} ^ {A}", "__lshift__": "{O} << {A}", "__rshift__": "{O} >> {A}",
          "__rrshift__": "{A} >> {O}", "__rlshift__": "{A} << {O}", "__ror__": "{A} | {O}",
          "__rand__": "{A} & {O}", "__getitem__": "{O}[{A}]", "__contains__": "{A} in {O}",
          "__getattr__": "getattr({O}, {A})"}
UNARY = {"__len__": "len({O})", "__neg__": "-{O}", "__pos__": "+{O}", "__abs__": "abs({O})",
         "__invert__": "~{O}", "__iter__": "list({O})", "__reversed__": "list(reversed({O}))",
         "__bool__": "bool({O})", "__hash__": "hash({O})", "__repr__": "repr({O})", "__str__": "str({O})",
         "__int__": "int({O})", "__float__": "float({O})", "__next__": "next({O})", "__copy__": "copy.copy({O})",
         "__deepcopy__": "copy.deepcopy({O})", "__sizeof__": "{O}.__sizeof__()",
         "__format__": "format({O}, '')", "__index__": "[0, 1, 2][{O}]", "__round__": "round({O})",
         "__reduce__": "pickle.loads(pickle.dumps({O}))", "__getstate__": "pickle.loads(pickle.dumps({O}))",
         "__setstate__": "pickle.loads(pickle.dumps({O}))", "__reduce_ex__": "pickle.loads(pickle.dumps({O}))"}
STATEMENT = {"__setitem__", "__delitem__", "__enter__", "__exit__", "__setattr__", "__delattr__",
             "__call__", "__aenter__", "__aiter__", "__missing__"}


def _code_lines(code):
    """The line numbers of a code object: co_lines() from Python 3.10, co_lnotab's line starts
    (dis.findlinestarts) before."""
    if hasattr(code, "co_lines"):
        return {n for _, _, n in code.co_lines() if n is not None}
    import dis
    return {n for _, n in dis.findlinestarts(code) if n is not None}


def lines_of(obj):
    """The lines of a function (and whatever it nests), for aiming the search."""
    code = getattr(obj, "__code__", None)
    if code is None:
        return set()
    out = set()

    def walk(c):
        out.update(_code_lines(c))
        for const in c.co_consts:
            if hasattr(const, "co_code"):
                walk(const)
    walk(code)
    return out


def _unwrap(obj):
    try:
        return inspect.unwrap(obj)
    except Exception:  # noqa: BLE001
        return obj


def discover(module):
    """The module's own surface, in name order: public functions, classes (their constructors),
    methods, class and static methods, properties and dunders defined in the class itself."""
    found = []
    for name in sorted(vars(module)):
        obj = vars(module)[name]
        if name.startswith("__") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if name.startswith("_") and not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if inspect.isfunction(obj):
            found.append({"kind": "function", "name": name, "obj": obj, "cls": None})
        elif inspect.isclass(obj):
            if issubclass(obj, BaseException):
                found.append({"kind": "class", "name": name, "obj": obj, "cls": None})
                continue
            found.append({"kind": "class", "name": name, "obj": obj, "cls": None})
            for mname in sorted(vars(obj)):
                raw = vars(obj)[mname]
                full = f"{name}.{mname}"
                if isinstance(raw, staticmethod):
                    if not mname.startswith("_"):
                        found.append({"kind": "staticmethod", "name": full, "obj": raw.__func__, "cls": name})
                elif isinstance(raw, classmethod):
                    if not mname.startswith("_"):
                        found.append({"kind": "classmethod", "name": full, "obj": raw.__func__, "cls": name})
                elif isinstance(raw, property):
                    if not mname.startswith("_") and raw.fget is not None:
                        found.append({"kind": "property", "name": full, "obj": raw.fget, "cls": name,
                                      "setter": raw.fset})
                elif inspect.isfunction(raw):
                    if mname in BINARY or mname in UNARY or mname in STATEMENT:
                        found.append({"kind": "dunder", "name": full, "obj": raw, "cls": name, "op": mname})
                    elif not mname.startswith("_"):
                        found.append({"kind": "method", "name": full, "obj": raw, "cls": name})
                    elif not mname.startswith("__"):
                        # A private helper method: reached through the public ones, or called
                        # directly when nothing else reaches it.
                        found.append({"kind": "method", "name": full, "obj": raw, "cls": name,
                                      "private": True})
    for item in found:
        target = item.get("setter")
        item["lines"] = lines_of(_unwrap(item["obj"])) | (lines_of(target) if target else set())
        if item["kind"] == "class":
            init = vars(item["obj"]).get("__init__")
            item["lines"] = lines_of(init) if inspect.isfunction(init) else set()
    return found


def _source_span(obj, target):
    """The lines of `target` (an absolute path) that define `obj` (decorators, signature,
    docstring and body, blank lines inside); empty when its source is elsewhere or unreadable."""
    obj = _unwrap(obj)
    try:
        if os.path.abspath(inspect.getsourcefile(obj) or "") != target:
            return set()
        lines, start = inspect.getsourcelines(obj)
    except (OSError, TypeError):
        return set()
    return set(range(max(start, 1), max(start, 1) + len(lines)))


def defined_lines(item, target):
    """The source lines that define a function, method (class or static too) or constructor: a
    change on any of them changes what a call of it does. A constructor's are those of the
    class's own __init__ and __new__, else its body less the functions defined in it (a
    dataclass's fields); a property or a dunder gets none."""
    if item["kind"] in ("function", "method", "staticmethod", "classmethod"):
        return _source_span(item["obj"], target)
    if item["kind"] != "class":
        return set()
    own = vars(item["obj"])
    made = [own[n] for n in ("__init__", "__new__") if inspect.isfunction(own.get(n))]
    if made:
        return set().union(*(_source_span(f, target) for f in made))
    lines = _source_span(item["obj"], target)
    for raw in own.values():
        raw = getattr(raw, "__func__", raw)
        for fn in ([raw.fget, raw.fset, raw.fdel] if isinstance(raw, property) else [raw]):
            if inspect.isfunction(fn):
                lines -= _source_span(fn, target)
    return lines


def harvest_constants(source):
    """Literals of the module's source: the values its comparisons and returns care about."""
    ints, floats, strs = set(), set(), set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool) or v is None:
                continue
            if isinstance(v, int) and abs(v) < 10 ** 6:
                ints.update({v, v - 1, v + 1})
            elif isinstance(v, float) and v == v:
                floats.add(v)
            elif isinstance(v, str) and 0 < len(v) <= 30 and "\n" not in v:
                strs.add(v)
    return sorted(ints), sorted(floats), sorted(strs)


def harvest_patterns(source, module):
    """The module's regular expressions: literals passed to re's functions, and compiled
    patterns it holds (built however they were)."""
    found = []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = None
    for node in ast.walk(tree) if tree is not None else []:
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in (
                "compile", "match", "fullmatch", "search", "findall", "finditer", "sub", "split") \
                and getattr(node.func, "value", None) is not None \
                and getattr(node.func.value, "id", "") == "re" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append((first.value, 0))
    for value in vars(module).values():
        if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
            found.append((value.pattern, value.flags))
    seen, out = set(), []
    for p in found:
        if p[0] not in seen:
            seen.add(p[0])
            out.append(p)
    return out[:40]


def parser_grammar(source, module):
    """The grammar of a parser module (tt_grammar): its regexes and constants, with those of the
    package's modules it imports (a front end that hands its text to them); None for a module
    that does not parse."""
    patterns = harvest_patterns(source, module)
    texts = [source]
    top = module.__name__.split(".")[0]
    for name, value in sorted(vars(module).items()):
        if inspect.ismodule(value) and value.__name__.startswith(top + ".") and value is not module:
            try:
                with open(value.__file__, encoding="utf-8") as f:
                    text = f.read()
                patterns += [p for p in harvest_patterns(text, value) if p not in patterns]
                texts.append(text)
            except (OSError, TypeError, UnicodeDecodeError, SyntaxError):
                continue
    try:
        grammar = tt_grammar.Grammar("\n".join(texts), module, patterns[:60], _sre(), regex_sample)
    except Exception:  # noqa: BLE001 - no grammar: the usual inputs
        return None
    return grammar if grammar.active else None


def _sre():
    try:
        from re import _parser as parser, _constants as constants  # 3.11+
    except ImportError:
        import sre_parse as parser
        import sre_constants as constants
    return parser, constants


def regex_sample(pattern, flags, rng, limit=60):
    """A string the pattern matches, drawn by walking its parse tree (None when it cannot)."""
    try:
        parser, c = _sre()
        tree = parser.parse(pattern, flags)
    except Exception:  # noqa: BLE001
        return None
    groups = {}
    printable = "abcxyzABC0189 _-.@:/"

    def category(cat):
        name = str(cat).lower()
        negated = "not" in name
        if "digit" in name:
            return "x" if negated else rng.choice("0123456789")
        if "space" in name:
            return "a" if negated else " "
        if "word" in name:
            return "-" if negated else rng.choice("abcXYZ019_")
        return "a"

    def walk(items, depth):
        out = []
        if depth > 30:
            return ""
        for op, av in items:
            if len("".join(out)) > limit:
                break
            if op is c.LITERAL:
                out.append(chr(av))
            elif op is c.NOT_LITERAL:
                out.append("a" if chr(av) != "a" else "b")
            elif op is c.ANY:
                out.append(rng.choice("ab1 "))
            elif op is c.IN:
                out.append(pick_in(av))
            elif op is c.BRANCH:
                out.append(walk(rng.choice(av[1]), depth + 1))
            elif op is c.SUBPATTERN:
                group, sub = av[0], av[-1]
                text = walk(sub, depth + 1)
                if group:
                    groups[group] = text
                out.append(text)
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT) or str(op) == "POSSESSIVE_REPEAT":
                low, high, sub = av
                high = min(high, low + 3) if high != c.MAXREPEAT else low + rng.randint(0, 3)
                n = rng.randint(low, max(low, high))
                out.append("".join(walk(sub, depth + 1) for _ in range(n)))
            elif op is c.GROUPREF:
                out.append(groups.get(av, ""))
            elif op is c.CATEGORY:
                out.append(category(av))
            elif str(op) == "ATOMIC_GROUP":
                out.append(walk(av, depth + 1))
            # AT, ASSERT, ASSERT_NOT, GROUPREF_EXISTS: nothing to add
        return "".join(out)

    def pick_in(av):
        negate = any(op is c.NEGATE for op, _ in av)
        options = []
        for op, v in av:
            if op is c.LITERAL:
                options.append(chr(v))
            elif op is c.RANGE:
                options.append(chr(rng.randint(v[0], min(v[1], v[0] + 60))))
            elif op is c.CATEGORY:
                options.append(category(v))
        if negate:
            for ch in printable:
                if ch not in options:
                    return ch
            return "~"
        return rng.choice(options) if options else "a"
    try:
        text = walk(tree, 0)
    except Exception:  # noqa: BLE001
        return None
    try:
        if re.fullmatch(pattern, text, flags) is None and re.match(pattern, text, flags) is None:
            return text if rng.random() < 0.3 else None
    except Exception:  # noqa: BLE001
        return None
    return text


def executable_lines(source, path):
    """Lines inside function and method bodies: what calls can reach (imports run at import)."""
    lines = set()

    def walk(code, top):
        if not top:
            lines.update(_code_lines(code))
        for const in code.co_consts:
            if hasattr(const, "co_code"):
                walk(const, False)
    walk(compile(source, path, "exec"), True)
    return lines


# ---- annotations --------------------------------------------------------------------------------

def hints_of(fn):
    try:
        return typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - unresolvable annotations: go without them
        return {}


def is_union(hint):
    """typing.Union[...] and Optional[...], and `X | Y` (types.UnionType, Python 3.10+)."""
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        return True
    union_type = getattr(__import__("types"), "UnionType", None)  # 3.10+
    return union_type is not None and (origin is union_type or isinstance(hint, union_type))


def is_any(hint):
    """typing.Any, which is a class from Python 3.11 (isinstance against it raises)."""
    return hint is typing.Any


def safe_isinstance(value, cls):
    """isinstance that answers False where the check itself raises: typing.Any (a class from
    3.11), Protocols that are not runtime_checkable, TypedDicts, subscripted generics."""
    if is_any(cls):
        return True
    try:
        return isinstance(value, cls)
    except TypeError:
        return False


def satisfies_value(value, hint):
    """Whether a value matches a simple annotation (for contract checks): only plain classes,
    unions of them and float's int promotion count; anything unclear does not."""
    if hint is inspect.Parameter.empty or hint is None:
        return False
    if is_any(hint):
        return False  # promises nothing: never a contract
    if is_union(hint):
        return any(satisfies_value(value, h) for h in typing.get_args(hint))
    base = typing.get_origin(hint) or hint
    if base is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if not inspect.isclass(base) or getattr(base, "_is_protocol", False) or is_typeddict(base):
        return False
    return safe_isinstance(value, base)


def is_typeddict(cls):
    checker = getattr(typing, "is_typeddict", None)  # 3.10+
    if checker is not None:
        try:
            return checker(cls)
        except Exception:  # noqa: BLE001
            return False
    return isinstance(cls, type) and issubclass(cls, dict) and hasattr(cls, "__total__")


# ---- L3: the project's entry points, found by reading its files ----------------------------------

def entry_points(root):
    """Modules runnable with `python -m`: console_scripts targets, packages with __main__.py, and
    modules guarded by `if __name__ == "__main__"`; sorted, each with its source file."""
    found = {}
    try:
        import tomllib
        with open(os.path.join(root, "pyproject.toml"), "rb") as f:
            scripts = tomllib.load(f).get("project", {}).get("scripts", {})
        for target in scripts.values():
            module = target.split(":")[0].strip()
            found[module] = None
    except (OSError, ValueError, ImportError):
        pass
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in (
            "tests", "test", "node_modules", "__pycache__", "build", "dist", "docs"))
        rel = os.path.relpath(dirpath, root)
        parts = [] if rel == "." else rel.split(os.sep)
        if parts and parts[0] == "src":
            parts = parts[1:]
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            if name == "__main__.py" and parts:
                found[".".join(parts)] = path
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError):
                continue
            if "__name__" in text and "__main__" in text and not name.startswith("test"):
                found[".".join(parts + [name[:-3]])] = path
    return sorted(found.items())


def argparse_options(path):
    """Options and positionals an argparse parser in `path` declares: (flags, positional names)."""
    flags, positionals = [], []
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, TypeError, UnicodeDecodeError):
        return flags, positionals
    for node in ast.walk(tree):
        # argparse's add_argument, and click's @click.option / @click.argument
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("add_argument", "option", "argument") \
                and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                takes_value = not any(k.arg == "action" for k in node.keywords)
                (flags if first.value.startswith("-") else positionals).append((first.value, takes_value))
    return flags, positionals
