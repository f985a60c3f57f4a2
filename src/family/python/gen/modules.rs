//! Which of a project's files the Python generator tests: importable modules of the project's
//! source, never its tests, test folders, or files that run code when imported.

use std::path::Path;

use crate::gen::ModuleRef;
use crate::testing::detect::test_pattern;

/// Python files that run code when imported (or are not modules at all): never imported by a test.
const NOT_IMPORTABLE: [&str; 5] = [
    "setup.py",
    "conftest.py",
    "__main__.py",
    "noxfile.py",
    "manage.py",
];

/// The modules among `files` (the scope's present files, relative to `repo`).
pub fn of(repo: &Path, files: &[String]) -> Vec<ModuleRef> {
    let src_layout = !repo.join("src/__init__.py").is_file();
    // The project's Python source only: not its tests (pytest's testpaths included), examples,
    // scripts or docs.
    let project = crate::testing::project_files::of_repo(
        repo,
        Some(crate::testing::framework::Framework::Pytest),
    );
    let mut modules: Vec<ModuleRef> = Vec::new();
    for path in files {
        let name = path.rsplit('/').next().unwrap_or("");
        let usable = path.ends_with(".py")
            && test_pattern(path).is_none()
            && !under_tests(path)
            && project.sources.contains(path)
            && !NOT_IMPORTABLE.contains(&name)
            && repo.join(path).is_file();
        if !usable {
            continue;
        }
        if let Some(module) = module_name(path, src_layout) {
            if !modules.iter().any(|m| m.module == module) {
                modules.push(ModuleRef {
                    module,
                    file: path.clone(),
                });
            }
        }
    }
    modules
}

/// Files in a tests/ or test/ folder are test support, not modules under test.
fn under_tests(path: &str) -> bool {
    let dirs = Path::new(path)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    dirs.split('/').any(|d| d == "tests" || d == "test")
}

/// `pkg/mod.py` -> `pkg.mod`; `src/pkg/mod.py` -> `pkg.mod` in a src layout; `pkg/__init__.py` -> `pkg`.
fn module_name(path: &str, src_layout: bool) -> Option<String> {
    let stem = path.strip_suffix(".py")?;
    let stem = if src_layout {
        stem.strip_prefix("src/").unwrap_or(stem)
    } else {
        stem
    };
    let mut parts: Vec<&str> = stem.split('/').collect();
    if parts.last() == Some(&"__init__") {
        parts.pop();
    }
    let identifier = |p: &&str| {
        p.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && p.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    (!parts.is_empty() && parts.iter().all(identifier)).then(|| parts.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_follow_the_layout() {
        assert_eq!(module_name("pkg/mod.py", true).as_deref(), Some("pkg.mod"));
        assert_eq!(
            module_name("src/pkg/mod.py", true).as_deref(),
            Some("pkg.mod")
        );
        assert_eq!(
            module_name("src/pkg/mod.py", false).as_deref(),
            Some("src.pkg.mod")
        );
        assert_eq!(module_name("pkg/__init__.py", true).as_deref(), Some("pkg"));
        assert_eq!(module_name("my-scripts/run.py", true), None);
        assert_eq!(module_name("README.md", true), None);
    }

    #[test]
    fn tests_folders_are_not_modules() {
        assert!(under_tests("tests/helpers.py"));
        assert!(under_tests("pkg/test/util.py"));
        assert!(!under_tests("pkg/testing.py"));
    }
}
