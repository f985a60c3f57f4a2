"""The outcomes a revision round takes from the session's earlier rounds (tt_memo.py): a call
already run is not run again, the stability check still runs for real, a change to the project
starts an empty memo, and the memo file never runs code. Plain unittest, run by every
interpreter found, like the guard tests."""
import os
import pickle
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tt_memo  # noqa: E402
from tt_memo import CallMemo  # noqa: E402


class Touched(Exception):
    pass


class Trap:
    """Unpickling this would call `_trap`: a memo file must never do that."""

    def __reduce__(self):
        return (_trap, ())


def _trap():
    raise Touched("the memo ran code")


class CallMemoTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.project = os.path.join(self.tmp.name, "project")
        os.makedirs(self.project)
        with open(os.path.join(self.project, "calc.py"), "w") as f:
            f.write("def add(a, b):\n    return a + b\n")
        self.memo_dir = os.path.join(self.tmp.name, "memo")
        self.cwd = os.getcwd()
        os.chdir(self.project)
        tt_memo._digest = None

    def tearDown(self):
        os.chdir(self.cwd)
        tt_memo._digest = None
        self.tmp.cleanup()

    def memo(self):
        return CallMemo.of({"memo_dir": self.memo_dir, "call_timeout_s": 2}, "calc")

    def test_a_later_round_takes_the_first_outcome_once_and_runs_the_second(self):
        first = self.memo()
        key = first.key(["x = 1"], "calc.add(x, 2)", [("x", "int")])
        self.assertIsNone(first.take(key))
        first.note(key, {"ok": True, "value": "3", "lines": [2], "arcs": [(1, 2)]})
        first.save()

        later = self.memo()
        self.assertEqual(later.take(key), {"ok": True, "value": "3", "lines": [2], "arcs": [(1, 2)]})
        self.assertEqual(later.reused, 1)
        # The same call asked for again (the stability check) runs for real.
        self.assertIsNone(later.take(key))
        self.assertIsNone(later.take(later.key([], "calc.add(1, 2)", None)))

    def test_a_changed_project_starts_an_empty_memo(self):
        first = self.memo()
        key = first.key([], "calc.add(1, 2)", None)
        first.note(key, {"ok": True, "value": "3"})
        first.save()
        with open(os.path.join(self.project, "calc.py"), "a") as f:
            f.write("\ndef sub(a, b):\n    return a - b\n")
        tt_memo._digest = None
        self.assertIsNone(self.memo().take(key))

    def test_the_memo_file_never_runs_code(self):
        first = self.memo()
        key = first.key([], "calc.add(1, 2)", None)
        # An outcome that is not plain data is not kept.
        first.note(key, {"ok": True, "value": Trap()})
        self.assertEqual(first.new, {})
        first.note(key, {"ok": True, "value": "3"})
        first.save()
        # A memo file someone replaced with a trap is read as nothing.
        path = first.path
        with open(path, "wb") as f:
            pickle.dump({key: pickle.dumps(Trap())}, f)
        self.assertIsNone(self.memo().take(key))
        with open(path, "wb") as f:
            pickle.dump(Trap(), f)
        self.assertEqual(self.memo().known, {})

    def test_without_a_memo_dir_nothing_is_kept(self):
        memo = CallMemo.of({}, "calc")
        key = memo.key([], "calc.add(1, 2)", None)
        memo.note(key, {"ok": True})
        memo.save()
        self.assertIsNone(memo.take(key))
        self.assertFalse(os.path.exists(self.memo_dir))


if __name__ == "__main__":
    unittest.main()
