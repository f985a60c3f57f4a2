//! An agent's answer read from a copy of a tree it worked in: the files it created or changed
//! there, under the same rules as a named answer block (a relative path inside the folder), and
//! none of git's data, none of the files the project ignores (build output, caches an agent's
//! test run leaves), no symbolic link.

use std::path::{Path, PathBuf};

use super::answer::AnswerFile;

/// Folders an agent's own runs fill that are never an answer, whatever the ignore rules say.
const NEVER: [&str; 8] = [
    ".git",
    "node_modules",
    "target",
    "__pycache__",
    ".pytest_cache",
    ".venv",
    ".mypy_cache",
    ".workflow",
];

/// The files under `folder` that differ from `tree`'s (or that `tree` lacks), and what was
/// refused with the reason. `skip` are names of the folder's own files (the prompt file).
pub fn changed(folder: &Path, tree: &Path, skip: &[&str]) -> (Vec<AnswerFile>, Vec<String>) {
    let mut candidates: Vec<PathBuf> = Vec::new();
    let mut refused = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel_dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(folder.join(&rel_dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = rel_dir.join(&name);
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if name
                .trim_end_matches(['.', ' '])
                .eq_ignore_ascii_case(".git")
            {
                refused.push(format!("{}: git's data (not taken)", rel.display()));
                continue;
            }
            if NEVER.iter().any(|n| n.eq_ignore_ascii_case(&name)) {
                continue;
            }
            if kind.is_dir() {
                stack.push(rel);
            } else if kind.is_symlink() {
                if std::fs::read_link(folder.join(&rel)).ok()
                    != std::fs::read_link(tree.join(&rel)).ok()
                {
                    refused.push(format!("{}: a symbolic link (not taken)", rel.display()));
                }
            } else if kind.is_file()
                && !(rel_dir.as_os_str().is_empty() && skip.contains(&name.as_str()))
            {
                // The tree's side as the mirror copied it: a link in the tree is its target's
                // bytes in the copy. A lock file cargo wrote into the copy is no answer.
                let now = crate::util::read_regular(&folder.join(&rel)).ok();
                let was = crate::util::read_regular(&tree.join(&rel)).ok();
                let cargo_lock = rel == Path::new("Cargo.lock");
                if now.is_some() && now != was && !cargo_lock {
                    candidates.push(rel);
                }
            }
        }
    }
    candidates.sort();
    refused.sort();
    let ignored = ignored_by(tree, &candidates);
    let mut files = Vec::new();
    for rel in candidates {
        if ignored.contains(&rel) {
            continue;
        }
        match crate::util::read_regular(&folder.join(&rel)) {
            Ok(bytes) => files.push(AnswerFile {
                content: String::from_utf8_lossy(&bytes).into_owned(),
                path: rel,
            }),
            Err(e) => refused.push(format!("{}: {e}", rel.display())),
        }
    }
    (files, refused)
}

/// Those of `paths` (relative) that `tree`'s git ignore rules ignore; none when `tree` is not a
/// git checkout.
fn ignored_by(tree: &Path, paths: &[PathBuf]) -> Vec<PathBuf> {
    if paths.is_empty() {
        return Vec::new();
    }
    let input: String = paths.iter().map(|p| format!("{}\n", p.display())).collect();
    // Exit status 1 means "none ignored": an error here is "nothing ignored" too.
    crate::git::git(tree, &["check-ignore", "--stdin"], Some(input.into_bytes()))
        .map(|out| out.lines().map(PathBuf::from).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_and_edited_files_are_the_answer_and_caches_git_data_and_links_are_not() {
        let tmp = std::env::temp_dir().join(format!("tt-copy-answer-{}", std::process::id()));
        let (tree, copy) = (tmp.join("tree"), tmp.join("copy"));
        for root in [&tree, &copy] {
            std::fs::create_dir_all(root.join("src")).unwrap();
            std::fs::write(root.join("src/lib.py"), "x = 1\n").unwrap();
            std::fs::write(root.join("src/keep.py"), "y = 2\n").unwrap();
        }
        std::fs::write(copy.join("src/lib.py"), "x = 1\ny = 3\n").unwrap();
        std::fs::write(copy.join("test_new.py"), "def test(): pass\n").unwrap();
        std::fs::write(copy.join(".prompt.md"), "the prompt").unwrap();
        std::fs::create_dir_all(copy.join(".git")).unwrap();
        std::fs::write(copy.join(".git/config"), "[core]").unwrap();
        std::fs::create_dir_all(copy.join("__pycache__")).unwrap();
        std::fs::write(copy.join("__pycache__/x.pyc"), "bytes").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", copy.join("passwd")).unwrap();
        let (files, refused) = changed(&copy, &tree, &[".prompt.md"]);
        let names: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
        assert_eq!(names, ["src/lib.py", "test_new.py"]);
        assert_eq!(
            refused,
            [
                ".git: git's data (not taken)",
                "passwd: a symbolic link (not taken)"
            ]
        );
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
