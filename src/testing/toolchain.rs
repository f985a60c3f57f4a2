//! Which programs run a project's tests and measure its coverage on this machine: the interpreter
//! (a repo's .venv is preferred), the runner, and the first usable coverage tool. Each family
//! probes its own (`family::toolchain`); what they share is here. Every probe is a short child
//! process with a timeout.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::framework::{Framework, UNKNOWN};

/// How long a probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Toolchain {
    /// The framework's recorded name (`unknown` when none was detected).
    pub framework: String,
    /// The interpreter or build tool (`/repo/.venv/bin/python`, `python3`, `node`, `cargo`, `go`).
    pub interpreter: String,
    pub interpreter_version: Option<String>,
    /// argv prefix that runs the tests, e.g. `python3 -m pytest`.
    pub runner: Vec<String>,
    /// False when the runner is missing; `install_hint` says the exact command that adds it.
    pub runner_available: bool,
    pub install_hint: Option<String>,
    /// `coverage.py`, `cargo-llvm-cov`, `cargo-tarpaulin`, `c8`, `nyc`, `jest (istanbul)`,
    /// `vitest (@vitest/coverage-v8)`, `node --experimental-test-coverage`, `go -coverprofile`.
    pub coverage_tool: Option<String>,
    pub coverage_reason: String,
    /// cargo only: cargo-nextest is installed.
    pub nextest: bool,
}

impl Toolchain {
    /// The framework this toolchain runs, when it is one team-testing knows.
    pub fn known_framework(&self) -> Option<Framework> {
        Framework::parse(&self.framework)
    }
}

/// The first line a probe printed. It runs sandboxed: the interpreter may be the repository's
/// own `.venv/bin/python`, whose startup runs the project's `.pth` files.
pub fn probe(argv: &[&str], cwd: &Path) -> Option<String> {
    let out = crate::sandbox::run_probe(argv, cwd, PROBE_TIMEOUT).ok()?;
    out.success().then(|| {
        let text = if out.stdout.trim().is_empty() {
            out.stderr
        } else {
            out.stdout
        };
        text.lines().next().unwrap_or("").trim().to_string()
    })
}

/// The project's Python: `<repo>/.venv/bin/python` when present, else `python3`.
pub fn python_for(repo: &Path) -> String {
    let venv = repo.join(".venv/bin/python");
    if venv.is_file() {
        venv.display().to_string()
    } else {
        "python3".into()
    }
}

/// The toolchain of a project whose framework is not known: nothing runs its tests.
pub fn unknown() -> Toolchain {
    Toolchain {
        framework: UNKNOWN.into(),
        coverage_reason: format!("no known test framework ({UNKNOWN})"),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_toolchain_prefers_the_repo_venv() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(python_for(dir.path()), "python3");
        std::fs::create_dir_all(dir.path().join(".venv/bin")).unwrap();
        std::fs::write(dir.path().join(".venv/bin/python"), "").unwrap();
        assert!(python_for(dir.path()).ends_with(".venv/bin/python"));
    }

    #[test]
    fn unknown_framework_has_no_runner() {
        let t = unknown();
        assert!(!t.runner_available && t.coverage_tool.is_none());
        assert_eq!(
            (t.framework.as_str(), t.known_framework()),
            ("unknown", None)
        );
    }
}
