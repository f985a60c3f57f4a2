//! Workspace copies of the target: runners that must not write into the user's tree run in a
//! mirror of it under the session, refreshed incrementally (unchanged files are not rewritten, so
//! build tools that look at modification times stay fast).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// Folders never mirrored: VCS data, our own sessions, dependencies (linked or reinstalled).
const SKIP_DIRS: [&str; 5] = [".git", ".workflow", "node_modules", ".venv", "__pycache__"];

/// Makes `copy` hold exactly the repository's files plus `extra` (relative path -> bytes,
/// winning over the repository's). Unchanged files are not rewritten: cargo decides what to
/// rebuild by modification time. The copy's target/ and a Cargo.lock cargo wrote are kept.
pub(crate) fn mirror(
    repo: &Path,
    copy: &Path,
    extra: &BTreeMap<PathBuf, Vec<u8>>,
) -> io::Result<()> {
    std::fs::create_dir_all(copy)?;
    let mut wanted: BTreeMap<PathBuf, Option<PathBuf>> = BTreeMap::new();
    let copy_real = std::fs::canonicalize(copy).ok();
    list_files(
        repo,
        Path::new(""),
        copy_real.as_deref(),
        &mut |rel, abs| {
            wanted.insert(rel, Some(abs));
        },
    )?;
    wanted.extend(extra.keys().map(|k| (k.clone(), None)));
    for (rel, source) in &wanted {
        let bytes = match source {
            Some(abs) => crate::util::read_regular(abs)?,
            None => extra[rel].clone(),
        };
        let dest = real_path_in(copy, rel)?;
        let regular = std::fs::symlink_metadata(&dest).is_ok_and(|m| m.file_type().is_file());
        let same = regular && crate::util::read_regular(&dest).ok().as_deref() == Some(&bytes[..]);
        if !same {
            crate::util::write_nofollow(&dest, &bytes)?;
        }
    }
    let mut stale = Vec::new();
    list_files(copy, Path::new(""), None, &mut |rel, abs| {
        if !wanted.contains_key(&rel) && rel != Path::new("Cargo.lock") {
            stale.push(abs);
        }
    })?;
    stale.iter().try_for_each(std::fs::remove_file)
}

/// Whether the symlink `link` resolves to a file inside `root`.
fn stays_in(root: &Path, link: &Path) -> bool {
    match (root.canonicalize(), link.canonicalize()) {
        (Ok(root), Ok(target)) => target.starts_with(root),
        _ => false,
    }
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// `copy/rel` with every folder on the way made real: a symlink a sandboxed test planted in the
/// copy (`pkg -> ~/.ssh`) is removed and replaced by a folder, so nothing is written through it.
fn real_path_in(copy: &Path, rel: &Path) -> io::Result<PathBuf> {
    let mut at = copy.to_path_buf();
    let parents: Vec<_> = rel
        .parent()
        .map(|p| p.components().collect())
        .unwrap_or_default();
    for part in parents {
        at.push(part);
        if is_symlink(&at) {
            std::fs::remove_file(&at)?;
        }
        if !at.is_dir() {
            std::fs::create_dir(&at)?;
        }
    }
    Ok(copy.join(rel))
}

/// Calls `found(relative, absolute)` for every file under `root/rel`, leaving out [`SKIP_DIRS`], the
/// root `target/` and `exclude` (the copy itself, should the session live inside the repo).
/// Symlinks to files inside `root` count as files; a symlink out of it is left out (a copy made
/// through it would hand a sandboxed test what the sandbox keeps from it: `/proc/self/environ`,
/// a key in the home folder); symlinked folders are not followed (no loops).
pub(crate) fn list_files(
    root: &Path,
    rel: &Path,
    exclude: Option<&Path>,
    found: &mut impl FnMut(PathBuf, PathBuf),
) -> io::Result<()> {
    let dir = root.join(rel);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let (abs, rel) = (entry.path(), rel.join(&name));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            let skip = SKIP_DIRS.iter().any(|d| name == *d)
                || rel == Path::new("target")
                || exclude.is_some_and(|x| std::fs::canonicalize(&abs).is_ok_and(|a| a == x));
            if !skip {
                list_files(root, &rel, exclude, found)?;
            }
        } else if name == ".git" {
            // A worktree's pointer to its repository's git data: VCS data, like the folder.
        } else if kind.is_file() || (kind.is_symlink() && abs.is_file() && stays_in(root, &abs)) {
            found(rel, abs);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_out_of_the_repository_is_not_copied_and_one_inside_is() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(repo.join("pkg")).unwrap();
        std::fs::write(repo.join("pkg/real.txt"), "inside").unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "outside").unwrap();
        std::os::unix::fs::symlink(repo.join("pkg/real.txt"), repo.join("pkg/alias.txt")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("secret.txt"), repo.join("pkg/leak.txt"))
            .unwrap();
        std::os::unix::fs::symlink("/proc/self/environ", repo.join("env.txt")).unwrap();
        let copy = tmp.path().join("copy");
        mirror(&repo, &copy, &BTreeMap::new()).unwrap();
        assert_eq!(
            std::fs::read_to_string(copy.join("pkg/alias.txt")).unwrap(),
            "inside"
        );
        assert!(!copy.join("pkg/leak.txt").exists());
        assert!(!copy.join("env.txt").exists());
    }
}
