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

/// One rule of a static check: a regular expression over the code (comments left out, string
/// literals kept, so an import path counts), the call as the rejection names it, and what a
/// match reaches.
pub(crate) struct Rule {
    pub pattern: &'static str,
    pub call: &'static str,
    pub reaches: &'static str,
}

pub(crate) const FILE_SYSTEM: &str = "writes the file system outside a temporary folder";
pub(crate) const PROCESS: &str = "starts or ends a process";
pub(crate) const NETWORK: &str = "uses the network";
pub(crate) const NATIVE: &str = "escapes the language's checks (native, unsafe or dynamic code)";

/// The calls of `code` (see [`code_only`]) that `rules` refuse. A file-system write is let
/// through when `temporary` says the file makes a temporary folder of its own: where it really
/// writes is then the sandbox's and the file-system watch's to see (they see every write; what
/// they cannot see, the network and other processes, is never let through).
pub(crate) fn check_calls(code: &str, rules: &[Rule], temporary: &[&str]) -> Vec<UnsafeCall> {
    let has_temporary = temporary.iter().any(|t| code.contains(t));
    let mut found: Vec<UnsafeCall> = Vec::new();
    for rule in rules {
        if rule.reaches == FILE_SYSTEM && has_temporary {
            continue;
        }
        let Ok(re) = regex::Regex::new(rule.pattern) else {
            continue;
        };
        if re.is_match(code) && !found.iter().any(|f| f.call == rule.call) {
            found.push(UnsafeCall {
                call: rule.call.to_string(),
                reaches: rule.reaches,
            });
        }
    }
    found
}

/// `source` without its comments (`//` to the end of the line, `/* … */`), string literals
/// kept whole: a `//` inside a string (`"http://x"`) does not hide the rest of the line.
/// `quotes` are the characters that open a string in the language (`"` for Rust, `"` and `` ` ``
/// for Go, and `'` too for JavaScript); a backslash escapes inside all but `` ` ``.
pub(crate) fn code_only(source: &str, quotes: &[char]) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
            out.push(' ');
        } else if quotes.contains(&c) {
            out.push(c);
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' && c != '`' && i + 1 < chars.len() {
                    out.push(chars[i]);
                    i += 1;
                }
                out.push(chars[i]);
                i += 1;
            }
            if i < chars.len() {
                out.push(c);
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_go_and_strings_stay_whole() {
        let code = code_only(
            "let u = \"http://x\"; std::process::exit(1); // gone\n/* a */b",
            &['"'],
        );
        assert!(code.contains("http://x"), "{code}");
        assert!(code.contains("std::process::exit(1);"), "{code}");
        assert!(
            !code.contains("gone") && !code.contains("/* a */"),
            "{code}"
        );
        assert!(code.ends_with(" b"), "{code}");
    }

    #[test]
    fn a_numbered_name_keeps_every_suffix() {
        assert_eq!(Conventions::numbered("a.test.js", 2), "a_2.test.js");
        assert_eq!(Conventions::numbered("test_a.py", 3), "test_a_3.py");
        assert_eq!(Conventions::numbered("calc_test.go", 2), "calc_2_test.go");
    }
}
