//! Synthetic sessions for the runtime benchmarks: N tasks of a no-op role (in-process, or a
//! command role that runs `echo`) in a wide or deep shape, run by the real coordinator, bus,
//! journal and workers — only the creative roles are left out.

#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use team_testing::actors::boot::{launch, Observer};
use team_testing::actors::coordinator::Begin;
use team_testing::actors::RunEnv;
use team_testing::bus::{Message, Payload};
use team_testing::pipeline::config::TeamConfig;
use team_testing::roles::{Registry, RoleSource, RoleSpec};
use team_testing::session::{SessionDir, SessionState};
use team_testing::tasks::{Task, TaskGraph};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// Every task independent: dispatched `concurrency` at a time.
    Wide,
    /// A chain: each task waits on the one before; one beat per task.
    Deep,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RoleKind {
    /// A built-in role that returns at once.
    InProcess,
    /// A command role running `echo` with its outcome (a real child process per task).
    Command,
}

const NOOP: &str = "---\nrole: noop\nprefix: NOOP\ninner_loop: false\nmessage_types: [progress, task_complete]\nbackend: builtin\ndescription: Does nothing.\n---\n";
const ECHO: &str = r#"---
role: noop
prefix: NOOP
inner_loop: false
message_types: [progress, task_complete]
backend: command
command: ["echo", "{\"status\": \"completed\", \"summary\": \"no-op\"}"]
description: Prints its outcome and exits.
---
"#;

pub struct Synthetic {
    pub session: SessionDir,
    env: Option<RunEnv>,
    graph: Option<TaskGraph>,
    state: Option<SessionState>,
}

pub fn tasks(shape: Shape, n: usize) -> Vec<Task> {
    (0..n)
        .map(|i| {
            let blocked_by = match shape {
                Shape::Deep if i > 0 => vec![format!("NOOP-{:06}", i - 1)],
                _ => vec![],
            };
            Task::new(&format!("NOOP-{i:06}"), "no-op", "noop", blocked_by)
        })
        .collect()
}

impl Synthetic {
    /// A new session under `root` with `n` tasks, at most `concurrency` running at once.
    pub fn new(root: &Path, shape: Shape, n: usize, role: RoleKind, concurrency: usize) -> Self {
        let session = SessionDir::create(root, "TST", "bench", "2026-12-03").unwrap();
        let spec = match role {
            RoleKind::InProcess => NOOP,
            RoleKind::Command => ECHO,
        };
        let mut registry = Registry::load(None).unwrap();
        registry
            .insert(RoleSpec::parse(spec, Path::new("noop.md"), RoleSource::Builtin).unwrap())
            .unwrap();
        let repo = root.to_path_buf();
        let mut state: SessionState = serde_json::from_value(serde_json::json!({
            "session_id": session.id, "status": "active", "task_description": "bench",
            "pipeline_mode": "synthetic", "team_name": "bench", "repo": repo,
            "completion_action": "keep", "created_at": "", "updated_at": ""
        }))
        .unwrap();
        state.controls.concurrency = Some(concurrency);
        state.sandbox.enabled = false;
        let graph = TaskGraph::new(tasks(shape, n));
        // What `run` leaves before the coordinator starts.
        session.save_tasks(&graph).unwrap();
        session.save_state(&state).unwrap();
        let env = RunEnv {
            session: session.clone(),
            repo,
            config: TeamConfig::builtin().unwrap(),
            registry,
            sandbox: state.sandbox.clone(),
            agents: Default::default(),
            remote: None,
        };
        Synthetic {
            session,
            env: Some(env),
            graph: Some(graph),
            state: Some(state),
        }
    }

    /// Runs every task to the end; returns the wall time.
    pub fn run(&mut self, observer: Option<Observer>) -> Duration {
        let start = Instant::now();
        let end = launch(
            self.env.take().expect("run once"),
            self.graph.take().unwrap(),
            self.state.take().unwrap(),
            Begin {
                resume: false,
                selected: None,
            },
            true,
            observer,
        )
        .unwrap();
        let took = start.elapsed();
        if end.exit_code != 0 {
            let graph = self.session.load_tasks().unwrap();
            let failed: Vec<_> = graph
                .tasks
                .iter()
                .filter_map(|t| t.reason.as_ref().map(|r| (&t.id, r)))
                .take(3)
                .collect();
            panic!(
                "the run ended with {}: {:?} {failed:?}",
                end.exit_code, end.warnings
            );
        }
        took
    }
}

/// When each task's `task_complete` and its worker's `started` progress were delivered.
#[derive(Default)]
pub struct Timeline {
    pub completed: Vec<(String, Instant)>,
    pub started: Vec<(String, Instant)>,
}

pub fn timeline() -> (Arc<Mutex<Timeline>>, Observer) {
    let line = Arc::new(Mutex::new(Timeline::default()));
    let sink = line.clone();
    let observer: Observer = Arc::new(move |m: &Message| {
        let now = Instant::now();
        match &m.payload {
            Payload::TaskComplete(c) => sink
                .lock()
                .unwrap()
                .completed
                .push((c.task_id.clone(), now)),
            Payload::Progress(p) if p.phase == "started" => {
                sink.lock().unwrap().started.push((p.task_id.clone(), now))
            }
            _ => {}
        }
    });
    (line, observer)
}

/// Beat latencies of a deep chain: from task i's task_complete to task i+1's start.
pub fn chain_beats(line: &Timeline) -> Vec<Duration> {
    let started: std::collections::HashMap<&str, Instant> = line
        .started
        .iter()
        .map(|(id, t)| (id.as_str(), *t))
        .collect();
    line.completed
        .iter()
        .filter_map(|(id, done)| {
            let n: usize = id.strip_prefix("NOOP-")?.parse().ok()?;
            let next = started.get(format!("NOOP-{:06}", n + 1).as_str())?;
            Some(next.duration_since(*done))
        })
        .collect()
}

/// The p-th percentile (0..=100) of sorted samples.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p / 100.0).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Peak resident memory of this process so far, in MiB.
pub fn peak_rss_mib() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_maxrss as f64 / 1024.0
}
