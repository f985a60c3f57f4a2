//! What an agent backend is told about a family's tests, and what the accept filter asks of a
//! file it wrote: the framework and its idioms, how a file is named and fenced, where it is
//! placed and how it reaches the code. Each family's folder fills one in (`<family>/agent.rs`),
//! so an agent writes Rust for a crate and Go for a module through the same prompt.

use std::path::Path;

use crate::testing::framework::Framework;

/// How a family's tests are written, as far as an agent and the accept filter need to know.
#[derive(Debug, Clone)]
pub struct Conventions {
    /// The language the tests are written in (`Python`, `TypeScript`, `Go`, …).
    pub language: &'static str,
    /// The test framework as its users name it (`pytest`, `node:test`, `cargo test`, …).
    pub framework: String,
    /// The info string of a fenced code block of this language.
    pub fence: &'static str,
    /// How a line comment starts (the `path:` line of an answer block).
    pub comment: &'static str,
    /// A file name the agent should follow (`test_<name>.py`, `<name>_test.go`).
    pub file_name: String,
    /// How a test reaches the code, asserts, and keeps its files in a temporary folder: one
    /// sentence per item, as the prompt lists them.
    pub idioms: Vec<String>,
    /// Whether `name` is a test file name the runner runs.
    pub is_test_file: fn(&str) -> bool,
}

impl Conventions {
    /// `stem_2.ext`, `stem_3.ext`, …: a name beside `name` that is still a test file name (the
    /// part before its first dot is the stem, so `a.test.js` becomes `a_2.test.js`, and Go's
    /// `_test` stays last: `calc_test.go` becomes `calc_2_test.go`).
    pub fn numbered(name: &str, k: usize) -> String {
        let (stem, rest) = name.split_once('.').unwrap_or((name, ""));
        let dot = if rest.is_empty() { "" } else { "." };
        match stem.strip_suffix("_test") {
            Some(base) => format!("{base}_{k}_test{dot}{rest}"),
            None => format!("{stem}_{k}{dot}{rest}"),
        }
    }
}

/// What a family says about one of its frameworks, for `repo`.
pub fn conventions(framework: Framework, repo: &Path) -> Conventions {
    super::of(framework.family()).conventions(framework, repo)
}

/// A call a candidate test makes that the static check refuses: what it is and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsafeCall {
    /// The call as written (`os.RemoveAll`, `std::process::Command`).
    pub call: String,
    /// What it reaches: "the file system outside a temporary folder", "a child process", …
    pub reaches: &'static str,
}

impl std::fmt::Display for UnsafeCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "calls {} ({})", self.call, self.reaches)
    }
}

/// One rule of a static check: a pattern, and what a match reaches.
pub(crate) struct Rule {
    pub pattern: &'static str,
    pub reaches: &'static str,
}

pub(crate) const FILE_SYSTEM: &str = "writes the file system outside a temporary folder";
pub(crate) const PROCESS: &str = "starts or ends a process";
pub(crate) const NETWORK: &str = "uses the network";
pub(crate) const NATIVE: &str = "escapes the language's checks (native or unsafe code)";

/// The calls of `source` that `rules` refuse, with comments left out; a file-system write is
/// allowed when `temporary` says the file makes a temporary folder of its own (the sandbox and
/// the file-system watch then check where it really writes).
pub(crate) fn check_calls(source: &str, rules: &[Rule], temporary: &[&str]) -> Vec<UnsafeCall> {
    let code: String = source
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let has_temporary = temporary.iter().any(|t| code.contains(t));
    let mut found: Vec<UnsafeCall> = Vec::new();
    for rule in rules {
        if rule.reaches == FILE_SYSTEM && has_temporary {
            continue;
        }
        if code.contains(rule.pattern) && !found.iter().any(|f| f.call == rule.pattern) {
            found.push(UnsafeCall {
                call: rule
                    .pattern
                    .trim_matches(|c: char| !c.is_alphanumeric())
                    .to_string(),
                reaches: rule.reaches,
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_numbered_name_keeps_every_suffix() {
        assert_eq!(Conventions::numbered("a.test.js", 2), "a_2.test.js");
        assert_eq!(Conventions::numbered("test_a.py", 3), "test_a_3.py");
        assert_eq!(Conventions::numbered("calc_test.go", 2), "calc_2_test.go");
    }
}
