//! Which checkout `apply` writes into: the folder `--repo` names, else the current folder's
//! checkout, never the session's recorded repository by default (a user applying into a
//! scratch copy must not change their real one). A folder that is not a checkout of the
//! session's project (no history in common with it) is refused.

use std::path::{Path, PathBuf};

use crate::git::git;

/// Why a folder is not a place to apply a session's tests or fixes.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("{}: not a git checkout of the session's project ({}); run apply from a checkout of it, or name one with --repo", target.display(), repo.display())]
    NotACheckout { target: PathBuf, repo: PathBuf },
    #[error("{}: not a checkout of the session's project ({}): the two have no commit in common", target.display(), repo.display())]
    OtherProject { target: PathBuf, repo: PathBuf },
    #[error("{}: {cause}", target.display())]
    Unreadable {
        target: PathBuf,
        cause: std::io::Error,
    },
}

/// The folder to apply into: `given` (`--repo`), else the project's place in the checkout that
/// holds `cwd` (the session's project may be a subfolder of its repository). `repo` is the
/// session's recorded repository.
pub fn resolve(repo: &Path, given: Option<&Path>, cwd: &Path) -> Result<PathBuf, TargetError> {
    let canon = |p: &Path| {
        p.canonicalize().map_err(|cause| TargetError::Unreadable {
            target: p.to_path_buf(),
            cause,
        })
    };
    let repo = canon(repo)?;
    let target = match given {
        Some(dir) => canon(dir)?,
        None => {
            let cwd = canon(cwd)?;
            match (toplevel(&cwd), toplevel(&repo)) {
                (Some(top), Some(repo_top)) => {
                    let inside = repo.strip_prefix(&repo_top).unwrap_or(Path::new(""));
                    let place = top.join(inside);
                    if place.is_dir() {
                        place
                    } else {
                        cwd
                    }
                }
                _ => cwd,
            }
        }
    };
    if target == repo {
        return Ok(target);
    }
    let Some(roots) = root_commits(&target) else {
        return Err(TargetError::NotACheckout { target, repo });
    };
    match root_commits(&repo) {
        Some(ours) if ours.iter().any(|c| roots.contains(c)) => Ok(target),
        // The session's repository is gone or not a checkout: nothing to compare with, the
        // user's own word (--repo or where they stand) decides.
        None => Ok(target),
        Some(_) => Err(TargetError::OtherProject { target, repo }),
    }
}

/// Whether `apply` run from the current folder without `--repo` would be refused.
pub fn refuses_cwd(repo: &Path) -> bool {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    resolve(repo, None, &cwd).is_err()
}

fn toplevel(dir: &Path) -> Option<PathBuf> {
    let out = git(dir, &["rev-parse", "--show-toplevel"], None).ok()?;
    PathBuf::from(out.trim()).canonicalize().ok()
}

/// The commits without parents in the history of `dir`'s HEAD (None: not a checkout, or no
/// commit yet).
fn root_commits(dir: &Path) -> Option<Vec<String>> {
    toplevel(dir)?;
    let out = git(dir, &["rev-list", "--max-parents=0", "HEAD"], None).ok()?;
    let roots: Vec<String> = out.lines().map(|l| l.trim().to_string()).collect();
    (!roots.is_empty()).then_some(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_with_commit(dir: &Path, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("a.txt"), text).unwrap();
        for args in [
            &["init", "-q"][..],
            &["add", "."],
            &["commit", "-q", "-m", "first"],
        ] {
            git(dir, args, None).unwrap();
        }
    }

    #[test]
    fn a_copy_is_the_target_and_another_project_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (original, copy, other) = (
            tmp.path().join("original"),
            tmp.path().join("copy"),
            tmp.path().join("other"),
        );
        repo_with_commit(&original, "a");
        git(
            tmp.path(),
            &[
                "clone",
                "-q",
                original.to_str().unwrap(),
                copy.to_str().unwrap(),
            ],
            None,
        )
        .unwrap();
        repo_with_commit(&other, "b");
        let copy_canon = copy.canonicalize().unwrap();
        // From inside the copy, and with --repo naming it.
        assert_eq!(resolve(&original, None, &copy).unwrap(), copy_canon);
        assert_eq!(
            resolve(&original, Some(&copy), tmp.path()).unwrap(),
            copy_canon
        );
        assert!(matches!(
            resolve(&original, Some(&other), tmp.path()),
            Err(TargetError::OtherProject { .. })
        ));
        assert!(matches!(
            resolve(&original, None, tmp.path()),
            Err(TargetError::NotACheckout { .. })
        ));
    }
}
