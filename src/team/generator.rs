//! Generator: the built-in, offline test writer. For a Python project it writes one import smoke
//! test per module in scope (the module imports from the repository, every name of its `__all__`
//! exists). Other frameworks have no built-in generator yet, and the outcome says so.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use super::util::to_map;
use super::RoleContext;
use crate::pipeline::scope::ChangeKind;
use crate::tasks::Outcome;
use crate::testing::detect::{session_framework, test_pattern};
use crate::testing::session_scope::load_scope;
use crate::util::{atomic_write, mkdirs};

/// Python files that run code when imported (or are not modules at all): never imported by a test.
const NOT_IMPORTABLE: [&str; 5] = [
    "setup.py",
    "conftest.py",
    "__main__.py",
    "noxfile.py",
    "manage.py",
];

/// One module to test: its dotted name and its path relative to the repository.
#[derive(Debug, Clone, PartialEq)]
struct Module {
    name: String,
    path: String,
}

pub fn run(ctx: &RoleContext) -> Outcome {
    let Some(layer) = ctx.task.layer.as_deref() else {
        return Outcome::failed(format!(
            "task {} has no layer: the generator needs one",
            ctx.task.id
        ));
    };
    let round = ctx.task.meta.get("gc_round").and_then(Value::as_u64);
    let framework = session_framework(ctx.session, ctx.repo);
    (ctx.progress)(
        "context_loaded",
        Some(10.0),
        Some(format!("framework {framework}, layer {layer}")),
    );
    let (files, mut summary) = if matches!(framework.as_str(), "pytest" | "unittest") {
        match write_python_tests(ctx, layer) {
            Ok((files, skipped)) => {
                let note = if skipped > 0 {
                    format!(" ({skipped} Python file(s) in scope not importable)")
                } else {
                    String::new()
                };
                let text = format!(
                    "{}: {} import smoke test file(s) written{note}",
                    layer,
                    files.len()
                );
                (files, text)
            }
            Err(e) => return Outcome::failed(e),
        }
    } else {
        (
            Vec::new(),
            format!("no built-in generator for {framework} yet: 0 test files written"),
        )
    };
    (ctx.progress)(
        "tests_written",
        Some(90.0),
        Some(format!("{} file(s)", files.len())),
    );
    if let Some(n) = round {
        // The smoke tests are fully determined by the scope, so a revision can only rewrite them.
        summary =
            format!("GC round {n}: {summary}; the built-in generator has nothing more to add");
    }
    let mut out = Outcome::completed(summary);
    out.data = to_map(json!({
        "layer": layer, "framework": framework, "test_files": files,
        "round": round.unwrap_or(0), "is_revision": round.is_some(),
    }));
    out.artifacts = files;
    out
}

/// Writes the smoke tests; returns their session-relative paths and how many .py files were left out.
fn write_python_tests(ctx: &RoleContext, layer: &str) -> Result<(Vec<String>, usize), String> {
    let scope = load_scope(ctx.session)?;
    let src_layout = !ctx.repo.join("src/__init__.py").is_file();
    let candidates: Vec<&str> = scope
        .files
        .iter()
        .filter(|f| f.kind != ChangeKind::Deleted && f.path.ends_with(".py"))
        .filter(|f| test_pattern(&f.path).is_none() && !under_tests(&f.path))
        .filter(|f| !NOT_IMPORTABLE.contains(&f.path.rsplit('/').next().unwrap_or("")))
        .filter(|f| ctx.repo.join(&f.path).is_file())
        .map(|f| f.path.as_str())
        .collect();
    let mut modules: Vec<Module> = Vec::new();
    for path in &candidates {
        if let Some(name) = module_name(path, src_layout) {
            if !modules.iter().any(|m| m.name == name) {
                modules.push(Module {
                    name,
                    path: path.to_string(),
                });
            }
        }
    }
    let dir = ctx.session.root.join("tests").join(layer);
    mkdirs(&dir).map_err(|e| e.to_string())?;
    let mut written = Vec::new();
    for m in &modules {
        let safe = m.name.replace('.', "_");
        let file = format!("test_import_{safe}.py");
        let has_all =
            std::fs::read_to_string(ctx.repo.join(&m.path)).is_ok_and(|t| t.contains("__all__"));
        atomic_write(&dir.join(&file), smoke_test(m, &safe, has_all).as_bytes())
            .map_err(|e| e.to_string())?;
        written.push(format!("tests/{layer}/{file}"));
    }
    Ok((written, candidates.len() - modules.len()))
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

/// A pytest module with real assertions: the import resolves to the repository's file, and (when
/// the module declares `__all__`) every exported name exists.
fn smoke_test(m: &Module, safe: &str, has_all: bool) -> String {
    let mut py = format!(
        "\"\"\"Import smoke test for {name} ({path}), written by team-testing's built-in generator.\"\"\"\n\
         import importlib\n\n\
         MODULE = \"{name}\"\n\
         SOURCE = \"/{path}\"\n\n\n\
         def test_{safe}_imports_from_the_repository():\n\
         \x20   module = importlib.import_module(MODULE)\n\
         \x20   assert module.__name__ == MODULE\n\
         \x20   assert (module.__file__ or \"\").replace(\"\\\\\", \"/\").endswith(SOURCE)\n",
        name = m.name,
        path = m.path,
    );
    if has_all {
        let _ = write!(
            py,
            "\n\ndef test_{safe}_names_in_all_exist():\n\
             \x20   module = importlib.import_module(MODULE)\n\
             \x20   missing = [name for name in getattr(module, \"__all__\", ()) if not hasattr(module, name)]\n\
             \x20   assert missing == [], f\"names in __all__ but not defined: {{missing}}\"\n"
        );
    }
    py
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

    #[test]
    fn smoke_test_asserts_the_source_and_all() {
        let m = Module {
            name: "pkg.mod".into(),
            path: "src/pkg/mod.py".into(),
        };
        let py = smoke_test(&m, "pkg_mod", true);
        assert!(py.contains("MODULE = \"pkg.mod\""));
        assert!(py.contains("SOURCE = \"/src/pkg/mod.py\""));
        assert!(py.contains("def test_pkg_mod_names_in_all_exist():"));
        assert!(!smoke_test(&m, "pkg_mod", false).contains("__all__\", ()"));
    }
}
