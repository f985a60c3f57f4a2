//! The option groups several commands share: where sessions live, how a session is driven, which
//! agent backends work, and how the project's code is sandboxed.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use crate::app::exit_policy::FailOn;
use crate::app::open::OpenOptions;
use crate::app::team::AgentChoice;
use crate::error::Error;
use crate::remote::{ClusterSettings, RemoteError};
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
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub fail_on: FailOnArgs,
}

/// `--fail-on`: which results make a finished run exit 4 (for CI).
#[derive(Args, Debug, Default, Clone)]
pub struct FailOnArgs {
    /// Exit 4 when the finished session has one of these (repeat, or a list): code-defect (a
    /// test failing on a bug, or a stated contract broken), regression (a behaviour change
    /// judged a likely regression), gate (a layer below its gate after its last GC round),
    /// unsafe (a side effect found), none (the default). Each result is named on stderr, and
    /// in `failed_on` with --json.
    #[arg(
        long = "fail-on",
        value_name = "WHAT",
        value_delimiter = ',',
        value_parser = fail_on_value()
    )]
    pub conditions: Vec<FailOn>,
}

fn fail_on_value() -> impl clap::builder::TypedValueParser<Value = FailOn> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(FailOn::NAMES)
        .map(|s| s.parse::<FailOn>().expect("one of the possible values"))
}

/// How to reach a NATS server. Credentials stay in this process: never logged, never written
/// into a session.
#[derive(Args, Clone, Default)]
pub struct NatsArgs {
    /// The NATS server (JetStream) of a cluster of workers, e.g. nats://host:4222
    /// (user:password@ in it is taken as --nats-user/--nats-password).
    #[arg(
        long,
        value_name = "URL",
        env = "TEAM_TESTING_NATS",
        hide_env_values = true
    )]
    pub nats: Option<String>,
    /// A NATS credentials file (JWT and NKey seed).
    #[arg(long, value_name = "FILE", requires = "nats")]
    pub nats_creds: Option<PathBuf>,
    #[arg(long, value_name = "USER", requires = "nats")]
    pub nats_user: Option<String>,
    /// The password for --nats-user (better: $TEAM_TESTING_NATS_PASSWORD, out of `ps`).
    #[arg(
        long,
        value_name = "PASSWORD",
        requires = "nats_user",
        env = "TEAM_TESTING_NATS_PASSWORD",
        hide_env_values = true
    )]
    pub nats_password: Option<String>,
    /// TLS: a CA bundle to trust for the server's certificate.
    #[arg(long, value_name = "FILE", requires = "nats")]
    pub nats_tls_ca: Option<PathBuf>,
    /// TLS: a client certificate (with --nats-tls-key).
    #[arg(long, value_name = "FILE", requires_all = ["nats", "nats_tls_key"])]
    pub nats_tls_cert: Option<PathBuf>,
    #[arg(long, value_name = "FILE", requires_all = ["nats", "nats_tls_cert"])]
    pub nats_tls_key: Option<PathBuf>,
}

// By hand: the derived form would print the password.
impl std::fmt::Debug for NatsArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsArgs")
            .field("nats", &self.settings().ok().flatten().map(|s| s.url))
            .field("nats_creds", &self.nats_creds)
            .field("nats_user", &self.nats_user)
            .finish_non_exhaustive()
    }
}

impl NatsArgs {
    /// The connection settings, when --nats was given.
    pub fn settings(&self) -> Result<Option<ClusterSettings>, RemoteError> {
        let Some(url) = &self.nats else {
            return Ok(None);
        };
        let mut s = ClusterSettings::new(url)?;
        if self.nats_user.is_some() {
            s.user = self.nats_user.clone();
            s.password = self.nats_password.clone();
        }
        s.creds = self.nats_creds.clone();
        s.tls_ca = self.nats_tls_ca.clone();
        s.tls_cert = self.nats_tls_cert.clone();
        s.tls_key = self.nats_tls_key.clone();
        if let Some(creds) = &s.creds {
            // Named now, before anything runs: a typo is exit 2 with the file's name.
            std::fs::metadata(creds).map_err(|source| RemoteError::Credentials {
                path: creds.clone(),
                source,
            })?;
        }
        Ok(Some(s))
    }
}

/// Running a session's roles on a cluster's workers.
#[derive(Args, Debug, Clone, Default)]
pub struct ClusterArgs {
    #[command(flatten)]
    pub nats: NatsArgs,
    /// With --nats: split each executor layer run by test file into N shards on the cluster's
    /// executors, their results merged before the quality gate.
    #[arg(long, value_name = "N", requires = "nats", value_parser = clap::value_parser!(u64).range(1..=64))]
    pub shards: Option<u64>,
    /// With --nats: how long to wait for a lost server before pausing the session (seconds).
    #[arg(long, value_name = "SECONDS", requires = "nats", default_value_t = 60)]
    pub nats_wait: u64,
}

impl ClusterArgs {
    pub fn settings(&self) -> Result<Option<ClusterSettings>, RemoteError> {
        Ok(self.nats.settings()?.map(|mut s| {
            s.shards = self.shards.unwrap_or(1) as usize;
            s.wait = std::time::Duration::from_secs(self.nats_wait.max(1));
            s
        }))
    }
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
