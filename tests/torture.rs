//! Crash torture: kill -9 at many exact points of a run (`TEAM_TESTING_CRASH_AT=<point>:<n>`
//! makes the process SIGKILL itself the n-th time it passes a point), then `resume`. Every time,
//! the session must end as an uninterrupted run with the same inputs does, with no completed task
//! run again and a log whose every line parses.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use crate::common::*;

/// The crash points (see src/failpoint.rs) and the passes at which each is tried.
const KILL_POINTS: [(&str, &[u64]); 10] = [
    ("log.append", &[1, 2, 4, 7, 11, 16, 22, 29, 37]),
    ("log.torn", &[1, 3, 6, 10, 15, 21, 28, 33]),
    ("log.fsync", &[2, 5, 9, 14, 20, 27, 31]),
    // The first 8 renames create the session (wisdom/, scenarios.csv, task-analysis.json,
    // tasks.json, session.json); a_kill_while_the_session_is_created_leaves_nothing_half_listed
    // covers them.
    ("state.rename", &[9, 10, 12, 14, 17, 21, 26]),
    // A beat's journal line: before it is written, and half written.
    ("journal.append", &[1, 2, 4, 7, 11, 16]),
    ("journal.torn", &[3, 9, 14]),
    ("dispatch", &[1, 2, 3, 4, 5, 6, 7]),
    ("worker.start", &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
    ("worker.outcome", &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
    // After the last beat, before the completion action pauses or archives the session.
    ("completion", &[1]),
];

/// id, owner, status, blockedBy, pass rate, coverage.
type TaskEnd = (
    String,
    String,
    String,
    Vec<String>,
    Option<f64>,
    Option<f64>,
);

/// What must be the same after any crash and resume.
#[derive(Debug, PartialEq)]
struct End {
    /// id, owner, status, blockedBy, pass rate, coverage.
    tasks: Vec<TaskEnd>,
    /// Files of the session, relative (the log, the lock and the roles' own run log aside).
    artifacts: BTreeSet<String>,
    /// quality_gate decisions (task, verdict). A set: parallel windows finish in either order,
    /// and a decision logged again after a crash (at-least-once logging) is the same decision.
    gates: BTreeSet<(String, String)>,
    status: String,
}

fn files(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if [".msg", ".lock", ".inbox", "workspace", "fixture-runs.log"].contains(&rel.as_str()) {
            continue;
        }
        if path.is_dir() {
            files(root, &path, out);
        } else {
            out.insert(rel);
        }
    }
}

fn end_of(p: &Project, id: &str) -> End {
    let tasks = p
        .tasks(id)
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["owner"].as_str().unwrap().to_string(),
                t["status"].as_str().unwrap().to_string(),
                t["blockedBy"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b.as_str().unwrap().to_string())
                    .collect(),
                t["outcome"]["pass_rate"].as_f64(),
                t["outcome"]["coverage"].as_f64(),
            )
        })
        .collect();
    let dir = p.session_dir(id);
    let mut artifacts = BTreeSet::new();
    files(&dir, &dir, &mut artifacts);
    let gates = p
        .messages(id)
        .into_iter()
        .filter(|m| m["type"] == "quality_gate")
        .map(|m| {
            (
                m["data"]["task_id"].as_str().unwrap().to_string(),
                m["data"]["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let status = read_json(&dir.join("session.json"))["status"]
        .as_str()
        .unwrap()
        .to_string();
    End {
        tasks,
        artifacts,
        gates,
        status,
    }
}

fn run_cmd(p: &Project) -> Cmd {
    p.scripted_run("test everything", "comprehensive")
        .args(&["--completion", "keep"])
        .env("TT_FIXTURE_PASS_RATES_L1", "0.5,1.0")
}

fn starts(p: &Project, id: &str) -> BTreeMap<String, usize> {
    let mut n = BTreeMap::new();
    for r in p.fixture_runs(id).into_iter().filter(|r| r.0 == "start") {
        *n.entry(r.1).or_default() += 1;
    }
    n
}

/// One kill point: crash there, resume, compare. Returns whether the process was really killed
/// (a point past the run's last pass lets it finish).
fn crash_and_resume(point: &str, n: u64, expected: &End) -> bool {
    let p = Project::fixture("python-calc");
    let out = run_cmd(&p)
        .env("TEAM_TESTING_CRASH_AT", &format!("{point}:{n}"))
        .run();
    if out.code == 0 {
        return false;
    }
    assert_eq!(
        out.code, -1,
        "{point}:{n} ended without a kill: {}",
        out.stderr
    );
    let id = only_session(&p);
    // What was completed when the process died must not run again.
    let done: Vec<String> = p
        .tasks(&id)
        .iter()
        .filter(|t| t["status"] == "completed")
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    let before = starts(&p, &id);
    let log = std::fs::read(p.session_dir(&id).join(".msg/messages.jsonl")).unwrap();
    let torn = !log.is_empty() && log.last() != Some(&b'\n');

    // The same inputs: the scripted roles' figures come from the environment.
    let resumed = p
        .cmd(&["resume", &id, "--completion", "keep"])
        .env("TT_FIXTURE_PASS_RATES_L1", "0.5,1.0")
        .run();
    resumed.assert_code(0);
    assert!(
        resumed.stderr.contains("took over the lock of pid"),
        "{point}:{n}: the stale lock was not reported: {}",
        resumed.stderr
    );
    let after = starts(&p, &id);
    for task in &done {
        assert_eq!(
            before.get(task),
            after.get(task),
            "{point}:{n}: {task}, completed before the kill, ran again"
        );
    }
    // p.messages parses every line (it panics on one that does not).
    let messages = p.messages(&id);
    let seqs: Vec<u64> = messages
        .iter()
        .map(|m| m["id"].as_str().unwrap()[4..].parse().unwrap())
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "{point}:{n}: ids out of order"
    );
    if torn {
        assert!(
            messages.iter().any(|m| m["type"] == "error"
                && m["summary"]
                    .as_str()
                    .is_some_and(|s| s.contains("log repaired") && s.contains("torn last line"))),
            "{point}:{n}: the torn line's repair is not in the log"
        );
    }
    let end = end_of(&p, &id);
    assert_eq!(&end, expected, "{point}:{n}: the end differs");
    true
}

#[test]
fn kill_9_at_fifty_points_then_resume_ends_as_an_uninterrupted_run() {
    let p = Project::fixture("python-calc");
    let out = run_cmd(&p).run();
    out.assert_code(0);
    let expected = end_of(&p, &out.session_id());
    assert_eq!(expected.status, "paused");
    assert!(
        expected.gates.iter().any(|g| g.1 == "revise"),
        "the run must include a GC round: {:?}",
        expected.gates
    );

    let cases: Vec<(&str, u64)> = KILL_POINTS
        .iter()
        .flat_map(|(point, ns)| ns.iter().map(move |n| (*point, *n)))
        .collect();
    // Three at a time: each case is a few short processes.
    let killed = std::sync::atomic::AtomicUsize::new(0);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some((point, n)) = cases.get(i) else {
                    break;
                };
                if crash_and_resume(point, *n, &expected) {
                    killed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
    });
    let killed = killed.into_inner();
    eprintln!("{killed} of {} kill points reached", cases.len());
    assert!(
        killed >= 50,
        "only {killed} of {} points were reached",
        cases.len()
    );
}

fn only_session(p: &Project) -> String {
    let ids: Vec<String> = std::fs::read_dir(&p.sessions)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids[0].clone()
}

#[test]
fn a_kill_while_the_session_is_created_leaves_nothing_half_listed() {
    for n in 1..=8 {
        let p = Project::fixture("python-calc");
        let out = run_cmd(&p)
            .env("TEAM_TESTING_CRASH_AT", &format!("state.rename:{n}"))
            .run();
        assert_eq!(out.code, -1, "state.rename:{n}");
        // A session exists once its session.json does: the folder of one that never got there
        // is no session, and no command trips over it.
        let list = p.cmd(&["sessions", "--json"]).run();
        list.assert_code(0);
        let rows: Value = serde_json::from_str(&list.stdout).unwrap();
        let id = only_session(&p);
        let listed = p.session_dir(&id).join("session.json").is_file();
        assert_eq!(
            rows.as_array().unwrap().len(),
            usize::from(listed),
            "state.rename:{n}"
        );
        if listed {
            p.cmd(&["resume", &id, "--completion", "keep"])
                .env("TT_FIXTURE_PASS_RATES_L1", "0.5,1.0")
                .run()
                .assert_code(0);
        }
        // The same task again is a new session beside it.
        run_cmd(&p).run().assert_code(0);
    }
}

#[test]
fn a_stale_lock_of_a_dead_process_is_taken_over_and_said() {
    let p = Project::fixture("python-calc");
    let out = run_cmd(&p)
        .env("TEAM_TESTING_CRASH_AT", "worker.start:2")
        .run();
    assert_eq!(out.code, -1);
    let id = out.session_id();
    let lock = std::fs::read_to_string(p.session_dir(&id).join(".lock")).unwrap();
    assert!(
        !lock.trim().is_empty(),
        "the dead holder's pid stays in the lock file"
    );
    // status sees that the holder is gone.
    let status = p.cmd(&["status", &id, "--json"]).run();
    let v: Value = serde_json::from_str(&status.stdout).unwrap();
    assert!(v["coordinator_pid"].is_null(), "{v}");
    let resumed = p.cmd(&["resume", &id, "--completion", "keep"]).run();
    resumed.assert_code(0);
    assert!(
        resumed
            .stderr
            .contains(&format!("took over the lock of pid {}", lock.trim())),
        "{}",
        resumed.stderr
    );
    // A clean end leaves no pid behind: the next command takes the lock silently.
    assert_eq!(
        std::fs::read_to_string(p.session_dir(&id).join(".lock")).unwrap(),
        ""
    );
}
