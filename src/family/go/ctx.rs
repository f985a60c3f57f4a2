//! One go run's places and clock: the module's copy, the shared build cache, and the children
//! started there.

use std::path::PathBuf;
use std::time::Instant;

use super::stage::Staged;
use crate::proc::Captured;
use crate::testing::exec::{Exec, ExecError};
use crate::testing::runner::{RunOutput, RunSpec};

pub(super) struct Ctx<'a> {
    pub spec: &'a RunSpec<'a>,
    /// The program that is go (`spec.tools.interpreter`, default `go`).
    pub go: String,
    /// `<session>/workspace/go-<layer>`: the mirrored module, where every command runs.
    pub copy: PathBuf,
    exec: Exec<'a>,
}

/// The folder of the build cache every layer of a session shares.
pub(super) const CACHE_DIR: &str = "go-cache";

impl<'a> Ctx<'a> {
    pub fn new(spec: &'a RunSpec<'a>, deadline: Instant) -> Self {
        // Absolute: children run in the copy, and GOCACHE must not depend on their cwd.
        let session = std::path::absolute(spec.session).unwrap_or_else(|_| spec.session.into());
        let workspace = session.join("workspace");
        let go = match spec.tools.interpreter.as_str() {
            "" => "go".to_string(),
            g => g.to_string(),
        };
        // One copy per layer: the comprehensive pipeline runs two layers at the same time.
        let copy = workspace.join(format!("go-{}", spec.layer));
        let cache = workspace.join(CACHE_DIR);
        let exec = Exec {
            sandbox: spec.sandbox,
            cwd: copy.clone(),
            env: vec![
                ("GOCACHE".into(), cache.to_string_lossy().into_owned()),
                // The copy may sit below a go.work of the user's; it is a module of its own.
                ("GOWORK".into(), "off".into()),
                // A go.mod asking for a newer Go must not make go download a toolchain.
                ("GOTOOLCHAIN".into(), "local".into()),
                // Modules go downloads stay deletable: archiving a session removes the workspace.
                ("GOFLAGS".into(), with_flag("GOFLAGS", "-modcacherw")),
            ],
            deadline,
        };
        Ctx {
            spec,
            go,
            copy,
            exec,
        }
    }

    pub fn argv(&self, args: &[&str]) -> Vec<String> {
        let mut argv = vec![self.go.clone()];
        argv.extend(args.iter().map(|a| a.to_string()));
        argv
    }

    /// Runs `argv` in the copy with what is left of the time budget.
    pub fn exec(&self, argv: &[String]) -> Result<Captured, ExecError> {
        self.exec.run(argv)
    }

    /// `results/<kind>-<run_no>.<ext>`: the absolute path and the session-relative name.
    pub fn result_file(&self, kind: &str, ext: &str) -> (PathBuf, String) {
        let name = format!("{kind}-{}.{ext}", self.spec.run_no);
        (self.spec.results.join(&name), format!("results/{name}"))
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

    /// Paths as go printed them, made readable: the copy's absolute paths module-relative, and
    /// staged files under their names in the layer's folder.
    pub fn readable(&self, text: &str, staged: &[Staged]) -> String {
        let mut text = text.to_string();
        let real = std::fs::canonicalize(&self.copy).unwrap_or_else(|_| self.copy.clone());
        for root in [&real, &self.copy] {
            text = text.replace(&format!("{}/", root.display()), "");
        }
        for s in staged {
            let rel = s.rel().to_string_lossy().into_owned();
            text = text
                .replace(&format!("./{rel}"), &s.original)
                .replace(&rel, &s.original)
                .replace(&s.target, &s.original);
        }
        text
    }
}

/// The user's value of `var` with `flag` added.
fn with_flag(var: &str, flag: &str) -> String {
    let current = std::env::var(var).unwrap_or_default();
    format!("{current} {flag}").trim().to_string()
}

/// `.` for the module root, `./<dir>` for a package below it.
pub(super) fn package_arg(dir: &str) -> String {
    if dir.is_empty() {
        ".".into()
    } else {
        format!("./{dir}")
    }
}

/// Records how a child that gave no output ends the run.
pub(super) fn stopped(stop: ExecError, go: &str, out: &mut RunOutput) {
    match stop {
        ExecError::TimedOut { .. } => {
            out.timed_out = true;
            out.output_tail = stop.to_string();
        }
        ExecError::NotFound { .. } => {
            out.env_problem = Some(format!(
                "{go} not found: install Go (apt-get install golang-go)"
            ));
        }
        // Every other stop is the environment's: the message says which.
        other => out.env_problem = Some(other.to_string()),
    }
}
