//! The one error type for what users cause: bad specs, bad role files, a missing repository, a locked
//! session. Every variant carries its context (file, task id) and maps to a documented exit code.

use std::path::PathBuf;

/// Exit code when the pipeline failed (a task failed after its retry).
pub const EXIT_PIPELINE_FAILED: i32 = 1;
/// Exit code for bad input or environment.
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit code when the coordinator paused the session for the user (a role it may not add).
pub const EXIT_PAUSED: i32 = 3;
/// Exit code when a finished session has a result `--fail-on` names (a code defect, …).
pub const EXIT_FAIL_ON: i32 = 4;

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

    #[error("unknown pipeline '{name}'{}: expected auto or one of {}", hint.as_ref().map(|h| format!(" (did you mean '{h}'?)")).unwrap_or_default(), known.join(", "))]
    UnknownPipeline {
        name: String,
        /// The pipelines the team config defines.
        known: Vec<String>,
        hint: Option<String>,
    },

    // The io error is part of the message, not a `source`: printed as a chain it would repeat.
    #[error("{what}: {cause}")]
    Io { what: String, cause: std::io::Error },

    #[error("{0}")]
    Environment(String),

    /// The cluster could not be joined (its own error, kept whole: the layer that speaks NATS
    /// stands above this one).
    #[error(transparent)]
    Cluster(Box<dyn std::error::Error + Send + Sync>),

    /// A helper child (git, a probe) could not start, be waited for, or ran past its time.
    #[error(transparent)]
    Proc(#[from] crate::proc::ProcError),

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

    /// A backend a role's chain names cannot run on this machine, and nothing the user named
    /// after it stands in: said before any work starts.
    #[error("the {role} role's backend {backend} cannot run: {why}; {what_to_do}")]
    AgentUnavailable {
        role: String,
        backend: String,
        why: String,
        what_to_do: String,
    },

    /// A command-line value that cannot be used.
    #[error("{0}")]
    Usage(String),

    /// The session's message log could not be made durable (disk full, read-only, …).
    #[error(transparent)]
    MessageLog(#[from] crate::bus::writer::LogError),
    #[error(transparent)]
    MessageRead(#[from] crate::bus::reader::ReadError),

    /// A session file that could not be read or written.
    #[error(transparent)]
    File(#[from] crate::util::FileError),

    /// A `--limit` the sandbox cannot apply.
    #[error(transparent)]
    BadLimit(#[from] crate::sandbox::LimitError),
}

impl Error {
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            what: what.into(),
            cause: source,
        }
    }

    /// `name` is no pipeline of `known` (the team config's): with the closest one as a hint.
    pub fn unknown_pipeline<'a>(name: &str, known: impl IntoIterator<Item = &'a String>) -> Self {
        let mut known: Vec<String> = known.into_iter().cloned().collect();
        known.sort();
        let hint = crate::util::closest(name, known.iter().map(String::as_str)).map(String::from);
        Error::UnknownPipeline {
            name: name.to_string(),
            known,
            hint,
        }
    }

    pub fn bad_file(path: impl Into<PathBuf>, problem: impl Into<String>) -> Self {
        Error::BadFile {
            path: path.into(),
            problem: problem.into(),
        }
    }

    /// The documented exit code (README "Exit codes"). Every variant is bad input or a broken
    /// environment: a failed pipeline (1), a pause for the user (3) and an interrupt (130) are
    /// outcomes of a run, not errors. Listed one by one so a new variant must choose.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::BadFile { .. }
            | Error::BadTask { .. }
            | Error::BadRole { .. }
            | Error::MissingRepo { .. }
            | Error::UnknownPipeline { .. }
            | Error::RoleCap { .. }
            | Error::AgentUnavailable { .. }
            | Error::Usage(_)
            | Error::BadLimit(_) => EXIT_BAD_INPUT,
            Error::Locked { .. }
            | Error::Session(_)
            | Error::Io { .. }
            | Error::Environment(_)
            | Error::Cluster(_)
            | Error::Proc(_)
            | Error::File(_)
            | Error::MessageLog(_)
            | Error::MessageRead(_) => EXIT_BAD_INPUT,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_is_bad_input_or_environment_exit_2() {
        let path = PathBuf::from("tt.toml");
        let errors = [
            Error::bad_file(&path, "x"),
            Error::BadTask {
                path: path.clone(),
                task: "t".into(),
                problem: "x".into(),
            },
            Error::BadRole {
                path: path.clone(),
                role: "r".into(),
                problem: "x".into(),
            },
            Error::MissingRepo { path: path.clone() },
            Error::Locked {
                session: "s".into(),
                pid: "1".into(),
                lock: path.clone(),
            },
            Error::Session("x".into()),
            Error::UnknownPipeline {
                name: "x".into(),
                known: vec!["standard".into()],
                hint: None,
            },
            Error::io("reading", std::io::Error::other("x")),
            Error::Environment("x".into()),
            Error::Cluster(Box::new(std::io::Error::other("no server"))),
            Error::Proc(crate::proc::ProcError::TimedOut {
                command: "git".into(),
                seconds: 1,
            }),
            Error::RoleCap {
                role: "r".into(),
                in_use: "a, b".into(),
                max: 2,
            },
            Error::Usage("x".into()),
            Error::AgentUnavailable {
                role: "fixer".into(),
                backend: "claude".into(),
                why: "claude is not on PATH".into(),
                what_to_do: "install it".into(),
            },
            Error::File(crate::util::FileError::Empty { path: path.clone() }),
            Error::MessageLog(crate::bus::writer::LogError::Stopped),
            Error::MessageRead(crate::bus::reader::ReadError::Read {
                path: path.clone(),
                cause: std::io::Error::other("x"),
            }),
            Error::BadLimit(crate::sandbox::LimitError::NotAssignment {
                assignment: "x".into(),
            }),
        ];
        for e in &errors {
            assert_eq!(e.exit_code(), EXIT_BAD_INPUT, "{e:?}");
        }
    }
}
