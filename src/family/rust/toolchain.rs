//! Rust's toolchain on this machine: cargo (with cargo-nextest when installed) and the first
//! coverage tool found, cargo-llvm-cov or cargo-tarpaulin.

use std::path::Path;

use crate::testing::framework::Framework;
use crate::testing::toolchain::{probe, Toolchain};

/// The toolchain that runs a crate's tests.
pub fn toolchain(repo: &Path) -> Toolchain {
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
