//! Rust crates: the crate is mirrored into `<session>/workspace/cargo-<layer>`, the layer's
//! generated files become integration-test targets there (`tests/tt_<layer>_<name>.rs`), an L0
//! build gate leaves out the files that do not compile, and the tests run with nextest (JUnit),
//! `cargo llvm-cov`/`cargo tarpaulin` (LCOV) or plain `cargo test` (libtest output). The target
//! repository is only read; `apply` puts the files where the copy had them.

mod agent;
mod code_check;
mod ctx;
mod gate;
mod gen;
pub mod libtest;
mod mutants;
mod mutation;
mod run;
mod stage;
#[cfg(test)]
mod tests;
mod toolchain;
mod trace;

use std::path::{Path, PathBuf};

use crate::testing::report::{TestCase, TestStatus};
use crate::testing::runner::{RunOutput, RunSpec, Runner, SuiteSpec, BASELINE};

/// How the built-in generator will run here: with coverage guidance when the toolchain has
/// its LLVM tools.
pub fn generator_readiness() -> String {
    gen::readiness()
}

/// Prefix of every staged test target, so they never clash with the crate's own tests.
pub const STAGED_PREFIX: &str = "tt_";

/// Prefix of the built-in generator's files, which `apply` delivers under their own names.
pub const GENERATED_PREFIX: &str = "team_testing_";

/// Rust as the roles see it.
pub struct Rust;

impl crate::family::Language for Rust {
    fn name(&self) -> &'static str {
        "Rust"
    }

    fn support(&self, capability: crate::family::Capability) -> crate::family::Support {
        // The whole pipeline.
        let _ = capability;
        crate::family::Support::Built
    }

    fn generator(&self) -> Option<&'static dyn crate::family::generator::Generator> {
        Some(&gen::RustGenerator)
    }

    fn toolchain(
        &self,
        repo: &std::path::Path,
        _framework: crate::testing::framework::Framework,
    ) -> crate::testing::toolchain::Toolchain {
        toolchain::toolchain(repo)
    }

    fn suite_trace(&self) -> Option<&'static dyn crate::family::suites::SuiteTrace> {
        Some(&trace::RustTrace)
    }

    fn suite_analysis(&self) -> Option<&'static dyn crate::family::suites::SuiteAnalysis> {
        Some(&mutation::RustSuites)
    }

    fn runner(
        &self,
        _framework: crate::testing::framework::Framework,
    ) -> Box<dyn crate::testing::runner::Runner> {
        Box::new(CargoRunner)
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
        _changed: &[String],
        out: &mut crate::testing::code_check::CodeCheck,
    ) -> Result<(), crate::testing::code_check::CodeCheckError> {
        code_check::check(input, out);
        Ok(())
    }
}

pub struct CargoRunner;

impl Runner for CargoRunner {
    fn has_tests(&self, test_dir: &Path) -> bool {
        !stage::generated_files(test_dir, "").is_empty()
    }

    fn copy_dirs(&self, workspace: &Path, layer: &str) -> Vec<PathBuf> {
        vec![workspace.join(format!("cargo-{layer}"))]
    }

    fn workspace_dirs(&self, workspace: &Path, layer: &str) -> Vec<PathBuf> {
        vec![
            workspace.join(format!("cargo-{layer}")),
            workspace.join("cargo-target"),
        ]
    }

    fn run(&self, spec: &RunSpec) -> RunOutput {
        run::run(spec)
    }

    fn rerun(&self, spec: &RunSpec, case: &TestCase) -> Option<TestStatus> {
        run::rerun(spec, &case.id)
    }

    fn suite_dirs(&self, workspace: &Path) -> Vec<PathBuf> {
        self.workspace_dirs(workspace, BASELINE)
    }

    /// A layer run with no generated tests: `cargo test` (or nextest, or the coverage tool) in
    /// a copy of the crate runs the crate's own unit, integration and doc tests.
    fn own_suite(&self, spec: &SuiteSpec) -> Option<RunOutput> {
        let none = spec.session.join("workspace").join("cargo-baseline-none");
        Some(run::run(&spec.as_run(none)))
    }

    /// libtest's `--skip` matches substrings.
    fn deselect_matches_substrings(&self) -> bool {
        true
    }

    /// The built-in generator's files keep their names (`tests/team_testing_<module>.rs`);
    /// others get the layer's prefix, so they never clash with the crate's own tests.
    fn apply_path(&self, _repo: &Path, layer: &str, file: &Path) -> Option<PathBuf> {
        let name = file.file_name()?.to_string_lossy();
        let code = layer.split('-').next().unwrap_or(layer);
        if !name.ends_with(".rs") {
            return None;
        }
        Some(match name.starts_with(GENERATED_PREFIX) {
            true => Path::new("tests").join(name.as_ref()),
            false => Path::new("tests").join(format!("{STAGED_PREFIX}{code}_{name}")),
        })
    }

    fn apply_manifest_dir(&self, _repo: &Path) -> PathBuf {
        PathBuf::from("tests")
    }

    /// A crate with `autotests = false` builds only the test targets its manifest lists: the
    /// entries to add for the applied files, which `cargo test` runs then.
    fn apply_support(&self, repo: &Path) -> crate::error::Result<Option<String>> {
        let manifest = std::fs::read_to_string(repo.join("Cargo.toml")).unwrap_or_default();
        let mut applied: Vec<String> = std::fs::read_dir(repo.join("tests"))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| {
                        (n.starts_with(STAGED_PREFIX) || n.starts_with(GENERATED_PREFIX))
                            && n.ends_with(".rs")
                    })
                    .filter_map(|n| n.strip_suffix(".rs").map(String::from))
                    .filter(|t| !manifest.contains(&format!("tests/{t}.rs")))
                    .collect()
            })
            .unwrap_or_default();
        applied.sort();
        let targets: Vec<&str> = applied.iter().map(String::as_str).collect();
        Ok(Some(match stage::with_test_targets(&manifest, &targets) {
            Some(with) => format!(
                "Cargo.toml says autotests = false: add these [[test]] entries to it to run the applied tests with cargo test:{}",
                &with[manifest.trim_end().len()..].trim_end()
            ),
            None => "run them with: cargo test".into(),
        }))
    }
}

/// The integration-test target a generated file becomes: `("L1-unit", "area-test.rs")` ->
/// `tt_L1_area_test` (layer code only; `-` is not allowed in a crate name).
pub fn staged_name(layer: &str, file: &str) -> String {
    let code = layer.split('-').next().unwrap_or(layer);
    let stem = file.strip_suffix(".rs").unwrap_or(file);
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    };
    format!("{STAGED_PREFIX}{}_{}", clean(code), clean(stem))
}
