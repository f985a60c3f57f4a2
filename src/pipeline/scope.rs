//! The change scope of the target: which files changed (git), or the whole project.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::proc::run_captured;
use crate::testing::detect::is_code;

const GIT_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
    Renamed,
    Untracked,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangedFile {
    pub path: String,
    pub kind: ChangeKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeScope {
    pub repo: PathBuf,
    pub is_git: bool,
    /// The commit the change is measured against: HEAD, or with `--base REV` the merge base of
    /// REV and HEAD (a branch's whole change).
    pub base_commit: Option<String>,
    /// The `--base` the user gave, if any.
    #[serde(default)]
    pub base_ref: Option<String>,
    /// True when nothing changed, the change touches no source file, or there is no git: every
    /// project file is in scope.
    pub whole_project: bool,
    /// Why the whole project is in scope, in words for the strategy and the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_project_reason: Option<String>,
    pub files: Vec<ChangedFile>,
    pub warnings: Vec<String>,
}

impl ChangeScope {
    /// Distinct top-level folders of the files in scope (`.` for files at the root).
    pub fn modules(&self) -> BTreeSet<String> {
        self.files
            .iter()
            .map(|f| match Path::new(&f.path).parent() {
                Some(p) if !p.as_os_str().is_empty() => p
                    .components()
                    .next()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .unwrap_or_else(|| ".".into()),
                _ => ".".into(),
            })
            .collect()
    }
}

/// Folders never in scope: VCS data, build output, dependencies, and our own sessions.
fn ignored_dir(name: &str) -> bool {
    matches!(
        name,
        ".git"
            | ".workflow"
            | "target"
            | "node_modules"
            | "__pycache__"
            | ".venv"
            | "venv"
            | ".pytest_cache"
            | ".mypy_cache"
            | ".tox"
            | "dist"
            | "build"
    )
}

fn in_ignored_dir(path: &str) -> bool {
    Path::new(path)
        .components()
        .any(|c| ignored_dir(&c.as_os_str().to_string_lossy()))
}

/// Analyses `repo`: a git repository gives its working-tree change against HEAD; a plain folder
/// (or a repository without changes) puts the whole project in scope.
pub fn analyse(repo: &Path, base: Option<&str>) -> Result<ChangeScope> {
    if !repo.is_dir() {
        return Err(Error::MissingRepo {
            path: repo.to_path_buf(),
        });
    }
    let repo = repo
        .canonicalize()
        .map_err(|e| Error::io(format!("resolving {}", repo.display()), e))?;
    let git = |args: &[&str]| -> Result<Option<String>> {
        let mut argv = vec!["git", "-c", "core.quotepath=off"];
        argv.extend_from_slice(args);
        let out = run_captured(&argv, &repo, GIT_TIMEOUT)?;
        Ok(out.success().then_some(out.stdout))
    };
    let is_git =
        matches!(git(&["rev-parse", "--is-inside-work-tree"]), Ok(Some(s)) if s.trim() == "true");
    let mut scope = ChangeScope {
        repo: repo.clone(),
        is_git,
        base_commit: None,
        base_ref: base.map(str::to_string),
        whole_project: false,
        whole_project_reason: None,
        files: Vec::new(),
        warnings: Vec::new(),
    };
    if !is_git {
        if let Some(b) = base {
            return Err(Error::Session(format!(
                "--base {b}: {} is not a git repository",
                repo.display()
            )));
        }
        scope.warnings.push(format!(
            "{} is not a git repository: the whole project is in scope",
            repo.display()
        ));
        scope.whole_project = true;
        scope.whole_project_reason = Some("the folder is not a git repository".into());
        scope.files = walk_files(&repo);
        return Ok(scope);
    }
    scope.base_commit = match base {
        None => git(&["rev-parse", "--verify", "-q", "HEAD"])?.map(|s| s.trim().to_string()),
        Some(b) => {
            // A revision, never an option for git.
            if b.starts_with('-') || b.is_empty() {
                return Err(Error::Session(format!("--base {b}: not a revision name")));
            }
            let spec = format!("{b}^{{commit}}");
            if git(&["rev-parse", "--verify", "-q", &spec])?.is_none() {
                return Err(Error::Session(format!(
                    "--base {b}: no such commit or branch in {}",
                    repo.display()
                )));
            }
            // The merge base: everything the branch changed, plus the working tree.
            let merge_base = git(&["merge-base", b, "HEAD"])?.ok_or_else(|| {
                Error::Session(format!("--base {b}: no common ancestor with HEAD"))
            })?;
            Some(merge_base.trim().to_string())
        }
    };
    let mut files = Vec::new();
    if let Some(base_commit) = scope.base_commit.clone() {
        if let Some(out) = git(&[
            "diff",
            "--relative",
            "--name-status",
            "-M",
            &base_commit,
            "--",
        ])? {
            files.extend(out.lines().filter_map(parse_name_status));
        }
    } else {
        scope
            .warnings
            .push("the repository has no commits yet: every file counts as added".into());
        if let Some(out) = git(&["ls-files", "--cached"])? {
            files.extend(out.lines().map(|p| ChangedFile {
                path: p.to_string(),
                kind: ChangeKind::Added,
            }));
        }
    }
    if let Some(out) = git(&["ls-files", "--others", "--exclude-standard"])? {
        files.extend(out.lines().map(|p| ChangedFile {
            path: p.to_string(),
            kind: ChangeKind::Untracked,
        }));
    }
    files.retain(|f| !in_ignored_dir(&f.path));
    // A change that touches no source file (notes, logs, docs, config) says nothing about what
    // to test: the whole project is.
    let no_source = !files.is_empty()
        && !files
            .iter()
            .any(|f| f.kind != ChangeKind::Deleted && is_code(&f.path));
    if no_source {
        let shown: Vec<&str> = files.iter().take(3).map(|f| f.path.as_str()).collect();
        let more = files.len().saturating_sub(shown.len());
        scope.whole_project_reason = Some(format!(
            "the change ({}{}) touches no source file",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
        files.clear();
    } else if files.is_empty() {
        scope.whole_project_reason = Some("nothing changed against the base commit".into());
    }
    if files.is_empty() {
        scope.whole_project = true;
        if let Some(out) = git(&["ls-files"])? {
            files.extend(
                out.lines()
                    .filter(|p| !in_ignored_dir(p))
                    .map(|p| ChangedFile {
                        path: p.to_string(),
                        kind: ChangeKind::Modified,
                    }),
            );
        }
    }
    scope.files = files;
    Ok(scope)
}

fn parse_name_status(line: &str) -> Option<ChangedFile> {
    let mut parts = line.split('\t');
    let status = parts.next()?;
    let first = parts.next()?;
    let (kind, path) = match status.chars().next()? {
        'A' => (ChangeKind::Added, first),
        'D' => (ChangeKind::Deleted, first),
        'R' | 'C' => (ChangeKind::Renamed, parts.next().unwrap_or(first)),
        _ => (ChangeKind::Modified, first),
    };
    Some(ChangedFile {
        path: path.to_string(),
        kind,
    })
}

/// Every file under `root`, relative, sorted; hidden and build folders skipped.
fn walk_files(root: &Path) -> Vec<ChangedFile> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_dir() {
                if !ignored_dir(&name) && !name.starts_with('.') {
                    stack.push(entry.path());
                }
            } else if ft.is_file() {
                if let Ok(rel) = entry.path().strip_prefix(root) {
                    out.push(ChangedFile {
                        path: rel.to_string_lossy().into_owned(),
                        kind: ChangeKind::Modified,
                    });
                }
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}
