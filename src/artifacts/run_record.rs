//! `results/run-NNN.json`: what one executor task found. Three shapes share the type: a run
//! that ran tests (every field), a run that ran nothing (`note`), and a run the environment
//! stopped (`classification: env_issue`, `problem`, `install`). Each keeps the keys it had, so
//! fields some shapes leave out are `Option` (left out when `None`) or [`Nullable`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::judged::FileDigests;
use super::nullable::{null_as_default, present, Nullable};
use super::{LoadErrorRecord, Quarantined, Repair, TestRecord};
use crate::testing::classify::Classification;

/// The files coverage was judged on: the strategist's priority files, or the whole project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CoverageScope {
    Files(Vec<String>),
    /// Written as the string `whole project`.
    Whole(String),
}

impl CoverageScope {
    pub const WHOLE_PROJECT: &'static str = "whole project";

    pub fn of(files: &[String]) -> Self {
        if files.is_empty() {
            CoverageScope::Whole(Self::WHOLE_PROJECT.into())
        } else {
            CoverageScope::Files(files.to_vec())
        }
    }

    /// The files in scope; empty for the whole project.
    pub fn files(&self) -> &[String] {
        match self {
            CoverageScope::Files(f) => f,
            CoverageScope::Whole(_) => &[],
        }
    }
}

/// A run record. Field order is the order of the keys in the file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunRecord {
    #[serde(deserialize_with = "null_as_default")]
    pub task_id: String,
    #[serde(deserialize_with = "null_as_default")]
    pub layer: String,
    #[serde(deserialize_with = "null_as_default")]
    pub framework: String,
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub command: Nullable<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub exit_code: Nullable<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// Written last by the runs that ran nothing or could not run; here in a full run's order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    pub total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<usize>,
    /// Tests that failed, then passed on a re-run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flaky: Option<Vec<String>>,
    /// A fraction (0.0–1.0); null when the environment stopped the run.
    pub pass_rate: Option<f64>,
    /// Line coverage in percent of the files in scope.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub coverage: Nullable<f64>,
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub branch_coverage: Nullable<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage_scope: Option<CoverageScope>,
    /// Why coverage is missing, when it is.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub coverage_problem: Nullable<String>,
    /// Files in scope the coverage report did not list (counted as 0 %).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unmeasured_files: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage_outside_repo: Option<Vec<String>>,
    /// Line coverage of the same files by the project's own suite alone (`results/baseline.json`);
    /// `coverage` is then the two together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_coverage: Option<f64>,
    /// Line coverage of the layer's tests alone, when there is a baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_coverage: Option<f64>,
    /// Entry-point modules an L1/L2 gate leaves out (only L3 reaches them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out_of_gate: Option<Vec<String>>,
    /// `results/coverage-NNN.json`, relative to the session.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub coverage_file: Nullable<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests: Option<Vec<TestRecord>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_errors: Option<Vec<LoadErrorRecord>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quarantined: Option<Vec<Quarantined>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repairs: Option<Vec<Repair>>,
    /// `classification:error kind` → how many failures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defect_patterns: Option<BTreeMap<String, usize>>,
    /// Raw reports kept under results/, relative to the session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reports: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<String>,
    /// Why a run ran nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// `env_issue` when the environment stopped the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classification: Option<Classification>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
    /// What stopped the run (a missing tool, a timeout).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The command that installs what is missing.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub install: Nullable<String>,
    /// What the file-system watch made of the kept tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchRecord>,
    /// Each file of the layer's folder as the last iteration ran it (name -> sha256): what
    /// `apply` may deliver (`artifacts::judged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_files: Option<FileDigests>,
    /// The earlier run (`<session> run 003`) whose results this one took instead of running the
    /// same tests on the same code again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused_from: Option<String>,
}

/// What the file-system watch made of a layer run's kept tests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchRecord {
    /// Whether the layer's tests ran under the watch.
    pub checked: bool,
    /// Why they did not, or what the watch found of the files together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Places bound read-only instead of watched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unwatched: Vec<String>,
}

impl RunRecord {
    /// The tests of the run; none for a run the environment stopped.
    pub fn tests(&self) -> &[TestRecord] {
        self.tests.as_deref().unwrap_or_default()
    }

    /// Whether the run recorded its tests (it ran, or ran nothing), unlike an env_issue record.
    pub fn has_tests(&self) -> bool {
        self.tests.is_some()
    }

    pub fn coverage(&self) -> Option<f64> {
        self.coverage.flatten()
    }

    pub fn coverage_file(&self) -> Option<&str> {
        self.coverage_file.as_ref()?.as_deref()
    }

    pub fn quarantined(&self) -> &[Quarantined] {
        self.quarantined.as_deref().unwrap_or_default()
    }

    pub fn flaky(&self) -> &[String] {
        self.flaky.as_deref().unwrap_or_default()
    }

    pub fn load_errors(&self) -> &[LoadErrorRecord] {
        self.load_errors.as_deref().unwrap_or_default()
    }

    /// What stopped the run, when the environment did.
    pub fn env_problem(&self) -> Option<String> {
        if let Some(p) = &self.problem {
            return Some(p.clone());
        }
        (self.classification == Some(Classification::EnvIssue))
            .then(|| "environment problem (env_issue)".to_string())
    }
}
