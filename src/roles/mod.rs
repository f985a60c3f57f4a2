//! The role registry: roles/<role>/role.md files (YAML frontmatter + prompt body). Built-in roles ship
//! inside the binary; `--roles-dir DIR` and a session's role-specs/ override or add roles by name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::tasks::InnerLoop;

/// Default timeout of a command role, in seconds.
pub const DEFAULT_TIMEOUT_S: u64 = 1800;

const BUILTIN_ROLES: [(&str, &str); 6] = [
    (
        "coordinator",
        include_str!("../../roles/coordinator/role.md"),
    ),
    ("strategist", include_str!("../../roles/strategist/role.md")),
    ("generator", include_str!("../../roles/generator/role.md")),
    ("executor", include_str!("../../roles/executor/role.md")),
    ("analyst", include_str!("../../roles/analyst/role.md")),
    ("fixer", include_str!("../../roles/fixer/role.md")),
];

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Frontmatter {
    /// Missing in the seed's role-specs/<role>.md files: the name then comes from the path.
    #[serde(default)]
    role: Option<String>,
    prefix: Option<String>,
    inner_loop: InnerLoop,
    #[serde(default)]
    message_types: MessageTypes,
    /// Missing in the seed's files, whose roles are all built in.
    #[serde(default)]
    backend: Option<String>,
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    timeout_s: Option<u64>,
    #[serde(default)]
    description: Option<String>,
    /// A command role that runs the project's code (a mutation run, a fuzzer) asks for the
    /// sandbox the test runs get.
    #[serde(default)]
    sandbox: bool,
    /// The agent backend (or fallback chain) of a built-in role: `agent: [claude, builtin]`.
    #[serde(default)]
    agent: Option<AgentNames>,
    #[serde(default, rename = "allowed-tools")]
    allowed_tools: Vec<String>,
}

/// `message_types`: a list (team-testing's form) or the seed's map of kind -> message type
/// (`{success: strategy_ready, error: error}`).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
enum MessageTypes {
    List(Vec<String>),
    Map(BTreeMap<String, String>),
}

// By hand rather than `untagged`, whose error names neither the field nor what it expects.
impl<'de> Deserialize<'de> for MessageTypes {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> std::result::Result<Self, D::Error> {
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};

        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = MessageTypes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of message types or a map of kind: message type")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> std::result::Result<MessageTypes, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(MessageTypes::List)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> std::result::Result<MessageTypes, A::Error> {
                BTreeMap::deserialize(MapAccessDeserializer::new(map)).map(MessageTypes::Map)
            }
        }
        de.deserialize_any(Visit)
    }
}

impl Default for MessageTypes {
    fn default() -> Self {
        MessageTypes::List(Vec::new())
    }
}

/// The role's name from its path: `<dir>/<name>/role.md` or `<dir>/<name>.md`.
fn name_from_path(path: &Path) -> String {
    let named = if path.file_name().is_some_and(|f| f == "role.md") {
        path.parent().and_then(Path::file_name)
    } else {
        path.file_stem()
    };
    named
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum AgentNames {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Backend {
    /// The role's work is done in-process by team-testing itself.
    Builtin,
    /// A child process: task JSON on stdin, outcome JSON as the last stdout line.
    Command { argv: Vec<String> },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RoleSource {
    Builtin,
    RolesDir(PathBuf),
    Session(PathBuf),
}

#[derive(Debug, Clone, Serialize)]
pub struct RoleSpec {
    pub name: String,
    pub prefix: Option<String>,
    pub inner_loop: InnerLoop,
    /// The distinct message types the role sends (for the map form: its values, in kind order).
    pub message_types: Vec<String>,
    /// The seed's map form of `message_types`, kind -> message type (`success: strategy_ready`);
    /// empty for the list form.
    pub message_kinds: BTreeMap<String, String>,
    pub backend: Backend,
    pub timeout_s: u64,
    pub description: String,
    /// Command roles only: run inside the session's sandbox (`sandbox: true`).
    pub sandbox: bool,
    /// Built-in roles: the agent backend chain the role file names (`agent:`), if any.
    pub agent: Option<Vec<String>>,
    /// The seed's tool permissions for agent CLIs (`allowed-tools: [Read, Write, …]`);
    /// team-testing's built-in roles do not use it.
    pub allowed_tools: Vec<String>,
    pub body: String,
    pub source: RoleSource,
    /// Folder of the role file; `{role_dir}` in a command is replaced by it.
    pub dir: Option<PathBuf>,
}

impl RoleSpec {
    /// Parses a role file. `path` names it in errors.
    pub fn parse(text: &str, path: &Path, source: RoleSource) -> Result<Self> {
        let bad = |problem: String| Error::bad_file(path, problem);
        let rest = text
            .strip_prefix("---\n")
            .or_else(|| text.strip_prefix("---\r\n"))
            .ok_or_else(|| bad("role file must start with a '---' frontmatter line".into()))?;
        let end = rest
            .find("\n---")
            .ok_or_else(|| bad("frontmatter is not closed by a '---' line".into()))?;
        let yaml = &rest[..end];
        let body = rest[end + 4..]
            .trim_start_matches(['-', '\r', '\n'])
            .to_string();
        let fm: Frontmatter =
            serde_norway::from_str(yaml).map_err(|e| bad(format!("invalid frontmatter: {e}")))?;
        // `role:` wins over the path, as it always has.
        let name = fm.role.clone().unwrap_or_else(|| name_from_path(path));
        let role_err = |problem: String| Error::BadRole {
            path: path.to_path_buf(),
            role: name.clone(),
            problem,
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        {
            return Err(role_err(
                "role name must be lowercase [a-z0-9-_] and not empty".into(),
            ));
        }
        if let Some(prefix) = &fm.prefix {
            if prefix.is_empty()
                || !prefix
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
            {
                return Err(role_err(format!(
                    "prefix '{prefix}' must be uppercase letters and digits"
                )));
            }
        }
        let is_builtin = BUILTIN_ROLES.iter().any(|(n, _)| *n == name);
        let backend_name = match fm.backend.as_deref() {
            Some(b) => b,
            // The seed's files name no backend: its roles are the built-in ones.
            None if is_builtin => "builtin",
            None => {
                return Err(role_err(format!(
                    "no backend named, and team-testing has no built-in implementation of \
                     role {name}: use backend: command with a 'command' list, or backend: builtin \
                     naming the agent backend that does its work (agent: [claude])"
                )))
            }
        };
        let backend = match backend_name {
            "builtin" => {
                if fm.command.is_some() {
                    return Err(role_err("'command' is only for backend: command".into()));
                }
                Backend::Builtin
            }
            "command" => match fm.command {
                Some(argv) if !argv.is_empty() && !argv[0].is_empty() => Backend::Command { argv },
                _ => {
                    return Err(role_err(
                        "backend: command needs a non-empty 'command' list".into(),
                    ))
                }
            },
            other => {
                return Err(role_err(format!(
                    "unknown backend '{other}' (expected builtin or command)"
                )))
            }
        };
        if fm.timeout_s == Some(0) {
            return Err(role_err("timeout_s must be at least 1".into()));
        }
        let (message_types, message_kinds) = match fm.message_types {
            MessageTypes::List(types) => (types, BTreeMap::new()),
            MessageTypes::Map(kinds) => {
                let mut types: Vec<String> = Vec::new();
                for t in kinds.values() {
                    if !types.contains(t) {
                        types.push(t.clone());
                    }
                }
                (types, kinds)
            }
        };
        Ok(RoleSpec {
            name,
            prefix: fm.prefix,
            inner_loop: fm.inner_loop,
            message_types,
            message_kinds,
            backend,
            timeout_s: fm.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S),
            description: fm.description.unwrap_or_default(),
            sandbox: fm.sandbox,
            agent: fm.agent.map(|a| match a {
                AgentNames::One(n) => vec![n],
                AgentNames::Many(v) => v,
            }),
            allowed_tools: fm.allowed_tools,
            body,
            dir: path.parent().map(Path::to_path_buf),
            source,
        })
    }

    pub fn source_label(&self) -> String {
        match &self.source {
            RoleSource::Builtin => format!("built-in roles/{}/role.md", self.name),
            RoleSource::RolesDir(p) | RoleSource::Session(p) => p.display().to_string(),
        }
    }
}

/// Every role by name.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    roles: BTreeMap<String, RoleSpec>,
}

impl Registry {
    /// Built-in roles, then `roles_dir` (each `<dir>/<role>/role.md`) overriding or adding by name.
    pub fn load(roles_dir: Option<&Path>) -> Result<Self> {
        let mut reg = Registry::default();
        for (name, text) in BUILTIN_ROLES {
            let path = PathBuf::from(format!("roles/{name}/role.md"));
            reg.insert(RoleSpec::parse(text, &path, RoleSource::Builtin)?)?;
        }
        if let Some(dir) = roles_dir {
            reg.load_dir(dir, RoleSource::RolesDir)?;
        }
        Ok(reg)
    }

    /// Adds every `<dir>/<name>/role.md` (and `<dir>/<name>.md`) found.
    pub fn load_dir(&mut self, dir: &Path, source: fn(PathBuf) -> RoleSource) -> Result<()> {
        let entries = std::fs::read_dir(dir)
            .map_err(|e| Error::io(format!("reading roles dir {}", dir.display()), e))?;
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .filter_map(|e| {
                let p = e.path();
                if p.is_dir() {
                    let f = p.join("role.md");
                    f.is_file().then_some(f)
                } else {
                    (p.extension().is_some_and(|x| x == "md")).then_some(p)
                }
            })
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| Error::io(format!("reading {}", file.display()), e))?;
            let spec = RoleSpec::parse(&text, &file, source(file.clone()))?;
            self.insert(spec)?;
        }
        Ok(())
    }

    /// Adds or replaces a role; a prefix already used by another role is an error.
    pub fn insert(&mut self, spec: RoleSpec) -> Result<()> {
        if let Some(prefix) = &spec.prefix {
            if let Some(other) = self
                .roles
                .values()
                .find(|r| r.name != spec.name && r.prefix.as_ref() == Some(prefix))
            {
                return Err(Error::BadRole {
                    path: PathBuf::from(spec.source_label()),
                    role: spec.name.clone(),
                    problem: format!(
                        "prefix {prefix} is already used by role {} ({})",
                        other.name,
                        other.source_label()
                    ),
                });
            }
        }
        self.roles.insert(spec.name.clone(), spec);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&RoleSpec> {
        self.roles.get(name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.roles.contains_key(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &RoleSpec> {
        self.roles.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_roles_parse() {
        let reg = Registry::load(None).unwrap();
        assert_eq!(
            reg.get("executor").unwrap().prefix.as_deref(),
            Some("TESTRUN")
        );
        assert!(reg.get("coordinator").unwrap().prefix.is_none());
    }

    #[test]
    fn bad_frontmatter_names_the_file() {
        let err = RoleSpec::parse("no frontmatter", Path::new("r/x.md"), RoleSource::Builtin)
            .unwrap_err();
        assert!(err.to_string().starts_with("r/x.md: "), "{err}");
        let text = "---\nrole: x\nprefix: X\ninner_loop: false\nmessage_types: []\nbackend: command\n---\nbody";
        let err = RoleSpec::parse(text, Path::new("r/x.md"), RoleSource::Builtin).unwrap_err();
        assert!(
            err.to_string().contains("needs a non-empty 'command'"),
            "{err}"
        );
    }

    fn parse(text: &str, path: &str) -> Result<RoleSpec> {
        RoleSpec::parse(text, Path::new(path), RoleSource::Builtin)
    }

    #[test]
    fn message_types_list_or_map() {
        let list = "---\nrole: x\nprefix: X\ninner_loop: false\nmessage_types: [a, b]\nbackend: command\ncommand: [run]\n---\nbody";
        let spec = parse(list, "r/x/role.md").unwrap();
        assert_eq!(spec.message_types, ["a", "b"]);
        assert!(spec.message_kinds.is_empty());

        let map = "---\nrole: x\nprefix: X\ninner_loop: false\nmessage_types: {success: done, error: error, failure: error}\nbackend: command\ncommand: [run]\n---\nbody";
        let spec = parse(map, "r/x/role.md").unwrap();
        // Distinct values, in kind order (error, failure, success).
        assert_eq!(spec.message_types, ["error", "done"]);
        assert_eq!(spec.message_kinds["success"], "done");
        assert_eq!(spec.message_kinds.len(), 3);

        let bad = "---\nrole: x\nprefix: X\ninner_loop: false\nmessage_types: oops\nbackend: command\ncommand: [run]\n---\nbody";
        let err = parse(bad, "r/x/role.md").unwrap_err().to_string();
        assert!(err.contains("message_types: invalid type"), "{err}");

        let none = "---\nrole: x\nprefix: X\ninner_loop: false\nbackend: command\ncommand: [run]\n---\nbody";
        assert!(parse(none, "r/x/role.md").unwrap().message_types.is_empty());
    }

    #[test]
    fn seed_role_files_load_as_builtin() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/roles/seed");
        let reg = Registry::load(Some(&dir)).unwrap();
        let expected: [(&str, Option<&str>, &[&str]); 5] = [
            ("coordinator", None, &[]),
            ("strategist", Some("STRATEGY"), &["error", "strategy_ready"]),
            (
                "generator",
                Some("TESTGEN"),
                &["error", "tests_revised", "tests_generated"],
            ),
            (
                "executor",
                Some("TESTRUN"),
                &["coverage_report", "error", "tests_failed", "tests_passed"],
            ),
            ("analyst", Some("TESTANA"), &["error", "analysis_ready"]),
        ];
        for (name, prefix, types) in expected {
            let spec = reg.get(name).unwrap();
            assert!(matches!(spec.source, RoleSource::RolesDir(_)), "{name}");
            assert_eq!(spec.backend, Backend::Builtin, "{name}");
            assert_eq!(spec.prefix.as_deref(), prefix, "{name}");
            assert_eq!(spec.message_types, types, "{name}");
            assert_eq!(spec.message_kinds.len(), types.len(), "{name}");
            assert!(spec.allowed_tools.contains(&"Read".to_string()), "{name}");
        }
        let executor = reg.get("executor").unwrap();
        assert_eq!(executor.message_kinds["failure"], "tests_failed");
        assert_eq!(
            executor.inner_loop,
            InnerLoop::Dynamic(crate::tasks::DynamicMarker::Dynamic)
        );
        let generator = reg.get("generator").unwrap();
        assert_eq!(generator.message_kinds["revision"], "tests_revised");
        assert!(generator.body.contains("Marker: seed-generator-body"));
    }

    #[test]
    fn role_spec_layout_takes_its_name_from_the_file() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/roles/seed-specs");
        let mut reg = Registry::default();
        reg.load_dir(&dir, RoleSource::Session).unwrap();
        let spec = reg.get("generator").unwrap();
        assert_eq!(spec.backend, Backend::Builtin);
        assert_eq!(spec.prefix.as_deref(), Some("TESTGEN"));
        assert_eq!(spec.message_kinds["success"], "tests_generated");
        assert!(spec.allowed_tools.is_empty());
        // `role:` still wins over the path.
        let text = "---\nrole: analyst\nprefix: TESTANA\ninner_loop: false\n---\nbody";
        assert_eq!(parse(text, "r/other.md").unwrap().name, "analyst");
    }

    #[test]
    fn non_builtin_role_without_backend_is_refused() {
        let text =
            "---\nprefix: LINT\ninner_loop: false\nmessage_types: {success: lint_done}\n---\nbody";
        let err = parse(text, "specs/lint.md").unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("specs/lint.md: role lint: "), "{msg}");
        assert!(msg.contains("backend: command"), "{msg}");
    }

    #[test]
    fn unknown_keys_are_still_refused() {
        let text =
            "---\nrole: generator\nprefix: TESTGEN\ninner_loop: true\nbackendd: builtin\n---\nbody";
        let err = parse(text, "r/generator/role.md").unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("r/generator/role.md: "), "{msg}");
        assert!(msg.contains("unknown field `backendd`"), "{msg}");
    }
}
