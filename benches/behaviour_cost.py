#!/usr/bin/env python3
"""What comparing a change with its base costs: the Python generator benchmark's six PyPI
packages (generator_vs_pynguin.py's list, downloaded at bench time, never committed), each made a
git repository, then changed by hand in one function (a commit of its own), then tested with

    team-testing run "test the change" --base HEAD~1 --pipeline targeted -y --max-mutants 20

The comparison's own wall time (the base laid out from git, the search's calls replayed on the
base and on HEAD) is in the session's behaviour/changes.json (`seconds`); the generator task's
wall time and the whole run's are read beside it. Prints a Markdown table for BENCHMARKS.md.
Not run in CI.

    python3 benches/behaviour_cost.py --bin target/debug/team-testing [--work DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generator_vs_pynguin as pkgs  # noqa: E402

# package -> (file, text before, text after, what the change does)
CHANGES = {
    "PyMonad": ("pymonad/tools.py", "    return value\n", "    return value or None\n",
                "identity() turns falsy values into None"),
    "cachetools": ("cachetools/keys.py",
                   "        return args + _kwmark + tuple(sorted(kwargs.items()))\n    else:\n        return args\n\n\ndef methodkey",
                   "        return args + _kwmark + tuple(kwargs.items())\n    else:\n        return args\n\n\ndef methodkey",
                   "hashkey() keeps keyword order (no longer sorted)"),
    "validators": ("validators/card.py", "    if not value:\n        return False\n    try:\n        digits",
                   "    try:\n        digits", "card_number() no longer rejects the empty string"),
    "toml": ("toml/decoder.py", "    if n[-1] == '_':\n        return False\n", "",
             "_strictly_valid_num() accepts a trailing underscore"),
    "docopt": ("docopt.py", "    return re.split(r'\\n\\s*\\n', ''.join(usage_split[1:]))[0].strip()",
               "    return re.split(r'\\n\\s*\\n', ''.join(usage_split[1:]))[0].rstrip()",
               "printable_usage() keeps leading blanks"),
    "tomli": ("tomli/_re.py", '    sign = 1 if sign_str == "+" else -1',
              '    sign = -1 if sign_str == "-" else 1', "cached_tz() reads any sign but '-' as '+'"),
}


def git(repo, *args):
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        sys.exit(f"git {' '.join(args)} failed in {repo}: {done.stderr}")


def make_repo(project, name):
    """The package as a repository: its base commit, then the hand change as the next one."""
    git(project, "init", "-q")
    git(project, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "add", ".")
    git(project, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "base")
    path, before, after, what = CHANGES[name]
    full = os.path.join(project, path)
    with open(full, encoding="utf-8") as f:
        text = f.read()
    if text.count(before) != 1:
        sys.exit(f"{name}: the change's text is not in {path} exactly once")
    with open(full, "w", encoding="utf-8") as f:
        f.write(text.replace(before, after))
    git(project, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qam", what)
    return what


def task_seconds(session, owner):
    """Wall time of the role's tasks, from the task graph's timestamps."""
    from datetime import datetime
    with open(os.path.join(session, "tasks.json"), encoding="utf-8") as f:
        tasks = json.load(f)
    tasks = tasks.get("tasks", tasks) if isinstance(tasks, dict) else tasks
    total = 0.0
    for t in tasks:
        if t.get("owner") != owner or not t.get("started_at") or not t.get("completed_at"):
            continue
        parse = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
        total += (parse(t["completed_at"]) - parse(t["started_at"])).total_seconds()
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/debug/team-testing")
    ap.add_argument("--work")
    opts = ap.parse_args()
    binary = os.path.abspath(opts.bin)
    work = opts.work or tempfile.mkdtemp(prefix="tt-behaviour-")
    rows = []
    for spec, _, _, _ in pkgs.PACKAGES:
        name = spec.split("==")[0]
        project = pkgs.fetch(spec, work)
        what = make_repo(project, name)
        sessions = os.path.join(work, "sessions", name)
        env = dict(os.environ, TEAM_TESTING_SESSIONS=sessions)
        started = time.monotonic()
        done = subprocess.run([binary, "run", "test the change", "--base", "HEAD~1", "--pipeline",
                               "targeted", "-y", "--max-mutants", "20"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=3600)
        wall = time.monotonic() - started
        if done.returncode != 0:
            print(f"{name}: run exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}",
                  file=sys.stderr)
        session = os.path.join(sessions, sorted(os.listdir(sessions))[0])
        try:
            with open(os.path.join(session, "behaviour/changes.json"), encoding="utf-8") as f:
                record = json.load(f)
        except OSError:
            record = {"changes": [], "compared": 0, "seconds": 0.0, "problems": ["no comparison"]}
        generator = task_seconds(session, "generator")
        found = "; ".join(f"{c['function']} ({c['verdict'].replace('_', ' ')})" for c in record["changes"])
        rows.append((name, what, found or "none", record.get("compared", 0),
                     record.get("seconds", 0.0), generator, wall, record.get("problems", [])))
    print("| package | change | behaviour changes found | calls compared | comparison | generator task | run | comparison / generator |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for name, what, found, compared, secs, gen, wall, problems in rows:
        share = f"{100 * secs / gen:.0f} %" if gen else "-"
        print(f"| {name} | {what} | {found} | {compared} | {secs:.1f} s | {gen:.1f} s | {wall:.1f} s | {share} |")
        for p in problems:
            print(f"|  | problem: {p} | | | | | | |")
    shutil.rmtree(os.path.join(work, "sessions"), ignore_errors=True)


if __name__ == "__main__":
    main()
