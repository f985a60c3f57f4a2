//! kill -9 in the middle of a run, then `resume`; and the session lock.

use std::fs::OpenOptions;
use std::time::Duration;

use crate::common::*;

/// The tasks completed so far, as `status` sees them (the running coordinator journals each beat;
/// tasks.json is rewritten whole only now and then).
fn completed(p: &Project, id: &str) -> Vec<String> {
    let out = p.cmd(&["status", id, "--json"]).run();
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&out.stdout) else {
        return vec![];
    };
    v["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["status"] == "completed")
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

fn only_session(p: &Project) -> Option<String> {
    let mut ids: Vec<String> = std::fs::read_dir(&p.sessions)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids.pop()
}

#[test]
fn kill_9_then_resume_finishes_without_redoing_completed_tasks() {
    let p = Project::fixture("python-calc");
    let mut child = p
        .scripted_run("test the ops", "standard")
        .env("TT_FIXTURE_SLEEP", "0.3")
        .env("TT_FIXTURE_PASS_RATES_L1", "0.5,1.0")
        .spawn();
    let mut id = String::new();
    assert!(
        wait_for(Duration::from_secs(60), || {
            if let Some(s) = only_session(&p) {
                id = s;
            }
            !id.is_empty() && completed(&p, &id).len() >= 3
        }),
        "the run did not get going"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done_before = completed(&p, &id);
    assert!(done_before.len() < 8, "killed too late: {done_before:?}");

    let out = p.cmd(&["resume", &id, "-y"]).run();
    out.assert_code(0);
    let tasks = p.tasks(&id);
    assert!(
        tasks.iter().all(|t| t["status"] == "completed"),
        "{tasks:?}"
    );
    assert_eq!(tasks.len(), 8, "one GC round for L1: {tasks:?}");
    // No task completed before the kill started again afterwards.
    let runs = p.fixture_runs(&id);
    for task in &done_before {
        let starts = runs
            .iter()
            .filter(|r| r.0 == "start" && &r.1 == task)
            .count();
        assert_eq!(starts, 1, "{task} ran {starts} times: {runs:?}");
    }
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert_eq!(state["status"], "archived");
    // Every line of the log still parses and ids still increase.
    let msgs = p.messages(&id);
    let seqs: Vec<u64> = msgs
        .iter()
        .map(|m| m["id"].as_str().unwrap()[4..].parse().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[1] > w[0]));
}

#[test]
fn a_locked_session_is_refused_naming_the_holder() {
    let p = Project::fixture("python-calc");
    let out = p.scripted_run("test the ops", "targeted").run();
    out.assert_code(0);
    let id = out.session_id();
    // Pretend a coordinator holds the session.
    let dir = p.session_dir(&id);
    let state_path = dir.join("session.json");
    let mut state = read_json(&state_path);
    state["status"] = "paused".into();
    std::fs::write(&state_path, state.to_string()).unwrap();
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.join(".lock"))
        .unwrap();
    lock.try_lock().unwrap();
    std::fs::write(dir.join(".lock"), "424242\n").unwrap();
    let out = p.cmd(&["resume", &id]).run();
    out.assert_code(2);
    assert!(
        out.stderr.contains("locked by pid 424242"),
        "{}",
        out.stderr
    );
    drop(lock);
    // Once the holder is gone, resume works (nothing left to do but complete).
    p.cmd(&["resume", &id]).run().assert_code(0);
}

#[test]
fn a_torn_last_log_line_is_repaired_and_reported_on_resume() {
    let p = Project::fixture("python-calc");
    let out = p.scripted_run("test the ops", "targeted").run();
    let id = out.session_id();
    let dir = p.session_dir(&id);
    let log = dir.join(".msg/messages.jsonl");
    let mut text = std::fs::read_to_string(&log).unwrap();
    let lines_before = text.lines().count();
    text.push_str("{\"id\":\"MSG-9");
    std::fs::write(&log, text).unwrap();
    let state_path = dir.join("session.json");
    let mut state = read_json(&state_path);
    state["status"] = "paused".into();
    std::fs::write(&state_path, state.to_string()).unwrap();
    let out = p.cmd(&["resume", &id]).run();
    out.assert_code(0);
    assert!(
        out.stderr.contains("removed a torn last line"),
        "{}",
        out.stderr
    );
    let msgs = p.messages(&id);
    assert!(msgs.len() > lines_before);
}

#[test]
fn ctrl_c_pauses_the_session_and_resume_finishes_it() {
    let p = Project::fixture("python-calc");
    let child = p
        .scripted_run("test the ops", "targeted")
        .env("TT_FIXTURE_SLEEP", "0.5")
        .spawn();
    let mut id = String::new();
    assert!(wait_for(Duration::from_secs(60), || {
        if let Some(s) = only_session(&p) {
            id = s;
        }
        !id.is_empty() && !completed(&p, &id).is_empty()
    }));
    // SAFETY: plain kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let out = wait(child);
    out.assert_code(130);
    assert!(
        // A command that works pasted: the program, `resume` and this session.
        out.stderr.contains("is paused; continue with `")
            && out.stderr.contains(&format!("team-testing resume {id}`")),
        "{}",
        out.stderr
    );
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert_eq!(state["status"], "paused");
    // With one paused session, resume needs no argument.
    p.cmd(&["resume"]).run().assert_code(0);
    assert!(p.tasks(&id).iter().all(|t| t["status"] == "completed"));
}

#[test]
fn log_follow_ends_on_a_paused_session() {
    let p = Project::fixture("python-calc");
    let out = p.scripted_run("test the ops", "targeted").run();
    let id = out.session_id();
    let state_path = p.session_dir(&id).join("session.json");
    let mut state = read_json(&state_path);
    state["status"] = "paused".into();
    std::fs::write(&state_path, state.to_string()).unwrap();
    let follow = p.cmd(&["log", &id, "--follow"]).run();
    follow.assert_code(0);
    assert_eq!(follow.stdout.lines().count(), p.messages(&id).len());
}

#[test]
fn resuming_a_failed_session_runs_the_failed_task_again() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test the ops", "targeted")
        .env("TT_FIXTURE_FAIL", "TESTGEN-001:always")
        .run();
    out.assert_code(1);
    let id = out.session_id();
    // Fixed: the role no longer fails. The old failed records must not be taken for new ones.
    let out = p.cmd(&["resume", &id]).run();
    out.assert_code(0);
    let tasks = p.tasks(&id);
    assert!(
        tasks.iter().all(|t| t["status"] == "completed"),
        "{tasks:?}"
    );
    let starts = p
        .fixture_runs(&id)
        .iter()
        .filter(|r| r.0 == "start" && r.1 == "TESTGEN-001")
        .count();
    assert_eq!(starts, 3, "two failed attempts, then one on resume");
}
