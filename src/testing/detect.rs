//! Facts about the target repository: its files, which are tests or code, and its test framework.

use std::path::Path;

use serde_json::Value;

use super::framework::Framework;

const WALK_LIMIT: usize = 50_000;
const SKIP_DIRS: [&str; 9] = [
    ".git",
    ".workflow",
    "target",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".pytest_cache",
];

/// Node test runners, first match wins, with the config files that name each.
const NODE_RUNNERS: [(Framework, &[&str]); 3] = [
    (
        Framework::Jest,
        &[
            "jest.config.js",
            "jest.config.ts",
            "jest.config.mjs",
            "jest.config.cjs",
            "jest.config.json",
        ],
    ),
    (
        Framework::Vitest,
        &[
            "vitest.config.js",
            "vitest.config.ts",
            "vitest.config.mjs",
            "vitest.config.mts",
        ],
    ),
    (
        Framework::Mocha,
        &[
            ".mocharc.js",
            ".mocharc.cjs",
            ".mocharc.json",
            ".mocharc.yml",
            ".mocharc.yaml",
        ],
    ),
];

/// Every file under `repo` (relative, sorted), skipping VCS, build, dependency and session folders.
pub(crate) fn walk(repo: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![repo.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let name = e.file_name().to_string_lossy().into_owned();
            if ft.is_dir() && !SKIP_DIRS.contains(&name.as_str()) {
                stack.push(e.path());
            } else if ft.is_file() && out.len() < WALK_LIMIT {
                if let Ok(rel) = e.path().strip_prefix(repo) {
                    out.push(rel.to_string_lossy().into_owned());
                }
            }
        }
    }
    out.sort();
    out
}

/// The last path component.
pub(crate) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The naming pattern that makes `path` a test file, if any.
pub(crate) fn test_pattern(path: &str) -> Option<&'static str> {
    let name = file_name(path);
    if name.starts_with("test_") && name.ends_with(".py") {
        Some("test_*.py")
    } else if name.ends_with("_test.py") {
        Some("*_test.py")
    } else if name.ends_with("_test.go") {
        Some("*_test.go")
    } else if name.contains(".test.") {
        Some("*.test.*")
    } else if name.contains(".spec.") {
        Some("*.spec.*")
    } else if path.starts_with("tests/") && name.ends_with(".rs") {
        Some("tests/*.rs")
    } else {
        None
    }
}

/// A build, packaging or settings file.
pub(crate) fn is_config(path: &str) -> bool {
    let name = file_name(path);
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    name.starts_with("Dockerfile")
        || name == "Makefile"
        || ["toml", "json", "yaml", "yml", "cfg", "ini"].contains(&ext)
}

/// Source code under test (not a test, config or document).
pub(crate) fn is_code(path: &str) -> bool {
    let ext = file_name(path)
        .rsplit_once('.')
        .map(|(_, e)| e)
        .unwrap_or("");
    const CODE: [&str; 16] = [
        "py", "rs", "js", "jsx", "ts", "tsx", "mjs", "cjs", "go", "java", "kt", "c", "cc", "cpp",
        "rb", "sh",
    ];
    // Tooling, not code under test: packaging scripts, test fixtures, documentation builds.
    let tooling = matches!(
        file_name(path),
        "conftest.py" | "setup.py" | "noxfile.py" | "fabfile.py" | "manage.py"
    ) || path.starts_with("docs/");
    CODE.contains(&ext) && test_pattern(path).is_none() && !is_config(path) && !tooling
}

/// First match wins: pytest's config files, then cargo, node (jest, vitest, mocha by config file or
/// dependency, else node:test), go, then Python tests using unittest, Python test files (pytest),
/// and Python sources. The reason says which file decided; None when nothing did.
pub(crate) fn detect_framework(repo: &Path, files: &[String]) -> (Option<Framework>, String) {
    let has = |n: &str| repo.join(n).is_file();
    let holds = |n: &str, needle: &str| {
        std::fs::read_to_string(repo.join(n)).is_ok_and(|t| t.contains(needle))
    };
    let found = |fw: Framework, why: String| (Some(fw), why);
    if has("pytest.ini") {
        return found(Framework::Pytest, "pytest.ini".into());
    }
    if holds("pyproject.toml", "[tool.pytest") {
        return found(
            Framework::Pytest,
            "pyproject.toml has [tool.pytest…]".into(),
        );
    }
    if has("conftest.py") {
        return found(Framework::Pytest, "conftest.py".into());
    }
    if holds("setup.cfg", "[tool:pytest]") {
        return found(Framework::Pytest, "setup.cfg has [tool:pytest]".into());
    }
    if has("Cargo.toml") {
        return found(Framework::Cargo, "Cargo.toml".into());
    }
    if has("package.json") {
        let pkg: Value = std::fs::read_to_string(repo.join("package.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null);
        for (runner, configs) in NODE_RUNNERS {
            if let Some(c) = configs.iter().find(|c| has(c)) {
                return found(runner, c.to_string());
            }
            if ["dependencies", "devDependencies"]
                .iter()
                .any(|k| pkg[k].get(runner.as_str()).is_some())
            {
                return found(runner, format!("package.json depends on {runner}"));
            }
        }
        return found(
            Framework::NodeTest,
            "package.json without jest/vitest/mocha: node --test".into(),
        );
    }
    if has("go.mod") {
        return found(Framework::Go, "go.mod".into());
    }
    // Project files decide before file-name heuristics: a Rust crate with a helper script named
    // test_release.py is still a Rust crate.
    if let Some(t) = files.iter().find(|p| {
        p.ends_with(".py")
            && file_name(p).contains("test")
            && std::fs::read_to_string(repo.join(p)).is_ok_and(|t| t.contains("import unittest"))
    }) {
        return found(Framework::Unittest, format!("{t} imports unittest"));
    }
    if let Some(t) = files
        .iter()
        .find(|p| matches!(test_pattern(p), Some("test_*.py" | "*_test.py")))
    {
        return found(Framework::Pytest, format!("Python test file {t}"));
    }
    if let Some(p) = files.iter().find(|p| p.ends_with(".py")) {
        return found(
            Framework::Pytest,
            format!("Python sources ({p}), no test config: pytest assumed"),
        );
    }
    (
        None,
        "no pytest, Cargo, package.json or go.mod project file and no Python sources".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_are_recognised() {
        assert_eq!(test_pattern("tests/test_calc.py"), Some("test_*.py"));
        assert_eq!(test_pattern("calc_test.go"), Some("*_test.go"));
        assert_eq!(test_pattern("src/a.spec.ts"), Some("*.spec.*"));
        assert_eq!(test_pattern("src/calc.py"), None);
        assert!(is_code("src/calc.py") && !is_code("tests/test_calc.py") && !is_code("setup.cfg"));
        assert!(!is_code("conftest.py") && !is_code("setup.py") && !is_code("docs/conf.py"));
    }

    #[test]
    fn framework_detection_first_match_wins() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\n").unwrap();
        assert_eq!(detect_framework(dir.path(), &[]).0, Some(Framework::Cargo));
        // A Python helper script named like a test does not make a Rust crate a pytest project.
        let files = vec!["scripts/test_release.py".to_string()];
        assert_eq!(
            detect_framework(dir.path(), &files).0,
            Some(Framework::Cargo)
        );
        let plain = tempfile::tempdir().unwrap();
        assert_eq!(
            detect_framework(plain.path(), &files).0,
            Some(Framework::Pytest)
        );
        std::fs::write(plain.path().join("test_u.py"), "import unittest\n").unwrap();
        let with_unittest = vec!["test_u.py".to_string()];
        assert_eq!(
            detect_framework(plain.path(), &with_unittest).0,
            Some(Framework::Unittest)
        );
        std::fs::write(dir.path().join("pytest.ini"), "[pytest]\n").unwrap();
        assert_eq!(
            detect_framework(dir.path(), &files),
            (Some(Framework::Pytest), "pytest.ini".into())
        );
    }
}
