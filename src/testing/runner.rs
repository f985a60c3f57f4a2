//! The contract between the executor and the framework runners (python, cargo, node): what a run
//! is asked to do and what it hands back, before classification and gating.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::report::{CoverageReport, TestCase};
use super::toolchain::Toolchain;
use crate::sandbox::Sandbox;

/// One run of one layer's tests.
pub struct RunSpec<'a> {
    /// The target repository (read-only: runners never write into it).
    pub repo: &'a Path,
    /// The session folder; runners write only under `results` and `workspace`.
    pub session: &'a Path,
    pub layer: &'a str,
    /// The layer's generated tests: `<session>/tests/<layer>`.
    pub test_dir: PathBuf,
    pub tools: &'a Toolchain,
    /// `<session>/results`, where raw reports go as `<kind>-<run_no>.<ext>`.
    pub results: PathBuf,
    /// Zero-padded run number (`007`) shared by every file of this run.
    pub run_no: String,
    /// Whole-run budget; every child process gets at most what is left of it.
    pub timeout: Duration,
    /// Test ids to leave out (quarantined by an earlier repair iteration).
    pub deselect: &'a [String],
    /// Where the tests run (None: unsandboxed, with `--unsafe-no-sandbox`).
    pub sandbox: Option<&'a Sandbox>,
}

/// A test file that does not even load (syntax error, failed import, build error).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadError {
    /// Relative to the layer's test folder.
    pub file: String,
    pub error: String,
    /// Why it does not load, in the classes of a failing test (set by the executor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<super::load_error::LoadVerdict>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunOutput {
    /// The main test command, as run.
    pub command: Vec<String>,
    pub exit_code: Option<i32>,
    pub duration_s: f64,
    pub cases: Vec<TestCase>,
    /// Files the L0 gate found unloadable; they were left out of the run.
    pub load_errors: Vec<LoadError>,
    pub coverage: Option<CoverageReport>,
    /// Why coverage is missing, when it is.
    pub coverage_problem: Option<String>,
    /// Raw reports kept under results/, relative to the session folder.
    pub reports: Vec<String>,
    /// The end of the runner's output, for evidence.
    pub output_tail: String,
    pub timed_out: bool,
    /// The runner could not run at all (missing tool): the exact problem.
    pub env_problem: Option<String>,
    /// What tests changed outside their own temporary folders (Python: the effects plugin).
    #[serde(default)]
    pub effects: Vec<super::effects::Effect>,
}

/// The last `lines` lines of `text`.
pub fn tail_lines(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
