//! Reading a session for the report: session.json, tasks.json and results/run-*.json, each
//! optional. What cannot be read becomes a line of the report's Missing section, never an error:
//! a report of what exists beats no report.

use super::model::RunSummary;
use crate::artifacts::{self, RunRecord, TestRecord};
use crate::session::{SessionDir, SessionState};
use crate::tasks::TaskGraph;

/// The session's own files, as the sections read them.
pub(super) struct Loaded {
    pub state: Option<SessionState>,
    pub graph: TaskGraph,
    /// Run records in file-name order (run-001 first).
    pub runs: Vec<Run>,
    /// What could not be read, in the order it was found.
    pub missing: Vec<String>,
}

/// A run record as read from results/, with where it sits in the session.
pub(super) struct Run {
    /// Relative to the session: `results/run-001.json`.
    pub file: String,
    pub task_id: String,
    pub layer: String,
    pub round: u32,
    pub record: RunRecord,
}

impl Run {
    pub fn tests(&self) -> impl Iterator<Item = &TestRecord> {
        self.record.tests().iter()
    }

    pub fn env_problem(&self) -> Option<String> {
        self.record.env_problem()
    }

    /// The run's line of the report's `runs` list.
    pub fn summary(&self) -> RunSummary {
        let r = &self.record;
        RunSummary {
            file: self.file.clone(),
            task_id: self.task_id.clone(),
            layer: self.layer.clone(),
            round: self.round,
            total: r.total as u64,
            passed: r.passed.unwrap_or(0) as u64,
            failed: r.failed.unwrap_or(0) as u64,
            errors: r.errors.unwrap_or(0) as u64,
            skipped: r.skipped.unwrap_or(0) as u64,
            pass_rate: r.pass_rate,
            coverage: r.coverage(),
            env_problem: self.env_problem(),
        }
    }
}

/// The GC round of an executor task: TESTRUN-001 → 0, TESTRUN-L1-fix-2 → 2.
pub fn round_of(task_id: &str) -> u32 {
    task_id
        .rsplit_once("-fix-")
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(0)
}

/// Reads session.json, tasks.json and every results/run-*.json of `session`.
pub(super) fn load(session: &SessionDir) -> Loaded {
    let mut missing = Vec::new();
    let state = match session.load_state() {
        Ok(s) => Some(s),
        Err(e) => {
            missing.push(format!("session.json: {e}"));
            None
        }
    };
    let graph = match session.load_tasks() {
        Ok(g) => g,
        Err(e) => {
            missing.push(format!("tasks.json: {e}"));
            TaskGraph::new(Vec::new())
        }
    };
    let runs = load_runs(session, &graph, &mut missing);
    if runs.is_empty() {
        missing.push("results/run-*.json: no run records, so there are no test results".into());
    }
    Loaded {
        state,
        graph,
        runs,
        missing,
    }
}

/// The run records, each with its layer and GC round (from the record, else its task in
/// tasks.json, else its task id).
fn load_runs(session: &SessionDir, graph: &TaskGraph, missing: &mut Vec<String>) -> Vec<Run> {
    let results = artifacts::runs(&session.root);
    for (name, e) in &results.unreadable {
        missing.push(format!("results/{name} is unreadable ({e}); left out"));
    }
    let mut runs = Vec::new();
    for (name, record) in results.runs {
        let task_id = record.task_id.clone();
        let task = graph.get(&task_id);
        let layer = Some(record.layer.clone())
            .filter(|l| !l.is_empty())
            .or_else(|| task.and_then(|t| t.layer.clone()))
            .unwrap_or_else(|| "unknown".into());
        let round = task
            .and_then(|t| t.gc_round())
            .map_or_else(|| round_of(&task_id), |r| r as u32);
        runs.push(Run {
            file: format!("results/{name}"),
            task_id,
            layer,
            round,
            record,
        });
    }
    runs
}
