"""team-testing's built-in test generator: a feedback-directed search for Python (Randoop/Pynguin style).

Reads one JSON request on stdin, writes one JSON result on stdout (logs go to stderr). Every call of
the code under test runs in a forked child with a timeout and a fresh temporary working directory;
a call is kept only when it reaches lines no earlier call reached. Observed values become assertions
only when they are stable across two runs; stated contracts (doctest examples, return annotations,
no builtin exception escaping on well-typed input) win over observed values. All random choices come
from one seeded generator, and the search is bounded by counts (time is only a backstop), so the same
seed gives byte-identical files.
"""

import ast
import doctest
import errno
import importlib
import inspect
import hashlib
import json
import os
import pathlib
import pickle
import random
import re
import select
import signal
import sys
import tempfile
import time
import traceback
import typing

import ttaudit

CONTRACT_ERRORS = ("IndexError", "KeyError", "ZeroDivisionError", "AttributeError", "TypeError",
                   "UnboundLocalError")
PLAIN = (type(None), bool, int, float, str, bytes)
MAX_CANDIDATES = 400      # per module: the search's real bound (keeps results reproducible)
STAGNATION = 120          # candidates in a row that add nothing: the module is done
MAX_REPR = 200            # longer values are asserted by type and length, not spelled out
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


# ---- the sandboxed call ---------------------------------------------------------------------------

def _line_tracer(target, hits, arcs):
    """Records the lines of `target` that run, and the arcs between them (branch coverage)."""
    last = {}

    def local(frame, event, arg):
        if event == "line":
            line = frame.f_lineno
            hits.add(line)
            prev = last.get(id(frame))
            if prev is not None:
                arcs.add((prev, line))
            last[id(frame)] = line
        return local

    def global_(frame, event, arg):
        if frame.f_code.co_filename == target:
            hits.add(frame.f_lineno)
            last[id(frame)] = frame.f_lineno
            return local
        return None
    return global_


# Where the helper runs: paths of this machine that must never appear in an expected value.
ORIGIN = {"cwd": os.getcwd(), "home": os.path.expanduser("~"), "tmp": tempfile.gettempdir()}


def _machine_paths(place):
    """The session, mirror, home and temporary folders: a value naming one is not a contract."""
    cwd = ORIGIN["cwd"]
    session = cwd.split(os.sep + "workspace" + os.sep)[0]
    found = [place.base, cwd, session, ORIGIN["home"], ORIGIN["tmp"], os.path.realpath(ORIGIN["tmp"])]
    return [p for p in found if p and len(p) > 4]


def _tmp_relative(value, place):
    """`tmp_path / 'x'` (or its str) when the value is a path inside the call's tmp_path."""
    if isinstance(value, pathlib.PurePath):
        text = str(value)
    elif isinstance(value, str):
        text = value
    else:
        return None
    if text != place.tmp_path and not text.startswith(place.tmp_path + os.sep):
        return None
    rel = os.path.relpath(text, place.tmp_path)
    expr = "tmp_path" if rel == "." else f"tmp_path / {rel!r}"
    return expr if isinstance(value, pathlib.PurePath) else f"str({expr})"


def _describe_result(value, place):
    text = repr(value)
    machine = _machine_paths(place)
    out = {"ok": True, "repr": text, "type": type(value).__name__,
           "type_module": type(value).__module__, "plain": _is_plain(value),
           "floaty": _has_float(value), "attrs": _stable_attrs(value, machine)}
    relative = _tmp_relative(value, place)
    if relative is not None:
        out["tmp_expr"] = relative
    elif any(p in text for p in machine):
        out["machine_bound"] = True  # names this machine's folders: never an expected value
    return out


def _describe_error(exc, target):
    frames = traceback.extract_tb(exc.__traceback__)
    inner = frames[-1] if frames else None
    in_module = bool(inner and inner.filename == target)
    explicit = bool(in_module and inner.line and inner.line.lstrip().startswith("raise"))
    # Absolute here, in the call's own folder: the parent runs elsewhere.
    names = [getattr(exc, a, None) for a in ("filename", "filename2")]
    names = [os.path.abspath(os.fsdecode(n)) for n in names if isinstance(n, (str, bytes, os.PathLike))]
    return {"ok": False, "exc": type(exc).__name__, "exc_module": type(exc).__module__,
            "msg": str(exc)[:200], "in_module": in_module, "explicit": explicit,
            "errno": getattr(exc, "errno", None) if isinstance(exc, OSError) else None,
            "filenames": names}


# ---- what the sandbox stopped, and what a call changes ---------------------------------------------

NETWORK_ERRNOS = {errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL}
SANDBOXED = os.environ.get("TT_SANDBOX") == "1"
NETWORK_ON = os.environ.get("TT_SANDBOX_NETWORK") == "on"


def _writable_roots():
    roots = [p for p in os.environ.get("TT_SANDBOX_WRITABLE", "").split(":") if p]
    return [os.path.realpath(p) for p in roots + [tempfile.gettempdir()]]


def _inside(path, roots):
    return ttaudit.inside(path, roots)


class CallPlace:
    """The folders of one call: a current folder, a HOME and a TMPDIR of its own, and `tmp_path`,
    the folder a test creates and passes in. Only tmp_path and TMPDIR may change: the current
    folder and HOME stand for the user's project and home after `apply`."""

    def __init__(self):
        self.base = os.path.realpath(tempfile.mkdtemp(prefix="ttgen-"))
        self.cwd, self.home, self.tmp, self.tmp_path = (
            os.path.join(self.base, name) for name in ("cwd", "home", "tmp", "tmp_path"))
        for folder in (self.cwd, self.home, self.tmp, self.tmp_path):
            os.mkdir(folder)
        # Something to lose: code that empties or deletes the current folder or the home folder
        # shows it here, where a project and a home would be after `apply`.
        for path in (os.path.join(self.cwd, "README.md"), os.path.join(self.home, ".profile")):
            with open(path, "w", encoding="utf-8") as f:
                f.write("kept by team-testing's generator: a call must not change this file\n")

    def enter(self):
        """Moves this process into the place (the forked child only)."""
        os.chdir(self.cwd)
        os.environ["HOME"] = self.home
        for name, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
                          ("XDG_CACHE_HOME", ".cache"), ("XDG_STATE_HOME", ".local/state")):
            os.environ[name] = os.path.join(self.home, sub)
        os.environ["TMPDIR"] = self.tmp
        tempfile.tempdir = self.tmp

    def audit(self):
        return ttaudit.Audit([self.tmp_path, self.tmp], network_on=NETWORK_ON)

    def remove(self):
        """Removes the place, whatever modes the call left on it."""
        import shutil

        def writable_again(func, path, _exc):
            try:
                os.chmod(os.path.dirname(path), 0o700)
                os.chmod(path, 0o700)
                func(path)
            except OSError:
                pass
        try:
            os.chdir("/")
        except OSError:
            pass
        shutil.rmtree(self.base, onerror=writable_again)


def sandbox_block(outcome):
    """What the sandbox stopped that the effect audit did not see, in words; None when nothing
    (a memory or process limit, a write from native code)."""
    if not SANDBOXED or outcome.get("ok"):
        return None
    exc, code = outcome.get("exc"), outcome.get("errno")
    paths = outcome.get("filenames", [])
    if exc == "MemoryError":
        return "allocation stopped by the sandbox's memory limit"
    if exc == "BlockingIOError" and code == errno.EAGAIN:
        return "process creation stopped by the sandbox's process limit"
    if code in (errno.EROFS, errno.EXDEV):
        return f"write outside the sandbox blocked: {', '.join(paths) or 'a read-only file system'}"
    outside = [p for p in paths if not _inside(p, _writable_roots())]
    if code in (errno.EACCES, errno.EPERM) and outside:
        return f"access outside the sandbox blocked: {', '.join(outside)}"
    path = paths[0] if paths else None
    network_off = os.environ.get("TT_SANDBOX_NETWORK") == "off"
    if network_off and (code in NETWORK_ERRNOS or exc in ("ConnectionRefusedError", "gaierror")):
        return f"network access blocked by the sandbox ({exc}: {outcome.get('msg', '')[:80]})"
    if network_off and code in (errno.EACCES, errno.EPERM) and not path:
        # Landlock's TCP rules (where no network namespace is available) deny with EACCES.
        return f"access blocked by the sandbox ({exc}: {outcome.get('msg', '')[:80]})"
    return None


RESULT_FD = 1000  # where the call's result channel lives: far from the numbers code may guess


def _quiet_descriptors(write_end, folder):
    """The call's stdin, stdout and stderr go to a file of its own place (what it prints must not
    reach the helper's output, and a chmod of descriptor 0 must not reach /dev/null), its result
    channel moves to RESULT_FD, and every other inherited descriptor is closed: a number passed
    as a file finds nothing there. Returns the channel."""
    stdio = os.open(os.path.join(folder, "stdio"), os.O_RDWR | os.O_CREAT, 0o600)
    for fd in (0, 1, 2):
        os.dup2(stdio, fd)
    try:
        import resource
        soft, infinity = resource.getrlimit(resource.RLIMIT_NOFILE)[0], resource.RLIM_INFINITY
    except (ImportError, OSError, ValueError):
        soft, infinity = RESULT_FD + 1, -1
    channel = RESULT_FD if soft == infinity or soft > RESULT_FD else max(3, soft - 1)
    if channel != write_end:
        os.dup2(write_end, channel)
    os.closerange(3, channel)
    os.closerange(channel + 1, max(channel + 1, 4096))
    return channel


def _closed_streams():
    """Effects for standard streams the call closed (in a test, they are pytest's)."""
    found = []
    for fd, name in ((0, "standard input"), (1, "standard output"), (2, "standard error")):
        try:
            os.fstat(fd)
        except OSError:
            found.append({"effect": f"closes the {name}", "path": "", "event": "close"})
    return found


def _die_with_parent():
    """SIGKILL when the helper dies: the call has its own process group, so the helper's group
    kill (its timeout) would not reach it."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort where there is no prctl
        pass


def run_call(namespace, statements, expr, target, timeout):
    """Runs `statements` then evaluates `expr` in a forked child; returns what happened."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.setpgid(0, 0)  # its own process group, so whatever it forks ends with it
        _die_with_parent()
        os.close(read_end)
        payload = {"ok": False, "exc": "InternalError", "msg": "", "in_module": False, "explicit": False}
        hits, arcs = set(), set()
        audit = place = None
        try:
            place = CallPlace()
            write_end = _quiet_descriptors(write_end, place.base)
            place.enter()
            env = dict(namespace)
            env["tmp_path"] = pathlib.Path(place.tmp_path)
            audit = place.audit().install()
            audit.on = True
            sys.settrace(_line_tracer(target, hits, arcs))
            try:
                for stmt in statements:
                    try:
                        exec(stmt, env)
                    except BaseException:
                        # The setup failed, not the call under test: nothing to assert here.
                        payload["setup_failed"] = True
                        raise
                value = eval(expr, env)
            finally:
                sys.settrace(None)
                audit.on = False
            payload = _describe_result(value, place)
        except BaseException as exc:  # noqa: BLE001 - the child reports everything
            sys.settrace(None)
            if audit is not None:
                audit.on = False
            setup_failed = payload.get("setup_failed", False)
            try:
                payload = _describe_error(exc, target)
            except BaseException:  # noqa: BLE001
                pass
            payload["setup_failed"] = setup_failed
        payload["lines"] = sorted(hits)
        payload["arcs"] = sorted(arcs)
        payload["effects"] = (audit.effects if audit is not None else []) + _closed_streams()
        if payload.get("errno") == errno.EBADF:
            # A number taken for a file: in the test's process that descriptor is pytest's own.
            payload["effects"].append({"effect": "uses a file descriptor number that is not a file of its own",
                                       "path": "", "event": "EBADF"})
        if place is not None:
            place.remove()
        try:
            data = pickle.dumps(payload)
        except BaseException:  # noqa: BLE001
            data = pickle.dumps({"ok": False, "exc": "Unpicklable", "msg": "", "lines": sorted(hits),
                                 "in_module": False, "explicit": False, "effects": payload["effects"]})
        os.write(write_end, data)
        os._exit(0)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return {"timeout": True, "lines": []}
            ready, _, _ = select.select([read_end], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            try:
                # Complete: do not wait for EOF, which processes the call forked would hold off.
                return pickle.loads(b"".join(chunks))
            except Exception:  # noqa: BLE001 - not all of it yet
                pass
    finally:
        os.close(read_end)
        # The call is over: end it and anything it started (a fork loop, a server).
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:  # noqa: BLE001 - a child that died mid-write
        return {"ok": False, "exc": "ChildCrashed", "msg": "", "lines": [], "in_module": False,
                "explicit": False}


def _is_plain(value, depth=0):
    if depth > 3:
        return False
    if isinstance(value, PLAIN):
        return not (isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))))
    if isinstance(value, (list, tuple)):
        return all(_is_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, (str, int)) and _is_plain(v, depth + 1) for k, v in value.items())
    return False


def _has_float(value):
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_float(v) for v in value)
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    return False


def _stable_attrs(value, machine=()):
    if isinstance(value, PLAIN) or not hasattr(value, "__dict__"):
        return []
    out = []
    for name in sorted(vars(value)):
        v = vars(value)[name]
        text = repr(v)
        if not name.startswith("_") and _is_plain(v) and len(text) <= MAX_REPR \
                and not any(p in text for p in machine):
            out.append([name, text, _has_float(v)])
    return out[:3]


# ---- discovery and inputs -------------------------------------------------------------------------

def discover(module):
    """Public functions, classes and methods defined in the module itself, in name order."""
    found = []
    for name in sorted(vars(module)):
        obj = getattr(module, name)
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            found.append({"kind": "function", "name": name, "obj": obj, "cls": None})
        elif inspect.isclass(obj):
            found.append({"kind": "class", "name": name, "obj": obj, "cls": None})
            for mname in sorted(vars(obj)):
                meth = vars(obj)[mname]
                if not mname.startswith("_") and inspect.isfunction(meth):
                    found.append({"kind": "method", "name": f"{name}.{mname}", "obj": meth, "cls": name})
    return found


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


def executable_lines(source, path):
    """Lines inside function and method bodies: what calls can reach (imports run at import)."""
    lines = set()

    def walk(code, top):
        if not top:
            lines.update(n for _, _, n in code.co_lines() if n is not None)
        for const in code.co_consts:
            if hasattr(const, "co_code"):
                walk(const, False)
    walk(compile(source, path, "exec"), True)
    return lines


class Inputs:
    """Argument expressions (Python source) for a parameter, from hints, names and constants."""

    def __init__(self, rng, constants, classes):
        self.rng = rng
        self.ints, self.floats, self.strs = constants
        self.classes = classes          # class name -> list of constructor expressions that worked
        self.setup = []                 # statements the drawn arguments need (files in tmp_path)
        self.pathy = set()              # functions whose string arguments turned out to be paths
        self.callee = None              # the function the arguments are drawn for

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
        return repr(self.rng.choice([0, 1, 2, -1, 3, 10, self.rng.randint(-50, 50)] + self.ints))

    def float_(self):
        return repr(self.rng.choice([0.0, 1.5, -2.5, 2.0, 100.0] + self.floats))

    def str_(self):
        return repr(self.rng.choice(["", "a", "abc", "Hello World", "1 + 2", "x-y_z", " "] + self.strs))

    def list_(self, item=None):
        n = self.rng.randint(0, 4)
        make = item or self.rng.choice([self.int_, self.str_])
        return "[" + ", ".join(make() for _ in range(n)) + "]"

    def by_name(self, name):
        low = name.lower()
        if low in PATH_NAMES or low.endswith(PATH_SUFFIXES):
            return self.path_(as_path=self.rng.random() < 0.3)
        if low in ("n", "count", "size", "index", "i", "k", "times", "turns", "quantity", "sides") or \
                low.endswith(("_count", "_index", "_size")):
            return self.int_()
        if low in ("text", "s", "name", "word", "expr", "expression", "string", "code", "key", "label"):
            return self.str_()
        if low in ("items", "values", "xs", "numbers", "nums", "seq", "data", "elements"):
            return self.list_(self.int_)
        if low in ("x", "y", "a", "b", "value", "price", "amount", "factor", "rate", "width", "height"):
            return self.rng.choice([self.int_, self.float_])()
        return None

    def for_hint(self, hint, depth=0):
        if depth > 2 or hint is inspect.Parameter.empty or hint is typing.Any:
            return None
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if hint is int:
            return self.int_()
        if hint is float:
            return self.float_()
        if hint is str:
            return self.str_()
        if hint is bool:
            return self.rng.choice(["True", "False"])
        if hint is bytes:
            return repr(self.rng.choice([b"", b"abc", b"\x00\xff"]))
        if hint is list or origin is list:
            inner = args[0] if args else None
            return self.list_((lambda: self.for_hint(inner, depth + 1) or self.int_()) if inner else None)
        if hint is tuple or origin is tuple:
            items = [self.for_hint(a, depth + 1) or self.int_() for a in args if a is not Ellipsis]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if hint is dict or origin is dict:
            return self.rng.choice(["{}", "{'a': 1}", "{'a': 1, 'b': 2}"])
        if origin is typing.Union:
            choice = self.rng.choice(args)
            return "None" if choice is type(None) else self.for_hint(choice, depth + 1)
        if inspect.isclass(hint) and hint.__name__ in self.classes and self.classes[hint.__name__]:
            return self.rng.choice(self.classes[hint.__name__])
        return None

    def any_(self):
        pick = self.rng.choice([self.int_, self.str_, self.float_, self.list_])
        return pick()

    def for_param(self, param, hint):
        if param.default is not inspect.Parameter.empty and self.rng.random() < 0.25:
            return None  # leave it to the default
        if path_hint(hint):
            return self.path_(as_path=not _allows_str(hint) or self.rng.random() < 0.5)
        stringy = hint in (str, inspect.Parameter.empty) or _allows_str(hint)
        named = param.name.lower() in PATH_NAMES or param.name.lower().endswith(PATH_SUFFIXES)
        if stringy and (self.callee in self.pathy or named) and self.rng.random() < 0.8:
            return self.path_()
        return self.for_hint(hint) or self.by_name(param.name) or self.any_()


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
PATH_NAMES = ("path", "file", "filename", "fname", "filepath", "dir", "dirname", "directory", "folder",
              "dest", "destination", "src", "source_path", "target", "root", "location", "where")
PATH_SUFFIXES = ("_path", "_dir", "_file", "_folder", "_filename", "path", "dir")


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


def hints_of(fn):
    try:
        return typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - unresolvable annotations: go without them
        return {}


def satisfies(value_expr, hint, namespace):
    """Whether an argument expression's value matches a simple annotation (for contract checks)."""
    if hint is inspect.Parameter.empty or hint is None:
        return False
    try:
        # Only builds the value: tmp_path stands in for the test's folder, nothing is touched.
        value = eval(value_expr, dict(namespace, tmp_path=pathlib.Path(tempfile.gettempdir())))
    except Exception:  # noqa: BLE001
        return False
    base = typing.get_origin(hint) or hint
    if base is typing.Union:
        return any(satisfies(value_expr, h, namespace) for h in typing.get_args(hint))
    if base is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return inspect.isclass(base) and isinstance(value, base)


# ---- examples that only hold on their author's machine ---------------------------------------------

HOME_PATTERN = re.compile(r"(/Users/|/home/|/root/|[A-Za-z]:\\\\Users|~/)")
ABSOLUTE = re.compile(r"""(?:(?<=['"(])|^)(/[A-Za-z0-9._-]+)[^'"\s)]*""")
DATE_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}:\d{2}\b|datetime\.(?:datetime|date|time)\(")
MACHINE_ROOTS = {"/Users", "/home", "/root", "/tmp", "/var", "/private", "/opt", "/usr", "/etc", "/mnt",
                 "/Volumes", "/srv", "/run", "/proc", "/nix", "/media"}


def _machine_names():
    names = []
    try:
        import getpass
        names.append(getpass.getuser())
    except Exception:  # noqa: BLE001
        pass
    try:
        import socket
        names.append(socket.gethostname())
    except Exception:  # noqa: BLE001
        pass
    # "root" is a common word as well as a user name: no evidence on its own.
    return [n for n in names if n and len(n) >= 3 and n != "root"]


def machine_specific(source, want):
    """What makes a doctest's expected output hold only where it was written (a home folder, an
    absolute path of that machine, the user or host name, a date or time, an object address), or
    None. What the example's own input already says does not count."""
    if ADDRESS.search(want):
        return "an object address"
    home = HOME_PATTERN.search(want)
    if home and home.group(1) not in source:
        return f"a home folder ({home.group(0)}...)"
    for found in ABSOLUTE.finditer(want):
        if found.group(1) in MACHINE_ROOTS and found.group(1) not in source:
            return f"a path of another machine ({found.group(0)[:60]})"
    for name in _machine_names():
        if re.search(r"\b" + re.escape(name) + r"\b", want) and name not in source:
            return "the user or host name"
    if DATE_TIME.search(want) and not DATE_TIME.search(source):
        return "a date or time"
    return None


# ---- the search -----------------------------------------------------------------------------------

class ModuleSearch:
    def __init__(self, spec, module, source, rng, req, deadline):
        self.spec, self.module, self.rng, self.req, self.deadline = spec, module, rng, req, deadline
        self.target = os.path.abspath(module.__file__)
        self.namespace = dict(vars(module))
        self.items = discover(module)
        self.classes = {i["name"]: [] for i in self.items if i["kind"] == "class"}
        self.inputs = Inputs(rng, harvest_constants(source), self.classes)
        self.lines_total = executable_lines(source, self.target)
        self.covered = set()
        self.arcs = set()
        self.missing = set(req.get("missing", {}).get(spec["file"], []))
        self.tests = []            # (name, body lines, uses pytest)
        self.findings = []
        self.timeouts = {}
        self.tried = 0
        self.pathy = set()         # functions seen touching paths named by their arguments
        self.inputs.pathy = self.pathy

    # -- helpers --

    def name_for(self, item, body, suffix=""):
        """test_<function>_<its arguments>[_kind]_<hash of the body>: says what it calls and with
        what, and the same test keeps its name in every round."""
        base = item["name"].replace(".", "_")
        method = item["name"].split(".")[-1]
        text = "\n".join(body)
        found = re.search(re.escape(method) + r"\((.*?)\)", text)
        raw = found.group(1) if found else ""
        args = re.sub(r"[^0-9A-Za-z]+", "_", raw).strip("_").lower()[:24].strip("_")
        args = f"_{args}" if args else ("_empty" if raw.strip() else "_no_args")
        digest = hashlib.sha1(text.encode()).hexdigest()[:6]
        return f"test_{base}{args}{suffix}_{digest}"

    def arguments(self, item):
        """Argument source for a call of `item` and the (expression, annotation) pairs, or None."""
        fn = item["obj"]
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return None, []
        hints = hints_of(fn)
        self.inputs.callee = item["name"]
        params = list(sig.parameters.values())
        if item["kind"] == "method":
            params = params[1:]
        args, typed, keyword = [], [], False
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            expr = self.inputs.for_param(p, hints.get(p.name, inspect.Parameter.empty))
            if expr is None:
                if p.default is inspect.Parameter.empty:
                    return None, []
                keyword = True  # a parameter left to its default: name the ones after it
                continue
            if keyword and p.kind != p.POSITIONAL_ONLY:
                args.append(f"{p.name}={expr}")
            else:
                args.append(expr)
            typed.append((expr, hints.get(p.name, inspect.Parameter.empty)))
        return ", ".join(args), typed

    def call_expr(self, item, owner=None):
        """A call of a function, a constructor, or a method on `owner` (an instance expression)."""
        args, typed = self.arguments(item)
        if args is None:
            return None, []
        if item["kind"] == "method":
            if owner is None:
                owners = self.classes.get(item["cls"]) or []
                if not owners:
                    return None, []
                owner = self.rng.choice(owners)
            method = item["name"].split(".", 1)[1]
            return f"{owner}.{method}({args})", typed
        return f"{item['name']}({args})", typed

    def run(self, statements, expr):
        return run_call(self.namespace, statements, expr, self.target, self.req["call_timeout_s"])

    def adds(self, outcome):
        """Whether a run reaches a line or takes a branch (arc) no kept call did."""
        lines = set(outcome.get("lines", []))
        arcs = {tuple(a) for a in outcome.get("arcs", [])}
        return bool(lines - self.covered) or bool(arcs - self.arcs)

    def keep(self, outcome):
        self.covered.update(outcome.get("lines", []))
        self.arcs.update(tuple(a) for a in outcome.get("arcs", []))

    def percent(self):
        if not self.lines_total:
            return 100.0
        return 100.0 * len(self.covered & self.lines_total) / len(self.lines_total)

    # -- oracle --

    def assertion(self, expr, first, second):
        """The assertion lines for a deterministic or not result; None when nothing can be said."""
        if first.get("tmp_expr") and first.get("tmp_expr") == second.get("tmp_expr"):
            return [f"assert {expr} == {first['tmp_expr']}"], False
        stable = first.get("repr") == second.get("repr") and not ADDRESS.search(first.get("repr", "")) \
            and not first.get("machine_bound")
        if first.get("floaty") and first.get("type") == "float":
            try:
                if abs(float(first["repr"]) - time.time()) < 10 ** 8:
                    stable = False  # looks like a timestamp
            except ValueError:
                pass
        type_name = first["type"]
        type_ok = first["type_module"] == "builtins" or type_name in self.classes
        if stable and first["plain"] and len(first["repr"]) <= MAX_REPR:
            if first["floaty"]:
                return [f"assert {expr} == pytest.approx({first['repr']})"], True
            if first["repr"] in ("None", "True", "False"):
                return [f"assert {expr} is {first['repr']}"], False
            return [f"assert {expr} == {first['repr']}"], False
        if not type_ok:
            return None, False
        if type_name in self.classes and stable:
            lines = ["result = " + expr, f"assert isinstance(result, {type_name})"]
            uses = False
            for attr, rep, floaty in first.get("attrs", []):
                if floaty:
                    lines.append(f"assert result.{attr} == pytest.approx({rep})")
                    uses = True
                else:
                    lines.append(f"assert result.{attr} == {rep}")
            return lines, uses
        if type_name == "NoneType":
            return [f"assert {expr} is None"], False
        return [f"assert isinstance({expr}, {type_name})"], False

    def record(self, item, statements, expr, typed, outcome):
        """Turns one run into a test (or a finding); returns True when something was kept."""
        fn = item["obj"]
        if outcome.get("setup_failed"):
            return False
        if outcome.get("effects"):
            # It changes something outside its tmp_path: after `apply` that would be the user's
            # project or home. A finding to report, never a test to keep.
            self.side_effect(item, statements, expr, outcome["effects"])
            return False
        blocked = sandbox_block(outcome)
        if blocked:
            # Its effect depends on where it runs: a finding to report, never a test to keep.
            self.blocked(item, expr, blocked)
            return False
        ret_hint = hints_of(fn).get("return", inspect.Parameter.empty)
        body = list(statements)
        if outcome.get("ok"):
            second = self.run(statements, expr)
            contradicted = self.contradicts(outcome, ret_hint)
            if contradicted:
                self.finding(item, "annotation", expr, contradicted, outcome["type"])
                body.append(f"assert isinstance({expr}, {contradicted})")
                self.tests.append((self.name_for(item, body, "_contract"), body, False))
                return True
            lines, uses = self.assertion(expr, outcome, second)
            if not lines:
                return False
            self.tests.append((self.name_for(item, body + lines), body + lines, uses))
            return True
        exc = outcome.get("exc", "")
        if outcome.get("in_module") and not outcome.get("explicit") and exc in CONTRACT_ERRORS:
            params_ok = typed and all(satisfies(e, h, self.namespace) for e, h in typed)
            # A TypeError under a loose annotation (bare list, dict, tuple) is usually the
            # elements' fault: the annotation did not promise they would work.
            loose = any(h in (list, dict, tuple, set) for _, h in typed)
            if exc == "TypeError" and loose:
                params_ok = False
            if params_ok:
                ret = ret_hint if inspect.isclass(ret_hint) and ret_hint.__module__ == "builtins" else None
                self.finding(item, "builtin_exception", expr, "no exception", f"{exc}: {outcome.get('msg')}")
                if ret is not None:
                    body.append(f"assert isinstance({expr}, {ret.__name__})")
                    self.tests.append((self.name_for(item, body, "_contract"), body, False))
                return True
            return False  # ill-typed input: the input's fault, not the code's
        if not outcome.get("in_module"):
            return False  # raised at the call boundary (bad arguments)
        importable = outcome.get("exc_module") == "builtins" or exc in self.namespace
        if not importable:
            return False
        body.append(f"with pytest.raises({exc}):")
        body.append(f"    {expr}")
        self.tests.append((self.name_for(item, body), body, True))
        return True

    def contradicts(self, outcome, hint):
        simple = {int: "int", float: "float", str: "str", bool: "bool", list: "list", dict: "dict",
                  tuple: "tuple", bytes: "bytes"}
        if hint not in simple:
            return None
        got = outcome["type"]
        if hint is float and got in ("int", "float"):
            return None
        if hint is int and got == "bool":
            return None
        return None if got == simple[hint] else simple[hint]

    def blocked(self, item, call, what):
        # Calling it again would only hit the sandbox again: the search leaves it alone.
        self.timeouts[item["name"]] = 2
        function = f"{self.spec['module']}.{item['name']}"
        if any(f["function"] == function and f["actual"] == what for f in self.findings):
            return
        self.finding(item, "sandbox_denied", call, "no effect outside the sandbox", what)

    def side_effect(self, item, statements, call, effects):
        """One finding per function, with the first call that showed it; its string arguments
        look like paths from now on (observed use), so later calls get a tmp_path to work in."""
        self.pathy.add(item["name"])
        function = f"{self.spec['module']}.{item['name']}"
        if any(f["function"] == function and f["kind"] == "side_effect" for f in self.findings):
            return
        what = "; ".join(e["effect"] for e in effects[:3])
        shown = "; ".join(list(statements) + [call])
        self.finding(item, "side_effect", shown, "no effect outside its tmp_path", what)

    def finding(self, item, kind, call, expected, actual):
        self.findings.append({"module": self.spec["module"], "function": f"{self.spec['module']}.{item['name']}",
                              "kind": kind, "call": call, "expected": str(expected), "actual": str(actual),
                              "test": None})

    # -- phases --

    def doctests(self):
        """Docstring examples are stated contracts: assert what they say, report when it breaks.
        An example whose output only holds on its author's machine is skipped with a note."""
        parser = doctest.DocTestParser()
        for item in self.items:
            doc = inspect.getdoc(item["obj"]) or ""
            try:
                examples = parser.get_examples(doc)
            except ValueError:  # a malformed docstring: no examples to trust
                continue
            for example in examples:
                source, want = example.source.strip(), example.want.strip()
                if not want or "\n" in source or "\n" in want:
                    continue
                local = machine_specific(source, want)
                if local:
                    self.finding(item, "skipped_example", source, want,
                                 f"skipped: the expected output names {local}")
                    continue
                outcome = self.run([], source)
                if outcome.get("timeout"):
                    continue
                if outcome.get("effects"):
                    self.side_effect(item, [], source, outcome["effects"])
                    continue
                blocked = sandbox_block(outcome)
                if blocked:
                    self.blocked(item, source, blocked)
                    continue
                self.keep(outcome)
                body = [f"assert {source} == {want}"]
                name = self.name_for(item, body, "_doctest")
                self.tests.append((name, body, False))
                if not outcome.get("ok") or outcome.get("repr") != want:
                    got = outcome.get("repr") if outcome.get("ok") else outcome.get("exc")
                    self.finding(item, "doctest", source, want, got)
                    self.findings[-1]["test"] = name

    def constructors(self):
        """Instances to call methods on: every class built from a few argument draws."""
        for item in self.items:
            if item["kind"] != "class":
                continue
            for _ in range(6):
                expr, _typed = self.call_expr(item)
                if expr is None:
                    break
                if self.inputs.take_setup():
                    continue  # an owner must stand alone: it is reused in other tests
                outcome = self.run([], expr)
                if outcome.get("effects"):
                    self.side_effect(item, [], expr, outcome["effects"])
                    continue
                if outcome.get("ok") and expr not in self.classes[item["name"]]:
                    self.classes[item["name"]].append(expr)
                    self.keep(outcome)
                if len(self.classes[item["name"]]) >= 3:
                    break

    def l1(self):
        callables = [i for i in self.items if i["kind"] in ("function", "method", "class")]
        stale = 0
        while callables and self.tried < MAX_CANDIDATES and stale < STAGNATION:
            if time.monotonic() > self.deadline or self.percent() >= 100.0:
                break
            item = callables[self.tried % len(callables)] if self.tried < len(callables) else self.rng.choice(callables)
            self.tried += 1
            if self.timeouts.get(item["name"], 0) >= 2:
                stale += 1
                continue
            expr, typed = self.call_expr(item)
            setup = self.inputs.take_setup()
            if expr is None:
                stale += 1
                continue
            outcome = self.run(setup, expr)
            if outcome.get("timeout"):
                self.timeouts[item["name"]] = self.timeouts.get(item["name"], 0) + 1
                stale += 1
                continue
            if outcome.get("effects"):
                self.side_effect(item, setup, expr, outcome["effects"])
                stale += 1
                continue
            if not self.adds(outcome):
                stale += 1
                continue
            if self.record(item, setup, expr, typed, outcome):
                self.keep(outcome)
                stale = 0
            else:
                stale += 1

    def l2(self):
        """Sequences: an object built, mutated by methods, observed; or functions feeding each other."""
        methods = {}
        for i in self.items:
            if i["kind"] == "method":
                methods.setdefault(i["cls"], []).append(i)
        functions = [i for i in self.items if i["kind"] == "function"]
        stale = 0
        while self.tried < MAX_CANDIDATES and stale < STAGNATION and time.monotonic() < self.deadline:
            self.tried += 1
            owners = [c for c in sorted(methods) if self.classes.get(c)]
            if owners and (not functions or self.rng.random() < 0.7):
                cls = self.rng.choice(owners)
                statements = [f"obj = {self.rng.choice(self.classes[cls])}"]
                steps = [self.rng.choice(methods[cls]) for _ in range(self.rng.randint(1, 3))]
                for step in steps[:-1]:
                    expr, _ = self.call_expr(step, owner="obj")
                    if expr:
                        statements.append(expr)
                item = steps[-1]
                expr, typed = self.call_expr(item, owner="obj")
                # The files the arguments need come first.
                statements = self.inputs.take_setup() + statements
                if not expr:
                    stale += 1
                    continue
            elif len(functions) >= 1:
                inner, outer = self.rng.choice(functions), self.rng.choice(functions)
                inner_expr, _ = self.call_expr(inner)
                setup = self.inputs.take_setup()
                if not inner_expr:
                    stale += 1
                    continue
                statements = setup + [f"value = {inner_expr}"]
                try:
                    params = [p for p in inspect.signature(outer["obj"]).parameters.values()
                              if p.default is inspect.Parameter.empty]
                except (TypeError, ValueError):
                    params = []
                if len(params) != 1:
                    stale += 1
                    continue
                expr, typed, item = f"{outer['name']}(value)", [], outer
            else:
                break
            outcome = self.run(statements, expr)
            if outcome.get("effects"):
                # Any step may have done it: never a test; the single calls (l1) name the culprit.
                stale += 1
                continue
            if outcome.get("timeout") or not self.adds(outcome):
                stale += 1
                continue
            if self.record(item, statements, expr, typed, outcome):
                self.keep(outcome)
                stale = 0
            else:
                stale += 1

    def render(self, layer, seed):
        avoid = set(self.req.get("avoid", []))
        tests, seen = [], set()
        for t in self.tests:
            if t[0] not in avoid and t[0] not in seen:  # the same body twice is one test
                seen.add(t[0])
                tests.append(t)
        used = set()
        text = "\n".join(line for _, body, _ in tests for line in body)
        for i in self.items:
            top = i["name"].split(".")[0]
            if re.search(r"\b" + re.escape(top) + r"\b", text):
                used.add(top)
        out = [f'"""Tests for {self.spec["module"]} ({self.spec["file"]}), generated by team-testing\'s '
               f'built-in generator (layer {layer}, seed {seed})."""']
        out += ["import tempfile", "", "import pytest", ""]
        if used:
            out.append(f"from {self.spec['module']} import {', '.join(sorted(used))}")
        out += ["", "", isolation_fixture()]
        for name, body, _ in tests:
            out += ["", "", f"def {name}({test_params(body)}):"]
            out.extend("    " + line for line in body)
        return "\n".join(out) + "\n", [t[0] for t in tests]


def isolation_fixture():
    """The autouse fixture every generated module carries (tt_isolation.py, shipped beside us)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tt_isolation.py"),
              encoding="utf-8") as f:
        text = f.read()
    return text[text.index("@pytest.fixture"):].rstrip()


def test_params(body):
    """The fixtures a test's body uses: tmp_path, where its files live."""
    return "tmp_path" if any(re.search(r"\btmp_path\b", line) for line in body) else ""


# ---- L3: the project's entry points, run as subprocesses -----------------------------------------

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


def run_entry(module, args, timeout):
    """Runs `python -m module args` as the delivered test will (in a tmp_path of its own as cwd,
    with HOME and TMPDIR elsewhere), under the effect audit; (exit code, stdout, effects), or
    None when it timed out."""
    import subprocess
    place = CallPlace()
    # The project must stay importable from the scratch folder the command runs in.
    env = dict(os.environ, HOME=place.home, TMPDIR=place.tmp)
    paths = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths + [os.getcwd()])
    effects_file = os.path.join(place.base, "effects.jsonl")
    argv = [sys.executable, os.path.abspath(__file__), "--audit-run", effects_file, module] + args
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              cwd=place.tmp_path, env=env)
    except subprocess.TimeoutExpired:
        place.remove()
        return None
    effects = []
    try:
        with open(effects_file, encoding="utf-8") as f:
            effects = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        pass
    place.remove()
    return done.returncode, done.stdout, effects


def audited_entry(effects_file, module, args):
    """`python ttgen.py --audit-run FILE MODULE ARGS...`: runs the module as `python -m` would,
    writing each effect outside the current folder (the test's tmp_path) and TMPDIR to FILE as
    it happens, so an exit of any kind keeps them."""
    import runpy
    out = open(effects_file, "a", encoding="utf-8")

    def sink(effect):
        out.write(json.dumps(effect) + "\n")
        out.flush()
    audit = ttaudit.Audit([os.getcwd(), tempfile.gettempdir()], network_on=NETWORK_ON,
                          forbid_cwd=False, sink=sink).install()
    sys.argv = [module] + args
    sys.path[0] = os.getcwd()  # as `python -m` has it, not this helper's folder
    audit.on = True
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def e2e_tests(req, rng, deadline):
    """Runs each entry point with argument sets drawn from its argparse definition; a test asserts
    the exit code and, when it is stable and short, the output. An entry point that changes
    anything outside its tmp_path is a side_effect finding, never a test."""
    timeout = max(5.0, float(req.get("call_timeout_s", 2)) * 5)
    tests, findings = [], []
    for module, path in entry_points(os.getcwd()):
        flags, positionals = argparse_options(path) if path else ([], [])
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
        for argv in argvs:
            if time.monotonic() > deadline:
                break
            first, second = run_entry(module, argv, timeout), run_entry(module, argv, timeout)
            if first is None:
                continue
            code, out, effects = first
            if effects or (second and second[2]):
                effects = effects or second[2]
                if not any(f["function"] == module for f in findings):
                    findings.append({"module": module, "function": module, "kind": "side_effect",
                                     "call": f"python -m {module} {' '.join(argv)}".strip(),
                                     "expected": "no effect outside its tmp_path",
                                     "actual": "; ".join(e["effect"] for e in effects[:3]), "test": None})
                continue
            body = ["result = subprocess.run(",
                    f"    [sys.executable, '-m', {module!r}] + {argv!r},",
                    "    capture_output=True, text=True, timeout=60, cwd=tmp_path,",
                    "    env={**os.environ, 'PYTHONPATH': os.pathsep.join(p for p in sys.path if p)},",
                    ")",
                    f"assert result.returncode == {code}"]
            stable = second is not None and second[:2] == first[:2]
            if stable and len(out) <= 400 and not ADDRESS.search(out) \
                    and not any(p in out for p in _machine_paths_of_run()):
                body.append(f"assert result.stdout == {out!r}")
            digest = hashlib.sha1("\n".join(body).encode()).hexdigest()[:8]
            tests.append((f"test_{module.replace('.', '_')}_cli_{digest}", body))
    return tests, findings


def _machine_paths_of_run():
    """The folders of this machine an entry point's output must not be asserted with."""
    cwd = ORIGIN["cwd"]
    found = [cwd, cwd.split(os.sep + "workspace" + os.sep)[0], ORIGIN["home"], ORIGIN["tmp"]]
    return [p for p in found if p and len(p) > 4]


def render_e2e(tests, seed):
    out = [f'"""End-to-end tests of the project\'s entry points, generated by team-testing\'s built-in '
           f'generator (layer L3-e2e, seed {seed})."""', "import os", "import subprocess", "import sys",
           "import tempfile", "", "import pytest", "", "", isolation_fixture()]
    seen = set()
    for name, body in tests:
        if name in seen:
            continue
        seen.add(name)
        out += ["", "", f"def {name}(tmp_path):"] + ["    " + line for line in body]
    return "\n".join(out) + "\n", sorted(seen)


def test_file_name(module):
    return "test_" + module.replace(".", "_") + ".py"


def search_module(spec, req, rng, deadline):
    entry = {"module": spec["module"], "file": spec["file"], "test_file": test_file_name(spec["module"]),
             "source": "", "tests": [], "lines_total": 0, "lines_covered": 0,
             "import_error": None, "import_error_kind": None}
    try:
        module = importlib.import_module(spec["module"])
    except BaseException as exc:  # noqa: BLE001 - the module's own import can raise anything
        entry["import_error"] = f"{type(exc).__name__}: {exc}"
        own = spec["module"].split(".")[0]
        missing = isinstance(exc, ModuleNotFoundError) and not (exc.name or "").startswith(own)
        entry["import_error_kind"] = "env_issue" if missing else "code_defect"
        return entry, []
    try:
        with open(module.__file__, encoding="utf-8") as f:
            source = f.read()
    except (OSError, TypeError) as exc:
        entry["import_error"] = f"cannot read the source: {exc}"
        entry["import_error_kind"] = "env_issue"
        return entry, []
    search = ModuleSearch(spec, module, source, rng, req, deadline)
    search.doctests()
    search.constructors()
    if req.get("layer", "").startswith("L2"):
        search.l2()
        search.l1()  # whatever the sequences did not reach
    else:
        search.l1()
    entry["source"], entry["tests"] = search.render(req.get("layer", ""), req.get("seed"))
    if not entry["tests"]:
        entry["source"] = ""
    entry["lines_total"] = len(search.lines_total)
    entry["lines_covered"] = len(search.covered & search.lines_total)
    entry["calls_tried"] = search.tried
    return entry, search.findings


def main():
    req = json.load(sys.stdin)
    started = time.monotonic()
    end = started + float(req.get("budget_s", 60))
    rng = random.Random(req.get("seed", 1))
    if req.get("layer", "").startswith("L3"):
        points = len(entry_points(os.getcwd()))
        tests, findings = e2e_tests(req, rng, end)
        source, names = render_e2e(tests, req.get("seed"))
        entry = {"module": "entry_points", "file": "", "test_file": "test_entry_points.py",
                 "source": source if names else "", "tests": names, "lines_total": 0, "lines_covered": 0,
                 "import_error": None, "import_error_kind": None}
        print(json.dumps({"modules": [entry], "findings": findings,
                          "stats": {"calls_tried": len(tests), "tests": len(names),
                                    "entry_points": points,
                                    "seconds": round(time.monotonic() - started, 3)}}))
        return
    modules, findings, tried = [], [], 0
    specs = req.get("modules", [])
    for index, spec in enumerate(specs):
        share = (end - time.monotonic()) / max(1, len(specs) - index)
        entry, found = search_module(spec, req, rng, time.monotonic() + share)
        tried += entry.pop("calls_tried", 0)
        modules.append(entry)
        findings.extend(found)
    kept = sum(len(m["tests"]) for m in modules)
    print(json.dumps({"modules": modules, "findings": findings,
                      "stats": {"calls_tried": tried, "tests": kept,
                                "seconds": round(time.monotonic() - started, 3)}}))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--entry-points":
        # For a plan: the entry points L3 would run (files are read, nothing is imported).
        print(json.dumps([module for module, _ in entry_points(sys.argv[2])]))
        sys.exit(0)
    if len(sys.argv) > 3 and sys.argv[1] == "--audit-run":
        audited_entry(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.dont_write_bytecode = True
        main()
