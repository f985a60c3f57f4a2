//! The beat's rules as a plain state machine. The [`Scheduler`] owns the task graph and the
//! session's rule state (GC rounds, warnings, why it is pausing, whether it is finished); each
//! event (a task's outcome, a worker stopped, a resume, a capability gap, a beat) changes them
//! and returns the [`Effect`]s to carry out, in order: messages to publish, saves, tasks to
//! start, the end of the run.
//!
//! No actors, no bus, no files, no clock: whoever runs it (the coordinator actor) reads and
//! writes the files, passes what it read in as event data, and passes the time in. That keeps
//! every rule testable as plain Rust.

mod adapt;
mod dispatch;
mod effect;
mod gate;
mod instances;
mod outcome;
#[cfg(test)]
mod tests;

pub use adapt::{Adapt, AddedBy, RolePlan, TemplateRequest};
pub use effect::{Effect, Ending, Save, Start, StartOn};
pub use outcome::Stranded;

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::json;

use crate::bus::message::{Payload, PipelineSelected};
use crate::pipeline::config::TeamConfig;
use crate::roles::Registry;
use crate::session::{ActiveWorker, SessionState, SessionStatus};
use crate::tasks::{layer_code, Changed, TaskGraph};

use effect::publish;
use instances::Instances;

/// The name the coordinator's messages go out under.
pub const COORDINATOR: &str = "coordinator";

pub struct Scheduler {
    config: TeamConfig,
    /// The session folder: task descriptions name it.
    session_root: PathBuf,
    graph: TaskGraph,
    state: SessionState,
    /// The roles, with those added while the session runs (`roles add`, handleAdapt).
    registry: Registry,
    /// The roles the run started with: they run on their own backend, not an agent chain.
    launch_roles: BTreeSet<String>,
    instances: Instances,
    /// Why the session is pausing: nothing more is dispatched, and it ends paused once the
    /// running tasks are done.
    pausing: Option<String>,
    finished: bool,
}

impl Scheduler {
    pub fn new(
        config: TeamConfig,
        session_root: PathBuf,
        registry: Registry,
        mut graph: TaskGraph,
        state: SessionState,
    ) -> Self {
        // Whatever the caller edited, the scheduling index starts right (and the first beat
        // saves the graph whole).
        graph.reindex();
        Scheduler {
            launch_roles: registry.iter().map(|r| r.name.clone()).collect(),
            config,
            session_root,
            graph,
            state,
            registry,
            instances: Instances::default(),
            pausing: None,
            finished: false,
        }
    }

    pub fn graph(&self) -> &TaskGraph {
        &self.graph
    }

    pub fn state(&self) -> &SessionState {
        &self.state
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The run has ended (or stopped): no more beats.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The run stops where it is (the session cannot be saved): nothing more is dispatched.
    pub fn halt(&mut self) {
        self.finished = true;
        self.instances.clear();
    }

    /// Roles in use at once, coordinator included: `--max-roles`, else the team config's.
    pub fn max_roles(&self) -> usize {
        self.state
            .controls
            .max_roles
            .unwrap_or(self.config.max_roles)
    }

    /// A new run or a resume starts: the session is active under this process, and a new run
    /// says which pipeline was selected.
    pub fn begin(&mut self, pid: u32, selected: Option<PipelineSelected>) -> Vec<Effect> {
        self.state.status = SessionStatus::Active;
        self.state.pid = Some(pid);
        let Some(selected) = selected else {
            return Vec::new();
        };
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
            .config
            .coverage_targets
            .iter()
            .map(|(l, v)| (layer_code(l).to_string(), json!(v)))
            .collect();
        data.insert("coverage_targets".into(), json!(targets));
        data.insert("gc_rounds".into(), json!({}));
        vec![
            publish(
                COORDINATOR,
                "Session initialized",
                Payload::StateUpdate(data),
            ),
            publish(
                COORDINATOR,
                format!(
                    "[coordinator] pipeline {} selected ({} tasks): {}",
                    selected.pipeline, selected.task_count, selected.reason
                ),
                Payload::PipelineSelected(selected),
            ),
        ]
    }

    // ---- what a save needs ----------------------------------------------------------------

    /// Brings the state's summary of the graph up to date before it is saved.
    pub fn stamp_for_save(&mut self, now: &str) {
        self.state.updated_at = now.to_string();
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
    }

    /// The tasks changed since the last save (or all of them), and starts counting afresh.
    pub fn take_changed(&mut self) -> Changed {
        self.graph.take_changed()
    }

    /// A worker on another host took `task_id`'s `attempt`: the claim carries its identity
    /// (`status` shows where each task runs). A claim of an attempt the task is no longer on
    /// changes nothing.
    pub fn remote_claim(
        &mut self,
        task_id: &str,
        attempt: u32,
        host: &str,
        worker_id: &str,
    ) -> Vec<Effect> {
        let current = self.graph.get(task_id).is_some_and(|t| {
            t.status == crate::tasks::TaskStatus::InProgress && t.attempts == attempt
        });
        if !current {
            return Vec::new();
        }
        if let Some(task) = self.graph.get_mut(task_id) {
            task.meta
                .insert(crate::tasks::data::HOST.into(), json!(host));
            task.meta
                .insert(crate::tasks::data::REMOTE_WORKER.into(), json!(worker_id));
        }
        vec![Effect::QueueBeat]
    }

    /// tasks.json and session.json are about to be written whole as of `beat`.
    pub fn mark_snapshot(&mut self, beat: u64) {
        self.graph.beat = beat;
        self.state.beat = beat;
    }
}
