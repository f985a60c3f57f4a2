#!/usr/bin/env python3
"""Mutation role: how many small bugs do the session's generated tests catch?

Python: a built-in mutation tester. Each scope file is parsed with `ast`; mutants swap an operator
(+ -, * /, < <=, > >=, == !=, and or), flip True/False, bump an integer or make a `return x`
return None. Each mutant alone is written into a scratch copy of the project and the generated
tests (tests/L1-unit, L2-integration, L3-e2e) run against it the way the executor runs them:
killed = a test fails (or times out), survived = every test passes.
Rust: cargo-mutants when installed. Node: not supported yet.

Protocol: task JSON on stdin, TT_* variables in the environment, cwd = the session.
Progress lines are JSON with "type": "progress"; the last stdout line is the outcome.
"""

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKIP_DIRS = {".git", ".workflow", "node_modules", ".venv", "venv", "__pycache__", "target",
             ".tox", ".nox", ".mypy_cache", ".ruff_cache", ".pytest_cache", "dist", "build"}
LAYERS = ("L1-unit", "L2-integration", "L3-e2e")


def env_number(name, default):
    try:
        return max(0.0, float(os.environ.get(name) or default))
    except ValueError:
        return float(default)


MAX_MUTANTS = int(env_number("TT_MUTATION_MAX", 30))
# Per-mutant timeout: this, else ten times the unmutated run, between 10 and 60 seconds.
MUTANT_TIMEOUT_S = env_number("TT_MUTATION_TIMEOUT", 0)
# Stop starting mutants before the role's own timeout (timeout_s: 1800) kills us mid-run.
BUDGET_S = env_number("TT_MUTATION_BUDGET_S", 1650)
BASELINE_TIMEOUT_S = 300

SWAPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
         ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
         ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.And: ast.Or, ast.Or: ast.And}
SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Lt: "<", ast.LtE: "<=",
           ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.And: "and", ast.Or: "or"}


# ---------------------------------------------------------------- protocol

def progress(phase, pct, detail=""):
    print(json.dumps({"type": "progress", "phase": phase, "progress_pct": round(pct, 1),
                      "detail": detail}), flush=True)


def finish(status, summary, data=None, artifacts=None):
    # Exit 0 even on failure: a non-zero exit would make the runtime drop this summary.
    print(json.dumps({"status": status, "summary": summary, "data": data or {},
                      "artifacts": artifacts or []}), flush=True)
    sys.exit(0)


def run(argv, cwd, timeout, env=None):
    """Runs argv (never through a shell) in its own process group, killed whole on timeout.
    Returns (returncode, output); returncode None means it timed out."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out


def tail(text, lines=15):
    return "\n".join(text.strip().splitlines()[-lines:])


# ---------------------------------------------------------------- scope

def project_kind(repo):
    if any((repo / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg")):
        return "python"
    if (repo / "Cargo.toml").is_file():
        return "rust"
    if (repo / "package.json").is_file():
        return "node"
    return "python" if all_sources(repo, (".py",)) else None


def all_sources(repo, exts):
    found = []
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        found += [(Path(root) / n).relative_to(repo).as_posix() for n in sorted(files) if n.endswith(exts)]
    return found


def scope_files(session, repo, exts):
    """The scope's existing files with these extensions (repo-relative); every source file of the
    project when the scope lists no file at all."""
    try:
        listed = json.loads((session / "task-analysis.json").read_text())["scope"].get("files") or []
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        listed = []
    root = repo.resolve()
    files = []
    for entry in listed:
        path = entry.get("path", "") if isinstance(entry, dict) else str(entry)
        if (isinstance(entry, dict) and entry.get("kind") == "deleted") or not path.endswith(exts):
            continue
        full = (repo / path).resolve()
        if full.is_file() and root in full.parents:  # never outside the repository
            files.append(full.relative_to(root).as_posix())
    return sorted(set(files)) if listed else all_sources(repo, exts)


def is_test_file(path):
    """Test code is what judges the mutants, never a mutant itself."""
    p = Path(path)
    return (p.name.startswith("test_") or p.name.endswith("_test.py") or p.name == "conftest.py"
            or any(part in ("tests", "test", "testing") for part in p.parts[:-1]))


# What the executor's mirror of the project leaves out (plus the root target/).
COPY_SKIP = {".git", ".workflow", "node_modules", ".venv", "__pycache__"}


def copy_tree(src, dst):
    def ignore(folder, names):
        root = Path(folder) == Path(src)
        return [n for n in names if n in COPY_SKIP or (root and n == "target")]
    shutil.copytree(src, dst, symlinks=True, ignore=ignore)


# ---------------------------------------------------------------- mutants

class Collector(ast.NodeVisitor):
    """Every mutation point of a module, in source order, with its enclosing function.
    Annotations and f-strings are left alone: mutating them changes nothing or breaks the syntax."""

    def __init__(self):
        self.found = []  # (node, how, arg, function)
        self.scope = []

    def add(self, node, how, arg=None):
        self.found.append((node, how, arg, ".".join(self.scope) or "<module>"))

    def visit_scoped(self, node, children):
        for d in node.decorator_list:
            self.visit(d)
        self.scope.append(node.name)
        for child in children:
            self.visit(child)
        self.scope.pop()

    def visit_FunctionDef(self, node):
        # Default values count as the function's; argument annotations are skipped.
        defaults = node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
        self.visit_scoped(node, defaults + node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self.visit_scoped(node, node.body)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.visit(node.value)

    def visit_JoinedStr(self, node):
        pass

    def visit_BinOp(self, node):
        if type(node.op) in SWAPS:
            self.add(node, "op")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if type(node.op) in SWAPS:
            self.add(node, "op")
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        self.add(node, "op")
        self.generic_visit(node)

    def visit_Compare(self, node):
        # `if __name__ == "__main__"` flipped would run the script's main code on import.
        if isinstance(node.left, ast.Name) and node.left.id == "__name__":
            return
        for i, op in enumerate(node.ops):
            if type(op) in SWAPS:
                self.add(node, "cmp", i)
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, bool) or type(node.value) is int:
            self.add(node, "const")

    def visit_Return(self, node):
        value = node.value
        if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
            self.add(node, "return")
        self.generic_visit(node)


def collect(tree):
    c = Collector()
    c.visit(tree)
    return c.found


def apply(node, how, arg):
    """Mutates node in place; returns the operator label (`+ -> -`)."""
    if how == "op":
        old = type(node.op)
        node.op = SWAPS[old]()
        return f"{SYMBOLS[old]} -> {SYMBOLS[SWAPS[old]]}"
    if how == "cmp":
        old = type(node.ops[arg])
        node.ops[arg] = SWAPS[old]()
        return f"{SYMBOLS[old]} -> {SYMBOLS[SWAPS[old]]}"
    if how == "const":
        old = node.value
        node.value = (not old) if isinstance(old, bool) else old + 1
        return f"{old!r} -> {node.value!r}"
    node.value = ast.Constant(value=None)
    return "return x -> return None"


def short(code, limit=80):
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 1] + "…"


def kind_of(node, how, arg):
    """What a mutation changes (Add, Lt, const, return): the unit select() spreads over."""
    if how == "op":
        return type(node.op).__name__
    return type(node.ops[arg]).__name__ if how == "cmp" else how


def candidates(repo, files):
    """Every mutation point of the files: dicts with where, what, and the kind used to spread them."""
    out, problems = [], []
    for f in files:
        try:
            tree = ast.parse((repo / f).read_text(encoding="utf-8"), filename=f)
        except (SyntaxError, ValueError, OSError) as e:
            problems.append(f"{f}: cannot parse ({e})")
            continue
        for index, (node, how, arg, function) in enumerate(collect(tree)):
            out.append({"file": f, "index": index, "how": how, "line": node.lineno,
                        "col": node.col_offset + 1, "function": function, "kind": kind_of(node, how, arg)})
    return out, problems


def select(cands, limit):
    """Up to `limit` mutants, deterministically spread: round-robin over (file, function), and
    inside a function round-robin over the kinds of mutation, so no single function eats the budget."""
    groups = {}
    for c in cands:
        groups.setdefault((c["file"], c["function"]), []).append(c)
    queues = []
    for members in groups.values():
        by_kind = {}
        for c in members:
            by_kind.setdefault(c["kind"], []).append(c)
        interleaved = []
        while any(by_kind.values()):
            interleaved += [q.pop(0) for q in by_kind.values() if q]
        queues.append(interleaved)
    picked = []
    while len(picked) < limit and any(queues):
        for q in queues:
            if q and len(picked) < limit:
                picked.append(q.pop(0))
    return sorted(picked, key=lambda c: (c["file"], c["line"], c["col"], c["index"]))


def mutate(repo, cand):
    """The mutated module text (ast.unparse of the tree with this one change) and the change."""
    tree = ast.parse((repo / cand["file"]).read_text(encoding="utf-8"))
    node, how, arg, _ = collect(tree)[cand["index"]]
    before = ast.unparse(node)
    label = apply(node, how, arg)
    after = ast.unparse(node)
    source = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    compile(source, cand["file"], "exec", dont_inherit=True)  # a mutant must at least load
    return source, label, short(before), short(after)


# ---------------------------------------------------------------- running the tests

def interpreter(session):
    """The interpreter the executor used (results/run-*.json), else the one running this script."""
    for run_file in sorted(session.glob("results/run-*.json"), reverse=True):
        try:
            record = json.loads(run_file.read_text())
        except (OSError, ValueError):
            continue
        command = record.get("command") or []
        if record.get("framework") in ("pytest", "unittest") and command:
            found = shutil.which(command[0])
            if found:
                return found
    return sys.executable


class Workspace:
    """A scratch copy of the project plus the session's generated tests, laid out as the executor
    lays them out: tests run from their layer folder, the copy on PYTHONPATH, our own empty ini so
    the project's pytest settings (addopts, conftest) stay out."""

    def __init__(self, session, repo, layers):
        self.root = Path(tempfile.mkdtemp(prefix="mutation-"))
        self.project = self.root / "project"
        copy_tree(repo, self.project)
        self.ini = self.root / "pytest-isolated.ini"
        self.ini.write_text("[pytest]\n")
        self.layers = {}
        for layer in layers:
            dest = self.root / "tests" / layer
            copy_tree(session / "tests" / layer, dest)
            self.layers[layer] = (dest, deselected(session, layer))
        paths = [str(self.project)] + ([str(self.project / "src")] if (self.project / "src").is_dir() else [])
        self.env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), PYTHONDONTWRITEBYTECODE="1")
        self.python = interpreter(session)

    def run_tests(self, timeout, stop_early=True):
        """Runs every layer; (passed, timed_out, layer, output). Stops at the first failing layer."""
        deadline = time.monotonic() + timeout
        for layer, (folder, deselect) in self.layers.items():
            argv = [self.python, "-m", "pytest", "-c", str(self.ini), f"--rootdir={folder}",
                    "-p", "no:cacheprovider", "-q"]
            argv += (["-x"] if stop_early else []) + [f"--deselect={d}" for d in deselect]
            argv += [str(p) for p in test_files(folder)]
            left = deadline - time.monotonic()
            if left <= 0:
                return False, True, layer, ""
            code, out = run(argv, folder, left, self.env)
            if code is None:
                return False, True, layer, out
            if code != 0:
                return False, False, layer, out
        return True, False, None, ""

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


def test_files(folder):
    return sorted(p for p in folder.rglob("*.py")
                  if (p.name.startswith("test_") or p.name.endswith("_test.py"))
                  and "__pycache__" not in p.parts)


def deselected(session, layer):
    """Tests the executor quarantined one by one (quarantine.json entries that are not files)."""
    try:
        items = json.loads((session / "tests" / "quarantine" / layer / "quarantine.json").read_text())
    except (OSError, ValueError):
        return []
    return [q["id"] for q in items if isinstance(q, dict) and q.get("id") and not q.get("file")]


# ---------------------------------------------------------------- python

def mutation_python(session, repo, task_id):
    files = [f for f in scope_files(session, repo, (".py",)) if not is_test_file(f)]
    layers = [l for l in LAYERS if test_files(session / "tests" / l)]
    if not files:
        finish("completed", "builtin-ast: no Python source files in scope to mutate",
               {"tool": "builtin-ast", "mutants": 0, "killed": 0, "survived": 0, "score": None})
    if not layers:
        finish("failed", "no generated tests under tests/L1-unit, L2-integration or L3-e2e to judge "
                         "the mutants: run the generator first", {"tool": "builtin-ast"})
    cands, problems = candidates(repo, files)
    chosen = select(cands, MAX_MUTANTS)
    progress("prepared", 5, f"{len(cands)} mutation points in {len(files)} file(s); {len(chosen)} chosen")

    ws = Workspace(session, repo, layers)
    try:
        return run_mutants(session, repo, task_id, ws, files, layers, chosen, len(cands), problems)
    finally:
        ws.close()


def run_mutants(session, repo, task_id, ws, files, layers, chosen, points, problems):
    started = time.monotonic()
    progress("baseline", 8, f"unmutated run of {', '.join(layers)} with {ws.python}")
    ok, timed_out, layer, out = ws.run_tests(BASELINE_TIMEOUT_S, stop_early=False)
    baseline_s = time.monotonic() - started
    if not ok:
        why = "timed out" if timed_out else "fail"
        blocker = "No module named pytest" in out
        finish("failed", f"baseline fails: the generated tests of {layer} {why} on the unmutated project, "
                         "so mutants cannot be judged", {"tool": "builtin-ast", "blocker": blocker,
                                                        "output_tail": tail(out)})
    timeout = MUTANT_TIMEOUT_S or min(60.0, max(10.0, 10 * baseline_s))
    mutants = []
    for i, cand in enumerate(chosen):
        mutant = {k: cand[k] for k in ("file", "line", "col", "function")}
        mutant["id"] = f"M{i + 1:03d}"
        try:
            source, mutant["operator"], mutant["before"], mutant["after"] = mutate(repo, cand)
        except (SyntaxError, ValueError, RecursionError) as e:
            mutant.update(operator=cand["kind"], status="invalid", detail=str(e))
            mutants.append(mutant)
            continue
        if time.monotonic() - started + timeout > BUDGET_S:
            mutant["status"] = "not_run"  # out of time budget: neither killed nor survived
            mutants.append(mutant)
            continue
        target = ws.project / cand["file"]
        original = target.read_bytes()
        t0 = time.monotonic()
        try:
            target.write_text(source, encoding="utf-8")
            passed, timed_out, layer, _ = ws.run_tests(timeout)
        finally:
            target.write_bytes(original)  # the next mutant starts from the real code
        mutant["duration_s"] = round(time.monotonic() - t0, 2)
        mutant["status"] = "survived" if passed else ("timeout" if timed_out else "killed")
        if not passed:
            mutant["killed_by"] = layer
        mutants.append(mutant)
        progress("mutants", 10 + 85 * (i + 1) / len(chosen),
                 f"{mutant['id']} {mutant['file']}:{mutant['line']} {mutant['operator']}: {mutant['status']}")

    counted = [m for m in mutants if m["status"] in ("killed", "timeout", "survived")]
    killed = sum(m["status"] in ("killed", "timeout") for m in counted)
    survived = len(counted) - killed
    score = round(killed / len(counted), 4) if counted else None
    report = {"task_id": task_id, "tool": "builtin-ast", "files": files, "layers": layers,
              "interpreter": ws.python, "mutation_points": points, "max_mutants": MAX_MUTANTS,
              "baseline_s": round(baseline_s, 2), "mutant_timeout_s": timeout,
              "mutants_total": len(counted), "killed": killed, "survived": survived,
              "timeouts": sum(m["status"] == "timeout" for m in mutants),
              "not_run": sum(m["status"] == "not_run" for m in mutants),
              "score": score, "problems": problems, "mutants": mutants,
              "duration_s": round(time.monotonic() - started, 2)}
    artifacts = write_reports(session, task_id, report)
    data = {"tool": "builtin-ast", "mutants": len(counted), "killed": killed, "survived": survived,
            "score": score}
    if not counted:
        finish("completed", f"builtin-ast: no mutants could be made from {len(files)} file(s)", data, artifacts)
    finish("completed", f"builtin-ast: mutation score {score:.0%} ({killed}/{len(counted)} killed, "
                        f"{survived} survived)", data, artifacts)


# ---------------------------------------------------------------- rust

def mutation_rust(session, repo, task_id):
    if not shutil.which("cargo-mutants"):
        finish("failed", "cargo-mutants is not installed (cargo install cargo-mutants)",
               {"blocker": True, "tool": "cargo-mutants"})
    files = [f for f in scope_files(session, repo, (".rs",)) if not is_test_file(f)]
    scratch = Path(tempfile.mkdtemp(prefix="mutation-rust-"))
    try:
        # cargo writes into the crate (Cargo.lock) and the repository is read-only: work on a copy.
        crate, out_dir = scratch / "crate", scratch / "out"
        copy_tree(repo, crate)
        argv = ["cargo", "mutants", "--no-shuffle", "-j", "1", "--timeout", "60",
                "--output", str(out_dir), "--cargo-arg=--offline"]
        for f in files:
            argv += ["--file", f]
        env = dict(os.environ, CARGO_TARGET_DIR=str(scratch / "target"), CARGO_TERM_COLOR="never")
        progress("cargo-mutants", 10, f"{len(files)} file(s)")
        code, out = run(argv, crate, BUDGET_S, env)
        if code is None:
            finish("failed", f"cargo mutants did not finish within {BUDGET_S:.0f}s", {"tool": "cargo-mutants"})
        if code == 4:
            finish("failed", "baseline fails: the crate's tests fail without any mutation",
                   {"tool": "cargo-mutants", "output_tail": tail(out)})
        if code not in (0, 2, 3):
            finish("failed", f"cargo mutants exited with {code}", {"tool": "cargo-mutants", "output_tail": tail(out)})
        result = out_dir / "mutants.out"
        outcomes = json.loads((result / "outcomes.json").read_text())
        missed_file = result / "missed.txt"
        missed = missed_file.read_text().splitlines() if missed_file.is_file() else []
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    caught, timeouts = outcomes.get("caught", 0), outcomes.get("timeout", 0)
    killed, survived = caught + timeouts, outcomes.get("missed", len(missed))
    total = killed + survived
    score = round(killed / total, 4) if total else None
    mutants = [{"status": "survived", "change": line} for line in missed]
    report = {"task_id": task_id, "tool": "cargo-mutants", "files": files, "mutants_total": total,
              "killed": killed, "survived": survived, "timeouts": timeouts,
              "unviable": outcomes.get("unviable", 0), "score": score, "mutants": mutants}
    artifacts = write_reports(session, task_id, report)
    data = {"tool": "cargo-mutants", "mutants": total, "killed": killed, "survived": survived, "score": score}
    summary = (f"cargo-mutants: mutation score {score:.0%} ({killed}/{total} killed, {survived} survived)"
               if total else "cargo-mutants: no viable mutants")
    finish("completed", summary, data, artifacts)


# ---------------------------------------------------------------- reports

def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_reports(session, task_id, report):
    results, analysis = session / "results", session / "analysis"
    results.mkdir(parents=True, exist_ok=True)
    analysis.mkdir(parents=True, exist_ok=True)
    json_path, md_path = results / f"mutation-{task_id}.json", analysis / f"mutation-{task_id}.md"
    json_path.write_text(json.dumps(report, indent=2) + "\n")
    score = report["score"]
    lines = [f"# Mutation testing ({task_id})", "",
             f"- Tool: `{report['tool']}`",
             "- Files mutated: " + ", ".join(f"`{f}`" for f in report["files"]),
             f"- Score: **{'n/a' if score is None else f'{score:.0%}'}** = killed / total = "
             f"{report['killed']} / {report['mutants_total']} ({report.get('timeouts', 0)} by timeout)"]
    if report["tool"] == "builtin-ast":
        lines += [f"- Tests: {', '.join(report['layers'])} (baseline {report['baseline_s']}s, "
                  f"per-mutant timeout {report['mutant_timeout_s']:.0f}s)",
                  f"- {report['mutants_total']} of {report['mutation_points']} mutation points run "
                  f"(at most {report['max_mutants']}: TT_MUTATION_MAX)"]
        if report["not_run"]:
            lines.append(f"- {report['not_run']} mutant(s) not run: out of time budget")
    lines += [f"- Problem: {p}" for p in report.get("problems", [])]
    survivors = [m for m in report["mutants"] if m["status"] == "survived"]
    lines += ["", f"## Surviving mutants ({len(survivors)})", ""]
    if not survivors:
        lines.append("None: every mutant was caught by a test.")
    elif report["tool"] == "builtin-ast":
        lines += ["Each is a change the tests did not notice: a missing assertion or an untested case.", "",
                  "| Where | Function | Change | Original | Mutant |", "|---|---|---|---|---|"]
        lines += [f"| `{m['file']}:{m['line']}` | `{md_cell(m['function'])}` | {md_cell(m['operator'])} | "
                  f"`{md_cell(m['before'])}` | `{md_cell(m['after'])}` |" for m in survivors]
    else:
        lines += [f"- `{m['change']}`" for m in survivors]
    md_path.write_text("\n".join(lines) + "\n")
    return [f"results/{json_path.name}", f"analysis/{md_path.name}"]


# ---------------------------------------------------------------- main

def main():
    try:
        json.load(sys.stdin)  # the task; the scope comes from task-analysis.json
    except ValueError:
        pass
    session = Path(os.environ.get("TT_SESSION_DIR") or os.getcwd()).resolve()
    repo = Path(os.environ.get("TT_REPO") or ".").resolve()
    task_id = re.sub(r"[^A-Za-z0-9._-]", "_", os.environ.get("TT_TASK_ID") or "MUTATE")
    kind = project_kind(repo)
    if kind == "python":
        mutation_python(session, repo, task_id)
    elif kind == "rust":
        mutation_rust(session, repo, task_id)
    elif kind == "node":
        finish("failed", "mutation testing of Node projects is not supported yet (edit run.py to call "
                         "Stryker)", {"blocker": True})
    finish("failed", f"no Python, Rust or Node project found in {repo}", {"blocker": True})


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a crash still ends with an outcome line the runtime can read
        import traceback
        traceback.print_exc()
        finish("failed", f"mutation crashed: {type(e).__name__}: {e}")
