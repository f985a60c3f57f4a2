//! The coordinator actor: the beat model's edge. It wakes on a message, turns it into an event
//! for the [`Scheduler`] (which owns the task graph and the rules), and carries out the effects
//! it returns, in order: messages onto the bus, saves (the bus made durable, then the journal or
//! the session files), workers started or let go, the end of the run. Nothing polls.
//!
//! What needs files happens here, with its results handed to the scheduler: outcome records
//! read on resume, the inbox's `roles add` requests, role files installed for a new role.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use actix::prelude::*;

use super::remote::{RemoteClaimed, RemoteWorker};
use super::worker::{OutcomeRecord, RunTask, Worker, WorkerStopped};
use super::RunEnv;
use crate::bus::message::PipelineSelected;
use crate::bus::{BusHandle, Delivered, Payload};
use crate::error::EXIT_PAUSED;
use crate::sched::{Effect, Ending, Scheduler, Start, StartOn, Stranded, COORDINATOR as ME};
use crate::session::journal::Journal;
use crate::session::{SessionState, SessionStatus};
use crate::tasks::{Outcome, TaskGraph, TaskStatus};
use crate::util::{now_ts, read_json};

mod adapt;
mod persist;

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

/// A running worker (local, or the stand-in for a remote one); `serial` tells its stop notice
/// from that of an earlier worker of the name.
struct WorkerSlot {
    addr: Recipient<RunTask>,
    serial: u64,
}

pub struct Coordinator {
    env: Arc<RunEnv>,
    bus: BusHandle,
    sched: Scheduler,
    workers: HashMap<String, WorkerSlot>,
    next_serial: u64,
    end: RunEndSlot,
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
        graph: TaskGraph,
        state: SessionState,
        end: RunEndSlot,
    ) -> Self {
        let beat = graph.beat.max(state.beat);
        let sched = Scheduler::new(
            env.config.clone(),
            env.session.root.clone(),
            env.registry.clone(),
            graph,
            state,
        );
        Coordinator {
            beat,
            beat_pending: false,
            journal: None,
            inbox_watcher: None,
            sched,
            env,
            bus,
            workers: HashMap::new(),
            next_serial: 1,
            end,
        }
    }

    /// Carries out `effects` in order. Returns false when the session could not be saved: the
    /// run has stopped, and nothing after the failed save happened.
    fn execute(&mut self, effects: Vec<Effect>, ctx: &mut Context<Self>) -> bool {
        let mut dispatching = false;
        for effect in effects {
            match effect {
                Effect::Publish(message) => self.bus.publish(*message),
                Effect::Persist(save) => {
                    if !self.persist(save) {
                        return false;
                    }
                }
                Effect::Start(start) => {
                    // Once per beat, between the durable claims and the first worker start.
                    if !dispatching {
                        dispatching = true;
                        crate::failpoint::hit("dispatch");
                    }
                    self.start(start, ctx);
                }
                // Dropping the last address stops the idle actor.
                Effect::Release { instance } => {
                    self.workers.remove(&instance);
                }
                Effect::QueueBeat => self.queue_beat(ctx),
                Effect::End(ending) => self.end(ending),
            }
        }
        true
    }

    fn start(&mut self, start: Box<Start>, ctx: &mut Context<Self>) {
        let Start {
            instance,
            on,
            task,
            role,
            chain,
        } = *start;
        // The scheduler's instances and these slots come and go together.
        debug_assert_eq!(
            on == StartOn::NewWorker,
            !self.workers.contains_key(&instance),
            "{instance}"
        );
        if !self.workers.contains_key(&instance) {
            let serial = self.next_serial;
            self.next_serial += 1;
            let addr = match self.remote_for(role.as_ref()) {
                Some(link) => RemoteWorker {
                    instance: instance.clone(),
                    serial,
                    env: self.env.clone(),
                    bus: self.bus.clone(),
                    link,
                    on_stop: ctx.address().recipient(),
                    on_claim: ctx.address().recipient(),
                }
                .start()
                .recipient(),
                None => Worker {
                    instance: instance.clone(),
                    serial,
                    env: self.env.clone(),
                    bus: self.bus.clone(),
                    on_stop: ctx.address().recipient(),
                }
                .start()
                .recipient(),
            };
            self.workers
                .insert(instance.clone(), WorkerSlot { addr, serial });
        }
        if let Some(slot) = self.workers.get(&instance) {
            slot.addr.do_send(RunTask { task, role, chain });
        }
    }

    /// The cluster, when a live worker there serves the role: built-in generators and
    /// executors only (with `--shards`, they stay here and send their shards out instead).
    fn remote_for(
        &self,
        role: Option<&crate::roles::RoleSpec>,
    ) -> Option<Arc<crate::remote::Link>> {
        let link = self.env.remote.as_ref()?;
        let role = role?;
        let builtin = matches!(role.backend, crate::roles::Backend::Builtin);
        let remote_role = crate::remote::worker::REMOTE_ROLES.contains(&role.name.as_str());
        let splits = [&self.env.config.gc.critic, &self.env.config.gc.generator];
        let shards_here = splits.contains(&&role.name) && link.shards() > 1;
        (builtin && remote_role && !shards_here && link.serves(&role.name)).then(|| link.clone())
    }

    /// Every worker goes, and the CLI learns how the run ended.
    fn end(&mut self, ending: Ending) {
        self.workers.clear();
        let end = match ending {
            Ending::Settled {
                status,
                exit_code,
                warnings,
            } => RunEnd {
                status,
                exit_code,
                warnings,
            },
            Ending::PausedAtRoleCap { reason, raise_to } => RunEnd {
                status: SessionStatus::Paused,
                exit_code: EXIT_PAUSED,
                warnings: vec![format!(
                    "{reason}; {} continues it",
                    crate::hint::quoted(
                        &self.env.session,
                        "resume",
                        &["--max-roles", &raise_to.to_string()]
                    )
                )],
            },
        };
        self.finish(end);
    }

    fn finish(&mut self, end: RunEnd) {
        if let Ok(mut slot) = self.end.lock() {
            *slot = Some(end);
        }
        System::current().stop();
    }

    /// Persists and dispatches once the messages already queued are handled: completions that
    /// arrive together share one beat (one journal line, one pair of fsyncs).
    fn queue_beat(&mut self, ctx: &mut Context<Self>) {
        if !self.beat_pending {
            self.beat_pending = true;
            ctx.address().do_send(Beat);
        }
    }

    fn run_beat(&mut self, ctx: &mut Context<Self>) {
        self.beat_pending = false;
        let effects = self.sched.beat(&now_ts());
        self.execute(effects, ctx);
    }

    /// A task's outcome with the critic's run merged into the session's plan (the orchestrator
    /// owns scenarios.csv): what the merge decided, such as a fail-fast, is added to it.
    /// Only the first outcome of a task in progress, from the worker it was handed to (`from`;
    /// None for a stranded task's record), is merged.
    fn merged(&self, task_id: &str, from: Option<&str>, mut outcome: Outcome) -> Outcome {
        let task = self.sched.graph().get(task_id).filter(|t| {
            t.status == TaskStatus::InProgress
                && from.is_none_or(|from| t.worker.as_deref() == Some(from))
        });
        let Some(task) = task else {
            return outcome;
        };
        let said =
            crate::team::merge_critic_run(&self.env.session, &self.env.config, task, &mut outcome);
        // What the merge decided shows in the log and `status --watch`, as the worker's own
        // completion line does.
        if let Some(detail) = said {
            self.bus.publish(crate::bus::Message::new(
                ME,
                ME,
                format!("[coordinator] {task_id} merged into the plan: {detail}"),
                Payload::Progress(crate::bus::message::Progress {
                    task_id: task_id.to_string(),
                    phase: "merged".into(),
                    progress_pct: None,
                    detail: Some(detail),
                }),
            ));
        }
        outcome
    }

    /// The tasks a dead process left in progress, each with its outcome when the record on disk
    /// is of the attempt it was on.
    fn stranded(&self) -> Vec<Stranded> {
        self.sched
            .stranded()
            .into_iter()
            .map(|(task_id, attempt)| {
                let record: Option<OutcomeRecord> =
                    read_json(&self.env.session.outcome_file(&task_id)).ok();
                Stranded {
                    recorded: record
                        .filter(|r| r.attempt == attempt)
                        .map(|r| self.merged(&task_id, None, r.outcome)),
                    task_id,
                }
            })
            .collect()
    }
}

impl Actor for Coordinator {
    type Context = Context<Self>;
}

impl Handler<Begin> for Coordinator {
    type Result = ();

    fn handle(&mut self, msg: Begin, ctx: &mut Self::Context) {
        let effects = self.sched.begin(std::process::id(), msg.selected);
        self.execute(effects, ctx);
        if msg.resume {
            let stranded = self.stranded();
            let effects = self.sched.resume(stranded, &now_ts());
            self.execute(effects, ctx);
        }
        self.watch_inbox(ctx);
        self.handle_inbox(ctx);
        for gap in self.sched.take_pending_gaps() {
            self.capability_gap(gap, ctx);
        }
        self.run_beat(ctx);
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
            self.run_beat(ctx);
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
                let outcome = self.merged(&done.task_id, Some(&msg.0.from), done.outcome.clone());
                let effects =
                    self.sched
                        .task_reported(&msg.0.from, &done.task_id, outcome, &now_ts());
                self.execute(effects, ctx);
            }
            // A worker's echo-free request; the coordinator's own echoes carry a resolution.
            Payload::CapabilityGap(gap) if gap.resolution.is_none() && msg.0.from != ME => {
                self.capability_gap(gap.clone(), ctx);
                self.run_beat(ctx);
            }
            _ => {}
        }
    }
}

impl Handler<WorkerStopped> for Coordinator {
    type Result = ();

    fn handle(&mut self, msg: WorkerStopped, ctx: &mut Self::Context) {
        match self.workers.get(&msg.instance) {
            Some(slot) if slot.serial == msg.serial => {
                self.workers.remove(&msg.instance);
            }
            // Let go earlier, or an earlier worker of the name.
            _ => return,
        }
        let effects = self.sched.worker_stopped(&msg.instance, &now_ts());
        self.execute(effects, ctx);
        self.run_beat(ctx);
    }
}

impl Handler<RemoteClaimed> for Coordinator {
    type Result = ();

    fn handle(&mut self, msg: RemoteClaimed, ctx: &mut Self::Context) {
        let effects =
            self.sched
                .remote_claim(&msg.task_id, msg.attempt, &msg.worker.name, &msg.worker.id);
        self.execute(effects, ctx);
    }
}

/// A note from the cluster link: an event it did not take, or the server lost for too long.
#[derive(actix::Message)]
#[rtype(result = "()")]
pub struct RemoteNote(pub crate::remote::link::Note);

impl Handler<RemoteNote> for Coordinator {
    type Result = ();

    fn handle(&mut self, msg: RemoteNote, _: &mut Self::Context) {
        use crate::remote::link::Note;
        match msg.0 {
            Note::Ignored(line) => self.bus.publish(crate::bus::Message::new(
                ME,
                ME,
                line.clone(),
                Payload::Error(crate::bus::message::ErrorReport {
                    task_id: None,
                    message: line,
                    retry: false,
                }),
            )),
            Note::Lost(line) => {
                if self.sched.is_finished() {
                    return;
                }
                // Every beat is on disk already: stopping here loses nothing, and `resume`
                // continues once the server is back.
                self.bus.publish(crate::bus::Message::new(
                    ME,
                    ME,
                    format!("[coordinator] {line}: pausing the session"),
                    Payload::Error(crate::bus::message::ErrorReport {
                        task_id: None,
                        message: line.clone(),
                        retry: false,
                    }),
                ));
                let _ = self.bus.sync();
                self.sched.halt();
                crate::proc::kill_all_groups();
                self.env.session.mark_paused();
                let url = self
                    .env
                    .remote
                    .as_ref()
                    .map(|l| l.url().to_string())
                    .unwrap_or_default();
                let end = RunEnd {
                    status: SessionStatus::Paused,
                    exit_code: EXIT_PAUSED,
                    warnings: vec![format!(
                        "{line}; session {} is paused; continue with {}",
                        self.env.session.id,
                        crate::hint::quoted(&self.env.session, "resume", &["--nats", &url])
                    )],
                };
                self.workers.clear();
                self.finish(end);
            }
        }
    }
}
