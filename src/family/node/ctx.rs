//! One node run's places and clock: the package copy, its layer folder, our scratch folder, and
//! the children started there.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::workspace::{fresh_copy, install_tests};
use super::{missing_node, TESTS_DIR};
use crate::proc::Captured;
use crate::testing::exec::{Exec, ExecError};
use crate::testing::framework::Framework;
use crate::testing::runner::{RunOutput, RunSpec};

/// A custom node:test reporter. Node 20's JUnit has no file attribute, names every classname
/// `test` and flattens away the suites, so ids would collide across files and describe blocks.
/// This reporter rebuilds the very tree node's JUnit reporter builds (same events, same rules:
/// lib/internal/test_runner/reporter/junit.js), so its leaves line up one-to-one, in order, with
/// the `<testcase>` elements, and writes what JUnit leaves out: file, line, enclosing suites.
/// It also keeps each file's stderr, which holds the error when a file fails to import.
const ATTRIBUTION_REPORTER: &str = include_str!("attribution.mjs");

/// Our jest reporter: JUnit in the shape we read, without the project's jest-junit.
const JEST_REPORTER: &str = include_str!("jest_junit.cjs");
pub(super) const JEST_REPORTER_FILE: &str = "jest_junit.cjs";

/// One run's places and clock.
pub(super) struct Ctx<'a> {
    pub spec: RunSpec<'a>,
    /// node, jest, vitest or mocha.
    pub framework: Framework,
    /// The package copy (canonical: node reports real paths).
    pub copy: PathBuf,
    /// `<copy>/tt-tests/<layer>`.
    pub layer_dir: PathBuf,
    /// Files of ours that must not sit inside the copy (reporter, rerun reports, c8 temp).
    pub scratch: PathBuf,
    /// Every child runs in the package copy, within the run's budget.
    exec: Exec<'a>,
}

impl<'a> Ctx<'a> {
    /// Lays out the package copy. `fresh` (a run) recopies the package, since tests may have
    /// written into it; a rerun reuses it and only refreshes the layer's files.
    pub(super) fn prepare(
        spec: &RunSpec<'a>,
        framework: Framework,
        fresh: bool,
    ) -> io::Result<Ctx<'a>> {
        let deadline = Instant::now() + spec.timeout;
        // One copy per layer: layers may run at the same time and each run recopies.
        let base = spec.session.join("workspace");
        let copy = base.join(format!("node-{}", spec.layer));
        let scratch = base.join(format!("node-{}.tmp", spec.layer));
        if fresh || !copy.join("package.json").exists() {
            fresh_copy(spec.repo, &copy, spec.session)?;
        }
        std::fs::create_dir_all(&scratch)?;
        crate::util::write_nofollow(
            &scratch.join("attribution.mjs"),
            ATTRIBUTION_REPORTER.as_bytes(),
        )?;
        crate::util::write_nofollow(&scratch.join(JEST_REPORTER_FILE), JEST_REPORTER.as_bytes())?;
        let copy = copy.canonicalize()?;
        let layer_dir = copy.join(TESTS_DIR).join(spec.layer);
        install_tests(&spec.test_dir, &layer_dir)?;
        let exec = Exec {
            sandbox: spec.sandbox,
            cwd: copy.clone(),
            env: Vec::new(),
            deadline,
        };
        Ok(Ctx {
            spec: spec.clone(),
            framework,
            copy,
            layer_dir,
            scratch: scratch.canonicalize()?,
            exec,
        })
    }

    /// Moves the end of the run's time: each mutant's run has its own.
    pub(super) fn set_deadline(&mut self, deadline: Instant) {
        self.exec.deadline = deadline;
    }

    /// Runs `argv` in the package copy with whatever is left of the run's time.
    pub(super) fn exec(
        &self,
        argv: &[String],
        env: &[(String, String)],
    ) -> Result<Captured, ExecError> {
        self.exec.run_with(argv, env)
    }

    /// Records how a child that gave no output ends the run.
    pub(super) fn stopped(&self, stop: ExecError, out: &mut RunOutput) {
        match stop {
            ExecError::TimedOut { .. } => out.timed_out = true,
            ExecError::NotFound { program, .. } if program == self.node() => {
                out.env_problem = Some(missing_node(&program));
            }
            ExecError::NotFound { program, .. } => {
                out.env_problem = Some(format!("{program} not found"));
            }
            // Every other stop is the environment's: the message says which.
            other => out.env_problem = Some(other.to_string()),
        }
    }

    pub(super) fn node(&self) -> String {
        match self.spec.tools.interpreter.as_str() {
            "" => "node".into(),
            other => other.into(),
        }
    }

    /// `<results>/<kind>-<run_no>.<ext>` and its session-relative name.
    pub(super) fn result_file(&self, kind: &str, ext: &str) -> (PathBuf, String) {
        let name = format!("{kind}-{}.{ext}", self.spec.run_no);
        (self.spec.results.join(&name), format!("results/{name}"))
    }

    /// A generated file's path relative to the layer's test folder (one of the project's own
    /// tests: relative to the package).
    pub(super) fn rel(&self, path: &Path) -> String {
        path.strip_prefix(&self.layer_dir)
            .or_else(|_| path.strip_prefix(&self.copy))
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    /// A generated file's path relative to the copy (as the command line names it).
    pub(super) fn in_copy(&self, path: &Path) -> String {
        path.strip_prefix(&self.copy)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }
}
