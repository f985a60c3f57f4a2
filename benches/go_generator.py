#!/usr/bin/env python3
"""Benchmark: team-testing's built-in Go generator on real Go modules, offline. The modules'
sources (with their own tests) come from Debian's golang-*-dev packages, which install them under
/usr/share/gocode/src; each is copied into a fresh work dir and git-initialised. For each module:
the whole standard pipeline's wall time, the test functions it delivered, the `t.Skip("code_defect`
findings among them, whether `go test ./...` passes once they are applied, and statement coverage
(from `go test -coverprofile`) three ways: the module's own suite before, the generated tests on
their own (a second copy with the module's own *_test.go files removed), and the own suite with
the applied tests after. Each figure is also given over the "pure" packages only: those whose
non-test files import none of os, os/exec, net, net/http, syscall, io/ioutil, unsafe, plugin,
runtime/cgo.

    sudo apt-get install -y golang-github-hashicorp-go-version-dev \\
        golang-github-masterminds-semver-dev golang-github-agext-levenshtein-dev \\
        golang-github-huandu-xstrings-dev golang-github-shopspring-decimal-dev
    python3 benches/go_generator.py --bin target/release/team-testing \\
        [--modules github.com/hashicorp/go-version ...] [--seed 7] [--work DIR] [--json OUT]
    python3 benches/go_generator.py --baseline-only    # the copies and own-suite figures only

Needs go (1.19 or later) and the Debian packages above; no network: go runs with
GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local (the default modules have no
dependencies). No other tool generates Go tests offline, so the comparison is with the module's
own suite. Prints a Markdown table for BENCHMARKS.md.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOCODE = "/usr/share/gocode/src"
DEFAULT_MODULES = [
    "github.com/hashicorp/go-version",     # golang-github-hashicorp-go-version-dev
    "github.com/Masterminds/semver/v3",    # golang-github-masterminds-semver-dev
    "github.com/agext/levenshtein",        # golang-github-agext-levenshtein-dev
    "github.com/huandu/xstrings",          # golang-github-huandu-xstrings-dev
    "github.com/shopspring/decimal",       # golang-github-shopspring-decimal-dev
]
IMPURE = {"os", "os/exec", "net", "net/http", "syscall", "io/ioutil", "unsafe", "plugin",
          "runtime/cgo"}
GENERATED = ("_tt_test.go", "_tt_integration_test.go")


def run(argv, cwd, env=None, timeout=1800):
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def go_env(work):
    return dict(os.environ, GOFLAGS="-mod=mod", GOPROXY="off", GOSUMDB="off",
                GOTOOLCHAIN="local", GOCACHE=os.environ.get("GOCACHE") or
                os.path.join(work, ".gocache"))


def module_name(gomod):
    for line in open(gomod):
        m = re.match(r'\s*module\s+"?([^"\s]+)"?', line)
        if m:
            return m.group(1)
    return None


def locate(path):
    """The folder under /usr/share/gocode/src whose go.mod names module `path` (Debian drops a
    major-version suffix such as /v3 from the folder), the Debian package that ships it and the
    package's version."""
    candidates = [path, re.sub(r"/v[0-9]+$", "", path)]
    for rel in candidates:
        src = os.path.join(GOCODE, rel)
        gomod = os.path.join(src, "go.mod")
        if os.path.isfile(gomod) and module_name(gomod) == path:
            owner = run(["dpkg", "-S", os.path.realpath(gomod)], "/")
            package = owner.stdout.split(":")[0].strip() if owner.returncode == 0 else None
            version = None
            if package:
                v = run(["dpkg-query", "-W", "-f", "${Version}", package], "/")
                version = v.stdout.strip() or None
            return src, package, version
    sys.exit("%s: no go.mod naming this module under %s (install its golang-*-dev package)"
             % (path, GOCODE))


def git_init(repo):
    for argv in (["git", "init", "-q"], ["git", "add", "-A"],
                 ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com",
                  "commit", "-q", "-m", "Debian source"]):
        run(argv, repo)


def copy_module(src, dest):
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest, symlinks=False)   # Debian may link files: copy their contents
    git_init(dest)
    return dest


def restore_gomod(repo):
    """-mod=mod writes a missing `go` line into go.mod: put the committed one back."""
    run(["git", "checkout", "-q", "--", "go.mod"], repo)


def packages(repo, env):
    """{import path: {"dir", "files", "lines", "pure"}} of the module's packages: the non-test files
    the build would use (go list honours build tags), their line count, and whether any of them
    imports a package of IMPURE (a simple scan of their import declarations)."""
    r = run(["go", "list", "-e", "-json", "./..."], repo, env=env)
    restore_gomod(repo)
    out = {}
    decoder, text, i = json.JSONDecoder(), r.stdout, 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        p, i = decoder.raw_decode(text, i)
        files = [os.path.join(p["Dir"], f) for f in p.get("GoFiles", []) + p.get("CgoFiles", [])]
        lines, imports = 0, set()
        for f in files:
            src = open(f, errors="replace").read()
            lines += src.count("\n")
            imports |= scan_imports(src)
        out[p["ImportPath"]] = {"dir": os.path.relpath(p["Dir"], repo), "files": len(files),
                                "lines": lines, "pure": not (imports & IMPURE) and not p.get("CgoFiles")}
    return out


def scan_imports(src):
    """Import paths of a Go file's import declarations (single and parenthesised)."""
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    src = re.sub(r"//[^\n]*", "", src)
    found = set()
    for m in re.finditer(r'^\s*import\s*(\((.*?)\)|[\w.]*\s*"([^"]+)")', src, flags=re.S | re.M):
        if m.group(3):
            found.add(m.group(3))
        else:
            found |= set(re.findall(r'"([^"]+)"', m.group(2)))
    return found


def profile(path):
    """{(file, block): (statements, count)} of a Go cover profile; a block listed more than once
    (packages covering each other) keeps its largest count."""
    blocks = {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return blocks
    for line in lines:
        m = re.match(r"^(.+):(\d+\.\d+,\d+\.\d+) (\d+) (\d+)$", line)
        if not m:
            continue
        key, stmts, count = (m.group(1), m.group(2)), int(m.group(3)), int(m.group(4))
        old = blocks.get(key)
        blocks[key] = (stmts, max(count, old[1] if old else 0))
    return blocks


def percent(blocks, only=None):
    """Statement coverage of the blocks, over packages `only` (import paths) if given."""
    total = hit = 0
    for (f, _), (stmts, count) in blocks.items():
        if only is not None and os.path.dirname(f) not in only:
            continue
        total += stmts
        hit += stmts if count > 0 else 0
    return 100.0 * hit / total if total else None


def coverage(repo, out, env):
    """(blocks, passed, seconds, output tail) of `go test -coverprofile ./...` in repo."""
    started = time.monotonic()
    r = run(["go", "test", "-count=1", "-coverprofile=" + out, "./..."], repo, env=env)
    seconds = time.monotonic() - started
    restore_gomod(repo)
    return profile(out), r.returncode == 0, seconds, (r.stdout + r.stderr)[-1500:]


def figures(blocks, pure):
    return {"all": percent(blocks), "pure": percent(blocks, pure)}


def bench(path, binary, seed, work, env, baseline_only):
    src, package, version = locate(path)
    short = path.rstrip("/").split("/")[-1]
    if re.match(r"^v[0-9]+$", short):
        short = path.split("/")[-2]
    repo = copy_module(src, os.path.join(work, short))
    pkgs = packages(repo, env)
    pure = {p for p, v in pkgs.items() if v["pure"]}
    before, before_ok, before_s, before_log = coverage(repo, os.path.join(work, short + "-before.out"), env)
    row = {
        "module": path, "version": version, "debian_package": package, "copy": repo,
        "non_test_lines": sum(v["lines"] for v in pkgs.values()),
        "packages": {p: {"lines": v["lines"], "pure": v["pure"]} for p, v in sorted(pkgs.items())},
        "pure_packages": len(pure), "before": figures(before, pure), "before_passed": before_ok,
        "before_seconds": round(before_s, 2),
        "seconds": None, "session_id": None, "files": None, "tests": None, "defects": None,
        "alone": {"all": None, "pure": None}, "alone_passed": None,
        "after": {"all": None, "pure": None}, "after_passed": None,
    }
    if not before_ok:
        row["before_log"] = before_log
    if baseline_only:
        return row
    sessions = os.path.join(work, "sessions-" + short)
    shutil.rmtree(sessions, ignore_errors=True)
    tenv = dict(env, TEAM_TESTING_SESSIONS=sessions)
    started = time.monotonic()
    r = run([binary, "run", "test the module", "--repo", repo, "--pipeline", "standard", "-y",
             "--seed", str(seed), "--json"], repo, env=tenv)
    row["seconds"] = round(time.monotonic() - started, 1)
    try:
        result = json.loads(r.stdout.strip().splitlines()[-1])
        session = result["session_id"]
    except (ValueError, KeyError, IndexError):
        sys.exit("%s: team-testing run failed:\n%s\n%s" % (path, r.stdout[-2000:], r.stderr[-2000:]))
    row["session_id"], row["quality_score"] = session, result.get("quality_score")
    applied = run([binary, "apply", session, "--repo", repo], repo, env=tenv)
    if applied.returncode != 0:
        sys.exit("%s: apply failed: %s" % (path, applied.stderr[-1000:]))
    delivered = sorted(os.path.relpath(p, repo)
                       for suffix in GENERATED
                       for p in glob.glob(os.path.join(repo, "**", "*" + suffix), recursive=True))
    texts = [open(os.path.join(repo, f)).read() for f in delivered]
    row["files"] = len(delivered)
    row["tests"] = sum(len(re.findall(r"^func Test", t, flags=re.M)) for t in texts)
    row["defects"] = sum(t.count('t.Skip("code_defect') for t in texts)
    after, row["after_passed"], _, after_log = coverage(repo, os.path.join(work, short + "-after.out"), env)
    row["after"] = figures(after, pure)
    if not row["after_passed"]:
        row["after_log"] = after_log
    # The generated tests alone: a second copy without the module's own tests.
    alone_repo = os.path.join(work, short + "-generated-only")
    shutil.rmtree(alone_repo, ignore_errors=True)
    shutil.copytree(repo, alone_repo, ignore=shutil.ignore_patterns(".git"))
    for p in glob.glob(os.path.join(alone_repo, "**", "*_test.go"), recursive=True):
        if not p.endswith(GENERATED):
            os.remove(p)
    git_init(alone_repo)
    alone, row["alone_passed"], _, alone_log = coverage(alone_repo, os.path.join(work, short + "-alone.out"), env)
    # Over the statements the full run lists: a package with no generated test is not in the
    # generated tests' own profile, and counts as not covered.
    row["alone"] = figures({k: (v[0], alone.get(k, (0, 0))[1]) for k, v in after.items()}, pure)
    if not row["alone_passed"]:
        row["alone_log"] = alone_log
    return row


def fmt(p):
    return "n/a" if p is None else "%.1f %%" % p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "team-testing"),
                    help="the team-testing binary (a release build)")
    ap.add_argument("--modules", nargs="*", default=DEFAULT_MODULES,
                    help="module paths whose go.mod Debian ships under " + GOCODE)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", help="keep the copies, profiles and sessions here")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--baseline-only", action="store_true",
                    help="copy the modules and measure their own suites; skip team-testing")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    if not args.baseline_only and not os.access(binary, os.X_OK):
        sys.exit("%s is not an executable (build team-testing, or pass --baseline-only)" % binary)
    work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="go-gen-bench-"))
    os.makedirs(work, exist_ok=True)
    env = go_env(work)
    rows = [bench(m, binary, args.seed, work, env, args.baseline_only) for m in args.modules]
    print("| module | non-test lines | own suite | generated alone (all / pure) | "
          "own + generated | tests | defects | wall time (standard pipeline) | "
          "`go test` after apply |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ok = r["after_passed"]
        print("| %s@%s | %d | %s | %s / %s | %s | %s | %s | %s | %s |" % (
            r["module"], r["version"], r["non_test_lines"], fmt(r["before"]["all"]),
            fmt(r["alone"]["all"]), fmt(r["alone"]["pure"]), fmt(r["after"]["all"]),
            "n/a" if r["tests"] is None else r["tests"],
            "n/a" if r["defects"] is None else r["defects"],
            "n/a" if r["seconds"] is None else "%.0f s" % r["seconds"],
            "n/a" if ok is None else ("ok" if ok else "FAIL")))
    print()
    for r in rows:
        print("%s: Debian %s %s; %d of %d packages pure; own suite %s (pure %s, %s, %.1f s)%s" % (
            r["module"], r["debian_package"], r["version"], r["pure_packages"], len(r["packages"]),
            fmt(r["before"]["all"]), fmt(r["before"]["pure"]),
            "passes" if r["before_passed"] else "FAILS", r["before_seconds"],
            "" if r["after"]["pure"] is None else "; own + generated over pure packages %s"
            % fmt(r["after"]["pure"])))
    print("\nwork dir: %s" % work)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
