//! Workers on other hosts through NATS JetStream. Opt-in (`--nats URL`); without it nothing here
//! runs and the team is the one process it always was.
//!
//! The shape: the coordinator stays the one writer of the session. A role's task goes onto a
//! JetStream work queue (`tt.tasks.<role>`); a `team-testing worker` on any host pulls it, builds
//! the repository from a git bundle and the session's inputs from content-addressed objects, runs
//! the same role code in the same sandbox, and publishes its outcome and the files it wrote onto
//! the session's event subject. It acknowledges the task only once that outcome is durable in the
//! stream; a worker that dies is redelivered after the ack wait. Workers heartbeat into a
//! key-value bucket (`team-testing workers`).
//!
//! - `settings`: where the server is and how to log in (never stored in the session).
//! - `names`: streams, subjects, buckets.
//! - `wire`: what travels (task envelopes, worker events, worker heartbeats).
//! - `objects`: the object store, content-addressed, with a worker-side cache.
//! - `snapshot`: the repository as a git bundle of the base commit plus the uncommitted changes.
//! - `files`: the session's inputs as a manifest, and the files a task wrote back.
//! - `link`: the coordinator's side (dispatch, the event router, shards).
//! - `worker`: the worker process.
//! - `registry`: the live-workers bucket.
//! - `shard`: splitting a layer run by test file and merging what the shards found.

pub mod files;
pub mod link;
pub mod names;
pub mod objects;
pub mod registry;
mod routes;
pub mod settings;
pub mod shard;
pub mod snapshot;
pub mod streams;
pub mod wire;
pub mod worker;

pub use link::Link;
pub use settings::ClusterSettings;

use std::path::PathBuf;

/// Why a cluster step failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("cannot read the NATS credentials file {path}: {source}")]
    Credentials {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot connect to NATS at {url}: {problem}")]
    Connect { url: String, problem: String },
    #[error("NATS {step}: {problem}")]
    Nats { step: String, problem: String },
    #[error("git {step}: {problem}")]
    Git { step: String, problem: String },
    #[error("{path}: {problem}")]
    File { path: PathBuf, problem: String },
    #[error("refused: {0}")]
    Refused(String),
}

impl RemoteError {
    pub fn nats(step: impl Into<String>, problem: impl std::fmt::Display) -> Self {
        RemoteError::Nats {
            step: step.into(),
            problem: problem.to_string(),
        }
    }

    pub fn file(path: impl Into<PathBuf>, problem: impl std::fmt::Display) -> Self {
        RemoteError::File {
            path: path.into(),
            problem: problem.to_string(),
        }
    }
}

pub type Result<T> = std::result::Result<T, RemoteError>;
