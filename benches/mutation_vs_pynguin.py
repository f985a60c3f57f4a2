#!/usr/bin/env python3
"""Mutation score and minimization of the suites benches/generator_vs_pynguin.py wrote.

Run that benchmark first with `--keep DIR`; this one reads its folder: for each package, the
suites team-testing and Pynguin wrote (`DIR/out/<tool>/<root>`) run against the same mutants of the
benchmarked modules, with team-testing's mutation helper (src/family/python/ttmut.py: the suite
once under coverage with a context per test, then each mutant against the passing tests that reach
its line, in a forked child). Each suite is then minimized the way the analyst minimizes a layer
(greedy set cover over lines, arcs and killed mutants: a test that adds nothing beyond the tests
kept before it goes), and scored again. Everything runs as `nobody`, as the generators did.

    python3 benches/generator_vs_pynguin.py --keep /tmp/gvp
    python3 benches/mutation_vs_pynguin.py --keep /tmp/gvp
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generator_vs_pynguin as gvp  # noqa: E402

HELPER = os.path.join(gvp.ROOT, "src", "family", "python", "ttmut.py")


def analyse(python, project, suite_dir, modules, scratch, seed, budget, max_mutants):
    """ttmut's raw result for one suite (None when it has no test file)."""
    files = sorted(f for f in os.listdir(suite_dir) if f.startswith("test_") and f.endswith(".py"))
    if not files:
        return None
    ini = os.path.join(scratch, "pytest.ini")
    with open(ini, "w") as f:
        f.write("[pytest]\n")
    request = os.path.join(scratch, "request.json")
    result = os.path.join(scratch, "result.json")
    with open(request, "w") as f:
        json.dump({"modules": modules, "files": files, "seed": seed, "budget_s": budget,
                   "timeout_s": 10, "max_mutants": max_mutants,
                   "options": ["-p", "no:cacheprovider", "-c", ini, f"--rootdir={suite_dir}",
                               f"--basetemp={os.path.join(scratch, 'tmp')}"]}, f)
    gvp.open_up(scratch)
    env = dict(os.environ, PYTHONPATH=project, PYTHONDONTWRITEBYTECODE="1", HOME=scratch, TMPDIR=scratch)
    done = gvp.run([python, HELPER, request, result], cwd=suite_dir, env=env, timeout=budget * 3 + 300,
                   as_nobody=True)
    if not os.path.exists(result):
        sys.exit(f"ttmut gave no result for {suite_dir}: {done.stderr[-2000:]}")
    with open(result) as f:
        return json.load(f)


def elements(raw, test, killed):
    out = set()
    for file, reach in raw["tests"][test]["reached"].items():
        out.update(("line", file, line) for line in reach["lines"])
        out.update(("arc", file, a, b) for a, b in reach["arcs"])
    out.update(("kill", k) for k in killed.get(test, ()))
    return out


def minimize(raw, evaluated):
    """The passing tests greedy set cover keeps, and every passing test's kills."""
    killed = {}
    for m in raw["mutants"]:
        key = (m["file"], m["index"])
        if key in evaluated:
            for t in m["killed_by"]:
                killed.setdefault(t, set()).add(key)
    passing = sorted(t for t, r in raw["tests"].items() if r["outcome"] == "passed")
    candidates = {t: elements(raw, t, killed) for t in passing}
    covered, kept = set(), []
    while True:
        gains = [(len(candidates[t] - covered), -i, t) for i, t in enumerate(passing) if t not in kept]
        if not gains or max(gains)[0] == 0:
            break
        _, _, best = max(gains)
        covered |= candidates[best]
        kept.append(best)
    return passing, kept, killed


def main():
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--keep", required=True, help="the folder generator_vs_pynguin.py --keep wrote")
    args.add_argument("--seed", type=int, default=1)
    args.add_argument("--budget", type=int, default=180, help="seconds per suite")
    args.add_argument("--max-mutants", type=int, default=150, help="per package")
    args.add_argument("--only", nargs="*")
    opts = args.parse_args()
    work = opts.keep
    python = os.path.join(work, "venv", "bin", "python")
    rows = []
    for spec, style, root, modules in gvp.PACKAGES:
        if opts.only and root not in opts.only:
            continue
        project = os.path.join(work, "projects", spec.split("==")[0])
        files = [gvp.module_file(project, m) for m in modules]
        raws = {}
        for tool in ("team-testing", "pynguin"):
            suite = os.path.join(work, "out", tool, root)
            if not os.path.isdir(suite):
                continue
            scratch = os.path.join(work, "mutation", tool, root)
            os.makedirs(scratch, exist_ok=True)
            raw = analyse(python, project, suite, files, scratch, opts.seed, opts.budget, opts.max_mutants)
            if raw is not None:
                raws[tool] = raw
        if not raws:
            continue
        evaluated = set.intersection(*[
            {(m["file"], m["index"]) for m in raw["mutants"] if m["status"] != "error"} for raw in raws.values()])
        for tool, raw in raws.items():
            passing, kept, killed = minimize(raw, evaluated)
            before = set().union(*[killed.get(t, set()) for t in passing]) if passing else set()
            after = set().union(*[killed.get(t, set()) for t in kept]) if kept else set()
            score = lambda k: 100.0 * len(k) / len(evaluated) if evaluated else 0.0  # noqa: E731
            rows.append({"package": spec, "style": style, "tool": tool, "mutants": len(evaluated),
                         "tests": len(passing), "score": score(before), "kept": len(kept),
                         "score_kept": score(after), "exhausted": raw["exhausted"]})
            print(f"{spec:20} {tool:12} mutants {len(evaluated):4} tests {len(passing):4} -> {len(kept):4} "
                  f"score {score(before):5.1f}% -> {score(after):5.1f}%", file=sys.stderr, flush=True)
    with open(os.path.join(work, "mutation-rows.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("| package | tool | mutants | passing tests | mutation score | tests after minimization "
          "| score after minimization |")
    print("|---|---|---|---|---|---|---|")
    pooled = {}
    for r in rows:
        acc = pooled.setdefault(r["tool"], [0, 0.0, 0, 0, 0.0])
        acc[0] += r["mutants"]
        acc[1] += r["score"] * r["mutants"] / 100
        acc[2] += r["tests"]
        acc[3] += r["kept"]
        acc[4] += r["score_kept"] * r["mutants"] / 100
        print(f"| {r['package']} | {r['tool']} | {r['mutants']}{' (budget ended)' if r['exhausted'] else ''} "
              f"| {r['tests']} | {r['score']:.1f} % | {r['kept']} | {r['score_kept']:.1f} % |")
    for tool, (mutants, killed, tests, kept, killed_kept) in pooled.items():
        print(f"| **pooled** | {tool} | {mutants} | {tests} | {100 * killed / max(mutants, 1):.1f} % | {kept} "
              f"| {100 * killed_kept / max(mutants, 1):.1f} % |")


if __name__ == "__main__":
    main()
