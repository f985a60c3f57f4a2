"""Docstring examples keep doctest's meaning (tt_doctest.py, issue 32's false defects on humanize).

Plain unittest, run by every interpreter found (see test_guards.py).
"""
import doctest
import enum
import functools
import os
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
# The audit and isolation modules the helper imports ship with the Python runner.
_FAMILY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, _FAMILY)
sys.path.insert(0, HERE)

import tt_doctest  # noqa: E402
from test_guards import pytest_problem, run_helper  # noqa: E402

MODULE = textwrap.dedent('''
    """Examples as real libraries write them."""
    import enum
    import functools


    def clamp(value):
        """None stays None.

        >>> clamp(None) is None
        True
        >>> clamp([1, 2]) == "[1, 2]"
        True
        """
        return None if value is None else str(value)


    def spell(n):
        """Uses a name an earlier example defined.

        >>> n = 3
        >>> spell(n)
        'three'
        >>> print(spell(n))
        three
        """
        return {3: "three"}.get(n, "many")


    def double(n):
        """Broken on purpose.

        >>> double(2)
        4
        """
        return n * 2 + 1


    class Unit(enum.Enum):
        SECONDS = 0
        DAYS = 1


    class Base:
        def size(self):
            """The size.

            >>> Base().size()
            1
            """
            return 1


    class Child(Base):
        def size(self):
            return 2


    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            return fn(*args)
        return wrapper


    @logged
    def cached(n):
        """A decorated function keeps its own docstring.

        >>> cached(2)
        2
        """
        return n
''')


class OwnDocstrings(unittest.TestCase):
    def test_only_docstrings_written_in_the_source_count(self):
        docs = tt_doctest.own_docstrings(MODULE)
        self.assertIn("clamp", docs)
        self.assertIn("Base.size", docs)
        self.assertNotIn("Unit", docs)
        self.assertNotIn("Child.size", docs)

    def test_an_inherited_or_copied_docstring_is_not_the_objects_own(self):
        class Unit(enum.Enum):
            A = 1

        def elsewhere():
            """>>> len(Color)
            3
            """

        @functools.wraps(elsewhere)
        def wrapper():
            return None
        # The source names a docstring for neither (an Enum's, a decorator's copy).
        docs = {"Unit": None, "wrapper": ""}
        self.assertIsNone(tt_doctest.own_doc({"name": "Unit", "kind": "class", "obj": Unit}, docs))
        self.assertIsNone(tt_doctest.own_doc({"name": "wrapper", "kind": "function", "obj": wrapper}, docs))
        # A source docstring that is not what the object carries is not its own either.
        other = {"wrapper": "Something else."}
        self.assertIsNone(tt_doctest.own_doc({"name": "wrapper", "kind": "function", "obj": wrapper}, other))

    def test_a_docstring_is_its_own_whatever_the_interpreter_does_to_indentation(self):
        def f():
            """Doubles.

                >>> f()
                1
            """
        written = tt_doctest.own_docstrings(textwrap.dedent('''
            def f():
                """Doubles.

                    >>> f()
                    1
                """
        '''))
        self.assertIsNotNone(tt_doctest.own_doc({"name": "f", "kind": "function", "obj": f}, written))


class Rendering(unittest.TestCase):
    DOC = textwrap.dedent('''
        >>> x = {1: 2,
        ...      3: 4}
        >>> print(x)  # doctest: +ELLIPSIS
        {1: ...}
        >>> Path.home()
        PosixPath('/home/someone')
        >>> raise ValueError('a')
        Traceback (most recent call last):
        ValueError: a
        >>> print('a\\n\\nb')
        a
        <BLANKLINE>
        b
    ''')

    def test_the_text_reads_back_as_the_same_examples_with_skips_marked(self):
        examples = tt_doctest.examples_of(self.DOC)
        text = tt_doctest.render(examples, {1: "x", 2: "a home folder"})
        self.assertIsNotNone(text)
        again = doctest.DocTestParser().get_examples("".join(line for _, line in text))
        self.assertEqual([e.want for e in again], [e.want for e in examples])
        self.assertEqual([bool(e.options.get(doctest.SKIP)) for e in again], [False, True, True, False, False])
        self.assertTrue(again[1].options.get(doctest.ELLIPSIS))
        self.assertEqual([c for c, _ in text if c], ["skipped: x", "skipped: a home folder"])

    def test_the_test_body_compiles_and_names_no_path(self):
        text = tt_doctest.render(tt_doctest.examples_of(self.DOC), {})
        body = tt_doctest.test_body(text, "pkg.mod", "f")
        compile("def test_f():\n" + "\n".join("    " + line for line in body), "<t>", "exec")
        self.assertIn("doctest.DocTestRunner(verbose=False, optionflags=0)", "\n".join(body))

    def test_a_malformed_docstring_has_no_examples(self):
        self.assertIsNone(tt_doctest.examples_of("  >>> f(2)\n4\n"))


class TheHelper(unittest.TestCase):
    def test_examples_keep_doctest_semantics_and_only_a_real_failure_is_a_finding(self):
        with tempfile.TemporaryDirectory() as root:
            with open(os.path.join(root, "lib.py"), "w") as f:
                f.write(MODULE)
            result = run_helper(root, ["lib"])
            self.pytest_agrees(root, result["modules"][0]["source"])
        found = [(f["function"], f["kind"]) for f in result["findings"] if f["kind"] != "suspicious_result"]
        self.assertEqual([f for f in found if f[1] == "doctest"], [("lib.double", "doctest")], result["findings"])
        self.assertFalse([f for f in found if f[1] == "generator_error"], result["findings"])
        source = result["modules"][0]["source"]
        for name in ("clamp", "spell", "double", "Base_size", "cached"):
            self.assertIn(f"def test_{name}_doctest_", source)
        self.assertNotIn("Color", source)
        self.assertNotIn("is None == True", source)
        finding = next(f for f in result["findings"] if f["kind"] == "doctest")
        self.assertEqual((finding["call"], finding["expected"], finding["actual"]), ("double(2)", "4", "5"))
        self.assertTrue(finding["test"].startswith("test_double_doctest_"), finding)

    def test_a_broken_example_and_a_shadowed_module_are_not_the_codes_defects(self):
        # validators' shape: the package's `email` is the function, not the submodule; docopt's:
        # an example whose own source does not compile (a string opened without `...` lines).
        with tempfile.TemporaryDirectory() as root:
            os.mkdir(os.path.join(root, "pkg"))
            with open(os.path.join(root, "pkg", "__init__.py"), "w") as f:
                f.write("from .email import email\n")
            with open(os.path.join(root, "pkg", "email.py"), "w") as f:
                f.write(textwrap.dedent('''
                    def email(value):
                        """Whether it has an at sign.

                        >>> email("a@b")
                        True
                        >>> doc = \'\'\'
                        Usage: x
                        \'\'\'
                        >>> email(doc)
                        False
                        """
                        return "@" in value
                '''))
            result = run_helper(root, ["pkg.email"])
            self.pytest_agrees(root, result["modules"][0]["source"], fails=0, module="pkg_email")
        kinds = [(f["kind"], f["actual"]) for f in result["findings"]]
        self.assertFalse([k for k in kinds if k[0] == "doctest"], kinds)
        self.assertTrue([k for k in kinds if k[0] == "skipped_example" and "not valid Python" in k[1]], kinds)
        self.assertIn("'>>> email(\"a@b\")\\n'", result["modules"][0]["source"])

    def pytest_agrees(self, root, source, fails=1, module="lib"):
        """Under plain pytest the delivered tests mean what doctest means: only double's fails."""
        problem = pytest_problem()
        if problem:
            print(f"\nnote: pytest does not run in {sys.executable} ({problem}): not run under pytest",
                  file=sys.stderr)
            return
        with open(os.path.join(root, f"test_{module}.py"), "w") as f:
            f.write(source)
        done = __import__("subprocess").run(
            [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", f"test_{module}.py"],
            capture_output=True, text=True, cwd=root, timeout=120,
            env=dict(os.environ, PYTHONPATH=root, PYTHONDONTWRITEBYTECODE="1"))
        failed = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
        self.assertEqual(len(failed), fails, done.stdout)
        self.assertIn(" passed", done.stdout.splitlines()[-1])
        if fails:
            self.assertIn("test_double_doctest_", failed[0])


if __name__ == "__main__":
    unittest.main()
