"""L0 code validation of a Python project, for team-testing (Python 3.8+, PyPy).

Usage: python ttl0.py REQUEST.json RESULT.json
       python ttl0.py --import MODULE FILE      (the import check's child)

The request names the project's root, the files whose code is new or changed, the folders the
project's modules are imported from, the distributions it declares and a time budget. The helper:

1. compiles every non-test .py file of the project (compile() only: nothing runs);
2. reads the changed files' imports: a top-level module found nowhere (the project, this
   interpreter's installed packages, the standard library) is hallucinated, and so is a name
   imported from a project module that does not define it;
3. finds placeholder functions (a body of only pass, ..., a docstring or raise NotImplementedError,
   not abstract, overloads or protocol members) and TODO/FIXME comments in the changed files;
4. finds production code that imports test doubles (unittest.mock, pytest, faker, tests.*);
5. imports each changed module in a child process of its own, with a timeout.

The helper's own process never imports or runs the project's code: only the children of step 5
do, with the project's folders on PYTHONPATH. Nothing is written but the result file; the
children's output is captured and only its tail kept."""
import ast
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import tokenize
import warnings

sys.dont_write_bytecode = True

SKIP_DIRS = {
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "site-packages", "target",
}
# Top-level folders that hold build output, not sources.
SKIP_TOP = {"build", "dist", "htmlcov"}
COMPILE_LIMIT = 20000
# Files that run code when imported or are not modules: never imported by the import check.
NOT_IMPORTABLE = {"setup.py", "conftest.py", "__main__.py", "noxfile.py", "manage.py",
                  "fabfile.py"}
ABSTRACT_DECORATORS = {"abstractmethod", "abstractclassmethod", "abstractstaticmethod",
                       "abstractproperty", "overload"}
ABSTRACT_BASES = {"Protocol", "ABC"}
# Decorators that do not use the function they wrap: an empty body under one of them is still
# empty. Any other decorator (a click group, a pluggy hookspec, a signal receiver) registers the
# function for what its signature says.
PLAIN_DECORATORS = {"property", "staticmethod", "classmethod", "cached_property", "setter",
                    "getter", "deleter", "wraps"}
# Words that say an empty body is deliberate: a hook, a no-op.
DELIBERATE = re.compile(
    r"(?i)\b(no-?op|noop|do(es)? nothing|nothing to do|intentionally|deliberately|override|"
    r"overridden|hook|subclass(es)? (may|can|should))\b")
TODO = re.compile(r"\b(TODO|FIXME)\b")
# Test doubles and test frameworks: production code must not import them.
MOCK_MODULES = {"mock", "pytest_mock", "pytest", "_pytest", "faker", "conftest", "tests",
                "test"}
# Names whose `if` decides on the interpreter, the platform or an optional dependency: the
# imports under it may be absent here on purpose.
CONDITIONAL = re.compile(
    r"(?i)(version|platform|^py\d|^pypy|cpython|implementation|^os$|^sys$|^six$|windows|win32|"
    r"linux|darwin|^has_|available|installed|find_spec|import_module|^name$)")
# Import names whose distribution is named otherwise.
DISTRIBUTIONS = {
    "yaml": ["pyyaml"], "PIL": ["pillow"], "sklearn": ["scikit-learn"],
    "cv2": ["opencv-python", "opencv-python-headless"], "bs4": ["beautifulsoup4"],
    "dateutil": ["python-dateutil"], "dotenv": ["python-dotenv"], "jwt": ["pyjwt"],
    "attr": ["attrs"], "magic": ["python-magic"], "Crypto": ["pycryptodome"],
    "OpenSSL": ["pyopenssl"], "serial": ["pyserial"], "usb": ["pyusb"], "zmq": ["pyzmq"],
    "google": ["protobuf", "google-api-python-client", "google-cloud-storage"],
    "skimage": ["scikit-image"], "docx": ["python-docx"], "pptx": ["python-pptx"],
    "MySQLdb": ["mysqlclient"], "psycopg2": ["psycopg2-binary", "psycopg2"],
    "git": ["gitpython"], "multipart": ["python-multipart"], "fitz": ["pymupdf"],
    "win32api": ["pywin32"], "win32con": ["pywin32"], "pkg_resources": ["setuptools"],
    "_pytest": ["pytest"], "typing_extensions": ["typing-extensions"],
}
MODULE_DUNDERS = {"__name__", "__file__", "__doc__", "__path__", "__spec__", "__loader__",
                  "__package__", "__builtins__", "__cached__", "__dict__", "__all__"}
# Exceptions of a library that wants configuration before its modules import (Django's settings):
# the module is not broken, the standalone import is.
NEEDS_CONFIGURATION = {"ImproperlyConfigured", "AppRegistryNotReady"}


def normalise(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def is_identifier(part):
    return part.isidentifier()


def is_test_path(rel):
    """A test file or test support: test_*.py, *_test.py, conftest.py, or under tests/ or test/."""
    parts = rel.split("/")
    name = parts[-1]
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(p in ("tests", "test") for p in parts[:-1]))


def is_test_support(rel):
    """Production modules that exist to help users test (pkg/testing.py, a pytest plugin): they
    import test tools on purpose."""
    stems = [p[:-3] if p.endswith(".py") else p for p in rel.split("/")]
    return any(s in ("testing", "testutils", "test_utils", "testing_utils", "pytest_plugin",
                     "pytest_plugins", "plugin_pytest") for s in stems)


class Project:
    def __init__(self, req):
        self.root = os.path.realpath(req["root"])
        self.roots = []
        for r in req.get("roots") or [""]:
            d = os.path.realpath(os.path.join(self.root, r))
            if os.path.isdir(d) and d not in self.roots:
                self.roots.append(d)
        self.declared = {normalise(n) for n in req.get("declared", [])}
        self.runtime = {normalise(n) for n in req.get("runtime", [])}
        self._listing = {}
        self._installed = {}
        self._defs = {}
        self.stdlib = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names)

    def rel(self, path):
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def listing(self, d):
        if d not in self._listing:
            try:
                self._listing[d] = set(os.listdir(d))
            except OSError:
                self._listing[d] = set()
        return self._listing[d]

    def find_in(self, dirs, name):
        """Where `name` imports from, searching `dirs` in order as the import system does: the
        first package or module wins; namespace folders count when nothing else is found."""
        spaces = []
        for d in dirs:
            names = self.listing(d)
            path = os.path.join(d, name)
            if name in names and os.path.isfile(os.path.join(path, "__init__.py")):
                return ("package", os.path.join(path, "__init__.py"), [path])
            if name + ".py" in names and os.path.isfile(path + ".py"):
                return ("module", path + ".py", [])
            if any(n.startswith(name + ".") and n.endswith((".so", ".pyd")) for n in names):
                return ("opaque", None, [])
            if name in names and os.path.isdir(path):
                spaces.append(path)
        if spaces:
            return ("namespace", None, spaces)
        return None

    def descend(self, found, parts):
        """Resolves submodules `parts` below `found`: (resolution, None) or (None, the missing
        dotted tail's first part). A package that edits its __path__ is not judged."""
        for part in parts:
            kind, path, dirs = found
            if kind == "opaque":
                return found, None
            if kind in ("module", "package") and self.edits_path(path):
                return ("opaque", None, []), None
            if kind == "module":
                return None, part
            sub = self.find_in(dirs, part)
            if sub is None:
                return None, part
            found = sub
        return found, None

    def edits_path(self, path):
        try:
            with open(path, "rb") as f:
                text = f.read()
        except OSError:
            return True
        return b"__path__" in text or b"extend_path" in text

    def installed(self, top):
        """`top` is a module this interpreter finds on its own (stdlib or installed): looked up by
        the finders, never imported."""
        if top in self.stdlib or top == "__future__":
            return True
        if top not in self._installed:
            import importlib.util
            try:
                spec = importlib.util.find_spec(top)
            except (ImportError, ValueError, AttributeError):
                spec = None
            self._installed[top] = spec is not None
        return self._installed[top]

    def is_declared(self, top, runtime=False):
        names = self.runtime if runtime else self.declared
        wanted = [normalise(top)] + [normalise(d) for d in DISTRIBUTIONS.get(top, [])]
        wanted += ["python-" + normalise(top), normalise(top) + "-python", "py" + normalise(top)]
        return any(w in names for w in wanted)

    def definitions(self, path):
        """The names a module defines at its top level, or None when they cannot be known
        (`import *`, a module __getattr__, writes to globals())."""
        if path in self._defs:
            return self._defs[path]
        names = None
        try:
            with open(path, "rb") as f:
                source = f.read()
            tree = ast.parse(source, path)
        except (OSError, SyntaxError, ValueError):
            tree = None
        if tree is not None and not re.search(rb"globals\(\)|vars\(\)|sys\.modules\[__name__\]",
                                              source):
            names = module_names(tree)
        self._defs[path] = names
        return names


def module_names(tree):
    names = set()
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            if node.name == "__getattr__":
                return None
            for d in getattr(node, "decorator_list", []):
                stack.append(d)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                if a.name == "*":
                    return None
                names.add(a.asname or a.name)
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                names.add(a.asname or a.name.split(".")[0])
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        for field in ("name", "rest"):  # match patterns (3.10+): MatchAs, MatchStar, MatchMapping
            value = getattr(node, field, None)
            if type(node).__name__.startswith("Match") and isinstance(value, str):
                names.add(value)
        stack.extend(ast.iter_child_nodes(node))
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            names.update(node.names)
    return names


def issue(severity, kind, rel, line, message):
    return {"severity": severity, "kind": kind, "file": rel, "line": line, "message": message}


def walk_sources(project):
    """Every non-test .py file of the project, relative and sorted, and how many were left out
    over the limit."""
    out = []
    over = 0
    for d, dirs, files in os.walk(project.root):
        rel_dir = project.rel(d)
        keep = []
        for sub in dirs:
            if sub in SKIP_DIRS or sub.startswith(".") or sub.endswith(".egg-info"):
                continue
            if rel_dir == "." and sub in SKIP_TOP:
                continue
            if os.path.isfile(os.path.join(d, sub, "pyvenv.cfg")):
                continue
            keep.append(sub)
        dirs[:] = sorted(keep)
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            rel = name if rel_dir == "." else rel_dir + "/" + name
            if is_test_path(rel):
                continue
            if len(out) >= COMPILE_LIMIT:
                over += 1
                continue
            out.append(rel)
    return out, over


def compile_file(project, rel):
    """None, or (line, message) when the file does not compile."""
    path = os.path.join(project.root, rel)
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        return None, "cannot read: %s" % e
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, path, "exec", dont_inherit=True)
        except SyntaxError as e:
            return e.lineno, "%s: %s" % (type(e).__name__, e.msg)
        except (ValueError, TypeError, MemoryError, RecursionError) as e:
            return None, "%s: %s" % (type(e).__name__, e)
    return None, None


def comments(source):
    """(line, text) of every comment."""
    out = []
    try:
        for tok in tokenize.tokenize(io.BytesIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.string))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return out


def decorator_name(node):
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def base_name(node):
    if isinstance(node, ast.Subscript):
        node = node.value
    return decorator_name(node)


def is_type_checking(test):
    return any(isinstance(n, ast.Name) and n.id == "TYPE_CHECKING"
               or isinstance(n, ast.Attribute) and n.attr == "TYPE_CHECKING"
               for n in ast.walk(test))


def is_conditional(test):
    for n in ast.walk(test):
        word = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        if word and CONDITIONAL.search(word):
            return True
    return False


def catches_import_error(handler):
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(decorator_name(t) in ("ImportError", "ModuleNotFoundError", "Exception",
                                     "BaseException") for t in types)


class FileFacts(ast.NodeVisitor):
    """A changed file's imports (each with whether it is guarded or type-only) and functions
    (each with what makes its empty body legitimate)."""

    def __init__(self):
        self.imports = []  # (node, guarded, type_only)
        self.functions = []  # (node, exempt)
        self.classes = {}  # name -> ClassDef
        self.subclassed = set()
        self._guarded = 0
        self._type_only = 0
        self._class = []

    def visit_Import(self, node):
        self.imports.append((node, self._guarded > 0, self._type_only > 0))

    visit_ImportFrom = visit_Import

    def visit_Try(self, node):
        guarded = any(catches_import_error(h) for h in node.handlers)
        self._guarded += guarded
        self.generic_visit(node)
        self._guarded -= guarded

    visit_TryStar = visit_Try

    def visit_If(self, node):
        if is_type_checking(node.test):
            self._type_only += 1
            for stmt in node.body:
                self.visit(stmt)
            self._type_only -= 1
            for stmt in node.orelse:
                self.visit(stmt)
            return
        conditional = is_conditional(node.test)
        self._guarded += conditional
        self.generic_visit(node)
        self._guarded -= conditional

    def visit_ClassDef(self, node):
        self.classes[node.name] = node
        for b in node.bases:
            self.subclassed.add(base_name(b))
        self._class.append(node)
        self.generic_visit(node)
        self._class.pop()

    def visit_FunctionDef(self, node):
        owner = self._class[-1] if self._class and node in self._class[-1].body else None
        self.functions.append((node, owner, self._type_only > 0))
        saved = self._class
        self._class = []
        self.generic_visit(node)
        self._class = saved

    visit_AsyncFunctionDef = visit_FunctionDef

    def abstract_class(self, cls, seen=None):
        """A Protocol, an ABC, or a class of this file built on one."""
        seen = seen or set()
        if cls.name in seen:
            return False
        seen.add(cls.name)
        for k in cls.keywords:
            if k.arg == "metaclass" and decorator_name(k.value) == "ABCMeta":
                return True
        for b in cls.bases:
            name = base_name(b)
            if name in ABSTRACT_BASES:
                return True
            parent = self.classes.get(name)
            if parent is not None and self.abstract_class(parent, seen):
                return True
        return False

    def base_like(self, cls):
        """A class other code builds on: subclassed in this file, or named as a base."""
        name = cls.name
        return (name in self.subclassed or name.startswith(("Base", "Abstract", "_Base"))
                or name.endswith(("Base", "Mixin", "Interface")))


def placeholder_body(fn):
    """What makes `fn`'s body a placeholder, or None."""
    body = list(fn.body)
    docstring = None
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        docstring = body[0].value.value
        body = body[1:]
    if not body:
        return "only a docstring", docstring
    if len(body) != 1:
        return None, docstring
    stmt = body[0]
    if isinstance(stmt, ast.Pass):
        return "only `pass`", docstring
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
            and stmt.value.value is Ellipsis:
        return "only `...`", docstring
    if isinstance(stmt, ast.Raise) and stmt.exc is not None \
            and decorator_name(stmt.exc) == "NotImplementedError":
        return "only `raise NotImplementedError`", docstring
    return None, docstring


def module_name(project, rel):
    """The dotted module a file imports as, from the first of the project's folders that holds it."""
    path = os.path.join(project.root, rel)
    for r in sorted(project.roots, key=len, reverse=True):
        if path.startswith(r + os.sep):
            stem = os.path.relpath(path, r)[:-3].replace(os.sep, "/")
            parts = stem.split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if parts and all(is_identifier(p) for p in parts):
                return ".".join(parts)
            return None
    return None


class Checker:
    def __init__(self, req):
        self.req = req
        self.project = Project(req)
        self.issues = []
        self.checked = []
        self.notes = []
        self.hallucinated = set()  # top-level modules and names reported as hallucinated

    def add(self, *args):
        self.issues.append(issue(*args))

    def check_imports(self, rel, facts, source_dir):
        leaks = not is_test_path(rel) and not is_test_support(rel)
        for node, guarded, type_only in facts.imports:
            if type_only:
                continue
            if isinstance(node, ast.Import):
                targets = [(a.name, None) for a in node.names]
                level = 0
            else:
                level = node.level or 0
                names = [a.name for a in node.names if a.name != "*"]
                targets = [(node.module or "", names)]
            for module, names in targets:
                if leaks:
                    self.check_leak(rel, node.lineno, level, module, names or [], source_dir)
                if guarded:
                    continue
                self.check_target(rel, node.lineno, level, module, names, source_dir)

    def check_leak(self, rel, line, level, module, names, source_dir):
        """Production code importing a test double, a test tool or the project's test code."""
        p = self.project
        if level == 0:
            own = p.find_in(p.roots, module.split(".")[0])
            # The project's own module of that name (a demo `mock.py`) is not a test tool.
            own = own is not None and own[0] != "namespace" and own[1] is not None \
                and not is_test_path(p.rel(own[1]))
            for m in [module] + [module + "." + n for n in names]:
                top = m.split(".")[0]
                double = m == "unittest.mock" or m.startswith("unittest.mock.") \
                    or (top in MOCK_MODULES and not own)
                if double and not (top in MOCK_MODULES and p.is_declared(top, runtime=True)):
                    self.add("critical", "mock_leakage", rel, line,
                             "production code imports the test double or test tool `%s`" % m)
                    return
        for extra in [None] + list(names):
            parts = [x for x in module.split(".") if x] + ([extra] if extra else [])
            found = self.locate(rel, level, parts, source_dir)[0]
            if found is None or found[0] == "opaque":
                continue
            places = ([found[1]] if found[1] else []) + [d + "/__init__.py" for d in found[2]]
            test = [x for x in places if is_test_path(p.rel(x))]
            if test:
                self.add("critical", "mock_leakage", rel, line,
                         "production code imports test code `%s` (%s)"
                         % ("." * level + ".".join(x for x in (module, extra) if x),
                            p.rel(test[0])))
                return

    def relative_base(self, rel, level):
        base = os.path.dirname(os.path.join(self.project.root, rel))
        for _ in range(level - 1):
            base = os.path.dirname(base)
        if base != self.project.root and not base.startswith(self.project.root + os.sep):
            return None
        return base

    def locate(self, rel, level, parts, source_dir):
        """Where an import resolves in the project: (resolution, None), (None, the first missing
        part), or (None, None) when the module is not the project's to judge (installed,
        standard library, above the root, or nowhere: the caller decides)."""
        p = self.project
        if level:
            base = self.relative_base(rel, level)
            if base is None:
                return None, None
            init = os.path.join(base, "__init__.py")
            found = ("package", init, [base]) if os.path.isfile(init) \
                else ("namespace", None, [base])
            return p.descend(found, parts)
        if not parts:
            return None, None
        found = p.find_in(p.roots, parts[0]) or p.find_in([source_dir], parts[0])
        if found is None or (found[0] == "namespace" and p.installed(parts[0])):
            return None, None
        return p.descend(found, parts[1:])

    def check_target(self, rel, line, level, module, names, source_dir):
        p = self.project
        parts = [x for x in module.split(".") if x]
        shown = "." * level + module
        resolved, missing = self.locate(rel, level, parts, source_dir)
        if resolved is None and missing is None:
            if level:
                return
            top = parts[0]
            if p.installed(top):
                return
            if p.is_declared(top):
                self.add("warning", "hallucinated_import", rel, line,
                         "`%s` is declared by the project but not installed for %s"
                         % (top, python_name()))
                return
            self.hallucinated.add(top)
            self.add("critical", "hallucinated_import", rel, line,
                     "`%s`: no module `%s` in the project, installed for %s, or in the "
                     "standard library" % (module, top, python_name()))
            return
        if resolved is None:
            self.hallucinated.add(missing)
            self.add("critical", "hallucinated_import", rel, line,
                     "`%s`: the project has no module `%s` there" % (shown, missing))
            return
        for name in names or []:
            if not self.defines(resolved, name):
                self.hallucinated.add(name)
                where = p.rel(resolved[1]) if resolved[1] else shown
                self.add("critical", "hallucinated_import", rel, line,
                         "`from %s import %s`: %s defines no `%s`" % (shown, name, where, name))

    def defines(self, resolved, name):
        kind, path, dirs = resolved
        if kind == "opaque" or name in MODULE_DUNDERS:
            return True
        if kind in ("package", "namespace") and self.project.find_in(dirs, name) is not None:
            return True
        if kind == "namespace":
            return False
        names = self.project.definitions(path)
        return names is None or name in names

    def check_functions(self, rel, facts, source):
        notes = {}
        for line, text in comments(source):
            notes.setdefault(line, []).append(text)
        for fn, owner, type_only in facts.functions:
            what, docstring = placeholder_body(fn)
            if what is None or type_only:
                continue
            names = [decorator_name(d) for d in fn.decorator_list]
            if any(n in ABSTRACT_DECORATORS for n in names):
                continue
            if "NotImplementedError" not in what and any(n not in PLAIN_DECORATORS
                                                         for n in names):
                continue
            if owner is not None and (facts.abstract_class(owner) or facts.base_like(owner)):
                continue
            dunder = fn.name.startswith("__") and fn.name.endswith("__")
            if dunder and "NotImplementedError" not in what:
                continue
            end = getattr(fn, "end_lineno", fn.lineno) or fn.lineno
            said = [t for ln in range(fn.lineno, end + 1) for t in notes.get(ln, [])]
            if docstring:
                said.append(docstring)
            if any(DELIBERATE.search(t) for t in said if not TODO.search(t)):
                continue
            who = "%s.%s" % (owner.name, fn.name) if owner is not None else fn.name
            self.add("critical", "placeholder", rel, fn.lineno,
                     "`%s` is a placeholder: its body is %s" % (who, what))
        for line, text in comments(source):
            if TODO.search(text):
                self.add("warning", "placeholder", rel, line,
                         "%s comment: %s" % (TODO.search(text).group(1),
                                             text.lstrip("# ").strip()[:160]))

    def run(self, started, budget):
        p = self.project
        files, over = walk_sources(p)
        broken = set()
        compiled = 0
        for rel in files:
            # Compiling is cheap, but a huge tree must leave time for the changed files.
            if time.monotonic() - started > budget * 0.5:
                self.notes.append("%d Python files were not compiled (time budget)"
                                  % (len(files) - compiled))
                break
            compiled += 1
            line, message = compile_file(p, rel)
            if message:
                broken.add(rel)
                self.add("critical", "does_not_compile", rel, line, message)
        self.checked.append("compile: %d Python files" % compiled)
        if over:
            self.notes.append("%d Python files over the limit of %d were not compiled"
                              % (over, COMPILE_LIMIT))
        changed = []
        for rel in self.req.get("changed", []):
            path = os.path.join(p.root, rel)
            if rel.endswith(".py") and os.path.isfile(path):
                changed.append(rel)
        judged = 0
        for rel in changed:
            if rel in broken:
                continue
            path = os.path.join(p.root, rel)
            try:
                with open(path, "rb") as f:
                    source = f.read()
                tree = ast.parse(source, path)
            except (OSError, SyntaxError, ValueError) as e:
                if not is_test_path(rel):
                    line = getattr(e, "lineno", None)
                    self.add("critical", "does_not_compile", rel, line, str(e))
                    broken.add(rel)
                continue
            facts = FileFacts()
            facts.visit(tree)
            self.check_imports(rel, facts, os.path.dirname(path))
            if not is_test_path(rel):
                self.check_functions(rel, facts, source)
            judged += 1
        self.checked.append("imports, placeholders, mock leakage: %d changed Python files"
                            % judged)
        self.import_changed(changed, broken, started, budget)

    def import_changed(self, changed, broken, started, budget):
        p = self.project
        modules = []
        for rel in changed:
            name = rel.rsplit("/", 1)[-1]
            if is_test_path(rel) or name in NOT_IMPORTABLE or rel in broken:
                continue
            module = module_name(p, rel)
            if module is None:
                self.notes.append("%s was not imported: it is not a module under the project's "
                                  "import folders" % rel)
                continue
            modules.append((rel, module))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p.roots)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONSTARTUP", None)
        per = float(self.req.get("import_timeout_s", 20))
        imported = 0
        for i, (rel, module) in enumerate(modules):
            left = budget - (time.monotonic() - started)
            if left < 1:
                self.notes.append("not imported (time budget): %s"
                                  % ", ".join(m for _, m in modules[i:]))
                break
            outcome = import_in_child(module, os.path.join(p.root, rel), p.root, env,
                                      min(per, left))
            imported += 1
            if outcome.get("ok"):
                continue
            missing = outcome.get("missing")
            if missing and missing.split(".")[0] in self.hallucinated or \
                    missing in self.hallucinated:
                continue
            severity = "critical"
            message = outcome.get("message", "")
            if outcome.get("type") in NEEDS_CONFIGURATION:
                severity = "warning"
                message += " (the module needs its framework configured to import)"
            elif outcome.get("type") == "ModuleNotFoundError" and missing and \
                    p.is_declared(missing.split(".")[0]):
                severity = "warning"
                message += " (declared by the project but not installed)"
            self.add(severity, "does_not_import", rel, outcome.get("line"),
                     "`import %s` fails: %s" % (module, message))
        self.checked.append("import: %d changed modules, each in a child process" % imported)


def python_name():
    impl = getattr(sys, "implementation", None)
    name = impl.name if impl else "python"
    return "%s %d.%d (%s)" % (name, sys.version_info[0], sys.version_info[1], sys.executable)


def import_in_child(module, path, cwd, env, timeout):
    """Imports `module` in a child of its own; its result arrives on its stdout, where nothing
    else goes (the child points its fd 1 at stderr before the import)."""
    argv = [sys.executable, os.path.abspath(__file__), "--import", module, path]
    try:
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 start_new_session=True)
    except OSError as e:
        return {"ok": False, "type": "OSError", "message": "cannot start the child: %s" % e}
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except OSError:
            child.kill()
        child.communicate()
        return {"ok": False, "type": "TimeoutExpired",
                "message": "the import did not finish within %.0fs" % timeout}
    finally:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        return json.loads(out.decode("utf-8", "replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = err.decode("utf-8", "replace").strip().splitlines()[-4:]
        return {"ok": False, "type": "Exit",
                "message": "the import ended the process (exit %s)%s"
                           % (child.returncode, ": " + " | ".join(tail) if tail else "")}


def child_import(module, path):
    """The import check's child: imports `module`, prints one JSON line on the original stdout."""
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.argv = [path]
    real = os.path.realpath(path)
    try:
        __import__(module)
        result = {"ok": True}
    except BaseException as e:  # noqa: B902 - SystemExit and KeyboardInterrupt are findings too
        import traceback
        frames = traceback.extract_tb(e.__traceback__)
        line = None
        for fr in frames:
            if os.path.realpath(fr.filename) == real:
                line = fr.lineno
        if isinstance(e, SyntaxError) and e.filename and \
                os.path.realpath(e.filename) == real:
            line = e.lineno
        text = str(e)
        if isinstance(e, SystemExit):
            text = "the module calls sys.exit(%r) when imported" % (e.code,)
        message = "%s: %s" % (type(e).__name__, text[:500])
        where = [fr for fr in frames if os.path.realpath(fr.filename) != real]
        if where:
            last = where[-1]
            message += " (at %s:%s)" % (last.filename, last.lineno)
        result = {"ok": False, "type": type(e).__name__, "message": message, "line": line}
        if isinstance(e, ImportError):
            found = re.search(r"cannot import name '([^']+)'", text)
            result["missing"] = found.group(1) if found else getattr(e, "name", None)
    out.write(json.dumps(result) + "\n")
    out.flush()
    os._exit(0)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--import":
        child_import(sys.argv[2], sys.argv[3])
        return
    started = time.monotonic()
    with open(sys.argv[1]) as f:
        req = json.load(f)
    budget = float(req.get("budget_s", 120))
    checker = Checker(req)
    try:
        checker.run(started, budget)
    except Exception as e:  # a bug here must still leave a result saying so
        import traceback
        checker.notes.append("the Python checks stopped early: %s: %s | %s"
                             % (type(e).__name__, e,
                                " | ".join(traceback.format_exc().splitlines()[-3:])))
    import importlib.util
    result = {
        "issues": checker.issues,
        "checked": checker.checked,
        "notes": checker.notes,
        "python": python_name(),
        "mypy": importlib.util.find_spec("mypy") is not None,
    }
    with open(sys.argv[2], "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
