//! Which of a project's files are its source, which its own tests, and which neither (examples,
//! scripts, documentation, fixtures, vendored and generated files). The language family and the
//! project's own configuration decide: pytest's `testpaths`, jest's `roots` and `testMatch`,
//! mocha's `spec` (in `.mocharc.*`, package.json or the `test` script), vitest's `include`,
//! Cargo's targets, Go's `_test.go` and `testdata/`. Only a family's source counts in coverage
//! and is what the generators test.

use std::path::Path;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_json::Value;

use super::detect::test_pattern;
use super::framework::{Family, Framework};

/// A project's files, sorted, each in one list.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ProjectFiles {
    /// The family's source files: what is tested and whose coverage counts.
    pub sources: Vec<String>,
    /// The project's own test files (its suite, run as the baseline).
    pub tests: Vec<String>,
}

/// Folders whose files are never source, in any family.
const NOT_SOURCE_DIRS: [&str; 29] = [
    "test",
    "tests",
    "__tests__",
    "__mocks__",
    "__fixtures__",
    "__snapshots__",
    "spec",
    "specs",
    "e2e",
    "testdata",
    "test_data",
    "fixtures",
    "examples",
    "example",
    "samples",
    "sample",
    "demo",
    "demos",
    "docs",
    "doc",
    "scripts",
    "benchmarks",
    "benches",
    "bench",
    "vendor",
    "vendored",
    "third_party",
    "third-party",
    "tt-tests",
];

/// Build output and dependencies, never the project's own code.
const OUTPUT_DIRS: [&str; 6] = ["node_modules", "dist", "build", "coverage", "out", "site"];

/// Folders whose files are the project's tests (every family's convention).
const TEST_DIRS: [&str; 6] = ["test", "tests", "__tests__", "spec", "specs", "e2e"];

/// Tooling files that are code but not code under test.
const TOOLING: [&str; 10] = [
    "conftest.py",
    "setup.py",
    "noxfile.py",
    "fabfile.py",
    "manage.py",
    "tasks.py",
    "build.rs",
    "Gruntfile.js",
    "gulpfile.js",
    "Jakefile.js",
];

fn extensions(family: Family) -> &'static [&'static str] {
    match family {
        Family::Python => &["py"],
        Family::Cargo => &["rs"],
        Family::Go => &["go"],
        Family::Node => &["js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx"],
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn dirs(path: &str) -> impl Iterator<Item = &str> {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    parts.into_iter()
}

/// Classifies `files` (repository-relative) of the project at `repo`.
pub fn classify(repo: &Path, framework: Option<Framework>, files: &[String]) -> ProjectFiles {
    let Some(family) = framework.map(Framework::family) else {
        return ProjectFiles {
            tests: files
                .iter()
                .filter(|f| test_pattern(f).is_some())
                .cloned()
                .collect(),
            sources: files
                .iter()
                .filter(|f| super::detect::is_code(f))
                .cloned()
                .collect(),
        };
    };
    let configured = configured_tests(repo, family);
    let cargo_targets = if family == Family::Cargo {
        cargo_target_paths(repo)
    } else {
        Vec::new()
    };
    let mut out = ProjectFiles::default();
    for f in files {
        let ext = file_name(f).rsplit_once('.').map_or("", |(_, e)| e);
        let of_family = extensions(family).contains(&ext) && !f.ends_with(".d.ts");
        let is_test = of_family
            && (is_conventional_test(f, family)
                || configured.as_ref().is_some_and(|c| c.is_match(f))
                || cargo_targets
                    .iter()
                    .any(|t| f == t || f.starts_with(&format!("{t}/"))));
        if is_test {
            out.tests.push(f.clone());
        } else if of_family && is_source(repo, f, family) {
            out.sources.push(f.clone());
        }
    }
    out
}

/// [`classify`] of every file of the project at `repo` (as [`super::detect::walk`] lists them).
pub fn of_repo(repo: &Path, framework: Option<Framework>) -> ProjectFiles {
    classify(repo, framework, &super::detect::walk(repo))
}

/// A test by the family's naming and folder conventions.
fn is_conventional_test(path: &str, family: Family) -> bool {
    let name = file_name(path);
    match family {
        Family::Go => name.ends_with("_test.go"),
        Family::Cargo => {
            // Cargo's own target folders: integration tests, benches, examples.
            let first = path.split('/').next().unwrap_or("");
            path.contains('/') && matches!(first, "tests" | "benches" | "examples")
        }
        Family::Python => {
            test_pattern(path).is_some() || dirs(path).any(|d| TEST_DIRS.contains(&d))
        }
        Family::Node => {
            // jest's `?(*.)+(spec|test).[jt]s?(x)` (a root `test.js` too) and node --test's
            // `test.js`, `test-*`, `*-test.*`, `*_test.*`.
            let stem = name.split('.').next().unwrap_or(name);
            name.contains(".test.")
                || name.contains(".spec.")
                // tstyche's type tests (`index.tst.ts`): checked by the compiler, never run.
                || name.contains(".tst.")
                || matches!(stem, "test" | "spec")
                || stem.starts_with("test-")
                || stem.ends_with("-test")
                || stem.ends_with("_test")
                || dirs(path).any(|d| TEST_DIRS.contains(&d))
        }
    }
}

/// Source: not under a folder that holds tests, examples, scripts, docs, fixtures, vendored or
/// built files, not a tool's file, not generated.
fn is_source(repo: &Path, path: &str, family: Family) -> bool {
    let name = file_name(path);
    if dirs(path)
        .any(|d| NOT_SOURCE_DIRS.contains(&d) || OUTPUT_DIRS.contains(&d) || d.starts_with('.'))
    {
        return false;
    }
    if TOOLING.contains(&name) || name.starts_with('.') || is_config_script(name) {
        return false;
    }
    if family == Family::Node && name.ends_with(".min.js") {
        return false;
    }
    !is_generated(&repo.join(path))
}

/// `jest.config.js`, `rollup.config.mjs`, `.eslintrc.cjs` and the like.
fn is_config_script(name: &str) -> bool {
    name.contains(".config.") || name.starts_with('.')
}

/// A file that says it was generated (Go's "Code generated … DO NOT EDIT.", `@generated`).
fn is_generated(path: &Path) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(1024);
    if file.take(1024).read_to_end(&mut head).is_err() {
        return false;
    }
    let text = String::from_utf8_lossy(&head);
    text.lines().take(10).any(|l| {
        (l.contains("Code generated") && l.contains("DO NOT EDIT")) || l.contains("@generated")
    })
}

/// The test files the project's own configuration names, as globs over repository paths.
fn configured_tests(repo: &Path, family: Family) -> Option<GlobSet> {
    let patterns = match family {
        Family::Python => pytest_testpaths(repo)
            .into_iter()
            .map(|p| format!("{}/**", p.trim_end_matches('/')))
            .collect(),
        Family::Node => node_test_globs(repo),
        Family::Cargo | Family::Go => Vec::new(),
    };
    let mut builder = GlobSetBuilder::new();
    let mut any = false;
    for p in patterns {
        let p = p.trim_start_matches("./").trim_start_matches("<rootDir>/");
        if let Ok(glob) = Glob::new(p) {
            builder.add(glob);
            any = true;
        }
    }
    any.then(|| builder.build().ok()).flatten()
}

/// pytest's `testpaths` from pytest.ini, pyproject.toml, tox.ini or setup.cfg (the first file
/// that configures pytest decides, as pytest itself does).
pub(crate) fn pytest_testpaths(repo: &Path) -> Vec<String> {
    for (file, section) in [
        ("pytest.ini", "[pytest]"),
        ("pyproject.toml", "[tool.pytest.ini_options]"),
        ("tox.ini", "[pytest]"),
        ("setup.cfg", "[tool:pytest]"),
    ] {
        let Ok(text) = std::fs::read_to_string(repo.join(file)) else {
            continue;
        };
        if !text.contains(section) {
            continue;
        }
        if file == "pyproject.toml" {
            let parsed: toml::Value = toml::from_str(&text).unwrap_or(toml::Value::Boolean(false));
            return match parsed
                .get("tool")
                .and_then(|t| t.get("pytest"))
                .and_then(|t| t.get("ini_options"))
                .and_then(|t| t.get("testpaths"))
            {
                Some(toml::Value::Array(a)) => a
                    .iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect(),
                Some(toml::Value::String(s)) => s.split_whitespace().map(String::from).collect(),
                _ => Vec::new(),
            };
        }
        return ini_value(&text, section, "testpaths")
            .map(|v| v.split_whitespace().map(String::from).collect())
            .unwrap_or_default();
    }
    Vec::new()
}

/// pytest's `python_files` patterns, where the project sets them (pytest's default otherwise).
pub(crate) fn pytest_python_files(repo: &Path) -> Option<(Vec<String>, &'static str)> {
    for (file, section) in [
        ("pytest.ini", "[pytest]"),
        ("pyproject.toml", "[tool.pytest.ini_options]"),
        ("tox.ini", "[pytest]"),
        ("setup.cfg", "[tool:pytest]"),
    ] {
        let Ok(text) = std::fs::read_to_string(repo.join(file)) else {
            continue;
        };
        if !text.contains(section) {
            continue;
        }
        let value = if file == "pyproject.toml" {
            let parsed: toml::Value = toml::from_str(&text).unwrap_or(toml::Value::Boolean(false));
            match parsed
                .get("tool")
                .and_then(|t| t.get("pytest"))
                .and_then(|t| t.get("ini_options"))
                .and_then(|t| t.get("python_files"))
            {
                Some(toml::Value::Array(a)) => a
                    .iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect(),
                Some(toml::Value::String(s)) => s.split_whitespace().map(String::from).collect(),
                _ => Vec::new(),
            }
        } else {
            ini_value(&text, section, "python_files")
                .map(|v| v.split_whitespace().map(String::from).collect())
                .unwrap_or_default()
        };
        return (!value.is_empty()).then_some((value, file));
    }
    None
}

/// The value of `key` in `section` of an ini file (continuation lines joined).
fn ini_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut inside = false;
    let mut value: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            if value.is_some() {
                break;
            }
            inside = trimmed == section;
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(v) = value.as_mut() {
            if line.starts_with([' ', '\t']) && !trimmed.is_empty() {
                v.push(' ');
                v.push_str(trimmed);
                continue;
            }
            break;
        }
        if let Some((k, v)) = trimmed.split_once(['=', ':']) {
            if k.trim() == key {
                value = Some(v.trim().to_string());
            }
        }
    }
    value.map(|v| v.trim().to_string())
}

/// The test files a node project's runner configuration names: mocha's `spec` (.mocharc.*,
/// package.json's `mocha`, or the paths the `test` script gives mocha), jest's `roots` and
/// `testMatch`, vitest's `include`.
fn node_test_globs(repo: &Path) -> Vec<String> {
    let pkg: Value = std::fs::read_to_string(repo.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let mut out = Vec::new();
    let strings = |v: &Value| -> Vec<String> {
        match v {
            Value::String(s) => vec![s.clone()],
            Value::Array(a) => a
                .iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect(),
            _ => Vec::new(),
        }
    };
    // mocha
    out.extend(strings(&pkg["mocha"]["spec"]));
    for name in [".mocharc.json", ".mocharc.jsonc"] {
        if let Some(v) = read_json_lenient(&repo.join(name)) {
            out.extend(strings(&v["spec"]));
        }
    }
    for name in [".mocharc.yml", ".mocharc.yaml"] {
        if let Ok(text) = std::fs::read_to_string(repo.join(name)) {
            if let Ok(v) = serde_norway::from_str::<Value>(&text) {
                out.extend(strings(&v["spec"]));
            }
        }
    }
    for name in [".mocharc.js", ".mocharc.cjs"] {
        if let Ok(text) = std::fs::read_to_string(repo.join(name)) {
            out.extend(js_array_strings(&text, "spec"));
        }
    }
    if let Some(script) = pkg["scripts"]["test"].as_str() {
        out.extend(mocha_script_paths(repo, script));
    }
    // jest: roots are folders of tests and code alike, so only testMatch names tests.
    out.extend(strings(&pkg["jest"]["testMatch"]));
    for name in [
        "jest.config.js",
        "jest.config.cjs",
        "jest.config.mjs",
        "jest.config.ts",
    ] {
        if let Ok(text) = std::fs::read_to_string(repo.join(name)) {
            out.extend(js_array_strings(&text, "testMatch"));
        }
    }
    if let Some(v) = read_json_lenient(&repo.join("jest.config.json")) {
        out.extend(strings(&v["testMatch"]));
    }
    // vitest
    for stem in ["vitest.config", "vite.config"] {
        for ext in ["ts", "mts", "js", "mjs", "cjs"] {
            if let Ok(text) = std::fs::read_to_string(repo.join(format!("{stem}.{ext}"))) {
                out.extend(js_array_strings(&text, "include"));
            }
        }
    }
    // A path that is a folder stands for the files in it.
    out.into_iter()
        .map(|p| {
            let p = p.trim_start_matches("./").to_string();
            if repo.join(&p).is_dir() {
                format!("{}/**", p.trim_end_matches('/'))
            } else {
                p
            }
        })
        .collect()
}

fn read_json_lenient(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// The quoted strings of `key: [ … ]` (or `key: '…'`) in a JavaScript config file.
fn js_array_strings(text: &str, key: &str) -> Vec<String> {
    let Ok(re) = regex::Regex::new(&format!(
        r#"(?s)\b{key}\s*:\s*(\[[^\]]*\]|'[^']*'|"[^"]*")"#
    )) else {
        return Vec::new();
    };
    let quoted = regex::Regex::new(r#"'([^']*)'|"([^"]*)"|`([^`$]*)`"#).expect("valid regex");
    let mut out = Vec::new();
    for cap in re.captures_iter(text) {
        for q in quoted.captures_iter(&cap[1]) {
            if let Some(m) = q.get(1).or_else(|| q.get(2)).or_else(|| q.get(3)) {
                out.push(m.as_str().to_string());
            }
        }
    }
    out
}

/// The paths a `mocha …` test script names (files, folders or globs): the words after `mocha`
/// that are not options, nor the values of options that take one.
fn mocha_script_paths(repo: &Path, script: &str) -> Vec<String> {
    const TAKES_VALUE: [&str; 14] = [
        "--reporter",
        "-R",
        "--require",
        "-r",
        "--timeout",
        "-t",
        "--ui",
        "-u",
        "--grep",
        "-g",
        "--config",
        "--reporter-option",
        "--file",
        "--extension",
    ];
    let mut out = Vec::new();
    for command in script.split(['&', ';', '|']) {
        let words = shlex::split(command).unwrap_or_default();
        let Some(at) = words
            .iter()
            .position(|w| file_name(w) == "mocha" || w == "_mocha")
        else {
            continue;
        };
        let mut skip = false;
        for w in &words[at + 1..] {
            if skip {
                skip = false;
                continue;
            }
            if w.starts_with('-') {
                skip = TAKES_VALUE.contains(&w.as_str()) && !w.contains('=');
                continue;
            }
            let plain = w.trim_start_matches("./");
            let glob = plain.contains('*');
            if glob || repo.join(plain).exists() {
                out.push(plain.to_string());
            }
        }
        // mocha without paths runs ./test (not recursive).
        if !words[at + 1..].iter().any(|w| !w.starts_with('-')) && repo.join("test").is_dir() {
            out.push("test/*".into());
        }
    }
    out
}

/// Files of a crate's `[[test]]`, `[[bench]]` and `[[example]]` targets with a `path`.
fn cargo_target_paths(repo: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(repo.join("Cargo.toml")) else {
        return Vec::new();
    };
    let Ok(manifest) = toml::from_str::<toml::Value>(&text) else {
        return Vec::new();
    };
    ["test", "bench", "example"]
        .iter()
        .filter_map(|k| manifest.get(*k)?.as_array())
        .flatten()
        .filter_map(|t| t.get("path")?.as_str().map(String::from))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    fn names(files: &[(&str, &str)]) -> Vec<String> {
        let mut v: Vec<String> = files.iter().map(|(p, _)| p.to_string()).collect();
        v.sort();
        v
    }

    #[test]
    fn a_mocha_projects_test_folder_and_examples_are_not_source() {
        let files = [
            (
                "package.json",
                r#"{"scripts": {"test": "mocha --reporter spec --check-leaks test/"}}"#,
            ),
            ("index.js", ""),
            ("lib/charset.js", ""),
            ("test/charset.js", ""),
            ("test/support/helper.js", ""),
            ("examples/accept.js", ""),
            ("scripts/release.sh", ""),
        ];
        let dir = project(&files);
        let got = classify(dir.path(), Some(Framework::Mocha), &names(&files));
        assert_eq!(got.sources, ["index.js", "lib/charset.js"]);
        assert_eq!(got.tests, ["test/charset.js", "test/support/helper.js"]);
    }

    #[test]
    fn python_testpaths_shell_scripts_and_docs_are_not_source() {
        let files = [
            (
                "pyproject.toml",
                "[tool.pytest.ini_options]\ntestpaths = [\"checks\"]\n",
            ),
            ("pkg/__init__.py", ""),
            ("pkg/core.py", ""),
            ("checks/check_core.py", ""),
            ("scripts/bump.sh", ""),
            ("docs/conf.py", ""),
            ("setup.py", ""),
        ];
        let dir = project(&files);
        let got = classify(dir.path(), Some(Framework::Pytest), &names(&files));
        assert_eq!(got.sources, ["pkg/__init__.py", "pkg/core.py"]);
        assert_eq!(got.tests, ["checks/check_core.py"]);
    }

    #[test]
    fn go_tests_testdata_and_generated_files_and_cargo_targets() {
        let files = [
            ("uuid.go", ""),
            ("uuid_test.go", ""),
            ("testdata/x.go", ""),
            (
                "gen.go",
                "// Code generated by stringer. DO NOT EDIT.\npackage uuid\n",
            ),
        ];
        let dir = project(&files);
        let got = classify(dir.path(), Some(Framework::Go), &names(&files));
        assert_eq!(got.sources, ["uuid.go"]);
        assert_eq!(got.tests, ["uuid_test.go"]);
        let files = [
            (
                "Cargo.toml",
                "[package]\nname = \"x\"\n[[test]]\nname = \"it\"\npath = \"checks/it.rs\"\n",
            ),
            ("src/lib.rs", ""),
            ("build.rs", ""),
            ("tests/api.rs", ""),
            ("benches/speed.rs", ""),
            ("examples/demo.rs", ""),
            ("checks/it.rs", ""),
        ];
        let dir = project(&files);
        let got = classify(dir.path(), Some(Framework::Cargo), &names(&files));
        assert_eq!(got.sources, ["src/lib.rs"]);
        assert_eq!(
            got.tests,
            [
                "benches/speed.rs",
                "checks/it.rs",
                "examples/demo.rs",
                "tests/api.rs"
            ]
        );
    }

    #[test]
    fn jest_test_match_and_vitest_include_name_tests() {
        let files = [
            (
                "package.json",
                r#"{"jest": {"testMatch": ["**/checks/**/*.js"]}}"#,
            ),
            ("src/a.js", ""),
            ("src/checks/a.js", ""),
            ("jest.config.js", ""),
        ];
        let dir = project(&files);
        let got = classify(dir.path(), Some(Framework::Jest), &names(&files));
        assert_eq!(got.sources, ["src/a.js"]);
        assert_eq!(got.tests, ["src/checks/a.js"]);
        let files = [
            (
                "vitest.config.ts",
                "export default { test: { include: ['verify/**/*.ts'] } }",
            ),
            ("src/a.ts", ""),
            ("src/a.d.ts", ""),
            ("verify/a.ts", ""),
        ];
        let dir = project(&files);
        let got = classify(dir.path(), Some(Framework::Vitest), &names(&files));
        assert_eq!(got.sources, ["src/a.ts"]);
        assert_eq!(got.tests, ["verify/a.ts"]);
    }

    /// The node test names of the real projects the corpus found counted as source: a root
    /// `test.js` (jest's default pattern; arg), node --test's `test-*.js`, tstyche's `.tst.ts`
    /// type tests (fastify's), and folders of fixtures (`src/__fixtures__`, css-what).
    #[test]
    fn node_test_names_and_fixture_folders_are_not_source() {
        let files = [
            ("package.json", r#"{"scripts": {"test": "node --test"}}"#),
            ("index.js", ""),
            ("test.js", ""),
            ("test-args.js", ""),
            ("types/index.tst.ts", ""),
            ("src/__fixtures__/tests.ts", ""),
            ("src/parse.ts", ""),
        ];
        let dir = project(&files);
        let got = classify(dir.path(), Some(Framework::NodeTest), &names(&files));
        assert_eq!(got.sources, ["index.js", "src/parse.ts"]);
        assert!(
            got.tests.contains(&"test.js".to_string()),
            "{:?}",
            got.tests
        );
        assert!(
            got.tests.contains(&"types/index.tst.ts".to_string()),
            "{:?}",
            got.tests
        );
    }

    #[test]
    fn ini_values_span_continuation_lines() {
        let text = "[pytest]\ntestpaths =\n    tests\n    integration\naddopts = -q\n";
        assert_eq!(
            ini_value(text, "[pytest]", "testpaths").as_deref(),
            Some("tests integration")
        );
    }
}
