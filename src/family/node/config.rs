//! What a node project's test runner configuration says about where its tests are, read from
//! its files without running any of them: jest's `roots` and `testMatch`, vitest's `include`,
//! mocha's `spec` (the `test` script's paths, `.mocharc.*`, package.json's `mocha`). `apply` reads
//! it to put tests where the project's own command finds them; the project's file classification
//! reads it to tell the project's tests from its source.

use std::path::Path;

use globset::{Glob, GlobSetBuilder};
use serde_json::Value;

/// A micromatch pattern as plain globs: each extglob `?(a|b)` (none or one), `+(a|b)` and
/// `@(a|b)` (one of them) expanded into its alternatives; `<rootDir>/` and `./` dropped.
pub fn expand(pattern: &str) -> Vec<String> {
    let p = clean(pattern);
    let mut out = vec![String::new()];
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        if matches!(c, '?' | '+' | '@') && chars.peek() == Some(&'(') {
            chars.next();
            let mut inner = String::new();
            for d in chars.by_ref() {
                if d == ')' {
                    break;
                }
                inner.push(d);
            }
            let mut options: Vec<&str> = inner.split('|').collect();
            if c == '?' {
                options.push("");
            }
            out = out
                .iter()
                .flat_map(|prefix| options.iter().map(move |o| format!("{prefix}{o}")))
                .collect();
        } else {
            for prefix in &mut out {
                prefix.push(c);
            }
        }
    }
    out
}

/// Whether the project's jest config names its own `roots` or `testMatch`.
pub fn has_jest_config(repo: &Path) -> bool {
    let (roots, patterns) = jest_config(repo);
    !roots.is_empty() || !patterns.is_empty()
}

/// jest's `roots` (without `<rootDir>/`) and `testMatch`, from package.json's `jest`,
/// jest.config.json, or the string literals of a jest.config.{js,cjs,mjs}.
pub fn jest_config(repo: &Path) -> (Vec<String>, Vec<String>) {
    let from_json = |v: &serde_json::Value| {
        let list = |k: &str| -> Vec<String> {
            v[k].as_array()
                .map(|a| a.iter().filter_map(|s| s.as_str()).map(clean).collect())
                .unwrap_or_default()
        };
        (list("roots"), list("testMatch"))
    };
    let read = |name: &str| std::fs::read_to_string(repo.join(name)).ok();
    if let Some(pkg) =
        read("package.json").and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    {
        if pkg.get("jest").is_some() {
            return from_json(&pkg["jest"]);
        }
    }
    if let Some(v) = read("jest.config.json").and_then(|t| serde_json::from_str(&t).ok()) {
        return from_json(&v);
    }
    for name in ["jest.config.js", "jest.config.cjs", "jest.config.mjs"] {
        if let Some(text) = read(name) {
            return (
                literal_list(&text, "roots"),
                literal_list(&text, "testMatch"),
            );
        }
    }
    (Vec::new(), Vec::new())
}

/// vitest's `include`, from the first vitest or vite config file found.
pub fn vitest_include(repo: &Path) -> Vec<String> {
    for stem in ["vitest.config", "vite.config"] {
        for ext in ["ts", "mts", "js", "mjs", "cjs"] {
            if let Ok(text) = std::fs::read_to_string(repo.join(format!("{stem}.{ext}"))) {
                return literal_list(&text, "include");
            }
        }
    }
    Vec::new()
}

pub fn clean(s: &str) -> String {
    s.trim_start_matches("<rootDir>/")
        .trim_start_matches("./")
        .trim_end_matches('/')
        .to_string()
}

/// The string literals of `key: [ ... ]` in a JavaScript config (no code is run).
fn literal_list(text: &str, key: &str) -> Vec<String> {
    let pattern = format!(r#"\b{key}\s*:\s*\[([^\]]*)\]"#);
    let Ok(re) = regex::Regex::new(&pattern) else {
        return Vec::new();
    };
    let Some(list) = re.captures(text).and_then(|c| c.get(1)) else {
        return Vec::new();
    };
    let strings = regex::Regex::new(r#"['"`]([^'"`]+)['"`]"#).expect("a valid pattern");
    strings
        .captures_iter(list.as_str())
        .map(|c| clean(&c[1]))
        .collect()
}

/// What mocha runs: its spec entries (files, folders or globs, as written), whether folders are
/// searched recursively, the extensions it loads, and where the spec was read.
#[derive(Debug, Clone, PartialEq)]
pub struct MochaSpec {
    pub entries: Vec<String>,
    pub recursive: bool,
    pub extensions: Vec<String>,
    pub from: String,
}

impl MochaSpec {
    /// Whether mocha, so configured, runs the file at `path` (repository-relative).
    pub fn runs(&self, repo: &Path, path: &str) -> bool {
        let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
        if !self.extensions.iter().any(|e| e == ext) {
            return false;
        }
        self.entries.iter().any(|entry| {
            let entry = clean(entry);
            if entry.contains(['*', '?', '{', '[']) {
                let mut b = GlobSetBuilder::new();
                for g in expand(&entry) {
                    if let Ok(g) = Glob::new(&g) {
                        b.add(g);
                    }
                }
                return b.build().is_ok_and(|set| set.is_match(path));
            }
            if repo.join(&entry).is_dir() || entry.is_empty() {
                let parent = path.rsplit_once('/').map_or("", |(d, _)| d);
                return parent == entry
                    || (self.recursive
                        && (entry.is_empty() || path.starts_with(&format!("{entry}/"))));
            }
            path == entry
        })
    }
}

/// mocha's spec for the project at `repo`: the paths its `test` script gives mocha, else the
/// `spec` of `.mocharc.*` or package.json's `mocha`, else mocha's default, `./test`.
pub fn mocha_spec(repo: &Path) -> MochaSpec {
    let pkg: Value = read_json(&repo.join("package.json")).unwrap_or(Value::Null);
    let mut spec = MochaSpec {
        entries: Vec::new(),
        recursive: false,
        extensions: vec!["js".into(), "cjs".into(), "mjs".into()],
        from: "mocha's default (./test)".into(),
    };
    let mut config = Value::Null;
    let mut config_name = String::new();
    for name in [".mocharc.json", ".mocharc.jsonc"] {
        if let Some(v) = read_json(&repo.join(name)) {
            (config, config_name) = (v, name.to_string());
        }
    }
    for name in [".mocharc.yml", ".mocharc.yaml"] {
        if let Ok(text) = std::fs::read_to_string(repo.join(name)) {
            if let Ok(v) = serde_norway::from_str::<Value>(&text) {
                (config, config_name) = (v, name.to_string());
            }
        }
    }
    if config.is_null() && pkg.get("mocha").is_some() {
        (config, config_name) = (pkg["mocha"].clone(), "package.json (mocha)".to_string());
    }
    for name in [".mocharc.js", ".mocharc.cjs"] {
        if let Ok(text) = std::fs::read_to_string(repo.join(name)) {
            let entries = literal_list(&text, "spec");
            if !entries.is_empty() {
                spec.entries = entries;
                spec.from = name.to_string();
            }
            spec.recursive |= text.contains("recursive: true");
        }
    }
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
    if !strings(&config["spec"]).is_empty() {
        spec.entries = strings(&config["spec"]);
        spec.from = config_name.clone();
    }
    spec.recursive |= config["recursive"].as_bool() == Some(true);
    spec.extensions.extend(strings(&config["extension"]));
    if let Some(script) = pkg["scripts"]["test"].as_str() {
        let (paths, recursive, extensions) = mocha_script(script);
        if !paths.is_empty() {
            spec.entries = paths;
            spec.from = "package.json's test script".into();
        }
        spec.recursive |= recursive;
        spec.extensions.extend(extensions);
    }
    if spec.entries.is_empty() {
        spec.entries.push("test".into());
    }
    spec
}

/// The paths a `mocha …` test script names (the words after `mocha` that are neither options
/// nor the values of options that take one), whether it says `--recursive`, and the extensions
/// it adds.
fn mocha_script(script: &str) -> (Vec<String>, bool, Vec<String>) {
    const TAKES_VALUE: [&str; 15] = [
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
        "--reporter-options",
        "--file",
        "--slow",
    ];
    let (mut paths, mut recursive, mut extensions) = (Vec::new(), false, Vec::new());
    for command in script.split(['&', ';', '|']) {
        let words = shlex::split(command).unwrap_or_default();
        let Some(at) = words.iter().position(|w| {
            let name = w.rsplit('/').next().unwrap_or(w);
            name == "mocha" || name == "_mocha"
        }) else {
            continue;
        };
        let mut words = words[at + 1..].iter();
        while let Some(w) = words.next() {
            if w == "--recursive" {
                recursive = true;
            } else if w == "--extension" {
                extensions.extend(words.next().cloned());
            } else if let Some(e) = w.strip_prefix("--extension=") {
                extensions.push(e.to_string());
            } else if w.starts_with('-') {
                if TAKES_VALUE.contains(&w.as_str()) {
                    words.next();
                }
            } else {
                paths.push(w.trim_start_matches("./").to_string());
            }
        }
    }
    (paths, recursive, extensions)
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn mocha_runs_what_its_test_script_names_and_recurses_only_when_told() {
        let r = repo(&[
            (
                "package.json",
                r#"{"scripts": {"test": "mocha --reporter spec --check-leaks test/"}}"#,
            ),
            ("test/a.js", ""),
        ]);
        let spec = mocha_spec(r.path());
        assert_eq!(spec.entries, ["test/"]);
        assert!(spec.runs(r.path(), "test/a.js"));
        assert!(!spec.runs(r.path(), "test/team_testing/a.l1.test.js"));
        let r = repo(&[
            (
                "package.json",
                r#"{"scripts": {"test": "nyc mocha --recursive"}}"#,
            ),
            ("test/a.js", ""),
        ]);
        let spec = mocha_spec(r.path());
        assert_eq!(spec.entries, ["test"]);
        assert!(spec.runs(r.path(), "test/team_testing/a.l1.test.js"));
        let r = repo(&[(
            ".mocharc.yml",
            "spec: 'test/**/*.spec.js'
",
        )]);
        let spec = mocha_spec(r.path());
        assert_eq!(spec.from, ".mocharc.yml");
        assert!(spec.runs(r.path(), "test/team_testing/a.l1.spec.js"));
        assert!(!spec.runs(r.path(), "test/team_testing/a.l1.test.js"));
    }
}
