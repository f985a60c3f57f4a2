"""The generator helper's version guards and robustness, one test each (issue 18).

Plain unittest, so every interpreter can run it without installing anything:

    python3 -m unittest discover -s src/family/python/gen/tests -v
    pypy3 -m unittest discover -s src/family/python/gen/tests -v

The Rust test `gen::tests::the_helper_guards_hold_on_every_interpreter_found` runs it with each
interpreter it finds (CPython 3.8-3.13, pypy3).
"""
import errno
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import typing
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
# The audit and isolation modules the helper imports ship with the Python runner.
_FAMILY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, _FAMILY)

import tt_analysis  # noqa: E402
import tt_execution  # noqa: E402
import tt_inputs  # noqa: E402


def sample(x):
    y = x + 1
    return y * 2


class CodeLines(unittest.TestCase):
    def test_lines_of_a_function_on_this_interpreter(self):
        first = sample.__code__.co_firstlineno
        lines = tt_analysis._code_lines(sample.__code__)
        self.assertTrue({first + 1, first + 2} <= lines, lines)

    def test_the_fallback_before_3_10_reads_line_starts(self):
        if hasattr(sample.__code__, "co_lines"):
            self.skipTest("co_lines exists here (3.10+); the fallback runs on older interpreters")
        first = sample.__code__.co_firstlineno
        self.assertTrue({first + 1, first + 2} <= tt_analysis._code_lines(sample.__code__))

    def test_executable_lines_of_a_module(self):
        source = "def f(a):\n    if a:\n        return 1\n    return 2\n"
        self.assertTrue({2, 3, 4} <= tt_analysis.executable_lines(source, "<m>"))


class AnyAndProtocols(unittest.TestCase):
    def test_isinstance_against_any_never_raises(self):
        self.assertTrue(tt_analysis.safe_isinstance(1, typing.Any))
        self.assertFalse(tt_analysis.satisfies_value(1, typing.Any))

    def test_any_gets_no_input_from_its_hint(self):
        inputs = tt_inputs.Inputs(__import__("random").Random(1), ([], [], []), {})
        self.assertIsNone(inputs.for_hint(typing.Any))

    def test_a_protocol_that_is_not_runtime_checkable(self):
        Protocol = getattr(typing, "Protocol", None)
        if Protocol is None:
            self.skipTest("typing.Protocol is 3.8+")

        class Named(Protocol):
            name: str
        # isinstance(1, Named) raises TypeError on most interpreters: the guard answers False.
        self.assertFalse(tt_analysis.satisfies_value(1, Named))
        self.assertFalse(tt_analysis.safe_isinstance(1, Named))

    def test_a_typeddict(self):
        TypedDict = getattr(typing, "TypedDict", None)
        if TypedDict is None:
            self.skipTest("typing.TypedDict is 3.8+")
        Point = TypedDict("Point", {"x": int})
        self.assertFalse(tt_analysis.satisfies_value({"x": 1}, Point))

    def test_a_subscripted_generic(self):
        self.assertTrue(tt_analysis.satisfies_value([1], typing.List[int]))


class Unions(unittest.TestCase):
    def test_optional_is_a_union(self):
        self.assertTrue(tt_analysis.is_union(typing.Optional[int]))
        self.assertTrue(tt_analysis.satisfies_value(None, typing.Optional[int]))

    def test_the_bar_union_of_3_10(self):
        if sys.version_info < (3, 10):
            self.skipTest("X | Y is 3.10+")
        hint = eval("int | None")
        self.assertTrue(tt_analysis.is_union(hint))
        self.assertTrue(tt_analysis.satisfies_value(None, hint))
        self.assertTrue(tt_analysis.satisfies_value(3, hint))
        self.assertFalse(tt_analysis.satisfies_value("x", hint))
        inputs = tt_inputs.Inputs(__import__("random").Random(1), ([], [], []), {})
        drawn = {inputs.for_hint(hint) for _ in range(30)}
        self.assertIn("None", drawn)

    def test_a_plain_class_is_not_a_union(self):
        self.assertFalse(tt_analysis.is_union(int))


class Fork(unittest.TestCase):
    def test_eagain_is_retried(self):
        tries = []

        def fork():
            tries.append(1)
            if len(tries) < 3:
                raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
            return 4242
        self.assertEqual(tt_execution.fork_with_retry(fork, pause=0), 4242)
        self.assertEqual(len(tries), 3)

    def test_eagain_that_persists_gives_no_child(self):
        def fork():
            raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
        self.assertIsNone(tt_execution.fork_with_retry(fork, pause=0))

    def test_a_call_whose_fork_fails_is_an_outcome_not_a_crash(self):
        real = os.fork

        def failing():
            raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
        os.fork = failing
        try:
            outcome = tt_execution.run_call({}, [], "1 + 1", "<none>", 2)
        finally:
            os.fork = real
        self.assertTrue(outcome.get("fork_failed"), outcome)


class Describing(unittest.TestCase):
    def test_what_describing_a_result_raises_is_not_the_calls_outcome(self):
        # The call returns; only its repr fails (cachetools' TTLCache reads its timer in repr).
        class Stamp:
            def __init__(self, start):
                self.start = start

            def __repr__(self):
                return "Stamp(%d)" % (self.start + 1)

        made = tt_execution.run_call({"Stamp": Stamp}, [], "Stamp(None)", __file__, 5)
        self.assertFalse(made["ok"])
        self.assertEqual(made["exc"], "Undescribable")
        self.assertFalse(made["in_module"])
        shown = tt_execution.run_call({"Stamp": Stamp}, [], "Stamp(3)", __file__, 5)
        self.assertTrue(shown["ok"])
        self.assertEqual(shown["repr"], "Stamp(4)")


class StabilityRun(unittest.TestCase):
    def test_a_result_that_depends_on_the_paths_text_differs_in_the_stability_run(self):
        # An index into str(tmp_path) means another thing under the user's pytest: the stability
        # run's short tmp_path shows it, so no test asserts it.
        call = "len(str(tmp_path / 'missing.txt'))"
        first = tt_execution.run_call({}, [], call, __file__, 5)
        again = tt_execution.run_call({}, [], call, __file__, 5, short=True)
        self.assertTrue(first["ok"] and again["ok"], (first, again))
        self.assertEqual(again["repr"], str(len(tt_execution.SHORT_TMP + "/missing.txt")))
        self.assertGreater(int(first["repr"]), int(again["repr"]))
        # What names its path by the expression stays the same, and writing there is no effect.
        named = "str(tmp_path / 'missing.txt')"
        self.assertEqual(tt_execution.run_call({}, [], named, __file__, 5).get("tmp_expr"),
                         tt_execution.run_call({}, [], named, __file__, 5, short=True).get("tmp_expr"))
        wrote = tt_execution.run_call({}, [], "(tmp_path / 'a.txt').write_text('x')", __file__, 5, short=True)
        self.assertTrue(wrote["ok"], wrote)
        self.assertEqual(wrote["effects"], [], wrote)


class AuditOfOpen(unittest.TestCase):
    def test_a_read_is_no_write_whatever_flags_the_interpreter_passes(self):
        import ttaudit
        audit = ttaudit.Audit([tempfile.gettempdir()])
        # PyPy's open event carries 1 as its flags for every mode; CPython's the real flags.
        for args in (("/etc/hostname", "r", 1), ("/etc/hostname", "rb", os.O_RDONLY)):
            audit._judge("open", args)
        self.assertEqual(audit.effects, [])
        audit._judge("open", ("/etc/hostname", "w", 1))
        audit._judge("open", ("/etc/hosts", None, os.O_WRONLY | os.O_CREAT))
        self.assertEqual(len(audit.effects), 2, audit.effects)


class Doctests(unittest.TestCase):
    def test_a_malformed_docstring_is_skipped(self):
        with tempfile.TemporaryDirectory() as root:
            with open(os.path.join(root, "mal.py"), "w") as f:
                f.write(textwrap.dedent('''
                    def f(x):
                        """Doubles.

                          >>> f(2)
                        4
                        """
                        return x * 2
                '''))
            result = run_helper(root, ["mal"])
        self.assertEqual(result["modules"][0]["import_error"], None)
        self.assertFalse([f for f in result["findings"] if f["kind"] == "generator_error"], result["findings"])


def pytest_problem():
    """Why pytest does not run in this interpreter ("" when it does): a test that needs it skips
    with that note (Debian's pytest 7.2 seen by PyPy 3.9 lacks `exceptiongroup`)."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--version"], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return "" if done.returncode == 0 else (lines[-1] if lines else f"exit {done.returncode}")


def run_helper(root, modules, budget=4, path=()):
    request = {"modules": [{"module": m, "file": m + ".py"} for m in modules], "layer": "L1-unit", "seed": 1,
               "budget_s": budget, "call_timeout_s": 2, "target_percent": 80}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(list(path) + [root, _FAMILY]), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "ttgen.py")],
                          input=json.dumps(request), capture_output=True, text=True, cwd=root, env=env,
                          timeout=120)
    return json.loads(done.stdout)


class Channel(unittest.TestCase):
    def test_what_the_code_prints_never_reaches_the_result(self):
        with tempfile.TemporaryDirectory() as root:
            with open(os.path.join(root, "loud.py"), "w") as f:
                f.write("print('{not json')\n\n\ndef f(x):\n    print('called', x)\n    return x\n")
            with open(os.path.join(root, "bad.py"), "w") as f:
                f.write("raise RuntimeError('no import')\n")
            result = run_helper(root, ["loud", "bad"])
        loud, bad = result["modules"]
        self.assertTrue(loud["tests"], result)
        self.assertIn("RuntimeError", bad["import_error"])

    def test_a_module_that_breaks_the_generator_is_a_finding_and_the_others_go_on(self):
        with tempfile.TemporaryDirectory() as root:
            with open(os.path.join(root, "odd.py"), "w") as f:
                # a module attribute whose name lookup raises: discovery itself fails
                f.write("import sys\n\n\nclass M(type(sys)):\n    def __dir__(self):\n"
                        "        raise RuntimeError('no listing')\n\n\ndef g():\n    return 1\n\n\n"
                        "sys.modules[__name__].__class__ = M\n")
            with open(os.path.join(root, "fine.py"), "w") as f:
                f.write("def h(x):\n    return x + 1\n")
            result = run_helper(root, ["odd", "fine"])
        self.assertTrue(result["modules"][1]["tests"], result)


class BrokenPytest(unittest.TestCase):
    def test_an_interpreter_whose_pytest_does_not_run_is_an_env_issue_that_names_it(self):
        # Debian's pytest 7.2 seen by PyPy 3.9: installed, but its import fails.
        with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as site:
            os.mkdir(os.path.join(site, "pytest"))
            with open(os.path.join(site, "pytest", "__init__.py"), "w") as f:
                f.write("raise ModuleNotFoundError(\"No module named 'exceptiongroup'\")\n")
            with open(os.path.join(root, "calc.py"), "w") as f:
                f.write("def add(a: int, b: int) -> int:\n    return a + b\n")
            result = run_helper(root, ["calc"], path=[site])
        self.assertTrue(result["modules"][0]["tests"], result)
        kinds = [f["kind"] for f in result["findings"]]
        self.assertNotIn("generator_error", kinds, result["findings"])
        issue = [f for f in result["findings"] if f["kind"] == "env_issue"]
        self.assertEqual(len(issue), 1, result["findings"])
        self.assertIn(sys.executable, issue[0]["actual"])
        self.assertIn("No module named 'exceptiongroup'", issue[0]["actual"])


if __name__ == "__main__":
    unittest.main()
