//! Dynamic roles: `roles add` to a running or paused session, the role cap, bad role files, and
//! handleAdapt turning a worker's capability gap into a lint role that runs and is reported.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

/// A command role named `name` (prefix `prefix`) that runs the scripted role.py, which logs its
/// start and end in fixture-runs.log.
fn scripted_role_file(p: &Project, name: &str, prefix: &str) -> PathBuf {
    let script = scripted_roles().join("role.py");
    let text = format!(
        "---\nrole: {name}\nprefix: {prefix}\ninner_loop: false\nmessage_types: [progress, task_complete]\nbackend: command\ncommand: [\"python3\", \"{}\"]\ntimeout_s: 60\ndescription: \"Scripted extra role {name}.\"\n---\n# {name}\n",
        script.display()
    );
    let dir = p.tmp.path().join("extra").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("role.md");
    std::fs::write(&file, text).unwrap();
    file
}

fn task<'a>(tasks: &'a [Value], id: &str) -> &'a Value {
    tasks
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no task {id} in {tasks:?}"))
}

/// (start, end) of a task's last attempt in fixture-runs.log.
fn span(runs: &[(String, String, u32, f64)], id: &str) -> (f64, f64) {
    let at = |kind: &str| {
        runs.iter()
            .rev()
            .find(|r| r.0 == kind && r.1 == id)
            .unwrap_or_else(|| panic!("no {kind} of {id} in {runs:?}"))
            .3
    };
    (at("start"), at("end"))
}

fn dry_run(p: &Project, mode: &str) -> String {
    let out = p
        .scripted_run("test the calculator", mode)
        .arg("--dry-run")
        .run();
    out.assert_code(0);
    out.session_id()
}

#[test]
fn a_role_added_mid_run_after_testrun_001_runs_after_it_and_before_what_followed() {
    let p = Project::fixture("python-calc");
    let role = scripted_role_file(&p, "lint", "LINT");
    let child = p
        .scripted_run("test the calculator", "standard")
        .arg("-y")
        .env("TT_FIXTURE_SLEEP", "0.7")
        .spawn();
    // The session exists and its coordinator holds the lock: add while STRATEGY-001 runs.
    assert!(wait_for(Duration::from_secs(20), || {
        std::fs::read_dir(&p.sessions)
            .map(|rd| {
                rd.flatten().any(|e| {
                    std::fs::read_to_string(e.path().join("session.json"))
                        .unwrap_or_default()
                        .contains("\"status\": \"active\"")
                })
            })
            .unwrap_or(false)
    }));
    let out = p
        .cmd(&[
            "roles",
            "add",
            "lint",
            "--spec",
            role.to_str().unwrap(),
            "--after",
            "TESTRUN-001",
            "--max-roles",
            "6",
        ])
        .run();
    out.assert_code(0);
    assert!(
        out.stdout.contains("LINT-001 will run after TESTRUN-001")
            && out.stdout.contains("running"),
        "{}",
        out.stdout
    );
    let run = wait(child);
    run.assert_code(0);
    let id = run.session_id();
    let tasks = p.tasks(&id);
    assert_eq!(task(&tasks, "LINT-001")["status"], "completed");
    assert_eq!(
        task(&tasks, "LINT-001")["blockedBy"],
        serde_json::json!(["TESTRUN-001"])
    );
    assert_eq!(
        task(&tasks, "TESTGEN-002")["blockedBy"],
        serde_json::json!(["LINT-001"])
    );
    let runs = p.fixture_runs(&id);
    let (_, run1_end) = span(&runs, "TESTRUN-001");
    let (lint_start, lint_end) = span(&runs, "LINT-001");
    let (gen2_start, _) = span(&runs, "TESTGEN-002");
    assert!(run1_end <= lint_start && lint_end <= gen2_start, "{runs:?}");
    let added: Vec<Value> = p
        .messages(&id)
        .into_iter()
        .filter(|m| m["type"] == "role_added")
        .collect();
    assert_eq!(added.len(), 1, "{added:?}");
    assert_eq!(added[0]["data"]["task_id"], "LINT-001");
    assert!(p.session_dir(&id).join("role-specs/lint/role.md").is_file());
}

#[test]
fn a_role_added_to_a_paused_session_is_run_by_the_next_resume() {
    let p = Project::fixture("python-calc");
    let id = dry_run(&p, "targeted");
    let role = scripted_role_file(&p, "lint", "LINT");
    let out = p
        .cmd(&[
            "roles",
            "add",
            "lint",
            "--spec",
            role.to_str().unwrap(),
            "--session",
            &id,
            "--after",
            "STRATEGY-001",
        ])
        .run();
    out.assert_code(0);
    assert!(
        out.stdout.contains(&format!("team-testing resume {id}")),
        "{}",
        out.stdout
    );
    let tasks = p.tasks(&id);
    assert_eq!(task(&tasks, "LINT-001")["status"], "pending");
    assert_eq!(
        task(&tasks, "TESTGEN-001")["blockedBy"],
        serde_json::json!(["LINT-001"])
    );
    let roles = p.cmd(&["roles", "list", &id, "--json"]).run();
    roles.assert_code(0);
    assert!(roles.stdout.contains("\"LINT\""), "{}", roles.stdout);

    p.cmd(&["resume", &id, "-y"]).run().assert_code(0);
    let runs = p.fixture_runs(&id);
    let (lint_start, lint_end) = span(&runs, "LINT-001");
    assert!(span(&runs, "STRATEGY-001").1 <= lint_start);
    assert!(lint_end <= span(&runs, "TESTGEN-001").0, "{runs:?}");
    assert!(p.tasks(&id).iter().all(|t| t["status"] == "completed"));
}

#[test]
fn the_role_cap_refuses_one_role_too_many_and_max_roles_raises_it() {
    let p = Project::fixture("python-calc");
    let id = dry_run(&p, "standard");
    let before = std::fs::read_to_string(p.session_dir(&id).join("tasks.json")).unwrap();
    let lint = scripted_role_file(&p, "lint", "LINT");
    let add = |file: &PathBuf, extra: &[&str]| {
        let mut args = vec![
            "roles",
            "add",
            "x",
            "--spec",
            file.to_str().unwrap(),
            "--session",
            &id,
        ];
        args[2] = file
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        args.extend_from_slice(extra);
        p.cmd(&args).run()
    };
    // coordinator + strategist, generator, executor, analyst = 5 = max_roles.
    let out = add(&lint, &[]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("role cap reached: 5 roles in use")
            && out.stderr.contains("--max-roles 6 to add lint"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(p.session_dir(&id).join("tasks.json")).unwrap(),
        before,
        "a refused role changed tasks.json"
    );
    assert!(!p.session_dir(&id).join("role-specs/lint").exists());

    add(&lint, &["--max-roles", "6"]).assert_code(0);
    let scan = scripted_role_file(&p, "scan", "SCAN");
    let out = add(&scan, &[]);
    out.assert_code(2);
    assert!(out.stderr.contains("6 roles in use"), "{}", out.stderr);
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert_eq!(state["controls"]["max_roles"], 6);
}

#[test]
fn a_role_file_with_a_duplicate_prefix_or_an_unknown_backend_is_an_error_naming_it() {
    let p = Project::fixture("python-calc");
    let id = dry_run(&p, "targeted");
    let before = std::fs::read_to_string(p.session_dir(&id).join("tasks.json")).unwrap();
    let dup = scripted_role_file(&p, "lint", "TESTRUN");
    let out = p
        .cmd(&[
            "roles",
            "add",
            "lint",
            "--spec",
            dup.to_str().unwrap(),
            "--session",
            &id,
        ])
        .run();
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("prefix TESTRUN is already used by role executor")
            && out.stderr.contains("role.md"),
        "{}",
        out.stderr
    );
    let agent = p.tmp.path().join("reviewer.md");
    std::fs::write(
        &agent,
        "---\nrole: reviewer\nprefix: REVIEW\ninner_loop: false\nmessage_types: []\nbackend: builtin\nagent: [no-such-agent]\n---\nReview.\n",
    )
    .unwrap();
    let out = p
        .cmd(&[
            "roles",
            "add",
            "reviewer",
            "--spec",
            agent.to_str().unwrap(),
            "--session",
            &id,
        ])
        .run();
    out.assert_code(2);
    assert!(
        out.stderr.contains("reviewer.md")
            && out.stderr.contains("unknown backend 'no-such-agent'"),
        "{}",
        out.stderr
    );
    let bad = p.tmp.path().join("bad.md");
    std::fs::write(&bad, "---\nrole: [oops\n---\n").unwrap();
    let out = p
        .cmd(&[
            "roles",
            "add",
            "bad",
            "--spec",
            bad.to_str().unwrap(),
            "--session",
            &id,
        ])
        .run();
    out.assert_code(2);
    assert!(
        out.stderr.contains("bad.md: invalid frontmatter"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(p.session_dir(&id).join("tasks.json")).unwrap(),
        before
    );
}

#[test]
fn a_capability_gap_creates_a_lint_role_that_runs_and_is_reported() {
    let p = Project::fixture("python-buggy");
    // The change in scope: a module with an unused import for the linter to find.
    p.write(
        "inventory/extra.py",
        "import os\n\n\ndef double(x):\n    return x * 2\n",
    );
    let roles = copy_roles(&p);
    let out = p
        .run_with_roles(&roles, "test the inventory", "standard")
        .arg("-y")
        .arg("--max-roles")
        .arg("6")
        .env("TT_FIXTURE_TESTS", &generated("python-buggy"))
        .env(
            "TT_FIXTURE_GAP",
            "TESTGEN-001|lint|nothing checks the changed code statically",
        )
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let messages = p.messages(&id);
    let pos = |pred: &dyn Fn(&Value) -> bool| {
        messages
            .iter()
            .position(pred)
            .unwrap_or_else(|| panic!("missing message in {messages:#?}"))
    };
    let asked = pos(&|m| m["type"] == "capability_gap" && m["from"] == "generator");
    let answered = pos(&|m| {
        m["type"] == "capability_gap"
            && m["from"] == "coordinator"
            && m["data"]["resolution"]
                .as_str()
                .is_some_and(|r| r.contains("created from template lint: LINT-001"))
    });
    let added = pos(&|m| m["type"] == "role_added" && m["data"]["role"] == "lint");
    let done = pos(&|m| m["type"] == "task_complete" && m["data"]["task_id"] == "LINT-001");
    assert!(asked < added && added < answered && answered < done);
    let tasks = p.tasks(&id);
    assert_eq!(task(&tasks, "LINT-001")["status"], "completed");
    assert!(task(&tasks, "TESTANA-001")["blockedBy"]
        .as_array()
        .unwrap()
        .contains(&Value::from("LINT-001")));
    let dir = p.session_dir(&id);
    assert!(dir.join("role-specs/lint/run.py").is_file());
    let report = read_json(&dir.join("analysis/report.json"));
    let lint = &report["added_roles"][0];
    assert_eq!(lint["role"], "lint");
    assert_eq!(lint["status"], "completed");
    assert!(
        lint["summary"].as_str().unwrap().contains("1 finding"),
        "{lint}"
    );
    let findings = read_json(&dir.join("results/lint-LINT-001.json"));
    assert!(
        findings.to_string().contains("'os' imported but unused"),
        "{findings}"
    );
    let md = std::fs::read_to_string(dir.join("analysis/quality-report.md")).unwrap();
    assert!(
        md.contains("## Added Roles") && md.contains("LINT-001"),
        "{md}"
    );
}

#[test]
fn a_gap_at_the_role_cap_pauses_the_session_and_resume_with_more_roles_goes_on() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test the calculator", "standard")
        .arg("-y")
        .env("TT_FIXTURE_GAP", "TESTGEN-001|lint|no static analysis")
        .run();
    out.assert_code(3);
    assert!(
        out.stderr.contains("role cap reached") && out.stderr.contains("--max-roles"),
        "{}",
        out.stderr
    );
    let id = out.session_id();
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert_eq!(state["status"], "paused");
    assert_eq!(state["pending_gaps"][0]["gap"], "no static analysis");
    assert!(p.tasks(&id).iter().all(|t| t["id"] != "LINT-001"));
    let shutdown = p
        .messages(&id)
        .into_iter()
        .rfind(|m| m["type"] == "shutdown")
        .unwrap();
    assert_eq!(shutdown["data"]["status"], "paused");

    let out = p.cmd(&["resume", &id, "--max-roles", "6", "-y"]).run();
    out.assert_code(0);
    let tasks = p.tasks(&id);
    assert_eq!(task(&tasks, "LINT-001")["status"], "completed");
    assert!(tasks.iter().all(|t| t["status"] == "completed"));
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert!(state.get("pending_gaps").is_none(), "{state}");
}
