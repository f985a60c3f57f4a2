//! Mutation analysis of one pytest suite: `ttmut.py` (shipped inside the binary) runs the suite
//! once under coverage.py with a context per test, then each mutant of the given modules against
//! the passing tests that reach its line, in the sandbox, within a time budget. What it returns is
//! raw: which tests kill which mutant and what each test reaches; scores and minimization are the
//! caller's (team::mutation).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::sandbox::Sandbox;
use crate::testing::exec::{Exec, ExecError};
use crate::util::tail_lines;

/// The helper program.
pub const HELPER: &str = include_str!("ttmut.py");

/// One suite to analyse.
pub struct SuiteRun<'a> {
    /// `baseline` or the layer: names the request and result files.
    pub name: String,
    pub python: &'a str,
    /// Our folder for the helper, its request and its result.
    pub scratch: &'a Path,
    /// Where pytest runs (its rootdir: test ids are relative to it).
    pub cwd: PathBuf,
    pub pythonpath: Vec<PathBuf>,
    /// pytest options (no files).
    pub options: Vec<String>,
    /// The suite's test files, relative to `cwd`.
    pub files: Vec<String>,
    /// Absolute paths of the module files to mutate (in a mirror of the repository).
    pub modules: &'a [PathBuf],
    pub seed: u64,
    pub budget: Duration,
    pub per_mutant: Duration,
    pub max_mutants: usize,
    pub sandbox: Option<&'a Sandbox>,
    /// How long the traced run of the whole suite may take (None: the helper's own rule, a
    /// share of the budget).
    pub trace_timeout: Option<Duration>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SuiteMutations {
    pub mutants: Vec<Mutant>,
    /// pytest node id -> what it did.
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

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct TestReach {
    /// `passed`, `failed` or `skipped`.
    pub outcome: String,
    /// Absolute module path -> lines and arcs the test runs.
    pub reached: BTreeMap<String, Reach>,
    /// A failing test's report (its traceback's end), as pytest wrote it.
    pub detail: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
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

pub fn analyse(run: &SuiteRun) -> Result<SuiteMutations, MutationError> {
    let write = |path: PathBuf, bytes: &[u8]| {
        crate::util::write_nofollow(&path, bytes).map_err(|cause| MutationError::Write {
            path: path.clone(),
            cause,
        })
    };
    let helper = run.scratch.join("ttmut.py");
    write(helper.clone(), HELPER.as_bytes())?;
    let request = run.scratch.join(format!("request-{}.json", run.name));
    let result = run.scratch.join(format!("result-{}.json", run.name));
    let _ = std::fs::remove_file(&result);
    let body = serde_json::json!({
        "modules": run.modules,
        "options": run.options,
        "files": run.files,
        "seed": run.seed,
        "budget_s": run.budget.as_secs_f64(),
        "timeout_s": run.per_mutant.as_secs_f64(),
        "max_mutants": run.max_mutants,
        "trace_timeout_s": run.trace_timeout.map(|t| t.as_secs_f64()),
    });
    write(request.clone(), body.to_string().as_bytes())?;
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let pythonpath: Vec<String> = run.pythonpath.iter().map(|p| s(p)).collect();
    let exec = Exec {
        sandbox: run.sandbox,
        cwd: run.cwd.clone(),
        env: vec![
            ("PYTHONPATH".into(), pythonpath.join(":")),
            ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
        ],
        // The helper stops itself at its budget; this is the backstop.
        deadline: Instant::now()
            + run.budget
            + run.per_mutant * 2
            + run.trace_timeout.unwrap_or_default()
            + Duration::from_secs(30),
    };
    let argv = vec![run.python.to_string(), s(&helper), s(&request), s(&result)];
    let ran = exec.run(&argv).map_err(|cause| MutationError::Exec {
        suite: run.name.clone(),
        cause,
    })?;
    let text = std::fs::read_to_string(&result).map_err(|e| MutationError::NoResult {
        suite: run.name.clone(),
        problem: format!(
            "{e}; exit {:?}: {}",
            ran.status,
            tail_lines(&format!("{}{}", ran.stdout, ran.stderr), 8)
        ),
    })?;
    serde_json::from_str(&text).map_err(|e| MutationError::NoResult {
        suite: run.name.clone(),
        problem: e.to_string(),
    })
}
