//! A session's team: its config and roles, the agent backends of each role, and what the sandbox
//! protects on this machine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::agents::backends::{parse_overrides, AgentSettings, Backend, BackendConfig};
use crate::error::{Error, Result};
use crate::pipeline::config::TeamConfig;
use crate::roles::{Registry, RoleSource};
use crate::session::{SessionDir, SessionState};
use crate::tasks::TaskGraph;

/// Config and role registry, validated together.
pub fn load_team(spec: Option<&Path>, roles_dir: Option<&Path>) -> Result<(TeamConfig, Registry)> {
    let config = match spec {
        Some(p) => TeamConfig::load(p)?,
        None => TeamConfig::builtin()?,
    };
    let registry = Registry::load(roles_dir)?;
    config.check_roles(&registry)?;
    Ok((config, registry))
}

/// The session's config (its run controls applied) and roles (with its role-specs/).
pub fn session_team(session: &SessionDir, state: &SessionState) -> Result<(TeamConfig, Registry)> {
    let (mut config, mut registry) =
        load_team(state.spec_file.as_deref(), state.roles_dir.as_deref())?;
    state.controls.apply(&mut config);
    let role_specs = session.root.join("role-specs");
    if role_specs.is_dir() {
        registry.load_dir(&role_specs, RoleSource::Session)?;
    }
    Ok((config, registry))
}

/// Which agent backends the user named for this run (`--backend`, `--config`, `--replay`).
#[derive(Debug, Clone, Default)]
pub struct AgentChoice {
    /// `ROLE=NAME[,NAME…]`, as given.
    pub backends: Vec<String>,
    /// A backend config instead of `<repo>/team-testing.toml`.
    pub config: Option<PathBuf>,
    /// A session whose recorded agent calls answer this run's.
    pub replay: Option<String>,
}

impl AgentChoice {
    /// Whether `--backend ROLE=…` names `role` (a chain the user named for this run).
    pub fn names_role(&self, role: &str) -> bool {
        self.backends
            .iter()
            .any(|b| b.split_once('=').is_some_and(|(r, _)| r.trim() == role))
    }

    /// Anything named at all: a resumed session keeps its chains otherwise.
    pub fn is_given(&self) -> bool {
        !self.backends.is_empty() || self.config.is_some() || self.replay.is_some()
    }

    /// Every role's chain, resolved once for the whole session, and checked before any work
    /// starts for the roles that will run (`runs`): a backend that cannot run here is an error,
    /// unless the user named the built-in one after it in that chain (not for the fixer, whose
    /// built-in backend fixes nothing); then `notes` says so and the run goes on. A replay
    /// answers from its records, so nothing is checked.
    pub fn settings(
        &self,
        repo: &Path,
        registry: &Registry,
        sessions_root: &Path,
        runs: &dyn Fn(&str) -> bool,
        notes: &mut Vec<String>,
    ) -> Result<AgentSettings> {
        let config = BackendConfig::load(self.config.as_deref(), repo)?;
        let overrides = parse_overrides(&self.backends)?;
        for role in overrides.keys() {
            if !registry.contains(role) {
                return Err(Error::Usage(format!(
                    "--backend {role}=…: no role named {role}"
                )));
            }
        }
        let mut chains = BTreeMap::new();
        for role in registry.iter() {
            let mut chain = config.chain_for(&role.name, &overrides, role.agent.as_deref())?;
            if chain.len() == 1 && chain[0].is_builtin() {
                continue;
            }
            if self.replay.is_none() && runs(&role.name) {
                notes.extend(check_chain(&role.name, &chain)?);
            }
            // The built-in implementation stays the fallback of last resort.
            if !chain.iter().any(|b| b.is_builtin()) {
                chain.extend(config.chain_for("", &BTreeMap::new(), Some(&["builtin".into()]))?);
            }
            chains.insert(role.name.clone(), chain);
        }
        let Some(arg) = &self.replay else {
            return Ok(AgentSettings {
                chains,
                replay: None,
            });
        };
        let session = crate::session::resolve(sessions_root, Some(arg))?;
        let agents = session.root.join("agents");
        if !agents.is_dir() {
            return Err(Error::Usage(format!(
                "--replay {arg}: {} has no recorded agent calls",
                agents.display()
            )));
        }
        // Without backends named anew, the replay uses the recorded session's own chains.
        if self.backends.is_empty() && self.config.is_none() {
            chains = session.load_state()?.agents.chains;
        }
        Ok(AgentSettings {
            chains,
            replay: Some(agents),
        })
    }
}

/// The chain's backends that cannot run here: an error for the first one with no built-in
/// backend named after it (always, for the fixer), else one note each.
pub(crate) fn check_chain(role: &str, chain: &[Backend]) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    for (i, backend) in chain.iter().enumerate() {
        let Some(why) = backend.unusable() else {
            continue;
        };
        let builtin_after = chain[i + 1..].iter().any(Backend::is_builtin);
        if builtin_after && role != "fixer" {
            notes.push(format!(
                "the {role} role's backend {} cannot run ({why}): the built-in one named after it does the work",
                backend.name
            ));
            continue;
        }
        let make_it_run = match backend.spec {
            crate::agents::backends::BackendSpec::Http { .. } => {
                "complete its settings (team-testing.toml, or the key's variable)"
            }
            _ => "install its program or put it on PATH",
        };
        let what_to_do = if role == "fixer" {
            format!("{make_it_run}, or name another agent (--backend fixer=NAME): the fixer's built-in backend fixes nothing")
        } else {
            format!(
                "{make_it_run}, or name the built-in one after it to go on without it (--backend {role}={},builtin)",
                backend.name
            )
        };
        return Err(Error::AgentUnavailable {
            role: role.to_string(),
            backend: backend.name.clone(),
            why,
            what_to_do,
        });
    }
    Ok(notes)
}

/// What the sandbox around the project's code protects here, for the user to read once.
#[derive(Debug, Clone)]
pub struct SandboxNote {
    /// One line: the filesystem and network protections.
    pub description: String,
    /// Protections this machine cannot give (each also a session warning).
    pub missing: Vec<String>,
}

/// Records what the sandbox protects in `state`, and refuses to let the built-in generator call
/// the project's functions with no filesystem sandbox.
pub fn check_sandbox(
    state: &mut SessionState,
    registry: &Registry,
    graph: &TaskGraph,
) -> Result<SandboxNote> {
    let protections = state.sandbox.protections();
    let builtin_generator = graph.tasks.iter().any(|t| {
        t.owner == "generator"
            && registry
                .get("generator")
                .is_some_and(|r| matches!(r.backend, crate::roles::Backend::Builtin))
    });
    if state.sandbox.enabled && !protections.filesystem_contained && builtin_generator {
        return Err(Error::Environment(format!(
            "the built-in generator calls the project's functions with made-up arguments, and this \
             machine offers no filesystem sandbox ({}). Run team-testing in a container or VM, or \
             pass --unsafe-no-sandbox to accept that the project's code may change any file you can.",
            protections.missing.join("; ")
        )));
    }
    let note = SandboxNote {
        description: format!(
            "sandbox: filesystem: {}; network: {}",
            protections.filesystem, protections.network
        ),
        missing: protections
            .missing
            .iter()
            .map(|m| format!("sandbox: missing protection: {m}"))
            .collect(),
    };
    for warning in &note.missing {
        if !state.warnings.contains(warning) {
            state.warnings.push(warning.clone());
        }
    }
    state.protections = Some(protections);
    Ok(note)
}
