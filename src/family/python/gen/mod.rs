//! The built-in offline test generator for Python: a feedback-directed search (Randoop/Pynguin
//! style) done by `ttgen.py`, which ships inside the binary and runs in the target's own
//! interpreter against a mirror of the repository. This side prepares its input, runs it with a
//! timeout, and reads back the test files and contract findings it produced.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::isolation::{AUDIT, ISOLATION};
// Editing generated pytest files is the runner's (apply uses it too); the generator's rounds
// reach it here.
pub use super::edit::{carry_over, mark_xfail, remove_tests, test_names};
use crate::family::generator::{GenJob, Generator, ReplayJob, Revision};
use crate::gen::behaviour::ReplayResult;
use crate::gen::{run_helper, write_modules, GenError, GenResult, ModuleRef};
use crate::sandbox::Sandbox;
use crate::testing::framework::Framework;

pub mod modules;

/// The Python generator as the generator role uses it.
pub struct PythonGenerator;

impl Generator for PythonGenerator {
    fn module_words(&self) -> &'static str {
        "Python module"
    }

    /// The replay imports the module by name: `calc/ops.py` on the base is the same module as
    /// `calc/ops/__init__.py`, or `src/calc/ops.py`, on HEAD.
    fn on_base(&self, base: &Path, module: &ModuleRef) -> bool {
        let rel = module.module.replace('.', "/");
        [base.to_path_buf(), base.join("src")].iter().any(|root| {
            root.join(format!("{rel}.py")).is_file()
                || root.join(&rel).join("__init__.py").is_file()
        })
    }

    fn no_entry_points(&self) -> &'static str {
        "no entry points (no console script, __main__.py or `if __name__ == \"__main__\"` \
         module): L3 skipped"
    }

    fn modules(&self, repo: &Path, _: Option<Framework>, files: &[String]) -> Vec<ModuleRef> {
        modules::of(repo, files)
    }

    fn entry_points(&self, repo: &Path, scratch: &Path) -> Result<Vec<String>, GenError> {
        entry_points(&crate::testing::toolchain::python_for(repo), repo, scratch)
    }

    fn read_roots(&self, repo: &Path) -> Vec<PathBuf> {
        crate::sandbox::python_roots(&crate::testing::toolchain::python_for(repo), repo)
    }

    fn prepare_mirror(&self, _: &Path, _: &Path, _: &Path) -> std::io::Result<()> {
        Ok(())
    }

    fn generate(&self, job: &GenJob) -> Result<GenResult, GenError> {
        let python = crate::testing::toolchain::python_for(job.repo);
        let mut input = serde_json::to_value(job.req).map_err(GenError::Request)?;
        // A revision round takes the outcomes of calls an earlier round ran (tt_memo); L3 runs
        // entry points, not calls.
        if !job.req.layer.starts_with("L3") {
            input["memo_dir"] = calls_dir(job.session, &job.req.layer)
                .display()
                .to_string()
                .into();
        }
        let input = serde_json::to_vec(&input).map_err(GenError::Request)?;
        run_python_helper(
            &python,
            job.mirror,
            job.scratch,
            input,
            job.timeout,
            job.sandbox,
        )
    }

    /// Each call is a forked child and each module's memo a file of its own.
    fn searches_side_by_side(&self) -> bool {
        true
    }

    /// The outcomes kept between the session's rounds.
    fn write_dirs(&self, session: &Path, layer: &str) -> Vec<PathBuf> {
        vec![calls_dir(session, layer)]
    }

    /// A revision round adds to the tests it revises: every earlier test that is not broken,
    /// flaky or unsafe stays beside the new ones; defect tests always do, as strict xfails.
    fn revise(&self, r: &Revision) -> String {
        let mut keep: std::collections::BTreeSet<String> = r.defects.keys().cloned().collect();
        if r.revising {
            keep.extend(test_names(r.previous));
        }
        mark_xfail(&carry_over(r.previous, r.new, &keep, r.avoid), r.defects)
    }

    fn is_test_file(&self, name: &str) -> bool {
        name.ends_with(".py")
    }

    fn tests_noun(&self, _: Framework) -> String {
        "tests".into()
    }

    fn defects_kept_as(&self) -> &'static str {
        "xfail"
    }

    fn unloadable(&self) -> &'static str {
        "failed to import"
    }

    fn writes_scenario_checks(&self) -> bool {
        true
    }

    fn replay(&self, job: &ReplayJob) -> Option<Result<ReplayResult, GenError>> {
        let python = crate::testing::toolchain::python_for(job.repo);
        let input = match serde_json::to_vec(job.req) {
            Ok(input) => input,
            Err(e) => return Some(Err(GenError::Request(e))),
        };
        Some(run_python_helper(
            &python,
            job.mirror,
            job.scratch,
            input,
            job.timeout,
            job.sandbox,
        ))
    }

    fn quick_first_pass(&self) -> bool {
        true
    }

    /// What it imports, to a fixed point; the packages on the way are read (they run on
    /// import) but what they import is not followed: `pkg/__init__.py` importing every
    /// submodule would make each module depend on all the others.
    fn search_reads(
        &self,
        repo: &Path,
        file: &str,
        sources: &[String],
    ) -> std::collections::BTreeSet<String> {
        let mut packages = Vec::new();
        let mut read = crate::gen::cache::closure(file, |f| {
            let (on_the_way, imported) = modules::imports(repo, f, sources);
            packages.extend(on_the_way);
            imported
        });
        read.extend(packages);
        read
    }

    fn keep_only(&self, source: &str, keep: &std::collections::BTreeSet<String>) -> Option<String> {
        let others = test_names(source)
            .into_iter()
            .filter(|n| !keep.contains(n))
            .collect();
        let (left, _) = remove_tests(source, &others);
        (!test_names(&left).is_empty()).then_some(left)
    }
}

/// The generator helper, written side by side into the session when used: `ttgen.py`, the entry
/// point, the stages it drives (`tt_<stage>.py`, each importing only stages below it) and the
/// modules they share. A new helper file is one line here.
pub const HELPER_FILES: &[(&str, &str)] = &[
    // The entry point: reads the request, drives the stages, prints the result.
    ("ttgen.py", include_str!("ttgen.py")),
    // Discovery, the source's constants, patterns and grammar, executable lines, annotations.
    ("tt_analysis.py", include_str!("tt_analysis.py")),
    // Each call in a forked child: tracing, the result's description, timeouts, the sandbox.
    ("tt_execution.py", include_str!("tt_execution.py")),
    // Argument expressions and the uses of an item (calls, methods, properties, dunders).
    ("tt_inputs.py", include_str!("tt_inputs.py")),
    // The shortest call that still raises what a contract finding reports.
    ("tt_minimize.py", include_str!("tt_minimize.py")),
    // What an outcome lets a test assert (the oracle), and the findings.
    ("tt_assertions.py", include_str!("tt_assertions.py")),
    // The test file's text, checked to load as pytest sees it.
    ("tt_render.py", include_str!("tt_render.py")),
    // The phases of a module's search (doctests, constructors, l1, l2), and L3's runs.
    ("tt_search.py", include_str!("tt_search.py")),
    ("ttaudit.py", AUDIT),
    ("tt_isolation.py", ISOLATION),
    // Oracles beyond the observed value: well-typed input and suspicious results.
    ("tt_oracle.py", include_str!("tt_oracle.py")),
    // Docstring examples as doctest itself runs them (the helper's doctest phase).
    ("tt_doctest.py", include_str!("tt_doctest.py")),
    // Documents in a parser module's own grammar (the helper's inputs for parsers).
    ("tt_grammar.py", include_str!("tt_grammar.py")),
    // The search's calls run again in another version of the code (what a change altered).
    ("tt_replay.py", include_str!("tt_replay.py")),
    // The outcomes of calls an earlier round of the session ran, not run again.
    ("tt_memo.py", include_str!("tt_memo.py")),
];

/// Where a layer's searches keep the outcomes of their calls for the session's next rounds.
fn calls_dir(session: &Path, layer: &str) -> PathBuf {
    session.join("workspace").join(format!("gen-calls-{layer}"))
}
/// The generator helper and the modules it imports, into `scratch`.
fn write_helpers(scratch: &Path) -> Result<(), GenError> {
    write_modules(scratch, HELPER_FILES)
}

/// Runs `ttgen.py` with `python` in `mirror` on the request `input` (a search or a replay).
fn run_python_helper<T: serde::de::DeserializeOwned>(
    python: &str,
    mirror: &Path,
    scratch: &Path,
    input: Vec<u8>,
    timeout: Duration,
    sandbox: Option<&Sandbox>,
) -> Result<T, GenError> {
    write_helpers(scratch)?;
    let helper = scratch.join("ttgen.py");
    let mut paths = vec![mirror.display().to_string()];
    if mirror.join("src").is_dir() {
        paths.push(mirror.join("src").display().to_string());
    }
    let pythonpath = paths.join(":");
    // Fixed hashing and no bytecode: the same seed must give the same files, and the mirror stays clean.
    let env = [
        ("PYTHONPATH", pythonpath.as_str()),
        ("PYTHONHASHSEED", "0"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
    ];
    let helper_arg = helper.display().to_string();
    run_helper(
        sandbox,
        &[python, &helper_arg],
        mirror,
        &env,
        input,
        timeout,
    )
}

/// The entry points the L3 generator would run in `repo` (console scripts, `__main__.py`,
/// `if __name__ == "__main__"` modules), found by the helper's own rule. It reads files only: no
/// project code runs, so a plan can ask before anything is sandboxed.
pub fn entry_points(python: &str, repo: &Path, scratch: &Path) -> Result<Vec<String>, GenError> {
    write_helpers(scratch)?;
    let helper = scratch.join("ttgen.py").display().to_string();
    crate::gen::scan_entry_points(python, &helper, repo, scratch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::GenRequest;
    use std::collections::BTreeMap;

    /// A copy of a fixture project in a temp dir.
    fn fixture_copy(name: &str) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        crate::workspace::mirror(&src, tmp.path(), &BTreeMap::new()).unwrap();
        tmp
    }

    #[test]
    fn l3_runs_the_entry_points_and_asserts_exit_codes_and_output() {
        let repo = fixture_copy("python-contracts");
        let scratch = tempfile::tempdir().unwrap();
        let req = GenRequest {
            modules: vec![],
            layer: "L3-e2e".into(),
            seed: 3,
            budget_s: 30.0,
            call_timeout_s: 2.0,
            target_percent: 40.0,
            missing: BTreeMap::new(),
            avoid: vec![],
            changed: BTreeMap::new(),
        };
        let out: GenResult = run_python_helper(
            "python3",
            repo.path(),
            scratch.path(),
            serde_json::to_vec(&req).unwrap(),
            Duration::from_secs(120),
            None,
        )
        .unwrap();
        let m = &out.modules[0];
        assert!(!m.tests.is_empty(), "{out:?}");
        assert!(
            m.source
                .contains("[sys.executable, '-m', 'shapes'] + ['--help']"),
            "{}",
            m.source
        );
        assert!(
            m.source.contains("assert result.returncode == 0"),
            "{}",
            m.source
        );
        // The tests pass when run from the project.
        std::fs::write(repo.path().join("test_e2e_generated.py"), &m.source).unwrap();
        let run = std::process::Command::new("python3")
            .args([
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "test_e2e_generated.py",
            ])
            .current_dir(repo.path())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stdout)
        );
    }

    #[test]
    fn the_helper_guards_hold_on_every_interpreter_found() {
        // CPython 3.8-3.13 and PyPy, whichever are installed (CI installs what the package
        // registries offer); each runs the helper's guard tests (src/family/python/gen/tests).
        let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/family/python/gen/tests");
        let mut seen = Vec::new();
        let candidates = [
            "python3",
            "python3.8",
            "python3.9",
            "python3.10",
            "python3.11",
            "python3.12",
            "python3.13",
            "pypy3",
        ];
        for python in candidates {
            let Ok(probe) = std::process::Command::new(python)
                .args([
                    "-c",
                    "import sys, os; print(os.path.realpath(sys.executable))",
                ])
                .output()
            else {
                continue;
            };
            let exe = String::from_utf8_lossy(&probe.stdout).trim().to_string();
            if !probe.status.success() || seen.contains(&exe) {
                continue;
            }
            // An interpreter whose pytest does not start (Debian's pytest 7.2 seen by PyPy 3.9,
            // which lacks `exceptiongroup`) still runs the guards, which need no pytest: the
            // helper then compiles instead of collecting and reports an env_issue naming it, and
            // the suite's tests that run pytest skip that part with a note.
            if let Some(problem) = pytest_problem(python) {
                eprintln!("note: {python} ({exe}): pytest does not run here ({problem}); its guards run without it");
            }
            let run = std::process::Command::new(python)
                .args(["-m", "unittest", "discover", "-s"])
                .arg(&suite)
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .output()
                .unwrap();
            assert!(
                run.status.success(),
                "{python} ({exe}):\n{}",
                String::from_utf8_lossy(&run.stderr)
            );
            seen.push(exe);
        }
        assert!(!seen.is_empty(), "no Python interpreter found");
    }

    /// Why `python -m pytest` does not start, in its last line of output; None when it does.
    fn pytest_problem(python: &str) -> Option<String> {
        let out = std::process::Command::new(python)
            .args(["-m", "pytest", "--version"])
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .ok()?;
        if out.status.success() {
            return None;
        }
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        Some(
            text.lines()
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or("no output")
                .trim()
                .to_string(),
        )
    }
}
