//! Python's toolchain on this machine: the project's interpreter (its .venv first), pytest or
//! unittest, and coverage.py. Every probe is a short sandboxed child with a timeout.

use std::path::Path;

use crate::testing::framework::Framework;
use crate::testing::toolchain::{probe, python_for, Toolchain, PROBE_TIMEOUT};

/// The toolchain that runs `framework` (pytest or unittest) for `repo`.
pub fn toolchain(repo: &Path, framework: Framework) -> Toolchain {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
