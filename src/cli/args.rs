//! The option groups several commands share: where sessions live, how a session is driven, which
//! agent backends work, and how the project's code is sandboxed.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use crate::app::open::OpenOptions;
use crate::app::team::AgentChoice;
use crate::error::Error;
use crate::sandbox::SandboxSettings;
use crate::session::CompletionAction;

/// Where sessions live: shared by every command.
#[derive(Args, Debug, Clone)]
pub struct Location {
    /// The target repository (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Sessions root (default: $TEAM_TESTING_SESSIONS, else <repo>/.workflow/.team).
    #[arg(long, value_name = "DIR")]
    pub sessions_dir: Option<PathBuf>,
}

impl Location {
    pub fn repo(&self) -> PathBuf {
        self.repo.clone().unwrap_or_else(|| PathBuf::from("."))
    }

    pub fn root(&self) -> PathBuf {
        let repo = self.repo();
        let repo = repo.canonicalize().unwrap_or(repo);
        let root = crate::session::sessions_root(self.sessions_dir.as_deref(), &repo);
        // Absolute: roles and children run in other folders than ours.
        std::path::absolute(&root).unwrap_or(root)
    }
}

#[derive(Args, Debug, Default)]
pub struct DriveArgs {
    /// Answer yes to every question (no prompts); the session is archived at the end unless
    /// --completion says otherwise.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// When every task is done: interactive (ask: archive, keep or deepen; keep when there is no
    /// terminal), archive (status archived, in place; rebuildable copies removed) or keep
    /// (paused, resumable).
    #[arg(long, value_name = "ACTION", value_parser = ["interactive", "archive", "keep"])]
    pub completion: Option<String>,
    /// Print one JSON object with the result on stdout (progress goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Most roles in use at once, coordinator included (default: the config's max_roles, 5).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_roles: Option<u64>,
    #[command(flatten)]
    pub agents: AgentArgs,
}

/// What to do with a session whose tasks are all done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    Interactive,
    Archive,
    Keep,
}

impl DriveArgs {
    pub fn completion(&self) -> Completion {
        match self.completion.as_deref() {
            Some("archive") => Completion::Archive,
            Some("keep") => Completion::Keep,
            Some(_) => Completion::Interactive,
            None if self.yes => Completion::Archive,
            None => Completion::Interactive,
        }
    }

    /// Questions may be asked: a person at a terminal, no -y, no --json.
    pub fn can_ask(&self) -> bool {
        !self.yes && !self.json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }

    /// What opening a session for this command changes in it.
    pub fn open_options(&self) -> OpenOptions {
        OpenOptions {
            max_roles: self.max_roles.map(|n| n as usize),
            agents: self.agents.choice(),
            completion: self.completion_action(),
        }
    }

    /// The session's stored choice of completion, for session.json.
    pub fn completion_action(&self) -> CompletionAction {
        match self.completion() {
            Completion::Interactive => CompletionAction::Interactive,
            Completion::Archive => CompletionAction::Archive,
            Completion::Keep => CompletionAction::Keep,
        }
    }
}

/// Which agent backends do a role's creative work (see README, Agent backends).
#[derive(Args, Debug, Default)]
pub struct AgentArgs {
    /// A role's backend, or fallback chain: --backend generator=claude or generator=local,builtin.
    #[arg(long = "backend", value_name = "ROLE=NAME")]
    pub backends: Vec<String>,
    /// Backend config instead of <repo>/team-testing.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Answer every agent call whose prompt matches one recorded in SESSION from that recording.
    #[arg(long, value_name = "SESSION")]
    pub replay: Option<String>,
}

impl AgentArgs {
    /// The backends named on the command line, for the app layer.
    pub fn choice(&self) -> AgentChoice {
        AgentChoice {
            backends: self.backends.clone(),
            config: self.config.clone(),
            replay: self.replay.clone(),
        }
    }
}

/// How the children that run the project's code are sandboxed (see README, Security).
#[derive(Args, Debug, Default)]
pub struct SandboxArgs {
    /// Let generated calls and test runs use the network (off by default).
    #[arg(long)]
    pub allow_network: bool,
    /// Run the project's code with your full rights: no filesystem, network or resource limits.
    #[arg(long)]
    pub unsafe_no_sandbox: bool,
    /// Pass this variable to the children although its name looks like a credential.
    #[arg(long = "allow-env", value_name = "NAME")]
    pub allow_env: Vec<String>,
    /// A per-child limit: cpu_s, memory_mb, address_space_mb, file_size_mb, open_files or
    /// processes (0 switches it off), e.g. --limit memory_mb=2048.
    #[arg(long = "limit", value_name = "KEY=VALUE")]
    pub limits: Vec<String>,
}

impl SandboxArgs {
    pub fn settings(&self) -> Result<SandboxSettings, Error> {
        let mut settings = SandboxSettings {
            enabled: !self.unsafe_no_sandbox,
            allow_network: self.allow_network,
            allow_env: self.allow_env.clone(),
            ..Default::default()
        };
        for l in &self.limits {
            settings.limits.set(l).map_err(Error::BadLimit)?;
        }
        Ok(settings)
    }
}
