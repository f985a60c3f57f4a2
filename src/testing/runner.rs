//! The contract between the executor and the framework runners (python, cargo, node, go): what a
//! run is asked to do and what it hands back, before classification and gating.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::load_error::LoadError;
use super::report::{CoverageReport, TestCase, TestStatus};
use super::toolchain::Toolchain;
use crate::sandbox::Sandbox;

/// What `apply` knows of one file it writes, handed to the runner: runners never read the
/// session themselves.
#[derive(Debug, Clone, Copy)]
pub struct ApplyFile<'a> {
    /// Where the file goes, relative to the repository.
    pub dest: &'a Path,
    /// The file's tests that found code defects (test id or name -> the evidence): they become
    /// the framework's expected failures.
    pub defects: &'a std::collections::BTreeMap<String, String>,
    /// The project's installed node_modules, when it has them (which jest, which form).
    pub node_modules: Option<&'a Path>,
}

/// What the executor and `apply` need of one framework family.
pub trait Runner {
    /// Whether a layer's folder holds test files this runner runs.
    fn has_tests(&self, test_dir: &Path) -> bool;

    /// The folders under the session's `workspace` a run of `layer` writes (its copy of the
    /// project, scratch files); the sandbox lets the run write there and nowhere else but results/.
    fn workspace_dirs(&self, workspace: &Path, layer: &str) -> Vec<PathBuf>;

    /// Those of [`Runner::workspace_dirs`] that hold the copy of the project the tests import:
    /// read-only to the tests (the runner writes them before the run, outside the sandbox), so
    /// a test that writes beside the code it imports fails here instead of passing, as it would
    /// change the user's project after `apply`.
    fn copy_dirs(&self, _workspace: &Path, _layer: &str) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Folders outside the repository and the session that the tests must read.
    fn read_roots(&self, _tools: &Toolchain, _repo: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// One run of the layer: the L0 gate leaves out the files that do not load (as
    /// `load_errors`), the rest run, with coverage when the toolchain measures it.
    fn run(&self, spec: &RunSpec) -> RunOutput;

    /// Whether a run with coverage off runs the very same code, with no build of its own:
    /// coverage is a tracer the run turns on (coverage.py), not instrumented code (istanbul under
    /// jest and nyc, whose rewriting a test can see) or an instrumented build (cargo-llvm-cov,
    /// `go test -cover`). The file-system watch's second run of the tests, which judges effects
    /// and outcomes and never coverage, then leaves it off.
    fn coverage_is_runtime_only(&self) -> bool {
        false
    }

    /// Runs one test of an earlier run again (flaky detection); None when it could not run.
    fn rerun(&self, spec: &RunSpec, case: &TestCase) -> Option<TestStatus>;

    /// The id that leaves `case` out of a later run (deselect, quarantine).
    fn selector(&self, _test_dir: &Path, case: &TestCase) -> String {
        case.id.clone()
    }

    /// Whether leaving out an id also leaves out every test whose id contains it (libtest).
    fn deselect_matches_substrings(&self) -> bool {
        false
    }

    /// Where `apply` copies one of a layer's files (`file`, in the session), relative to the
    /// repository `repo`; None for a file that is not one of this framework's tests.
    fn apply_path(&self, repo: &Path, layer: &str, file: &Path) -> Option<PathBuf>;

    /// The folder, relative to the repository, where `apply` keeps the record of what it wrote.
    fn apply_manifest_dir(&self, repo: &Path) -> PathBuf;

    /// The text `apply` writes for a session's test file: the file as it is, unless the
    /// runner's framework needs it changed.
    fn apply_content(&self, text: &str, _file: &ApplyFile) -> String {
        text.to_string()
    }

    /// `source`, one of this framework's test files, without the tests `names` (for `apply`, to
    /// leave out what the session's runs took out), and the names it did not find. A framework
    /// whose files cannot be cut yet finds none of them, so the file is refused whole.
    fn remove_tests(
        &self,
        source: &str,
        names: &std::collections::BTreeSet<String>,
    ) -> (String, Vec<String>) {
        (source.to_string(), names.iter().cloned().collect())
    }

    /// How many tests one of this framework's test files holds.
    fn count_tests(&self, _source: &str) -> usize {
        0
    }

    /// What the applied tests need beside them, written once they are in place; returns how to
    /// run them, when there is something to say.
    fn apply_support(&self, _repo: &Path) -> crate::error::Result<Option<String>> {
        Ok(None)
    }

    /// The folders under `workspace` a run of the project's own suite writes.
    fn suite_dirs(&self, _workspace: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Runs the project's own test suite once, with coverage, in a copy of the repository (the
    /// baseline the generated tests add to). None when this runner does not run a project's
    /// suite yet; an output with `env_problem` when the suite could not run.
    fn own_suite(&self, _spec: &SuiteSpec) -> Option<RunOutput> {
        None
    }
}

/// One run of the project's own tests.
pub struct SuiteSpec<'a> {
    /// The target repository (read-only: it is mirrored first).
    pub repo: &'a Path,
    /// The session folder; the run writes only under `results` and `workspace`.
    pub session: &'a Path,
    /// The project's test files, relative to the repository.
    pub tests: &'a [String],
    pub tools: &'a Toolchain,
    /// `<session>/results`, where the raw reports go as `<kind>-baseline.<ext>`.
    pub results: PathBuf,
    pub timeout: Duration,
    pub sandbox: Option<&'a Sandbox>,
}

impl<'a> SuiteSpec<'a> {
    /// The same run as a layer run named `baseline` with no generated tests (`no_tests` is a
    /// folder that holds none), for runners whose layer run also runs the project's tests.
    pub fn as_run(&self, no_tests: PathBuf) -> RunSpec<'a> {
        RunSpec {
            repo: self.repo,
            session: self.session,
            layer: BASELINE,
            test_dir: no_tests,
            tools: self.tools,
            results: self.results.clone(),
            run_no: BASELINE.into(),
            timeout: self.timeout,
            deselect: &[],
            sandbox: self.sandbox,
        }
    }
}

/// The layer name and run number of a run of the project's own suite (its files are
/// `results/<kind>-baseline.<ext>`).
pub const BASELINE: &str = "baseline";

/// One run of one layer's tests.
#[derive(Clone)]
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
