//! Tasks and the blockedBy graph: validation, the ready set, claims, skip propagation, and the
//! Generator-Critic rewiring. Plain data; the coordinator is the only one that changes it.

mod gc;
mod graph;
mod sched;

pub use gc::{
    gc_decision, layer_code, GateFigures, GateInput, GcDecision, RunFigures, LOOP_STOPPED,
};
pub use graph::{Changed, GraphError, TaskGraph};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The test layers, in order, as their folders are named.
pub const LAYER_DIRS: [&str; 3] = ["L1-unit", "L2-integration", "L3-e2e"];

/// A role's inner_loop setting: always, never, or set per task by the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InnerLoop {
    Fixed(bool),
    Dynamic(DynamicMarker),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DynamicMarker {
    Dynamic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
    Skipped,
    Deleted,
    /// Nothing for the task to do here (no generator for the framework, nothing in scope the
    /// layer can test, no entry points for L3): done, with the reason, and out of the score.
    NotApplicable,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Skipped => "skipped",
            TaskStatus::Deleted => "deleted",
            TaskStatus::NotApplicable => "not_applicable",
        }
    }

    /// Completed, deleted or not applicable: a successor may go on.
    pub fn is_done(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Deleted | TaskStatus::NotApplicable
        )
    }

    /// Failed or skipped: successors are skipped.
    pub fn is_dead(self) -> bool {
        matches!(self, TaskStatus::Failed | TaskStatus::Skipped)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    pub subject: String,
    /// The role that owns the task.
    pub owner: String,
    /// The worker instance that runs it (`generator-1`); defaults to the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    pub status: TaskStatus,
    #[serde(rename = "blockedBy", default)]
    pub blocked_by: Vec<String>,
    #[serde(default)]
    pub layer: Option<String>,
    #[serde(default)]
    pub inner_loop: bool,
    #[serde(default)]
    pub meta: Map<String, Value>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub attempts: u32,
    #[serde(default)]
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// The worker instance that ran (or runs) it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// Why it failed or was skipped; the last error of a retried attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Task {
    /// A pending task with nothing recorded yet; set the rest with struct update syntax.
    pub fn new(id: &str, subject: &str, owner: &str, blocked_by: Vec<String>) -> Self {
        Task {
            id: id.to_string(),
            subject: subject.to_string(),
            owner: owner.to_string(),
            instance: None,
            status: TaskStatus::Pending,
            blocked_by,
            layer: None,
            inner_loop: false,
            meta: Map::new(),
            description: String::new(),
            attempts: 0,
            created_at: String::new(),
            claimed_at: None,
            started_at: None,
            completed_at: None,
            worker: None,
            artifacts: Vec::new(),
            outcome: None,
            reason: None,
        }
    }

    pub fn instance_name(&self) -> &str {
        self.instance.as_deref().unwrap_or(&self.owner)
    }

    pub fn coverage_target(&self) -> Option<f64> {
        self.meta.get("coverage_target").and_then(Value::as_f64)
    }

    /// The GC round a generator or executor task belongs to (meta `gc_round`); None for the
    /// first pass.
    pub fn gc_round(&self) -> Option<u64> {
        self.meta.get(meta::GC_ROUND).and_then(Value::as_u64)
    }

    /// The executor task a `rerun` repeats (meta `rerun_of`): its passes are kept.
    pub fn rerun_of(&self) -> Option<&str> {
        self.meta.get(meta::RERUN_OF).and_then(Value::as_str)
    }

    /// The GC rounds used before an `extend` (meta `rounds_from`): the gate counts from there.
    pub fn rounds_from(&self) -> Option<u64> {
        self.meta.get(meta::ROUNDS_FROM).and_then(Value::as_u64)
    }
}

/// The keys of task meta that carry meaning (the file format: tasks.json).
pub mod meta {
    pub const GC_ROUND: &str = "gc_round";
    pub const RERUN_OF: &str = "rerun_of";
    pub const ROUNDS_FROM: &str = "rounds_from";
    /// Which step of its role a task is (the fixer's `validate` or `cycle`).
    pub const STEP: &str = "step";
}

/// The keys of outcome data that carry meaning (the file format: tasks.json, .outcomes/).
pub mod data {
    /// Set (true) when the task failed on something only the user can fix: the worker posts it as
    /// a blocker.
    pub const BLOCKER: &str = "blocker";
    /// The executor task a rerun repeated.
    pub const RERUN_OF: &str = "rerun_of";
    /// The run record of an executor task, relative to the session.
    pub const RUN: &str = "run";
    /// The strategist's files to judge coverage on (a list of repository paths).
    pub const PRIORITY_FILES: &str = "priority_files";
    /// The test framework the strategist detected (`pytest`, `go`, `unknown`).
    pub const FRAMEWORK: &str = "framework";
    /// The toolchain the strategist probed (a `testing::toolchain::Toolchain`).
    pub const TOOLCHAIN: &str = "toolchain";
    /// The tests an executor task left failing (carried into a rerun's meta).
    pub const FAILED_TESTS: &str = "failed_tests";
    /// What the generator found while searching (broken contracts, import errors): a list.
    pub const FINDINGS: &str = "findings";
    /// Set by an executor task when a critical scenario of the plan failed: why the later layers
    /// do not run.
    pub const FAIL_FAST: &str = "fail_fast";
    /// Task meta: the name of the cluster worker that took the task's current attempt.
    pub const HOST: &str = "host";
    /// Task meta: that worker's unique id.
    pub const REMOTE_WORKER: &str = "remote_worker";
    /// Task meta of a task handed to a cluster worker: the run number the coordinator reserved
    /// for it in the session (parallel executors on other hosts cannot see each other's).
    pub const RESERVED_RUN: &str = "reserved_run";
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    Completed,
    Failed,
    /// The role had nothing to do for this task; the summary says why.
    NotApplicable,
}

/// What a role reports when it finishes a task, whatever its backend (command, builtin, agent).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Outcome {
    pub status: OutcomeStatus,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub data: Map<String, Value>,
    /// Executor tasks: fraction of tests that passed, 0..=1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    /// Executor tasks: line coverage in percent; None = unknown (no coverage tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
    /// Executor tasks: what the quality gate judges beyond the raw pass rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateFigures>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
}

impl Outcome {
    /// Whether the task failed on something only the user can fix (data `blocker: true`).
    pub fn is_blocker(&self) -> bool {
        self.data.get(data::BLOCKER) == Some(&Value::Bool(true))
    }

    /// The run record an executor task wrote (data `run`), relative to the session.
    pub fn run_record(&self) -> Option<&str> {
        self.data.get(data::RUN).and_then(Value::as_str)
    }

    /// The strategist's priority files (data `priority_files`); empty when it named none.
    pub fn priority_files(&self) -> Vec<String> {
        self.data
            .get(data::PRIORITY_FILES)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }

    /// The framework name the strategist recorded (data `framework`).
    pub fn framework_name(&self) -> Option<&str> {
        self.data.get(data::FRAMEWORK).and_then(Value::as_str)
    }

    /// The generator's findings (data `findings`); empty when there are none.
    pub fn findings(&self) -> &[Value] {
        self.data
            .get(data::FINDINGS)
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    pub fn failed(summary: impl Into<String>) -> Self {
        Outcome {
            status: OutcomeStatus::Failed,
            summary: summary.into(),
            data: Map::new(),
            pass_rate: None,
            coverage: None,
            gate: None,
            artifacts: Vec::new(),
            started_at: None,
            finished_at: None,
        }
    }

    pub fn completed(summary: impl Into<String>) -> Self {
        Outcome {
            status: OutcomeStatus::Completed,
            ..Outcome::failed(summary)
        }
    }

    /// Nothing to do here, and why (with what the user can do about it).
    pub fn not_applicable(reason: impl Into<String>) -> Self {
        Outcome {
            status: OutcomeStatus::NotApplicable,
            ..Outcome::failed(reason)
        }
    }

    /// The one-line result shown in summaries: status, pass rate and coverage where known.
    pub fn headline(&self) -> String {
        let mut s = match self.status {
            OutcomeStatus::Completed => String::from("completed"),
            OutcomeStatus::Failed => String::from("failed"),
            OutcomeStatus::NotApplicable => String::from("not applicable"),
        };
        if let Some(p) = self.pass_rate {
            s.push_str(&format!(" pass {:.1}%", p * 100.0));
        }
        if self.pass_rate.is_some() {
            match self.coverage {
                Some(c) => s.push_str(&format!(" cov {c:.1}%")),
                None => s.push_str(" cov n/a"),
            }
        }
        if !self.summary.is_empty() {
            s.push_str(": ");
            s.push_str(&self.summary);
        }
        s
    }
}

#[cfg(test)]
mod accessor_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn task_meta_keys_read_through_accessors() {
        let mut t = Task::new("TESTRUN-L1-fix-2", "s", "executor", Vec::new());
        assert_eq!(
            (t.gc_round(), t.rerun_of(), t.rounds_from()),
            (None, None, None)
        );
        t.meta.insert("gc_round".into(), json!(2));
        t.meta.insert("rerun_of".into(), json!("TESTRUN-001"));
        t.meta.insert("rounds_from".into(), json!(1));
        assert_eq!(t.gc_round(), Some(2));
        assert_eq!(t.rerun_of(), Some("TESTRUN-001"));
        assert_eq!(t.rounds_from(), Some(1));
        let mut o = Outcome::failed("x");
        assert!(!o.is_blocker());
        o.data.insert("blocker".into(), json!(true));
        assert!(o.is_blocker());
    }
}
