//! One cargo run's places and clock: the crate's copy, the shared target folder, and the children
//! started there.

use std::path::PathBuf;
use std::time::Instant;

use crate::proc::Captured;
use crate::testing::exec::{Exec, ExecError};
use crate::testing::runner::{RunOutput, RunSpec};

pub(super) struct Ctx<'a> {
    pub spec: &'a RunSpec<'a>,
    /// The program that is cargo (`spec.tools.interpreter`, default `cargo`).
    pub cargo: String,
    /// `<session>/workspace/cargo-<layer>`: the mirrored crate, where every command runs.
    pub copy: PathBuf,
    /// `<session>/workspace/cargo-target`: the build, and every other file the tools write
    /// (the copy is read-only to them in the sandbox).
    pub target_dir: PathBuf,
    exec: Exec<'a>,
}

impl<'a> Ctx<'a> {
    pub fn new(spec: &'a RunSpec<'a>, deadline: Instant) -> Self {
        // Absolute: children run in the copy, and CARGO_TARGET_DIR must not depend on their cwd.
        let session = std::path::absolute(spec.session).unwrap_or_else(|_| spec.session.into());
        let cargo = match spec.tools.interpreter.as_str() {
            "" => "cargo".to_string(),
            c => c.to_string(),
        };
        // One copy per layer: the comprehensive pipeline runs two layers at the same time.
        let copy = session
            .join("workspace")
            .join(format!("cargo-{}", spec.layer));
        // `<session>/workspace/cargo-target`, shared by every run of the session.
        let target_dir = session.join("workspace/cargo-target");
        let exec = Exec {
            sandbox: spec.sandbox,
            cwd: copy.clone(),
            // No colour codes in what the parsers read, whatever the user's cargo config says.
            env: vec![
                (
                    "CARGO_TARGET_DIR".into(),
                    target_dir.to_string_lossy().into_owned(),
                ),
                ("CARGO_TERM_COLOR".into(), "never".into()),
            ],
            deadline,
        };
        Ctx {
            spec,
            cargo,
            copy,
            target_dir,
            exec,
        }
    }

    pub fn argv(&self, args: &[&str]) -> Vec<String> {
        let mut argv = vec![self.cargo.clone()];
        argv.extend(args.iter().map(|a| a.to_string()));
        argv
    }

    /// Runs `argv` in the copy with what is left of the time budget.
    pub fn exec(&self, argv: &[String]) -> Result<Captured, ExecError> {
        self.exec.run(argv)
    }

    /// `results/<kind>-<run_no>.<ext>`: the absolute path and the session-relative name.
    pub fn result_file(&self, kind: &str, ext: &str) -> (PathBuf, String) {
        let path = self
            .spec
            .results
            .join(format!("{kind}-{}.{ext}", self.spec.run_no));
        let rel = path
            .strip_prefix(self.spec.session)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        (path, rel)
    }

    /// Keeps `text` as a raw report (rewritten when kept again).
    pub fn keep(&self, kind: &str, ext: &str, text: &str, out: &mut RunOutput) {
        let (path, rel) = self.result_file(kind, ext);
        if crate::util::write_nofollow(&path, text.as_bytes()).is_ok()
            && !out.reports.contains(&rel)
        {
            out.reports.push(rel);
        }
    }
}

/// Records how a stopped child ends the run.
pub(super) fn stopped(stop: ExecError, cargo: &str, out: &mut RunOutput) {
    match stop {
        ExecError::TimedOut { .. } => {
            out.timed_out = true;
            out.output_tail = stop.to_string();
        }
        ExecError::NotFound { .. } => {
            out.env_problem = Some(format!("{cargo} not found: install Rust with rustup"));
        }
        // Every other stop is the environment's: the message says which.
        other => out.env_problem = Some(other.to_string()),
    }
}
