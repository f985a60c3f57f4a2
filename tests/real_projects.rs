//! What real projects from the registries showed (issue 32), each finding as a class on a
//! fixture made for it: `apply` into a copy, a mocha project's own tests and examples, shell
//! scripts beside Python code.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

fn strategist_data(p: &Project, id: &str) -> Value {
    p.tasks(id)
        .into_iter()
        .find(|t| t["owner"] == "strategist")
        .map(|t| t["outcome"]["data"].clone())
        .expect("a strategist task")
}

#[test]
fn issue32_apply_writes_into_the_checkout_it_is_given_and_refuses_another_project() {
    let p = Project::fixture("python-calc");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "targeted",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let clone = |name: &str| {
        let dir = p.tmp.path().join(name);
        let ok = Command::new("git")
            .args(["clone", "-q"])
            .arg(&p.repo)
            .arg(&dir)
            .status()
            .unwrap();
        assert!(ok.success());
        dir
    };

    // --repo names the copy: the copy gets the tests, the session's repository stays clean.
    let copy = clone("copy");
    let copy_arg = copy.to_str().unwrap();
    let applied = p.cmd(&["apply", &id, "--repo", copy_arg]).run();
    applied.assert_code(0);
    assert_eq!(
        git_status(&copy, false),
        "?? tests/team_testing/",
        "{}",
        applied.stdout
    );
    assert_eq!(
        git_status(&p.repo, false),
        "",
        "the session's repository changed"
    );

    // A plain apply from inside another copy writes that copy.
    let second = clone("second");
    let mut c = Command::new(BIN);
    c.args(["apply", &id])
        .current_dir(&second)
        .env("TEAM_TESTING_SESSIONS", &p.sessions);
    let plain = c.output().unwrap();
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    assert_eq!(git_status(&second, false), "?? tests/team_testing/");
    assert_eq!(git_status(&p.repo, false), "");

    // A checkout of another project is refused, naming it, and nothing is written.
    let other = Project::fixture("python-buggy");
    let refused = p
        .cmd(&["apply", &id, "--repo", other.repo.to_str().unwrap()])
        .run();
    refused.assert_code(2);
    assert!(
        refused.stderr.contains("no commit in common"),
        "{}",
        refused.stderr
    );
    assert_eq!(git_status(&other.repo, false), "");
}

fn mocha_project() -> Project {
    let p = Project::fixture("js-mocha");
    let deps = fixtures().join("js-deps/node_modules");
    assert!(
        deps.join(".bin/mocha").exists(),
        "mocha is missing: run `npm ci` in tests/fixtures/js-deps (.ci/run does)"
    );
    std::os::unix::fs::symlink(deps, p.repo.join("node_modules")).unwrap();
    p
}

/// The project's own test command as package.json writes it, run from the project root.
fn npm_test_mocha(dir: &Path) -> (bool, String) {
    let out = Command::new(dir.join("node_modules/.bin/mocha"))
        .args(["--reporter", "spec", "--check-leaks", "test/"])
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn passing(text: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            l.trim()
                .strip_suffix(" passing")
                .or_else(|| l.trim().split_once(" passing").map(|(n, _)| n))
        })
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn issue32_a_mocha_projects_own_tests_are_its_baseline_and_its_own_command_runs_what_apply_adds() {
    let p = mocha_project();
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the package",
            "--pipeline",
            "standard",
            "-y",
            "--seed",
            "7",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let session = p.session_dir(&id);

    // test/ holds the project's tests, examples/ is neither: only lib/ and index.js are source.
    let strategy = std::fs::read_to_string(session.join("strategy/test-strategy.md")).unwrap();
    assert!(strategy.contains("Existing test files: 1."), "{strategy}");
    let data = strategist_data(&p, &id);
    let priority: Vec<&str> = data["priority_files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(priority, ["index.js", "lib/charset.js"], "{data}");
    assert_eq!(data["baseline"]["status"], "ran", "{data}");
    assert_eq!(data["baseline"]["passed"], 2, "{data}");
    for layer_run in [
        "results/coverage-001.json",
        "results/coverage-baseline.json",
    ] {
        let cov = read_json(&session.join(layer_run));
        let files: Vec<&str> = cov["files"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["path"].as_str())
            .collect();
        assert_eq!(files, ["index.js", "lib/charset.js"], "{layer_run}: {cov}");
    }
    let tests = std::fs::read_dir(session.join("tests/L1-unit")).unwrap();
    for t in tests.flatten() {
        let name = t.file_name().to_string_lossy().into_owned();
        assert!(
            !name.contains("accept") && !name.starts_with("charset.test.js.test"),
            "a test of an example or of the project's own tests: {name}"
        );
    }
    // mocha's report names no files, yet the project's suite is the mutation baseline, and the
    // minimized layer keeps exactly the tests the analysis kept (names with a `[hash]` too).
    let mutation = read_json(&session.join("results/mutation.json"));
    assert!(
        mutation["baseline"]["tests"].as_u64() >= Some(2),
        "{mutation}"
    );
    let kept = mutation["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["layer"] == "L1-unit")
        .map(|l| l["after"]["tests"].as_u64().unwrap())
        .unwrap();
    let written: usize = std::fs::read_dir(session.join("tests/L1-unit"))
        .unwrap()
        .flatten()
        .map(|f| {
            let source = std::fs::read_to_string(f.path()).unwrap();
            source
                .lines()
                .filter(|l| l.trim_start().starts_with("it("))
                .count()
        })
        .sum();
    assert_eq!(written as u64, kept, "{mutation}");

    // The project's own command (`mocha … test/`, not recursive) runs the applied tests.
    let (ok, before) = npm_test_mocha(&p.repo);
    assert!(ok, "{before}");
    let applied = p.cmd(&["apply", &id]).run();
    applied.assert_code(0);
    assert!(!applied.stdout.contains("add '"), "{}", applied.stdout);
    let (ok, after) = npm_test_mocha(&p.repo);
    assert!(ok, "{after}");
    assert!(
        passing(&after) > passing(&before),
        "the applied tests did not run: {before}\n---\n{after}"
    );
}

#[test]
fn issue32_shell_scripts_docs_and_examples_count_for_nothing_and_coverage_only_rises() {
    let p = Project::fixture("python-scripts");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the ledger",
            "--pipeline",
            "standard",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let session = p.session_dir(&id);
    let report = p.cmd(&["report", &id, "--format", "json"]).run();
    report.assert_code(0);
    let report: Value = serde_json::from_str(&report.stdout).unwrap();
    let data = strategist_data(&p, &id);
    let priority: Vec<&str> = data["priority_files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        priority,
        ["ledger/__init__.py", "ledger/money.py"],
        "{data}"
    );
    // Every file's coverage and the whole only rise once the generated tests are added.
    let baseline = read_json(&session.join("results/coverage-baseline.json"));
    let after = read_json(&session.join("results/coverage-001.json"));
    let percent = |cov: &Value, path: &str| {
        cov["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .map(|f| {
                f["lines_covered"].as_f64().unwrap() / f["lines_total"].as_f64().unwrap().max(1.0)
            })
    };
    for file in after["files"].as_array().unwrap() {
        let path = file["path"].as_str().unwrap();
        assert!(
            path.ends_with(".py") && path.starts_with("ledger/"),
            "{path} counted"
        );
        if let (Some(b), Some(a)) = (percent(&baseline, path), percent(&after, path)) {
            assert!(a >= b, "{path}: {b} -> {a}");
        }
    }
    let recommendations = report["recommendations"].to_string();
    assert!(!recommendations.contains(".sh"), "{recommendations}");
}

#[test]
fn issue32_a_test_fix_run_that_fixes_nothing_exits_1_says_what_is_needed_and_stays_archived() {
    let p = Project::fixture("python-fixcycle");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "fix the failing tests",
            "--pipeline",
            "test-fix",
            "-y",
        ])
        .run();
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("nothing was fixed: the fixer needs an agent backend"),
        "{}",
        out.stderr
    );
    let next = out
        .stdout
        .lines()
        .find(|l| l.starts_with("Next:"))
        .unwrap_or_default();
    assert!(!next.contains("deepen"), "{next}");
    assert!(next.contains("--backend 'fixer=claude'"), "{next}");
    let id = out.session_id();
    let session = p.session_dir(&id);
    // The localisation it wrote carries no terminal colours.
    let md = std::fs::read_to_string(session.join("analysis/fault-localisation.md")).unwrap();
    assert!(!md.contains('\u{1b}'), "{md}");
    // `fix` again, with nobody to ask: the archived session is archived again, not reopened.
    let again = p.cmd(&["fix", &id]).run();
    again.assert_code(1);
    let state = read_json(&session.join("session.json"));
    assert_eq!(state["status"], "archived", "{}", again.stderr);
}

#[test]
fn issue32_messages_name_what_exists_and_a_fix_pipeline_it_cannot_run_is_refused_up_front() {
    let p = Project::fixture("python-calc");
    let typo = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "x",
            "--pipeline",
            "standrad",
            "--dry-run",
        ])
        .run();
    typo.assert_code(2);
    assert!(
        typo.stderr.contains("did you mean 'standard'"),
        "{}",
        typo.stderr
    );
    assert!(typo.stderr.contains("test-fix"), "{}", typo.stderr);
    let status = p.cmd(&["status"]).run();
    status.assert_code(2);
    assert!(
        status.stderr.contains("start one with `team-testing run"),
        "{}",
        status.stderr
    );
    assert!(
        !status.stderr.contains("name one of: none"),
        "{}",
        status.stderr
    );
    let rnu = p.cmd(&["rnu"]).run();
    rnu.assert_code(2);
    assert!(
        rnu.stderr.contains("a similar subcommand exists: 'run'"),
        "{}",
        rnu.stderr
    );
    // A project with no test framework: the cycle has nothing to run, said before any session
    // exists.
    let m = Project::plain();
    std::fs::remove_file(m.repo.join("main.py")).unwrap();
    let refused = m
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "fix it",
            "--pipeline",
            "test-fix",
            "-y",
        ])
        .run();
    refused.assert_code(2);
    assert!(
        refused.stderr.contains("found no test framework"),
        "{}",
        refused.stderr
    );
    assert!(
        !m.sessions.exists() || std::fs::read_dir(&m.sessions).unwrap().count() == 0,
        "a session was made"
    );
}

#[test]
fn issue32_the_reports_agree_on_layers_that_had_nothing_to_test_and_name_no_session_path() {
    // A crate with no library (a program only): the generator has no module to test, so every
    // layer is not applicable.
    let p = Project::fixture("rust-crate");
    std::fs::remove_file(p.repo.join("src/lib.rs")).unwrap();
    p.write("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    git(&p.repo, &["add", "-A"]);
    git(&p.repo, &["commit", "-q", "-m", "a program only"]);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the crate",
            "--pipeline",
            "standard",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let session = p.session_dir(&id);
    let md = std::fs::read_to_string(session.join("analysis/quality-report.md")).unwrap();
    assert!(md.contains("Quality score: **not scored**"), "{md}");
    assert!(!md.contains("Score = 0.0"), "{md}");
    let html = std::fs::read_to_string(session.join("analysis/report.html")).unwrap();
    assert!(
        html.contains("Layers meeting their gate<b>0 / 0</b>2 not applicable"),
        "the HTML card counts not-applicable layers as missed"
    );
    let analyst = p
        .tasks(&id)
        .into_iter()
        .find(|t| t["owner"] == "analyst")
        .unwrap();
    let summary = analyst["outcome"]["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("0/0 (2 not applicable)"), "{summary}");

    // A defect test's expected-failure reason names the project, never the session.
    let b = Project::fixture("python-buggy");
    let roles = copy_roles(&b);
    let out = b
        .run_with_roles(&roles, "test pricing", "targeted")
        .env("TT_FIXTURE_TESTS", &generated("python-buggy"))
        .run();
    out.assert_code(0);
    let id = out.session_id();
    b.cmd(&["apply", &id]).run().assert_code(0);
    let sessions = b.sessions.display().to_string();
    let mut reasons = 0;
    for (_, text) in walk(&b.repo.join("tests/team_testing")) {
        for line in text
            .lines()
            .filter(|l| l.contains("code_defect found by team-testing"))
        {
            reasons += 1;
            assert!(!line.contains(&sessions), "{line}");
            assert!(
                !line.contains("L1-unit/") && !line.contains("L2-integration/"),
                "{line}"
            );
        }
    }
    assert!(reasons > 0, "no defect test was applied");
}

fn walk(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((path.display().to_string(), text));
            }
        }
    }
    out
}

#[test]
fn issue32_dependencies_are_fetched_before_the_sandbox_and_a_failed_fetch_names_its_command() {
    // A crate with a dependency and no lock: fetched (and locked) in the session, never in
    // the project, so the sandboxed run without network builds it.
    let p = Project::fixture("rust-dep");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the crate",
            "--pipeline",
            "targeted",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let data = strategist_data(&p, &id);
    let status = data["dependencies"]["status"].as_str().unwrap_or_default();
    assert!(matches!(status, "fetched" | "present"), "{data}");
    assert_eq!(data["baseline"]["status"], "ran", "{data}");
    assert_eq!(data["baseline"]["passed"], 1, "{data}");
    assert!(
        !p.repo.join("Cargo.lock").exists(),
        "a lock was written into the project"
    );
    assert_eq!(git_status(&p.repo, false), "");

    // A module whose requirement cannot be fetched: the report names the command, and the
    // infrastructure is not called fit.
    let g = Project::fixture("go-dep");
    let out = g
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the module",
            "--pipeline",
            "targeted",
            "-y",
        ])
        .env("GOPROXY", "off")
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let report = g.cmd(&["report", &id, "--format", "json"]).run();
    report.assert_code(0);
    let report: Value = serde_json::from_str(&report.stdout).unwrap();
    let recommendations = report["recommendations"].to_string();
    assert!(
        recommendations.contains("`go mod download`"),
        "{recommendations}"
    );
    assert_eq!(
        report["confidence"]["infrastructure_fitness"], 0.0,
        "{report}"
    );
}
