#!/usr/bin/env python3
"""Benchmark: team-testing's mutation analysis of a project's own suite (`team-testing mutate`)
side by side with the tool its users trust, in one run, on the same suite and the same code:
Stryker (@stryker-mutator/core with the project's mocha) for JavaScript packages, cargo-mutants
for Rust crates. For each project: both tools' mutants, killed, survived, scores and wall times,
and the ratio of the wall times; then mutants per second for every family from our runs.

    # Stryker and its mocha runner (any folder; --stryker names its node_modules/.bin/stryker)
    npm install --prefix /opt/stryker @stryker-mutator/core @stryker-mutator/mocha-runner
    cargo install cargo-mutants --locked
    python3 benches/mutation_vs_field.py --bin target/release/team-testing \\
        --stryker /opt/stryker/node_modules/.bin/stryker \\
        --js DIR [--js DIR ...] --rust DIR [--rust DIR ...] [--go DIR ...] [--json OUT]

Each DIR is a project with its own tests and its dependencies installed (node_modules for a
package; a crate's come from cargo's registry, offline). The projects are copied into a work
folder first; neither tool writes into the DIR. Our run samples nothing: every mutant runs
(--max-mutants 100000), as both other tools do. Prints a Markdown table for BENCHMARKS.md.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def run(argv, cwd, env=None, timeout=7200):
    started = time.monotonic()
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - started


def copy(src, work, name):
    dst = os.path.join(work, name)
    shutil.copytree(src, dst, symlinks=True,
                    ignore=shutil.ignore_patterns("target", "reports", "mutants.out*", ".stryker-tmp"))
    return dst


def ours(bin_, repo, work):
    p, wall = run([bin_, "mutate", "--repo", repo, "--json", "--max-mutants", "100000",
                   "--budget-s", "7200", "--work-dir", os.path.join(work, "tt-work")], cwd=repo)
    if p.returncode != 0:
        sys.exit(f"team-testing mutate failed on {repo}:\n{p.stdout}{p.stderr}")
    s = json.loads(p.stdout)
    return {"tool": "team-testing", "mutants": s["mutants"], "killed": s["killed"],
            "survived": s["survived"] + s["no_coverage"], "unviable": s["unviable"],
            "score": s["score"], "wall_s": wall, "survivors": s["survivors"]}


def stryker(bin_, repo, files):
    conf = {"testRunner": "mocha", "mutate": files, "coverageAnalysis": "perTest",
            "reporters": ["json"], "concurrency": os.cpu_count() or 2,
            "tempDirName": os.path.join(repo, ".stryker-tmp")}
    with open(os.path.join(repo, "stryker.conf.json"), "w") as f:
        json.dump(conf, f)
    p, wall = run([bin_, "run"], cwd=repo)
    report = os.path.join(repo, "reports/mutation/mutation.json")
    if not os.path.exists(report):
        sys.exit(f"stryker wrote no report for {repo}:\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
    with open(report) as f:
        doc = json.load(f)
    counts = {}
    survivors = []
    for name, file in doc["files"].items():
        for m in file["mutants"]:
            counts[m["status"]] = counts.get(m["status"], 0) + 1
            if m["status"] in ("Survived", "NoCoverage"):
                survivors.append(f"{name}:{m['location']['start']['line']} {m['mutatorName']}")
    killed = counts.get("Killed", 0) + counts.get("Timeout", 0)
    survived = counts.get("Survived", 0) + counts.get("NoCoverage", 0)
    valid = killed + survived
    return {"tool": "Stryker", "mutants": valid, "killed": killed, "survived": survived,
            "unviable": counts.get("CompileError", 0) + counts.get("RuntimeError", 0),
            "score": round(100.0 * killed / valid, 1) if valid else 0.0, "wall_s": wall,
            "survivors": survivors}


def cargo_mutants(repo):
    env = dict(os.environ, CARGO_NET_OFFLINE="true")
    p, wall = run(["cargo", "mutants", "--no-shuffle", "-j", str(os.cpu_count() or 2)], cwd=repo, env=env)
    outcomes = os.path.join(repo, "mutants.out/outcomes.json")
    if not os.path.exists(outcomes):
        sys.exit(f"cargo-mutants wrote no outcomes for {repo}:\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
    with open(outcomes) as f:
        doc = json.load(f)
    caught, missed = doc.get("caught", 0) + doc.get("timeout", 0), doc.get("missed", 0)
    survivors = []
    for o in doc.get("outcomes", []):
        if o.get("summary") == "MissedMutant":
            m = o["scenario"]["Mutant"]
            survivors.append(f"{m['file']}:{m['span']['start']['line']} {m.get('genre', '')} {m.get('replacement', '')}")
    valid = caught + missed
    return {"tool": "cargo-mutants", "mutants": valid, "killed": caught, "survived": missed,
            "unviable": doc.get("unviable", 0),
            "score": round(100.0 * caught / valid, 1) if valid else 0.0, "wall_s": wall,
            "survivors": survivors}


def js_sources(repo):
    skip = {"node_modules", "test", "tests", "benchmark", "scripts", "reports", ".stryker-tmp"}
    out = []
    for root, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in skip and not d.startswith(".")]
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), repo)
            if f.endswith((".js", ".mjs", ".cjs", ".ts")) and not f.endswith((".test.js", ".spec.js", ".config.js")) \
                    and not f.startswith("stryker"):
                out.append(rel)
    return sorted(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/team-testing")
    ap.add_argument("--stryker", default="stryker")
    ap.add_argument("--js", action="append", default=[])
    ap.add_argument("--rust", action="append", default=[])
    ap.add_argument("--go", action="append", default=[])
    ap.add_argument("--work")
    ap.add_argument("--json")
    a = ap.parse_args()
    bin_ = os.path.abspath(a.bin)
    work = a.work or tempfile.mkdtemp(prefix="tt-mutation-bench-")
    rows, rates = [], []
    for kind, dirs in (("js", a.js), ("rust", a.rust), ("go", a.go)):
        for d in dirs:
            name = os.path.basename(os.path.normpath(d))
            mine = ours(bin_, copy(d, work, f"{name}-ours"), os.path.join(work, f"{name}-ours-work"))
            rates.append((kind, name, mine["mutants"] + mine["unviable"], mine["wall_s"]))
            if kind == "js":
                theirs = stryker(a.stryker, copy(d, work, f"{name}-stryker"), js_sources(d))
            elif kind == "rust":
                theirs = cargo_mutants(copy(d, work, f"{name}-cargo-mutants"))
            else:
                theirs = None
            rows.append((kind, name, mine, theirs))
    print("| project | tool | mutants | killed | survived | unviable | score | wall | ours/theirs |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind, name, mine, theirs in rows:
        for r in [mine] + ([theirs] if theirs else []):
            ratio = f"{mine['wall_s'] / theirs['wall_s']:.2f}" if theirs and r is mine else ""
            print(f"| {name} ({kind}) | {r['tool']} | {r['mutants']} | {r['killed']} | {r['survived']} | "
                  f"{r['unviable']} | {r['score']:.1f} % | {r['wall_s']:.1f} s | {ratio} |")
    print()
    print("| family | project | mutants run | wall | mutants/s |")
    print("|---|---|---:|---:|---:|")
    for kind, name, n, wall in rates:
        print(f"| {kind} | {name} | {n} | {wall:.1f} s | {n / wall:.2f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": [{"kind": k, "name": n, "ours": m, "theirs": t} for k, n, m, t in rows]}, f, indent=1)


if __name__ == "__main__":
    main()
