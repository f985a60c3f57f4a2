//! The coordinator: sole owner of the task graph. Beat model: wake on a message, run one handler,
//! persist (tasks.json, session.json, and the bus made durable), dispatch every ready task, sleep.
//! Nothing polls.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use actix::prelude::*;
use serde_json::json;

use super::worker::{OutcomeRecord, RunTask, Worker, WorkerStopped};
use super::RunEnv;
use crate::bus::message::{
    ErrorReport, GcLoopTrigger, PipelineSelected, QualityGate, Shutdown, TaskDispatched,
};
use crate::bus::{BusHandle, Delivered, Message, Payload};
use crate::error::EXIT_PIPELINE_FAILED;
use crate::pipeline::select::gc_fix_tasks;
use crate::session::journal::Journal;
use crate::session::{ActiveWorker, SessionState, SessionStatus};
use crate::tasks::{
    gc_decision, layer_code, Changed, GcDecision, Outcome, OutcomeStatus, TaskGraph, TaskStatus,
};
use crate::util::{now_ts, read_json};

mod adapt;

const ME: &str = "coordinator";

/// How a run ended, for the CLI's exit code.
#[derive(Debug, Clone)]
pub struct RunEnd {
    pub status: SessionStatus,
    pub exit_code: i32,
    pub warnings: Vec<String>,
}

pub type RunEndSlot = Arc<Mutex<Option<RunEnd>>>;

/// Wakes the coordinator for a new run or a resume.
#[derive(actix::Message)]
#[rtype(result = "()")]
pub struct Begin {
    /// A resume: reconcile tasks left in progress by the interrupted process first.
    pub resume: bool,
    /// For a new run: the selection message to log.
    pub selected: Option<PipelineSelected>,
}

struct WorkerSlot {
    addr: Addr<Worker>,
    serial: u64,
    role: String,
    /// Tasks handed to it and not yet reported.
    tasks: Vec<String>,
}

pub struct Coordinator {
    env: Arc<RunEnv>,
    bus: BusHandle,
    graph: TaskGraph,
    state: SessionState,
    workers: HashMap<String, WorkerSlot>,
    next_serial: u64,
    end: RunEndSlot,
    finished: bool,
    /// The roles, with those added while the session runs (`roles add`, handleAdapt).
    registry: crate::roles::Registry,
    /// Why the session is pausing: nothing more is dispatched, and it ends paused once the
    /// running tasks are done.
    pausing: Option<String>,
    /// Wakes the coordinator when a request lands in the session's inbox.
    inbox_watcher: Option<notify::RecommendedWatcher>,
    /// Beats persisted so far (continuing the session's count); each is one journal line.
    beat: u64,
    /// A [`Beat`] is queued: the handlers before it only change the graph.
    beat_pending: bool,
    journal: Option<Journal>,
}

impl Coordinator {
    pub fn new(
        env: Arc<RunEnv>,
        bus: BusHandle,
        mut graph: TaskGraph,
        state: SessionState,
        end: RunEndSlot,
    ) -> Self {
        // Whatever the caller edited, the scheduling index starts right (and the first beat
        // saves the graph whole).
        graph.reindex();
        Coordinator {
            beat: graph.beat.max(state.beat),
            beat_pending: false,
            journal: None,
            registry: env.registry.clone(),
            pausing: None,
            inbox_watcher: None,
            env,
            bus,
            graph,
            state,
            workers: HashMap::new(),
            next_serial: 1,
            end,
            finished: false,
        }
    }

    fn say(&self, to: &str, summary: impl Into<String>, payload: Payload) {
        self.bus.publish(Message::new(ME, to, summary, payload));
    }

    /// Makes the bus durable, then the beat (a journal line with the state and the tasks that
    /// changed): nothing is dispatched before the messages and state that led to it are on disk.
    /// Returns false (and ends the run) when the session cannot be saved.
    fn persist(&mut self) -> bool {
        self.persist_beat(false)
    }

    /// The last beat of a run: tasks.json and session.json written whole, the journal emptied.
    fn persist_whole(&mut self) -> bool {
        self.persist_beat(true)
    }

    fn persist_beat(&mut self, whole: bool) -> bool {
        self.state.updated_at = now_ts();
        self.state.tasks_total = self.graph.len();
        self.state.gc_rounds = self.graph.gc_rounds();
        self.state.active_workers = self
            .graph
            .in_progress()
            .map(|t| ActiveWorker {
                name: t.worker.clone().unwrap_or_default(),
                role: t.owner.clone(),
                task_id: t.id.clone(),
                started_at: t.claimed_at.clone().unwrap_or_default(),
            })
            .collect();
        // The log first: a reader that sees the new state finds every message that led to it.
        let saved = self
            .bus
            .sync()
            .and_then(|_| self.save_beat(whole).map_err(|e| e.to_string()));
        match saved {
            Ok(()) => true,
            Err(problem) => {
                self.abort(problem);
                false
            }
        }
    }

    /// One fdatasync for a journal line; whole snapshots (atomic, fsynced) when asked, when
    /// the graph changed in ways a line does not say, or when the journal outgrew them.
    fn save_beat(&mut self, whole: bool) -> crate::error::Result<()> {
        self.beat += 1;
        let session = &self.env.session;
        let journal = match &mut self.journal {
            Some(j) => j,
            None => self.journal.insert(Journal::open(&session.journal())?),
        };
        let changed = self.graph.take_changed();
        let graph = &self.graph;
        match changed {
            Changed::Some(tasks) if !whole && !journal.wants_snapshot() => journal.append(
                self.beat,
                &self.state,
                tasks.iter().map(|&i| &graph.tasks[i]),
            ),
            changed => {
                // The beat goes to the journal first: a crash between the two snapshot files
                // then loses nothing (for a graph changed beyond what a line says, the state
                // alone; tasks.json follows at once).
                let tasks: Vec<&crate::tasks::Task> = match &changed {
                    Changed::Some(set) => set.iter().map(|&i| &graph.tasks[i]).collect(),
                    Changed::All => Vec::new(),
                };
                journal.append(self.beat, &self.state, tasks.into_iter())?;
                self.graph.beat = self.beat;
                self.state.beat = self.beat;
                session.save_tasks(&self.graph)?;
                session.save_state(&self.state)?;
                let size = std::fs::metadata(session.tasks_json()).map_or(0, |m| m.len());
                journal.reset(size)
            }
        }
    }

    /// The session cannot be saved (disk full, permissions): stop before dispatching anything
    /// more. What is on disk is the last consistent beat; `resume` continues from there.
    fn abort(&mut self, problem: String) {
        self.finished = true;
        self.workers.clear();
        crate::proc::kill_all_groups();
        if let Ok(mut end) = self.end.lock() {
            *end = Some(RunEnd {
                status: SessionStatus::Paused,
                exit_code: crate::error::EXIT_BAD_INPUT,
                warnings: vec![format!(
                    "{problem}; the run stopped, and {} continues it once this is fixed",
                    crate::hint::quoted(&self.env.session, "resume", &[])
                )],
            });
        }
        System::current().stop();
    }

    // ---- handleResume ------------------------------------------------------------------------

    /// Tasks left in progress by a dead process: finished ones (their outcome record is on disk
    /// for this attempt) are taken as reported; the rest go back to pending.
    fn handle_resume(&mut self) {
        let stranded: Vec<(String, u32)> = self
            .graph
            .in_progress()
            .map(|t| (t.id.clone(), t.attempts))
            .collect();
        for (id, attempts) in stranded {
            let path = self.env.session.outcome_file(&id);
            let record: Option<OutcomeRecord> = read_json(&path).ok();
            match record.filter(|r| r.attempt == attempts) {
                Some(r) => {
                    self.say(
                        ME,
                        format!(
                            "[coordinator] {id} finished before the interruption: {}",
                            r.outcome.headline()
                        ),
                        Payload::Progress(crate::bus::message::Progress {
                            task_id: id.clone(),
                            phase: "recovered".into(),
                            progress_pct: Some(100.0),
                            detail: Some("outcome recorded before the interruption".into()),
                        }),
                    );
                    self.handle_callback(&id, r.outcome);
                }
                None => {
                    if let Some(t) = self.graph.get_mut(&id) {
                        t.status = TaskStatus::Pending;
                        t.attempts = t.attempts.saturating_sub(1);
                        t.worker = None;
                        t.claimed_at = None;
                    }
                    self.say(
                        ME,
                        format!("[coordinator] {id} was interrupted; back to pending"),
                        Payload::Progress(crate::bus::message::Progress {
                            task_id: id.clone(),
                            phase: "requeued".into(),
                            progress_pct: None,
                            detail: Some("in progress when the previous process stopped".into()),
                        }),
                    );
                }
            }
        }
    }

    // ---- handleCallback ----------------------------------------------------------------------

    fn handle_callback(&mut self, task_id: &str, outcome: Outcome) {
        let Some(task) = self.graph.get(task_id).cloned() else {
            tracing::warn!("outcome for unknown task {task_id}");
            return;
        };
        if task.status != TaskStatus::InProgress {
            tracing::warn!(
                "ignoring a second outcome for {task_id} ({})",
                task.status.as_str()
            );
            return;
        }
        self.release_worker(task.worker.as_deref(), task_id, task.inner_loop);
        let now = now_ts();
        let is_critic = task.owner == self.env.config.gc.critic && task.layer.is_some();
        let outcome = match (&outcome.status, is_critic, outcome.pass_rate) {
            (OutcomeStatus::Completed, true, None) => Outcome {
                status: OutcomeStatus::Failed,
                summary: "the executor reported no pass_rate".into(),
                ..outcome
            },
            _ => outcome,
        };
        if outcome.status == OutcomeStatus::Failed {
            let reason = outcome.summary.clone();
            let max = self.env.config.max_attempts;
            let retry = self
                .graph
                .fail_attempt(task_id, &reason, max, Some(outcome), &now)
                .unwrap_or(false);
            self.say(
                ME,
                format!(
                    "[coordinator] {task_id} failed{}: {reason}",
                    if retry { ", retrying" } else { "" }
                ),
                Payload::Error(ErrorReport {
                    task_id: Some(task_id.to_string()),
                    message: reason,
                    retry,
                }),
            );
            return;
        }
        if outcome.status == OutcomeStatus::NotApplicable {
            // Nothing to do for the layer: its runs are not applicable either, so no gate is
            // judged and no GC round opens for it.
            let reason = outcome.summary.clone();
            let gc = &self.env.config.gc;
            let owners = [gc.generator.as_str(), gc.critic.as_str()];
            let also = self
                .graph
                .not_applicable(task_id, outcome, &owners, &now)
                .unwrap_or_default();
            let mut data = serde_json::Map::new();
            data.insert("task_id".into(), json!(task_id));
            data.insert("layer".into(), json!(task.layer));
            data.insert("not_applicable".into(), json!(reason));
            data.insert("also_not_applicable".into(), json!(also));
            self.say(
                ME,
                format!(
                    "[coordinator] {} not applicable{}: {reason}",
                    task.layer.as_deref().unwrap_or(task_id),
                    if also.is_empty() {
                        String::new()
                    } else {
                        format!(" ({task_id}, {})", also.join(", "))
                    }
                ),
                Payload::StateUpdate(data),
            );
            return;
        }
        let _ = self.graph.complete(task_id, outcome.clone(), &now);
        if is_critic {
            self.gc_checkpoint(task_id, &outcome);
        }
    }

    /// After a TESTRUN: go on, open a GC round, or accept the layer below its gate.
    fn gc_checkpoint(&mut self, task_id: &str, outcome: &Outcome) {
        let task = self.graph.get(task_id).cloned().expect("exists");
        let layer = task.layer.clone().unwrap_or_default();
        let code = layer_code(&layer).to_string();
        let pass_rate = outcome.pass_rate.unwrap_or(0.0);
        let target = task
            .coverage_target()
            .or_else(|| self.env.config.coverage_target(&layer));
        let used = self.graph.gc_rounds().get(&code).copied().unwrap_or(0);
        // `deepen` with a raised target opens a fresh budget of rounds: count from its base.
        let base = task
            .meta
            .get("rounds_from")
            .and_then(|v| v.as_u64())
            .unwrap_or(0) as u32;
        let config = &self.env.config;
        let decision = match gc_decision(
            pass_rate,
            outcome.coverage,
            config.pass_rate_target,
            target,
            used.saturating_sub(base),
            config.max_gc_rounds,
        ) {
            GcDecision::Revise { reason, .. } => GcDecision::Revise {
                round: used + 1,
                reason,
            },
            other => other,
        };
        let mut gate = QualityGate {
            layer: layer.clone(),
            task_id: task_id.to_string(),
            verdict: String::new(),
            pass_rate,
            coverage: outcome.coverage,
            coverage_target: target,
            rounds_used: used,
            warning: None,
        };
        if outcome.coverage.is_none() {
            gate.warning = Some(format!(
                "{layer}: coverage unknown (no coverage tool); judged on pass rate alone"
            ));
        }
        match decision {
            GcDecision::Pass => {
                gate.verdict = "pass".into();
                self.say(
                    ME,
                    format!("[coordinator] {code} gate met after {task_id}"),
                    Payload::QualityGate(gate),
                );
            }
            GcDecision::GiveUp { reason } => {
                let warning = format!("{layer} still below its gate: {reason}");
                self.state.warnings.push(warning.clone());
                gate.verdict = "accepted_below_gate".into();
                gate.warning = Some(warning.clone());
                self.say(
                    ME,
                    format!("[coordinator] warning: {warning}"),
                    Payload::QualityGate(gate),
                );
            }
            GcDecision::Revise { round, reason } => {
                let gen_instance = self
                    .graph
                    .tasks
                    .iter()
                    .rev()
                    .find(|t| t.owner == config.gc.generator && t.layer.as_deref() == Some(&layer))
                    .and_then(|t| t.instance.clone());
                let session_dir = self.env.session.root.display().to_string();
                let (gen, run) =
                    gc_fix_tasks(config, &task, gen_instance, round, &session_dir, &now_ts());
                let fix_ids = vec![gen.id.clone(), run.id.clone()];
                let run_id = run.id.clone();
                let exists = |r: &str| self.registry.contains(r);
                if let Err(e) = self
                    .graph
                    .insert(vec![gen, run], Some((task_id, &run_id)), exists)
                {
                    // The gate is still missed: say so rather than let the layer pass silently.
                    let warning = format!(
                        "{layer} below its gate ({reason}) but GC round {round} could not be opened: {e}"
                    );
                    self.state.warnings.push(warning.clone());
                    gate.verdict = "accepted_below_gate".into();
                    gate.warning = Some(warning.clone());
                    self.say(
                        ME,
                        format!("[coordinator] warning: {warning}"),
                        Payload::QualityGate(gate),
                    );
                    return;
                }
                gate.verdict = "revise".into();
                self.say(
                    ME,
                    format!("[coordinator] {code} below gate after {task_id}: {reason}"),
                    Payload::QualityGate(gate),
                );
                self.say(
                    "coordinator",
                    format!(
                        "[coordinator] GC round {round}/{} for {code}: {}",
                        config.max_gc_rounds,
                        fix_ids.join(", ")
                    ),
                    Payload::GcLoopTrigger(GcLoopTrigger {
                        layer,
                        round,
                        after_task: task_id.to_string(),
                        pass_rate,
                        coverage: outcome.coverage,
                        coverage_target: target,
                        reason,
                        fix_tasks: fix_ids,
                    }),
                );
            }
        }
        self.state.gc_rounds = self.graph.gc_rounds();
        let rounds = self.state.gc_rounds.clone();
        let mut data = serde_json::Map::new();
        data.insert("gc_rounds".into(), json!(rounds));
        self.say(ME, "[coordinator] gc rounds", Payload::StateUpdate(data));
    }

    /// The task is no longer the worker's; a worker whose work is done for good is let go.
    fn release_worker(&mut self, instance: Option<&str>, task_id: &str, inner_loop: bool) {
        let Some(name) = instance else { return };
        let Some(slot) = self.workers.get_mut(name) else {
            return;
        };
        slot.tasks.retain(|t| t != task_id);
        if slot.tasks.is_empty() && !inner_loop {
            // Dropping the last address stops the idle actor.
            self.workers.remove(name);
        }
    }

    // ---- handleSpawnNext ---------------------------------------------------------------------

    /// Persists and dispatches once the messages already queued are handled: completions that
    /// arrive together share one beat (one journal line, one pair of fsyncs).
    fn schedule_beat(&mut self, ctx: &mut Context<Self>) {
        if !self.beat_pending {
            self.beat_pending = true;
            ctx.address().do_send(Beat);
        }
    }

    fn handle_spawn_next(&mut self, ctx: &mut Context<Self>) {
        self.beat_pending = false;
        if self.finished {
            return;
        }
        if let Some(reason) = self.pausing.clone() {
            // Nothing new starts; the session ends paused when the running tasks are done.
            if self.graph.in_progress().next().is_none() {
                self.end_paused(&reason);
            } else {
                let _ = self.persist();
            }
            return;
        }
        for (id, reason) in self.graph.propagate_skips() {
            self.say(
                ME,
                format!("[coordinator] {id} skipped: {reason}"),
                Payload::Error(ErrorReport {
                    task_id: Some(id),
                    message: format!("skipped: {reason}"),
                    retry: false,
                }),
            );
        }
        // -c/--concurrency: the rest waits for a later beat.
        let cap = self.state.controls.concurrency.unwrap_or(usize::MAX);
        let room = cap.saturating_sub(self.graph.in_progress_count());
        let ready = self.graph.next_ready(room);
        let mut sends = Vec::new();
        let now = now_ts();
        for id in ready {
            if self.graph.in_progress_count() >= cap {
                break;
            }
            let task = self.graph.get(&id).cloned().expect("ready task exists");
            let wanted = task.instance_name().to_string();
            let (name, queued) = match self.workers.get(&wanted) {
                Some(_) if task.inner_loop => (wanted, true),
                Some(_) => (self.free_instance_name(&wanted), false),
                None => (wanted, false),
            };
            if !self.workers.contains_key(&name) {
                self.start_worker(&name, &task.owner, ctx);
            }
            if let Err(e) = self.graph.claim(&id, &name, &now) {
                tracing::error!("{e}");
                continue;
            }
            let attempt = self.graph.get(&id).map(|t| t.attempts).unwrap_or(1);
            let slot = self.workers.get_mut(&name).expect("started above");
            slot.tasks.push(id.clone());
            self.say(
                &name,
                format!(
                    "[coordinator] {id} -> {name}{}",
                    if queued {
                        " (handed to its running inner-loop worker)"
                    } else {
                        ""
                    }
                ),
                Payload::TaskUnblocked(TaskDispatched {
                    task_id: id.clone(),
                    worker: name.clone(),
                    attempt,
                    queued,
                }),
            );
            sends.push((name, id));
        }
        if sends.is_empty() {
            if self.graph.in_progress().next().is_none() {
                self.handle_complete(ctx);
            } else {
                // Nothing to dispatch; the beat's state change still goes to disk.
                let _ = self.persist();
            }
            return;
        }
        // The claims are durable before any worker starts.
        if !self.persist() {
            return;
        }
        crate::failpoint::hit("dispatch");
        for (name, id) in sends {
            let task = self.graph.get(&id).cloned().expect("claimed");
            if let Some(slot) = self.workers.get(&name) {
                let role = self.registry.get(&task.owner).cloned();
                let chain = if self.env.registry.contains(&task.owner) {
                    Vec::new()
                } else {
                    self.state.agents.chain(&task.owner)
                };
                slot.addr.do_send(RunTask { task, role, chain });
            }
        }
    }

    fn free_instance_name(&self, base: &str) -> String {
        (2..)
            .map(|n| format!("{base}-{n}"))
            .find(|n| !self.workers.contains_key(n))
            .expect("an unused name exists")
    }

    fn start_worker(&mut self, name: &str, role: &str, ctx: &mut Context<Self>) {
        let serial = self.next_serial;
        self.next_serial += 1;
        let worker = Worker {
            instance: name.to_string(),
            serial,
            env: self.env.clone(),
            bus: self.bus.clone(),
            on_stop: ctx.address().recipient(),
        };
        self.workers.insert(
            name.to_string(),
            WorkerSlot {
                addr: worker.start(),
                serial,
                role: role.to_string(),
                tasks: Vec::new(),
            },
        );
    }

    // ---- handleComplete ----------------------------------------------------------------------

    fn handle_complete(&mut self, _ctx: &mut Context<Self>) {
        self.finished = true;
        let failed: Vec<String> = self
            .graph
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Failed)
            .map(|t| t.id.clone())
            .collect();
        let (status, reason) = if failed.is_empty() {
            let done = self.graph.count(TaskStatus::Completed);
            let na = self.graph.count(TaskStatus::NotApplicable);
            let status = if self.state.completion_action == "auto_keep" {
                SessionStatus::Paused
            } else {
                SessionStatus::Completed
            };
            (
                status,
                format!(
                    "{done}/{} tasks completed{}",
                    self.graph.len(),
                    if na > 0 {
                        format!(", {na} not applicable")
                    } else {
                        String::new()
                    }
                ),
            )
        } else {
            (
                SessionStatus::Failed,
                format!("failed: {}", failed.join(", ")),
            )
        };
        self.state.status = status;
        let mut data = serde_json::Map::new();
        data.insert("status".into(), json!(status.as_str()));
        data.insert("gc_rounds".into(), json!(self.state.gc_rounds));
        data.insert("warnings".into(), json!(self.state.warnings));
        self.say(
            ME,
            format!("[coordinator] pipeline {}", status.as_str()),
            Payload::StateUpdate(data),
        );
        self.say(
            "all",
            format!("[coordinator] pipeline {}: {reason}", status.as_str()),
            Payload::Shutdown(Shutdown {
                status: status.as_str().into(),
                reason,
            }),
        );
        if !self.persist_whole() {
            return;
        }
        self.workers.clear();
        let exit_code = if status == SessionStatus::Failed {
            EXIT_PIPELINE_FAILED
        } else {
            0
        };
        if let Ok(mut end) = self.end.lock() {
            *end = Some(RunEnd {
                status,
                exit_code,
                warnings: self.state.warnings.clone(),
            });
        }
        System::current().stop();
    }
}

impl Actor for Coordinator {
    type Context = Context<Self>;
}

impl Handler<Begin> for Coordinator {
    type Result = ();

    fn handle(&mut self, msg: Begin, ctx: &mut Self::Context) {
        self.state.status = SessionStatus::Active;
        self.state.pid = Some(std::process::id());
        if let Some(selected) = msg.selected {
            let mut data = serde_json::Map::new();
            data.insert("status".into(), json!("active"));
            data.insert("pipeline_mode".into(), json!(self.state.pipeline_mode));
            data.insert(
                "pipeline_stages".into(),
                json!(["strategist", "generator", "executor", "analyst"]),
            );
            data.insert("team_name".into(), json!(self.state.team_name));
            data.insert("created_at".into(), json!(self.state.created_at));
            let targets: serde_json::Map<String, serde_json::Value> = self
                .env
                .config
                .coverage_targets
                .iter()
                .map(|(l, v)| (layer_code(l).to_string(), json!(v)))
                .collect();
            data.insert("coverage_targets".into(), json!(targets));
            data.insert("gc_rounds".into(), json!({}));
            self.say(ME, "Session initialized", Payload::StateUpdate(data));
            self.say(
                ME,
                format!(
                    "[coordinator] pipeline {} selected ({} tasks): {}",
                    selected.pipeline, selected.task_count, selected.reason
                ),
                Payload::PipelineSelected(selected),
            );
        }
        if msg.resume {
            let mut data = serde_json::Map::new();
            data.insert("status".into(), json!("active"));
            self.say(
                ME,
                "[coordinator] session resumed",
                Payload::StateUpdate(data),
            );
            self.handle_resume();
        }
        self.watch_inbox(ctx);
        self.handle_inbox();
        for gap in std::mem::take(&mut self.state.pending_gaps) {
            self.handle_adapt(gap);
        }
        self.handle_spawn_next(ctx);
    }
}

/// Run the beat's end (persist, dispatch) now; queued behind the messages that led to it.
#[derive(actix::Message)]
#[rtype(result = "()")]
struct Beat;

impl Handler<Beat> for Coordinator {
    type Result = ();

    fn handle(&mut self, _: Beat, ctx: &mut Self::Context) {
        // Another handler may have run the beat already.
        if self.beat_pending {
            self.handle_spawn_next(ctx);
        }
    }
}

impl Handler<Delivered> for Coordinator {
    type Result = ();

    fn handle(&mut self, msg: Delivered, ctx: &mut Self::Context) {
        if msg.0.to != ME {
            return;
        }
        match &msg.0.payload {
            Payload::TaskComplete(done) => {
                // Role isolation: only the worker the task was handed to may complete it.
                let holder = self.graph.get(&done.task_id).and_then(|t| t.worker.clone());
                if holder.as_deref() != Some(msg.0.from.as_str()) {
                    self.say(
                        ME,
                        format!(
                            "[coordinator] ignored: {} reported {}, which is not its task",
                            msg.0.from, done.task_id
                        ),
                        Payload::Error(ErrorReport {
                            task_id: Some(done.task_id.clone()),
                            message: format!("{} may not complete {}", msg.0.from, done.task_id),
                            retry: false,
                        }),
                    );
                    return;
                }
                self.handle_callback(&done.task_id, done.outcome.clone());
                self.schedule_beat(ctx);
            }
            // A worker's echo-free request; the coordinator's own echoes carry a resolution.
            Payload::CapabilityGap(gap) if gap.resolution.is_none() && msg.0.from != ME => {
                self.handle_adapt(gap.clone());
                self.handle_spawn_next(ctx);
            }
            _ => {}
        }
    }
}

impl Handler<WorkerStopped> for Coordinator {
    type Result = ();

    fn handle(&mut self, msg: WorkerStopped, ctx: &mut Self::Context) {
        let Some(slot) = self.workers.get(&msg.instance) else {
            return;
        };
        if slot.serial != msg.serial {
            return;
        }
        let slot = self.workers.remove(&msg.instance).expect("present");
        let now = now_ts();
        for id in slot.tasks {
            let reason = format!(
                "worker {} ({}) stopped before finishing",
                msg.instance, slot.role
            );
            let retry = self
                .graph
                .fail_attempt(&id, &reason, self.env.config.max_attempts, None, &now)
                .unwrap_or(false);
            self.say(
                ME,
                format!("[coordinator] {id}: {reason}"),
                Payload::Error(ErrorReport {
                    task_id: Some(id.clone()),
                    message: reason,
                    retry,
                }),
            );
        }
        self.handle_spawn_next(ctx);
    }
}
