//! The git worktree the fixer works in: a checkout of the user's HEAD under the session, on a
//! branch of its own, with the user's uncommitted changes copied in and committed as its base.
//! The user's working tree is never touched; every git command has a timeout and argv, never a
//! shell string.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::proc::run_captured_input;

/// One git command's budget.
const GIT_TIMEOUT: Duration = Duration::from_secs(120);

/// Settings of every git command here: an identity for the worktree's commits (the user's own
/// config may have none), no signing, and none of the repository's hooks or fsmonitor (a
/// checkout, commit or revert must not run programs of the repository's configuration).
const SETTINGS: [&str; 10] = [
    "-c",
    "user.name=team-testing",
    "-c",
    "user.email=team-testing@localhost",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
];

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("the repository {} is not a git repository with a commit (the test-fix cycle works in a git worktree): {detail}", repo.display())]
    NotARepository { repo: PathBuf, detail: String },
    #[error("git {args} in {}: {detail}", dir.display())]
    Failed {
        args: String,
        dir: PathBuf,
        detail: String,
    },
    #[error("cannot copy {path} into the worktree: {cause}")]
    Copy { path: String, cause: std::io::Error },
}

/// Runs git in `dir`; its stdout, or why it failed.
fn git(dir: &Path, args: &[&str], input: Option<Vec<u8>>) -> Result<String, GitError> {
    let mut argv = vec!["git"];
    argv.extend(SETTINGS);
    argv.extend(args);
    let failed = |detail: String| GitError::Failed {
        args: args.join(" "),
        dir: dir.to_path_buf(),
        detail,
    };
    let out = run_captured_input(&argv, dir, &[], input, GIT_TIMEOUT)
        .map_err(|e| failed(e.to_string()))?;
    if !out.success() {
        return Err(failed(crate::util::tail_lines(&out.stderr, 5)));
    }
    Ok(out.stdout)
}

#[derive(Debug, Clone)]
pub struct Worktree {
    pub path: PathBuf,
    pub branch: String,
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
/// (tracked and untracked, not ignored) committed on top. A stale worktree of an earlier attempt
/// at the same path is removed first.
pub fn make(repo: &Path, path: &Path, branch: &str) -> Result<Made, GitError> {
    let user_head = git(repo, &["rev-parse", "--verify", "HEAD^{commit}"], None)
        .map_err(|e| GitError::NotARepository {
            repo: repo.to_path_buf(),
            detail: e.to_string(),
        })?
        .trim()
        .to_string();
    if path.exists() {
        let shown = path.to_string_lossy().into_owned();
        let _ = git(repo, &["worktree", "remove", "--force", &shown], None);
        let _ = std::fs::remove_dir_all(path);
        let _ = git(repo, &["worktree", "prune"], None);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|cause| GitError::Copy {
            path: parent.display().to_string(),
            cause,
        })?;
    }
    let shown = path.to_string_lossy().into_owned();
    git(
        repo,
        &["worktree", "add", "-q", "-B", branch, &shown, &user_head],
        None,
    )?;
    let worktree = Worktree {
        path: path.to_path_buf(),
        branch: branch.to_string(),
    };
    // The uncommitted changes: tracked ones as a binary diff, untracked files copied.
    let diff = git(repo, &["diff", "--binary", "HEAD"], None)?;
    if !diff.trim().is_empty() {
        git(
            path,
            &["apply", "--binary", "--whitespace=nowarn", "-"],
            Some(diff.into_bytes()),
        )?;
    }
    let untracked = git(
        repo,
        &["ls-files", "--others", "--exclude-standard", "-z"],
        None,
    )?;
    for rel in untracked.split('\0').filter(|r| !r.is_empty()) {
        let from = repo.join(rel);
        // Regular files only: a symlink could point anywhere.
        if !std::fs::symlink_metadata(&from).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let bytes = crate::util::read_regular(&from).map_err(|cause| GitError::Copy {
            path: rel.to_string(),
            cause,
        })?;
        let to = path.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|cause| GitError::Copy {
                path: rel.to_string(),
                cause,
            })?;
        }
        crate::util::write_nofollow(&to, &bytes).map_err(|cause| GitError::Copy {
            path: rel.to_string(),
            cause,
        })?;
    }
    if worktree.is_dirty()? {
        worktree.commit("test-cycle: base - the working tree's uncommitted changes")?;
    }
    let base = worktree.head()?;
    Ok(Made {
        worktree,
        user_head,
        base,
    })
}

impl Worktree {
    pub fn head(&self) -> Result<String, GitError> {
        Ok(git(&self.path, &["rev-parse", "HEAD"], None)?
            .trim()
            .to_string())
    }

    pub fn is_dirty(&self) -> Result<bool, GitError> {
        Ok(!git(&self.path, &["status", "--porcelain"], None)?
            .trim()
            .is_empty())
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

    /// Drops every uncommitted change (a change that did not improve, or a killed iteration's).
    pub fn discard(&self) -> Result<(), GitError> {
        git(&self.path, &["reset", "-q", "--hard", "HEAD"], None)?;
        git(&self.path, &["clean", "-q", "-fd"], None)?;
        Ok(())
    }

    /// Moves the branch back to `commit` (commits a killed run made after its last record).
    pub fn reset_to(&self, commit: &str) -> Result<(), GitError> {
        git(&self.path, &["reset", "-q", "--hard", commit], None)?;
        git(&self.path, &["clean", "-q", "-fd"], None)?;
        Ok(())
    }

    /// `git diff --binary from to`.
    pub fn diff(&self, from: &str, to: &str) -> Result<String, GitError> {
        git(&self.path, &["diff", "--binary", from, to], None)
    }

    /// The files the working tree changed against HEAD (added, modified, deleted).
    pub fn changed_files(&self) -> Result<Vec<String>, GitError> {
        git(&self.path, &["add", "-A"], None)?;
        let out = git(&self.path, &["diff", "--cached", "--name-only", "-z"], None)?;
        git(&self.path, &["reset", "-q"], None)?;
        Ok(out
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// (status letter, path) of what changed between two commits.
    pub fn name_status(&self, from: &str, to: &str) -> Result<Vec<(char, String)>, GitError> {
        let out = git(&self.path, &["diff", "--name-status", "-z", from, to], None)?;
        let parts: Vec<&str> = out.split('\0').filter(|s| !s.is_empty()).collect();
        Ok(parts
            .chunks(2)
            .filter_map(|c| match c {
                [status, path] => Some((status.chars().next().unwrap_or('M'), path.to_string())),
                _ => None,
            })
            .collect())
    }

    /// The subjects of the commits after `base`, oldest first.
    pub fn log_since(&self, base: &str) -> Result<Vec<String>, GitError> {
        let range = format!("{base}..HEAD");
        let out = git(
            &self.path,
            &["log", "--reverse", "--format=%s", &range],
            None,
        )?;
        Ok(out.lines().map(str::to_string).collect())
    }

    /// Whether the worktree exists and is on its branch.
    pub fn is_usable(&self) -> bool {
        self.path.join(".git").exists()
            && git(&self.path, &["rev-parse", "--abbrev-ref", "HEAD"], None)
                .is_ok_and(|b| b.trim() == self.branch)
    }
}
