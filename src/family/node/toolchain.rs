//! Node's toolchain on this machine: node, the project's own runner under node_modules/.bin
//! (jest, vitest, mocha) or `node --test`, and the coverage its setup offers.

use std::path::Path;

use crate::testing::framework::Framework;
use crate::testing::toolchain::{probe, Toolchain};

/// The toolchain that runs `framework`'s tests for `repo`.
pub fn toolchain(repo: &Path, framework: Framework) -> Toolchain {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_runner_says_how_to_install_it() {
        let dir = tempfile::tempdir().unwrap();
        let t = toolchain(dir.path(), Framework::Jest);
        assert!(!t.runner_available);
        assert!(t
            .install_hint
            .unwrap()
            .starts_with("npm install --save-dev jest"));
        assert_eq!(node_major("v20.20.2"), 20);
    }
}
