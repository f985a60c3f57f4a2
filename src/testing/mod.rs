//! Facts about the target project and its test tools, shared by the built-in roles: change scope,
//! framework detection, the runners of each framework family, and the parsers of the reports test
//! and coverage tools write.

pub mod classify;
pub mod cobertura;
pub mod code_check;
pub mod deps;
pub mod detect;
pub mod effects;
pub mod exec;
pub mod framework;
pub mod junit;
pub mod lcov;
pub mod load_error;
pub mod merge;
pub mod project_files;
pub mod report;
pub mod runner;
pub mod symbols;
pub mod toolchain;
