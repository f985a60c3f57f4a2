//! status, log and sessions on a finished session.

use crate::common::*;

#[test]
fn status_log_and_sessions_show_a_finished_run() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test the ops", "standard")
        .arg("-y")
        .env("TT_FIXTURE_PASS_RATES_L1", "0.5,1.0")
        .run();
    out.assert_code(0);
    let id = out.session_id();

    let status = p.cmd(&["status", &id]).run();
    status.assert_code(0);
    assert!(
        status.stdout.contains("[coordinator] Mode: standard"),
        "{}",
        status.stdout
    );
    assert!(
        status.stdout.contains("Progress: 8/8 (100%)"),
        "{}",
        status.stdout
    );
    assert!(
        status.stdout.contains("GC Rounds: L1: 1/3, L2: 0/3"),
        "{}",
        status.stdout
    );
    assert!(
        status.stdout.contains("TESTRUN-L1-fix-1:"),
        "{}",
        status.stdout
    );

    // With one session, SESSION may be omitted.
    let json = p.cmd(&["status", "--json"]).run();
    json.assert_code(0);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["session_id"], id.as_str());
    assert_eq!(v["pipeline_mode"], "standard");
    assert_eq!(v["gc_rounds"]["L1"], 1);
    assert_eq!(v["tasks"].as_array().unwrap().len(), 8);
    assert_eq!(v["tasks"][0]["owner"], "strategist");

    let log = p
        .cmd(&["log", &id, "--type", "task_complete", "--from", "executor"])
        .run();
    log.assert_code(0);
    let lines: Vec<&str> = log.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", log.stdout);
    assert!(
        lines[0].starts_with("MSG-") && lines[0].contains("executor → coordinator (task_complete)"),
        "{}",
        lines[0]
    );

    // The shutdown, then the completion action (-y: archive).
    let last = p.cmd(&["log", &id, "--last", "2", "--json"]).run();
    let recs: Vec<serde_json::Value> = last
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs[0]["type"], "shutdown");
    assert_eq!(recs[1]["type"], "state_update");
    assert_eq!(recs[1]["data"]["completion_action"], "archived");

    let task = p
        .cmd(&[
            "log",
            &id,
            "--task",
            "TESTRUN-L1-fix-1",
            "--type",
            "task_unblocked",
        ])
        .run();
    assert_eq!(task.stdout.lines().count(), 1, "{}", task.stdout);

    // --follow on a finished session prints everything and ends.
    let follow = p.cmd(&["log", &id, "--follow"]).run();
    follow.assert_code(0);
    assert_eq!(follow.stdout.lines().count(), p.messages(&id).len());

    let sessions = p.cmd(&["sessions", "--all", "--json"]).run();
    let rows: serde_json::Value = serde_json::from_str(&sessions.stdout).unwrap();
    assert_eq!(rows[0]["session_id"], id.as_str());
    assert_eq!(rows[0]["status"], "archived");
    assert_eq!(rows[0]["done"], 8);
}

#[test]
fn log_follow_sees_every_message_of_a_live_run_once_in_order() {
    let p = Project::fixture("python-calc");
    let child = p
        .scripted_run("test the ops", "targeted")
        .env("TT_FIXTURE_SLEEP", "0.3")
        .spawn();
    let mut id = None;
    assert!(wait_for(std::time::Duration::from_secs(30), || {
        id = std::fs::read_dir(&p.sessions)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned());
        id.as_ref()
            .is_some_and(|i| p.session_dir(i).join("session.json").exists())
    }));
    let id = id.unwrap();
    let follow = p.cmd(&["log", &id, "--follow", "--json"]).run();
    wait(child).assert_code(0);
    follow.assert_code(0);
    let seen: Vec<String> = follow
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let all: Vec<String> = p
        .messages(&id)
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(seen, all);
}

/// A copy of the checked-in example sessions (made by scripts/make-example-sessions.sh).
fn examples() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(&src)
        .arg(&root)
        .status()
        .unwrap();
    assert!(status.success());
    (tmp, root)
}

fn example_id(root: &std::path::Path, status: &str) -> String {
    for e in std::fs::read_dir(root).unwrap().flatten() {
        let s = read_json(&e.path().join("session.json"));
        if s["status"] == status {
            return e.file_name().to_string_lossy().into_owned();
        }
    }
    panic!("no {status} example session");
}

fn in_examples(root: &std::path::Path, args: &[&str]) -> Output {
    let mut c = std::process::Command::new(BIN);
    c.args(args).arg("--sessions-dir").arg(root);
    Cmd { c }.run()
}

#[test]
fn example_sessions_read_back_with_status_log_and_sessions() {
    let (_tmp, root) = examples();
    let completed = example_id(&root, "completed");
    let paused = example_id(&root, "paused");

    let out = in_examples(&root, &["sessions"]);
    out.assert_code(0);
    assert!(
        out.stdout.contains(&completed) && out.stdout.contains(&paused),
        "{}",
        out.stdout
    );

    // SESSION omitted: the one paused session is picked.
    let out = in_examples(&root, &["status"]);
    out.assert_code(0);
    assert!(
        out.stdout
            .contains(&format!("{paused} (paused, no coordinator running)")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("interrupted: runs again on resume") || out.stdout.contains("Ready:"),
        "{}",
        out.stdout
    );

    let out = in_examples(&root, &["status", &completed, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["status"], "completed");
    assert_eq!(v["progress"]["done"], v["progress"]["total"]);

    // Every record of the examples formats as `MSG-NNN [hh:mm:ss] from → to (type) summary`.
    let out = in_examples(&root, &["log", &completed]);
    out.assert_code(0);
    for line in out.stdout.lines() {
        assert!(
            line.starts_with("MSG-") && line.contains(" → ") && line.contains(") "),
            "{line}"
        );
    }
    let out = in_examples(
        &root,
        &[
            "log",
            &completed,
            "--type",
            "quality_gate",
            "--last",
            "1",
            "--json",
        ],
    );
    let rec: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(rec["from"], "coordinator");
    assert!(rec["data"]["verdict"].is_string());
}

#[test]
fn resuming_an_example_whose_repo_is_gone_is_a_clear_error() {
    let (_tmp, root) = examples();
    let paused = example_id(&root, "paused");
    let out = in_examples(&root, &["resume", &paused]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("does not exist or is not a directory"),
        "{}",
        out.stderr
    );
}

#[test]
fn garbage_lines_in_the_log_are_reported_and_skipped() {
    let (_tmp, root) = examples();
    let completed = example_id(&root, "completed");
    let log = root.join(&completed).join(".msg/messages.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let n = lines.len();
    lines.insert(2, "garbage {");
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let out = in_examples(&root, &["log", &completed]);
    out.assert_code(0);
    assert_eq!(out.stdout.lines().count(), n);
    assert!(
        out.stderr.contains("messages.jsonl line 3: not a message"),
        "{}",
        out.stderr
    );
    // A filtered query decodes only lines that hold the filter's values, yet still reports a
    // line that is no record at all; and a record written with spaces still matches.
    let all = in_examples(&root, &["log", &completed, "--type", "task_complete"]);
    let spaced = r#"{"id": "MSG-9999", "ts": "2026-12-03T10:00:00.000+00:00", "from": "executor", "to": "coordinator", "type": "task_complete", "summary": "spaced", "data": {"task_id": "X"}}"#;
    std::fs::write(&log, text.clone() + "garbage {\n" + spaced + "\n").unwrap();
    let out = in_examples(
        &root,
        &[
            "log",
            &completed,
            "--type",
            "task_complete",
            "--from",
            "executor",
        ],
    );
    out.assert_code(0);
    assert!(
        out.stdout.lines().last().unwrap().ends_with("spaced"),
        "{}",
        out.stdout
    );
    let executor_before = all
        .stdout
        .lines()
        .filter(|l| l.contains(" executor → "))
        .count();
    assert_eq!(out.stdout.lines().count(), executor_before + 1);
    assert!(
        out.stderr
            .contains(&format!("messages.jsonl line {}: not a message", n + 1)),
        "{}",
        out.stderr
    );
}

#[test]
fn roles_list_shows_every_role_with_its_backend_and_source() {
    let p = Project::fixture("python-calc");
    let out = p.cmd(&["roles", "list", "--json"]).run();
    out.assert_code(0);
    let rows: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let names: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "analyst",
            "coordinator",
            "executor",
            "fixer",
            "generator",
            "strategist"
        ]
    );
    assert_eq!(rows[2]["prefix"], "TESTRUN");
    assert!(rows[2]["source"].as_str().unwrap().starts_with("built-in"));

    // A session's chains (`claude` is not installed here: the run falls back to the built-in
    // one the user named after it).
    let run = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "targeted",
            "-y",
            "--backend",
            "generator=claude,builtin",
        ])
        .run();
    run.assert_code(0);
    let id = run.session_id();
    let out = p.cmd(&["roles", "list", &id]).run();
    out.assert_code(0);
    assert!(
        out.stdout.contains("builtin (claude → builtin)"),
        "{}",
        out.stdout
    );
}
