#!/usr/bin/env python3
"""Benchmark: a second run on an unchanged package, and a run after one module changed, against
the first run (issue 39's cache of generated tests), on the six PyPI packages of
generator_vs_pynguin.py.

    python3 benches/cache_rerun.py [--bin target/release/team-testing] [--only PKG ...]

For each package: its source as a git repository of its own, then `team-testing run --pipeline
targeted -y --json` three times with the same sessions root: the first run (nothing cached), the
second (nothing changed), the third after a function was appended to the first benchmarked module
and committed. Prints, per package, the wall time of each run, the second's share of the first,
whether the second delivered the same test files with the same L1 coverage, the first run's
time to first tests (the run summary's `first_tests_s`), and which modules the third run
searched (from the generator's own words). Not run in CI.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generator_vs_pynguin import PACKAGES, fetch, module_file  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def git(repo, *args):
    subprocess.run(["git", "-c", "user.email=bench@example.com", "-c", "user.name=bench", *args],
                   cwd=repo, check=True, capture_output=True, timeout=120)


def chosen_repositories(packages, only, work):
    """(package name, its source as a git repository of its own, its benchmarked modules) for
    each package `only` names (every package when it names none)."""
    for spec, _style, _root, modules in packages:
        name = spec.split("==")[0]
        if only and name not in only:
            continue
        project = fetch(spec, work)
        git(project, "init", "-q")
        git(project, "add", "-A")
        git(project, "commit", "-qm", "the package")
        yield name, project, modules


def team_run(binary, repo, sessions):
    """One targeted run; (seconds, the --json summary, the session folder)."""
    env = dict(os.environ, TEAM_TESTING_SESSIONS=sessions)
    started = time.monotonic()
    done = subprocess.run([binary, "run", "test the package", "--repo", repo, "--pipeline",
                           "targeted", "-y", "--json", "--completion", "keep"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=3600)
    seconds = time.monotonic() - started
    try:
        summary = json.loads(done.stdout)
    except json.JSONDecodeError:
        sys.exit(f"no summary from {repo}: {done.stdout[-800:]}{done.stderr[-1500:]}")
    return seconds, summary, summary["session_dir"]


def tests_of(session):
    """The session's L1 test files as the generator wrote them: name -> text."""
    out = {}
    for folder in ("tests/L1-unit", "workspace/unminimized/L1-unit"):
        path = os.path.join(session, folder)
        for name in sorted(os.listdir(path)) if os.path.isdir(path) else []:
            if name.endswith(".py"):
                with open(os.path.join(path, name), encoding="utf-8") as f:
                    out[name] = f.read()
    return out


def cache_words(session):
    """What the L1 generator said of the cache."""
    with open(os.path.join(session, "tasks.json"), encoding="utf-8") as f:
        tasks = json.load(f)["tasks"]
    for t in tasks:
        if t.get("owner") == "generator" and t.get("layer") == "L1-unit" and t.get("outcome"):
            return t["outcome"].get("data", {}).get("cache") or "nothing reused"
    return "no generator task"


def l1_coverage(summary):
    return (summary.get("layers", {}).get("L1-unit") or {}).get("coverage")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "team-testing"))
    ap.add_argument("--only", nargs="*")
    opts = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tt-cache-bench-")
    rows = []
    for name, project, modules in chosen_repositories(PACKAGES, opts.only, work):
        sessions = os.path.join(work, "sessions", name)
        first_s, first, first_dir = team_run(opts.bin, project, sessions)
        second_s, second, second_dir = team_run(opts.bin, project, sessions)
        with open(module_file(project, modules[0]), "a", encoding="utf-8") as f:
            f.write("\n\ndef tt_bench_added(x):\n    return x\n")
        git(project, "commit", "-qam", "one module changed")
        third_s, _third, third_dir = team_run(opts.bin, project, sessions)
        same = tests_of(first_dir) == tests_of(second_dir)
        rows.append((name, first_s, first.get("first_tests_s"), second_s, same,
                     l1_coverage(first), l1_coverage(second), third_s, modules[0],
                     cache_words(second_dir), cache_words(third_dir)))
        print(f"{name}: {first_s:.1f} s, then {second_s:.1f} s, then {third_s:.1f} s", file=sys.stderr)
    print("| package | first run | first tests | second run | second / first | same tests, coverage "
          "| changed module | third run | the third run's generator |")
    print("|---|---:|---:|---:|---:|---|---|---:|---|")
    for (name, a, ttft, b, same, cov_a, cov_b, c, changed, _said2, said3) in rows:
        cov = f"{cov_a} / {cov_b}" if cov_a == cov_b else f"differ: {cov_a} / {cov_b}"
        print(f"| {name} | {a:.1f} s | {ttft} s | {b:.1f} s | {100 * b / a:.0f} % "
              f"| {'yes' if same else 'NO'}, {cov} | {changed} | {c:.1f} s | {said3} |")
    if rows:
        a = sum(r[1] for r in rows)
        b = sum(r[3] for r in rows)
        print(f"| all | {a:.1f} s | | {b:.1f} s | {100 * b / a:.0f} % | | | | |")


if __name__ == "__main__":
    main()
