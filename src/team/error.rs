//! Why a step of a built-in role failed. The role turns it into a failed outcome (or tries the
//! next backend of its chain); its text is what the user reads as the reason.

use std::path::PathBuf;

/// One error of the built-in roles' work, with its context as data.
#[derive(Debug, thiserror::Error)]
pub enum RoleError {
    #[error("the task's deadline has passed")]
    DeadlinePassed,

    #[error("cannot prepare the sandbox in {}: {cause}", root.display())]
    Sandbox {
        root: PathBuf,
        cause: std::io::Error,
    },

    /// A file or folder of the session the role could not read, write, copy or move.
    #[error("cannot {action} {}: {cause}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        cause: std::io::Error,
    },

    #[error("cannot mirror the repository into {}: {cause}", into.display())]
    Mirror {
        into: PathBuf,
        cause: std::io::Error,
    },

    #[error(transparent)]
    File(#[from] crate::util::FileError),

    #[error(transparent)]
    Proc(#[from] crate::proc::ProcError),

    #[error(transparent)]
    Session(#[from] crate::error::Error),

    #[error(transparent)]
    Scope(#[from] crate::session::scope::ScopeError),

    #[error(transparent)]
    Agent(#[from] crate::agents::call::AgentError),

    #[error(transparent)]
    Effects(#[from] crate::family::python::isolation::EffectsError),

    #[error(transparent)]
    Gen(#[from] crate::gen::GenError),

    #[error(transparent)]
    GitDiff(#[from] crate::testing::symbols::GitDiffError),
    #[error(transparent)]
    UnknownFramework(#[from] crate::testing::framework::UnknownFramework),

    #[error("no source file of the project's language in scope to write tests for")]
    NoModuleInScope,

    /// A capability the family of the project's framework does not have yet (family::support).
    #[error("{what} for {framework}: not yet: {reason}")]
    NotYet {
        what: &'static str,
        framework: String,
        reason: &'static str,
    },

    /// Every candidate an agent wrote was rejected; `reasons` lists each file and why.
    #[error("{backend}: no candidate passed the accept filter ({})", reasons.join("; "))]
    NothingAccepted {
        backend: String,
        reasons: Vec<String>,
    },

    #[error("cannot measure what the {layer} tests already cover: {why}")]
    NoBaselineCoverage { layer: String, why: String },

    #[error("surgical round: the tests of round {round} were not kept ({})", kept_in.display())]
    RoundNotKept { round: u64, kept_in: PathBuf },

    /// No agent backend gave a repaired file that passes; what each one did.
    #[error("{}", attempts.join("; "))]
    NoRepair { attempts: Vec<String> },

    #[error("no free run number in {}", results.display())]
    NoFreeRunNumber { results: PathBuf },

    /// A rerun task whose original run cannot be found.
    #[error("rerun of {task}: {problem}")]
    RerunSource { task: String, problem: RerunProblem },
}

/// What is missing to rerun a task's failures.
#[derive(Debug, thiserror::Error)]
pub enum RerunProblem {
    #[error("it has no recorded outcome")]
    NoOutcome,
    #[error("no run record named in its outcome")]
    NoRunRecord,
    #[error(transparent)]
    Unreadable(#[from] crate::artifacts::ArtifactError),
}

impl RoleError {
    /// `map_err` for an io error on `path`: `.map_err(RoleError::io("read", &path))`.
    pub fn io(action: &'static str, path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_path_buf();
        move |cause| RoleError::Io {
            action,
            path,
            cause,
        }
    }
}

pub type Result<T, E = RoleError> = std::result::Result<T, E>;
