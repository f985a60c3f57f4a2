//! Agents write and repair tests in every family: a scripted agent CLI (it works in its folder,
//! a copy of the project, and prints nothing of use) on a node:test, a jest, a vitest, a cargo
//! and a go fixture, through the family's accept filter, `apply`, and the project's own test
//! command; a Python agent that edits a test file in place; a node test repaired in place.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::*;

fn family_agent() -> String {
    fixtures()
        .join("agents/family_agent.py")
        .display()
        .to_string()
}

/// A config whose `fake` backend is the scripted family agent.
fn family_config(p: &Project) -> PathBuf {
    config(
        p,
        &format!(
            "[backends.fake]\nkind = \"cli\"\ncommand = [\"python3\", {:?}]\ntimeout_s = 120\n",
            family_agent()
        ),
    )
}

/// The JS fixtures' shared packages, linked in (each fixture's .gitignore leaves them out).
fn link_js_deps(p: &Project) {
    let deps = fixtures().join("js-deps/node_modules");
    assert!(
        deps.join(".bin/jest").exists(),
        "run `npm ci` in tests/fixtures/js-deps (.ci/run does)"
    );
    std::os::unix::fs::symlink(deps, p.repo.join("node_modules")).unwrap();
}

/// Runs the generator through the scripted agent, then checks what the issue promises: the good
/// candidate alone is kept, the others are rejected with their reason, `apply` delivers it and
/// the project's own `command` runs it and passes, and nothing else in the repository changed.
fn agent_writes_and_apply_delivers(p: &Project, good: &str, command: &[&str]) {
    let cfg = family_config(p);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the package",
            "--pipeline",
            "targeted",
            "-y",
            "--config",
            cfg.to_str().unwrap(),
            "--backend",
            "generator=fake",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let gen = generator_task(p, &id);
    let data = &gen["outcome"]["data"];
    assert_eq!(data["backend"], "fake", "{gen}");
    assert_eq!(
        data["test_files"],
        serde_json::json!([format!("tests/L1-unit/{good}")]),
        "{gen}"
    );
    let rejected = data["rejected"].as_array().unwrap();
    let reason = |stem: &str| -> String {
        rejected
            .iter()
            .find(|r| r["file"].as_str().unwrap().starts_with(stem))
            .map(|r| r["reason"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("{stem} not rejected: {rejected:?}"))
    };
    assert!(
        reason("agent_wrong").starts_with("failed: "),
        "{rejected:?}"
    );
    assert!(
        reason("agent_broken").starts_with("did not load: "),
        "{rejected:?}"
    );
    assert!(
        reason("agent_unsafe").starts_with("unsafe: "),
        "{rejected:?}"
    );
    // The executor ran the accepted file for real and it passed.
    let run = read_json(&p.session_dir(&id).join("results/run-001.json"));
    assert!(run["passed"].as_u64().unwrap() >= 1, "{run}");
    assert_eq!(run["failed"], 0, "{run}");
    assert_eq!(git_status(&p.repo, false), "");

    p.cmd(&["apply", &id]).run().assert_code(0);
    let ran = command_in(&p.repo, command);
    assert!(
        ran.status.success(),
        "{command:?} after apply:\n{}\n{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    // Only the applied tests (and their record) are new in the repository.
    let status = git_status(&p.repo, false);
    assert!(
        status.lines().all(|l| l.starts_with("?? ")),
        "apply changed a file of the project:\n{status}"
    );
}

/// The project's own test command, run from its root, with a timeout.
fn command_in(repo: &Path, command: &[&str]) -> std::process::Output {
    let mut child = Command::new("timeout");
    child.arg("300").args(command).current_dir(repo);
    child.output().unwrap()
}

#[test]
fn an_agent_writes_node_test_tests_that_pass_after_apply() {
    let p = Project::fixture("node-pkg");
    agent_writes_and_apply_delivers(&p, "agent_strings.test.js", &["node", "--test"]);
}

#[test]
fn an_agent_writes_jest_tests_that_pass_after_apply() {
    let p = Project::fixture("js-jest");
    link_js_deps(&p);
    agent_writes_and_apply_delivers(
        &p,
        "agent_strings.test.js",
        &["node_modules/.bin/jest", "--ci"],
    );
}

#[test]
fn an_agent_writes_vitest_tests_that_pass_after_apply() {
    let p = Project::fixture("js-vitest");
    link_js_deps(&p);
    agent_writes_and_apply_delivers(
        &p,
        "agent_stack.test.js",
        &["node_modules/.bin/vitest", "run"],
    );
}

#[test]
fn an_agent_writes_rust_tests_that_pass_after_apply() {
    let p = Project::fixture("rust-crate");
    if !has_llvm_cov() {
        // No coverage to add to: no candidate can be accepted, and the reason says so.
        let cfg = family_config(&p);
        let out = p
            .cmd(&[
                "run",
                "--max-mutants",
                QUICK_MUTANTS,
                "test it",
                "--pipeline",
                "targeted",
                "-y",
                "--config",
            ])
            .arg(cfg.to_str().unwrap())
            .args(&["--backend", "generator=fake"])
            .run();
        let gen = generator_task(&p, &out.session_id());
        assert!(
            gen.to_string().contains("coverage could not be measured"),
            "{gen}"
        );
        return;
    }
    agent_writes_and_apply_delivers(&p, "agent_shapes.rs", &["cargo", "test", "--offline"]);
}

#[test]
fn an_agent_writes_go_tests_that_pass_after_apply() {
    let p = Project::fixture("go-calc");
    agent_writes_and_apply_delivers(&p, "agent_calc_test.go", &["go", "test", "./..."]);
}

/// An agent CLI that edits one of the project's test files in place in its copy and prints
/// nothing of use: its edit is its answer; the user's file is untouched.
#[test]
fn an_agent_that_edits_a_file_in_its_copy_has_the_edit_taken_as_its_answer() {
    let p = Project::fixture("python-calc");
    let own = std::fs::read_to_string(p.repo.join("tests/test_ops.py")).unwrap();
    let cfg = cli_config(&p, 60);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "targeted",
            "-y",
            "--config",
            cfg.to_str().unwrap(),
            "--backend",
            "generator=fake",
        ])
        .env("FAKE_AGENT_MODE", "inplace")
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let gen = generator_task(&p, &id);
    assert_eq!(
        gen["outcome"]["data"]["test_files"],
        serde_json::json!(["tests/L1-unit/test_ops.py"]),
        "{gen}"
    );
    let kept =
        std::fs::read_to_string(p.session_dir(&id).join("tests/L1-unit/test_ops.py")).unwrap();
    assert!(kept.contains("def test_mean_of_a_list"), "{kept}");
    assert_eq!(
        std::fs::read_to_string(p.repo.join("tests/test_ops.py")).unwrap(),
        own
    );
    assert_eq!(git_status(&p.repo, false), "");
}

/// The executor's self-repair outside Python: a node test that calls a misspelt function goes
/// to the agent, which fixes it in place in its copy; the repaired test passes, nothing is
/// quarantined.
#[test]
fn the_executor_repairs_a_node_test_through_its_agent() {
    let p = Project::fixture("node-pkg");
    let roles = copy_roles(&p);
    let cfg = family_config(&p);
    let out = p
        .run_with_roles(&roles, "test the strings", "targeted")
        .arg("-y")
        .arg("--config")
        .arg(cfg.to_str().unwrap())
        .arg("--backend")
        .arg("executor=fake")
        .env(
            "TT_FIXTURE_TESTS",
            fixtures()
                .join("generated/node-pkg-repair")
                .to_str()
                .unwrap(),
        )
        .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    let id = out.session_id();
    let run: Value = read_json(&p.session_dir(&id).join("results/run-001.json"));
    let repairs = run["repairs"].as_array().unwrap();
    assert!(
        repairs
            .iter()
            .any(|r| r["action"] == "repaired by agent" && r["file"] == "wrong_call.test.js"),
        "{repairs:?}"
    );
    assert_eq!(run["failed"], 0, "{run}");
    assert!(run["quarantined"].as_array().unwrap().is_empty(), "{run}");
    let fixed =
        std::fs::read_to_string(p.session_dir(&id).join("tests/L1-unit/wrong_call.test.js"))
            .unwrap();
    assert!(fixed.contains("capitalize('')"), "{fixed}");
}
