//! Facts about the target project and its test tools, shared by the built-in roles: change scope,
//! framework detection, the runners of each framework family, and the parsers of the reports test
//! and coverage tools write.

pub mod cargo;
pub mod classify;
pub mod cobertura;
pub mod code_check;
pub mod coveragepy;
pub mod deps;
pub mod detect;
pub mod effects;
pub mod exec;
pub mod framework;
pub mod go;
pub mod junit;
pub mod lcov;
pub mod libtest;
pub mod load_error;
pub mod merge;
pub mod node;
pub mod project_files;
pub mod python;
pub mod report;
pub mod runner;
pub mod symbols;
pub mod toolchain;

use framework::{Family, Framework};
use runner::Runner;

/// The runner that runs `framework`'s tests: one per family, each in its own folder. Here, above
/// both, so the framework list and the runners do not import each other.
pub fn runner_for(framework: Framework) -> Box<dyn Runner> {
    match framework.family() {
        Family::Python => Box::new(python::PythonRunner),
        Family::Cargo => Box::new(cargo::CargoRunner),
        Family::Node => Box::new(node::NodeRunner::new(framework)),
        Family::Go => Box::new(go::GoRunner),
    }
}
