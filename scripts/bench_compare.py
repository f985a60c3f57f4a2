#!/usr/bin/env python3
"""Whole-process benchmarks of team-testing (BENCHMARKS.md, "Runtime"):

1. `team-testing log --type X --from Y` over a large log against `jq -c 'select(...)'` and
   `grep -c` on the same file, in the same run, as ratios;
2. `status` and `resume` of a session with that log and many tasks;
3. end-to-end overhead of a standard pipeline on the Python fixture (wall time against the
   children's own time), and the overlap of the comprehensive pipeline's parallel windows.

    python3 scripts/bench_compare.py [--messages 1000000] [--tasks 10000] [--runs 5]

Needs jq, git, and python3 with pytest and coverage (requirements-test.txt). It builds the
release binary first (--debug: the debug one, which the tests' build shares: a smoke run whose
figures are not the benchmark's). Every figure is the median of --runs runs, with the min-max.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "team-testing"
SYNTH = ROOT / "target" / "release" / "examples" / "synth_session"
RELEASE = ["--release"]
TIMEOUT = 1800


def build():
    subprocess.run(
        ["cargo", "build", *RELEASE, "--locked", "--bin", "team-testing",
         "--example", "synth_session"],
        cwd=ROOT, check=True, timeout=TIMEOUT)


def timed(argv, env=None, stdout=subprocess.PIPE):
    # Output goes to a pipe, never /dev/null: GNU grep stops at the first match when its output
    # is /dev/null, which would time nothing.
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, env=env,
                          timeout=TIMEOUT)
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):  # grep -c exits 1 on zero matches
        sys.exit(f"{argv[0]} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return took


def summary(samples):
    return statistics.median(samples), min(samples), max(samples)


def fmt(samples, unit="s"):
    med, lo, hi = summary(samples)
    if unit == "ms":
        return f"{med * 1000:8.1f} ms ({lo * 1000:.1f}-{hi * 1000:.1f})"
    return f"{med:8.3f} s ({lo:.3f}-{hi:.3f})"


def count_lines(argv):
    out = subprocess.run(argv, stdout=subprocess.PIPE, check=True, timeout=TIMEOUT).stdout
    return out.count(b"\n")


def queries(sessions, sid, runs):
    log = sessions / sid / ".msg" / "messages.jsonl"
    size = log.stat().st_size
    kind, sender = "task_complete", "executor"
    ours = [str(BIN), "log", sid, "--sessions-dir", str(sessions), "--type", kind, "--from", sender]
    jq = ["jq", "-c", f'select(.type=="{kind}" and .from=="{sender}")', str(log)]
    grep = ["grep", "-c", f'"type":"{kind}"', str(log)]
    # The same answer first: team-testing and jq select the same records.
    n_ours = count_lines(ours + ["--json"])
    n_jq = count_lines(jq)
    if n_ours != n_jq:
        sys.exit(f"log found {n_ours} records, jq {n_jq}")
    times = {"team-testing log": [], "jq": [], "grep -c": []}
    for _ in range(runs):
        times["team-testing log"].append(timed(ours))
        times["jq"].append(timed(jq))
        times["grep -c"].append(timed(grep))
    print(f"\n## Log query over {size / 2**20:.0f} MiB ({n_ours} matches of type={kind} from={sender})")
    for name, samples in times.items():
        print(f"  {name:<18} {fmt(samples)}")
    ours_med = statistics.median(times["team-testing log"])
    print(f"  jq / team-testing   {statistics.median(times['jq']) / ours_med:6.1f}x (target >= 10x)")
    print(f"  team-testing / grep {ours_med / statistics.median(times['grep -c']):6.2f}x (target <= 2x)")


def status_and_resume(sessions, sid, runs, messages, tasks):
    base = [str(BIN)]
    where = ["--sessions-dir", str(sessions)]
    status = [timed(base + ["status", sid] + where) for _ in range(runs)]
    resume = [timed(base + ["resume", sid, "--completion", "keep"] + where) for _ in range(runs)]
    print(f"\n## Session of {messages} messages and {tasks} tasks")
    print(f"  status              {fmt(status, 'ms')} (target < 300 ms)")
    print(f"  resume (nothing left to run) {fmt(resume, 'ms')} (target < 300 ms)")


def fixture(tmp):
    repo = tmp / "repo"
    shutil.copytree(ROOT / "tests" / "fixtures" / "python-calc", repo)
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=b", "-c", "user.email=b@b",
                                                 "commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=repo, check=True, timeout=60)
    return repo


def intervals_union(spans):
    total, end = 0, None
    for start, stop in sorted(spans):
        if end is None or start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total


def end_to_end(runs, pipeline):
    walls, overheads, sums = [], [], []
    for _ in range(runs):
        tmp = Path(tempfile.mkdtemp(prefix="tt-e2e-"))
        try:
            repo = fixture(tmp)
            children = tmp / "children.jsonl"
            env = dict(os.environ, TEAM_TESTING_CHILD_LOG=str(children))
            argv = [str(BIN), "run", "test the calculator", "--repo", str(repo),
                    "--sessions-dir", str(tmp / "sessions"), "--pipeline", pipeline,
                    "-y", "--completion", "keep", "--json"]
            wall = timed(argv, env=env)
            lines = [json.loads(l) for l in children.read_text().splitlines() if l.strip()]
            spans = [(c["start_us"], c["start_us"] + c["wall_us"]) for c in lines]
            busy = intervals_union(spans) / 1e6
            walls.append(wall)
            overheads.append((wall - busy) / wall)
            sums.append(sum(c["wall_us"] for c in lines) / 1e6)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    med = statistics.median
    print(f"\n## End to end: {pipeline} pipeline on tests/fixtures/python-calc")
    print(f"  wall time                 {fmt(walls)}")
    print(f"  children's own time, serial sum {med(sums):.3f} s; wall / serial sum {med(walls) / med(sums):.2f}")
    print(f"  runtime's own share of the wall time (wall - time with a child running) "
          f"{med(overheads) * 100:.1f}% ({min(overheads) * 100:.1f}-{max(overheads) * 100:.1f}%)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--skip-e2e", action="store_true")
    ap.add_argument("--debug", action="store_true",
                    help="build and time the debug binary (a smoke run, not the benchmark)")
    args = ap.parse_args()
    for tool in ("jq", "grep", "git"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed (apt-get install {tool})")
    if args.debug:
        global BIN, SYNTH, RELEASE
        BIN = ROOT / "target" / "debug" / "team-testing"
        SYNTH = ROOT / "target" / "debug" / "examples" / "synth_session"
        RELEASE = []
    build()
    print(f"machine: {os.cpu_count()} cores, "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB")
    tmp = Path(tempfile.mkdtemp(prefix="tt-bench-"))
    try:
        sessions = tmp / "sessions"
        sid = subprocess.run([str(SYNTH), str(sessions), str(args.messages), str(args.tasks)],
                             stdout=subprocess.PIPE, check=True, timeout=TIMEOUT).stdout.decode().strip()
        # A warm page cache for every tool alike.
        (sessions / sid / ".msg" / "messages.jsonl").read_bytes()
        queries(sessions, sid, args.runs)
        status_and_resume(sessions, sid, args.runs, args.messages, args.tasks)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not args.skip_e2e:
        end_to_end(args.runs, "standard")
        end_to_end(args.runs, "comprehensive")


if __name__ == "__main__":
    main()
