//! The repository as it is now, for a worker on another host: one commit holding the base commit's
//! tree plus the project folder's uncommitted changes (untracked files too, ignored ones not, the
//! sessions never), in a git bundle. The commit has no parent, so the bundle carries this one tree
//! and none of the history (nothing committed once and removed since).
//!
//! Nothing is written into the user's repository: the snapshot's index and objects live in a
//! scratch bare repository that borrows the user's objects (`alternates`), git runs with no split
//! index or untracked cache (which would write beside the user's index), and the commit has a
//! fixed author and date, so the same tree always gives the same commit, which names the bundle's
//! cache entry on every worker.

use std::path::{Path, PathBuf};

use crate::git::{git, git_env};

use super::{RemoteError, Result};

/// A made snapshot: its commit, the bundle file, the project's folder inside the repository.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub commit: String,
    pub bundle: PathBuf,
    pub subdir: String,
}

fn git_error(step: &str) -> impl Fn(crate::git::GitFailed) -> RemoteError + '_ {
    move |e| RemoteError::Git {
        step: step.to_string(),
        problem: e.to_string(),
    }
}

/// Settings for the commands that read the user's work tree into the scratch index.
const NO_INDEX_EXTRAS: [&str; 4] = [
    "-c",
    "core.splitIndex=false",
    "-c",
    "core.untrackedCache=false",
];

/// Snapshots `repo` into `scratch` (made afresh), leaving out `exclude` (the sessions' folder,
/// when it is inside the repository).
pub fn make(repo: &Path, scratch: &Path, exclude: &[PathBuf]) -> Result<Snapshot> {
    let top = PathBuf::from(
        git(repo, &["rev-parse", "--show-toplevel"], None)
            .map_err(|e| RemoteError::Refused(format!(
                "workers on other hosts get the repository as a git bundle, and {} is not in a git repository: {e}",
                repo.display()
            )))?
            .trim(),
    );
    let subdir = git(repo, &["rev-parse", "--show-prefix"], None)
        .map_err(git_error("rev-parse --show-prefix"))?
        .trim()
        .to_string();
    let objects = git(&top, &["rev-parse", "--git-path", "objects"], None)
        .map_err(git_error("rev-parse --git-path objects"))?;
    let objects = top.join(objects.trim());
    let _ = std::fs::remove_dir_all(scratch);
    let bare = scratch.join("snapshot.git");
    std::fs::create_dir_all(&bare).map_err(|e| RemoteError::file(&bare, e))?;
    git(&bare, &["init", "-q", "--bare", "."], None).map_err(git_error("init --bare"))?;
    let alternates = bare.join("objects/info/alternates");
    std::fs::write(&alternates, format!("{}\n", objects.display()))
        .map_err(|e| RemoteError::file(&alternates, e))?;
    let index = scratch.join("index");
    let own_objects = bare.join("objects");
    let (index_s, own_s, alt_s) = (
        index.display().to_string(),
        own_objects.display().to_string(),
        objects.display().to_string(),
    );
    let env = [
        ("GIT_INDEX_FILE", index_s.as_str()),
        ("GIT_OBJECT_DIRECTORY", own_s.as_str()),
        ("GIT_ALTERNATE_OBJECT_DIRECTORIES", alt_s.as_str()),
        ("GIT_AUTHOR_NAME", "team-testing"),
        ("GIT_AUTHOR_EMAIL", "team-testing@localhost"),
        ("GIT_AUTHOR_DATE", "@0 +0000"),
        ("GIT_COMMITTER_NAME", "team-testing"),
        ("GIT_COMMITTER_EMAIL", "team-testing@localhost"),
        ("GIT_COMMITTER_DATE", "@0 +0000"),
    ];
    let head = git(
        &top,
        &["rev-parse", "--verify", "-q", "HEAD^{commit}"],
        None,
    )
    .ok()
    .map(|h| h.trim().to_string());
    let with = |args: &[&str]| -> Vec<String> {
        NO_INDEX_EXTRAS
            .iter()
            .chain(args)
            .map(|s| s.to_string())
            .collect()
    };
    if let Some(head) = &head {
        let args = with(&["read-tree", head]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        git_env(&top, &args, &env, None).map_err(git_error("read-tree"))?;
    }
    let project = if subdir.is_empty() {
        "."
    } else {
        subdir.as_str()
    };
    let top_real = top.canonicalize().unwrap_or_else(|_| top.clone());
    let excluded: Vec<String> = exclude
        .iter()
        .filter_map(|path| {
            let path = path.canonicalize().unwrap_or_else(|_| path.clone());
            let rel = path.strip_prefix(&top_real).ok()?;
            (!rel.as_os_str().is_empty()).then(|| rel.display().to_string())
        })
        .collect();
    let mut add = with(&["add", "-A", "--", project]);
    for rel in &excluded {
        // An exclude pathspec naming a folder git ignores (the sessions' `/.workflow/`, which
        // team-testing puts in .git/info/exclude) makes `git add` fail: "paths are ignored".
        // `add -A` leaves an ignored folder out by itself; only one it would take is excluded.
        let probe = format!("{rel}/");
        let ignored = git_env(
            &top,
            &["check-ignore", "-q", "--no-index", &probe],
            &env,
            None,
        );
        if ignored.is_err() {
            add.push(format!(":(exclude,top){rel}"));
        }
    }
    let add: Vec<&str> = add.iter().map(String::as_str).collect();
    git_env(&top, &add, &env, None).map_err(git_error("add -A"))?;
    // Whatever the ignore files say, and whatever HEAD tracks there: the sessions leave the
    // scratch index (never the user's).
    for rel in &excluded {
        let spec = format!(":(top){rel}");
        let args = with(&[
            "rm",
            "--cached",
            "-r",
            "-f",
            "-q",
            "--ignore-unmatch",
            "--",
            &spec,
        ]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        git_env(&top, &args, &env, None).map_err(git_error("rm --cached"))?;
    }
    let tree = git_env(&top, &["write-tree"], &env, None).map_err(git_error("write-tree"))?;
    let args = ["commit-tree", tree.trim(), "-m", "team-testing snapshot"];
    let commit = git_env(&top, &args, &env, None).map_err(git_error("commit-tree"))?;
    let commit = commit.trim().to_string();
    git(&bare, &["update-ref", "refs/heads/snapshot", &commit], None)
        .map_err(git_error("update-ref"))?;
    let bundle = scratch.join("repo.bundle");
    let bundle_s = bundle.display().to_string();
    git(
        &bare,
        &["bundle", "create", "-q", &bundle_s, "refs/heads/snapshot"],
        None,
    )
    .map_err(git_error("bundle create"))?;
    Ok(Snapshot {
        commit,
        bundle,
        subdir,
    })
}

/// Checks out `commit` from `bundle` into `dest` (a fresh folder), the worker's copy of the
/// repository; the bundle must hold the commit it was named for.
pub fn checkout(bundle: &Path, commit: &str, dest: &Path) -> Result<()> {
    if !commit.bytes().all(|b| b.is_ascii_hexdigit()) || commit.len() < 40 {
        return Err(RemoteError::Refused(format!(
            "{commit:?} is not a commit id"
        )));
    }
    let _ = std::fs::remove_dir_all(dest);
    std::fs::create_dir_all(dest).map_err(|e| RemoteError::file(dest, e))?;
    let bundle_s = bundle.display().to_string();
    git(dest, &["init", "-q", "."], None).map_err(git_error("init"))?;
    git(
        dest,
        &["fetch", "-q", "--no-tags", &bundle_s, "refs/heads/snapshot"],
        None,
    )
    .map_err(git_error("fetch from the bundle"))?;
    git(dest, &["checkout", "-q", "--detach", commit], None).map_err(git_error("checkout"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, args: &[&str]) {
        git(dir, args, None).unwrap();
    }

    #[test]
    fn snapshot_carries_uncommitted_changes_and_leaves_the_repo_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(repo.join("pkg")).unwrap();
        std::fs::write(repo.join("pkg/a.py"), "A = 1\n").unwrap();
        std::fs::write(repo.join(".gitignore"), "*.log\n").unwrap();
        sh(&repo, &["init", "-q"]);
        sh(&repo, &["add", "."]);
        sh(&repo, &["commit", "-q", "-m", "one"]);
        std::fs::write(repo.join("pkg/a.py"), "A = 2\n").unwrap();
        std::fs::write(repo.join("pkg/new.py"), "B = 3\n").unwrap();
        std::fs::write(repo.join("debug.log"), "ignored\n").unwrap();
        std::fs::create_dir_all(repo.join("sessions/S")).unwrap();
        std::fs::write(repo.join("sessions/S/notes.txt"), "not for workers\n").unwrap();
        let status_before = git(&repo, &["status", "--porcelain"], None).unwrap();
        let refs_before = git(&repo, &["for-each-ref"], None).unwrap();

        let sessions = vec![repo.join("sessions")];
        let snap = make(&repo.join("pkg"), &tmp.path().join("scratch"), &sessions).unwrap();
        assert_eq!(snap.subdir, "pkg/");
        let again = make(&repo.join("pkg"), &tmp.path().join("scratch2"), &sessions).unwrap();
        assert_eq!(
            snap.commit, again.commit,
            "the same tree gives the same commit"
        );

        let dest = tmp.path().join("worker-copy");
        checkout(&snap.bundle, &snap.commit, &dest).unwrap();
        assert_eq!(
            std::fs::read_to_string(dest.join("pkg/a.py")).unwrap(),
            "A = 2\n"
        );
        assert_eq!(
            std::fs::read_to_string(dest.join("pkg/new.py")).unwrap(),
            "B = 3\n"
        );
        assert!(!dest.join("debug.log").exists());
        let whole = make(&repo, &tmp.path().join("scratch3"), &sessions).unwrap();
        assert_eq!(whole.subdir, "");
        let top_copy = tmp.path().join("worker-copy-2");
        checkout(&whole.bundle, &whole.commit, &top_copy).unwrap();
        assert!(top_copy.join("pkg/new.py").exists());
        assert!(
            !top_copy.join("sessions").exists(),
            "the sessions stay home"
        );
        // One commit, no history.
        let count = git(&dest, &["rev-list", "--count", "HEAD"], None).unwrap();
        assert_eq!(count.trim(), "1");

        assert_eq!(
            git(&repo, &["status", "--porcelain"], None).unwrap(),
            status_before
        );
        assert_eq!(git(&repo, &["for-each-ref"], None).unwrap(), refs_before);
        assert!(checkout(&snap.bundle, "not-a-commit", &dest).is_err());
    }

    #[test]
    fn sessions_in_an_ignored_folder_or_tracked_by_head_stay_home() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(repo.join(".workflow/.team/OLD")).unwrap();
        std::fs::write(repo.join("a.py"), "A = 1\n").unwrap();
        // A session someone committed once: HEAD tracks it.
        std::fs::write(repo.join(".workflow/.team/OLD/notes.txt"), "old\n").unwrap();
        sh(&repo, &["init", "-q"]);
        sh(&repo, &["add", "."]);
        sh(&repo, &["commit", "-q", "-m", "one"]);
        // What team-testing adds for the default sessions folder.
        let exclude = repo.join(".git/info/exclude");
        std::fs::write(&exclude, "/.workflow/\n").unwrap();
        std::fs::create_dir_all(repo.join(".workflow/.team/NEW")).unwrap();
        std::fs::write(repo.join(".workflow/.team/NEW/s.json"), "{}\n").unwrap();
        std::fs::write(repo.join("b.py"), "B = 2\n").unwrap();
        let index_before = std::fs::read(repo.join(".git/index")).unwrap();

        let sessions = vec![repo.join(".workflow/.team")];
        let snap = make(&repo, &tmp.path().join("scratch"), &sessions).unwrap();
        let dest = tmp.path().join("copy");
        checkout(&snap.bundle, &snap.commit, &dest).unwrap();
        assert!(dest.join("b.py").is_file());
        assert!(!dest.join(".workflow").exists(), "the sessions stay home");
        assert_eq!(
            std::fs::read(repo.join(".git/index")).unwrap(),
            index_before,
            "the user's index is not touched"
        );
        assert_eq!(std::fs::read_to_string(&exclude).unwrap(), "/.workflow/\n");

        // Not ignored at all: still left out.
        std::fs::write(&exclude, "").unwrap();
        let snap = make(&repo, &tmp.path().join("scratch2"), &sessions).unwrap();
        let dest = tmp.path().join("copy2");
        checkout(&snap.bundle, &snap.commit, &dest).unwrap();
        assert!(dest.join("b.py").is_file());
        assert!(!dest.join(".workflow").exists());
    }
}
