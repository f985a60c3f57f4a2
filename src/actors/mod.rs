//! The actix side: the coordinator (beat model), the generic worker, and the terminal progress view.

pub mod boot;
pub mod coordinator;
pub mod progress;
pub mod remote;
pub mod worker;

use std::path::PathBuf;

use crate::pipeline::config::TeamConfig;
use crate::roles::Registry;
use crate::session::SessionDir;

/// What every actor of a run shares, read-only.
pub struct RunEnv {
    pub session: SessionDir,
    pub repo: PathBuf,
    pub config: TeamConfig,
    pub registry: Registry,
    pub sandbox: crate::sandbox::SandboxSettings,
    pub agents: crate::agents::backends::AgentSettings,
    /// The cluster, with `--nats`: roles its live workers serve run there.
    pub remote: Option<std::sync::Arc<crate::remote::Link>>,
}
