"""team-testing's built-in test generator: a feedback-directed search for Python (Randoop/Pynguin style).

Reads one JSON request on stdin, writes one JSON result on stdout (logs go to stderr). Every call of
the code under test runs in a forked child with a timeout and a fresh temporary working directory;
a call is kept only when it reaches lines no earlier call reached. Observed values become assertions
only when they are stable across two runs; stated contracts (doctest examples, return annotations,
no builtin exception escaping on well-typed input) win over observed values. All random choices come
from one seeded generator. The search stops on counts when it can (every callable tried, the lines
all reached, nothing new for a while), so the same seed gives byte-identical files on a module the
search finishes; on a module it does not finish, the budget ends it, and what it wrote depends on
how many candidates the machine ran by then.

The result (one JSON object) leaves on a descriptor of its own; what the code under test prints goes
to stderr. Errors of the generator itself are caught per module, phase and candidate and reported
as `generator_error` findings with their traceback.

This file is the entry point: it reads the request, shares the budget among the modules, drives
the stages and prints the result. The stages are modules of their own beside it, split the way
Pynguin splits its own, each importing only the stages below it: tt_analysis (discovery, the
source's constants, patterns and grammar, executable lines, annotations) at the bottom;
tt_inputs (argument expressions and the uses of an item) and tt_execution (the forked call,
tracing, the result's description, timeouts) on it; tt_minimize (shortening), tt_assertions (the
oracle: tests and findings) and tt_render (the test file's text) above those; tt_search (the
phases of a module's search, and L3's runs) at the top, and tt_replay (the same calls run again in
another version of the code) on it.

Two requests: a search ({"modules": [...], "layer", "seed", ...}) answers each module's test file,
and the calls its search ran ("calls": [{"function", "statements", "expr", "test"}], layers L1 and
L2); a replay ({"replay": {"modules": [{"module", "file", "calls"}], "call_timeout_s", "seed"}})
runs those calls again in this version of the project and answers what each did
({"modules": [{"module", "test_file", "source", "replayed": [...], "import_error"}]}, tt_replay):
run on the base commit and on HEAD, they tell what a change altered. A search may name that
change ("changed": {"<file as its module names it>": [HEAD's lines the change added or modified]}):
the functions, methods and constructors defined on those lines then get a last phase of boundary
variants of their calls (tt_search), listed right after the calls of the written tests.
"""

import json
import os
import random
import sys
import time

from tt_analysis import entry_points
from tt_execution import audited_entry, log
from tt_render import pytest_env_issue, render_e2e, test_file_name
from tt_replay import replay
from tt_search import e2e_tests, generator_error, search_module

DEFAULT_MODULE_BUDGET_S = 8.0  # per module when the request names no budget (under a third of Pynguin's 20 s
#                                and its start-up, for the same modules)


def module_weight(spec):
    """How much of the budget a module gets: its size in lines (read, not imported), at least a
    small module's share."""
    try:
        with open(spec.get("file", ""), encoding="utf-8") as f:
            lines = sum(1 for line in f if line.strip() and not line.lstrip().startswith("#"))
    except (OSError, UnicodeDecodeError):
        lines = 100
    return max(60, min(lines, 1500))


def result_channel():
    """The JSON result goes out on a descriptor of its own (a duplicate of the original stdout);
    descriptor 1 and sys.stdout then point at stderr, so whatever the code under test prints (on
    import, on call) can never corrupt the result."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


def main():
    channel = result_channel()
    req = json.load(sys.stdin)
    if "replay" in req:
        # The calls of an earlier search, run in this version of the project (tt_replay).
        channel.write(json.dumps(replay(req["replay"])))
        channel.flush()
        return
    started = time.monotonic()
    specs = req.get("modules", [])
    budget = req.get("budget_s")
    if budget is None:
        budget = DEFAULT_MODULE_BUDGET_S * max(1, len(specs))
    end = started + float(budget)
    rng = random.Random(req.get("seed", 1))
    if req.get("layer", "").startswith("L3"):
        points = len(entry_points(os.getcwd()))
        tests, findings = e2e_tests(req, rng, end)
        source, names = render_e2e(tests, req.get("seed"))
        entry = {"module": "entry_points", "file": "", "test_file": "test_entry_points.py",
                 "source": source if names else "", "tests": names, "lines_total": 0, "lines_covered": 0,
                 "import_error": None, "import_error_kind": None}
        channel.write(json.dumps({"modules": [entry], "findings": findings,
                                  "stats": {"calls_tried": len(tests), "tests": len(names),
                                            "entry_points": points,
                                            "seconds": round(time.monotonic() - started, 3)}}))
        channel.flush()
        return
    modules, findings, tried, reused = [], [], 0, 0
    weights = [module_weight(spec) for spec in specs]
    for index, spec in enumerate(specs):
        # The time left, shared by size: a big module gets more of it than a small one.
        share = (end - time.monotonic()) * weights[index] / max(1, sum(weights[index:]))
        # Each module's own generator, from the seed and its name: the same seed gives the same
        # tests whether the modules are searched together or in shards on several hosts.
        module_rng = random.Random(f"{req.get('seed', 1)}:{spec.get('module', '')}")
        try:
            entry, found = search_module(spec, req, module_rng, time.monotonic() + share)
        except BaseException as exc:  # noqa: BLE001 - one module never loses the others
            if isinstance(exc, KeyboardInterrupt):
                raise
            log(f"generator error in {spec.get('module')}: {exc!r}")
            entry = {"module": spec.get("module", ""), "file": spec.get("file", ""),
                     "test_file": test_file_name(spec.get("module", "m")), "source": "", "tests": [],
                     "lines_total": 0, "lines_covered": 0, "import_error": None, "import_error_kind": None}
            found = [generator_error(spec.get("module", ""), "", exc)]
        tried += entry.pop("calls_tried", 0)
        reused += entry.pop("calls_reused", 0)
        modules.append(entry)
        findings.extend(found)
    issue = pytest_env_issue(next((m["module"] for m in modules if m["tests"]), ""))
    if issue is not None:
        findings.append(issue)
    kept = sum(len(m["tests"]) for m in modules)
    channel.write(json.dumps({"modules": modules, "findings": findings,
                              "stats": {"calls_tried": tried, "calls_reused": reused, "tests": kept,
                                        "seconds": round(time.monotonic() - started, 3)}}))
    channel.flush()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--entry-points":
        # For a plan: the entry points L3 would run (files are read, nothing is imported).
        print(json.dumps([module for module, _ in entry_points(sys.argv[2])]))
        sys.exit(0)
    if len(sys.argv) > 3 and sys.argv[1] == "--audit-run":
        audited_entry(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.dont_write_bytecode = True
        main()
