//! The use cases: what the commands do, apart from parsing and printing. `cli` calls these;
//! they call the actors, the session and the pipeline, never `cli`.

pub mod apply_target;
pub mod complete;
pub mod create;
pub mod drive;
pub mod exit_policy;
pub mod extend;
pub mod fixes;
pub mod mutate;
pub mod open;
pub mod plan;
pub mod resume;
pub mod roles;
pub mod scenarios;
pub mod summary;
pub mod team;
