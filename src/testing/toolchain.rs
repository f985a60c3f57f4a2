//! Which programs run a project's tests and measure its coverage on this machine: the interpreter
//! (a repo's .venv is preferred), the runner, and the first usable coverage tool. Every probe is a
//! short child process with a timeout.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::framework::{Family, Framework, UNKNOWN};

const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

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
fn probe(argv: &[&str], cwd: &Path) -> Option<String> {
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

/// The toolchain of `framework` on this machine; None (no framework detected) has none.
pub fn detect(repo: &Path, framework: Option<Framework>) -> Toolchain {
    let Some(framework) = framework else {
        return Toolchain {
            framework: UNKNOWN.into(),
            coverage_reason: format!("no known test framework ({UNKNOWN})"),
            ..Default::default()
        };
    };
    match framework.family() {
        Family::Python => python(repo, framework),
        Family::Cargo => cargo(repo),
        Family::Node => node(repo, framework),
        Family::Go => go(repo),
    }
}

fn python(repo: &Path, framework: Framework) -> Toolchain {
    let py = python_for(repo);
    let version = probe(
        &[&py, "-c", "import sys; print(sys.version.split()[0])"],
        repo,
    );
    let has = |module: &str| probe(&[&py, "-c", &format!("import {module}")], repo).is_some();
    let (runner, available, hint) = if framework == Framework::Pytest {
        let ok = version.is_some() && has("pytest");
        (
            vec![py.clone(), "-m".into(), "pytest".into()],
            ok,
            (!ok).then(|| pytest_install_hint(&py, repo)),
        )
    } else {
        (
            vec![py.clone(), "-m".into(), "unittest".into()],
            version.is_some(),
            None,
        )
    };
    let hint = if version.is_none() {
        Some("install Python 3 (apt-get install python3 python3-pip)".into())
    } else {
        hint
    };
    let (coverage_tool, coverage_reason) = if version.is_some() && has("coverage") {
        (
            Some("coverage.py".to_string()),
            format!("`import coverage` works in {py}"),
        )
    } else {
        (
            None,
            format!("coverage.py is not importable in {py} ({py} -m pip install coverage)"),
        )
    };
    Toolchain {
        framework: framework.to_string(),
        interpreter: py,
        interpreter_version: version,
        runner,
        runner_available: available,
        install_hint: hint,
        coverage_tool,
        coverage_reason,
        nextest: false,
    }
}

/// The command that makes `py -m pytest` run: the pip install of the module an installed pytest
/// fails to import (Debian's pytest 7.2 seen by PyPy 3.9 lacks `exceptiongroup`), else of pytest.
fn pytest_install_hint(py: &str, repo: &Path) -> String {
    let missing = crate::sandbox::run_probe(&[py, "-c", "import pytest"], repo, PROBE_TIMEOUT)
        .ok()
        .filter(|out| !out.success())
        .and_then(|out| missing_module(&out.stderr))
        .filter(|m| m != "pytest");
    format!(
        "{py} -m pip install {}",
        missing.as_deref().unwrap_or("pytest")
    )
}

/// The top-level module of the last `No module named 'x.y'` in a traceback: `x`.
fn missing_module(stderr: &str) -> Option<String> {
    let line = stderr
        .lines()
        .rev()
        .find(|l| l.contains("No module named"))?;
    let name = line.split("No module named").nth(1)?.trim();
    let name = name.trim_matches(|c| c == '\'' || c == '"');
    name.split('.')
        .next()
        .filter(|n| !n.is_empty())
        .map(str::to_string)
}

fn cargo(repo: &Path) -> Toolchain {
    let version = probe(&["cargo", "--version"], repo);
    let nextest = version.is_some() && probe(&["cargo", "nextest", "--version"], repo).is_some();
    let (coverage_tool, coverage_reason) = if probe(&["cargo", "llvm-cov", "--version"], repo)
        .is_some()
    {
        (
            Some("cargo-llvm-cov".to_string()),
            "cargo llvm-cov is installed".to_string(),
        )
    } else if probe(&["cargo", "tarpaulin", "--version"], repo).is_some() {
        (
            Some("cargo-tarpaulin".to_string()),
            "cargo tarpaulin is installed".to_string(),
        )
    } else {
        (
            None,
            "neither cargo-llvm-cov nor cargo-tarpaulin is installed (rustup component add llvm-tools-preview && cargo install cargo-llvm-cov --locked)".to_string(),
        )
    };
    let runner = if nextest {
        vec!["cargo".into(), "nextest".into(), "run".into()]
    } else {
        vec!["cargo".into(), "test".into()]
    };
    Toolchain {
        framework: Framework::Cargo.to_string(),
        interpreter: "cargo".into(),
        runner_available: version.is_some(),
        install_hint: version
            .is_none()
            .then(|| "install Rust with rustup (https://rustup.rs)".to_string()),
        interpreter_version: version,
        runner,
        coverage_tool,
        coverage_reason,
        nextest,
    }
}

fn node(repo: &Path, framework: Framework) -> Toolchain {
    let version = probe(&["node", "--version"], repo);
    let bin = |name: &str| repo.join("node_modules/.bin").join(name);
    let local = |name: &str| bin(name).is_file();
    let name = framework.as_str();
    let (runner, available, hint): (Vec<String>, bool, Option<String>) = match framework {
        Framework::Jest | Framework::Vitest | Framework::Mocha => (
            vec![bin(name).display().to_string()],
            version.is_some() && local(name),
            (!local(name)).then(|| {
                format!(
                    "npm install --save-dev {framework}  (in {})",
                    repo.display()
                )
            }),
        ),
        _ => (
            vec!["node".into(), "--test".into()],
            version.is_some(),
            None,
        ),
    };
    let modules = repo.join("node_modules");
    let (coverage_tool, coverage_reason) = match framework {
        Framework::Jest if local("jest") => (
            Some("jest (istanbul)".to_string()),
            "jest --coverage is built in".to_string(),
        ),
        Framework::Vitest if modules.join("@vitest/coverage-v8").is_dir() => (
            Some("vitest (@vitest/coverage-v8)".to_string()),
            "@vitest/coverage-v8 is installed".to_string(),
        ),
        _ if local("c8") => (Some("c8".to_string()), "node_modules/.bin/c8".to_string()),
        _ if local("nyc") => (Some("nyc".to_string()), "node_modules/.bin/nyc".to_string()),
        Framework::NodeTest if version.as_deref().is_some_and(|v| node_major(v) >= 20) => (
            Some("node --experimental-test-coverage".to_string()),
            "node >= 20 measures coverage itself".to_string(),
        ),
        _ => (
            None,
            "no coverage tool for this node project (npm install --save-dev c8)".to_string(),
        ),
    };
    Toolchain {
        framework: framework.to_string(),
        interpreter: "node".into(),
        install_hint: if version.is_none() {
            Some("install Node.js (apt-get install nodejs npm)".into())
        } else {
            hint
        },
        interpreter_version: version,
        runner,
        runner_available: available,
        coverage_tool,
        coverage_reason,
        nextest: false,
    }
}

fn node_major(version: &str) -> u32 {
    version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0)
}

fn go(repo: &Path) -> Toolchain {
    let version = probe(&["go", "version"], repo);
    Toolchain {
        framework: Framework::Go.to_string(),
        interpreter: "go".into(),
        runner: vec!["go".into(), "test".into()],
        runner_available: version.is_some(),
        install_hint: version
            .is_none()
            .then(|| "install Go (apt-get install golang-go)".to_string()),
        coverage_tool: version.is_some().then(|| "go -coverprofile".to_string()),
        coverage_reason: if version.is_some() {
            "go test measures coverage itself".into()
        } else {
            "go is not installed".into()
        },
        interpreter_version: version,
        nextest: false,
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
    fn a_missing_runner_says_how_to_install_it() {
        let dir = tempfile::tempdir().unwrap();
        let t = detect(dir.path(), Some(Framework::Jest));
        assert!(!t.runner_available);
        assert!(t
            .install_hint
            .unwrap()
            .starts_with("npm install --save-dev jest"));
        assert_eq!(node_major("v20.20.2"), 20);
    }

    #[test]
    fn a_pytest_that_does_not_start_names_what_it_lacks() {
        let pypy = "Traceback (most recent call last):\n  File \"/usr/lib/python3/dist-packages/_pytest/_code/code.py\", line 60, in <module>\n    from exceptiongroup import BaseExceptionGroup\nModuleNotFoundError: No module named 'exceptiongroup'\n";
        assert_eq!(missing_module(pypy).as_deref(), Some("exceptiongroup"));
        assert_eq!(
            missing_module("ModuleNotFoundError: No module named 'a.b'").as_deref(),
            Some("a")
        );
        assert_eq!(missing_module("SyntaxError: invalid syntax"), None);
    }

    #[test]
    fn unknown_framework_has_no_runner() {
        let t = detect(Path::new("."), None);
        assert!(!t.runner_available && t.coverage_tool.is_none());
        assert_eq!(
            (t.framework.as_str(), t.known_framework()),
            ("unknown", None)
        );
    }
}
