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

/// The project files `file` imports: the `__init__.py` of every package on the way (its own
/// package's included), and the modules it names (the whole package for `from pkg import ...`,
/// whose names may be submodules).
pub fn imports(repo: &Path, file: &str, sources: &[String]) -> (Vec<String>, Vec<String>) {
    let src_layout = !repo.join("src/__init__.py").is_file();
    let Ok(text) = std::fs::read_to_string(repo.join(file)) else {
        return (Vec::new(), Vec::new());
    };
    let by_name: Vec<(String, &String)> = sources
        .iter()
        .filter_map(|f| module_name(f, src_layout).map(|m| (m, f)))
        .collect();
    let own = module_name(file, src_layout).unwrap_or_default();
    let package = if file.ends_with("__init__.py") {
        own.clone()
    } else {
        own.rsplit_once('.')
            .map_or(String::new(), |(p, _)| p.to_string())
    };
    // (dotted name, the whole package below it too)
    let mut wanted: Vec<(String, bool)> = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix("from ") {
            let target = rest.split_whitespace().next().unwrap_or("");
            let dots = target.len() - target.trim_start_matches('.').len();
            let name = &target[dots..];
            let absolute = if dots == 0 {
                name.to_string()
            } else {
                let mut base: Vec<&str> = package.split('.').filter(|p| !p.is_empty()).collect();
                base.truncate(base.len().saturating_sub(dots - 1));
                base.into_iter()
                    .chain(name.split('.').filter(|p| !p.is_empty()))
                    .collect::<Vec<_>>()
                    .join(".")
            };
            wanted.push((absolute, true));
        } else if let Some(rest) = line.strip_prefix("import ") {
            for part in rest.split(',') {
                let name = part.split_whitespace().next().unwrap_or("");
                wanted.push((name.to_string(), false));
            }
        }
    }
    let file_of = |name: &str| {
        by_name
            .iter()
            .find(|(m, _)| m == name)
            .map(|(_, f)| (*f).clone())
    };
    let mut packages = Vec::new();
    let mut imported = Vec::new();
    // Every package on the way runs on import: its own too.
    wanted.push((package, false));
    for (name, whole_package) in wanted {
        let parts: Vec<&str> = name.split('.').filter(|p| !p.is_empty()).collect();
        for end in 1..parts.len() {
            packages.extend(file_of(&parts[..end].join(".")));
        }
        match file_of(&name) {
            Some(f) if f.ends_with("__init__.py") && !whole_package => packages.push(f),
            Some(f) => imported.push(f),
            None => {}
        }
        if whole_package && !name.is_empty() {
            let below = format!("{name}.");
            imported.extend(
                by_name
                    .iter()
                    .filter(|(m, _)| m.starts_with(&below))
                    .map(|(_, f)| (*f).clone()),
            );
        }
    }
    for list in [&mut packages, &mut imported] {
        list.sort();
        list.dedup();
    }
    (packages, imported)
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
    fn a_module_reads_what_it_imports_and_its_packages() {
        let repo = tempfile::tempdir().unwrap();
        let files = [
            ("pkg/__init__.py", ""),
            (
                "pkg/ops.py",
                "from .util import helper\nimport os, pkg.deep.leaf as l\n",
            ),
            ("pkg/util.py", ""),
            ("pkg/deep/__init__.py", ""),
            ("pkg/deep/leaf.py", ""),
            ("pkg/other.py", ""),
        ];
        for (f, text) in files {
            std::fs::create_dir_all(repo.path().join(f).parent().unwrap()).unwrap();
            std::fs::write(repo.path().join(f), text).unwrap();
        }
        let sources: Vec<String> = files.iter().map(|(f, _)| f.to_string()).collect();
        let (packages, imported) = imports(repo.path(), "pkg/ops.py", &sources);
        assert_eq!(packages, ["pkg/__init__.py", "pkg/deep/__init__.py"]);
        assert_eq!(imported, ["pkg/deep/leaf.py", "pkg/util.py"]);
    }

    #[test]
    fn tests_folders_are_not_modules() {
        assert!(under_tests("tests/helpers.py"));
        assert!(under_tests("pkg/test/util.py"));
        assert!(!under_tests("pkg/testing.py"));
    }
}
