//! How a run ends (the completion action) and what runs a session again: deepen, revise, rerun.

use serde_json::Value;

use crate::common::*;

fn task<'a>(tasks: &'a [Value], id: &str) -> &'a Value {
    tasks
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no task {id} in {tasks:?}"))
}

fn ran(p: &Project, id: &str) -> Vec<String> {
    p.fixture_runs(id)
        .into_iter()
        .filter(|r| r.0 == "start")
        .map(|r| r.1)
        .collect()
}

#[test]
fn yes_archives_the_session_and_it_stays_readable() {
    let p = Project::fixture("python-calc");
    let out = p.scripted_run("test the ops", "targeted").arg("-y").run();
    out.assert_code(0);
    let id = out.session_id();
    assert!(out.stdout.contains("Archived in place: "), "{}", out.stdout);
    // Archived where it is: the folder keeps its path.
    let archived = p.sessions.join(&id);
    assert!(archived.join("session.json").is_file());
    assert!(!p.sessions.join("archive").exists());
    assert_eq!(
        read_json(&archived.join("session.json"))["status"],
        "archived"
    );
    let last = p.messages(&id).pop().unwrap();
    assert_eq!(last["data"]["completion_action"], "archived", "{last}");

    let status = p.cmd(&["status", &id, "--json"]).run();
    status.assert_code(0);
    assert!(status.stdout.contains("\"archived\""), "{}", status.stdout);
    let list = p.cmd(&["sessions", "--all", "--json"]).run();
    let rows: Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(rows[0]["archived"], true);
    // Nothing to resume in a completed session.
    p.cmd(&["resume", &id]).run().assert_code(2);
}

#[test]
fn keep_leaves_the_session_paused_and_resumable() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test the ops", "targeted")
        .arg("--completion")
        .arg("keep")
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let dir = p.sessions.join(&id);
    assert_eq!(read_json(&dir.join("session.json"))["status"], "paused");
    assert_eq!(read_json(&dir.join(".msg/meta.json"))["status"], "paused");
    // Resuming a kept session re-runs nothing and ends with the next completion action.
    let out = p.cmd(&["resume", &id, "--completion", "archive"]).run();
    out.assert_code(0);
    assert_eq!(ran(&p, &id).len(), 3);
    assert_eq!(read_json(&dir.join("session.json"))["status"], "archived");
}

#[test]
fn without_a_terminal_interactive_falls_back_to_keep_and_says_so() {
    let p = Project::fixture("python-calc");
    let out = p.scripted_run("test the ops", "targeted").run();
    out.assert_code(0);
    assert!(
        out.stderr
            .contains("no terminal to ask on: the session is kept"),
        "{}",
        out.stderr
    );
    let state = read_json(&p.sessions.join(out.session_id()).join("session.json"));
    assert_eq!(state["status"], "paused");
    assert_eq!(state["completion_action"], "keep");
}

#[test]
fn deepen_adds_the_l3_layer_to_a_standard_run() {
    let p = Project::fixture("python-contracts");
    // The layers, not the search or the loop, are under test: a short generator budget and no GC
    // rounds (both kept in the session, so deepen uses them too).
    let mut spec =
        read_json(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/team-config.json"));
    spec["generator_budget_s"] = serde_json::json!(5);
    let spec_file = p.tmp.path().join("team-config.json");
    std::fs::write(&spec_file, spec.to_string()).unwrap();
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the shapes",
            "--pipeline",
            "standard",
            "--spec",
            spec_file.to_str().unwrap(),
            "--max-rounds",
            "0",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    assert!(p.tasks(&id).iter().all(|t| t["layer"] != "L3-e2e"));

    // Deepen runs the archived session where it is.
    let out = p.cmd(&["deepen", &id, "-y"]).run();
    out.assert_code(0);
    assert!(!p.sessions.join("archive").exists());
    assert!(
        out.stdout
            .contains("deepen: L3-e2e added (TESTGEN-003, TESTRUN-003, TESTANA-002, target 40%)"),
        "{}",
        out.stdout
    );
    let tasks = p.tasks(&id);
    for id in ["TESTGEN-003", "TESTRUN-003", "TESTANA-002"] {
        assert_eq!(task(&tasks, id)["status"], "completed", "{id}");
    }
    assert_eq!(task(&tasks, "TESTRUN-003")["layer"], "L3-e2e");
    let dir = p.session_dir(&id);
    assert_eq!(dir, p.sessions.join(&id));
    let l3 = std::fs::read_dir(dir.join("tests/L3-e2e")).unwrap().count();
    assert!(l3 > 0, "no L3 tests were written");
    let report = read_json(&dir.join("analysis/report.json"));
    let layers: Vec<&str> = report["layers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["layer"].as_str())
        .collect();
    assert!(layers.contains(&"L3-e2e"), "{layers:?}");
}

#[test]
fn deepen_with_a_raised_target_opens_new_rounds() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test the ops", "targeted")
        .arg("--completion")
        .arg("keep")
        .env("TT_FIXTURE_COVERAGE", "85")
        .run();
    out.assert_code(0);
    let id = out.session_id();
    // 85 % met the L1 target of 80 %: no round was used.
    assert_eq!(p.tasks(&id).len(), 3);
    let out = p
        .cmd(&[
            "deepen",
            &id,
            "--layer",
            "L1",
            "--target",
            "90",
            "--completion",
            "keep",
        ])
        // Each round gains more than a point: never a plateau.
        .env("TT_FIXTURE_COVERAGE", "85,86.5,88,89")
        .run();
    out.assert_code(0);
    assert!(
        out.stdout.contains("L1-unit target 80% -> 90%"),
        "{}",
        out.stdout
    );
    let tasks = p.tasks(&id);
    assert_eq!(
        task(&tasks, "TESTRUN-L1-fix-1")["meta"]["coverage_target"],
        90.0
    );
    // 89 < 90: a fresh budget of three rounds, then the layer is accepted below its gate.
    assert_eq!(task(&tasks, "TESTRUN-L1-fix-3")["status"], "completed");
    assert!(tasks.iter().all(|t| t["id"] != "TESTRUN-L1-fix-4"));
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert!(
        state["warnings"]
            .to_string()
            .contains("coverage 89.0% < 90% after 3 GC rounds"),
        "{state}"
    );
}

#[test]
fn revise_adds_a_revision_with_the_feedback_and_runs_its_layer_again() {
    let p = Project::fixture("python-calc");
    let out = p.scripted_run("test the ops", "targeted").arg("-y").run();
    out.assert_code(0);
    let id = out.session_id();
    let out = p
        .cmd(&[
            "revise",
            "TESTGEN-001",
            "--feedback",
            "cover the error paths; $(rm -rf ~) stays text",
            "--session",
            &id,
            "-y",
        ])
        .run();
    out.assert_code(0);
    let tasks = p.tasks(&id);
    let rev = task(&tasks, "TESTGEN-001-rev-1");
    assert_eq!(rev["status"], "completed");
    assert_eq!(rev["owner"], "generator");
    assert!(rev["description"]
        .as_str()
        .unwrap()
        .contains("cover the error paths; $(rm -rf ~) stays text"));
    assert_eq!(
        task(&tasks, "TESTRUN-002")["blockedBy"],
        serde_json::json!(["TESTGEN-001-rev-1"])
    );
    assert_eq!(task(&tasks, "TESTRUN-002")["status"], "completed");
    assert_eq!(
        ran(&p, &id),
        [
            "STRATEGY-001",
            "TESTGEN-001",
            "TESTRUN-001",
            "TESTGEN-001-rev-1",
            "TESTRUN-002"
        ]
    );
    let bad = p
        .cmd(&["revise", "NOPE-001", "--feedback", "x", "--session", &id])
        .run();
    bad.assert_code(2);
    assert!(
        bad.stderr.contains("revise NOPE-001: no such task"),
        "{}",
        bad.stderr
    );
}

#[test]
fn rerun_runs_only_the_tasks_that_failed_or_were_blocked() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test the calculator", "standard")
        .arg("-y")
        .env("TT_FIXTURE_FAIL", "TESTGEN-002:always")
        .run();
    out.assert_code(1);
    let id = out.session_id();
    let tasks = p.tasks(&id);
    assert_eq!(task(&tasks, "TESTGEN-002")["status"], "failed");
    assert_eq!(task(&tasks, "TESTANA-001")["status"], "skipped");
    let before = ran(&p, &id).len();

    let out = p.cmd(&["rerun", &id, "-y"]).run();
    out.assert_code(0);
    assert!(
        out.stdout
            .contains("rerun: TESTGEN-002, TESTRUN-002, TESTANA-001"),
        "{}",
        out.stdout
    );
    let again: Vec<String> = ran(&p, &id).into_iter().skip(before).collect();
    assert_eq!(again, ["TESTGEN-002", "TESTRUN-002", "TESTANA-001"]);
    assert!(p.tasks(&id).iter().all(|t| t["status"] == "completed"));
    // Nothing left to rerun.
    let out = p.cmd(&["rerun", &id]).run();
    out.assert_code(2);
    assert!(out.stderr.contains("nothing to rerun"), "{}", out.stderr);
}

/// Runs the binary on a pseudo-terminal (Python's pty module, no shell) with `input` typed in;
/// returns the exit code and everything the terminal showed.
fn on_a_terminal(p: &Project, args: &[&str], input: &str) -> (i32, String) {
    use std::io::Write;
    let mut child = std::process::Command::new("python3")
        .args([
            "-c",
            "import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn(sys.argv[1:])))",
            BIN,
        ])
        .args(args)
        .current_dir(&p.repo)
        .env("TEAM_TESTING_SESSIONS", &p.sessions)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = wait(child);
    (out.code, out.stdout + &out.stderr)
}

#[test]
fn on_a_terminal_run_shows_the_plan_and_cancel_runs_nothing() {
    let p = Project::fixture("python-calc");
    let roles = scripted_roles();
    let args = [
        "run",
        "test the ops",
        "--pipeline",
        "targeted",
        "--roles-dir",
        roles.to_str().unwrap(),
    ];
    let (code, screen) = on_a_terminal(&p, &args, "c\n");
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("Plan: targeted pipeline, 3 tasks")
            && screen.contains("Run this plan?")
            && screen.contains("Cancelled before anything ran"),
        "{screen}"
    );
    let id = screen
        .lines()
        .find_map(|l| l.trim().strip_prefix("Session "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_string();
    assert!(p.tasks(&id).iter().all(|t| t["status"] == "pending"));
    assert!(p.fixture_runs(&id).is_empty());
    assert_eq!(
        read_json(&p.session_dir(&id).join("session.json"))["status"],
        "paused"
    );
}

#[test]
fn on_a_terminal_the_completion_action_is_asked_and_archive_is_done() {
    let p = Project::fixture("python-calc");
    let roles = scripted_roles();
    let args = [
        "run",
        "test the ops",
        "--pipeline",
        "targeted",
        "--roles-dir",
        roles.to_str().unwrap(),
    ];
    // Proceed with the plan; at the end, Archive & Clean.
    let (code, screen) = on_a_terminal(&p, &args, "p\na\n");
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("Pipeline complete. What next?") && screen.contains("Archived in place: "),
        "{screen}"
    );
    let sessions: Vec<_> = std::fs::read_dir(&p.sessions).unwrap().flatten().collect();
    assert_eq!(sessions.len(), 1);
    let state = read_json(&sessions[0].path().join("session.json"));
    assert_eq!(state["status"], "archived");
}

#[test]
fn rerun_runs_only_the_tests_that_failed_and_keeps_the_passes() {
    let p = Project::fixture("python-buggy");
    let roles = copy_roles(&p);
    let tests = generated("python-buggy");
    let out = p
        .run_with_roles(&roles, "test the inventory", "targeted")
        .args(&["--max-rounds", "0", "--completion", "keep"])
        .env("TT_FIXTURE_TESTS", &tests)
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let first = read_json(&p.session_dir(&id).join("results/run-001.json"));
    assert!(first["failed"].as_u64().unwrap() > 0, "{first}");

    let out = p
        .cmd(&["rerun", &id, "--completion", "keep"])
        .env("TT_FIXTURE_TESTS", &tests)
        .run();
    out.assert_code(0);
    assert!(out.stdout.contains("rerun: TESTRUN-002"), "{}", out.stdout);
    let tasks = p.tasks(&id);
    let rerun = task(&tasks, "TESTRUN-002");
    assert_eq!(rerun["meta"]["rerun_of"], "TESTRUN-001");
    let passed_before = first["passed"].as_u64().unwrap();
    assert_eq!(rerun["outcome"]["data"]["carried_passes"], passed_before);
    // Only what did not pass ran again; the layer's pass rate counts the kept passes.
    let second = read_json(&p.session_dir(&id).join("results/run-002.json"));
    let ran_again: Vec<&str> = second["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    let passed_first: Vec<&str> = first["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "passed")
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert!(!ran_again.is_empty());
    assert!(
        ran_again.iter().all(|t| !passed_first.contains(t)),
        "{ran_again:?} vs {passed_first:?}"
    );
    assert_eq!(rerun["outcome"]["pass_rate"], first["pass_rate"]);
}
