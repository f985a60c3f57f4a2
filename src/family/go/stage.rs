//! The layer's generated `*_test.go` files, each copied into its package's folder of the module's
//! copy under a prefixed name (`tt_L1_calc_test.go`), so it never replaces one of the module's
//! own test files.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use super::package::{package_dir, packages};
use crate::workspace::mirror;

/// Prefix of every staged file.
const STAGED_PREFIX: &str = "tt_";

/// A generated test file and where it is staged.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Staged {
    /// Its name in the layer's test folder.
    pub original: String,
    /// Its package's folder, relative to the module root (`""` for the root).
    pub dir: String,
    /// Its name in that folder.
    pub target: String,
}

impl Staged {
    /// Its path in the module's copy.
    pub fn rel(&self) -> PathBuf {
        Path::new(&self.dir).join(&self.target)
    }
}

/// `("L1-unit", "calc_test.go")` -> `tt_L1_calc_test.go` (the layer's code only). The built-in
/// generator's files (`calc_tt_test.go`, `calc_tt_integration_test.go`) keep their names: they
/// are the files apply writes, and replace the ones an earlier apply wrote.
pub(super) fn staged_name(layer: &str, file: &str) -> String {
    if is_generated_name(file) {
        return file.to_string();
    }
    let code = layer.split('-').next().unwrap_or(layer);
    format!("{STAGED_PREFIX}{code}_{file}")
}

/// Whether a file is one the built-in generator writes.
pub(super) fn is_generated_name(file: &str) -> bool {
    // `calc_tt_test.go`, `calc_tt_integration_test.go`, `poll_tt_linux_test.go`.
    file.contains("_tt_") && file.ends_with("_test.go")
}

/// Whether `name` is a Go test file.
pub(super) fn is_test_file(name: &str) -> bool {
    name.ends_with("_test.go") && !name.starts_with(['.', '_'])
}

/// The layer's `*_test.go` files (top level), sorted.
pub(super) fn test_files(test_dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(test_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_test_file(n))
        .collect();
    names.sort();
    names
}

/// The layer's test files with their package folders in `repo`.
pub(super) fn generated_files(test_dir: &Path, repo: &Path, layer: &str) -> Vec<Staged> {
    let known = packages(repo);
    let module = super::package::module_path(repo);
    test_files(test_dir)
        .into_iter()
        .map(|original| {
            let source = std::fs::read_to_string(test_dir.join(&original)).unwrap_or_default();
            Staged {
                dir: package_dir(&known, module.as_deref(), &source),
                target: staged_name(layer, &original),
                original,
            }
        })
        .collect()
}

/// Makes `copy` the repository plus the staged files (and nothing of an earlier staging).
pub(super) fn stage(
    repo: &Path,
    copy: &Path,
    test_dir: &Path,
    staged: &[Staged],
) -> io::Result<()> {
    let mut extra = BTreeMap::new();
    for s in staged {
        extra.insert(s.rel(), std::fs::read(test_dir.join(&s.original))?);
    }
    mirror(repo, copy, &extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_are_staged_in_their_package_folder() {
        let dir = tempfile::tempdir().unwrap();
        let (repo, tests) = (dir.path().join("repo"), dir.path().join("tests"));
        std::fs::create_dir_all(repo.join("stats")).unwrap();
        std::fs::create_dir_all(&tests).unwrap();
        std::fs::write(repo.join("go.mod"), "module example.com/m\n").unwrap();
        std::fs::write(repo.join("stats/mean.go"), "package stats\n").unwrap();
        std::fs::write(tests.join("mean_test.go"), "package stats\n").unwrap();
        std::fs::write(tests.join("root_test.go"), "package m\n").unwrap();
        std::fs::write(tests.join("notes.txt"), "").unwrap();
        let staged = generated_files(&tests, &repo, "L1-unit");
        assert_eq!(
            staged,
            [
                Staged {
                    original: "mean_test.go".into(),
                    dir: "stats".into(),
                    target: "tt_L1_mean_test.go".into(),
                },
                Staged {
                    original: "root_test.go".into(),
                    dir: "".into(),
                    target: "tt_L1_root_test.go".into(),
                },
            ]
        );
        let copy = dir.path().join("copy");
        stage(&repo, &copy, &tests, &staged).unwrap();
        assert!(copy.join("stats/tt_L1_mean_test.go").is_file());
        stage(&repo, &copy, &tests, &staged[1..]).unwrap();
        assert!(!copy.join("stats/tt_L1_mean_test.go").exists());
        assert!(copy.join("tt_L1_root_test.go").is_file() && copy.join("go.mod").is_file());
    }
}
