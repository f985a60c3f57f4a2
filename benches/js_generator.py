#!/usr/bin/env python3
"""Benchmark: team-testing's built-in JavaScript/TypeScript generator (src/family/node/gen/ttgen.mjs) on every
module of the JS fixtures, side by side with the Python generator (src/family/python/gen/ttgen.py) on Python twins
of the same modules (benches/js_equivalents/textkit). For each module: the generator's wall time,
how many tests it wrote, how many pass, and the module's line coverage reached by those tests alone,
measured by the project's own runner (node --test, jest or vitest with their LCOV; pytest under
coverage.py for Python).

    python3 benches/js_generator.py [--seed 7] [--budget 20]

Needs node >= 20 and the fixtures' packages (npm ci in tests/fixtures/js-deps). Results are printed
as a Markdown table for BENCHMARKS.md.
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
DEPS = os.path.join(FIXTURES, "js-deps", "node_modules")
HELPER = os.path.join(ROOT, "src", "family", "node", "gen", "ttgen.mjs")
# (fixture, framework, module, file, Python twin)
MODULES = [
    ("js-esm", "node", "strings", "src/strings.js", "textkit.strings"),
    ("js-esm", "node", "stack", "src/stack.js", "textkit.stack"),
    ("js-esm", "node", "buggy", "src/buggy.js", "textkit.buggy"),
    ("js-cjs", "node", "strings", "lib/strings.js", None),
    ("js-cjs", "node", "money", "lib/money.js", None),
    ("js-cjs", "node", "buggy", "lib/buggy.js", None),
    ("js-ts", "node", "strings", "src/strings.ts", None),
    ("js-ts", "node", "counter", "src/counter.ts", None),
    ("js-ts", "node", "buggy", "src/buggy.ts", None),
    ("js-jest", "jest", "strings", "src/strings.js", None),
    ("js-jest", "jest", "money", "src/money.js", None),
    ("js-jest", "jest", "buggy", "src/buggy.js", None),
    ("js-vitest", "vitest", "strings", "src/strings.js", None),
    ("js-vitest", "vitest", "stack", "src/stack.js", None),
    ("js-vitest", "vitest", "buggy", "src/buggy.js", None),
]


def run(argv, cwd, env=None, timeout=600, stdin=None):
    return subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=timeout)


def lcov_lines(path, module_file):
    """(lines found, lines hit) of module_file in an LCOV file."""
    found = hit = 0
    current = None
    try:
        text = open(path).read()
    except OSError:
        return 0, 0
    for line in text.splitlines():
        if line.startswith("SF:"):
            current = line[3:]
        elif line.startswith("DA:") and current and current.endswith(module_file):
            found += 1
            hit += int(line.split(",")[1]) > 0
    return found, hit


def junit_counts(path):
    import xml.etree.ElementTree as ET
    tests = failed = 0
    try:
        for case in ET.parse(path).getroot().iter("testcase"):
            tests += 1
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
    except (OSError, ET.ParseError):
        pass
    return tests, tests - failed


def js_row(fixture, framework, module, module_file, seed, budget, work):
    project = os.path.join(work, fixture)
    if not os.path.isdir(project):
        shutil.copytree(os.path.join(FIXTURES, fixture), project)
        os.symlink(DEPS, os.path.join(project, "node_modules"))
    request = json.dumps({"modules": [{"module": module, "file": module_file}], "layer": "L1-unit",
                          "seed": seed, "budget_s": budget, "call_timeout_s": 2.0,
                          "target_percent": 100, "framework": framework})
    started = time.monotonic()
    done = run(["node", HELPER], cwd=project, stdin=request, timeout=budget + 120)
    seconds = time.monotonic() - started
    entry = json.loads(done.stdout)["modules"][0]
    tests_dir = os.path.join(project, "tt-tests", "bench")
    shutil.rmtree(tests_dir, ignore_errors=True)
    os.makedirs(tests_dir)
    test_file = os.path.join(tests_dir, entry["test_file"])
    with open(test_file, "w") as f:
        f.write(entry["source"])
    rel = os.path.relpath(test_file, project)
    junit = os.path.join(work, "junit.xml")
    cov = os.path.join(work, "cov")
    shutil.rmtree(cov, ignore_errors=True)
    for stale in (junit,):
        if os.path.exists(stale):
            os.remove(stale)
    env = dict(os.environ, CI="1", NO_COLOR="1")
    if framework == "node":
        lcov = os.path.join(work, "lcov.info")
        run(["node", "--test", "--experimental-test-coverage", "--test-reporter=junit",
             f"--test-reporter-destination={junit}", "--test-reporter=lcov",
             f"--test-reporter-destination={lcov}", rel], cwd=project, env=env)
    elif framework == "jest":
        lcov = os.path.join(cov, "lcov.info")
        # The JUnit reporter team-testing's runner uses (the fixtures install no jest-junit).
        env.update(TT_JEST_JUNIT=junit)
        reporter = os.path.join(ROOT, "src", "family", "node", "jest_junit.cjs")
        run([os.path.join(project, "node_modules/.bin/jest"), "--ci", f"--reporters={reporter}",
             "--coverage", "--coverageReporters=lcov", f"--coverageDirectory={cov}", "--runTestsByPath",
             rel], cwd=project, env=env)
    else:
        lcov = os.path.join(cov, "lcov.info")
        run([os.path.join(project, "node_modules/.bin/vitest"), "run", "--reporter=junit",
             f"--outputFile.junit={junit}", "--coverage.enabled=true", "--coverage.reporter=lcov",
             "--coverage.reportOnFailure=true", f"--coverage.reportsDirectory={cov}", rel],
            cwd=project, env=env)
    tests, passed = junit_counts(junit)
    found, hit = lcov_lines(lcov, module_file)
    return seconds, tests, passed, 100.0 * hit / max(1, found)


def py_row(twin, seed, budget, work):
    spec = importlib.util.spec_from_file_location("gvp", os.path.join(ROOT, "benches", "generator_vs_pynguin.py"))
    gvp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gvp)
    project = os.path.join(ROOT, "benches", "js_equivalents")
    out_dir = os.path.join(work, "py-" + twin)
    shutil.rmtree(out_dir, ignore_errors=True)
    # The Python helper runs with its own default budget per module, as the CLI sends it.
    os.chmod(work, 0o755)  # the Python helper and pytest run as nobody, inside it
    scratch = tempfile.mkdtemp(dir=work)
    gvp.open_up(scratch)
    seconds, _ = gvp.ours(project, [twin], seed, out_dir, scratch)
    per, tests, passed = gvp.measure(sys.executable, project, out_dir, [twin], scratch)
    s = per.get(twin, {})
    cov = 100.0 * s.get("covered_lines", 0) / max(1, s.get("num_statements", 0))
    return seconds, tests, passed, cov


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--budget", type=float, default=20)
    args = parser.parse_args()
    if not os.path.isdir(DEPS):
        sys.exit("the JS fixtures' packages are missing: npm ci --prefix tests/fixtures/js-deps")
    print("| fixture | framework | module | time (s) | tests | passing | line coverage | Python twin: time (s) | tests | passing | line coverage |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="tt-js-bench-") as work:
        for fixture, framework, module, module_file, twin in MODULES:
            s, t, p, c = js_row(fixture, framework, module, module_file, args.seed, args.budget, work)
            row = f"| {fixture} | {framework} | {module_file} | {s:.1f} | {t} | {p} | {c:.1f} % |"
            if twin:
                ps, pt, pp, pc = py_row(twin, args.seed, args.budget, work)
                row += f" {ps:.1f} | {pt} | {pp} | {pc:.1f} % |"
            else:
                row += " | | | |"
            print(row, flush=True)


if __name__ == "__main__":
    main()
