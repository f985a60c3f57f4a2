"""Docstring examples as doctest itself runs them: the generator's doctest phase (tt_search.py).

A docstring's examples are a stated contract, and doctest defines what they mean: the examples of
one docstring run in order, in one namespace (a copy of the module's globals), and each example's
printed output is compared with what it shows by doctest's OutputChecker, under its default option
flags and the example's own directives. So this module never turns an example into an expression
of its own (`assert <source> == <want>` would make `x is None` / `True` a chained comparison, and
lose the names an earlier example defined); it hands the examples to doctest's own machinery, in
the generator's sandboxed call and in the delivered test alike.

Only a docstring the object carries itself, written in its module's own source, counts: never one
inherited from a base class (an Enum's, whose examples name `Color`) nor one a decorator copied from
elsewhere.

Nothing here evaluates an example in the generator's own process: parsing and rendering read text;
`run_examples` runs only inside the forked call (tt_execution.run_call).
"""

import ast
import doctest
import inspect
import re

DIRECTIVE = re.compile(r"#\s*doctest:")


def own_docstrings(source):
    """Docstrings written in the module's source, by qualified name (`f`, `C`, `C.m`): functions and
    classes at the top level, in classes, and under top-level `if`/`try` (version guards). The
    first definition of a name that has a docstring wins (a property's getter before its setter)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    found = {}

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + node.name
                doc = ast.get_docstring(node, clean=False)
                if doc and name not in found:
                    found[name] = doc
                if isinstance(node, ast.ClassDef):
                    visit(node.body, name + ".")
            elif isinstance(node, ast.If):
                visit(node.body + node.orelse, prefix)
            elif isinstance(node, ast.Try):
                handlers = [n for h in node.handlers for n in h.body]
                visit(node.body + handlers + node.orelse + node.finalbody, prefix)
    visit(tree.body, "")
    return found


def own_doc(item, docs):
    """The docstring of a discovered item (tt_analysis.discover) when it is the object's own and written
    in its module's source; None otherwise. A class's inherited `__doc__` is not in its own
    `vars`; what PyPy's Enum fills in, or a decorator copies, is not in the source."""
    obj = item["obj"]
    name = item["name"]
    written = docs.get(name)
    if not written:
        return None
    if item["kind"] == "class":
        own = vars(obj).get("__doc__")
    else:
        own = getattr(obj, "__doc__", None)
    if not isinstance(own, str) or inspect.cleandoc(own) != inspect.cleandoc(written):
        return None
    return written


def examples_of(doc):
    """The docstring's examples as doctest parses them; None when doctest cannot read it."""
    try:
        return doctest.DocTestParser().get_examples(doc)
    except Exception:  # noqa: BLE001 - a malformed docstring: doctest would refuse it too
        return None


def _source_lines(example, skip):
    lines = example.source.rstrip("\n").split("\n")
    if skip:
        lines[0] += " +SKIP" if DIRECTIVE.search(lines[0]) else "  # doctest: +SKIP"
    return lines


def example_lines(example, skip=False):
    """One example as doctest text: `>>> ` and `... ` prompts, then its expected output; `skip`
    adds doctest's own SKIP directive to its first line."""
    source = _source_lines(example, skip)
    lines = [">>> " + source[0] + "\n"] + ["... " + line + "\n" for line in source[1:]]
    return lines + [line + "\n" for line in example.want.split("\n")[:-1]]


def render(examples, skipped):
    """The doctest text of `examples` as (comment, line) pairs, a comment before a skipped one
    (`skipped`: index -> why); None when the text would not read back as the same examples."""
    out = []
    for i, example in enumerate(examples):
        lines = example_lines(example, i in skipped)
        out += [(f"skipped: {skipped[i]}" if i in skipped and j == 0 else None, line)
                for j, line in enumerate(lines)]
    again = examples_of("".join(line for _, line in out))
    if again is None or len(again) != len(examples):
        return None
    for i, (was, now) in enumerate(zip(examples, again)):
        options = dict(was.options)
        if i in skipped:
            options[doctest.SKIP] = True
        if now.source != "\n".join(_source_lines(was, i in skipped)) + "\n" or now.options != options \
                or now.want != was.want or now.exc_msg != was.exc_msg:
            return None
    return out


def test_body(text, module, qualname):
    """The lines of a test that runs the examples as doctest does, under plain pytest: doctest's
    parser and runner (no verbose output, the default option flags) on a copy of the module's
    globals; it fails with doctest's own report."""
    body = [f"# The examples of {qualname}'s docstring, run as doctest runs them: in order, in one",
            "# namespace (a copy of the module's globals), each output compared as doctest compares it.",
            "import doctest",
            "import importlib",
            f"module = importlib.import_module({module!r})  # the module, even where a name shadows it",
            "examples = ("]
    for comment, line in text:
        if comment:
            body.append(f"    # {comment}")
        body.append(f"    {line!r}")
    body += [")",
             "test = doctest.DocTestParser().get_doctest(",
             f"    examples, dict(vars(module)), {module + '.' + qualname!r}, None, 0)",
             "failures = []",
             "doctest.DocTestRunner(verbose=False, optionflags=0).run(test, out=failures.append)",
             "assert not failures, ''.join(failures)"]
    return body


def prepare():
    """Imports here, in the helper's process, what doctest's runner imports on first use (pdb's
    `readline`): in a call, PyPy's would write its bytecode beside the standard library, an
    effect the audit rightly reports but which is not the code's."""
    try:
        __import__("readline")
    except Exception:  # noqa: BLE001 - an interpreter without it: the runner goes without too
        pass


class RawResult:
    """A value the forked call sends back as it is (plain data), not described as a result."""

    def __init__(self, data):
        self.data = data


class _Recorder(doctest.DocTestRunner):
    """doctest's runner, recording each example's outcome instead of printing a report."""

    def __init__(self, describe):
        doctest.DocTestRunner.__init__(self, verbose=False, optionflags=0)
        self.describe = describe
        self.results = {}

    @staticmethod
    def _index(test, example):
        return next(i for i, e in enumerate(test.examples) if e is example)

    def report_start(self, out, test, example):
        pass

    def report_success(self, out, test, example, got):
        self.results[self._index(test, example)] = {"status": "ok"}

    def report_failure(self, out, test, example, got):
        self.results[self._index(test, example)] = {"status": "failed", "got": got[-600:]}

    def report_unexpected_exception(self, out, test, example, exc_info):
        exc = exc_info[1]
        try:
            error = self.describe(exc)
        except Exception:  # noqa: BLE001
            error = {"exc": type(exc).__name__, "msg": str(exc)[:200]}
        error["os_error"] = isinstance(exc, OSError)
        # The example's own source does not compile: the docstring is broken, not the code.
        error["example_syntax"] = isinstance(exc, SyntaxError) and str(getattr(exc, "filename", "")).startswith(
            "<doctest ")
        error["missing_module"] = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
        got = "".join(__import__("traceback").format_exception_only(type(exc), exc)).strip()
        self.results[self._index(test, example)] = {"status": "raised", "got": got[-600:], "error": error}


def run_examples(text, name, module, describe):
    """Runs the doctest `text` as doctest does, in a copy of `module`'s globals; one record per
    example: ok, failed (with what it printed), raised (with the exception) or skipped. Only ever
    called inside the forked call."""
    test = doctest.DocTestParser().get_doctest(text, dict(vars(module)), name, None, 0)
    runner = _Recorder(describe)
    runner.run(test, out=lambda _text: None)
    return RawResult([runner.results.get(i, {"status": "skipped"}) for i in range(len(test.examples))])


def first_failure(results):
    """The index of the first example that failed or raised, or None."""
    return next((i for i, r in enumerate(results) if r["status"] in ("failed", "raised")), None)


def not_the_code(result, own_package, blocked):
    """Why a failing example's failure is not the code's, or None: the sandbox stopped it
    (`blocked` says what), a file or service of its author's surroundings is missing (an
    OSError), it needs a module that is not installed, or the example itself is not Python."""
    if result["status"] != "raised":
        return None
    error = result.get("error", {})
    if blocked:
        return blocked
    if error.get("os_error"):
        return f"it depends on its surroundings ({error.get('exc')}: {error.get('msg', '')[:80]})"
    missing = error.get("missing_module")
    if missing and missing.split(".")[0] != own_package:
        return f"it needs a module that is not installed ({missing})"
    if error.get("example_syntax"):
        return f"the example itself is not valid Python ({error.get('exc')}: {error.get('msg', '')[:80]})"
    return None


def checks_something(examples, skipped):
    """Whether a test of `examples` compares an output (an example with one, not skipped)."""
    return any(example.want for i, example in enumerate(examples) if i not in skipped)
