//! Python's suite analysis: `ttmut.py` (shipped inside the binary) runs a pytest suite once under
//! coverage.py with a context per test, then each mutant of the given modules against the passing
//! tests that reach its line, in the sandbox, within a time budget. What it returns is raw: which
//! tests kill which mutant and what each test reaches; scores, minimization and localisation are
//! the roles'.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::family::suites::{MutationError, SuiteAnalysis, SuiteJob, SuiteMutations};
use crate::testing::exec::Exec;
use crate::testing::toolchain::Toolchain;
use crate::util::tail_lines;

/// The helper program.
pub const HELPER: &str = include_str!("ttmut.py");

/// Python's suite analysis (pytest and coverage.py).
pub struct PythonSuites;

impl SuiteAnalysis for PythonSuites {
    fn is_one_case_of_many(&self, name: &str) -> bool {
        name.contains('[')
    }

    fn unready(&self, tools: &Toolchain) -> Option<String> {
        (tools.coverage_tool.as_deref() != Some("coverage.py"))
            .then(|| format!("coverage.py is needed: {}", tools.coverage_reason))
    }

    fn sandbox_reads(&self, tools: &Toolchain, repo: &Path) -> Vec<PathBuf> {
        crate::sandbox::python_roots(&tools.interpreter, repo)
    }

    fn analyse(&self, job: &SuiteJob) -> Result<SuiteMutations, MutationError> {
        analyse(job)
    }

    fn test_files(&self, dir: &Path) -> Vec<PathBuf> {
        super::test_files(dir)
    }

    fn is_own_language(&self, path: &str) -> bool {
        path.ends_with(".py")
    }

    fn is_test_file(&self, path: &str) -> bool {
        path.ends_with(".py") && crate::testing::detect::test_pattern(path).is_some()
    }

    fn is_code(&self, path: &str) -> bool {
        path.ends_with(".py")
            && crate::testing::detect::test_pattern(path).is_none()
            && !path.ends_with("conftest.py")
    }

    fn is_entry_point(&self, path: &str) -> bool {
        path == "__main__.py" || path.ends_with("/__main__.py")
    }

    fn remove_tests(&self, source: &str, names: &BTreeSet<String>) -> Option<String> {
        let (left, _) = super::edit::remove_tests(source, names);
        let tests_left = left.lines().any(|l| {
            l.starts_with("def test")
                || l.starts_with("async def test")
                || l.starts_with("class Test")
        });
        tests_left.then_some(left)
    }

    fn prune_assertions(
        &self,
        source: &str,
        noticed: &[(&str, &BTreeSet<u32>)],
    ) -> Option<(String, Vec<String>)> {
        super::edit::prune_assertions(source, noticed)
    }
}

/// Writes one of our files (never through a link a run may have left).
fn write_file(path: PathBuf, bytes: &[u8]) -> Result<(), MutationError> {
    crate::util::write_nofollow(&path, bytes).map_err(|cause| MutationError::Write { path, cause })
}

/// pytest's options for the suite: no cache in the project, ids relative to where it runs, its
/// temporary folders in ours, and no configuration for a generated layer.
fn pytest_options(run: &SuiteJob) -> Result<Vec<String>, MutationError> {
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let mut options = vec!["-p".to_string(), "no:cacheprovider".to_string()];
    if !run.own_config {
        let empty_ini = run.scratch.join("pytest.ini");
        write_file(empty_ini.clone(), b"[pytest]\n")?;
        options.extend(["-c".to_string(), s(&empty_ini)]);
    }
    options.push(format!("--rootdir={}", s(&run.cwd)));
    options.push(format!(
        "--basetemp={}",
        s(&run.scratch.join(format!("pytest-{}", run.name)))
    ));
    Ok(options)
}

/// The helper's run of one suite, with pytest's options for it.
fn analyse(run: &SuiteJob) -> Result<SuiteMutations, MutationError> {
    let helper = run.scratch.join("ttmut.py");
    write_file(helper.clone(), HELPER.as_bytes())?;
    let request = run.scratch.join(format!("request-{}.json", run.name));
    let result = run.scratch.join(format!("result-{}.json", run.name));
    let _ = std::fs::remove_file(&result);
    let options = pytest_options(run)?;
    let body = serde_json::json!({
        "modules": run.modules,
        "options": options,
        "files": run.files,
        "seed": run.seed,
        "budget_s": run.budget.as_secs_f64(),
        "timeout_s": run.per_mutant.as_secs_f64(),
        "max_mutants": run.max_mutants,
        "trace_timeout_s": run.trace_timeout.map(|t| t.as_secs_f64()),
    });
    write_file(request.clone(), body.to_string().as_bytes())?;
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let mut pythonpath = vec![s(run.mirror)];
    if run.mirror.join("src").is_dir() {
        pythonpath.push(s(&run.mirror.join("src")));
    }
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
    let argv = vec![
        run.tools.interpreter.clone(),
        s(&helper),
        s(&request),
        s(&result),
    ];
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
