//! Pipelines: the team config, the change scope of the target, and mode selection.

pub mod config;
pub mod controls;
pub mod extend;
pub mod scope;
pub mod select;
