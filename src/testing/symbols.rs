//! Which functions and classes a change touched: changed line ranges from `git diff -U0`, matched
//! against the definitions found in the file (Python, Rust, JS/TS, Go).

use std::path::Path;
use std::time::Duration;

use crate::proc::run_captured;

/// A function, method or class with the lines it spans (1-based, inclusive).
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    pub name: String,
    pub kind: &'static str,
    pub start: u32,
    pub end: u32,
}

/// New-file line ranges of the hunks in a `git diff -U0` of one file. A pure deletion becomes the
/// one line it happened before, so the enclosing definition still counts as touched.
pub fn hunk_ranges(diff: &str) -> Vec<(u32, u32)> {
    diff.lines()
        .filter_map(|l| l.strip_prefix("@@ "))
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter_map(|new| new.strip_prefix('+'))
        .filter_map(|new| {
            let (start, len) = match new.split_once(',') {
                Some((s, n)) => (s.parse::<u32>().ok()?, n.parse::<u32>().ok()?),
                None => (new.parse::<u32>().ok()?, 1),
            };
            Some(if len == 0 {
                (start.max(1), start.max(1))
            } else {
                (start, start + len - 1)
            })
        })
        .collect()
}

/// Why `git diff` gave no diff.
#[derive(Debug, thiserror::Error)]
pub enum GitDiffError {
    /// git could not start, or ran past its time.
    #[error("{0}")]
    NotRun(crate::proc::ProcError),
    #[error("git diff failed: {stderr}")]
    Failed { args: Vec<String>, stderr: String },
}

/// `git diff --relative <args…>` in `repo` (paths relative to it, unquoted); its stdout, or the
/// problem. Shared by the strategist's line counts and the touched-symbol ranges.
pub fn git_diff(repo: &Path, args: &[&str], timeout: Duration) -> Result<String, GitDiffError> {
    let mut argv = vec!["git", "-c", "core.quotepath=off", "diff", "--relative"];
    argv.extend_from_slice(args);
    let out = run_captured(&argv, repo, timeout).map_err(GitDiffError::NotRun)?;
    if out.success() {
        Ok(out.stdout)
    } else {
        Err(GitDiffError::Failed {
            args: args.iter().map(|a| a.to_string()).collect(),
            stderr: out.stderr.trim().to_string(),
        })
    }
}

/// The changed ranges of `path` between `base` and the working tree.
pub fn changed_ranges(repo: &Path, base: &str, path: &str, timeout: Duration) -> Vec<(u32, u32)> {
    git_diff(repo, &["-U0", base, "--", path], timeout)
        .map(|d| hunk_ranges(&d))
        .unwrap_or_default()
}

/// The language of a source file by its extension.
fn language(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    Some(match ext {
        "py" => "python",
        "rs" => "rust",
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" => "js",
        "go" => "go",
        _ => return None,
    })
}

/// Definitions of a source file, each ending where the next definition at the same or lower
/// indentation starts (or at the file's end).
pub fn definitions(path: &str, text: &str) -> Vec<Definition> {
    let Some(lang) = language(path) else {
        return Vec::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut found: Vec<(usize, usize, String, &'static str)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let indent = line.len() - line.trim_start().len();
        if let Some((name, kind)) = definition_on(lang, line.trim_start()) {
            found.push((i, indent, name, kind));
        }
    }
    let mut defs = Vec::new();
    for (n, (i, indent, name, kind)) in found.iter().enumerate() {
        let end = found[n + 1..]
            .iter()
            .find(|(_, ind, _, _)| ind <= indent)
            .map(|(j, _, _, _)| *j)
            .unwrap_or(lines.len());
        defs.push(Definition {
            name: name.clone(),
            kind,
            start: *i as u32 + 1,
            end: end.max(i + 1) as u32,
        });
    }
    defs
}

/// The name and kind defined on a (left-trimmed) line, if it starts a definition.
fn definition_on(lang: &str, line: &str) -> Option<(String, &'static str)> {
    let ident = |rest: &str| -> Option<String> {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        (!name.is_empty()).then_some(name)
    };
    let after = |prefixes: &[&str]| prefixes.iter().find_map(|p| line.strip_prefix(p));
    match lang {
        "python" => {
            if let Some(r) = after(&["def ", "async def "]) {
                return ident(r).map(|n| (n, "function"));
            }
            after(&["class "]).and_then(ident).map(|n| (n, "class"))
        }
        "rust" => {
            let l = line
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ")
                .trim_start_matches("async ")
                .trim_start_matches("unsafe ");
            if let Some(r) = l.strip_prefix("fn ") {
                return ident(r).map(|n| (n, "function"));
            }
            for (p, kind) in [
                ("struct ", "struct"),
                ("enum ", "enum"),
                ("trait ", "trait"),
            ] {
                if let Some(r) = l.strip_prefix(p) {
                    return ident(r).map(|n| (n, kind));
                }
            }
            l.strip_prefix("impl")
                .map(|_| (l.trim_end_matches('{').trim().to_string(), "impl"))
        }
        "js" => {
            let l = line
                .trim_start_matches("export ")
                .trim_start_matches("default ");
            if let Some(r) = l
                .strip_prefix("async function ")
                .or_else(|| l.strip_prefix("function "))
            {
                return ident(r.trim_start_matches('*')).map(|n| (n, "function"));
            }
            if let Some(r) = l.strip_prefix("class ") {
                return ident(r).map(|n| (n, "class"));
            }
            let r = l
                .strip_prefix("const ")
                .or_else(|| l.strip_prefix("let "))?;
            let name = ident(r)?;
            let value = r.split_once('=')?.1.trim_start();
            (value.starts_with("function")
                || value.starts_with("async")
                || value.starts_with('(')
                || value.contains("=>"))
            .then_some((name, "function"))
        }
        "go" => {
            let r = line.strip_prefix("func ")?;
            // Methods: func (r *T) Name(
            let r = if r.starts_with('(') {
                r.split_once(')')?.1.trim_start()
            } else {
                r
            };
            ident(r).map(|n| (n, "function"))
        }
        _ => None,
    }
}

/// Names of the innermost definitions holding a changed line, in file order, each once.
pub fn touched(defs: &[Definition], ranges: &[(u32, u32)]) -> Vec<String> {
    // Changes are small; a cap keeps a rewritten file cheap.
    const MAX_LINES: u32 = 20_000;
    let mut hit = vec![false; defs.len()];
    for &(a, b) in ranges {
        for line in a..=b.min(a.saturating_add(MAX_LINES)) {
            let innermost = defs
                .iter()
                .enumerate()
                .filter(|(_, d)| d.start <= line && line <= d.end)
                .max_by_key(|(_, d)| d.start);
            if let Some((i, _)) = innermost {
                hit[i] = true;
            }
        }
    }
    let mut names: Vec<String> = Vec::new();
    for (d, _) in defs.iter().zip(hit).filter(|(_, h)| *h) {
        if !names.contains(&d.name) {
            names.push(d.name.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    const PY: &str = "import os\n\nclass Tok:\n    def __init__(self):\n        self.x = 1\n\n    def next(self):\n        return 2\n\ndef helper(a):\n    return a\n";

    #[test]
    fn hunks_give_new_file_ranges() {
        let diff =
            "diff --git a/x b/x\n@@ -3 +3,2 @@ class A:\n-a\n+b\n+c\n@@ -10,2 +11,0 @@\n-x\n-y\n";
        assert_eq!(hunk_ranges(diff), vec![(3, 4), (11, 11)]);
    }

    #[test]
    fn python_definitions_and_spans() {
        let defs = definitions("t.py", PY);
        let spans: Vec<(&str, u32, u32)> = defs
            .iter()
            .map(|d| (d.name.as_str(), d.start, d.end))
            .collect();
        assert_eq!(
            spans,
            vec![
                ("Tok", 3, 9),
                ("__init__", 4, 6),
                ("next", 7, 9),
                ("helper", 10, 11)
            ]
        );
    }

    #[test]
    fn touched_names_the_innermost_definition() {
        let defs = definitions("t.py", PY);
        assert_eq!(touched(&defs, &[(8, 8)]), vec!["next"]);
        assert_eq!(touched(&defs, &[(11, 11), (1, 1)]), vec!["helper"]);
        // A change to the class body outside any method names the class.
        assert_eq!(touched(&defs, &[(3, 3)]), vec!["Tok"]);
    }

    #[test]
    fn other_languages() {
        let rs = "pub fn parse(s: &str) {}\nstruct Lexer;\nimpl Lexer {\n    pub fn next(&mut self) {}\n}\n";
        let names: Vec<String> = definitions("a.rs", rs)
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(names, ["parse", "Lexer", "impl Lexer", "next"]);
        let js = "export function add(a, b) {}\nconst mul = (a, b) => a * b;\nclass Calc {}\n";
        let names: Vec<String> = definitions("a.js", js)
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(names, ["add", "mul", "Calc"]);
        let go = "func (c *Calc) Add(a int) int {}\nfunc main() {}\n";
        let names: Vec<String> = definitions("a.go", go)
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(names, ["Add", "main"]);
    }
}
