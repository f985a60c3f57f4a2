//! What the scheduler asks of whoever runs it: messages, saves, worker starts, the end of the run.

use crate::agents::backends::Backend;
use crate::bus::message::{Message, Payload};
use crate::roles::RoleSpec;
use crate::session::SessionStatus;
use crate::tasks::Task;

use super::COORDINATOR;

/// One thing to do. Effects are carried out in the order given; when a [`Effect::Persist`]
/// fails the run stops there, and nothing after it happens.
#[derive(Debug, Clone)]
pub enum Effect {
    /// A message from the coordinator onto the bus (boxed, as is a start: payloads are large).
    Publish(Box<Message>),
    /// Make the beat durable: the bus first, then the session, so that nothing is started
    /// before the claims and messages that led to it are on disk.
    Persist(Save),
    /// Hand a claimed task to a worker instance.
    Start(Box<Start>),
    /// The instance has nothing left to do: let its worker go.
    Release { instance: String },
    /// Run a beat once the messages already queued are handled: completions that arrive
    /// together share one beat (one journal line).
    QueueBeat,
    /// The run is over: stop every worker and report how it ended.
    End(Ending),
}

/// How much of the session a save writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Save {
    /// One journal line: the state and the tasks that changed.
    Beat,
    /// tasks.json and session.json whole, the journal emptied: the last beat of a run.
    Whole,
}

/// A claimed task and where it runs.
#[derive(Debug, Clone)]
pub struct Start {
    /// The worker instance (`generator`, `executor-2`).
    pub instance: String,
    pub on: StartOn,
    /// The task as claimed (its attempt counted).
    pub task: Task,
    /// The role as the session knows it now; None when no role file defines it (the worker
    /// then fails the task and says so).
    pub role: Option<RoleSpec>,
    /// The agent chain of a role added to the session; empty for the roles it started with.
    pub chain: Vec<Backend>,
}

/// Whether a task needs a worker of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartOn {
    NewWorker,
    /// The instance's inner-loop worker is running: it takes the task after its current one.
    RunningWorker,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// No task is left to run: completed, failed, or kept paused (`auto_keep`).
    Settled {
        status: SessionStatus,
        exit_code: i32,
        warnings: Vec<String>,
    },
    /// Paused on a capability gap at the role cap; `resume --max-roles <raise_to>` continues.
    PausedAtRoleCap { reason: String, raise_to: usize },
}

/// A message from the coordinator to `to`.
pub(super) fn publish(to: &str, summary: impl Into<String>, payload: Payload) -> Effect {
    Effect::Publish(Box::new(Message::new(COORDINATOR, to, summary, payload)))
}
