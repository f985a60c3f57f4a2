//! The Python modules a generation round tests: the files in the session's scope that are
//! importable modules and not tests. Shared by the built-in and the agent-backed generator.

use std::path::Path;

use crate::gen::ModuleRef;
use crate::pipeline::scope::ChangeKind;
use crate::session::scope::load_scope;
use crate::session::SessionDir;
use crate::team::error::RoleError;
use crate::team::RoleContext;
use crate::testing::detect::test_pattern;

/// Python files that run code when imported (or are not modules at all): never imported by a test.
const NOT_IMPORTABLE: [&str; 5] = [
    "setup.py",
    "conftest.py",
    "__main__.py",
    "noxfile.py",
    "manage.py",
];

/// The modules in scope: the changed (or, with no change, all) Python files that are importable
/// modules and not tests.
pub(crate) fn modules_in_scope(ctx: &RoleContext) -> Result<Vec<ModuleRef>, RoleError> {
    modules_of(ctx.session, ctx.repo)
}

/// [`modules_in_scope`] of `session`, whose repository is `repo`.
pub(crate) fn modules_of(session: &SessionDir, repo: &Path) -> Result<Vec<ModuleRef>, RoleError> {
    let scope = load_scope(session)?;
    let src_layout = !repo.join("src/__init__.py").is_file();
    // The project's Python source only: not its tests (pytest's testpaths included), examples,
    // scripts or docs.
    let project = crate::testing::project_files::of_repo(
        repo,
        Some(crate::testing::framework::Framework::Pytest),
    );
    let mut modules: Vec<ModuleRef> = Vec::new();
    for f in &scope.files {
        let name = f.path.rsplit('/').next().unwrap_or("");
        let usable = f.kind != ChangeKind::Deleted
            && f.path.ends_with(".py")
            && test_pattern(&f.path).is_none()
            && !under_tests(&f.path)
            && project.sources.contains(&f.path)
            && !NOT_IMPORTABLE.contains(&name)
            && repo.join(&f.path).is_file();
        if !usable {
            continue;
        }
        if let Some(module) = module_name(&f.path, src_layout) {
            if !modules.iter().any(|m| m.module == module) {
                modules.push(ModuleRef {
                    module,
                    file: f.path.clone(),
                });
            }
        }
    }
    Ok(modules)
}

/// The file the built-in generator's search writes for `module` in a layer's folder (what
/// `tt_render.py`'s `test_file_name` gives): `calc.ops` -> `test_calc_ops.py`.
pub(crate) fn search_file(module: &str) -> String {
    format!("test_{}.py", module.replace('.', "_"))
}

/// The search's entry-point tests (L3), beside the modules' files.
pub(crate) const ENTRY_POINTS_FILE: &str = "test_entry_points.py";

/// Every file name the search may write in a layer's folder for `session`, with what it tests.
pub(crate) fn search_files(
    session: &SessionDir,
    repo: &Path,
) -> std::collections::BTreeMap<String, String> {
    let mut files: std::collections::BTreeMap<String, String> = modules_of(session, repo)
        .unwrap_or_default()
        .into_iter()
        .map(|m| (search_file(&m.module), format!("module {}", m.module)))
        .collect();
    files.insert(ENTRY_POINTS_FILE.to_string(), "the entry points".into());
    files
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
