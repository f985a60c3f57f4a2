#!/usr/bin/env python3
"""How long the traceability report takes on a plan of many acceptance criteria.

Makes a git repository with a small Python package and REQ-*.md files holding CRITERIA acceptance
criteria (PER_FILE a file), plans it with `run --dry-run` (one scenario per criterion), then times
`report --format md`, `report --format csv` and `report --format html` on that session, each in a
process of its own, with its peak memory (maximum resident set size). A command that runs past
TIMEOUT seconds is killed and shown as such.

    cargo build --release
    python3 benches/traceability_scale.py [--criteria 100000] [--per-file 100] [--timeout 600]
                                          [--bin target/release/team-testing] [--keep]

Python 3 standard library only. Nothing outside a temporary folder is written.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PRICING = '''"""Prices."""


def apply_discount(price, percent):
    if percent < 0 or percent > 100:
        raise ValueError("percent out of range")
    return price - price * percent / 100


def total(prices):
    return sum(prices)
'''


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b")
    subprocess.run(["git", *args], cwd=repo, check=True, env=env, timeout=300)


def make_repo(repo, criteria, per_file):
    os.makedirs(os.path.join(repo, "shop"))
    with open(os.path.join(repo, "shop", "__init__.py"), "w") as f:
        f.write("")
    with open(os.path.join(repo, "shop", "pricing.py"), "w") as f:
        f.write(PRICING)
    os.makedirs(os.path.join(repo, "specs"))
    files = (criteria + per_file - 1) // per_file
    made = 0
    for n in range(1, files + 1):
        count = min(per_file, criteria - made)
        lines = [f"# REQ-{n:05d}: Pricing rule {n} <for the shop & its clients>", "",
                 "## Acceptance Criteria", ""]
        for i in range(1, count + 1):
            lines.append(f"- AC-{i}: Rule {n}.{i}: the total of the basket stays the sum of "
                         f"its prices when `total` is called with {i} item(s)")
        with open(os.path.join(repo, "specs", f"REQ-{n:05d}.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        made += count
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "bench")


def timed(argv, cwd, env, out_path, timeout):
    """(seconds, peak RSS in MB, exit code or None when killed at the timeout)."""
    start = time.monotonic()
    err_path = out_path + ".stderr"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err)
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout:
                child.kill()
                pid, status, usage = os.wait4(child.pid, 0)
                return time.monotonic() - start, usage.ru_maxrss / 1024, None
            time.sleep(0.02)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        with open(err_path, errors="replace") as f:
            sys.stderr.write(f.read()[-4000:])
    return time.monotonic() - start, usage.ru_maxrss / 1024, code


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--criteria", type=int, default=100_000)
    ap.add_argument("--per-file", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "team-testing"))
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()
    if not os.path.isfile(args.bin):
        sys.exit(f"{args.bin} is missing: cargo build --release first")
    tmp = tempfile.mkdtemp(prefix="tt-trace-")
    try:
        repo = os.path.join(tmp, "repo")
        make_repo(repo, args.criteria, args.per_file)
        env = dict(os.environ, TEAM_TESTING_SESSIONS=os.path.join(tmp, "sessions"))
        env.pop("TEAM_TESTING_LOG", None)
        rows = []
        plan_out = os.path.join(tmp, "plan.txt")
        secs, mb, code = timed([args.bin, "run", "test the shop", "--pipeline", "targeted",
                                "--dry-run", "-y"], repo, env, plan_out, args.timeout)
        rows.append(("run --dry-run", secs, mb, code, os.path.getsize(plan_out)))
        if code != 0:
            sys.exit("the plan failed")
        with open(plan_out) as f:
            session = next(line.split()[1] for line in f if line.startswith("Session "))
        for fmt in ("md", "csv", "html"):
            out = os.path.join(tmp, f"report.{fmt}")
            secs, mb, code = timed([args.bin, "report", session, "--format", fmt], repo, env, out,
                                   args.timeout)
            rows.append((f"report --format {fmt}", secs, mb, code, os.path.getsize(out)))
        print(f"{args.criteria} acceptance criteria in {-(-args.criteria // args.per_file)} "
              f"REQ files, session {session}\n")
        print("| command | time (s) | peak memory (MB) | output (bytes) |")
        print("|---|---|---|---|")
        for what, secs, mb, code, size in rows:
            shown = f"{secs:.2f}" if code is not None else f"killed at {args.timeout:.0f}"
            if code not in (0, None):
                shown += f" (exit {code})"
            print(f"| `{what}` | {shown} | {mb:.0f} | {size} |")
        if args.keep:
            print(f"\nkept: {tmp}")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
