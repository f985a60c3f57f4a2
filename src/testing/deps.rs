//! The project's dependencies, fetched before anything runs in the sandbox (which has no
//! network), each family with the fetch that runs none of the project's code: `cargo fetch`
//! (with `cargo generate-lockfile` for a crate without a lock), `go mod download`, `npm ci
//! --ignore-scripts` (or `npm install --ignore-scripts`) for a package without node_modules;
//! a Python project runs in the interpreter the user gave it (its `.venv`). Nothing is written
//! into the user's tree: cargo and go fetch from a copy into their own caches, npm installs into
//! a folder of the session's (`workspace/node-deps`), which the runs link as node_modules.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::framework::{Family, Framework};

/// How long one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(300);

/// What preparing the dependencies came to, as the strategist records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Deps {
    /// The project declares none, or its family needs no fetch.
    NotNeeded,
    /// Already there (the project's node_modules, the caches).
    Present {
        detail: String,
    },
    Fetched {
        command: String,
        seconds: f64,
    },
    /// The fetch failed: runs go on and say why they fail; the command is what to run.
    Failed {
        command: String,
        problem: String,
    },
}

impl Deps {
    pub fn failed(&self) -> Option<(&str, &str)> {
        match self {
            Deps::Failed { command, problem } => Some((command, problem)),
            _ => None,
        }
    }
}

/// The folder of the session's that holds a package's fetched node_modules.
pub fn node_deps_dir(session: &Path) -> PathBuf {
    session.join("workspace").join("node-deps")
}

/// The node_modules a run of the package at `repo` uses: its own, else the one fetched into the
/// session; None when there is neither.
pub fn node_modules(repo: &Path, session: &Path) -> Option<PathBuf> {
    let own = repo.join("node_modules");
    if own.exists() {
        return own.canonicalize().ok();
    }
    let fetched = node_deps_dir(session).join("node_modules");
    fetched.is_dir().then_some(fetched)
}

/// Fetches what the project at `repo` needs, outside the sandbox, into the caches or the
/// session's `workspace/`.
pub fn prepare(repo: &Path, session: &Path, framework: Option<Framework>) -> Deps {
    match framework.map(Framework::family) {
        Some(Family::Cargo) => cargo(repo, session),
        Some(Family::Go) => go(repo, session),
        Some(Family::Node) => node(repo, session),
        Some(Family::Python) | None => Deps::NotNeeded,
    }
}

/// Why a fetch did not work, in the words the record keeps.
#[derive(Debug, thiserror::Error)]
enum FetchError {
    #[error("{0}")]
    Start(#[from] crate::proc::ProcError),
    #[error("{0}")]
    Said(String),
    #[error("cannot copy {} to {}: {cause}", from.display(), to.display())]
    Copy {
        from: PathBuf,
        to: PathBuf,
        cause: std::io::Error,
    },
}

fn run(argv: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Result<f64, FetchError> {
    let started = Instant::now();
    let out = crate::proc::run_captured_env(argv, cwd, env, FETCH_TIMEOUT)?;
    if out.success() {
        Ok(started.elapsed().as_secs_f64())
    } else {
        Err(FetchError::Said(crate::util::tail_lines(
            &format!("{}{}", out.stdout, out.stderr),
            6,
        )))
    }
}

fn copy_of(repo: &Path, session: &Path, name: &str) -> Result<PathBuf, FetchError> {
    let copy = session.join("workspace").join(name);
    crate::workspace::mirror(repo, &copy, &Default::default()).map_err(|cause| {
        FetchError::Copy {
            from: repo.to_path_buf(),
            to: copy.clone(),
            cause,
        }
    })?;
    Ok(copy)
}

/// A crate with dependencies: its lock (made in a copy when it has none, kept for the runs
/// beside their copies), then `cargo fetch`, which downloads and builds nothing of the crate.
fn cargo(repo: &Path, session: &Path) -> Deps {
    let Ok(manifest) = std::fs::read_to_string(repo.join("Cargo.toml")) else {
        return Deps::NotNeeded;
    };
    let declares = [
        "[dependencies",
        "[dev-dependencies",
        "[build-dependencies",
        "[workspace",
    ]
    .iter()
    .any(|t| manifest.contains(t));
    if !declares {
        return Deps::NotNeeded;
    }
    let copy = match copy_of(repo, session, "cargo-deps") {
        Ok(c) => c,
        Err(problem) => {
            return Deps::Failed {
                command: "cargo fetch".into(),
                problem: problem.to_string(),
            }
        }
    };
    let mut seconds = 0.0;
    let kept = session.join("workspace").join("cargo-generated.lock");
    if !repo.join("Cargo.lock").exists() {
        match run(&["cargo", "generate-lockfile"], &copy, &[]) {
            Ok(s) => seconds += s,
            Err(problem) => {
                return Deps::Failed {
                    command: "cargo generate-lockfile".into(),
                    problem: problem.to_string(),
                }
            }
        }
        if let Ok(lock) = std::fs::read(copy.join("Cargo.lock")) {
            let _ = crate::util::write_nofollow(&kept, &lock);
        }
    }
    match run(&["cargo", "fetch"], &copy, &[]) {
        Ok(s) => Deps::Fetched {
            command: "cargo fetch".into(),
            seconds: seconds + s,
        },
        // Offline with everything cached is no failure.
        Err(problem) => match run(&["cargo", "fetch", "--offline"], &copy, &[]) {
            Ok(_) => Deps::Present {
                detail: "cargo's cache has every dependency".into(),
            },
            Err(_) => Deps::Failed {
                command: "cargo fetch".into(),
                problem: problem.to_string(),
            },
        },
    }
}

/// A module that requires others: `go mod download` from a copy into the module cache.
fn go(repo: &Path, session: &Path) -> Deps {
    let Ok(modfile) = std::fs::read_to_string(repo.join("go.mod")) else {
        return Deps::NotNeeded;
    };
    if !modfile
        .lines()
        .any(|l| l.trim_start().starts_with("require"))
    {
        return Deps::NotNeeded;
    }
    let copy = match copy_of(repo, session, "go-deps") {
        Ok(c) => c,
        Err(problem) => {
            return Deps::Failed {
                command: "go mod download".into(),
                problem: problem.to_string(),
            }
        }
    };
    match run(
        &["go", "mod", "download"],
        &copy,
        &[("GOFLAGS", "-mod=mod")],
    ) {
        Ok(seconds) => Deps::Fetched {
            command: "go mod download".into(),
            seconds,
        },
        Err(problem) => Deps::Failed {
            command: "go mod download".into(),
            problem: problem.to_string(),
        },
    }
}

/// A package that declares dependencies and has no node_modules: npm installs them, running
/// none of their scripts, into the session's `workspace/node-deps`.
fn node(repo: &Path, session: &Path) -> Deps {
    let Ok(text) = std::fs::read_to_string(repo.join("package.json")) else {
        return Deps::NotNeeded;
    };
    let pkg: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let declares = ["dependencies", "devDependencies"]
        .iter()
        .any(|k| pkg[k].as_object().is_some_and(|m| !m.is_empty()));
    if !declares {
        return Deps::NotNeeded;
    }
    if repo.join("node_modules").exists() {
        return Deps::Present {
            detail: "the package's own node_modules".into(),
        };
    }
    let dir = node_deps_dir(session);
    if dir.join("node_modules").is_dir() {
        return Deps::Present {
            detail: "fetched earlier into the session".into(),
        };
    }
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Deps::Failed {
            command: "npm install --ignore-scripts".into(),
            problem: e.to_string(),
        };
    }
    let mut locked = false;
    for name in ["package.json", "package-lock.json", "npm-shrinkwrap.json"] {
        if let Ok(bytes) = crate::util::read_regular(&repo.join(name)) {
            locked |= name != "package.json";
            let _ = crate::util::write_nofollow(&dir.join(name), &bytes);
        }
    }
    let argv: &[&str] = if locked {
        &["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"]
    } else {
        &[
            "npm",
            "install",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--no-package-lock",
        ]
    };
    let command = argv[..3].join(" ");
    match run(argv, &dir, &[]) {
        Ok(seconds) => Deps::Fetched { command, seconds },
        Err(problem) => {
            let _ = std::fs::remove_dir_all(dir.join("node_modules"));
            Deps::Failed {
                command,
                problem: problem.to_string(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projects_that_declare_nothing_need_no_fetch() {
        let dir = tempfile::tempdir().unwrap();
        let session = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        assert_eq!(
            prepare(dir.path(), session.path(), Some(Framework::Cargo)),
            Deps::NotNeeded
        );
        std::fs::write(dir.path().join("package.json"), r#"{"name": "x"}"#).unwrap();
        assert_eq!(
            prepare(dir.path(), session.path(), Some(Framework::NodeTest)),
            Deps::NotNeeded
        );
        std::fs::write(dir.path().join("go.mod"), "module x\n\ngo 1.19\n").unwrap();
        assert_eq!(
            prepare(dir.path(), session.path(), Some(Framework::Go)),
            Deps::NotNeeded
        );
    }
}
