//! The work of the built-in roles, as plain Rust: each takes a [`RoleContext`] and returns an
//! [`Outcome`]. No actors here, so every role can be unit-tested directly.

mod agent_role;
pub mod analyst;
pub mod error;
pub mod executor;
pub mod fixer;
pub mod generator;
mod merge;
pub mod project;
mod search;
mod shared;
pub mod strategist;
pub(crate) mod util;

use std::path::Path;
use std::time::Instant;

use crate::pipeline::config::TeamConfig;
use crate::session::framework::session_framework;
use crate::session::SessionDir;
use crate::tasks::{Outcome, Task};
use project::session_project;

pub use executor::{reserve_run, run_shard, shard_files};
pub use merge::merge_critic_run;
pub use search::search_here;
/// Keeps the session's generated tests that passed for later sessions (`gen::cache`).
pub use shared::gen_cache::promote as promote_generated;
/// For the plan check on `resume`: the files the generator's search writes in a layer's folder,
/// and the file a scenario's own tests are written to.
pub(crate) use shared::python_modules::search_files;
pub(crate) use shared::scenario_tests::own_file as scenario_own_file;

/// Runs a layer's test files as shards on other hosts (the cluster's executors) and hands back
/// each shard's run; the executor merges them and judges the whole.
pub trait ShardRunner: Sync {
    /// How many shards a layer run is split into.
    fn count(&self) -> usize;
    /// Runs each of `req.groups` as one shard; the outputs in group order, or why the shards
    /// could not run.
    fn run(
        &self,
        req: ShardRequest<'_>,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<crate::testing::runner::RunOutput>, ShardError>;
    /// Runs each of `req.groups` as one generator search; the results in group order.
    fn generate(
        &self,
        req: GenShardRequest<'_>,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<crate::gen::GenResult>, ShardError>;
}

/// Why shards could not run (the role then runs the work here).
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("no live {role} worker on {url}")]
    NoWorker { role: String, url: String },
    /// One shard's run could not start on its host (its environment problem).
    #[error("a shard could not run: {0}")]
    ShardNotRun(String),
    /// The cluster failed (its own error, from the layer that runs the shards).
    #[error(transparent)]
    Cluster(Box<dyn std::error::Error + Send + Sync>),
}

/// One generator search to split: a request per shard (each with its modules and budget).
pub struct GenShardRequest<'a> {
    pub task: &'a Task,
    pub layer: &'a str,
    pub groups: Vec<crate::gen::GenRequest>,
    pub timeout: std::time::Duration,
}

/// One layer run to split: its test files in groups (relative to the layer's folder).
pub struct ShardRequest<'a> {
    pub task: &'a Task,
    pub layer: &'a str,
    pub run_no: &'a str,
    pub deselect: &'a [String],
    pub groups: Vec<Vec<String>>,
    pub timeout: std::time::Duration,
}

/// Reports a progress milestone: phase, percent done, detail.
pub type ProgressFn<'a> = &'a (dyn Fn(&str, Option<f64>, Option<String>) + Sync);

pub struct RoleContext<'a> {
    pub session: &'a SessionDir,
    /// The target repository (canonical path). Never modified.
    pub repo: &'a Path,
    pub task: &'a Task,
    /// The worker instance running the task (`executor-1`).
    pub instance: &'a str,
    pub config: &'a TeamConfig,
    /// Child processes must finish before this instant.
    pub deadline: Instant,
    pub progress: ProgressFn<'a>,
    /// How children that run the target's code are sandboxed.
    pub sandbox: &'a crate::sandbox::SandboxSettings,
    /// The agent backend chains of the session (the built-in roles hand creative work to them).
    pub agents: &'a crate::agents::backends::AgentSettings,
    /// The role's instructions (the body of roles/<role>/role.md), the system prompt of an agent.
    pub role_body: &'a str,
    /// A dry run (`run --dry-run`): plan only, no project code runs (the strategist skips the
    /// baseline run of the project's own suite; the real run does it).
    pub plan_only: bool,
    /// Where an executor layer run may be split into shards (a cluster run with `--shards`).
    pub shards: Option<&'a dyn ShardRunner>,
}

/// Runs the built-in implementation of `role`. Unknown roles fail with a clear reason.
pub fn run_builtin(role: &str, ctx: &RoleContext) -> Outcome {
    match role {
        "strategist" => strategist::run(ctx),
        "generator" => generator::run(ctx, &session_framework(ctx.session, ctx.repo)),
        "executor" => {
            // The role is handed what it works with: the project's facts and its repairer.
            let project = session_project(ctx.session, ctx.repo);
            let repairer = shared::agent_gen::AgentRepair::of(ctx);
            executor::run(ctx, &project, repairer.as_ref().map(|r| r as _))
        }
        "analyst" => analyst::run(ctx),
        "fixer" => fixer::run(ctx),
        // Does nothing and succeeds: what the runtime alone costs (benches/).
        "noop" => Outcome::completed("no-op"),
        // A dynamic role with agent backends: its role file is the agent's instructions.
        _ => agent_role::run(ctx),
    }
}

/// The tests of a layer whose last run found code defects, with the evidence, by test name.
pub fn defect_reasons(
    session: &std::path::Path,
    layer: &str,
) -> std::collections::BTreeMap<String, String> {
    shared::feedback::feedback(session, layer).defects
}
