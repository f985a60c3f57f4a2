#!/usr/bin/env python3
"""Benchmark: team-testing's built-in Python generator (src/family/python/gen/ttgen.py) against Pynguin on six small
pure-Python packages from PyPI (no runtime dependencies, downloaded at bench time, never committed).

    python3 benches/generator_vs_pynguin.py [--pynguin-seconds 20] [--seed 1] [--only PKG ...]
        [--package SPEC:MODULE,MODULE ...] [--helper NAME=DIR ...]

`--tools pipeline` measures the whole targeted pipeline of the binary (`--bin`), every GC round
included, on the same modules (the package as a git repository whose last commit adds them).

`--package` benchmarks another package from PyPI (pinned, pure Python), e.g.
`--package docstring_parser==0.16:docstring_parser.google,docstring_parser.rest`; with `--package` and
no `--only`, only the packages named so run. `--helper NAME=DIR` measures another version of the
helper too (a folder laid out like src/family/python/gen with ttaudit.py and tt_isolation.py beside it,
e.g. `git archive main src/family/python | tar -x -C DIR --strip 3`, then DIR/gen),
as a tool named NAME in the same run, so a change is compared with what it changes under the same load.

For each package both tools generate tests for the same modules: Pynguin with `--maximum-search-time`
seconds per module (its default DynaMOSA search), team-testing with its default budget (the helper's
per-module default, the same the CLI uses). Then coverage.py measures both suites the same way: one
`coverage run --branch -m pytest` from the package's project root, over the benchmarked modules'
files, with the same interpreter. Both generators and both test runs go as an unprivileged user
(nobody) with the scratch folder as their only writable place: real libraries hold functions that
delete paths.

Prints a Markdown table (per package and pooled) for BENCHMARKS.md. Not run in CI.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# package name on PyPI (pinned), style, import root, modules benchmarked
PACKAGES = [
    ("PyMonad==2.4.0", "functional / monadic", "pymonad",
     ["pymonad.maybe", "pymonad.either", "pymonad.list", "pymonad.tools"]),
    ("cachetools==8.0.2", "OOP with state", "cachetools", ["cachetools", "cachetools.keys"]),
    ("validators==0.36.0", "string processing and validation", "validators",
     ["validators.card", "validators.email", "validators.ip_address", "validators.finance",
      "validators.uuid"]),
    # parse 1.22.4 was the first choice: Pynguin 0.48 crashes instrumenting it ("Failed to compute
    # stacksize"), so it would measure nothing. toml parses (and writes) a whole format instead.
    ("toml==0.10.2", "parsing", "toml", ["toml.decoder", "toml.encoder"]),
    ("docopt==0.6.2", "a CLI", "docopt", ["docopt"]),
    ("tomli==2.5.0", "private implementation modules", "tomli", ["tomli._parser", "tomli._re"]),
]
NOBODY = 65534


def run(argv, cwd, env=None, timeout=1800, stdin=None, as_nobody=False):
    if as_nobody and os.geteuid() == 0:
        argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"] + argv
    return subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=timeout)


def open_up(path):
    """The scratch tree belongs to nobody, who runs the generators and the tests."""
    if os.geteuid() != 0:
        return
    for dirpath, dirnames, filenames in os.walk(path):
        os.chown(dirpath, NOBODY, NOBODY)
        for name in filenames:
            try:
                os.chown(os.path.join(dirpath, name), NOBODY, NOBODY, follow_symlinks=False)
            except OSError:
                pass


def fetch(spec, work):
    """Downloads the package (pure wheel, else sdist) and unpacks its import root into a project."""
    dl = os.path.join(work, "dl", spec.split("==")[0])
    os.makedirs(dl, exist_ok=True)
    done = run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", dl, "--only-binary",
                ":all:", "--platform", "any", "--implementation", "py", "--python-version", "3.11", spec],
               cwd=work)
    if done.returncode != 0:
        done = run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                    "-d", dl, spec], cwd=work)
        if done.returncode != 0:
            sys.exit(f"cannot download {spec}: {done.stderr[-1500:]}")
    project = os.path.join(work, "projects", spec.split("==")[0])
    os.makedirs(project, exist_ok=True)
    for name in os.listdir(dl):
        path = os.path.join(dl, name)
        if name.endswith(".whl"):
            with zipfile.ZipFile(path) as z:
                for member in z.namelist():
                    if ".dist-info/" not in member:
                        z.extract(member, project)
        elif name.endswith((".tar.gz", ".zip")):
            unpack = os.path.join(work, "unpack")
            shutil.unpack_archive(path, unpack)
            top = os.path.join(unpack, os.listdir(unpack)[0])
            for entry in os.listdir(top):
                src = os.path.join(top, entry)
                if entry.endswith(".py") and entry != "setup.py":
                    shutil.copy(src, project)
                elif os.path.isdir(src) and os.path.exists(os.path.join(src, "__init__.py")):
                    shutil.copytree(src, os.path.join(project, entry))
            shutil.rmtree(unpack)
    return project


def module_file(project, module):
    base = os.path.join(project, *module.split("."))
    return base + ".py" if os.path.exists(base + ".py") else os.path.join(base, "__init__.py")


def measure(python, project, tests_dir, modules, scratch):
    """Line and branch coverage per module, tests and passing, of the tests in tests_dir, run
    from the project root."""
    files = [module_file(project, m) for m in modules]
    data = os.path.join(scratch, ".coverage")
    env = dict(os.environ, PYTHONPATH=project, COVERAGE_FILE=data, PYTHONDONTWRITEBYTECODE="1",
               HOME=scratch, TMPDIR=scratch)
    junit = os.path.join(scratch, "junit.xml")
    run([python, "-m", "coverage", "run", "--branch", "--include=" + ",".join(files), "-m", "pytest", "-q",
         "-p", "no:cacheprovider", "-o", "addopts=", f"--junitxml={junit}", "--rootdir", project, tests_dir],
        cwd=project, env=env, as_nobody=True, timeout=1800)
    report = os.path.join(scratch, "cov.json")
    run([python, "-m", "coverage", "json", "-q", "-o", report], cwd=project, env=env, as_nobody=True)
    per = {}
    try:
        found = json.load(open(report))["files"]
    except (OSError, KeyError, ValueError):
        found = {}
    for m, f in zip(modules, files):
        rel = os.path.relpath(f, project)
        s = found.get(rel) or found.get(f) or {}
        summary = s.get("summary", {})
        if not summary:  # never imported by the tests: count its statements as missed
            summary = statements_of(python, f, scratch)
        per[m] = summary
    tests = failed = 0
    try:
        import xml.etree.ElementTree as ET
        for case in ET.parse(junit).getroot().iter("testcase"):
            tests += 1
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
    except Exception:  # noqa: BLE001 - no report: nothing ran
        pass
    return per, tests, tests - failed


def statements_of(python, path, scratch):
    """Statement and branch counts of a file no test imported (coverage's own analysis)."""
    code = ("import coverage, json, sys\n"
            "c = coverage.Coverage(branch=True, data_file=None)\n"
            "a = c._analyze(sys.argv[1])\n"
            "n = a.numbers\n"
            "print(json.dumps({'num_statements': n.n_statements, 'covered_lines': 0,"
            " 'num_branches': n.n_branches, 'covered_branches': 0}))\n")
    done = run([python, "-c", code, path], cwd=scratch)
    try:
        return json.loads(done.stdout)
    except ValueError:
        return {}


def ours(project, modules, seed, out_dir, scratch, source=None):
    """team-testing's helper (src/family/python/gen of this repository, or the folder `source`) on
    the modules, with the audit and isolation modules it imports beside it, as the binary writes them."""
    helper = os.path.join(scratch, "helper")
    family = os.path.join(ROOT, "src", "family", "python")
    shutil.copytree(source or os.path.join(family, "gen"), helper, dirs_exist_ok=True)
    for shared in ("ttaudit.py", "tt_isolation.py"):
        if not os.path.exists(os.path.join(helper, shared)):
            shutil.copy(os.path.join(family, shared), helper)
    open_up(helper)
    specs = [{"module": m, "file": os.path.relpath(module_file(project, m), project)} for m in modules]
    # No budget_s: the helper's default, per module, as the CLI sends it.
    request = {"modules": specs, "layer": "L1-unit", "seed": seed, "call_timeout_s": 2.0,
               "target_percent": 80}
    env = dict(os.environ, PYTHONPATH=project, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1",
               HOME=scratch, TMPDIR=scratch)
    started = time.monotonic()
    done = run([sys.executable, os.path.join(helper, "ttgen.py")], cwd=project, env=env,
               stdin=json.dumps(request), as_nobody=True)
    seconds = time.monotonic() - started
    try:
        result = json.loads(done.stdout)
    except ValueError:
        print(f"team-testing printed no result: {done.stderr[-2000:]}", file=sys.stderr)
        return seconds, 0
    os.makedirs(out_dir, exist_ok=True)
    for entry in result["modules"]:
        if entry.get("source"):
            with open(os.path.join(out_dir, entry["test_file"]), "w") as f:
                f.write(entry["source"])
    return seconds, len(result.get("findings", []))


def pipeline(binary, project, modules, seed, out_dir, scratch):
    """team-testing's whole targeted pipeline (strategist, generator, executor, every GC round)
    on the benchmarked modules: the package as a git repository whose last commit adds them, so
    the change scope is exactly those files. Its L1 files (what `apply` delivers) go to `out_dir`.
    The binary sandboxes the project's code itself; the sessions live in `scratch`."""
    repo = os.path.join(scratch, "repo")
    shutil.copytree(project, repo)
    files = [os.path.relpath(module_file(project, m), project) for m in modules]
    git = ["git", "-c", "user.email=bench@example.com", "-c", "user.name=bench"]
    run(git + ["init", "-q"], cwd=repo)
    run(git + ["add", "-A"], cwd=repo)
    run(git + ["rm", "-q", "--cached"] + files, cwd=repo)
    run(git + ["commit", "-q", "--allow-empty", "-m", "the rest of the package"], cwd=repo)
    run(git + ["add", "-A"], cwd=repo)
    run(git + ["commit", "-qm", "the modules under test"], cwd=repo)
    env = dict(os.environ, TEAM_TESTING_SESSIONS=os.path.join(scratch, "sessions"))
    started = time.monotonic()
    done = run([binary, "run", "test the package", "--repo", repo, "--base", "HEAD~1", "--pipeline",
                "targeted", "--layer", "L1", "--seed", str(seed), "--no-cache", "-y", "--json",
                "--completion", "keep"], cwd=repo, env=env, timeout=3600)
    seconds = time.monotonic() - started
    try:
        summary = json.loads(done.stdout)
    except ValueError:
        print(f"the pipeline printed no summary: {done.stderr[-2000:]}", file=sys.stderr)
        return seconds, 0
    layer = os.path.join(summary["session_dir"], "tests", "L1-unit")
    os.makedirs(out_dir, exist_ok=True)
    for name in sorted(os.listdir(layer)) if os.path.isdir(layer) else []:
        if name.endswith(".py"):
            shutil.copy(os.path.join(layer, name), out_dir)
    with open(os.path.join(summary["session_dir"], "session.json")) as f:
        rounds = (json.load(f).get("gc_rounds") or {}).get("L1", 0)
    print(f"pipeline: {rounds} GC round(s), status {summary.get('status')}", file=sys.stderr)
    return seconds, rounds


def pynguin(venv, project, modules, seconds_per_module, seed, out_dir, scratch):
    env = dict(os.environ, PYNGUIN_DANGER_AWARE="1", PYTHONPATH=project, HOME=scratch, TMPDIR=scratch)
    started = time.monotonic()
    for module in modules:
        done = run([os.path.join(venv, "bin", "pynguin"), "--project-path", project, "--module-name", module,
                    "--output-path", out_dir, "--maximum-search-time", str(seconds_per_module),
                    "--maximum-mutation-time", str(seconds_per_module), "--seed", str(seed)],
                   cwd=scratch, env=env, timeout=seconds_per_module * 10 + 300, as_nobody=True)
        if done.returncode != 0:
            print(f"pynguin on {module} exited {done.returncode}: {done.stderr[-500:]}", file=sys.stderr)
    return time.monotonic() - started


def pct(covered, total):
    return 100.0 * covered / total if total else 100.0


def extra_package(text):
    """`docstring_parser==0.16:docstring_parser.google,docstring_parser.rest` as a PACKAGES row."""
    spec, _, modules = text.partition(":")
    modules = [m.strip() for m in modules.split(",") if m.strip()]
    if "==" not in spec or not modules:
        sys.exit(f"--package {text}: want NAME==VERSION:MODULE[,MODULE...]")
    return spec, "held out (--package)", modules[0].split(".")[0], modules


def chosen_packages(opts):
    """The six (or those --only names), then the --package ones; --package alone runs only those."""
    six = [p for p in PACKAGES if (opts.only and p[2] in opts.only) or (not opts.only and not opts.package)]
    return six + [extra_package(text) for text in opts.package]


def main():
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--pynguin-seconds", type=int, default=20)
    args.add_argument("--seed", type=int, default=1)
    args.add_argument("--only", nargs="*", help="import roots to run (default: all six)")
    args.add_argument("--package", action="append", default=[], metavar="SPEC:MODULES",
                      help="another PyPI package and its modules, comma-separated (repeatable)")
    args.add_argument("--helper", action="append", default=[], metavar="NAME=DIR",
                      help="another version of the helper (a src/family/python/gen folder), measured as tool NAME")
    args.add_argument("--tools", default="team-testing,pynguin",
                      help="team-testing (the helper alone), pipeline (the whole targeted run of --bin), pynguin")
    args.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "team-testing"))
    args.add_argument("--keep", help="keep the scratch folder here (reused: Pynguin's venv)")
    args.add_argument("--venv", help="a virtualenv that already has pynguin, pytest and coverage")
    args.add_argument("--reuse-rows", help="rows.json of an earlier run: its rows for the tools not run now "
                                           "(Pynguin takes about 9 minutes) join the table")
    opts = args.parse_args()
    work = opts.keep or tempfile.mkdtemp(prefix="tt-bench-")
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o755)
    helpers = dict(h.split("=", 1) for h in opts.helper)
    tools = opts.tools.split(",") + [name for name in helpers if name not in opts.tools.split(",")]
    venv = opts.venv or os.path.join(work, "venv")
    if not os.path.exists(os.path.join(venv, "bin", "pynguin")):
        # Pynguin 0.48 wants CPython 3.10/3.11; the measurement uses this venv's pytest and coverage.
        base = "/usr/bin/python3.11" if os.path.exists("/usr/bin/python3.11") else sys.executable
        run([base, "-m", "venv", venv], cwd=work)
        pip = run([os.path.join(venv, "bin", "pip"), "install", "-q", "pynguin==0.48.0", "pytest", "coverage"],
                  cwd=work, timeout=1800)
        if pip.returncode != 0:
            sys.exit(f"cannot install pynguin: {pip.stderr[-2000:]}")
    python = os.path.join(venv, "bin", "python")
    version = run([python, "-c", "import importlib.metadata as m; print(m.version('pynguin'))"], cwd=work)
    rows = []
    for spec, style, root, modules in chosen_packages(opts):
        project = fetch(spec, work)
        for tool in tools:
            scratch = os.path.join(work, "scratch", tool, root)
            shutil.rmtree(scratch, ignore_errors=True)
            os.makedirs(scratch)
            out_dir = os.path.join(work, "out", tool, root)
            shutil.rmtree(out_dir, ignore_errors=True)
            os.makedirs(out_dir)
            open_up(work)
            if tool == "team-testing" or tool in helpers:
                seconds, _ = ours(project, modules, opts.seed, out_dir, scratch, helpers.get(tool))
            elif tool == "pipeline":
                seconds, _ = pipeline(opts.bin, project, modules, opts.seed, out_dir, scratch)
            else:
                seconds = pynguin(venv, project, modules, opts.pynguin_seconds, opts.seed, out_dir, scratch)
            open_up(out_dir)
            per, tests, passed = measure(python, project, out_dir, modules, scratch)
            row = {"package": spec, "style": style, "tool": tool, "seconds": seconds, "tests": tests,
                   "passed": passed, "modules": per}
            rows.append(row)
            lines = sum(p.get("covered_lines", 0) for p in per.values())
            stmts = sum(p.get("num_statements", 0) for p in per.values())
            br = sum(p.get("covered_branches", 0) for p in per.values())
            nbr = sum(p.get("num_branches", 0) for p in per.values())
            print(f"{spec:20} {tool:12} {seconds:6.1f}s tests {tests:4} passing {passed:4} "
                  f"lines {pct(lines, stmts):5.1f}% branches {pct(br, nbr):5.1f}%", file=sys.stderr, flush=True)
    if opts.reuse_rows:
        with open(opts.reuse_rows) as f:
            earlier = [r for r in json.load(f) if r["tool"] not in tools]
        order = [spec for spec, _, _, _ in chosen_packages(opts)]
        rows = sorted(rows + earlier, key=lambda r: (order.index(r["package"]) if r["package"] in order else 99,
                                                   r["tool"] != "team-testing"))
    with open(os.path.join(work, "rows.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print(f"Pynguin {version.stdout.strip()} ({opts.pynguin_seconds} s search per module), "
          f"seed {opts.seed}, Python {sys.version.split()[0]}.\n")
    print("| package | style | modules | tool | line coverage | branch coverage | tests | passing | time (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    pooled = {}
    for r in rows:
        per = r["modules"].values()
        lines = sum(p.get("covered_lines", 0) for p in per)
        stmts = sum(p.get("num_statements", 0) for p in per)
        br = sum(p.get("covered_branches", 0) for p in per)
        nbr = sum(p.get("num_branches", 0) for p in per)
        acc = pooled.setdefault(r["tool"], [0, 0, 0, 0, 0, 0, 0.0])
        for i, v in enumerate((lines, stmts, br, nbr, r["tests"], r["passed"], r["seconds"])):
            acc[i] += v
        print(f"| {r['package']} | {r['style']} | {len(r['modules'])} | {r['tool']} | {pct(lines, stmts):.1f} % "
              f"| {pct(br, nbr):.1f} % | {r['tests']} | {r['passed']} | {r['seconds']:.1f} |")
    for tool, (lines, stmts, br, nbr, tests, passed, seconds) in pooled.items():
        print(f"| **pooled** | | | {tool} | {pct(lines, stmts):.1f} % | {pct(br, nbr):.1f} % | {tests} | {passed} "
              f"| {seconds:.1f} |")
    if not opts.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
