#!/usr/bin/env python3
"""Benchmark: team-testing's built-in Python generator (src/gen/ttgen.py) against Pynguin on the same
fixture modules with the same time budget. For each module and tool: the wall time the generator took,
how many tests it wrote, how many of them pass, and the line coverage of the module that its tests
reach, measured the same way for both (coverage.py over the generated tests alone).

    python3 benches/generator_vs_pynguin.py [--budget 20] [--seed 1]

Pynguin is installed into its own virtualenv under a temporary folder (pip package `pynguin`).
Results are printed as a Markdown table for BENCHMARKS.md.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = [
    ("python-calc", "calc.ops", "calc/ops.py"),
    ("python-calc", "calc.tokenizer", "calc/tokenizer.py"),
    ("python-buggy", "inventory.pricing", "inventory/pricing.py"),
    ("python-contracts", "shapes.geometry", "shapes/geometry.py"),
]


def run(argv, cwd, env=None, timeout=600, stdin=None):
    return subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=timeout)


def measure(python, project, tests_dir, module_file):
    """(tests, passed, line coverage %) of the tests in tests_dir over module_file."""
    data = os.path.join(tests_dir, ".coverage")
    env = dict(os.environ, PYTHONPATH=project, COVERAGE_FILE=data, PYTHONDONTWRITEBYTECODE="1")
    junit = os.path.join(tests_dir, "junit.xml")
    run([python, "-m", "coverage", "run", f"--include={os.path.join(project, module_file)}", "-m", "pytest",
         "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", tests_dir], cwd=tests_dir, env=env)
    report = os.path.join(tests_dir, "cov.json")
    run([python, "-m", "coverage", "json", "-q", "-o", report], cwd=tests_dir, env=env)
    try:
        totals = json.load(open(report))["totals"]
        cov = 100.0 * totals["covered_lines"] / max(1, totals["num_statements"])
    except (OSError, KeyError, ValueError):
        cov = 0.0
    tests = failed = 0
    try:
        text = open(junit).read()
        import xml.etree.ElementTree as ET
        for case in ET.fromstring(text).iter("testcase"):
            tests += 1
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
    except (OSError, Exception):  # noqa: BLE001 - no report: nothing ran
        pass
    return tests, tests - failed, cov


def ours(project, module, module_file, budget, seed, out_dir):
    request = json.dumps({"modules": [{"module": module, "file": module_file}], "layer": "L1-unit",
                          "seed": seed, "budget_s": budget, "call_timeout_s": 2.0, "target_percent": 100})
    env = dict(os.environ, PYTHONPATH=project, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    started = time.monotonic()
    done = run([sys.executable, os.path.join(ROOT, "src/gen/ttgen.py")], cwd=project, env=env,
               stdin=request, timeout=budget + 120)
    seconds = time.monotonic() - started
    result = json.loads(done.stdout)
    entry = result["modules"][0]
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, entry["test_file"]), "w") as f:
        f.write(entry["source"])
    return seconds


def pynguin(venv, project, module, budget, seed, out_dir):
    env = dict(os.environ, PYNGUIN_DANGER_AWARE="1", PYTHONPATH=project)
    started = time.monotonic()
    run([os.path.join(venv, "bin", "pynguin"), "--project-path", project, "--module-name", module,
         "--output-path", out_dir, "--maximum-search-time", str(budget), "--seed", str(seed)],
        cwd=project, env=env, timeout=budget * 4 + 300)
    return time.monotonic() - started


def main():
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--budget", type=int, default=20)
    args.add_argument("--seed", type=int, default=1)
    opts = args.parse_args()
    work = tempfile.mkdtemp(prefix="tt-bench-")
    venv = os.path.join(work, "pynguin-venv")
    run([sys.executable, "-m", "venv", venv], cwd=work)
    pip = run([os.path.join(venv, "bin", "pip"), "install", "-q", "pynguin", "pytest", "coverage"], cwd=work,
              timeout=1200)
    if pip.returncode != 0:
        sys.exit(f"cannot install pynguin: {pip.stderr[-2000:]}")
    version = run([os.path.join(venv, "bin", "pip"), "show", "pynguin"], cwd=work).stdout
    version = next((l.split(":", 1)[1].strip() for l in version.splitlines() if l.startswith("Version")), "?")
    rows = []
    for fixture, module, module_file in MODULES:
        project = os.path.join(work, fixture)
        if not os.path.isdir(project):
            shutil.copytree(os.path.join(ROOT, "tests/fixtures", fixture), project)
        for tool in ("team-testing", "pynguin"):
            out_dir = os.path.join(work, "out", tool, module)
            if tool == "team-testing":
                seconds = ours(project, module, module_file, opts.budget, opts.seed, out_dir)
                python = sys.executable
            else:
                seconds = pynguin(venv, project, module, opts.budget, opts.seed, out_dir)
                python = os.path.join(venv, "bin", "python")
            tests, passed, cov = measure(python, project, out_dir, module_file)
            rows.append((module, tool, seconds, tests, passed, cov))
            print(f"{module:20} {tool:12} {seconds:6.1f}s tests {tests:3} passing {passed:3} line coverage {cov:5.1f}%",
                  file=sys.stderr, flush=True)
    print(f"Budget {opts.budget} s per module, seed {opts.seed}, Pynguin {version}, Python {sys.version.split()[0]}.\n")
    print("| module | tool | time (s) | tests | passing | line coverage |")
    print("|---|---|---|---|---|---|")
    for module, tool, seconds, tests, passed, cov in rows:
        print(f"| {module} | {tool} | {seconds:.1f} | {tests} | {passed} | {cov:.1f} % |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
