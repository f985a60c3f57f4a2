//! A family's suite analysis, the capability that mutation analysis, minimization, fault
//! localisation and the test-fix cycle stand on: a suite runs once with a trace per test (its
//! outcome, its failure report, the lines and arcs it reaches), then, within a budget, against
//! mutants of the modules in scope, each with the tests that reach its line. What comes back is
//! raw and language-neutral; scores, minimization and localisation are the roles'.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::sandbox::Sandbox;
use crate::testing::exec::ExecError;
use crate::testing::toolchain::Toolchain;

/// One suite to analyse.
pub struct SuiteJob<'a> {
    /// `baseline`, a layer, or a fix iteration: names the request and result files.
    pub name: String,
    pub tools: &'a Toolchain,
    /// Our folder for the helper, its request and its result (writable in the sandbox).
    pub scratch: &'a Path,
    /// The copy of the project whose code the suite runs (a mirror, never the user's tree).
    pub mirror: &'a Path,
    /// The user's repository, read only: where its installed dependencies are (node_modules),
    /// which a mirror does not copy.
    pub repo: &'a Path,
    /// The session, read only: what was fetched for the project before any sandbox.
    pub session: &'a Path,
    /// Where the suite runs, its root: test ids are relative to it.
    pub cwd: PathBuf,
    /// The project's own tests run with the project's test configuration; a generated layer
    /// runs with none, so that no setting of the project changes what it checks.
    pub own_config: bool,
    /// The suite's test files (or test ids), relative to `cwd`.
    pub files: Vec<String>,
    /// Absolute paths of the module files to trace and mutate (in `mirror`).
    pub modules: &'a [PathBuf],
    pub seed: u64,
    /// Time for the mutants, all told (zero: the trace alone).
    pub budget: Duration,
    pub per_mutant: Duration,
    pub max_mutants: usize,
    /// Mutants that run at the same time, each in its own copy (1: one at a time).
    pub workers: usize,
    pub sandbox: Option<&'a Sandbox>,
    /// How long the traced run of the whole suite may take (None: a share of the budget).
    pub trace_timeout: Option<Duration>,
}

/// One traced run of some of a project's tests in a mirror: each test's outcome, its failure
/// report and what of the project's code it runs.
pub struct TraceJob<'a> {
    /// Names the run's files in `scratch` (`baseline`, `iteration-3`).
    pub name: String,
    pub tools: &'a Toolchain,
    /// Our folder for requests, reports and profiles (writable in the sandbox).
    pub scratch: &'a Path,
    /// The copy of the project the tests run in (never the user's tree; writable in the
    /// sandbox, so builds and caches may land there).
    pub mirror: &'a Path,
    /// The user's repository, read only: where its installed dependencies are (node_modules),
    /// which a mirror does not copy.
    pub repo: &'a Path,
    /// The session, read only: what was fetched for the project before any sandbox (a
    /// package's node_modules when the repository has none).
    pub session: &'a Path,
    /// What to run: test ids as an earlier trace named them, or the project's test files
    /// (mirror-relative).
    pub selection: Vec<String>,
    pub sandbox: Option<&'a Sandbox>,
    /// The whole run's time.
    pub timeout: Duration,
}

/// What a family can tell of its tests one by one, which fault localisation, progressive
/// testing and the test-fix cycle stand on. `Language::suite_trace` hands it out; the capability
/// table says why not for a family without one.
pub trait SuiteTrace: Sync {
    /// Why tracing cannot run with `tools` (a coverage tool missing, with what to install).
    fn unready(&self, tools: &Toolchain) -> Option<String>;
    /// What a traced run's sandbox must read beyond the repository and the session.
    fn sandbox_reads(&self, tools: &Toolchain, repo: &Path) -> Vec<PathBuf>;
    /// Runs the job's selection: every test it ran, by id, with its outcome, failure report and
    /// reach (absolute paths in the mirror); `problems` says what could not be traced.
    fn trace(&self, job: &TraceJob) -> Result<SuiteMutations, MutationError>;
    /// A repository-relative path of one of the project's own test files.
    fn is_test_file(&self, path: &str) -> bool;
    /// A repository-relative path of the project's code (not a test, not test configuration).
    fn is_code(&self, path: &str) -> bool;
    /// The test files under a layer's folder of the session (what the fixer carries over).
    fn test_files(&self, dir: &Path) -> Vec<PathBuf>;
    /// The repository-relative file that holds test `id`.
    fn file_of(&self, id: &str) -> String {
        id.split("::").next().unwrap_or(id).to_string()
    }
    /// The `file:line` frames of a failure report in the project's code, innermost last.
    fn frames(&self, detail: &str) -> Vec<String>;
    /// Progressive testing: the ids of `reach` (each test's reached files, repository-relative)
    /// a change to `modified` can affect; None when it may affect any (run everything).
    /// `source` reads a repository-relative file as it is now.
    fn affected(
        &self,
        reach: &BTreeMap<String, BTreeSet<String>>,
        modified: &[String],
        source: &dyn Fn(&str) -> Option<String>,
    ) -> Option<Vec<String>> {
        let _ = source;
        affected_by_reach(self, reach, modified)
    }
}

/// The tests that ran a modified file last time, or whose own file changed; None when a
/// changed file is neither (a new module, a file with only declarations, a shared test helper,
/// configuration): what it affects cannot be told, so everything runs.
pub fn affected_by_reach<T: SuiteTrace + ?Sized>(
    trace: &T,
    reach: &BTreeMap<String, BTreeSet<String>>,
    modified: &[String],
) -> Option<Vec<String>> {
    let mut out: BTreeSet<String> = BTreeSet::new();
    for file in modified {
        let mut any = false;
        for (id, files) in reach {
            if files.contains(file) || trace.file_of(id) == *file {
                out.insert(id.clone());
                any = true;
            }
        }
        if !any {
            return None;
        }
    }
    Some(out.into_iter().collect())
}

/// The `file:line` frames `frame` finds in a failure report (capture 1 the file, 2 the line) in
/// files `is_code` accepts, each once, innermost last, for a language whose stacks list the
/// innermost frame first (Go's panics, JavaScript's stacks).
pub fn frames_innermost_first(
    frame: &regex::Regex,
    detail: &str,
    is_code: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in frame.captures_iter(detail) {
        let file = c[1].trim_start_matches("./").to_string();
        let at = format!("{file}:{}", &c[2]);
        if is_code(&file) && !out.contains(&at) {
            out.push(at);
        }
    }
    out.reverse();
    out
}

/// The project's own test files as `analysis` runs them (repository-relative): its test files
/// in the family's language, and the sources the family runs as tests too (a crate's roots
/// hold its unit tests).
pub fn own_test_files(
    analysis: &dyn SuiteAnalysis,
    project: &crate::testing::project_files::ProjectFiles,
) -> Vec<String> {
    project
        .tests
        .iter()
        .filter(|t| analysis.is_own_language(t))
        .chain(project.sources.iter().filter(|s| analysis.is_test_file(s)))
        .cloned()
        .collect()
}

/// A family that can analyse suites under mutation. `Language::suite_analysis` hands it out;
/// the capability table says why not for a family without one.
pub trait SuiteAnalysis: Sync {
    /// Why the analysis cannot run with `tools` (a coverage tool missing, with what to install).
    fn unready(&self, tools: &Toolchain) -> Option<String>;
    /// What a suite's sandbox must read beyond the repository and the session.
    fn sandbox_reads(&self, tools: &Toolchain, repo: &Path) -> Vec<PathBuf>;
    /// Runs the suite once traced, then against mutants within the budget.
    fn analyse(&self, job: &SuiteJob) -> Result<SuiteMutations, MutationError>;
    /// Every suite of a session against the same mutants: one result per job, in order. A
    /// family that builds its code runs them together, one build per mutant for all of them.
    fn analyse_all(&self, jobs: &[SuiteJob]) -> Vec<Result<SuiteMutations, MutationError>> {
        jobs.iter().map(|job| self.analyse(job)).collect()
    }
    /// The test files under a layer's folder.
    fn test_files(&self, dir: &Path) -> Vec<PathBuf>;
    /// A file in this family's language (a test the project's own run reported is kept for the
    /// analysis when it is one).
    fn is_own_language(&self, path: &str) -> bool;
    /// A repository-relative path of one of the project's own test files.
    fn is_test_file(&self, path: &str) -> bool;
    /// A repository-relative path of the project's code (not a test, not test configuration).
    fn is_code(&self, path: &str) -> bool;
    /// A program's entry point (`__main__.py`): run as a program, not imported, so mutants of it
    /// are left out.
    fn is_entry_point(&self, path: &str) -> bool;
    /// `source` without the tests `names` (top-level tests); None when no test is left in it.
    fn remove_tests(&self, source: &str, names: &BTreeSet<String>) -> Option<String>;
    /// A test name that is one case of a function with several (pytest's `test_add[1-2]`): the
    /// function stays when the case is dropped.
    fn is_one_case_of_many(&self, _name: &str) -> bool {
        false
    }
    /// Pynguin's assertion minimization on one file: for each (test, the lines of its file
    /// where it noticed a mutant), the assertions of a test with several that noticed none
    /// while another did go. The new source and each dropped `test:line`; None when none go.
    fn prune_assertions(
        &self,
        source: &str,
        noticed: &[(&str, &BTreeSet<u32>)],
    ) -> Option<(String, Vec<String>)>;
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SuiteMutations {
    pub mutants: Vec<Mutant>,
    /// Test id (pytest node id, …) -> what it did.
    pub tests: BTreeMap<String, TestReach>,
    pub exhausted: bool,
    pub problems: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Mutant {
    /// Absolute path of the mutated file.
    pub file: String,
    pub line: u32,
    pub operator: String,
    /// Which mutation point of the file: with `file`, the mutant's identity across suites.
    pub index: usize,
    /// `killed`, `survived`, `no_coverage` or `error`.
    pub status: String,
    pub killed_by: Vec<String>,
    /// Killing test -> the line of its own file where it failed (the assertion that noticed).
    pub killed_at: BTreeMap<String, u32>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TestReach {
    /// `passed`, `failed` or `skipped`.
    pub outcome: String,
    /// Absolute module path -> lines and arcs the test runs.
    pub reached: BTreeMap<String, Reach>,
    /// A failing test's report (its traceback's end), as the framework wrote it.
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Reach {
    pub lines: Vec<u32>,
    pub arcs: Vec<(i64, i64)>,
}

#[derive(Debug, thiserror::Error)]
pub enum MutationError {
    #[error("cannot write {path}: {cause}")]
    Write {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("mutation analysis of the {suite} suite: {cause}")]
    Exec { suite: String, cause: ExecError },
    #[error("mutation analysis of the {suite} suite gave no result: {problem}")]
    NoResult { suite: String, problem: String },
}
