//! How every runner starts a child that runs the target's code: an argument vector (no shell), in
//! the run's sandbox, with whatever is left of the run's time budget, its output captured. How it
//! failed comes back typed, so no caller reads "timed out" out of a message.

use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::proc::{run_sandboxed, Captured, ProcError};
use crate::sandbox::Sandbox;

/// Why a child gave no output to read.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The run's budget ran out: nothing was left to start it with, or it was killed at the end.
    #[error("{command} timed out{}", after_s.map_or_else(|| ": no time left of the run's budget".to_string(), |s| format!(" after {s}s")))]
    TimedOut {
        command: String,
        after_s: Option<u64>,
    },
    /// The program could not be started: not installed, or not on PATH.
    #[error("{text}")]
    NotFound { program: String, text: String },
    /// Anything else from the child: the sandbox could not be prepared, it could not be waited for.
    #[error(transparent)]
    Proc(ProcError),
    /// The repository could not be copied where the runner builds and runs it.
    #[error("cannot copy {} to {}: {cause}", from.display(), to.display())]
    Copy {
        from: PathBuf,
        to: PathBuf,
        cause: io::Error,
    },
    #[error("cannot stage the tests: {0}")]
    Stage(io::Error),
    /// A runner's own config file (nextest's profile) could not be written.
    #[error("cannot write {}: {cause}", path.display())]
    WriteConfig { path: PathBuf, cause: io::Error },
    /// The crate fails to build for reasons other than the staged test files.
    #[error("the crate does not build: {errors}")]
    CrateDoesNotBuild { errors: String },
    #[error("the crate still does not build after leaving out every broken test file")]
    StillDoesNotBuild,
    #[error("package {package} does not build: {errors}")]
    PackageDoesNotBuild { package: String, errors: String },
    /// pytest's collect-only run left no readable report.
    #[error("pytest could not collect the tests (exit {code:?}): {report}\n{output_tail}")]
    NotCollected {
        code: Option<i32>,
        report: crate::testing::report::ReportParseError,
        output_tail: String,
    },
}

/// Where and how long a run's children run.
pub struct Exec<'a> {
    pub sandbox: Option<&'a Sandbox>,
    /// The working folder of every child.
    pub cwd: PathBuf,
    /// Variables every child of the run gets (a command's own come after them).
    pub env: Vec<(String, String)>,
    /// When the run's budget ends.
    pub deadline: Instant,
}

impl Exec<'_> {
    /// What is left of the run's budget.
    pub fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    pub fn run(&self, argv: &[String]) -> Result<Captured, ExecError> {
        self.run_with(argv, &[])
    }

    /// Runs `argv` with `env` added to the run's variables.
    pub fn run_with(
        &self,
        argv: &[String],
        env: &[(String, String)],
    ) -> Result<Captured, ExecError> {
        let left = self.left();
        if left.is_zero() {
            return Err(ExecError::TimedOut {
                command: argv.join(" "),
                after_s: None,
            });
        }
        let args: Vec<&str> = argv.iter().map(String::as_str).collect();
        let vars: Vec<(&str, &str)> = self
            .env
            .iter()
            .chain(env)
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        run_sandboxed(self.sandbox, &args, &self.cwd, &vars, None, left).map_err(|e| match e {
            ProcError::TimedOut { command, seconds } => ExecError::TimedOut {
                command,
                after_s: Some(seconds),
            },
            // Any io step that finds nothing (the program, or a path the sandbox needs): not found.
            ProcError::Sandbox { ref cause, .. }
            | ProcError::Start { ref cause, .. }
            | ProcError::Wait { ref cause, .. }
                if cause.kind() == io::ErrorKind::NotFound =>
            {
                ExecError::NotFound {
                    program: argv.first().cloned().unwrap_or_default(),
                    text: e.to_string(),
                }
            }
            other => ExecError::Proc(other),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(budget: Duration) -> Exec<'static> {
        Exec {
            sandbox: None,
            cwd: PathBuf::from("."),
            env: vec![("TT_EXEC_TEST".into(), "run".into())],
            deadline: Instant::now() + budget,
        }
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn failures_are_typed() {
        let e = exec(Duration::from_millis(300));
        let err = e.run(&argv(&["sleep", "30"])).unwrap_err();
        assert!(
            matches!(
                err,
                ExecError::TimedOut {
                    after_s: Some(_),
                    ..
                }
            ),
            "{err}"
        );
        let err = exec(Duration::ZERO).run(&argv(&["true"])).unwrap_err();
        assert!(
            matches!(err, ExecError::TimedOut { after_s: None, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("timed out"));
        let err = exec(Duration::from_secs(10))
            .run(&argv(&["tt-no-such-program"]))
            .unwrap_err();
        assert!(
            matches!(&err, ExecError::NotFound { program, .. } if program == "tt-no-such-program"),
            "{err}"
        );
    }

    #[test]
    fn a_command_adds_its_variables_to_the_runs() {
        let e = exec(Duration::from_secs(10));
        let extra = [("TT_EXEC_MORE".to_string(), "more".to_string())];
        let out = e
            .run_with(
                &argv(&["sh", "-c", "echo $TT_EXEC_TEST $TT_EXEC_MORE"]),
                &extra,
            )
            .unwrap();
        assert_eq!(out.stdout.trim(), "run more");
    }
}
