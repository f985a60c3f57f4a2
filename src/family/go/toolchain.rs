//! Go's toolchain on this machine: `go test`, which measures coverage itself.

use std::path::Path;

use crate::testing::framework::Framework;
use crate::testing::toolchain::{probe, Toolchain};

/// The toolchain that runs a module's tests.
pub fn toolchain(repo: &Path) -> Toolchain {
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
