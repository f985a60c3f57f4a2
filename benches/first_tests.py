#!/usr/bin/env python3
"""Benchmark: time to first tests on the six PyPI packages of generator_vs_pynguin.py (whole
packages, targeted pipeline, nothing cached).

    python3 benches/first_tests.py [--bin target/release/team-testing] [--only PKG ...] [--whole]

For each package: its source as a git repository of its own, then `team-testing run --pipeline
targeted -y --no-cache`. The run is followed through its log: the time to first tests is from the
session's start (`created_at`) to the generator's first message saying it wrote tests (its short
search's `first_tests`, else its round's `tests_written`), as the run summary's `first_tests_s`
counts it; the test files are counted then. The run is then stopped (SIGINT: the session pauses),
unless --whole lets it finish, which adds the run's wall time and its summary's first_tests_s.
Not run in CI.
"""
import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cache_rerun import chosen_repositories  # noqa: E402
from generator_vs_pynguin import PACKAGES  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ts(text):
    return datetime.datetime.fromisoformat(text)


def first_tests(sessions):
    """(seconds from the session's start, what the generator said) once it wrote tests."""
    for name in os.listdir(sessions) if os.path.isdir(sessions) else []:
        session = os.path.join(sessions, name)
        log = os.path.join(session, ".msg", "messages.jsonl")
        state = os.path.join(session, "session.json")
        if not (os.path.isfile(log) and os.path.isfile(state)):
            continue
        with open(log, encoding="utf-8") as f:
            for line in f:
                try:
                    m = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line still being written
                data = m.get("data") or {}
                if (m.get("from", "").startswith("generator") and m.get("type") == "progress"
                        and data.get("phase") in ("first_tests", "tests_written")
                        and not (data.get("detail") or "").startswith(("0 tests", "none"))):
                    with open(state, encoding="utf-8") as s:
                        started = ts(json.load(s)["created_at"])
                    return (ts(m["ts"]) - started).total_seconds(), data.get("detail")
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "team-testing"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--whole", action="store_true", help="let each run finish")
    opts = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tt-first-tests-")
    rows = []
    for name, project, _modules in chosen_repositories(PACKAGES, opts.only, work):
        sessions = os.path.join(work, "sessions", name)
        env = dict(os.environ, TEAM_TESTING_SESSIONS=sessions)
        started = time.monotonic()
        run = subprocess.Popen([opts.bin, "run", "test the package", "--repo", project, "--pipeline",
                                "targeted", "-y", "--no-cache", "--json", "--completion", "keep"],
                               cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True)
        found = None
        while found is None and run.poll() is None and time.monotonic() - started < 1800:
            time.sleep(0.2)
            found = first_tests(sessions)
        whole, summary_s = None, None
        if opts.whole:
            out, _ = run.communicate(timeout=3600)
            whole = time.monotonic() - started
            summary_s = json.loads(out).get("first_tests_s")
        else:
            run.send_signal(signal.SIGINT)
            run.communicate(timeout=120)
        found = found or first_tests(sessions)
        rows.append((name, found, whole, summary_s))
        print(f"{name}: {found}", file=sys.stderr)
    print("| package | first tests | what the generator said | whole run | summary's first_tests_s |")
    print("|---|---:|---|---:|---:|")
    for name, found, whole, summary_s in rows:
        seconds, said = found or (None, "no tests")
        print(f"| {name} | {seconds if seconds is None else f'{seconds:.1f} s'} | {said} "
              f"| {'' if whole is None else f'{whole:.1f} s'} | {summary_s or ''} |")


if __name__ == "__main__":
    main()
