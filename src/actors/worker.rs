//! The generic worker actor: it claims nothing itself; it gets a task, runs its role's work through
//! the role's backend, posts progress milestones, records the outcome durably, and then posts exactly
//! one task_complete to the coordinator. Tasks handed to a busy worker wait in its mailbox.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::RunEnv;
use crate::agents::command::{self, CommandSpec};
use crate::bus::message::{Progress, TaskComplete};
use crate::bus::{BusHandle, Message, Payload, Record};
use crate::roles::{Backend, RoleSpec};
use crate::sandbox::Sandbox;
use crate::tasks::{Outcome, OutcomeStatus, Task};
use crate::team::{run_builtin, RoleContext};
use crate::util::{atomic_write_json, now_ts};

/// Message types only the coordinator may send; a command role printing one is ignored.
const COORDINATOR_ONLY: [&str; 8] = [
    "task_complete",
    "shutdown",
    "pipeline_selected",
    "task_unblocked",
    "gc_loop_trigger",
    "quality_gate",
    "role_added",
    "error",
];

/// The durable record of a finished attempt, written before task_complete is posted.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OutcomeRecord {
    pub task_id: String,
    pub attempt: u32,
    pub worker: String,
    pub outcome: Outcome,
}

/// A task for the worker, with its role as the coordinator's registry has it now (roles can be
/// added while the session runs) and, for a dynamic agent role, its backend chain.
#[derive(actix::Message)]
#[rtype(result = "()")]
pub struct RunTask {
    pub task: Task,
    pub role: Option<RoleSpec>,
    pub chain: Vec<crate::agents::backends::Backend>,
}

/// Sent by a worker when it stops, so the coordinator can fail what it was still holding.
#[derive(actix::Message)]
#[rtype(result = "()")]
pub struct WorkerStopped {
    pub instance: String,
    pub serial: u64,
}

pub struct Worker {
    pub instance: String,
    pub serial: u64,
    pub env: Arc<RunEnv>,
    pub bus: BusHandle,
    pub on_stop: Recipient<WorkerStopped>,
}

impl Actor for Worker {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Self::Context) {
        self.on_stop.do_send(WorkerStopped {
            instance: self.instance.clone(),
            serial: self.serial,
        });
    }
}

impl Handler<RunTask> for Worker {
    // Atomic: one task at a time; the next waits in the mailbox (inner-loop hand-off).
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, msg: RunTask, _: &mut Self::Context) -> Self::Result {
        let env = self.env.clone();
        let bus = self.bus.clone();
        let instance = self.instance.clone();
        AtomicResponse::new(Box::pin(
            async move { execute(env, bus, instance, msg).await }.into_actor(self),
        ))
    }
}

async fn execute(env: Arc<RunEnv>, bus: BusHandle, instance: String, run: RunTask) {
    let RunTask { task, role, chain } = run;
    crate::failpoint::hit("worker.start");
    let started_at = now_ts();
    bus.publish(progress_msg(
        &instance,
        &task.id,
        "started",
        Some(0.0),
        Some(format!("attempt {}", task.attempts)),
    ));
    // The bus delivers the start (the progress view shows it) before the role's first work,
    // which would otherwise hold the actors' thread until its first wait.
    tokio::task::yield_now().await;
    let outcome = match role {
        None => Outcome::failed(format!("no role file defines role {}", task.owner)),
        Some(role) => match &role.backend {
            Backend::Command { argv } => {
                run_command(&env, &bus, &instance, &task, &role, argv).await
            }
            Backend::Builtin => run_in_process(&env, &bus, &instance, &task, &role, chain).await,
        },
    };
    conclude(&env, &bus, &instance, &task, outcome, started_at).await;
}

/// The end of an attempt, wherever it ran: a blocker said as one, the outcome recorded durably,
/// then its state and exactly one task_complete for the coordinator.
pub(super) async fn conclude(
    env: &RunEnv,
    bus: &BusHandle,
    instance: &str,
    task: &Task,
    mut outcome: Outcome,
    started_at: String,
) {
    if outcome.status == OutcomeStatus::Failed && outcome.is_blocker() {
        // The role cannot go on without the user (a missing tool): say so as a blocker too.
        bus.publish(Message::new(
            instance,
            "coordinator",
            format!("[{instance}] {} blocked: {}", task.id, outcome.summary),
            Payload::Blocker(crate::bus::message::Blocker {
                task_id: task.id.clone(),
                reason: outcome.summary.clone(),
            }),
        ));
    }
    outcome.started_at = Some(started_at);
    outcome.finished_at = Some(now_ts());
    let record = OutcomeRecord {
        task_id: task.id.clone(),
        attempt: task.attempts,
        worker: instance.to_string(),
        outcome: outcome.clone(),
    };
    // The record is what makes the completion survive a crash: without it, the task has not
    // finished (the coordinator retries it, or stops on the same disk error).
    // Off the actors' thread: its fsyncs must not hold up the coordinator or other workers.
    let path = env.session.outcome_file(&task.id);
    let written = tokio::task::spawn_blocking(move || {
        crate::failpoint::write("outcome.write")
            .map_err(|e| crate::error::Error::io(format!("writing {}", path.display()), e))
            .and_then(|_| Ok(atomic_write_json(&path, &record)?))
    })
    .await
    .unwrap_or_else(|e| {
        Err(crate::error::Error::Environment(format!(
            "the outcome writer crashed: {e}"
        )))
    });
    if let Err(e) = written {
        outcome = Outcome::failed(format!("cannot record the outcome: {e}"));
    }
    crate::failpoint::hit("worker.outcome");
    if outcome.status == OutcomeStatus::Completed {
        bus.publish(Message::new(
            instance,
            "coordinator",
            format!("[{instance}] {} state", task.id),
            Payload::StateUpdate(state_of(task, &outcome)),
        ));
    }
    let summary = format!("[{instance}] {} {}", task.id, outcome.headline());
    bus.publish(Message::new(
        instance,
        "coordinator",
        summary,
        Payload::TaskComplete(TaskComplete {
            task_id: task.id.clone(),
            outcome,
        }),
    ));
}

/// What the instance's namespace in meta.json gets.
fn state_of(task: &Task, o: &Outcome) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("task_id".into(), json!(task.id));
    if let Some(layer) = &task.layer {
        m.insert("layer".into(), json!(layer));
    }
    if o.pass_rate.is_some() {
        m.insert("pass_rate".into(), json!(o.pass_rate));
        m.insert("coverage".into(), json!(o.coverage));
    }
    for (k, v) in &o.data {
        m.entry(k.clone()).or_insert_with(|| v.clone());
    }
    m
}

pub(super) fn progress_msg(
    instance: &str,
    task_id: &str,
    phase: &str,
    pct: Option<f64>,
    detail: Option<String>,
) -> Message {
    let summary = match (&detail, pct) {
        (Some(d), _) => format!("[{instance}] {task_id} {phase}: {d}"),
        (None, Some(p)) => format!("[{instance}] {task_id} {phase} ({p:.0}%)"),
        (None, None) => format!("[{instance}] {task_id} {phase}"),
    };
    Message::new(
        instance,
        "coordinator",
        summary,
        Payload::Progress(Progress {
            task_id: task_id.to_string(),
            phase: phase.to_string(),
            progress_pct: pct,
            detail,
        }),
    )
}

async fn run_command(
    env: &RunEnv,
    bus: &BusHandle,
    instance: &str,
    task: &Task,
    role: &RoleSpec,
    argv: &[String],
) -> Outcome {
    let stdin = serde_json::to_string(task).unwrap_or_default();
    let sandbox = if role.sandbox && env.sandbox.enabled {
        // It reads the repository, the session and its own folder. It writes the session's
        // deliverables, never its state (session.json, tasks.json, role-specs/, the log), which a
        // later resume would trust.
        let root = env.session.root.join("workspace/sandbox").join(instance);
        let mut read = vec![env.repo.clone(), env.session.root.clone()];
        read.extend(role.dir.clone());
        let write: Vec<std::path::PathBuf> = ["tests", "results", "analysis", "strategy", "wisdom"]
            .iter()
            .map(|d| env.session.root.join(d))
            .collect();
        for dir in &write {
            let _ = std::fs::create_dir_all(dir);
        }
        match Sandbox::new(&env.sandbox, &root, &read, &write) {
            Ok(s) => Some(s),
            Err(e) => {
                return Outcome::failed(format!(
                    "cannot prepare the sandbox in {}: {e}",
                    root.display()
                ))
            }
        }
    } else {
        None
    };
    let spec = CommandSpec {
        sandbox,
        argv: command::expand_argv(argv, role.dir.as_deref()),
        cwd: env.session.root.clone(),
        env: vec![
            (
                "TT_SESSION_DIR".into(),
                env.session.root.display().to_string(),
            ),
            ("TT_SESSION_ID".into(), env.session.id.clone()),
            ("TT_TASK_ID".into(), task.id.clone()),
            ("TT_ROLE".into(), task.owner.clone()),
            ("TT_INSTANCE".into(), instance.to_string()),
            ("TT_LAYER".into(), task.layer.clone().unwrap_or_default()),
            ("TT_REPO".into(), env.repo.display().to_string()),
            ("TT_ATTEMPT".into(), task.attempts.to_string()),
        ],
        stdin,
        timeout: Duration::from_secs(role.timeout_s),
    };
    command::run(spec, |obj| {
        if let Some(msg) = message_from_line(instance, &task.id, obj) {
            bus.publish(msg);
        }
    })
    .await
}

/// A JSON line a command role printed, as a bus message: `{"type":"progress","phase":..,"progress_pct":..}`
/// or any other worker message type with its fields (or a `data` object).
fn message_from_line(instance: &str, task_id: &str, obj: Value) -> Option<Message> {
    let kind = obj.get("type")?.as_str()?.to_string();
    if kind == "progress" {
        let phase = obj
            .get("phase")
            .and_then(Value::as_str)
            .unwrap_or("progress");
        let pct = obj
            .get("progress_pct")
            .or_else(|| obj.get("pct"))
            .and_then(Value::as_f64);
        let detail = obj
            .get("detail")
            .or_else(|| obj.get("message"))
            .and_then(Value::as_str)
            .map(str::to_string);
        return Some(progress_msg(instance, task_id, phase, pct, detail));
    }
    if COORDINATOR_ONLY.contains(&kind.as_str()) {
        tracing::warn!("{instance}: ignoring a '{kind}' line; only the coordinator sends those");
        return None;
    }
    let mut data = match obj.get("data") {
        Some(Value::Object(d)) => d.clone(),
        _ => {
            let mut d = obj.as_object()?.clone();
            d.remove("type");
            d.remove("summary");
            d
        }
    };
    data.entry("task_id").or_insert_with(|| json!(task_id));
    if kind == "capability_gap" {
        // Who asked is the worker that printed it.
        data.entry("requested_by")
            .or_insert_with(|| json!(instance));
    }
    let summary = obj
        .get("summary")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("[{instance}] {task_id} {kind}"));
    let record = Record {
        id: String::new(),
        ts: String::new(),
        from: instance.to_string(),
        to: "coordinator".into(),
        kind,
        summary,
        data: Value::Object(data),
    };
    record.to_message()
}

async fn run_in_process(
    env: &Arc<RunEnv>,
    bus: &BusHandle,
    instance: &str,
    task: &Task,
    role: &RoleSpec,
    chain: Vec<crate::agents::backends::Backend>,
) -> Outcome {
    let timeout = Duration::from_secs(role.timeout_s);
    // A dynamic agent role brings its chain; the built-in roles use the session's.
    let agents = if chain.is_empty() {
        env.agents.clone()
    } else {
        let mut a = env.agents.clone();
        a.chains.insert(role.name.clone(), chain);
        a
    };
    let env2 = env.clone();
    let bus2 = bus.clone();
    let instance2 = instance.to_string();
    let task2 = task.clone();
    let role_name = role.name.clone();
    let role_body = role.body.clone();
    let work = tokio::task::spawn_blocking(move || {
        let task_id = task2.id.clone();
        let report = |phase: &str, pct: Option<f64>, detail: Option<String>| {
            bus2.publish(progress_msg(&instance2, &task_id, phase, pct, detail));
        };
        let ctx = RoleContext {
            session: &env2.session,
            repo: &env2.repo,
            task: &task2,
            instance: &instance2,
            config: &env2.config,
            deadline: Instant::now() + timeout,
            progress: &report,
            sandbox: &env2.sandbox,
            agents: &agents,
            role_body: &role_body,
            plan_only: false,
            shards: env2
                .remote
                .as_deref()
                .filter(|link| link.shards() > 1)
                .map(|link| link as &dyn crate::team::ShardRunner),
        };
        run_builtin(&role_name, &ctx)
    });
    // The deadline is enforced on every child process inside; this bounds the rest.
    match tokio::time::timeout(timeout + Duration::from_secs(5), work).await {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(e)) => Outcome::failed(format!("built-in role {} crashed: {e}", role.name)),
        Err(_) => Outcome::failed(format!(
            "built-in role {} timed out after {}s",
            role.name,
            timeout.as_secs()
        )),
    }
}
