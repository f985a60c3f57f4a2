#!/usr/bin/env python3
"""The standing corpus: real projects nobody here wrote, one family after another, each run the
way a new user would: the standard pipeline, `apply` into a throwaway clone, then the project's
own test command in that clone, as an unprivileged user. It records what a user would look at and
checks the invariants team-testing must keep on every project:

- the project's own command runs every applied test, and it passes;
- coverage after >= before, for every source file and overall;
- only source files count (never tests, examples, scripts, docs, fixtures, vendored files);
- nothing outside the applied folder changes;
- no crash (team-testing exits 0, 1 or 2 with a message, never an internal error).

Code defects and contract findings are listed for a person to judge (true or false).

    cargo build --release
    python3 benches/corpus/run.py [--only NAME ...] [--bin target/release/team-testing]
                                  [--keep DIR] [--json OUT]

Sources, fetched at bench time (nothing third-party is committed): PyPI sdists (pip download),
Debian's source packages of node modules (apt-get source, whose upstream tarballs carry the tests
the npm tarballs leave out), the npm tarballs that do carry theirs (npm pack: fastify's, devalue), crates.io (cargo fetch), and Debian's golang-*-dev packages (module
sources with their tests under /usr/share/gocode/src). Needs root for apt and to run the projects'
tests as `nobody`; Python 3 standard library only. Not run in CI.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOBODY = 65534
DEBIAN_SOURCES = "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main\n"

# name, family, where it comes from, what its tests need, its own test command (as the project
# defines it; the command team-testing's apply must reach).
PROJECTS = [
    dict(name="humanize", family="python", source=("pypi", "humanize==4.9.0"),
         needs=["freezegun"], own=["{python}", "-m", "pytest", "-p", "no:cacheprovider"]),
    dict(name="docstring_parser", family="python", source=("pypi", "docstring_parser==0.16"),
         needs=[], own=["{python}", "-m", "pytest", "-p", "no:cacheprovider"], kind="a parser"),
    dict(name="cachetools", family="python", source=("pypi", "cachetools==5.3.3"),
         needs=[], own=["{python}", "-m", "pytest", "-p", "no:cacheprovider"]),
    dict(name="negotiator", family="node", source=("debian", "node-negotiator"),
         own=["npm", "test"], kind="mocha, test/ and examples/"),
    dict(name="argparse", family="node", source=("debian", "node-argparse"),
         own=["npx", "mocha"], kind="mocha (its npm test lints first)"),
    dict(name="arg", family="node", source=("debian", "node-arg"),
         own=["npx", "jest"], kind="jest, its test file at the root"),
    dict(name="css-what", family="node", source=("debian", "node-css-what"),
         own=["npm", "run", "test:jest"], kind="TypeScript, ts-jest, specs beside the code"),
    dict(name="merge-json-schemas", family="node", source=("npm", "@fastify/merge-json-schemas@0.2.2"),
         own=["npm", "run", "test:unit"], kind="node:test under c8 --100 (its npm test adds tstyche)"),
    dict(name="fastify-error", family="node", source=("npm", "@fastify/error@4.3.0"),
         own=["npm", "run", "test:unit"], kind="node:test under c8 (its npm test adds tstyche)"),
    dict(name="devalue", family="node", source=("npm", "devalue@6.0.3"),
         own=["npx", "vitest", "run"], kind="vitest, ESM, specs beside the code (its npm test names a "
         "workspace project the tarball leaves out)"),
    dict(name="semver", family="rust", source=("crate", "semver", "1.0.23"),
         own=["cargo", "test"], kind="no dependencies"),
    dict(name="itertools", family="rust", source=("crate", "itertools", "0.12.1"),
         own=["cargo", "test"], kind="one dependency, dev-dependencies"),
    dict(name="textwrap", family="rust", source=("crate", "textwrap", "0.16.1"),
         own=["cargo", "test"], kind="three dependencies"),
    dict(name="google-uuid", family="go", source=("gocode", "golang-github-google-uuid-dev",
                                                 "github.com/google/uuid"),
         own=["go", "test", "./..."]),
    dict(name="go-difflib", family="go", source=("gocode", "golang-github-pmezard-go-difflib-dev",
                                                "github.com/pmezard/go-difflib"),
         own=["go", "test", "./..."]),
]

# Folders whose files are never source, whatever the family: a file counted from one of them is
# an invariant broken (this list is the bench's own, not team-testing's).
NOT_SOURCE = {"test", "tests", "__tests__", "spec", "specs", "testdata", "fixtures", "__fixtures__",
              "examples", "example", "docs", "doc", "scripts", "benches", "benchmarks", "vendor"}


def sh(argv, cwd=None, env=None, timeout=1800, as_nobody=False):
    if as_nobody and os.geteuid() == 0:
        argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"] + argv
    try:
        return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(argv, 124, e.stdout or "", (e.stderr or "") + "\ntimed out")


def git(repo, *args):
    out = sh(["git", "-c", "user.name=corpus", "-c", "user.email=corpus@example.invalid", *args],
             cwd=repo, timeout=120)
    if out.returncode != 0:
        sys.exit(f"git {' '.join(args)} in {repo}: {out.stderr}")
    return out.stdout


def give_to_nobody(*paths):
    if os.geteuid() != 0:
        return
    for p in paths:
        sh(["chown", "-R", f"{NOBODY}:{NOBODY}", p])


# -- fetching ------------------------------------------------------------------------------------

def fetch(project, work):
    kind = project["source"][0]
    dest = os.path.join(work, "src", project["name"])
    shutil.rmtree(dest, ignore_errors=True)
    if kind == "pypi":
        dl = tempfile.mkdtemp(dir=work)
        out = sh([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                  project["source"][1], "-d", dl])
        if out.returncode != 0:
            sys.exit(out.stderr)
        unpack(glob.glob(os.path.join(dl, "*.tar.gz"))[0], dest)
    elif kind == "debian":
        dl = tempfile.mkdtemp(dir=work)
        apt = apt_options(work)
        sh(["apt-get", "-q", *apt, "source", "--download-only", project["source"][1]], cwd=dl)
        tarballs = [t for t in glob.glob(os.path.join(dl, "*.orig.tar.*")) if "orig-" not in t]
        if not tarballs:
            sys.exit(f"no upstream tarball for {project['source'][1]}")
        unpack(tarballs[0], dest)
    elif kind == "npm":
        # The few packages whose npm tarball carries their tests (fastify's publish test/).
        dl = tempfile.mkdtemp(dir=work)
        out = sh(["npm", "pack", "--silent", project["source"][1]], cwd=dl, timeout=300)
        if out.returncode != 0:
            sys.exit(out.stderr)
        unpack(glob.glob(os.path.join(dl, "*.tgz"))[0], dest)
    elif kind == "crate":
        _, crate, version = project["source"]
        probe = tempfile.mkdtemp(dir=work)
        with open(os.path.join(probe, "Cargo.toml"), "w") as f:
            f.write(f'[package]\nname = "probe"\nversion = "0.1.0"\nedition = "2021"\n\n'
                    f'[dependencies]\n{crate} = "={version}"\n')
        os.makedirs(os.path.join(probe, "src"))
        open(os.path.join(probe, "src", "lib.rs"), "w").close()
        sh(["cargo", "fetch", "-q"], cwd=probe)
        home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
        found = glob.glob(os.path.join(home, "registry", "src", "*", f"{crate}-{version}"))
        shutil.copytree(found[0], dest)
    elif kind == "gocode":
        _, package, path = project["source"]
        sh(["apt-get", "install", "-y", "-qq", package])
        shutil.copytree(os.path.join("/usr/share/gocode/src", path), dest, symlinks=True)
    return dest


def apt_options(work):
    base = os.path.join(work, "apt")
    lists = os.path.join(base, "lists")
    if not os.path.isdir(lists):
        os.makedirs(os.path.join(lists, "partial"))
        with open(os.path.join(base, "sources.list"), "w") as f:
            f.write(DEBIAN_SOURCES)
    options = ["-o", f"Dir::Etc::SourceList={base}/sources.list", "-o", "Dir::Etc::SourceParts=/dev/null",
               "-o", f"Dir::State::Lists={lists}"]
    if not glob.glob(os.path.join(lists, "*Sources*")):
        sh(["apt-get", "-q", *options, "update"])
    return options


def unpack(tarball, dest):
    with tarfile.open(tarball) as t:
        top = t.getnames()[0].split("/")[0]
        t.extractall(os.path.dirname(dest), filter="data")
    os.rename(os.path.join(os.path.dirname(dest), top), dest)


# -- preparing: what the project's own tests need, as its developers would have it ---------------

def prepare(project, repo, work):
    """A git checkout of the project with its test dependencies installed; the interpreter."""
    git(repo, "init", "-q")
    exclude = os.path.join(repo, ".git", "info", "exclude")
    with open(exclude, "a") as f:
        f.write("/.venv/\n/node_modules/\n/target/\n*.egg-info/\n/build/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "upstream")
    family = project["family"]
    if family == "go" and not os.path.exists(os.path.join(repo, "go.mod")):
        # A module from before go.mod (Debian ships some): made a module as a user would.
        sh(["go", "mod", "init", project["source"][2]], cwd=repo)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "go mod init")
    if family == "python":
        venv = os.path.join(repo, ".venv")
        sh(["/usr/bin/python3.11", "-m", "venv", venv])
        python = os.path.join(venv, "bin", "python")
        sh([python, "-m", "pip", "install", "-q", "pytest", "coverage", *project.get("needs", [])])
        sh([python, "-m", "pip", "install", "-q", "-e", repo], timeout=900)
        sh(["chmod", "-R", "a+rX", venv])
        return python
    if family == "node":
        sh(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error",
            "--no-package-lock"], cwd=repo, timeout=900)
        return "node"
    return family


# -- running ---------------------------------------------------------------------------------------

def own_command(project, python):
    return [python if w == "{python}" else w for w in project["own"]]


def count_tests(family, text):
    """Tests the project's own command ran, from its output."""
    def num(pattern):
        return sum(int(m) for m in re.findall(pattern, text))
    if family == "python":
        return num(r"(\d+) passed") + num(r"(\d+) xfailed") + num(r"(\d+) failed")
    if family == "node":
        mocha = num(r"(\d+) passing") + num(r"(\d+) pending") + num(r"(\d+) failing")
        jest = re.findall(r"Tests:.*?(\d+) total", text)
        node_test = num(r"(?m)^(?:#|\u2139) tests (\d+)$")  # node --test, TAP or spec reporter
        vitest = num(r"(?m)^\s*Tests\s+[^\n]*\((\d+)\)$")
        return mocha or sum(int(j) for j in jest) or node_test or vitest
    if family == "rust":
        return num(r"test result: \w+\. (\d+) passed") + num(r"; (\d+) failed") + num(r"; (\d+) ignored")
    if family == "go":
        return len(re.findall(r"^\s*--- (PASS|FAIL|SKIP):", text, re.M))
    return 0


def run_own(project, checkout, python, home):
    if project["family"] == "python":
        # As its developers work: the package installed from this checkout (editable), so its
        # metadata and entry points exist; the tests and the code are the checkout's.
        sh([python, "-m", "pip", "install", "-q", "--no-deps", "-e", checkout], timeout=900)
    argv = own_command(project, python)
    if project["family"] == "go":
        argv = argv[:2] + ["-v"] + argv[2:]
    # A fresh HOME, but rustup and cargo keep finding their toolchains.
    rust_homes = dict(RUSTUP_HOME=os.environ.get("RUSTUP_HOME", os.path.expanduser("~/.rustup")),
                      CARGO_HOME=os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo")))
    env = dict(os.environ, **rust_homes, HOME=home, PYTHONDONTWRITEBYTECODE="1", CI="1", NO_COLOR="1",
               GOCACHE=os.path.join(home, "gocache"), GOPATH=os.path.join(home, "gopath"),
               GOFLAGS="-mod=mod", npm_config_cache=os.path.join(home, "npm"))
    # cargo lives in root's home, which nobody cannot enter: crates run as the bench's user.
    as_nobody = project["family"] != "rust"
    if as_nobody:
        give_to_nobody(checkout, home)
    started = time.monotonic()
    out = sh(argv, cwd=checkout, env=env, timeout=1800, as_nobody=as_nobody)
    text = out.stdout + out.stderr
    # What the project's own command writes into its checkout by itself (c8's coverage/, go's
    # go.mod updates): not a change of the applied tests.
    status = sh(["git", "-c", "safe.directory=*", "status", "--porcelain", "--untracked-files=all"],
                cwd=checkout).stdout
    return dict(code=out.returncode, tests=count_tests(project["family"], text),
                writes_itself=[l[3:] for l in status.splitlines()],
                creates_dirs=sorted(d for d in {l[3:].split("/")[0] + "/" for l in status.splitlines()
                                                if l.startswith("??") and "/" in l[3:]}
                                    if not sh(["git", "-c", "safe.directory=*", "ls-files", "--", d],
                                              cwd=checkout).stdout.strip()),
                seconds=round(time.monotonic() - started, 1),
                tail=re.sub(r"\x1b\[[0-9;]*m", "", text)[-3000:],
                as_user="nobody" if as_nobody and os.geteuid() == 0 else "the bench's user")


def clone(repo, work, name):
    dest = os.path.join(work, name)
    shutil.rmtree(dest, ignore_errors=True)
    sh(["git", "clone", "-q", repo, dest])
    for extra in (".venv", "node_modules"):
        if os.path.exists(os.path.join(repo, extra)):
            if extra == "node_modules":
                shutil.copytree(os.path.join(repo, extra), os.path.join(dest, extra), symlinks=True)
            else:
                os.symlink(os.path.join(repo, extra), os.path.join(dest, extra))
    with open(os.path.join(dest, ".git", "info", "exclude"), "a") as f:
        f.write("/.venv\n/node_modules/\n/target/\n*.egg-info/\n/build/\n")
    return dest


def one(project, binary, work):
    name = project["name"]
    print(f"== {name}: fetching", flush=True)
    repo = fetch(project, work)
    python = prepare(project, repo, work)
    print(f"== {name}: its own tests", flush=True)
    before = run_own(project, clone(repo, work, f"{name}-before"), python, tempfile.mkdtemp(dir=work))
    sessions = os.path.join(work, "sessions", name)
    shutil.rmtree(sessions, ignore_errors=True)
    print(f"== {name}: team-testing run", flush=True)
    started = time.monotonic()
    run = sh([binary, "run", "test the project", "--repo", repo, "--pipeline", "standard", "-y",
              "--seed", "1", "--sessions-dir", sessions, "--json"], cwd=repo, timeout=3600)
    wall = round(time.monotonic() - started, 1)
    result = dict(name=name, family=project["family"], kind=project.get("kind", ""),
                  source=" ".join(project["source"][1:2]), wall_s=wall, exit=run.returncode,
                  crashed=run.returncode not in (0, 1, 2) or "internal error" in run.stderr,
                  before=before)
    ids = os.listdir(sessions) if os.path.isdir(sessions) else []
    if not ids:
        result["error"] = run.stderr[-2000:]
        result["invariants"] = invariants(result)
        return result
    session = os.path.join(sessions, ids[0])
    if not os.path.exists(os.path.join(session, "analysis", "report.json")):
        # The pipeline stopped before its analyst: what it said is the finding.
        result["error"] = (run.stdout + run.stderr)[-2000:]
        result["invariants"] = dict(invariants(result), **{"the pipeline reaches its report": False})
        return result
    result.update(figures(session))
    target = clone(repo, work, f"{name}-after")
    applied = sh([binary, "apply", session, "--repo", target], cwd=target, timeout=600)
    result["apply"] = dict(code=applied.returncode, written=applied.stdout.count(" -> "),
                           refused=applied.stdout.count("refused:"),
                           said=[l for l in applied.stdout.splitlines()
                                 if not l.startswith(("/", "refused:"))][-3:])
    # A crate whose manifest says `autotests = false` (every crates.io tarball): apply names the
    # [[test]] entries to add, and a user adds them.
    entries = "\n".join(re.findall(r'^\[\[test\]\]\nname = "[^"]*"\npath = "[^"]*"$',
                                   applied.stdout, re.M))
    if entries:
        with open(os.path.join(target, "Cargo.toml"), "a") as manifest:
            manifest.write("\n" + entries.replace('"\n[[test]]', '"\n\n[[test]]') + "\n")
    print(f"== {name}: its own tests after apply", flush=True)
    result["after"] = run_own(project, target, python, tempfile.mkdtemp(dir=work))
    status = sh(["git", "-c", "safe.directory=*", "status", "--porcelain", "--untracked-files=all"],
                cwd=target).stdout
    own_writes = set(before.get("writes_itself", []))
    # A folder the own command creates (c8's coverage/, whose tmp files are named by pid) is its.
    own_dirs = set(before.get("creates_dirs", []))
    result["changed_outside"] = [l for l in status.splitlines()
                                 if not applied_line(l, applied.stdout) and l[3:] not in own_writes
                                 and not (entries and l[3:] == "Cargo.toml")
                                 and not any(l[3:].startswith(d) for d in own_dirs)]
    result["invariants"] = invariants(result)
    return result


def applied_line(status_line, apply_out):
    """A `git status` line of a file apply wrote: a test it names, what it wrote beside them in a
    team_testing folder of its own (conftest, __init__), or its record of what it wrote."""
    path = status_line[3:].strip().strip('"')
    if not status_line.startswith("??"):
        return False
    return (path in apply_out or "/team_testing/" in f"/{path}"
            or path.endswith(".team-testing-applied.json"))


def figures(session):
    """What the session says: tests, coverage per file before and after, findings."""
    report = json.load(open(os.path.join(session, "analysis", "report.json")))
    results = os.path.join(session, "results")

    def coverage(path):
        """File -> (lines, missing lines) of a coverage record."""
        if not os.path.exists(path):
            return {}
        data = json.load(open(path))
        return {f["path"]: (f["lines_total"], set(f.get("missing_lines", []))) for f in data.get("files", [])}

    base = coverage(os.path.join(results, "coverage-baseline.json"))
    # Each layer's last run; a line is covered after when any layer (or the baseline) runs it.
    last = {}
    for r in report.get("runs", []):
        if r["layer"] != "baseline" and (r["layer"] not in last or r["round"] >= last[r["layer"]]["round"]):
            last[r["layer"]] = r
    after = dict(base)
    for r in last.values():
        number = re.search(r"run-(\d+)", r["file"])
        for path, (lines, missing) in coverage(
                os.path.join(results, f"coverage-{number.group(1)}.json") if number else "").items():
            old = after.get(path)
            after[path] = (max(lines, old[0]), missing & old[1]) if old else (lines, missing)
    per_file = {f: dict(before=cov(base.get(f)), after=cov(after.get(f))) for f in sorted(after)}

    def total(d):
        return pct(sum(t - len(m) for t, m in d.values()), sum(t for t, _ in d.values()))

    findings = report.get("findings", {})
    return dict(
        layers=[dict(layer=l["layer"], coverage=l.get("final_coverage"), pass_rate=l.get("final_pass_rate"),
                     not_applicable=l.get("not_applicable")) for l in report.get("layers", [])],
        tests_generated=sum(r["total"] for r in last.values()), per_file=per_file,
        overall=dict(before=total(base), after=total(after)),
        code_defects=[dict(test=d.get("test"), reason=d.get("reason") or d.get("message"))
                      for d in findings.get("code_defects", [])],
        contract_findings=[dict(function=f.get("function"), call=f.get("call"), expected=f.get("expected"),
                                actual=f.get("actual")) for f in findings.get("contract_findings", [])],
        side_effects=len(findings.get("side_effects", [])))


def cov(entry):
    return pct(entry[0] - len(entry[1]), entry[0]) if entry else None


def pct(covered, total):
    return round(100.0 * covered / total, 1) if total else None


def invariants(r):
    out = {}
    after, before = r.get("after", {}), r["before"]
    out["own command passes"] = after.get("code") == 0
    out["own command runs the applied tests"] = (r.get("apply", {}).get("written", 0) == 0
                                                 or after.get("tests", 0) > before.get("tests", 0))
    drops = [f for f, v in r.get("per_file", {}).items()
             if v["before"] is not None and v["after"] is not None and v["after"] < v["before"]]
    overall = r.get("overall", {})
    out["coverage never drops"] = not drops and not (
        overall.get("before") is not None and overall.get("after") is not None
        and overall["after"] < overall["before"])
    out["only source counts"] = not [f for f in r.get("per_file", {})
                                     if set(f.split("/")[:-1]) & NOT_SOURCE]
    out["nothing outside the applied folder changes"] = not r.get("changed_outside")
    out["no crash"] = not r.get("crashed")
    out["the pipeline reaches its report"] = "error" not in r
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--bin", default=os.path.join(ROOT, "target/release/team-testing"))
    parser.add_argument("--keep")
    parser.add_argument("--json")
    args = parser.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="tt-corpus-")
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o755)
    results = []
    try:
        for project in PROJECTS:
            if args.only and project["name"] not in args.only:
                continue
            r = one(project, args.bin, work)
            results.append(r)
            shown = {k: v for k, v in r.items() if k not in ("before", "after", "per_file")}
            shown["own_tests"] = f"{r['before'].get('tests')} -> {r.get('after', {}).get('tests')}"
            print(json.dumps(shown, indent=1)[:3000], flush=True)
    finally:
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(table(results))


def table(results):
    rows = ["| project | family | wall (s) | tests generated | applied files | own tests before -> after | "
            "coverage before -> after | code defects / contract findings | invariants |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        inv = r.get("invariants", {})
        broken = [k for k, ok in inv.items() if not ok]
        ov = r.get("overall", {})
        rows.append(
            f"| {r['name']} {r['source']} | {r['family']} | {r['wall_s']} | {r.get('tests_generated', '-')} | "
            f"{r.get('apply', {}).get('written', '-')} | {r['before'].get('tests')} -> "
            f"{r.get('after', {}).get('tests', '-')} | {ov.get('before')} -> {ov.get('after')} % | "
            f"{len(r.get('code_defects', []))} / {len(r.get('contract_findings', []))} | "
            f"{'all hold' if inv and not broken else 'broken: ' + ', '.join(broken) if inv else r.get('error', '')[:80]} |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
