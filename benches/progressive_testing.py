#!/usr/bin/env python3
"""What progressive testing saves in the test-fix cycle.

Builds a project of MODULES modules with TESTS tests each (every test does a little real work),
seeds one bug in each of two modules, and runs `team-testing run --pipeline test-fix` with a small
agent that fixes one bug per call. From the session's iteration-state.json it prints, per
iteration, the tests the iteration ran and their wall time against the whole suite's, measured
in the same run (iteration 0 and the final validation run every test). The alternative a user
would otherwise have, re-running the whole suite after each fix, costs the full-suite time per
iteration.

    cargo build --release
    python3 benches/progressive_testing.py [--modules 40] [--tests 10] [--bin target/release/team-testing]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

AGENT = r'''
import os, re, sys
prompt = open(sys.argv[-1]).read()
failing = prompt.split("FAILING TESTS", 1)[1].split("FAULT LOCALISATION", 1)[0]
for m in sorted(set(re.findall(r"tests/test_(m\d+)\.py", failing))):
    name = "pkg/%s.py" % m
    head = "# path: " + name + "\n"
    text = prompt.split(head, 1)[1].split("```", 1)[0]
    os.makedirs("pkg", exist_ok=True)
    open(name, "w").write(text.replace("n * 3 + 1  # BUG", "n * 2 + 1"))
    break
print("fixed")
'''


def build(root, modules, tests, bugs):
    os.makedirs(os.path.join(root, "pkg"))
    os.makedirs(os.path.join(root, "tests"))
    open(os.path.join(root, "pkg", "__init__.py"), "w").close()
    open(os.path.join(root, "pytest.ini"), "w").write("[pytest]\ntestpaths = tests\n")
    for i in range(modules):
        step = "n * 3 + 1  # BUG" if i in bugs else "n * 2 + 1"
        open(os.path.join(root, "pkg", "m%d.py" % i), "w").write(textwrap.dedent(f"""\
            def step(n):
                return {step}


            def work(n):
                total = 0
                for k in range(20000):
                    total = (total + k * n) % 1000003
                return total
            """))
        body = "from pkg.m%d import step, work\n\n" % i
        for t in range(tests):
            body += f"\ndef test_{t}():\n    assert work({t}) >= 0\n    assert step({t}) == {t} * 2 + 1\n\n"
        open(os.path.join(root, "tests", "test_m%d.py" % i), "w").write(body)
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "bench"]):
        subprocess.run(git + args, cwd=root, check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", type=int, default=40)
    ap.add_argument("--tests", type=int, default=10)
    ap.add_argument("--bin", default="target/release/team-testing")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    with tempfile.TemporaryDirectory() as tmp:
        repo = os.path.join(tmp, "repo")
        os.makedirs(repo)
        build(repo, a.modules, a.tests, bugs={3, a.modules - 5})
        agent = os.path.join(tmp, "agent.py")
        open(agent, "w").write(AGENT)
        cfg = os.path.join(tmp, "team-testing.toml")
        open(cfg, "w").write(
            '[backends.bench]\nkind = "cli"\ncommand = ["%s", "%s", "{prompt_file}"]\n'
            % (sys.executable, agent))
        env = dict(os.environ, TEAM_TESTING_SESSIONS=os.path.join(tmp, "sessions"))
        # What a user re-running the whole suite after each fix pays: plain pytest, no coverage.
        plain = []
        for _ in range(3):
            t0 = time.monotonic()
            subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo,
                           env=dict(env, PYTHONDONTWRITEBYTECODE="1"), capture_output=True, timeout=600)
            plain.append(time.monotonic() - t0)
        plain_s = sorted(plain)[1]
        started = time.monotonic()
        out = subprocess.run(
            [binary, "run", "fix the failing tests", "--pipeline", "test-fix", "-y",
             "--config", cfg, "--backend", "fixer=bench", "--json"],
            cwd=repo, env=env, capture_output=True, text=True, timeout=1800)
        wall = time.monotonic() - started
        if out.returncode != 0:
            sys.exit("the run failed:\n" + out.stdout[-2000:] + out.stderr[-2000:])
        sessions = os.path.join(tmp, "sessions")
        session = os.path.join(sessions, os.listdir(sessions)[0])
        state = json.load(open(os.path.join(session, "iteration-state.json")))
    its = state["iterations"]
    full_s = its[0]["tests_duration_s"]
    final = state["final_validation"]
    suite = its[0]["suite_size"]
    print(f"project: {a.modules} modules x {a.tests} tests = {suite} tests; status {state['status']}; wall {wall:.1f} s")
    print(f"whole suite: {full_s:.2f} s at iteration 0, {final['duration_s']:.2f} s at the final validation")
    print("| iteration | outcome | tests run | test time (s) | whole suite (s) | time saved |")
    print("|---|---|---|---|---|---|")
    ran_s = 0.0
    for i in its[1:]:
        ran_s += i["tests_duration_s"]
        saved = 1 - i["tests_duration_s"] / full_s if full_s else 0
        print(f"| {i['iteration']} | {i['outcome']} | {len(i['selected_tests'])} of {i['suite_size']} "
              f"| {i['tests_duration_s']:.2f} | {full_s:.2f} | {saved:.0%} |")
    n = len(its) - 1
    print(f"plain pytest, whole suite (median of 3): {plain_s:.2f} s; per iteration the cycle's "
          f"progressive run took {ran_s / n:.2f} s ({plain_s / (ran_s / n):.1f}x less)")
    print(f"iterations: {n}; tests run {state['tests_run']} of {state['tests_full']} "
          f"({1 - state['tests_run'] / state['tests_full']:.0%} fewer); test time {ran_s:.2f} s "
          f"against {n * full_s:.2f} s for the whole suite each time ({(n * full_s) / ran_s:.1f}x)")


if __name__ == "__main__":
    main()
