//! Go modules: the module is mirrored into `<session>/workspace/go-<layer>`, each of the layer's
//! `*_test.go` files goes into the folder of the package its `package` clause names (as
//! `tt_<layer>_<name>`), an L0 gate (`go test -run '^$'`) leaves out the files that do not
//! compile, and the tests run with `go test -json -coverprofile`: one result per test from the
//! events, line coverage from the profile. The target repository is only read; `apply` puts the
//! files where the copy had them.

mod agent;
pub mod code_check;
mod ctx;
mod events;
mod gate;
pub mod gen;
mod mutation;
mod package;
mod profile;
mod run;
mod stage;
#[cfg(test)]
mod tests;
mod toolchain;
mod trace;

use std::path::{Path, PathBuf};

use crate::testing::report::{TestCase, TestStatus};
use crate::testing::runner::{RunOutput, RunSpec, Runner, SuiteSpec, BASELINE};

/// Go as the roles see it.
pub struct Go;

impl crate::family::Language for Go {
    fn name(&self) -> &'static str {
        "Go"
    }

    fn support(&self, capability: crate::family::Capability) -> crate::family::Support {
        // The whole pipeline.
        let _ = capability;
        crate::family::Support::Built
    }

    fn generator(&self) -> Option<&'static dyn crate::family::generator::Generator> {
        Some(&gen::GoGenerator)
    }

    fn suite_analysis(&self) -> Option<&'static dyn crate::family::suites::SuiteAnalysis> {
        Some(&mutation::GoSuites)
    }

    fn toolchain(
        &self,
        repo: &std::path::Path,
        _framework: crate::testing::framework::Framework,
    ) -> crate::testing::toolchain::Toolchain {
        toolchain::toolchain(repo)
    }

    fn runner(
        &self,
        _framework: crate::testing::framework::Framework,
    ) -> Box<dyn crate::testing::runner::Runner> {
        Box::new(GoRunner)
    }

    fn suite_trace(&self) -> Option<&'static dyn crate::family::suites::SuiteTrace> {
        Some(&trace::GoTrace)
    }

    fn conventions(
        &self,
        _framework: crate::testing::framework::Framework,
        repo: &std::path::Path,
    ) -> crate::family::agent::Conventions {
        agent::conventions(repo)
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
        code_check::check(input, changed, out);
        Ok(())
    }
}

/// What `doctor` says of the built-in generator.
pub fn generator_readiness() -> String {
    gen::readiness()
}

pub struct GoRunner;

impl Runner for GoRunner {
    fn has_tests(&self, test_dir: &Path) -> bool {
        !stage::test_files(test_dir).is_empty()
    }

    fn copy_dirs(&self, workspace: &Path, layer: &str) -> Vec<PathBuf> {
        vec![workspace.join(format!("go-{layer}"))]
    }

    fn workspace_dirs(&self, workspace: &Path, layer: &str) -> Vec<PathBuf> {
        vec![
            workspace.join(format!("go-{layer}")),
            workspace.join(ctx::CACHE_DIR),
        ]
    }

    fn run(&self, spec: &RunSpec) -> RunOutput {
        run::run(spec)
    }

    fn rerun(&self, spec: &RunSpec, case: &TestCase) -> Option<TestStatus> {
        run::rerun(spec, case)
    }

    fn suite_dirs(&self, workspace: &Path) -> Vec<PathBuf> {
        self.workspace_dirs(workspace, BASELINE)
    }

    fn own_suite(&self, spec: &SuiteSpec) -> Option<RunOutput> {
        let none = spec.session.join("workspace").join("go-baseline-none");
        let run = spec.as_run(none);
        if !spec.tools.runner_available {
            return Some(run::run(&run)); // says go is missing
        }
        Some(run::baseline(&run, spec.tests))
    }

    /// Next to the code of its package, as in the copy.
    fn apply_path(&self, repo: &Path, layer: &str, file: &Path) -> Option<PathBuf> {
        let name = file.file_name()?.to_string_lossy();
        if !stage::is_test_file(&name) {
            return None;
        }
        let source = std::fs::read_to_string(file).ok()?;
        let module = package::module_path(repo);
        let dir = package::package_dir(&package::packages(repo), module.as_deref(), &source);
        Some(Path::new(&dir).join(stage::staged_name(layer, &name)))
    }

    /// The go tool ignores `testdata`: the record of what apply wrote stays out of builds.
    fn apply_manifest_dir(&self, _repo: &Path) -> PathBuf {
        PathBuf::from("testdata")
    }
}
