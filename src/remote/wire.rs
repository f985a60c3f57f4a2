//! What travels through NATS, as JSON: the task a worker pulls, the events it sends back, and the
//! heartbeat it keeps in the workers bucket. Every path named here is relative to the repository
//! or the session folder, and checked before use on either side.

use serde::{Deserialize, Serialize};

use crate::agents::backends::AgentSettings;
use crate::pipeline::config::TeamConfig;
use crate::sandbox::SandboxSettings;
use crate::tasks::{Outcome, Task};

/// One unit of remote work: a task of a built-in role, or one shard of a layer run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskEnvelope {
    pub session_id: String,
    /// The task as the coordinator claimed it (its attempt counted).
    pub task: Task,
    /// The scheduler's worker instance (`generator`); the events go out under it.
    pub instance: String,
    pub role: String,
    /// The role's instructions, the system prompt of its agents.
    pub role_body: String,
    pub timeout_s: u64,
    pub config: TeamConfig,
    pub sandbox: SandboxSettings,
    pub agents: AgentSettings,
    pub repo: RepoRef,
    /// The object holding the manifest of the session's files as of dispatch.
    pub inputs: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardJob>,
}

impl TaskEnvelope {
    /// The key of this piece of work: one attempt of a task, or one shard of one run of it.
    pub fn work_id(&self) -> String {
        match &self.shard {
            Some(s) => format!(
                "{}.{}.{}.run{}.shard{}of{}",
                self.session_id, self.task.id, self.task.attempts, s.run_no, s.index, s.count
            ),
            None => format!(
                "{}.{}.{}",
                self.session_id, self.task.id, self.task.attempts
            ),
        }
    }
}

/// The repository at the base commit plus the uncommitted changes, as one commit in a bundle.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RepoRef {
    /// The snapshot commit (content-addressed: the same tree gives the same commit).
    pub commit: String,
    /// The bundle's object name.
    pub object: String,
    /// The project's folder inside the repository ("" for the top).
    #[serde(default)]
    pub subdir: String,
}

/// One shard of an executor layer run: these test files of the layer, nothing else.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardJob {
    pub index: usize,
    pub count: usize,
    pub layer: String,
    pub run_no: String,
    /// Test files relative to `tests/<layer>` (a layer run's shard).
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub deselect: Vec<String>,
    /// A generator search's shard: its modules and budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate: Option<crate::gen::GenRequest>,
}

/// What a worker sends back on the session's event subject.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkerEvent {
    pub session_id: String,
    pub task_id: String,
    pub attempt: u32,
    /// The work id of the envelope it is about.
    pub work: String,
    pub worker: WorkerId,
    pub kind: EventKind,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
    /// The worker took the task: the claim with its identity.
    Claimed,
    Progress {
        phase: String,
        #[serde(default)]
        pct: Option<f64>,
        #[serde(default)]
        detail: Option<String>,
    },
    /// The task's outcome and the files it wrote, durable in the stream before the task is
    /// acknowledged.
    Finished(Box<Finished>),
    /// One shard's run.
    ShardDone(Box<ShardDone>),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finished {
    pub outcome: Outcome,
    pub files: ReturnedFiles,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardDone {
    pub index: usize,
    /// Why the shard could not do its work (then `output` is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The object holding the shard's `RunOutput` or `GenResult` (JSON): a big suite's cases
    /// outgrow a message.
    pub output: String,
    pub files: ReturnedFiles,
}

/// Files a task wrote or removed in its copy of the session, and the roots its records may name
/// (the coordinator puts its own in their place).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ReturnedFiles {
    /// Session-relative path -> object name.
    pub written: std::collections::BTreeMap<String, String>,
    pub removed: Vec<String>,
    pub session_root: String,
    pub repo_root: String,
}

/// Who did the work: a worker process on a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerId {
    /// Unique per process (`host-a-1234-x7`).
    pub id: String,
    /// The name it was started with (`--name`, else the host name).
    pub name: String,
    pub host: String,
}

/// A live worker's entry in the workers bucket, refreshed every few seconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkerInfo {
    pub id: String,
    pub name: String,
    pub host: String,
    pub roles: Vec<String>,
    pub slots: usize,
    pub tasks: Vec<RunningTask>,
    /// When it last heartbeated (RFC 3339).
    pub seen: String,
    pub started: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunningTask {
    pub session: String,
    pub task_id: String,
    pub attempt: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<usize>,
}
