//! `team-testing apply [SESSION]`: copies a session's accepted tests into the repository, where the
//! project's own runner picks them up. Nothing else in the repository changes, and an existing
//! file with other content is never overwritten without `--force`.

use std::path::{Path, PathBuf};

use clap::Args;

use super::Location;
use crate::error::Error;
use crate::session::{self, SessionDir, LAYER_DIRS};
use crate::testing::detect::session_framework;

#[derive(Args, Debug)]
pub struct ApplyArgs {
    /// Session id under the sessions root, or its path (default: the one active or paused).
    pub session: Option<String>,
    #[command(flatten)]
    pub location: Location,
    /// Replace files that already exist with other content.
    #[arg(long)]
    pub force: bool,
    /// Say what would be copied, copy nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Apply one layer's tests only (L1, L2 or L3).
    #[arg(long, value_name = "LAYER")]
    pub layer: Option<String>,
}

/// Where apply remembers what it wrote (repository-relative path and sha256), beside the tests
/// it applies, so that a later apply may replace its own unchanged files but never one it did not
/// create or one edited since.
fn manifest_path(repo: &Path, framework: &str) -> PathBuf {
    let dir = match framework {
        "cargo" => "tests",
        "node" | "jest" | "vitest" | "mocha" => "tt-tests",
        _ => "tests/team_testing",
    };
    repo.join(dir).join(".team-testing-applied.json")
}

fn sha256(bytes: &[u8]) -> String {
    crate::agents::record::sha256_hex(bytes)
}

/// Makes the applied Python tests importable under plain `pytest` from the repository root
/// (the repository and its src/ go on sys.path), whatever the project's own configuration.
const PY_CONFTEST: &str = "\"\"\"Written by `team-testing apply`: puts the repository (and its src/) on sys.path.\"\"\"\nimport pathlib\nimport sys\n\nROOT = pathlib.Path(__file__).resolve().parents[2]\nfor path in (ROOT / \"src\", ROOT):\n    if path.is_dir() and str(path) not in sys.path:\n        sys.path.insert(0, str(path))\n";

pub fn apply(args: ApplyArgs) -> anyhow::Result<i32> {
    let root = args.location.root();
    let session = session::resolve(&root, args.session.as_deref())?;
    let state = session.load_state()?;
    if !state.repo.is_dir() {
        return Err(Error::MissingRepo { path: state.repo }.into());
    }
    let framework = session_framework(&session, &state.repo);
    let layers: Vec<&str> = match &args.layer {
        None => LAYER_DIRS.to_vec(),
        Some(l) => {
            let want = l.to_ascii_lowercase();
            let found: Vec<&str> = LAYER_DIRS
                .iter()
                .copied()
                .filter(|d| {
                    let d = d.to_ascii_lowercase();
                    d == want || d.split('-').next() == Some(want.as_str())
                })
                .collect();
            if found.is_empty() {
                return Err(Error::Usage(format!(
                    "--layer {l}: no such layer ({})",
                    LAYER_DIRS.join(", ")
                ))
                .into());
            }
            found
        }
    };
    let plan = plan(&session, &state.repo, &framework, &layers);
    let manifest_path = manifest_path(&state.repo, &framework);
    let mut manifest: std::collections::BTreeMap<String, String> =
        crate::util::read_json(&manifest_path).unwrap_or_default();
    if plan.is_empty() {
        println!(
            "nothing to apply: session {} has no generated tests",
            session.id
        );
        return Ok(0);
    }
    let mut conflicts = Vec::new();
    for (from, to) in &plan {
        let current = std::fs::read(to).ok();
        let same = current == std::fs::read(from).ok();
        let rel = to
            .strip_prefix(&state.repo)
            .unwrap_or(to)
            .display()
            .to_string();
        // Ours and untouched since: a newer round may replace it.
        let ours = current
            .as_ref()
            .is_some_and(|c| manifest.get(&rel) == Some(&sha256(c)));
        if to.exists() && !same && !ours && !args.force {
            conflicts.push(to.display().to_string());
        }
    }
    if !conflicts.is_empty() {
        return Err(Error::Session(format!(
            "these files exist with other content (use --force to replace them): {}",
            conflicts.join(", ")
        ))
        .into());
    }
    for (from, to) in &plan {
        println!("{} -> {}", from.display(), to.display());
        if args.dry_run {
            continue;
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
        }
        std::fs::copy(from, to)
            .map_err(|e| Error::io(format!("copying to {}", to.display()), e))?;
        let rel = to
            .strip_prefix(&state.repo)
            .unwrap_or(to)
            .display()
            .to_string();
        let bytes =
            std::fs::read(to).map_err(|e| Error::io(format!("reading {}", to.display()), e))?;
        manifest.insert(rel, sha256(&bytes));
    }
    if !args.dry_run {
        if let Some(parent) = manifest_path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
        }
        crate::util::atomic_write_json(&manifest_path, &manifest)?;
    }
    if matches!(framework.as_str(), "pytest" | "unittest") && !args.dry_run {
        write_python_support(&state.repo)?;
        println!("run them with: pytest tests/team_testing");
    }
    Ok(0)
}

/// (generated file, destination in the repository) for every kept test of every layer.
fn plan(
    session: &SessionDir,
    repo: &Path,
    framework: &str,
    layers: &[&str],
) -> Vec<(PathBuf, PathBuf)> {
    let mut plan = Vec::new();
    for &layer in layers {
        let dir = session.root.join("tests").join(layer);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        let code = layer.split('-').next().unwrap_or(layer);
        for file in files {
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let dest = match framework {
                "pytest" | "unittest" if name.ends_with(".py") => repo
                    .join("tests/team_testing")
                    .join(python_package(layer))
                    .join(&name),
                "cargo" if name.ends_with(".rs") => {
                    repo.join("tests").join(format!("tt_{code}_{name}"))
                }
                "node" | "jest" | "vitest" | "mocha"
                    if name.ends_with(".js") || name.ends_with(".mjs") =>
                {
                    repo.join("tt-tests").join(layer).join(&name)
                }
                _ => continue,
            };
            plan.push((file, dest));
        }
    }
    plan
}

/// `L1-unit` -> `l1_unit`: a package name, so files of the same name in two layers do not clash.
fn python_package(layer: &str) -> String {
    layer.to_lowercase().replace('-', "_")
}

fn write_python_support(repo: &Path) -> anyhow::Result<()> {
    let base = repo.join("tests/team_testing");
    let mut files = vec![
        (base.join("conftest.py"), PY_CONFTEST.to_string()),
        (base.join("__init__.py"), String::new()),
    ];
    for layer in LAYER_DIRS {
        let pkg = base.join(python_package(layer));
        if pkg.is_dir() {
            files.push((pkg.join("__init__.py"), String::new()));
        }
    }
    for (path, text) in files {
        if !path.exists() {
            std::fs::write(&path, text)
                .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
        }
    }
    Ok(())
}
