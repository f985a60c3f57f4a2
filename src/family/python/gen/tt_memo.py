"""The outcomes of a module's calls kept between the searches of one session (its first round, its
GC rounds, a deeper round), so that a revision round never runs again a call whose result it
already has: the first run of a call in a search takes the kept outcome; a second run of the same
call (the check that an observed value is stable) still runs for real.

One file per module under the request's `memo_dir`, named by a digest of the project's Python
files, the interpreter and the call timeout: a change to any of them starts an empty memo. The
file holds pickled plain data only, read back by an unpickler that refuses every class, so
nothing written there can run code; an entry that does not read back is simply run again."""

import hashlib
import io
import os
import pickle
import sys

MAX_ENTRIES = 20000
SKIPPED_DIRS = {"__pycache__", "node_modules", "venv", ".venv", "site-packages"}

_digest = None


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"{module}.{name} is not plain data")


def _plain_load(data):
    return _PlainUnpickler(io.BytesIO(data)).load()


def project_digest(call_timeout_s):
    """sha256 of the Python files under the working directory (the project's mirror), the
    interpreter's version and the call timeout; computed once per process."""
    global _digest
    if _digest is None:
        h = hashlib.sha256(f"{sys.version}\0{call_timeout_s}\0".encode())
        root = os.getcwd()
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                try:
                    with open(path, "rb") as f:
                        content = f.read()
                except OSError:
                    continue
                h.update(os.path.relpath(path, root).encode() + b"\0")
                h.update(hashlib.sha256(content).digest())
        _digest = h.hexdigest()[:24]
    return _digest


class CallMemo:
    """A module's kept outcomes (`known`), the ones this search adds (`new`), and the keys it has
    taken once already (`served`)."""

    def __init__(self, path):
        self.path, self.known, self.new, self.served = path, {}, {}, set()
        self.reused = 0
        if not path:
            return
        try:
            with open(path, "rb") as f:
                known = _PlainUnpickler(f).load()
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError):
            return
        if isinstance(known, dict):
            self.known = {k: v for k, v in known.items() if isinstance(k, str) and isinstance(v, bytes)}

    @classmethod
    def of(cls, req, module):
        folder = req.get("memo_dir")
        if not folder:
            return cls(None)
        name = f"{module}.{project_digest(req.get('call_timeout_s'))}.pickle"
        return cls(os.path.join(folder, name))

    @staticmethod
    def key(statements, expr, checks):
        text = repr((list(statements), expr, [tuple(c) for c in checks or ()]))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def take(self, key):
        """The kept outcome of the call `key`, the first time this search asks for it."""
        data = self.known.get(key)
        if data is None or key in self.served:
            return None
        self.served.add(key)
        try:
            outcome = _plain_load(data)
        except Exception:  # noqa: BLE001 - anything unreadable runs again
            return None
        if not isinstance(outcome, dict):
            return None
        self.reused += 1
        return outcome

    def note(self, key, outcome):
        """The first outcome of a call this search ran, to keep."""
        if not self.path or key in self.known or key in self.new or outcome.get("fork_failed"):
            return
        if len(self.known) + len(self.new) >= MAX_ENTRIES:
            return
        try:
            data = pickle.dumps(outcome)
            _plain_load(data)  # only what reads back as plain data is kept
        except Exception:  # noqa: BLE001
            return
        self.new[key] = data

    def save(self):
        """The known and the new outcomes, in one atomic write; a memo that cannot be written
        costs the next round its time, never its result."""
        if not self.path or not self.new:
            return
        merged = dict(self.known)
        merged.update(self.new)
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(tmp, "wb") as f:
                pickle.dump(merged, f)
            os.replace(tmp, self.path)
        except OSError:
            try:
                os.remove(tmp)
            except OSError:
                pass
