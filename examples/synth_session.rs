//! Writes a large synthetic session for the whole-process benchmarks (scripts/bench_compare.py):
//! `cargo run --release --example synth_session -- SESSIONS_DIR MESSAGES TASKS`.
//!
//! The session is paused with every task completed, and its log holds MESSAGES records in the mix
//! a real run writes (mostly progress, then dispatches, completions, state updates, gates), so
//! `status`, `resume` and `log` queries see the sizes the benchmarks name.

use std::io::Write;

use team_testing::bus::message::{
    format_id, Progress, QualityGate, Record, TaskComplete, TaskDispatched,
};
use team_testing::bus::{Message, Payload};
use team_testing::session::{SessionDir, SessionState};
use team_testing::tasks::{Outcome, Task, TaskGraph, TaskStatus};

const ROLES: [&str; 4] = ["strategist", "generator", "executor", "analyst"];

fn message(i: u64, tasks: usize) -> Message {
    let task = format!("TASK-{:05}", i as usize % tasks);
    let role = ROLES[(i / 7) as usize % ROLES.len()];
    let (from, to, summary, payload) = match i % 20 {
        0..=11 => (
            role,
            "coordinator",
            format!("[{role}] {task}: step {i}"),
            Payload::Progress(Progress {
                task_id: task.clone(),
                phase: "running".into(),
                progress_pct: Some((i % 100) as f64),
                detail: Some("pytest -q tests/L1-unit".into()),
            }),
        ),
        12..=13 => (
            "coordinator",
            role,
            format!("[coordinator] {task} -> {role}"),
            Payload::TaskUnblocked(TaskDispatched {
                task_id: task.clone(),
                worker: role.into(),
                attempt: 1,
                queued: false,
            }),
        ),
        14..=15 => (
            role,
            "coordinator",
            format!("[{role}] {task} completed"),
            Payload::TaskComplete(TaskComplete {
                task_id: task.clone(),
                outcome: Outcome {
                    pass_rate: Some(0.97),
                    coverage: Some(81.5),
                    ..Outcome::completed("42 passed, 1 failed; coverage 81.5%")
                },
            }),
        ),
        16..=18 => {
            let mut data = serde_json::Map::new();
            data.insert("gc_rounds".into(), serde_json::json!({"L1": 1}));
            (
                "coordinator",
                "coordinator",
                "[coordinator] gc rounds".to_string(),
                Payload::StateUpdate(data),
            )
        }
        _ => (
            "coordinator",
            "coordinator",
            format!("[coordinator] L1 gate met after {task}"),
            Payload::QualityGate(QualityGate {
                layer: "L1-unit".into(),
                task_id: task.clone(),
                verdict: "pass".into(),
                pass_rate: 0.97,
                coverage: Some(81.5),
                coverage_target: Some(80.0),
                rounds_used: 1,
                warning: None,
            }),
        ),
    };
    Message::new(from, to, summary, payload)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, root, messages, tasks] = args.as_slice() else {
        eprintln!("usage: synth_session SESSIONS_DIR MESSAGES TASKS");
        std::process::exit(2);
    };
    let root = std::path::Path::new(root);
    let (messages, tasks): (u64, usize) = (messages.parse().unwrap(), tasks.parse().unwrap());
    let session = SessionDir::create(root, "TST", "synthetic", "2026-12-03").unwrap();
    let graph = TaskGraph::new(
        (0..tasks)
            .map(|i| {
                let blocked_by = if i == 0 {
                    vec![]
                } else {
                    vec![format!("TASK-{:05}", i - 1)]
                };
                Task {
                    status: TaskStatus::Completed,
                    attempts: 1,
                    outcome: Some(Outcome::completed("done")),
                    ..Task::new(
                        &format!("TASK-{i:05}"),
                        "synthetic task",
                        ROLES[i % ROLES.len()],
                        blocked_by,
                    )
                }
            })
            .collect(),
    );
    session.save_tasks(&graph).unwrap();
    let state: SessionState = serde_json::from_value(serde_json::json!({
        "session_id": session.id, "status": "paused", "task_description": "synthetic",
        "pipeline_mode": "standard", "team_name": "testing", "repo": root,
        "completion_action": "keep", "created_at": "2026-12-03T10:00:00.000+00:00",
        "updated_at": "2026-12-03T10:00:00.000+00:00", "tasks_total": tasks
    }))
    .unwrap();
    session.save_state(&state).unwrap();
    let file = std::fs::File::create(session.messages()).unwrap();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    for i in 1..=messages {
        let record = Record::from_message(
            format_id(i),
            "2026-12-03T10:00:00.000+00:00".into(),
            &message(i, tasks),
        );
        serde_json::to_writer(&mut out, &record).unwrap();
        out.write_all(b"\n").unwrap();
    }
    out.flush().unwrap();
    println!("{}", session.id);
}
