//! pytest and unittest projects: the layer's tests run with pytest (under coverage.py when it is
//! installed) against a mirror of the repository; `apply` puts them under `tests/team_testing`.

mod agent;
mod apply;
mod baseline;
pub mod code_check;
pub mod coveragepy;
pub mod edit;
pub mod gen;
pub mod isolation;
pub mod mutation;
mod run;
mod toolchain;
pub mod trace;

use std::path::{Path, PathBuf};

use crate::testing::report::{TestCase, TestStatus};
use crate::testing::runner::{ApplyFile, RunOutput, RunSpec, Runner, SuiteSpec};
use crate::testing::toolchain::Toolchain;

pub use run::node_id;

/// Python as the roles see it.
pub struct Python;

impl crate::family::Language for Python {
    fn name(&self) -> &'static str {
        "Python"
    }

    fn support(&self, capability: crate::family::Capability) -> crate::family::Support {
        let _ = capability;
        crate::family::Support::Built
    }

    fn toolchain(
        &self,
        repo: &std::path::Path,
        framework: crate::testing::framework::Framework,
    ) -> crate::testing::toolchain::Toolchain {
        toolchain::toolchain(repo, framework)
    }

    fn runner(
        &self,
        _framework: crate::testing::framework::Framework,
    ) -> Box<dyn crate::testing::runner::Runner> {
        Box::new(PythonRunner)
    }

    fn generator(&self) -> Option<&'static dyn crate::family::generator::Generator> {
        Some(&gen::PythonGenerator)
    }

    fn suite_analysis(&self) -> Option<&'static dyn crate::family::suites::SuiteAnalysis> {
        Some(&mutation::PythonSuites)
    }

    fn suite_trace(&self) -> Option<&'static dyn crate::family::suites::SuiteTrace> {
        Some(&mutation::PythonSuites)
    }

    fn conventions(
        &self,
        _framework: crate::testing::framework::Framework,
        _repo: &std::path::Path,
    ) -> crate::family::agent::Conventions {
        agent::conventions()
    }

    fn unsafe_calls(&self, source: &str) -> Vec<crate::family::agent::UnsafeCall> {
        agent::unsafe_calls(source)
    }

    fn check_code(
        &self,
        input: &crate::testing::code_check::CheckInput,
        changed: &[String],
        out: &mut crate::testing::code_check::CodeCheck,
    ) -> Result<(), crate::testing::code_check::CodeCheckError> {
        code_check::check(input, changed, out)
    }
}

pub struct PythonRunner;

impl Runner for PythonRunner {
    fn has_tests(&self, test_dir: &Path) -> bool {
        !test_files(test_dir).is_empty()
    }

    fn copy_dirs(&self, workspace: &Path, layer: &str) -> Vec<PathBuf> {
        vec![workspace.join(format!("python-{layer}"))]
    }

    fn workspace_dirs(&self, workspace: &Path, layer: &str) -> Vec<PathBuf> {
        vec![
            workspace.join(format!("python-{layer}")),
            workspace.join(format!("python-{layer}.tmp")),
        ]
    }

    /// The interpreter's own folders (a pyenv or venv outside the repository).
    fn read_roots(&self, tools: &Toolchain, repo: &Path) -> Vec<PathBuf> {
        crate::sandbox::python_roots(&tools.interpreter, repo)
    }

    fn run(&self, spec: &RunSpec) -> RunOutput {
        run::run(spec)
    }

    fn suite_dirs(&self, workspace: &Path) -> Vec<PathBuf> {
        vec![
            workspace.join(baseline::COPY),
            workspace.join(format!("{}.tmp", baseline::COPY)),
        ]
    }

    fn own_suite(&self, spec: &SuiteSpec) -> Option<RunOutput> {
        Some(baseline::run(spec))
    }

    /// coverage.py traces the run; the code it runs is the same.
    fn coverage_is_runtime_only(&self) -> bool {
        true
    }

    fn rerun(&self, spec: &RunSpec, case: &TestCase) -> Option<TestStatus> {
        run::rerun(spec, case)
    }

    /// pytest deselects by node id (`pkg/test_x.py::TestC::test_y`), not by the JUnit id.
    fn selector(&self, test_dir: &Path, case: &TestCase) -> String {
        node_id(test_dir, case)
    }

    fn remove_tests(
        &self,
        source: &str,
        names: &std::collections::BTreeSet<String>,
    ) -> (String, Vec<String>) {
        edit::remove_tests(source, names)
    }

    fn count_tests(&self, source: &str) -> usize {
        edit::test_names(source).len()
    }

    fn apply_path(&self, repo: &Path, layer: &str, file: &Path) -> Option<PathBuf> {
        let name = file.file_name()?.to_string_lossy();
        name.ends_with(".py").then(|| {
            Path::new(&apply::apply_dir(repo))
                .join(apply::package(layer))
                .join(&*name)
        })
    }

    fn apply_manifest_dir(&self, repo: &Path) -> PathBuf {
        PathBuf::from(apply::apply_dir(repo))
    }

    /// A test that found a code defect no GC round marked yet becomes a strict xfail with the
    /// evidence, as a GC round would mark it: the project's pytest passes, the finding stays.
    fn apply_content(&self, text: &str, file: &ApplyFile) -> String {
        edit::mark_xfail(text, file.defects)
    }

    fn apply_support(&self, repo: &Path) -> crate::error::Result<Option<String>> {
        let dir = apply::apply_dir(repo);
        apply::write_support(&repo.join(&dir), Path::new(&dir).components().count())?;
        Ok(Some(match apply::unreached(repo) {
            Some(why) => why,
            None => format!("run them with: pytest {dir} (the project's own pytest runs them too)"),
        }))
    }
}

/// Test files of a layer: test_*.py and *_test.py, at any depth, sorted.
pub fn test_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if !name.starts_with('.') && name != "__pycache__" {
                    stack.push(p);
                }
            } else if name.ends_with(".py")
                && (name.starts_with("test_") || name.ends_with("_test.py"))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
