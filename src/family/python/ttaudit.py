"""team-testing's effect audit: what a piece of code changes outside the temporary folders it was
given. Shared by the generator (tt_execution.py, one audit per forked call) and the pytest
plugin the executor and the accept filter run tests with (tt_effects.py, one audit per test).

Effects, not outcomes, decide: an attempt to delete, write, chmod, rename or link a path outside
the allowed folders counts whether it succeeded, failed or was caught, and so does starting a
process, signalling one, or connecting to the network while the network is off. The hook sees the
attempt before the operating system does (PEP 578 audit events), so a sandbox denial is no excuse.
"""

import os
import sys

# Audit events that change a path: (what it does, positions of the changed paths, position of
# the dir_fd the paths are relative to, or None). os.symlink's first argument is only the link's
# text, shutil.copyfile's first only read.
PATH_EVENTS = {
    "os.remove": ("deletes", (0,), 1),
    "os.rmdir": ("deletes", (0,), 1),
    "shutil.rmtree": ("deletes", (0,), 1),
    "os.rename": ("renames", (0, 1), 2),
    "shutil.move": ("moves", (0, 1), None),
    "os.chmod": ("changes the mode of", (0,), 2),
    "os.chown": ("changes the owner of", (0,), 3),
    "shutil.chown": ("changes the owner of", (0,), None),
    "os.chflags": ("changes the flags of", (0,), None),
    "os.lchflags": ("changes the flags of", (0,), None),
    "os.setxattr": ("changes the attributes of", (0,), None),
    "os.removexattr": ("changes the attributes of", (0,), None),
    "os.mkdir": ("creates", (0,), 2),
    "os.symlink": ("creates", (1,), 2),
    "os.link": ("creates", (1,), 3),
    "os.truncate": ("truncates", (0,), None),
    "os.utime": ("changes the times of", (0,), 3),
    "shutil.copyfile": ("writes", (1,), None),
    "shutil.copytree": ("writes", (1,), None),
    "shutil.make_archive": ("writes", (0,), None),
    "shutil.unpack_archive": ("writes", (1,), None),
    "tempfile.mkstemp": ("creates", (0,), None),
    "tempfile.mkdtemp": ("creates", (0,), None),
    # Raised by the wrappers `install` puts around the os functions that raise no event.
    "os.mkfifo": ("creates the fifo", (0,), 1),
    "os.mknod": ("creates the node", (0,), 1),
}
# os functions that change a path but raise no audit event of their own: wrapped so they do.
UNANNOUNCED = ("mkfifo", "mknod")
# C library calls that change files, start processes or signal them. Native code escapes the
# audit; looking one of these up through ctypes is the attempt that shows.
NATIVE_EFFECTS = {
    "unlink", "unlinkat", "remove", "rmdir", "rename", "renameat", "renameat2", "open",
    "open64", "openat", "openat64", "creat", "creat64", "fopen", "fopen64", "freopen", "chmod",
    "fchmod", "fchmodat", "lchmod", "chown", "fchown", "lchown", "fchownat", "mkdir", "mkdirat",
    "mknod", "mknodat", "mkfifo", "mkfifoat", "link", "linkat", "symlink", "symlinkat",
    "truncate", "truncate64", "ftruncate", "utime", "utimes", "utimensat", "futimens",
    "setxattr", "lsetxattr", "removexattr", "system", "popen", "execv", "execve", "execvp",
    "execl", "execlp", "fork", "vfork", "posix_spawn", "posix_spawnp", "kill", "killpg",
}
SPAWN_EVENTS = {"os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
                "subprocess.Popen", "pty.spawn"}
SIGNAL_EVENTS = {"os.kill", "os.killpg"}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
DEVICES = {"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/stdout", "/dev/stderr"}
MAX_EFFECTS = 8


def _real(path):
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def _depth_under(real, root):
    """How deep a match `root` is for `real` (its length), or -1 when `real` is not under it."""
    if real == root or real.startswith(root.rstrip("/") + "/"):
        return len(root)
    return -1


def inside(path, roots):
    """Whether `path` (absolute) lies under one of `roots` (real paths)."""
    if path in DEVICES:
        return True
    real = _real(path)
    return any(_depth_under(real, r) >= 0 for r in roots)


def _fd_path(fd):
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except (OSError, TypeError, ValueError):
        return None


def _absolute(arg, dir_fd=None):
    """The absolute path an event argument names, or None (an fd with no name, not a path)."""
    if isinstance(arg, int) and not isinstance(arg, bool):
        return _fd_path(arg)
    if not isinstance(arg, (str, bytes, os.PathLike)):
        return None
    try:
        path = os.fsdecode(os.fspath(arg))
    except (TypeError, ValueError):
        return None
    if not os.path.isabs(path) and isinstance(dir_fd, int) and not isinstance(dir_fd, bool):
        base = _fd_path(dir_fd)
        if base:
            return os.path.normpath(os.path.join(base, path))
    # The call's current folder, absolute now: the caller may look at it from elsewhere.
    return os.path.abspath(path or ".")


class Audit:
    """Collects the effects of the code that runs while `on` is true. `allowed` are the folders it
    may change; the current folder and HOME (as they are at the moment of the effect) never are,
    even inside an allowed folder: after `apply` they are the user's project and home. The deepest
    folder that holds a path decides. `network_on` lets connections through (the user allowed
    them)."""

    def __init__(self, allowed, network_on=False, forbid_cwd=True, sink=None):
        self.allowed = [_real(p) for p in allowed]
        self.network_on = network_on
        self.forbid_cwd = forbid_cwd    # False where the caller itself passes the cwd (tmp_path)
        self.sink = sink                # called with each new effect as it happens
        self.on = False
        self.effects = []    # {"effect": in words, "path", "event"}
        self._installed = False
        self._cwd = _real(os.getcwd())

    def _places(self):
        """The current folder and HOME as they are now (the code may have removed the folder)."""
        try:
            self._cwd = _real(os.getcwd())
        except OSError:
            pass
        home = _real(os.environ.get("HOME") or os.path.expanduser("~"))
        places = [(home, "the home folder")]
        return [(self._cwd, "the current folder")] + places if self.forbid_cwd else places

    def permitted(self, path, device_ok=False):
        """Whether the code may change `path` (absolute). Writing to /dev/null and the like is
        harmless (`device_ok`); changing their mode or owner is not."""
        if device_ok and path in DEVICES:
            return True
        real = _real(path)
        best_allowed = max((_depth_under(real, r) for r in self.allowed), default=-1)
        best_forbidden = max((_depth_under(real, f) for f, _ in self._places()), default=-1)
        return best_allowed >= 0 and best_allowed > best_forbidden

    def install(self):
        if not self._installed:
            sys.addaudithook(self._hook)
            _announce_unannounced()
            self._installed = True
        return self

    def _note(self, verb, detail, event):
        effect = {"effect": describe(verb, detail, self._places()), "path": detail, "event": event}
        if len(self.effects) < MAX_EFFECTS and effect not in self.effects:
            self.effects.append(effect)
            if self.sink is not None:
                self.sink(effect)

    def _hook(self, event, args):
        if not self.on:
            return
        self.on = False  # what the hook itself does is not the code's
        try:
            self._judge(event, args)
        except Exception:  # noqa: BLE001 - a hook must never break the code it watches
            pass
        finally:
            self.on = True

    def _judge(self, event, args):
        if event == "open":
            if len(args) < 3 or args[0] is None:
                return
            mode, flags = args[1] or "", args[2] or 0
            if isinstance(mode, str) and mode:
                # open()'s mode says it; PyPy passes 1 as its flags whatever the mode.
                writes = any(c in mode for c in "wax+")
            else:
                writes = isinstance(flags, int) and bool(flags & WRITE_FLAGS)
            if not writes:
                return
            if isinstance(args[0], int) and not isinstance(args[0], bool):
                # A descriptor number: whatever it is in the process that runs the test (stdin,
                # a report file), it is not a file of the code's own.
                name = _fd_path(args[0]) or ""
                if not name.startswith("/") or not self.permitted(name, device_ok=True):
                    self._note("writes to", f"file descriptor {args[0]} ({name or 'closed'})", event)
                return
            path = _absolute(args[0])
            if path and not self.permitted(path, device_ok=True):
                self._note("writes", path, event)
        elif event in PATH_EVENTS:
            verb, positions, fd_at = PATH_EVENTS[event]
            dir_fd = args[fd_at] if fd_at is not None and fd_at < len(args) else None
            for i in positions:
                arg = args[i] if i < len(args) else None
                path = _absolute(arg, dir_fd)
                if isinstance(arg, int) and not isinstance(arg, bool) and not path:
                    path = f"file descriptor {arg}"
                if path and (not path.startswith("/") or not self.permitted(path)):
                    self._note(verb, path, event)
        elif event == "sqlite3.connect" and args:
            path = _database_path(args[0])
            if path and not self.permitted(path):
                self._note("opens the database", path, event)
        elif event == "socket.bind" and len(args) >= 2:
            address = args[1]
            family = getattr(args[0], "family", None)
            if family == getattr(__import__("socket"), "AF_UNIX", None) and isinstance(address, (str, bytes)):
                path = os.fsdecode(address)
                if path and not path.startswith("\0") and not self.permitted(os.path.abspath(path)):
                    self._note("creates the socket", os.path.abspath(path), event)
        elif event == "ctypes.dlsym" and len(args) >= 2:
            name = args[1]
            if isinstance(name, bytes):
                name = name.decode("ascii", "replace")
            if isinstance(name, str) and name in NATIVE_EFFECTS:
                self._note("calls the C library's", f"{name}() through ctypes (native code the audit cannot follow)", event)
        elif event in SPAWN_EVENTS:
            self._note("starts the process", repr(_command(event, args)), event)
        elif event in SIGNAL_EVENTS:
            if args and args[0] != os.getpid():
                self._note("sends a signal to", f"process {args[0]}", event)
        elif event in ("socket.connect", "socket.sendto") and len(args) >= 2:
            address = args[1]
            if isinstance(address, (str, bytes)):
                # A unix socket: a host service (Docker, X11, an agent) unless it is ours.
                path = os.fsdecode(address)
                if path and not path.startswith("\0") and not self.permitted(os.path.abspath(path)):
                    self._note("connects to", path, event)
            elif not self.network_on:
                self._note("connects to", repr(address)[:80], event)


def _database_path(database):
    """The file an sqlite3.connect opens (None for an in-memory database)."""
    try:
        name = os.fsdecode(os.fspath(database))
    except (TypeError, ValueError):
        return None
    if name in ("", ":memory:") or "mode=memory" in name:
        return None
    if name.startswith("file:"):
        name = name[len("file:"):].split("?", 1)[0]
        if name.startswith("//"):
            name = name[2:]
    return os.path.abspath(name)


def _announce_unannounced():
    """Wraps the os functions in UNANNOUNCED so that they raise an audit event first."""
    for name in UNANNOUNCED:
        original = getattr(os, name, None)
        if original is None or getattr(original, "_tt_announced", False):
            continue

        def announced(path, *args, _original=original, _event="os." + name, **kwargs):
            sys.audit(_event, path, kwargs.get("dir_fd"))
            return _original(path, *args, **kwargs)

        announced._tt_announced = True
        announced.__name__ = name
        setattr(os, name, announced)


def _command(event, args):
    """A short name for what a spawn event starts."""
    try:
        if event == "os.system" and args:
            return os.fsdecode(args[0])[:80]
        if event == "subprocess.Popen" and len(args) >= 2:
            argv = args[1]
            if isinstance(argv, (list, tuple)):
                return " ".join(os.fsdecode(a) if isinstance(a, (str, bytes)) else str(a) for a in argv)[:80]
            return str(argv)[:80]
        if event in ("os.exec", "os.posix_spawn", "os.spawn") and args:
            return str(args[0] if event != "os.spawn" else args[1])[:80]
    except Exception:  # noqa: BLE001
        pass
    return event


def describe(verb, detail, places):
    """One effect in words, with a path named relative to the place it lies in: `places` pairs a
    folder (a real path) with how to call it ("the current folder", "the home folder")."""
    if not detail.startswith("/"):
        return f"{verb} {detail}"
    real = _real(detail)
    for folder, name in places:
        if real == folder or real.startswith(folder.rstrip("/") + "/"):
            rel = os.path.relpath(real, folder)
            return f"{verb} {rel!r} in {name}" if rel != "." else f"{verb} {name}"
    return f"{verb} {detail}"
