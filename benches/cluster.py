#!/usr/bin/env python3
"""What running the team on cluster workers costs and buys, on this machine.

Starts a real `nats-server -js` on 127.0.0.1 (an unused port, a temp store, its monitoring port
on), then, all in the same run:

1. Round trip. The standard pipeline on a copy of tests/fixtures/python-calc, RUNS times locally
   and RUNS times with `--nats` and two workers (one generator, one executor). Per remote task
   type (TESTGEN, TESTRUN), the median time from the coordinator handing the task out
   (task_unblocked) to its task_complete, local against remote: the difference is what one remote
   round trip adds (queue, bundle and inputs, the worker's copy of the session, results back).
2. A sharded layer. A project whose every call does real work (MODULES modules, each function
   sleeps SLEEP s): its TESTRUN layers with one remote executor, and with `--shards 2` on two
   remote executors (the generator's tests are the same in both: its search is seeded per module),
   SHARD_RUNS times each.
3. What the stream carried: messages and bytes per stream from the server's /jsz, per task.

    cargo build --release
    python3 benches/cluster.py [--runs 3] [--modules 6] [--sleep 0.1] [--shard-runs 1]
                               [--skip-round-trip] [--bin target/release/team-testing]
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from datetime import datetime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, limit=10.0):
    end = time.time() + limit
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nats-server did not listen on {port}")


def git_repo(path):
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b")
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", *args], cwd=path, check=True, env=env, timeout=60)


def ts(value):
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def task_times(session):
    """Task id -> seconds from task_unblocked to task_complete, from the message log."""
    handed, done = {}, {}
    with open(os.path.join(session, ".msg", "messages.jsonl")) as f:
        for line in f:
            m = json.loads(line)
            tid = (m.get("data") or {}).get("task_id")
            if m["type"] == "task_unblocked":
                handed.setdefault(tid, ts(m["ts"]))
            elif m["type"] == "task_complete":
                done[tid] = ts(m["ts"])
    return {t: done[t] - handed[t] for t in done if t in handed}


def run_pipeline(binary, project, sessions, extra, label):
    repo = tempfile.mkdtemp(prefix="tt-bench-repo-")
    shutil.rmtree(repo)
    shutil.copytree(project, repo)
    git_repo(repo)
    env = dict(os.environ, TEAM_TESTING_SESSIONS=sessions)
    started = time.monotonic()
    out = subprocess.run([binary, "run", "bench", "--pipeline", "standard", "--yes", "--json", *extra],
                         cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    wall = time.monotonic() - started
    if out.returncode != 0:
        sys.exit(f"{label}: exit {out.returncode}\n{out.stderr[-3000:]}")
    session = json.loads(out.stdout)["session_dir"]
    shutil.rmtree(repo, ignore_errors=True)
    return wall, task_times(session)


class Cluster:
    def __init__(self, binary, tmp):
        self.binary, self.tmp = binary, tmp
        self.port, self.http = free_port(), free_port()
        self.server = subprocess.Popen(
            ["nats-server", "-js", "-a", "127.0.0.1", "-p", str(self.port), "-m", str(self.http),
             "-sd", os.path.join(tmp, "js")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port)
        self.url = f"nats://127.0.0.1:{self.port}"
        self.workers = []

    def worker(self, name, roles):
        log = open(os.path.join(self.tmp, f"{name}.log"), "w")
        self.workers.append(subprocess.Popen(
            [self.binary, "worker", "--nats", self.url, "--roles", roles, "--name", name,
             "--dir", os.path.join(self.tmp, name)], stdout=log, stderr=log))

    def stop_workers(self):
        for w in self.workers:
            w.terminate()
        for w in self.workers:
            try:
                w.wait(timeout=10)
            except subprocess.TimeoutExpired:
                w.kill()
        self.workers = []

    def wait_listed(self, names):
        end = time.time() + 30
        while time.time() < end:
            out = subprocess.run([self.binary, "workers", "--nats", self.url, "--json"],
                                 capture_output=True, text=True, timeout=30)
            listed = {w["name"] for w in json.loads(out.stdout or "[]")} if out.returncode == 0 else set()
            if set(names) <= listed:
                return
            time.sleep(0.3)
        sys.exit(f"workers {names} not listed")

    def streams(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http}/jsz?streams=true", timeout=10) as r:
            jsz = json.load(r)
        out = {}
        for account in jsz.get("account_details", []):
            for s in account.get("stream_detail", []):
                state = s.get("state", {})
                out[s["name"]] = (state.get("messages", 0), state.get("bytes", 0))
        return out

    def close(self):
        self.stop_workers()
        self.server.terminate()
        self.server.wait(timeout=10)


def slow_project(path, modules, sleep):
    os.makedirs(os.path.join(path, "work"))
    open(os.path.join(path, "work", "__init__.py"), "w").close()
    open(os.path.join(path, "pyproject.toml"), "w").write("[tool.pytest.ini_options]\ntestpaths = []\n")
    for i in range(modules):
        open(os.path.join(path, "work", f"m{i}.py"), "w").write(textwrap.dedent(f"""\
            import time


            def scale{i}(n: int) -> int:
                time.sleep({sleep})
                if n < 0:
                    return -n * {i + 2}
                return n * {i + 2}
            """))


def median_by_kind(times_list, prefix):
    values = [t for times in times_list for tid, t in times.items() if tid.startswith(prefix)]
    return statistics.median(values) if values else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "team-testing"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--modules", type=int, default=6)
    ap.add_argument("--sleep", type=float, default=0.1)
    ap.add_argument("--shard-runs", type=int, default=1,
                    help="runs of each side of the sharded-layer comparison")
    ap.add_argument("--skip-round-trip", action="store_true")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    if not os.path.exists(binary):
        sys.exit(f"{binary}: build it first (cargo build --release)")
    if shutil.which("nats-server") is None:
        sys.exit("nats-server is not on PATH (apt-get install nats-server)")
    tmp = tempfile.mkdtemp(prefix="tt-cluster-bench-")
    sessions = os.path.join(tmp, "sessions")
    calc = os.path.join(ROOT, "tests", "fixtures", "python-calc")
    cluster = Cluster(binary, tmp)
    try:
        # 1. Round trip.
        local, remote, walls = [], [], {"local": [], "remote": []}
        if args.skip_round_trip:
            args.runs = 0
        for _ in range(args.runs):
            wall, times = run_pipeline(binary, calc, sessions, [], "local")
            local.append(times)
            walls["local"].append(wall)
        cluster.worker("gen-1", "generator")
        cluster.worker("exe-1", "executor")
        cluster.wait_listed(["gen-1", "exe-1"])
        before = cluster.streams()
        for _ in range(args.runs):
            wall, times = run_pipeline(binary, calc, sessions, ["--nats", cluster.url], "remote")
            remote.append(times)
            walls["remote"].append(wall)
        after = cluster.streams()
        if args.runs:
            print_round_trip(args.runs, local, remote, walls, before, after)
        shard_part(args, binary, cluster, sessions, tmp)
    finally:
        cluster.close()
        shutil.rmtree(tmp, ignore_errors=True)


def print_round_trip(runs, local, remote, walls, before, after):
    print(f"## Round trip (python-calc, standard pipeline, {runs} runs each, medians)\n")
    print("| task | local (s) | remote (s) | remote - local (s) |")
    print("|---|---|---|---|")
    for kind in ("TESTGEN", "TESTRUN"):
        lo, re_ = median_by_kind(local, kind), median_by_kind(remote, kind)
        print(f"| {kind} | {lo:.3f} | {re_:.3f} | {re_ - lo:+.3f} |")
    lw, rw = statistics.median(walls["local"]), statistics.median(walls["remote"])
    print(f"| whole run (wall) | {lw:.2f} | {rw:.2f} | {rw - lw:+.2f} |\n")
    tasks = 4 * runs
    print(f"## What the streams carried for {runs} remote runs ({tasks} remote tasks)\n")
    print("| stream | messages | bytes | messages per task | bytes per task |")
    print("|---|---|---|---|---|")
    for name in sorted(after):
        m0, b0 = before.get(name, (0, 0))
        m1, b1 = after[name]
        print(f"| {name} | {m1 - m0} | {b1 - b0} | {(m1 - m0) / tasks:.1f} | {(b1 - b0) / tasks:.0f} |")
    print()


def shard_part(args, binary, cluster, sessions, tmp):
    # 2. A sharded layer.
    cluster.stop_workers()
    slow = os.path.join(tmp, "slow")
    slow_project(slow, args.modules, args.sleep)
    cluster.worker("gen-1", "generator")
    cluster.worker("exe-1", "executor")
    cluster.wait_listed(["gen-1", "exe-1"])
    one = [run_pipeline(binary, slow, sessions, ["--nats", cluster.url], "one executor")[1]
           for _ in range(args.shard_runs)]
    cluster.worker("exe-2", "executor")
    cluster.wait_listed(["gen-1", "exe-1", "exe-2"])
    two = [run_pipeline(binary, slow, sessions, ["--nats", cluster.url, "--shards", "2"],
                        "two shards")[1] for _ in range(args.shard_runs)]
    print(f"## A sharded layer ({args.modules} modules, each call sleeps {args.sleep} s; "
          f"{args.shard_runs} run(s) each, medians)\n")
    print("| layer run | 1 remote executor (s) | 2 shards on 2 executors (s) | speed-up |")
    print("|---|---|---|---|")
    for tid in ("TESTRUN-001", "TESTRUN-002"):
        a = statistics.median(t[tid] for t in one if tid in t)
        b = statistics.median(t[tid] for t in two if tid in t)
        print(f"| {tid} | {a:.2f} | {b:.2f} | {a / b:.2f}x |")


if __name__ == "__main__":
    main()
