"""The generator's execution stage: each call of the code under test, run in a forked child.

The child gets a place of its own (a current folder, HOME and TMPDIR, and the test's tmp_path),
its standard streams in a file there and its result on a pipe of its own, runs under a line and
arc tracer and the effect audit, and is killed with whatever it started when the call's time is
up. What comes back is a description (a value's repr, type and stable attributes, or where an
exception came from), never an object. Also here: what the sandbox stopped, the entry points of
layer L3 run as subprocesses under the audit, and the coverage a search's calls reached. Imports
only the analysis stage.
"""

import errno
import inspect
import json
import os
import pathlib
import pickle
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback

import tt_doctest
import ttaudit
from tt_analysis import satisfies_value

try:  # imported once here: each forked call would pay for it again (milliseconds a call)
    import ctypes
except ImportError:  # an interpreter built without it
    ctypes = None

PLAIN = (type(None), bool, int, float, str, bytes)
MAX_REPR = 200            # longer values are asserted by type and length, not spelled out


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
    root = next((r for r in {place.tmp_path, place.shown} if text == r or text.startswith(r + os.sep)), None)
    if root is None:
        return None
    rel = os.path.relpath(text, root)
    expr = "tmp_path" if rel == "." else f"tmp_path / {rel!r}"
    return expr if isinstance(value, pathlib.PurePath) else f"str({expr})"


def _describe_result(value, place):
    text = repr(value)
    machine = _machine_paths(place)
    kind = type(value)
    out = {"ok": True, "repr": text, "type": kind.__name__, "qualname": getattr(kind, "__qualname__", kind.__name__),
           "type_module": kind.__module__, "plain": _is_plain(value),
           "is_callable": callable(value) and (inspect.isfunction(value) or inspect.ismethod(value)
                                               or inspect.isbuiltin(value) or kind.__name__ == "partial"),
           "len": _length(value),
           "floaty": _floaty(value), "attrs": _stable_attrs(value, machine)}
    relative = _tmp_relative(value, place)
    if relative is not None:
        out["tmp_expr"] = relative
    elif any(p in text for p in machine):
        out["machine_bound"] = True  # names this machine's folders: never an expected value
    return out


def _length(value):
    if isinstance(value, PLAIN) or inspect.isclass(value):
        return None
    try:
        n = len(value)
    except Exception:  # noqa: BLE001
        return None
    return n if isinstance(n, int) else None


def describe_error(exc, target):
    frames = traceback.extract_tb(exc.__traceback__)
    inner = frames[-1] if frames else None
    in_module = bool(inner and inner.filename == target)
    explicit = bool(in_module and inner.line and inner.line.lstrip().startswith("raise"))
    # Absolute here, in the call's own folder: the parent runs elsewhere.
    names = [getattr(exc, a, None) for a in ("filename", "filename2")]
    names = [os.path.abspath(os.fsdecode(n)) for n in names if isinstance(n, (str, bytes, os.PathLike))]
    return {"ok": False, "exc": type(exc).__name__, "exc_module": type(exc).__module__,
            "exc_qualname": getattr(type(exc), "__qualname__", type(exc).__name__),
            "inner_file": os.path.abspath(inner.filename) if inner and not inner.filename.startswith("<") else "",
            "inner_line": inner.lineno if inner else None,
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


SHORT_TMP = "tt-tmp"  # a stability run's tmp_path, relative to its current folder


class CallPlace:
    """The folders of one call: a current folder, a HOME and a TMPDIR of its own, and `tmp_path`,
    the folder a test creates and passes in. Only tmp_path and TMPDIR may change: the current
    folder and HOME stand for the user's project and home after `apply`."""

    def __init__(self, short=False):
        self.base = os.path.realpath(tempfile.mkdtemp(prefix="ttgen-"))
        self.cwd, self.home, self.tmp, self.tmp_path = (
            os.path.join(self.base, name) for name in ("cwd", "home", "tmp", "tmp_path"))
        # What the call is handed as tmp_path. `short`: a relative path (SHORT_TMP, in the
        # current folder), so that a call whose outcome depends on its path's text (an index
        # into it, its length) shows it: this folder's absolute paths are long, the user's
        # pytest's are shorter.
        self.shown = self.tmp_path
        if short:
            self.tmp_path = os.path.join(self.cwd, SHORT_TMP)
            self.shown = SHORT_TMP
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

        def writable_again(func, path, _exc):
            try:
                os.chmod(os.path.dirname(path), 0o700)
                os.chmod(path, 0o700)
                func(path)
            except OSError:
                pass
        try:
            if os.path.realpath(os.getcwd()).startswith(self.base):
                os.chdir("/")  # the call's own process, leaving the place it is about to remove
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
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort where there is no prctl
        pass


def fork_with_retry(fork=None, tries=5, pause=0.05):
    """os.fork, retried a few times on EAGAIN (a process limit reached for a moment: the calls of a
    moment ago are still being reaped); None when it keeps failing."""
    fork = fork or os.fork
    for attempt in range(tries):
        try:
            return fork()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ENOMEM) or attempt == tries - 1:
                return None
            time.sleep(pause * (attempt + 1))
    return None


def settle_kind(value):
    """How a test settles a value: "list" for a generator, "await" for a coroutine, "alist" for
    an async generator; None for anything else."""
    if inspect.isgenerator(value):
        return "list"
    if inspect.iscoroutine(value):
        return "await"
    if inspect.isasyncgen(value):
        return "alist"
    return None


def _settle(value, hits_tracer):
    """A generator is iterated (up to 50 items), a coroutine awaited, an async generator drained:
    the lines they reach run now, under the tracer. Returns (value, how it was settled)."""
    if inspect.isgenerator(value):
        import itertools
        sys.settrace(hits_tracer)
        try:
            items = list(itertools.islice(value, 51))
        finally:
            sys.settrace(None)
        return (items, "list") if len(items) <= 50 else (items[:50], "partial")
    if inspect.iscoroutine(value) or inspect.isasyncgen(value):
        import asyncio

        async def drain(agen):
            return [x async for x in agen][:50]
        awaitable = value if inspect.iscoroutine(value) else drain(value)
        sys.settrace(hits_tracer)
        try:
            result = asyncio.run(awaitable)
        finally:
            sys.settrace(None)
        return result, ("await" if inspect.iscoroutine(value) else "alist")
    return value, None


def _check_types(checks, env):
    """Whether each argument (evaluated here, in the child) matches its annotation, and lies in
    the range the docstring gives its parameter when it gives one."""
    try:
        for check in checks:
            value = eval(check[0], env)
            if not satisfies_value(value, check[1]):
                return False
            bounds = check[3] if len(check) > 3 else None
            if bounds and isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and not bounds[0] <= value <= bounds[1]:
                return False
        return True
    except BaseException:  # noqa: BLE001
        return False


def run_call(namespace, statements, expr, target, timeout, checks=None, short=False):
    """Runs `statements` then evaluates `expr` in a forked child; returns what happened. `checks`
    are (argument expression, annotation) pairs the child checks (inputs are never evaluated in
    the helper's own process); `short`: handed a short, relative tmp_path (CallPlace)."""
    read_end, write_end = os.pipe()
    pid = fork_with_retry()
    if pid is None:
        os.close(read_end)
        os.close(write_end)
        return {"ok": False, "exc": "ForkFailed", "msg": "os.fork kept failing (EAGAIN)", "lines": [],
                "in_module": False, "explicit": False, "fork_failed": True}
    if pid == 0:  # the child: never returns
        os.setpgid(0, 0)  # its own process group, so whatever it forks ends with it
        _die_with_parent()
        os.close(read_end)
        payload = {"ok": False, "exc": "InternalError", "msg": "", "in_module": False, "explicit": False}
        hits, arcs = set(), set()
        audit = place = env = settling = None
        try:
            place = CallPlace(short)
            write_end = _quiet_descriptors(write_end, place.base)
            place.enter()
            env = dict(namespace)
            env["tmp_path"] = pathlib.Path(place.shown)
            audit = place.audit().install()
            audit.on = True
            tracer = _line_tracer(target, hits, arcs)
            sys.settrace(tracer)
            settled = None
            try:
                for stmt in statements:
                    try:
                        exec(stmt, env)
                    except BaseException:
                        # The setup failed, not the call under test: nothing to assert here.
                        payload["setup_failed"] = True
                        raise
                value = eval(expr, env)
                sys.settrace(None)
                settling = settle_kind(value)
                value, settled = _settle(value, tracer)
            finally:
                sys.settrace(None)
                audit.on = False
            if isinstance(value, tt_doctest.RawResult):
                payload = {"ok": True, "raw": value.data}
            else:
                try:
                    payload = _describe_result(value, place)
                except BaseException as exc:  # noqa: BLE001
                    # The call returned; only looking at its value (repr, len, attributes)
                    # failed. That is not the call's outcome, and nothing about it is kept.
                    payload = {"ok": False, "exc": "Undescribable", "in_module": False, "explicit": False,
                               "msg": f"{type(exc).__name__} while describing the result"}
            if settled:
                payload["settled"] = settled
            if "calls" in env and isinstance(env["calls"], list):
                payload["recorded"] = len(env["calls"])
        except BaseException as exc:  # noqa: BLE001 - the child reports everything
            sys.settrace(None)
            if audit is not None:
                audit.on = False
            setup_failed = payload.get("setup_failed", False)
            try:
                payload = describe_error(exc, target)
            except BaseException:  # noqa: BLE001
                pass
            payload["setup_failed"] = setup_failed
            if settling:
                payload["settled"] = settling  # it raised while iterated or awaited
        if checks and env is not None:
            if audit is not None:
                audit.on = True  # the arguments are built again: still watched
            payload["typed_ok"] = _check_types(checks, env)
            if audit is not None:
                audit.on = False
        _report(payload, hits, arcs, audit, place, write_end)
    os.close(write_end)
    return _wait_for(pid, read_end, timeout)


def _report(payload, hits, arcs, audit, place, write_end):
    """The child's last steps: what the call reached and changed joins its outcome, its place is
    removed, and the outcome goes to the parent on the result channel. Never returns."""
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


def _wait_for(pid, read_end, timeout):
    """The parent's side of a call: its outcome as soon as it is complete on the pipe, a timeout
    when the call's time is up, a crash when the child died mid-write; the child and whatever it
    started are killed either way."""
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


def _approx_ok(value):
    """What pytest.approx accepts: a number, or a flat list, tuple or dict of numbers."""
    number = (int, float)
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)):
        return all(isinstance(v, number) and not isinstance(v, bool) for v in value)
    if isinstance(value, dict):
        return all(isinstance(v, number) and not isinstance(v, bool) for v in value.values())
    return False


def _floaty(value):
    """A float inside that pytest.approx can compare (anything else is compared exactly)."""
    return _has_float(value) and _approx_ok(value)


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
            out.append([name, text, _floaty(v)])
    return out[:3]


# ---- a search's calls and what they reached ------------------------------------------------------

class Execution:
    """The calls of a module's search and the lines and arcs they reached (a part of
    tt_search.ModuleSearch: needs its `namespace`, `target`, `req`, `memo`, `lines_total`,
    `covered` and `arcs`)."""

    def run(self, statements, expr, checks=None):
        """A call's outcome: kept from an earlier round of the session the first time it is asked
        for (tt_memo), else run in a forked child."""
        key = self.memo.key(statements, expr, checks)
        outcome = self.memo.take(key)
        if outcome is None:
            outcome = run_call(self.namespace, statements, expr, self.target, self.req["call_timeout_s"], checks)
            self.memo.note(key, outcome)
        return outcome

    def run_again(self, statements, expr):
        """The stability check of a call about to become a test: run for real, handed a tmp_path
        of another length (an outcome that depends on its path's text is not the same twice)."""
        return run_call(self.namespace, statements, expr, self.target, self.req["call_timeout_s"],
                        short=True)

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


# ---- L3: the project's entry points, run as subprocesses -----------------------------------------

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
    helper = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ttgen.py")  # the entry point
    argv = [sys.executable, helper, "--audit-run", effects_file, module] + args
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
