#!/usr/bin/env python3
"""Benchmark: team-testing's built-in Rust generator (src/family/rust/gen/) on real crates from
crates.io, fetched at bench time (not committed). For each crate: the whole standard pipeline's
wall time, the tests it delivered, and line coverage of the crate's library files measured by
cargo-llvm-cov three ways: the generated tests on their own, the crate's own suite before, and
the own suite with the applied tests after (`cargo test` finds them in tests/). The crate's own
`#[cfg(test)]` modules are test code, not code to cover: their lines count in no figure.

    python3 benches/rust_generator.py --bin target/release/team-testing \\
        [--crates strsim@0.11.1 heck@0.5.0 semver@1.0.28] [--seed 7] [--work DIR] [--json OUT]

Needs network access to crates.io (cargo fetch), cargo-llvm-cov and the llvm-tools component.
No other tool generates Rust tests offline, so the comparison is with the crate's own suite.
Prints a Markdown table for BENCHMARKS.md.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_CRATES = ["strsim@0.11.1", "heck@0.5.0", "semver@1.0.28"]


def run(argv, cwd, env=None, timeout=1800):
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def fetch(name, version, work):
    """The crate's published source, copied from cargo's registry after `cargo fetch`."""
    fetcher = os.path.join(work, "fetch-" + name)
    os.makedirs(os.path.join(fetcher, "src"), exist_ok=True)
    with open(os.path.join(fetcher, "Cargo.toml"), "w") as f:
        f.write('[package]\nname = "fetcher"\nversion = "0.0.0"\nedition = "2021"\n\n'
                '[dependencies]\n%s = "=%s"\n\n[workspace]\n' % (name, version))
    open(os.path.join(fetcher, "src", "lib.rs"), "w").close()
    out = run(["cargo", "fetch"], fetcher)
    if out.returncode != 0:
        sys.exit("cargo fetch %s@%s failed: %s" % (name, version, out.stderr[-500:]))
    home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    found = glob.glob(os.path.join(home, "registry", "src", "*", "%s-%s" % (name, version)))
    if not found:
        sys.exit("%s-%s is not in cargo's registry after cargo fetch" % (name, version))
    repo = os.path.join(work, "%s-%s" % (name, version))
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(found[0], repo)
    for argv in (["git", "init", "-q"], ["git", "add", "-A"],
                 ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com",
                  "commit", "-q", "-m", "published source"]):
        run(argv, repo)
    return repo


def test_lines(path):
    """Lines of a source file inside `#[cfg(test)]` items (a `mod tests { ... }`): the crate's
    own test code, which no figure here counts as code to cover."""
    out = set()
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return out
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith("#[cfg(test)]"):
            depth, j, opened = 0, i, False
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                opened = opened or "{" in lines[j]
                out.add(j + 1)
                if opened and depth <= 0 or (not opened and lines[j].rstrip().endswith(";")):
                    break
                j += 1
            i = j
        i += 1
    return out


def lcov(path, root):
    """{file: (lines, hit)} of the crate's src/ files in an LCOV report, test code left out."""
    files, current, skip = {}, None, set()
    try:
        text = open(path).read()
    except OSError:
        return files
    for line in text.splitlines():
        if line.startswith("SF:"):
            p = os.path.relpath(line[3:], root)
            current = p if p.startswith("src/") else None
            if current:
                files.setdefault(current, [0, 0])
                skip = test_lines(os.path.join(root, p))
        elif current and line.startswith("DA:"):
            number, count = line[3:].split(",")[:2]
            if int(number) in skip:
                continue
            files[current][0] += 1
            files[current][1] += int(count) > 0
    return files


def percent(files):
    lines = sum(f[0] for f in files.values())
    hit = sum(f[1] for f in files.values())
    return 100.0 * hit / lines if lines else None


def coverage(repo, target, out, extra=()):
    env = dict(os.environ, CARGO_TARGET_DIR=target)
    r = run(["cargo", "llvm-cov", "--lcov", "--output-path", out, *extra], repo, env=env)
    return lcov(out, repo), r.returncode == 0


def bench(spec, binary, seed, work):
    name, version = spec.split("@")
    repo = fetch(name, version, work)
    target = os.path.join(work, "target-" + name)
    before, before_ok = coverage(repo, target, os.path.join(work, name + "-before.info"))
    sessions = os.path.join(work, "sessions-" + name)
    shutil.rmtree(sessions, ignore_errors=True)
    env = dict(os.environ, TEAM_TESTING_SESSIONS=sessions)
    started = time.monotonic()
    r = run([binary, "run", "test the crate", "--pipeline", "standard", "-y", "--seed", str(seed),
             "--json"], repo, env=env)
    seconds = time.monotonic() - started
    try:
        result = json.loads(r.stdout.strip().splitlines()[-1])
        session = result["session_id"]
    except (ValueError, KeyError):
        sys.exit("%s: team-testing run failed:\n%s\n%s" % (spec, r.stdout[-2000:], r.stderr[-2000:]))
    applied = run([binary, "apply", session], repo, env=env)
    if applied.returncode != 0:
        sys.exit("%s: apply failed: %s" % (spec, applied.stderr[-1000:]))
    delivered = sorted(os.path.basename(p)[:-3]
                       for p in glob.glob(os.path.join(repo, "tests", "team_testing_*.rs")))
    # A published crate's manifest usually says `autotests = false`: apply then names the
    # [[test]] entries to add, and a user adds them.
    manifest = os.path.join(repo, "Cargo.toml")
    text = open(manifest).read()
    if "autotests = false" in text:
        with open(manifest, "a") as f:
            for stem in delivered:
                if "tests/%s.rs" % stem not in text:
                    f.write('\n[[test]]\nname = "%s"\npath = "tests/%s.rs"\n' % (stem, stem))
    tests = 0
    for stem in delivered:
        tests += open(os.path.join(repo, "tests", stem + ".rs")).read().count("\n#[test]")
    alone_args = [a for stem in delivered for a in ("--test", stem)]
    alone, alone_ok = coverage(repo, target, os.path.join(work, name + "-alone.info"), alone_args)
    after, after_ok = coverage(repo, target, os.path.join(work, name + "-after.info"))
    findings = 0
    for task in glob.glob(os.path.join(sessions, "*", "tasks.json")):
        data = json.load(open(task))
        for t in data["tasks"] if isinstance(data, dict) else data:
            if t.get("owner") == "generator" and t.get("id", "").startswith("TESTGEN-00"):
                findings += len((t.get("outcome") or {}).get("data", {}).get("findings", []))
    return {
        "crate": spec, "seconds": round(seconds, 1), "quality_score": result.get("quality_score"), "files": len(delivered), "tests": tests,
        # Over the lines the full run lists: a generic function no generated test instantiates
        # is not in the generated tests' own report, and counts as not covered.
        "findings": findings, "alone": percent({f: [v[0], alone.get(f, [0, 0])[1]]
                                                for f, v in after.items()}),
        "alone_passed": alone_ok,
        "before": percent(before), "before_passed": before_ok,
        "after": percent(after), "after_passed": after_ok,
        "per_file": {f: {"alone": 100.0 * alone.get(f, [0, 0])[1] / v[0] if v[0] else None,
                         "before": 100.0 * before.get(f, [0, 0])[1] / v[0] if v[0] else None,
                         "after": 100.0 * after.get(f, [0, 0])[1] / v[0] if v[0] else None}
                     for f, v in sorted(after.items())},
    }


def fmt(p):
    return "n/a" if p is None else "%.1f %%" % p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the team-testing binary (a release build)")
    ap.add_argument("--crates", nargs="*", default=DEFAULT_CRATES)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", help="keep the crates and sessions here")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    work = args.work or tempfile.mkdtemp(prefix="rust-gen-bench-")
    os.makedirs(work, exist_ok=True)
    rows = [bench(spec, binary, args.seed, work) for spec in args.crates]
    print("| crate | wall time (standard pipeline) | test files / tests | defect findings | "
          "generated tests alone | own suite | own suite + generated |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %.0f s | %d / %d | %d | %s | %s | %s |" % (
            r["crate"], r["seconds"], r["files"], r["tests"], r["findings"], fmt(r["alone"]),
            fmt(r["before"]), fmt(r["after"])))
    print()
    for r in rows:
        print("%s per file (alone / own / own + generated): %s" % (r["crate"], ", ".join(
            "%s %s / %s / %s" % (f, fmt(v["alone"]), fmt(v["before"]), fmt(v["after"]))
            for f, v in r["per_file"].items())))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
