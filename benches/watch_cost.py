#!/usr/bin/env python3
"""What the file-system watch costs a run: the standard pipeline on a fixture, run RUNS times
with the watch and RUNS times without it (TEAM_TESTING_SANDBOX_DISABLE=watch), alternating, each
in a fresh sessions folder; the median wall time of each and their ratio.

    cargo build --release
    python3 benches/watch_cost.py [--fixture python-calc] [--runs 5] [--bin target/release/team-testing]

Python 3 standard library only. Nothing outside a temporary folder is written.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=60)


def one_run(binary, repo, scratch, watch):
    sessions = tempfile.mkdtemp(dir=scratch)
    env = dict(os.environ)
    if not watch:
        env["TEAM_TESTING_SANDBOX_DISABLE"] = "watch"
    started = time.monotonic()
    done = subprocess.run(
        [binary, "run", "test the project", "--repo", repo, "--pipeline", "standard", "-y",
         "--seed", "1", "--sessions-dir", sessions],
        env=env, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"the run failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixture", default="python-calc")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bin", default=os.path.join(ROOT, "target/release/team-testing"))
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="tt-watch-cost-")
    try:
        repo = os.path.join(scratch, "repo")
        shutil.copytree(os.path.join(ROOT, "tests/fixtures", args.fixture), repo)
        git(repo, "init", "-q")
        git(repo, "add", ".")
        git(repo, "-c", "user.name=bench", "-c", "user.email=bench@example.com",
            "commit", "-q", "-m", "fixture")
        one_run(args.bin, repo, scratch, True)  # warm-up: caches, the sandbox's probe
        watched, plain = [], []
        for _ in range(args.runs):
            watched.append(one_run(args.bin, repo, scratch, True))
            plain.append(one_run(args.bin, repo, scratch, False))
        w, p = statistics.median(watched), statistics.median(plain)
        print(f"fixture {args.fixture}, {args.runs} runs each, standard pipeline")
        print(f"with the watch:    median {w:.2f} s  (min {min(watched):.2f}, max {max(watched):.2f})")
        print(f"without the watch: median {p:.2f} s  (min {min(plain):.2f}, max {max(plain):.2f})")
        print(f"ratio: {w / p:.3f}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
