//! The package copy the tests run in, and the layer's files inside it.

use std::io;
use std::path::{Path, PathBuf};

use super::TEST_EXTS;

/// Replaces `copy` with a copy of the package at `repo`.
pub(super) fn fresh_copy(repo: &Path, copy: &Path, session: &Path) -> io::Result<()> {
    // Emptied, not replaced: the sandbox's rules name this very folder.
    if copy.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
        std::fs::remove_file(copy)?;
    }
    std::fs::create_dir_all(copy)?;
    for entry in std::fs::read_dir(copy)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    let repo = repo.canonicalize()?;
    // The session may live inside the repository; copying it would copy the copy.
    let session = session
        .canonicalize()
        .unwrap_or_else(|_| session.to_path_buf());
    copy_tree(&repo, copy, &session)?;
    // A package without node_modules uses the one fetched into the session, if any.
    let linked = copy.join("node_modules");
    if linked.symlink_metadata().is_err() {
        if let Some(fetched) = crate::testing::deps::node_modules(&repo, &session) {
            std::os::unix::fs::symlink(fetched, linked)?;
        }
    }
    Ok(())
}

/// Copies a directory tree: skips .git and .workflow, recreates symlinks as symlinks, and links
/// every node_modules instead of copying it (large, and only read by tests).
pub(super) fn copy_tree(from: &Path, to: &Path, session: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let source = entry.path();
        if name == ".git" || name == ".workflow" || source == session {
            continue;
        }
        let dest = to.join(&name);
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source)?, &dest)?;
        } else if kind.is_dir() && name == "node_modules" {
            std::os::unix::fs::symlink(&source, &dest)?;
        } else if kind.is_dir() {
            std::fs::create_dir(&dest)?;
            copy_tree(&source, &dest, session)?;
        } else if kind.is_file() {
            std::fs::copy(&source, &dest)?;
        }
    }
    Ok(())
}

/// The layer's generated files (`*.{js,mjs,cjs,ts}`, top level), sorted.
pub(super) fn generated_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            p.extension()
                .is_some_and(|x| TEST_EXTS.iter().any(|t| x == *t))
        })
        .collect();
    files.sort();
    files
}

/// Replaces `<copy>/tt-tests/<layer>` with the layer's generated files.
pub(super) fn install_tests(test_dir: &Path, layer_dir: &Path) -> io::Result<()> {
    if layer_dir.exists() {
        std::fs::remove_dir_all(layer_dir)?;
    }
    std::fs::create_dir_all(layer_dir)?;
    for file in generated_files(test_dir) {
        if let Some(name) = file.file_name() {
            crate::util::copy_nofollow(&file, &layer_dir.join(name))?;
        }
    }
    Ok(())
}
