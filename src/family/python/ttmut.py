"""Mutation analysis of one pytest suite, for team-testing (Python 3.8+).

Usage: python ttmut.py REQUEST.json RESULT.json

The request names the module files to mutate (absolute paths in a mirror of the repository), the
pytest arguments of the suite, a seed, a time budget and a per-mutant timeout. The suite runs once
under coverage.py with one coverage context per test, which says which test reaches which line;
then each mutant (a comparison, arithmetic or boolean operator swapped, a constant changed, a
return value replaced by None) runs only the tests that reach its line and were passing, in a
forked child with the mutated module put in place by an import hook (the files on disk are never
changed). A mutant is killed when a test fails, errors, or the child outlives its timeout.

The result lists every mutant with the tests that killed it, and every test with its outcome and
the lines and arcs it covers. Nothing is printed: the child's stdout and stderr go to /dev/null."""
import ast
import importlib.abc
import importlib.machinery
import json
import os
import random
import signal
import sys
import time

CMP_SWAPS = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
    ast.In: ast.NotIn, ast.NotIn: ast.In,
}
BIN_SWAPS = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult,
}
BOOL_SWAPS = {ast.And: ast.Or, ast.Or: ast.And}


def _docstring_ids(tree):
    """The constant nodes that are docstrings: changing them changes nothing worth a mutant."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _skipped_ids(tree):
    """Nodes no mutant touches: docstrings, annotations and f-string parts."""
    skip = _docstring_ids(tree)
    for node in ast.walk(tree):
        parts = []
        if isinstance(node, ast.JoinedStr):
            parts = [node]
        elif isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation is not None:
            parts = [node.annotation]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            parts = [node.returns]
        for part in parts:
            skip.update(id(n) for n in ast.walk(part))
    return skip


def mutation_points(tree):
    """(node, operator name, apply) for every place a mutant can change, in source order."""
    skip = _skipped_ids(tree)
    # Strings are mutated only where code decides on them (compared or returned): changing a
    # message or an `__all__` entry is noise no test should have to notice.
    compared = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            compared.update(id(n) for n in [node.left] + list(node.comparators))
        elif isinstance(node, ast.Return) and node.value is not None:
            compared.add(id(node.value))
    points = []
    for node in ast.walk(tree):
        if id(node) in skip or not hasattr(node, "lineno"):
            continue
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in CMP_SWAPS:
                    points.append((node, "compare %s->%s" % (type(op).__name__, CMP_SWAPS[type(op)].__name__),
                                   ("ops", i, CMP_SWAPS[type(op)])))
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in BIN_SWAPS:
            points.append((node, "arith %s->%s" % (type(node.op).__name__, BIN_SWAPS[type(node.op)].__name__),
                           ("op", None, BIN_SWAPS[type(node.op)])))
        elif isinstance(node, ast.BoolOp) and type(node.op) in BOOL_SWAPS:
            points.append((node, "bool %s->%s" % (type(node.op).__name__, BOOL_SWAPS[type(node.op)].__name__),
                           ("op", None, BOOL_SWAPS[type(node.op)])))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            points.append((node, "drop %s" % type(node.op).__name__, ("unwrap", None, None)))
        elif isinstance(node, ast.Constant) and type(node.value) in (bool, int, float):
            points.append((node, "constant", ("constant", None, None)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) in compared:
            points.append((node, "constant", ("constant", None, None)))
        elif isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            points.append((node, "return None", ("return_none", None, None)))
    points.sort(key=lambda p: (p[0].lineno, getattr(p[0], "col_offset", 0), p[1]))
    return points


def _changed_constant(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 1.0
    return "" if value else "XX"


def mutate(source, filename, index):
    """The code object of the source with its index-th mutation applied, and (line, operator)."""
    tree = ast.parse(source, filename)
    points = mutation_points(tree)
    node, name, (kind, i, new) = points[index]
    line = node.lineno
    if kind == "ops":
        node.ops[i] = new()
    elif kind == "op":
        node.op = new()
    elif kind == "constant":
        node.value = _changed_constant(node.value)
    elif kind == "unwrap" or kind == "return_none":
        replacement = node.operand if kind == "unwrap" else ast.Return(value=ast.Constant(value=None))
        for parent in ast.walk(tree):
            for field, value in ast.iter_fields(parent):
                if value is node:
                    setattr(parent, field, replacement)
                elif isinstance(value, list):
                    for k, item in enumerate(value):
                        if item is node:
                            value[k] = replacement
        ast.copy_location(replacement, node)
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec"), line, name


class _MutantLoader(importlib.abc.Loader):
    def __init__(self, code):
        self.code = code

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.code, module.__dict__)


class _MutantFinder(importlib.abc.MetaPathFinder):
    """Loads the mutated code object for the one file being mutated; every other import as usual."""

    def __init__(self, path, code):
        self.path = os.path.realpath(path)
        self.code = code

    def find_spec(self, fullname, path, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or os.path.realpath(spec.origin) != self.path:
            return None
        spec.loader = _MutantLoader(self.code)
        return spec


class _Recorder:
    """A pytest plugin: each test's outcome, and a coverage context per test when tracing."""

    def __init__(self, cov=None):
        self.cov = cov
        self.outcomes = {}
        # test -> the line of its own file where it failed (the assertion that noticed).
        self.failed_at = {}
        # test -> the end of its failure report (the traceback), for classifying and localising.
        self.details = {}

    def pytest_runtest_setup(self, item):
        if self.cov is not None:
            self.cov.switch_context(item.nodeid)

    def pytest_runtest_logreport(self, report):
        failed = report.failed or (report.when == "call" and report.outcome == "failed")
        previous = self.outcomes.get(report.nodeid)
        if failed:
            self.outcomes[report.nodeid] = "failed"
            self.failed_at.setdefault(report.nodeid, _failure_line(report))
            self.details.setdefault(report.nodeid, str(getattr(report, "longreprtext", ""))[-4000:])
        elif hasattr(report, "wasxfail") and report.skipped:
            # An expected failure (a defect kept as xfail) failed as it was expected to.
            self.outcomes[report.nodeid] = "xfailed"
        elif report.when == "call" and previous is None:
            self.outcomes[report.nodeid] = "skipped" if report.skipped else "passed"
        elif report.skipped and previous is None:
            self.outcomes[report.nodeid] = "skipped"

    def pytest_collectreport(self, report):
        if report.failed:
            self.outcomes[report.nodeid or "<collection>"] = "failed"


def _failure_line(report):
    """The 1-based line of the test's own file its failure points at, or None."""
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    path = (report.nodeid or "").split("::")[0]
    if crash is None or not path or not str(crash.path).endswith(path):
        # The failure surfaced elsewhere (in the code under test): the last entry of the test's
        # own file in the traceback says which statement ran into it.
        entries = getattr(getattr(getattr(report, "longrepr", None), "reprtraceback", None), "reprentries", [])
        for entry in reversed(entries or []):
            loc = getattr(entry, "reprfileloc", None)
            if loc is not None and path and str(loc.path).endswith(path):
                return loc.lineno
        return None
    return crash.lineno


def _quiet():
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)


def _in_child(work, timeout):
    """Runs work() in a forked child (stdout/stderr to /dev/null) whose result comes back on a
    pipe; None when it failed, crashed or outlived the timeout (then it and its group are killed)."""
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None, "fork failed"
    if pid == 0:
        os.close(read_end)
        try:
            os.setpgid(0, 0)
            _quiet()
            data = json.dumps(work()).encode()
        except BaseException as e:  # the child reports every failure
            data = json.dumps({"child_error": repr(e)}).encode()
        with os.fdopen(write_end, "wb") as w:
            w.write(data)
        os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + timeout
    chunks = []
    os.set_blocking(read_end, False)
    timed_out = False
    while True:
        try:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            continue
        except BlockingIOError:
            pass
        if time.monotonic() > deadline:
            timed_out = True
            break
        time.sleep(0.005)
    os.close(read_end)
    if timed_out:
        for target in (-pid, pid):
            try:
                os.kill(target, signal.SIGKILL)
            except OSError:
                pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    if timed_out:
        return None, "timeout"
    try:
        result = json.loads(b"".join(chunks).decode() or "null")
    except ValueError:
        return None, "no result"
    if isinstance(result, dict) and "child_error" in result:
        return None, result["child_error"]
    return result, None


def trace(req):
    """Runs the suite once under coverage, one context per test: outcomes and what each reaches."""
    import coverage
    import pytest

    files = [os.path.realpath(m) for m in req["modules"]]
    cov = coverage.Coverage(data_file=None, branch=True, include=files)
    recorder = _Recorder(cov)
    cov.start()
    try:
        pytest.main(list(req["options"]) + ["-q"] + list(req["files"]), plugins=[recorder])
    finally:
        cov.stop()
    data = cov.get_data()
    reached = {}
    for context in data.measured_contexts():
        data.set_query_contexts([_exact(context)])
        per_file = {}
        for f in data.measured_files():
            real = os.path.realpath(f)
            if real not in files:
                continue
            lines = sorted(data.lines(f) or [])
            arcs = sorted([a, b] for a, b in (data.arcs(f) or []))
            if lines or arcs:
                per_file[real] = {"lines": lines, "arcs": arcs}
        reached[context] = per_file
    data.set_query_contexts(None)
    return {"outcomes": recorder.outcomes, "reached": reached, "details": recorder.details}


def _exact(context):
    import re
    return "^" + re.escape(context) + "$"


def run_mutant(req, path, code, tests):
    """The tests that fail with the mutant in place of `path` (a forked child's work)."""
    import pytest

    sys.dont_write_bytecode = True
    sys.meta_path.insert(0, _MutantFinder(path, code))
    recorder = _Recorder()
    code_ = pytest.main(list(req["options"]) + ["-q"] + tests, plugins=[recorder])
    failed = [t for t, o in recorder.outcomes.items() if o == "failed"]
    return {"exit": int(code_), "failed": failed, "failed_at": recorder.failed_at}


def main():
    with open(sys.argv[1]) as f:
        req = json.load(f)
    started = time.monotonic()
    budget = float(req.get("budget_s", 60))
    timeout = float(req.get("timeout_s", 10))
    result = {"mutants": [], "tests": {}, "exhausted": False, "problems": []}
    trace_timeout = float(req.get("trace_timeout_s") or max(timeout * 6, budget * 0.5))
    traced, problem = _in_child(lambda: trace(req), trace_timeout)
    if traced is None:
        result["problems"].append("the suite did not run under coverage: %s" % problem)
        _write(result)
        return
    outcomes = traced["outcomes"]
    reached = traced["reached"]
    for test, outcome in sorted(outcomes.items()):
        if test == "<collection>":
            continue
        result["tests"][test] = {"outcome": outcome, "reached": reached.get(test, {})}
        if test in traced["details"]:
            result["tests"][test]["detail"] = traced["details"][test]
    candidates = []
    for path in req["modules"]:
        real = os.path.realpath(path)
        try:
            with open(real, encoding="utf-8") as f:
                source = f.read()
            count = len(mutation_points(ast.parse(source, real)))
        except (OSError, SyntaxError, ValueError) as e:
            result["problems"].append("%s: %s" % (path, e))
            continue
        candidates.extend((real, source, i) for i in range(count))
    rng = random.Random(req.get("seed", 1))
    rng.shuffle(candidates)
    candidates = candidates[: int(req.get("max_mutants", 200))]
    passing = [t for t, o in outcomes.items() if o == "passed"]
    # Lines run only at import (definitions, module constants) belong to no test's context: every
    # test that reaches the file depends on them.
    at_import = reached.get("", {})

    def covering_tests(real, line):
        tests = [t for t in passing if line in reached.get(t, {}).get(real, {}).get("lines", [])]
        if tests or line not in at_import.get(real, {}).get("lines", []):
            return tests
        return [t for t in passing if real in reached.get(t, {})]

    __import__("pytest")  # once here, so each forked child starts with it loaded

    for real, source, index in candidates:
        if time.monotonic() - started > budget:
            result["exhausted"] = True
            break
        try:
            code, line, name = mutate(source, real, index)
        except (SyntaxError, ValueError, TypeError) as e:
            result["problems"].append("%s mutant %d: %s" % (real, index, e))
            continue
        mutant = {"file": real, "line": line, "operator": name, "index": index}
        covering = covering_tests(real, line)
        if not covering:
            mutant["status"] = "no_coverage"
            mutant["killed_by"] = []
        else:
            killed_by = []
            status = "survived"
            # All covering tests run (no -x): minimization needs every test that kills it.
            ran, problem = _in_child(lambda: run_mutant(req, real, code, covering), timeout)
            if ran is None:
                status = "killed" if problem == "timeout" else "error"
                killed_by = covering if problem == "timeout" else []
            elif ran["failed"] or ran["exit"] not in (0, 5):
                # A mutant that breaks the import fails collection, not a test: all of them see it.
                status = "killed"
                killed_by = sorted(t for t in ran["failed"] if t in covering) or covering
                mutant["killed_at"] = {t: ran["failed_at"].get(t) for t in killed_by
                                       if ran.get("failed_at", {}).get(t)}
            mutant["status"] = status
            mutant["killed_by"] = killed_by
        result["mutants"].append(mutant)
    _write(result)


def _write(result):
    with open(sys.argv[2], "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
