//! Reading a session for the report: session.json, tasks.json and results/run-*.json, each
//! optional. What cannot be read becomes a line of the report's Missing section, never an error:
//! a report of what exists beats no report.

use serde_json::Value;

use super::model::RunSummary;
use crate::session::{SessionDir, SessionState};
use crate::tasks::TaskGraph;
use crate::util::read_json;

/// The session's own files, as the sections read them.
pub(super) struct Loaded {
    pub state: Option<SessionState>,
    pub graph: TaskGraph,
    /// Run records in file-name order (run-001 first).
    pub runs: Vec<Run>,
    /// What could not be read, in the order it was found.
    pub missing: Vec<String>,
}

/// A run record as read from results/.
pub(super) struct Run {
    /// Relative to the session: `results/run-001.json`.
    pub file: String,
    pub task_id: String,
    pub layer: String,
    pub round: u32,
    pub v: Value,
}

impl Run {
    pub fn tests(&self) -> impl Iterator<Item = &Value> {
        self.v["tests"].as_array().into_iter().flatten()
    }

    pub fn env_problem(&self) -> Option<String> {
        if let Some(p) = self.v["problem"].as_str() {
            return Some(p.to_string());
        }
        (self.v["classification"].as_str() == Some("env_issue"))
            .then(|| "environment problem (env_issue)".to_string())
    }

    /// The run's line of the report's `runs` list.
    pub fn summary(&self) -> RunSummary {
        RunSummary {
            file: self.file.clone(),
            task_id: self.task_id.clone(),
            layer: self.layer.clone(),
            round: self.round,
            total: self.v["total"].as_u64().unwrap_or(0),
            passed: self.v["passed"].as_u64().unwrap_or(0),
            failed: self.v["failed"].as_u64().unwrap_or(0),
            errors: self.v["errors"].as_u64().unwrap_or(0),
            skipped: self.v["skipped"].as_u64().unwrap_or(0),
            pass_rate: self.v["pass_rate"].as_f64(),
            coverage: self.v["coverage"].as_f64(),
            env_problem: self.env_problem(),
        }
    }
}

/// A test record that failed (failed or error; flaky and skipped do not count).
pub(super) fn is_failing(t: &Value) -> bool {
    matches!(t["status"].as_str(), Some("failed" | "error"))
}

/// A JSON string as an owned String; None for anything else (null, absent, a number).
pub(super) fn str_of(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
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
    let dir = session.root.join("results");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("run-") && n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut runs = Vec::new();
    for n in names {
        match read_json::<Value>(&dir.join(&n)) {
            Ok(v) => {
                let task_id = str_of(&v["task_id"]).unwrap_or_default();
                let task = graph.get(&task_id);
                let layer = str_of(&v["layer"])
                    .or_else(|| task.and_then(|t| t.layer.clone()))
                    .unwrap_or_else(|| "unknown".into());
                let round = task
                    .and_then(|t| t.meta.get("gc_round").and_then(Value::as_u64))
                    .map_or_else(|| round_of(&task_id), |r| r as u32);
                runs.push(Run {
                    file: format!("results/{n}"),
                    task_id,
                    layer,
                    round,
                    v,
                });
            }
            Err(e) => missing.push(format!("results/{n} is unreadable ({e}); left out")),
        }
    }
    runs
}
