//! Agent backends: what a role's creative work (writing tests, repairing them) is handed to, and
//! in which order. Named backends come from presets (claude, codex, gemini, qwen, opencode, and
//! `builtin`) and from the project's `team-testing.toml`; a role's chain is chosen by, in this
//! order: `--backend ROLE=NAME`, the role file's `backend`, the config's `[roles.ROLE]`, builtin.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The config file looked for in the repository.
pub const CONFIG_FILE: &str = "team-testing.toml";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum BackendSpec {
    /// team-testing's own offline implementation.
    Builtin,
    /// An agent CLI: the prompt on stdin, or in a file when `{prompt_file}` is in the command.
    Cli {
        command: Vec<String>,
        #[serde(default = "default_cli_timeout")]
        timeout_s: u64,
    },
    /// An OpenAI-compatible chat-completions endpoint.
    Http {
        base_url: String,
        model: String,
        /// The variable that holds the API key; the key itself is never stored.
        #[serde(default)]
        api_key_env: Option<String>,
        #[serde(default = "default_http_timeout")]
        timeout_s: u64,
        #[serde(default = "default_retries")]
        max_retries: u32,
    },
}

fn default_cli_timeout() -> u64 {
    900
}

fn default_http_timeout() -> u64 {
    300
}

fn default_retries() -> u32 {
    3
}

/// A backend with its name (`claude`, `local`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Backend {
    pub name: String,
    pub spec: BackendSpec,
}

impl Backend {
    pub fn is_builtin(&self) -> bool {
        matches!(self.spec, BackendSpec::Builtin)
    }

    /// Why this backend cannot run on this machine: an agent CLI whose program is not on PATH,
    /// an endpoint with no address or model, or whose key variable is not set. None when it can
    /// (the built-in one always can).
    pub fn unusable(&self) -> Option<String> {
        match &self.spec {
            BackendSpec::Builtin => None,
            BackendSpec::Cli { command, .. } => {
                let program = command.first().map(String::as_str).unwrap_or("");
                match program {
                    "" => Some("its command is empty".into()),
                    p if on_path(p).is_none() => Some(format!("{p} is not on PATH")),
                    _ => None,
                }
            }
            BackendSpec::Http {
                base_url,
                model,
                api_key_env,
                ..
            } => {
                if base_url.trim().is_empty() {
                    return Some("its base_url is empty".into());
                }
                if model.trim().is_empty() {
                    return Some("its model is empty".into());
                }
                api_key_env
                    .as_deref()
                    .filter(|var| std::env::var_os(var).is_none_or(|v| v.is_empty()))
                    .map(|var| format!("${var} is not set"))
            }
        }
    }

    /// The variable holding this backend's key, to keep out of sandboxed children.
    pub fn secret_env(&self) -> Option<&str> {
        match &self.spec {
            BackendSpec::Http { api_key_env, .. } => api_key_env.as_deref(),
            _ => None,
        }
    }
}

/// Where PATH finds `program` (a path with a slash is taken as it is).
pub fn on_path(program: &str) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        return Some(PathBuf::from(program)).filter(|p| p.is_file());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// The `-p` text of the Gemini-style CLIs (the real prompt comes on stdin).
const ANSWER_NOW: &str = "Answer the request above now.";

/// The documented non-interactive forms of the agent CLIs users already have.
pub fn presets() -> BTreeMap<String, BackendSpec> {
    let cli = |argv: &[&str]| BackendSpec::Cli {
        command: argv.iter().map(|s| s.to_string()).collect(),
        timeout_s: default_cli_timeout(),
    };
    BTreeMap::from([
        ("builtin".to_string(), BackendSpec::Builtin),
        // Claude Code: print mode, prompt on stdin, plain text out.
        (
            "claude".into(),
            cli(&["claude", "-p", "--output-format", "text"]),
        ),
        // Codex: non-interactive exec, prompt on stdin (`-`).
        (
            "codex".into(),
            cli(&["codex", "exec", "--skip-git-repo-check", "-"]),
        ),
        // Gemini CLI and Qwen Code (its fork): headless with `-p`, whose text is appended to
        // the prompt read from stdin.
        ("gemini".into(), cli(&["gemini", "-p", ANSWER_NOW])),
        ("qwen".into(), cli(&["qwen", "-p", ANSWER_NOW])),
        // opencode: `run` with a message; the prompt is too long for an argument, so it points
        // at the prompt file in the agent's folder.
        (
            "opencode".into(),
            cli(&[
                "opencode",
                "run",
                "Follow the instructions in the file {prompt_file}.",
            ]),
        ),
    ])
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    backends: BTreeMap<String, BackendSpec>,
    #[serde(default)]
    roles: BTreeMap<String, RoleBackends>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleBackends {
    backend: Chain,
}

/// One name or a fallback chain of names.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Chain {
    One(String),
    Many(Vec<String>),
}

impl Chain {
    fn names(&self) -> Vec<String> {
        match self {
            Chain::One(n) => vec![n.clone()],
            Chain::Many(v) => v.clone(),
        }
    }
}

/// The named backends and per-role chains of a project.
#[derive(Debug, Clone)]
pub struct BackendConfig {
    /// Presets overlaid with the config file's backends.
    pub backends: BTreeMap<String, BackendSpec>,
    /// `[roles.ROLE] backend = [...]` from the config file.
    pub roles: BTreeMap<String, Vec<String>>,
    /// The file it came from, for error messages.
    pub source: Option<PathBuf>,
}

impl Default for BackendConfig {
    /// The presets, no role chains.
    fn default() -> Self {
        BackendConfig {
            backends: presets(),
            roles: BTreeMap::new(),
            source: None,
        }
    }
}

impl BackendConfig {
    /// `--config FILE`, else `<repo>/team-testing.toml` when present, else presets only.
    pub fn load(explicit: Option<&Path>, repo: &Path) -> Result<Self> {
        let path = match explicit {
            Some(p) => Some(p.to_path_buf()),
            None => Some(repo.join(CONFIG_FILE)).filter(|p| p.is_file()),
        };
        let mut config = BackendConfig::default();
        let Some(path) = path else {
            return Ok(config);
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        let file: ConfigFile = toml::from_str(&text)
            .map_err(|e| Error::bad_file(&path, format!("invalid config: {e}")))?;
        for (name, spec) in file.backends {
            validate(&name, &spec).map_err(|p| Error::bad_file(&path, p.to_string()))?;
            config.backends.insert(name, spec);
        }
        for (role, chain) in file.roles {
            config.roles.insert(role, chain.backend.names());
        }
        config.source = Some(path);
        config.check_names()?;
        Ok(config)
    }

    fn check_names(&self) -> Result<()> {
        for (role, chain) in &self.roles {
            for name in chain {
                if !self.backends.contains_key(name) {
                    return Err(self.bad(format!(
                        "roles.{role}: unknown backend {name:?} (known: {})",
                        self.known()
                    )));
                }
            }
        }
        Ok(())
    }

    fn bad(&self, problem: String) -> Error {
        match &self.source {
            Some(p) => Error::bad_file(p, problem),
            None => Error::Usage(problem),
        }
    }

    fn known(&self) -> String {
        self.backends.keys().cloned().collect::<Vec<_>>().join(", ")
    }

    /// The chain for `role`: `overrides` (from `--backend ROLE=NAME`) first, then the role
    /// file's `backend` names, then the config's, then builtin.
    pub fn chain_for(
        &self,
        role: &str,
        overrides: &BTreeMap<String, Vec<String>>,
        role_file: Option<&[String]>,
    ) -> Result<Vec<Backend>> {
        let names: Vec<String> = overrides
            .get(role)
            .cloned()
            .or_else(|| role_file.map(<[String]>::to_vec))
            .or_else(|| self.roles.get(role).cloned())
            .unwrap_or_else(|| vec!["builtin".into()]);
        names
            .into_iter()
            .map(|name| {
                let spec = self.backends.get(&name).cloned().ok_or_else(|| {
                    self.bad(format!(
                        "role {role}: unknown backend {name:?} (known: {})",
                        self.known()
                    ))
                })?;
                Ok(Backend { name, spec })
            })
            .collect()
    }
}

/// The backend chains of a session, resolved at its start and kept in session.json (names and
/// settings only: keys stay in their variables).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentSettings {
    /// Role -> its chain; a role not listed uses the built-in implementation.
    pub chains: BTreeMap<String, Vec<Backend>>,
    /// `run --replay SESSION`: the recorded calls (`<SESSION>/agents`) that answer by prompt.
    pub replay: Option<PathBuf>,
}

impl AgentSettings {
    /// The chain for `role` (the built-in implementation when none was set).
    pub fn chain(&self, role: &str) -> Vec<Backend> {
        self.chains.get(role).cloned().unwrap_or_else(|| {
            vec![Backend {
                name: "builtin".into(),
                spec: BackendSpec::Builtin,
            }]
        })
    }

    /// Variables that hold the chains' API keys (kept out of sandboxed children).
    pub fn secret_env(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .chains
            .values()
            .flatten()
            .filter_map(|b| b.secret_env().map(str::to_string))
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// `--backend generator=local` (or `generator=claude,builtin`) into role -> names.
pub fn parse_overrides(args: &[String]) -> Result<BTreeMap<String, Vec<String>>> {
    let mut out = BTreeMap::new();
    for arg in args {
        let (role, names) = arg
            .split_once('=')
            .filter(|(r, n)| !r.trim().is_empty() && !n.trim().is_empty())
            .ok_or_else(|| {
                Error::Usage(format!("--backend {arg}: expected ROLE=NAME[,NAME...]"))
            })?;
        let names: Vec<String> = names.split(',').map(|n| n.trim().to_string()).collect();
        out.insert(role.trim().to_string(), names);
    }
    Ok(out)
}

/// A backend entry of the config file that cannot be used; the entry's name is kept as data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadBackend {
    #[error("backends.{name}: command must name a program")]
    NoProgram { name: String },
    #[error("backends.{name}: timeout_s must be at least 1")]
    ZeroTimeout { name: String },
    #[error("backends.{name}: base_url {base_url:?} must start with http:// or https://")]
    BadUrl { name: String, base_url: String },
    #[error("backends.{name}: model is empty")]
    NoModel { name: String },
    #[error("backends.{name}: max_retries {max_retries} is more than 10")]
    TooManyRetries { name: String, max_retries: u32 },
}

fn validate(name: &str, spec: &BackendSpec) -> std::result::Result<(), BadBackend> {
    let name = name.to_string();
    match spec {
        BackendSpec::Builtin => Ok(()),
        BackendSpec::Cli { command, timeout_s } => {
            if command.first().is_none_or(|c| c.trim().is_empty()) {
                return Err(BadBackend::NoProgram { name });
            }
            if *timeout_s == 0 {
                return Err(BadBackend::ZeroTimeout { name });
            }
            Ok(())
        }
        BackendSpec::Http {
            base_url,
            model,
            timeout_s,
            max_retries,
            ..
        } => {
            if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
                return Err(BadBackend::BadUrl {
                    name,
                    base_url: base_url.clone(),
                });
            }
            if model.trim().is_empty() {
                return Err(BadBackend::NoModel { name });
            }
            if *timeout_s == 0 {
                return Err(BadBackend::ZeroTimeout { name });
            }
            if *max_retries > 10 {
                return Err(BadBackend::TooManyRetries {
                    name,
                    max_retries: *max_retries,
                });
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Result<BackendConfig> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
        BackendConfig::load(None, dir.path())
    }

    const SAMPLE: &str = r#"
[backends.claude]
kind = "cli"
command = ["claude", "-p", "--output-format", "text"]
timeout_s = 900

[backends.local]
kind = "http"
base_url = "http://127.0.0.1:11434/v1"
model = "qwen2.5-coder:7b"
api_key_env = "OPENAI_API_KEY"

[roles.generator]
backend = ["claude", "local", "builtin"]

[roles.analyst]
backend = "local"
"#;

    #[test]
    fn the_issue_example_parses_and_chains_in_order() {
        let c = config(SAMPLE).unwrap();
        let chain = c.chain_for("generator", &BTreeMap::new(), None).unwrap();
        let names: Vec<&str> = chain.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["claude", "local", "builtin"]);
        assert_eq!(chain[1].secret_env(), Some("OPENAI_API_KEY"));
        let analyst = c.chain_for("analyst", &BTreeMap::new(), None).unwrap();
        assert_eq!(analyst[0].name, "local");
        // No entry anywhere: the built-in one.
        let executor = c.chain_for("executor", &BTreeMap::new(), None).unwrap();
        assert!(executor[0].is_builtin());
    }

    #[test]
    fn the_command_line_wins_over_the_role_file_which_wins_over_the_config() {
        let c = config(SAMPLE).unwrap();
        let role_file = vec!["codex".to_string()];
        let none = BTreeMap::new();
        let from_file = c.chain_for("generator", &none, Some(&role_file)).unwrap();
        assert_eq!(from_file[0].name, "codex");
        let cli = parse_overrides(&["generator=local,builtin".into()]).unwrap();
        let from_cli = c.chain_for("generator", &cli, Some(&role_file)).unwrap();
        let names: Vec<&str> = from_cli.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["local", "builtin"]);
    }

    #[test]
    fn bad_configs_name_the_file_and_the_problem() {
        let unknown = config("[roles.generator]\nbackend = [\"nope\"]\n").unwrap_err();
        assert!(
            unknown.to_string().contains("team-testing.toml"),
            "{unknown}"
        );
        assert!(
            unknown.to_string().contains("unknown backend \"nope\""),
            "{unknown}"
        );
        let url =
            config("[backends.x]\nkind = \"http\"\nbase_url = \"localhost\"\nmodel = \"m\"\n")
                .unwrap_err();
        assert!(url.to_string().contains("must start with http"), "{url}");
        let syntax = config("[backends.x\n").unwrap_err();
        assert!(syntax.to_string().contains("invalid config"), "{syntax}");
        let kind = config("[backends.x]\nkind = \"ftp\"\n").unwrap_err();
        assert!(kind.to_string().contains("invalid config"), "{kind}");
        assert!(parse_overrides(&["generator".into()]).is_err());
        let none = BTreeMap::new();
        let cli = parse_overrides(&["generator=missing".into()]).unwrap();
        let err = BackendConfig::default().chain_for("generator", &cli, None);
        assert!(err.unwrap_err().to_string().contains("unknown backend"));
        assert!(BackendConfig::default().chain_for("x", &none, None).is_ok());
    }

    #[test]
    fn presets_cover_the_agent_clis_users_have() {
        let p = presets();
        for name in ["builtin", "claude", "codex", "gemini", "qwen", "opencode"] {
            assert!(p.contains_key(name), "{name}");
        }
    }
}
