//! The git worktree the fixer works in: a checkout of the user's HEAD under the session, on a
//! branch of its own, with the user's uncommitted changes copied in and committed as its base.
//! The user's working tree is never touched.
//!
//! Git runs here with argv and a timeout, and none of the repository's programs: no hooks, no
//! fsmonitor, every filter driver emptied, diffs by plumbing (`diff-tree`, `diff-index`) with no
//! textconv or external diff, so neither the user's diff settings nor a file an agent wrote can
//! make git run code or change what a patch says. Patches and blobs go to files, never through
//! a capped pipe.

use std::path::{Path, PathBuf};

use crate::git::{git, git_to_file};

/// Diff options that make a patch what the files say: binary, no renames, no textconv or
/// external diff program.
const DIFF: [&str; 5] = [
    "-p",
    "--binary",
    "--no-renames",
    "--no-textconv",
    "--no-ext-diff",
];

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("the repository {} is not a git repository with a commit (the test-fix cycle works in a git worktree): {detail}", repo.display())]
    NotARepository { repo: PathBuf, detail: String },
    #[error(transparent)]
    Failed(#[from] crate::git::GitFailed),
    #[error("cannot copy {path} into the worktree: {cause}")]
    Copy { path: String, cause: std::io::Error },
}

#[derive(Debug, Clone)]
pub struct Worktree {
    /// The worktree's top folder.
    pub path: PathBuf,
    pub branch: String,
    /// Where the project is inside it (`""`, or `pkg/` when the project is a subfolder of its
    /// git repository).
    pub prefix: String,
}

/// What making the worktree found.
pub struct Made {
    pub worktree: Worktree,
    /// The user's HEAD.
    pub user_head: String,
    /// The worktree's first commit: HEAD plus the uncommitted changes (HEAD when there are none).
    pub base: String,
}

/// The branch of a session's worktree: `team-testing/fix/<session>`, or with the task's id
/// added when an earlier cycle of the session has that one (its commits stay).
pub fn free_branch(repo: &Path, session_id: &str, task_id: &str) -> String {
    let first = format!("team-testing/fix/{session_id}");
    let exists = git(
        repo,
        &[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/{first}"),
        ],
        None,
    )
    .is_ok();
    if exists {
        format!("{first}-{}", task_id.to_ascii_lowercase())
    } else {
        first
    }
}

/// Makes the worktree at `path` on `branch` from the user's HEAD, with their uncommitted changes
/// (tracked and untracked, not ignored) committed on top; `scratch` holds the patch of those
/// changes. A stale worktree of an earlier attempt at the same path is removed first; a worktree
/// that could not be made whole is removed with its branch.
pub fn make(repo: &Path, path: &Path, branch: &str, scratch: &Path) -> Result<Made, GitError> {
    let not_a_repo = |e: crate::git::GitFailed| GitError::NotARepository {
        repo: repo.to_path_buf(),
        detail: e.to_string(),
    };
    let user_head = git(repo, &["rev-parse", "--verify", "HEAD^{commit}"], None)
        .map_err(not_a_repo)?
        .trim()
        .to_string();
    let top = PathBuf::from(
        git(repo, &["rev-parse", "--show-toplevel"], None)
            .map_err(not_a_repo)?
            .trim(),
    );
    let prefix = git(repo, &["rev-parse", "--show-prefix"], None)?
        .trim()
        .to_string();
    let shown = path.to_string_lossy().into_owned();
    if path.exists() {
        let _ = git(&top, &["worktree", "remove", "--force", &shown], None);
        let _ = std::fs::remove_dir_all(path);
    }
    // A worktree whose folder was deleted with its session is still registered: forget it.
    let _ = git(&top, &["worktree", "prune"], None);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|cause| GitError::Copy {
            path: parent.display().to_string(),
            cause,
        })?;
    }
    git(
        &top,
        &["worktree", "add", "-q", "-B", branch, &shown, &user_head],
        None,
    )?;
    let worktree = Worktree {
        path: path.to_path_buf(),
        branch: branch.to_string(),
        prefix,
    };
    match copy_uncommitted(&top, &worktree, scratch).and_then(|()| {
        if worktree.is_dirty()? {
            worktree.commit("test-cycle: base - the working tree's uncommitted changes")?;
        }
        worktree.head()
    }) {
        Ok(base) => Ok(Made {
            worktree,
            user_head,
            base,
        }),
        Err(e) => {
            let _ = git(&top, &["worktree", "remove", "--force", &shown], None);
            let _ = git(&top, &["branch", "-D", branch], None);
            Err(e)
        }
    }
}

/// The user's uncommitted changes into the worktree: tracked ones as a binary patch (plumbing,
/// so the user's diff settings do not shape it), untracked regular files copied.
fn copy_uncommitted(top: &Path, wt: &Worktree, scratch: &Path) -> Result<(), GitError> {
    std::fs::create_dir_all(scratch).map_err(|cause| GitError::Copy {
        path: scratch.display().to_string(),
        cause,
    })?;
    let patch = scratch.join("uncommitted.patch");
    let mut args = vec!["diff-index"];
    args.extend(DIFF);
    args.push("HEAD");
    git_to_file(top, &args, &patch)?;
    if std::fs::metadata(&patch).is_ok_and(|m| m.len() > 0) {
        let shown = patch.to_string_lossy().into_owned();
        git(
            &wt.path,
            &["apply", "--binary", "--whitespace=nowarn", &shown],
            None,
        )?;
    }
    let untracked = git(
        top,
        &[
            "ls-files",
            "--others",
            "--exclude-standard",
            "--full-name",
            "-z",
        ],
        None,
    )?;
    for rel in untracked.split('\0').filter(|r| !r.is_empty()) {
        let from = top.join(rel);
        // Regular files only: a symlink could point anywhere.
        if !std::fs::symlink_metadata(&from).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let copy_err = |cause| GitError::Copy {
            path: rel.to_string(),
            cause,
        };
        let bytes = crate::util::read_regular(&from).map_err(copy_err)?;
        let to = wt.path.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(copy_err)?;
        }
        crate::util::write_nofollow(&to, &bytes).map_err(copy_err)?;
    }
    Ok(())
}

impl Worktree {
    /// The project's folder inside the worktree.
    pub fn code(&self) -> PathBuf {
        self.path.join(&self.prefix)
    }

    pub fn head(&self) -> Result<String, GitError> {
        Ok(git(&self.path, &["rev-parse", "HEAD"], None)?
            .trim()
            .to_string())
    }

    pub fn is_dirty(&self) -> Result<bool, GitError> {
        Ok(
            !git(&self.path, &["status", "--porcelain", "--ignored=no"], None)?
                .trim()
                .is_empty(),
        )
    }

    /// Commits everything in the worktree; the new HEAD.
    pub fn commit(&self, message: &str) -> Result<String, GitError> {
        git(&self.path, &["add", "-A"], None)?;
        git(
            &self.path,
            &["commit", "-q", "--no-verify", "-m", message],
            None,
        )?;
        self.head()
    }

    /// Undoes HEAD's change with a commit of its own (the rollback of a regression).
    pub fn revert_head(&self, message: &str) -> Result<String, GitError> {
        git(&self.path, &["revert", "--no-commit", "HEAD"], None)?;
        git(
            &self.path,
            &["commit", "-q", "--no-verify", "-m", message],
            None,
        )?;
        self.head()
    }

    /// Drops every uncommitted change, ignored files too (a change that did not improve, or a
    /// killed iteration's): what is tested is what is committed.
    pub fn discard(&self) -> Result<(), GitError> {
        git(&self.path, &["reset", "-q", "--hard", "HEAD"], None)?;
        git(&self.path, &["clean", "-q", "-fdx"], None)?;
        Ok(())
    }

    /// Moves the branch back to `commit` (commits a killed run made after its last record).
    pub fn reset_to(&self, commit: &str) -> Result<(), GitError> {
        git(&self.path, &["reset", "-q", "--hard", commit], None)?;
        git(&self.path, &["clean", "-q", "-fdx"], None)?;
        Ok(())
    }

    /// The patch from `from` to `to`, whole, into `out`.
    pub fn diff_to_file(&self, from: &str, to: &str, out: &Path) -> Result<(), GitError> {
        let mut args = vec!["diff-tree", "-r"];
        args.extend(DIFF);
        args.extend([from, to]);
        Ok(git_to_file(&self.path, &args, out)?)
    }

    /// The bytes of `path` (worktree-relative) at `commit`, through `scratch`; None when the
    /// file is not there.
    pub fn blob(&self, commit: &str, path: &str, scratch: &Path) -> Option<Vec<u8>> {
        let spec = format!("{commit}:{path}");
        git(&self.path, &["cat-file", "-e", &spec], None).ok()?;
        let out = scratch.join("blob");
        git_to_file(&self.path, &["cat-file", "blob", &spec], &out).ok()?;
        std::fs::read(&out).ok()
    }

    /// The files the working tree changed against HEAD (added, modified, deleted), relative to
    /// the project's folder; a change outside it is refused by the caller.
    pub fn changed_files(&self) -> Result<Vec<String>, GitError> {
        git(&self.path, &["add", "-A"], None)?;
        let out = git(
            &self.path,
            &[
                "diff-index",
                "--cached",
                "--name-only",
                "--no-renames",
                "-z",
                "HEAD",
            ],
            None,
        );
        git(&self.path, &["reset", "-q"], None)?;
        Ok(out?
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(|p| p.strip_prefix(&self.prefix).unwrap_or(p).to_string())
            .collect())
    }

    /// (status letter, worktree-relative path) of what changed between two commits.
    pub fn name_status(&self, from: &str, to: &str) -> Result<Vec<(char, String)>, GitError> {
        let out = git(
            &self.path,
            &[
                "diff-tree",
                "-r",
                "--name-status",
                "--no-renames",
                "-z",
                from,
                to,
            ],
            None,
        )?;
        let parts: Vec<&str> = out.split('\0').filter(|s| !s.is_empty()).collect();
        Ok(parts
            .chunks(2)
            .filter_map(|c| match c {
                [status, path] => Some((status.chars().next().unwrap_or('M'), path.to_string())),
                _ => None,
            })
            .collect())
    }

    /// Whether `rel` (project-relative) is ignored by git: a file git would not commit.
    pub fn is_ignored(&self, rel: &Path) -> bool {
        let path = Path::new(&self.prefix).join(rel);
        git(
            &self.path,
            &["check-ignore", "-q", "--no-index", &path.to_string_lossy()],
            None,
        )
        .is_ok()
    }

    /// Whether the worktree exists and is on its branch.
    pub fn is_usable(&self) -> bool {
        self.path.join(".git").exists()
            && git(&self.path, &["rev-parse", "--abbrev-ref", "HEAD"], None)
                .is_ok_and(|b| b.trim() == self.branch)
    }
}
