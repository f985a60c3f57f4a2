//! The one error type for what users cause: bad specs, bad role files, a missing repository, a locked
//! session. Every variant carries its context (file, task id) and maps to a documented exit code.

use std::path::PathBuf;

/// Exit code when the pipeline failed (a task failed after its retry).
pub const EXIT_PIPELINE_FAILED: i32 = 1;
/// Exit code for bad input or environment.
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit code when the coordinator paused the session for the user (a role it may not add).
pub const EXIT_PAUSED: i32 = 3;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {problem}")]
    BadFile { path: PathBuf, problem: String },

    #[error("{path}: task {task}: {problem}")]
    BadTask {
        path: PathBuf,
        task: String,
        problem: String,
    },

    #[error("{path}: role {role}: {problem}")]
    BadRole {
        path: PathBuf,
        role: String,
        problem: String,
    },

    #[error("repository {path} does not exist or is not a directory")]
    MissingRepo { path: PathBuf },

    #[error("session {session} is locked by pid {pid} (lock file {lock})")]
    Locked {
        session: String,
        pid: String,
        lock: PathBuf,
    },

    #[error("{0}")]
    Session(String),

    #[error("unknown pipeline '{0}' (expected auto, targeted, standard or comprehensive)")]
    UnknownPipeline(String),

    // The io error is part of the message, not a `source`: printed as a chain it would repeat.
    #[error("{what}: {cause}")]
    Io { what: String, cause: std::io::Error },

    #[error("{0}")]
    Environment(String),

    /// A child process ran past its time budget and was killed (with its process group).
    #[error("{command} timed out after {seconds}s")]
    TimedOut { command: String, seconds: u64 },

    /// One role too many: the session already uses `max_roles` roles.
    #[error(
        "role cap reached: {} roles in use ({in_use}), max_roles {max}; pass --max-roles {} to add {role}",
        in_use.split(", ").count(),
        max + 1
    )]
    RoleCap {
        role: String,
        in_use: String,
        max: usize,
    },

    /// A command-line value that cannot be used.
    #[error("{0}")]
    Usage(String),
}

impl Error {
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            what: what.into(),
            cause: source,
        }
    }

    pub fn bad_file(path: impl Into<PathBuf>, problem: impl Into<String>) -> Self {
        Error::BadFile {
            path: path.into(),
            problem: problem.into(),
        }
    }

    /// Every error a user can cause is bad input or environment: exit code 2.
    pub fn exit_code(&self) -> i32 {
        EXIT_BAD_INPUT
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
