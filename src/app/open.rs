//! Opening an existing session to run it again: resolved, locked, tidied, with its team and graph.

use std::path::{Path, PathBuf};

use super::team::{session_team, AgentChoice};
use crate::error::{Error, Result};
use crate::pipeline::config::TeamConfig;
use crate::roles::Registry;
use crate::session::{self, CompletionAction, SessionDir, SessionLock, SessionState};
use crate::tasks::TaskGraph;

/// A session opened to run again: locked, with its config, roles and graph loaded.
pub struct Opened {
    pub session: SessionDir,
    pub lock: SessionLock,
    pub state: SessionState,
    pub config: TeamConfig,
    pub registry: Registry,
    pub graph: TaskGraph,
    /// The sandbox's description was given already (by `run`): once is enough.
    pub sandbox_shown: bool,
    /// Temp files an interrupted write left, removed on opening.
    pub swept: Vec<PathBuf>,
}

/// What a command that runs a session again changes in it.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// `--max-roles N`, kept in the session's run controls.
    pub max_roles: Option<usize>,
    /// Backends named anew (else the session keeps its chains).
    pub agents: AgentChoice,
    /// The completion action to record (`interactive`, `archive`, `keep`).
    pub completion: CompletionAction,
}

/// Resolves SESSION, takes its lock, and loads everything a run needs (an archived session runs
/// where it is). `--max-roles` and new backend options are applied to the session's state.
pub fn open(root: &Path, arg: Option<&str>, options: &OpenOptions) -> Result<Opened> {
    let session = session::resolve(root, arg)?;
    let lock = SessionLock::acquire(&session.lock_file(), &session.id)?;
    let swept = session.sweep_stale_temps();
    let mut state = session.load_state()?;
    if !state.repo.is_dir() {
        return Err(Error::MissingRepo {
            path: state.repo.clone(),
        });
    }
    // A plan the user edited since `--dry-run` is checked before anything runs: each bad row is
    // named, and the session stays as it is.
    super::scenarios::load(&session, &state.repo)?;
    if let Some(n) = options.max_roles {
        state.controls.max_roles = Some(n);
    }
    let (config, registry) = session_team(&session, &state)?;
    let graph = session.load_tasks()?;
    if options.agents.is_given() {
        // Checked for the roles with work left and those named anew (the command may add
        // their work), before any of it runs.
        let left = |role: &str| {
            options.agents.names_role(role)
                || graph
                    .tasks
                    .iter()
                    .any(|t| t.owner == role && !t.status.is_done())
        };
        let mut notes = Vec::new();
        state.agents = options
            .agents
            .settings(&state.repo, &registry, root, &left, &mut notes)?;
        state.warnings.extend(notes);
        state.sandbox.secret_env = state.agents.secret_env();
    }
    state.completion_action = options.completion;
    Ok(Opened {
        session,
        lock,
        state,
        config,
        registry,
        graph,
        sandbox_shown: false,
        swept,
    })
}
