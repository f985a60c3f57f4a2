//! Where `apply` puts a JavaScript framework's tests: the default folder (`__tests__/team_testing`
//! for jest and vitest, `test/team_testing` otherwise) unless the project's runner configuration
//! (`super::config`) says its tests live elsewhere: jest `roots` and `testMatch`, vitest
//! `include`, mocha's spec (a `mocha test/` script does not look into subfolders, so the tests go
//! beside the project's own, in `test/`). The generated tests import the code relative to the
//! package root (`../../src/x.js` two levels down); `apply` rewrites that prefix for the depth
//! of the folder chosen. When no folder the runner reads will do, the placement says which line
//! of the project's configuration to add.

use std::path::Path;

use globset::{Glob, GlobSetBuilder};

use super::config::{expand, jest_config, mocha_spec, vitest_include};
use crate::testing::framework::Framework;

/// Where the tests go: the folder (relative to the package), the word before the extension
/// (`test` or `spec`), and, when the project's runner would not find them there, what to add.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Placement {
    pub dir: String,
    pub word: &'static str,
    pub unreached: Option<String>,
}

impl Placement {
    fn at(dir: &str, word: &'static str) -> Placement {
        Placement {
            dir: dir.into(),
            word,
            unreached: None,
        }
    }
}

/// The placement of a framework's applied tests in the package at `repo`.
pub(super) fn tests_dir(repo: &Path, framework: Framework) -> Placement {
    match framework {
        Framework::Mocha => mocha_placement(repo),
        Framework::Jest | Framework::Vitest => configured_placement(repo, framework),
        _ => Placement::at("test/team_testing", "test"),
    }
}

/// mocha: a folder of our own under the project's test folder when mocha reads it, else beside
/// the project's tests in a folder mocha reads (depth 1), else our folder with the spec to add.
fn mocha_placement(repo: &Path) -> Placement {
    let spec = mocha_spec(repo);
    for word in ["test", "spec"] {
        let sample = format!("test/team_testing/x.l1.{word}.js");
        if spec.runs(repo, &sample) {
            return Placement::at("test/team_testing", word);
        }
    }
    for entry in &spec.entries {
        let dir = super::config::clean(entry);
        if dir.contains(['*', '?', '{', '[']) || !repo.join(&dir).is_dir() {
            continue;
        }
        for word in ["test", "spec"] {
            if spec.runs(repo, &format!("{dir}/x.l1.{word}.js")) {
                return Placement::at(&dir, word);
            }
        }
    }
    Placement {
        dir: "test/team_testing".into(),
        word: "test",
        unreached: Some(format!(
            "mocha runs {} only (from {}): add 'test/team_testing/*.test.js' to its spec there              to run the applied tests with the project's own command",
            spec.entries.join(", "),
            spec.from
        )),
    }
}

/// jest and vitest: the first candidate folder their roots and test patterns reach.
fn configured_placement(repo: &Path, framework: Framework) -> Placement {
    let default = "__tests__/team_testing";
    let (roots, patterns) = match framework {
        Framework::Jest => jest_config(repo),
        _ => (Vec::new(), vitest_include(repo)),
    };
    if roots.is_empty() && patterns.is_empty() {
        return Placement::at(default, "test");
    }
    let mut candidates: Vec<String> = roots
        .iter()
        .filter(|r| !r.is_empty() && !r.contains('/'))
        .map(|r| format!("{r}/team_testing"))
        .collect();
    for d in [
        default,
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
                return Placement::at(dir, word);
            }
        }
    }
    let name = if framework == Framework::Jest {
        "jest's testMatch"
    } else {
        "vitest's include"
    };
    Placement {
        dir: default.into(),
        word: "test",
        unreached: Some(format!(
            "{name} ({}) reaches none of the usual folders: add '{default}/**/*.test.js' to it",
            patterns.join(", ")
        )),
    }
}

/// A generated test's text for a file `depth` folders below the package root: its imports of
/// the package (`'../../…'`, written for depth 2) rewritten for that depth.
pub(super) fn for_depth(text: &str, depth: usize) -> String {
    if depth == 2 || depth == 0 {
        return text.to_string();
    }
    let up = "../".repeat(depth);
    text.replace("'../../", &format!("'{up}"))
        .replace("\"../../", &format!("\"{up}"))
        .replace("`../../", &format!("`{up}"))
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
            Placement::at("__tests__/team_testing", "test")
        );
        assert_eq!(
            tests_dir(r.path(), Framework::NodeTest),
            Placement::at("test/team_testing", "test")
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
            Placement::at("src/team_testing", "spec")
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
            Placement::at("tests/team_testing", "test")
        );
        let v = repo(&[(
            "vitest.config.ts",
            "export default defineConfig({ test: { include: ['spec/**/*.spec.ts', 'spec/**/*.spec.js'] } })",
        )]);
        assert_eq!(
            tests_dir(v.path(), Framework::Vitest),
            Placement::at("spec/team_testing", "spec")
        );
    }

    #[test]
    fn a_mocha_test_folder_it_does_not_recurse_into_gets_the_tests_beside_its_own() {
        let r = repo(&[(
            "package.json",
            r#"{"scripts": {"test": "mocha --reporter spec test/"}}"#,
        )]);
        std::fs::create_dir(r.path().join("test")).unwrap();
        assert_eq!(
            tests_dir(r.path(), Framework::Mocha),
            Placement::at("test", "test")
        );
        let text = "const m = require(\"../../lib/m.js\");\nimport x from '../../y.js';\n";
        assert_eq!(
            for_depth(text, 1),
            "const m = require(\"../lib/m.js\");\nimport x from '../y.js';\n"
        );
        let only = repo(&[(".mocharc.json", r#"{"spec": ["test/one.js"]}"#)]);
        let placed = tests_dir(only.path(), Framework::Mocha);
        assert!(placed.unreached.unwrap().contains(".mocharc.json"));
    }
}
