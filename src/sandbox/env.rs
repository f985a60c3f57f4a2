//! The environment a sandboxed child sees: the parent's, minus anything that looks like a
//! credential, with its home, temporary and XDG folders moved into the sandbox.

use std::ffi::OsString;
use std::path::Path;

/// Suffixes of variable names that hold secrets.
const SECRET_SUFFIXES: &[&str] = &[
    "_KEY",
    "_TOKEN",
    "_SECRET",
    "_PASSWORD",
    "_PASSWD",
    "_CREDENTIALS",
    "_API_KEY",
    "_PAT",
    "_DSN",
    "_PWD",
];
/// Prefixes of variable names that belong to cloud and forge credentials.
const SECRET_PREFIXES: &[&str] = &["AWS_", "GITHUB_", "GH_", "AZURE_", "GOOGLE_", "GCP_"];
/// Whole names: agent and service sockets that would let the child use the user's keys or
/// daemons, and the usual database passwords and URLs.
const SECRET_NAMES: &[&str] = &[
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DOCKER_HOST",
    "PGPASSWORD",
    "PGPASSFILE",
    "MYSQL_PWD",
    "DATABASE_URL",
    "REDIS_URL",
    "KUBECONFIG",
    "NPM_TOKEN",
    "PYPI_TOKEN",
    "CARGO_REGISTRY_TOKEN",
    "NETRC",
    // The cluster's server URL may carry user:password, and its password variable is one.
    "TEAM_TESTING_NATS",
    "TEAM_TESTING_NATS_PASSWORD",
];

/// Whether `name` looks like a credential. `extra` are more names known to hold one (a
/// backend's `api_key_env`).
pub fn is_secret(name: &str, extra: &[String]) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAMES.contains(&upper.as_str())
        || extra.iter().any(|e| e.eq_ignore_ascii_case(name))
        || SECRET_SUFFIXES.iter().any(|s| upper.ends_with(s))
        || SECRET_PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// The child's environment from the parent's `vars`: secrets dropped unless in `allow`, and
/// the identity variables pointed into `root` (HOME, TMPDIR, XDG_*). Returns it with the names
/// that were dropped.
pub fn child_env(
    vars: impl Iterator<Item = (OsString, OsString)>,
    root: &Path,
    allow: &[String],
    extra_secrets: &[String],
) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for (name, value) in vars {
        // A name that is not UTF-8 is judged by its readable part.
        let text = name.to_string_lossy().into_owned();
        if is_identity(&text) {
            continue;
        }
        if is_secret(&text, extra_secrets) && !allow.iter().any(|a| a == &text) {
            dropped.push(text);
            continue;
        }
        kept.push((name, value));
    }
    let home = root.join("home");
    let tmp = root.join("tmp");
    let at = |p: &Path| p.display().to_string();
    kept.extend(
        [
            ("HOME", at(&home)),
            ("TMPDIR", at(&tmp)),
            ("TMP", at(&tmp)),
            ("TEMP", at(&tmp)),
            ("XDG_CONFIG_HOME", at(&home.join(".config"))),
            ("XDG_CACHE_HOME", at(&home.join(".cache"))),
            ("XDG_DATA_HOME", at(&home.join(".local/share"))),
            ("XDG_STATE_HOME", at(&home.join(".local/state"))),
            ("XDG_RUNTIME_DIR", at(&tmp)),
        ]
        .into_iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    dropped.sort();
    (kept, dropped)
}

fn is_identity(name: &str) -> bool {
    matches!(name, "HOME" | "TMPDIR" | "TMP" | "TEMP") || name.starts_with("XDG_")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(names: &[&str]) -> impl Iterator<Item = (OsString, OsString)> {
        names
            .iter()
            .map(|n| (OsString::from(n), OsString::from("v")))
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn credentials_are_dropped_and_the_rest_kept() {
        let (kept, dropped) = child_env(
            vars(&[
                "PATH",
                "OPENAI_API_KEY",
                "AWS_PROFILE",
                "GITHUB_TOKEN",
                "MY_SECRET",
                "SSH_AUTH_SOCK",
                "LANG",
                "LOCAL_LLM",
                "PYTHONPATH",
            ]),
            Path::new("/s"),
            &[],
            &["LOCAL_LLM".to_string()],
        );
        let names: Vec<&str> = kept.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert!(
            names.contains(&"PATH") && names.contains(&"LANG") && names.contains(&"PYTHONPATH")
        );
        assert_eq!(
            dropped,
            [
                "AWS_PROFILE",
                "GITHUB_TOKEN",
                "LOCAL_LLM",
                "MY_SECRET",
                "OPENAI_API_KEY",
                "SSH_AUTH_SOCK"
            ]
        );
    }

    #[test]
    fn an_allowed_secret_passes_and_identity_moves_into_the_sandbox() {
        let (kept, dropped) = child_env(
            vars(&["HOME", "XDG_CONFIG_HOME", "TMPDIR", "HF_TOKEN"]),
            Path::new("/s"),
            &["HF_TOKEN".to_string()],
            &[],
        );
        assert!(dropped.is_empty());
        let get = |k: &str| {
            kept.iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.to_str().unwrap())
        };
        assert_eq!(get("HF_TOKEN"), Some("v"));
        assert_eq!(get("HOME"), Some("/s/home"));
        assert_eq!(get("TMPDIR"), Some("/s/tmp"));
        assert_eq!(get("XDG_CONFIG_HOME"), Some("/s/home/.config"));
        assert_eq!(kept.iter().filter(|(n, _)| n == "HOME").count(), 1);
    }
}
