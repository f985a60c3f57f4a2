//! Where `apply` puts a JavaScript framework's tests: the default folder (`__tests__/team_testing`
//! for jest and vitest, `test/team_testing` otherwise) unless the project's jest or vitest
//! configuration says its tests live elsewhere (jest `roots` and `testMatch`, in package.json,
//! jest.config.json or a jest.config.js literal; vitest `include` in a vitest or vite config).
//! The folder is always two levels below the package root: the generated tests import the code
//! as `../../src/x.js`, as they did in the package copy.

use std::path::Path;

use globset::{Glob, GlobSetBuilder};

use crate::testing::framework::Framework;

/// The folder (relative to the package) and the word before the extension (`test` or `spec`).
pub(super) fn tests_dir(repo: &Path, framework: Framework) -> (String, &'static str) {
    let default = match framework {
        Framework::Jest | Framework::Vitest => "__tests__/team_testing",
        _ => "test/team_testing",
    };
    let (roots, patterns) = match framework {
        Framework::Jest => jest_config(repo),
        Framework::Vitest => (Vec::new(), vitest_include(repo)),
        _ => (Vec::new(), Vec::new()),
    };
    if roots.is_empty() && patterns.is_empty() {
        return (default.into(), "test");
    }
    let mut candidates: Vec<String> = roots
        .iter()
        .filter(|r| !r.is_empty() && !r.contains('/'))
        .map(|r| format!("{r}/team_testing"))
        .collect();
    for d in [
        default,
        "__tests__/team_testing",
        "test/team_testing",
        "tests/team_testing",
        "src/team_testing",
        "spec/team_testing",
    ] {
        if !candidates.iter().any(|c| c == d) {
            candidates.push(d.into());
        }
    }
    let matcher = {
        let mut b = GlobSetBuilder::new();
        for p in patterns.iter().flat_map(|p| expand(p)) {
            if let Ok(g) = Glob::new(&p) {
                b.add(g);
            }
        }
        b.build().ok()
    };
    for dir in &candidates {
        let under_root =
            roots.is_empty() || roots.iter().any(|r| dir.starts_with(&format!("{r}/")));
        if !under_root {
            continue;
        }
        for word in ["test", "spec"] {
            let sample = format!("{dir}/x.l1.{word}.js");
            let matches =
                patterns.is_empty() || matcher.as_ref().is_some_and(|m| m.is_match(&sample));
            if matches {
                return (dir.clone(), word);
            }
        }
    }
    (default.into(), "test")
}

/// A micromatch pattern as plain globs: each extglob `?(a|b)` (none or one), `+(a|b)` and
/// `@(a|b)` (one of them) expanded into its alternatives; `<rootDir>/` and `./` dropped.
fn expand(pattern: &str) -> Vec<String> {
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
pub(super) fn has_jest_config(repo: &Path) -> bool {
    let (roots, patterns) = jest_config(repo);
    !roots.is_empty() || !patterns.is_empty()
}

/// jest's `roots` (without `<rootDir>/`) and `testMatch`, from package.json's `jest`,
/// jest.config.json, or the string literals of a jest.config.{js,cjs,mjs}.
fn jest_config(repo: &Path) -> (Vec<String>, Vec<String>) {
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
fn vitest_include(repo: &Path) -> Vec<String> {
    for stem in ["vitest.config", "vite.config"] {
        for ext in ["ts", "mts", "js", "mjs", "cjs"] {
            if let Ok(text) = std::fs::read_to_string(repo.join(format!("{stem}.{ext}"))) {
                return literal_list(&text, "include");
            }
        }
    }
    Vec::new()
}

fn clean(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn without_a_config_the_framework_default() {
        let r = repo(&[("package.json", "{}")]);
        assert_eq!(
            tests_dir(r.path(), Framework::Jest),
            ("__tests__/team_testing".into(), "test")
        );
        assert_eq!(
            tests_dir(r.path(), Framework::NodeTest),
            ("test/team_testing".into(), "test")
        );
    }

    #[test]
    fn jest_roots_and_test_match_in_package_json_decide() {
        let r = repo(&[(
            "package.json",
            r#"{"jest": {"roots": ["<rootDir>/src"], "testMatch": ["**/?(*.)+(spec).[jt]s?(x)"]}}"#,
        )]);
        assert_eq!(
            tests_dir(r.path(), Framework::Jest),
            ("src/team_testing".into(), "spec")
        );
    }

    #[test]
    fn a_jest_config_file_and_a_vitest_include_decide() {
        let r = repo(&[(
            "jest.config.js",
            "module.exports = { testMatch: ['<rootDir>/tests/**/*.test.js'] };",
        )]);
        assert_eq!(
            tests_dir(r.path(), Framework::Jest),
            ("tests/team_testing".into(), "test")
        );
        let v = repo(&[(
            "vitest.config.ts",
            "export default defineConfig({ test: { include: ['spec/**/*.spec.ts', 'spec/**/*.spec.js'] } })",
        )]);
        assert_eq!(
            tests_dir(v.path(), Framework::Vitest),
            ("spec/team_testing".into(), "spec")
        );
    }
}
