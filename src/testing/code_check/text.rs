//! The checks that read a changed file's text: Rust, JavaScript/TypeScript and Go. A small lexer
//! blanks comments (and, for the structural view, string contents) so that a `todo!()` in a doc
//! comment or a brace in a string is not code. Python is read by `ttl0.py` from its syntax tree.
//!
//! - TODO/FIXME comments: warnings, every language.
//! - Placeholders (critical): Rust `todo!()`/`unimplemented!()` outside `#[cfg(test)]` and
//!   `#[test]` items; JS/TS a body that only throws a "not implemented" error; Go a
//!   `panic("not implemented")`. A JS method of a class others build on (abstract, named as a
//!   base, extended in the same file) is an interface, not a placeholder.
//! - Mock leakage (critical): JS/TS production files importing jest, vitest or sinon or the
//!   project's test folders; Go production files importing gomock or testify.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::{CodeCheck, IssueKind, Severity};
use crate::testing::detect::test_pattern;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Js,
    Go,
}

pub fn lang_of(path: &str) -> Option<Lang> {
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    match ext {
        "rs" => Some(Lang::Rust),
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Some(Lang::Js),
        "go" => Some(Lang::Go),
        _ => None,
    }
}

/// A file's text in two views, with its comments.
#[derive(Debug)]
pub struct Lexed {
    /// Comments blanked (newlines kept): strings are still there (import specifiers, messages).
    pub code: String,
    /// Comments and string contents blanked: the structure (braces, attributes, macro calls).
    pub bare: String,
    /// (line, text) of each comment.
    pub comments: Vec<(u32, String)>,
    line_starts: Vec<usize>,
}

impl Lexed {
    /// The 1-based line of a byte offset.
    pub fn line(&self, offset: usize) -> u32 {
        self.line_starts.partition_point(|&s| s <= offset) as u32
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

fn ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

pub fn lex(text: &str, lang: Lang) -> Lexed {
    let b = text.as_bytes();
    let mut code = b.to_vec();
    let mut bare = b.to_vec();
    let mut comments = Vec::new();
    let blank = |v: &mut Vec<u8>, from: usize, to: usize| {
        for x in &mut v[from..to.min(b.len())] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
    };
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(
            b.iter()
                .enumerate()
                .filter(|(_, c)| **c == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    let line_of = |offset: usize| line_starts.partition_point(|&s| s <= offset) as u32;
    // The last significant byte of code: decides whether `/` starts a JS regex literal.
    let mut last = b'\n';
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied().unwrap_or(0);
        if c == b'/' && next == b'/' {
            let end = b[i..]
                .iter()
                .position(|&x| x == b'\n')
                .map_or(b.len(), |p| i + p);
            comments.push((line_of(i), text[i..end].to_string()));
            blank(&mut code, i, end);
            blank(&mut bare, i, end);
            i = end;
            continue;
        }
        if c == b'/' && next == b'*' {
            let mut depth = 1;
            let mut j = i + 2;
            while j < b.len() && depth > 0 {
                if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                    depth -= 1;
                    j += 2;
                } else if lang == Lang::Rust && b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                    depth += 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            comments.push((line_of(i), text[i..j.min(b.len())].to_string()));
            blank(&mut code, i, j);
            blank(&mut bare, i, j);
            i = j;
            continue;
        }
        // Rust raw strings: r"..", r#".."#, br#".."#.
        if lang == Lang::Rust
            && c == b'r'
            && (i == 0
                || !ident_byte(b[i - 1])
                || (b[i - 1] == b'b' && (i < 2 || !ident_byte(b[i - 2]))))
        {
            let hashes = b[i + 1..].iter().take_while(|&&x| x == b'#').count();
            if b.get(i + 1 + hashes) == Some(&b'"') {
                let open = i + 2 + hashes;
                let mut close = String::from("\"");
                close.push_str(&"#".repeat(hashes));
                let end = text[open..].find(&close).map_or(b.len(), |p| open + p);
                blank(&mut bare, open, end);
                i = (end + close.len()).min(b.len());
                last = b'"';
                continue;
            }
        }
        let quote = matches!(
            (c, lang),
            (b'"', _) | (b'\'', Lang::Js) | (b'`', Lang::Js) | (b'`', Lang::Go)
        );
        let regex = lang == Lang::Js
            && c == b'/'
            && (matches!(
                last,
                b'(' | b','
                    | b'='
                    | b':'
                    | b'['
                    | b'!'
                    | b'&'
                    | b'|'
                    | b'?'
                    | b'{'
                    | b'}'
                    | b';'
                    | b'\n'
            ) || text[..i].trim_end().ends_with("return"));
        if quote || regex {
            let escapes = !(lang == Lang::Go && c == b'`');
            let mut j = i + 1;
            let mut class = false;
            while j < b.len() {
                let x = b[j];
                if escapes && x == b'\\' {
                    j += 2;
                    continue;
                }
                if regex {
                    if x == b'\n' {
                        break;
                    }
                    if x == b'[' {
                        class = true;
                    } else if x == b']' {
                        class = false;
                    } else if x == b'/' && !class {
                        break;
                    }
                } else if x == c {
                    break;
                } else if x == b'\n' && c != b'`' && lang != Lang::Rust {
                    // An unterminated string ends at the line's end (JS, Go).
                    break;
                }
                j += 1;
            }
            blank(&mut bare, i + 1, j);
            i = (j + 1).min(b.len());
            last = b'"';
            continue;
        }
        // Character literals (Rust, Go) and not lifetimes: 'x', '\n', '\u{1F600}', 'é'.
        if c == b'\'' && lang != Lang::Js {
            let end = if next == b'\\' {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|p| i + 2 + p)
            } else if next != 0 {
                let after = i + 1 + utf8_len(next);
                (b.get(after) == Some(&b'\'')).then_some(after)
            } else {
                None
            };
            if let Some(end) = end {
                blank(&mut bare, i + 1, end);
                i = end + 1;
                last = b'\'';
                continue;
            }
        }
        if !c.is_ascii_whitespace() || c == b'\n' {
            last = c;
        }
        i += 1;
    }
    Lexed {
        code: String::from_utf8_lossy(&code).into_owned(),
        bare: String::from_utf8_lossy(&bare).into_owned(),
        comments,
        line_starts,
    }
}

/// The offset of the `}` that closes the `{` at `open` (or the end).
pub fn matching_brace(bare: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (i, c) in bare.bytes().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    bare.len()
}

static TODO: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b(TODO|FIXME)\b").unwrap());

pub fn check(root: &Path, changed: &[String], out: &mut CodeCheck) {
    let mut judged = 0;
    for rel in changed {
        let Some(lang) = lang_of(rel) else { continue };
        let Ok(bytes) = crate::util::read_regular(&root.join(rel)) else {
            out.notes
                .push(format!("{rel}: cannot be read, not checked"));
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        if is_test_file(rel, lang) {
            continue;
        }
        judged += 1;
        let lexed = lex(&text, lang);
        for (line, comment) in &lexed.comments {
            if let Some(m) = TODO.find(comment) {
                let from = comment[..m.start()].rfind('\n').map_or(0, |p| p + 1);
                let to = comment[m.start()..]
                    .find('\n')
                    .map_or(comment.len(), |p| m.start() + p);
                let said = comment[from..to]
                    .trim()
                    .trim_start_matches(['/', '*', '!'])
                    .trim_end_matches(['*', '/'])
                    .trim();
                out.push(
                    Severity::Warning,
                    IssueKind::Placeholder,
                    rel,
                    Some(*line + comment[..m.start()].matches('\n').count() as u32),
                    format!(
                        "{} comment: {}",
                        m.as_str(),
                        said.chars().take(160).collect::<String>()
                    ),
                );
            }
        }
        match lang {
            Lang::Rust => rust(rel, &lexed, out),
            Lang::Js => js(rel, &lexed, out),
            Lang::Go => go(rel, &lexed, out),
        }
    }
    if judged > 0 {
        out.checked.push(format!(
            "placeholders, TODO comments, mock leakage (text): {judged} changed Rust/JS/TS/Go files"
        ));
    }
}

/// Test code and test support: never judged as production code.
pub fn is_test_file(rel: &str, lang: Lang) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let name = parts.last().copied().unwrap_or("");
    let dirs = &parts[..parts.len() - 1];
    let in_dir = |names: &[&str]| dirs.iter().any(|d| names.contains(d));
    match lang {
        Lang::Rust => {
            matches!(dirs.first(), Some(&"tests") | Some(&"benches"))
                || name == "tests.rs"
                || name.ends_with("_test.rs")
                || name.ends_with("_tests.rs")
                || in_dir(&["tests"])
        }
        Lang::Js => {
            test_pattern(rel).is_some()
                || in_dir(&[
                    "test",
                    "tests",
                    "__tests__",
                    "__mocks__",
                    "__fixtures__",
                    "e2e",
                    "cypress",
                    "spec",
                ])
                || name.contains(".config.")
                || [
                    "setupTests",
                    "jest.setup",
                    "vitest.setup",
                    "test-setup",
                    "setup-tests",
                    "test-utils",
                    "testUtils",
                ]
                .iter()
                .any(|p| name.starts_with(p))
        }
        Lang::Go => {
            name.ends_with("_test.go")
                || name.starts_with("mock_")
                || name.ends_with("_mock.go")
                || in_dir(&[
                    "testdata",
                    "mocks",
                    "mock",
                    "testutil",
                    "testutils",
                    "testing",
                ])
        }
    }
}

static RUST_TEST_ATTR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"#\[\s*(cfg\s*\([^\]]*\btest\b[^\]]*\)|test|[\w:]+::test|rstest|test_case\b[^\]]*)\s*\]",
    )
    .unwrap()
});
static RUST_TODO: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(todo|unimplemented)!\s*[\(\[\{]").unwrap());

/// Byte ranges of items marked as test code: `#[cfg(test)]`, `#[test]`, `#[tokio::test]`.
fn rust_test_regions(bare: &str) -> Vec<(usize, usize)> {
    let mut regions = Vec::new();
    for m in RUST_TEST_ATTR.find_iter(bare) {
        let attr = m.as_str();
        if attr.contains("not(") || attr.contains("not (") {
            continue;
        }
        let rest = &bare[m.end()..];
        let Some(stop) = rest.find(['{', ';']) else {
            continue;
        };
        let end = if rest.as_bytes()[stop] == b'{' {
            matching_brace(bare, m.end() + stop)
        } else {
            m.end() + stop
        };
        regions.push((m.start(), end));
    }
    regions
}

fn rust(rel: &str, lexed: &Lexed, out: &mut CodeCheck) {
    let tests = rust_test_regions(&lexed.bare);
    for m in RUST_TODO.captures_iter(&lexed.bare) {
        let at = m.get(0).unwrap().start();
        if tests.iter().any(|(s, e)| (*s..=*e).contains(&at)) {
            continue;
        }
        out.push(
            Severity::Critical,
            IssueKind::Placeholder,
            rel,
            Some(lexed.line(at)),
            format!(
                "`{}!()` in production code: the function is not implemented",
                &m[1]
            ),
        );
    }
}

static JS_THROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"\{\s*throw\s+(?:new\s+)?\w*Error\s*\(\s*(?:"([^"\n]*)"|'([^'\n]*)'|`([^`]*)`)\s*\)\s*;?\s*\}"#,
    )
    .unwrap()
});
static NOT_IMPLEMENTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(not\s+(yet\s+)?implemented|unimplemented|todo|implement\s+me)\b").unwrap()
});
static JS_CLASS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(abstract\s+)?class\s+([A-Za-z_$][\w$]*)[^{;]*\{").unwrap());
static JS_EXTENDS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bextends\s+([A-Za-z_$][\w$]*)").unwrap());
static JS_IMPORTS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r#"\bimport\s+(type\s+)?(?:[\w$*{}\s,]+?\s+from\s+)?(['"])([^'"\n]+)['"]"#,
        r#"\bexport\s+(type\s+)?(?:\*(?:\s+as\s+[\w$]+)?|\{[^}]*\})\s*from\s*(['"])([^'"\n]+)['"]"#,
        r#"\brequire\s*\(\s*()(['"])([^'"\n]+)['"]\s*\)"#,
        r#"\bimport\s*\(\s*()(['"])([^'"\n]+)['"]\s*\)"#,
    ]
    .iter()
    .map(|r| Regex::new(r).unwrap())
    .collect()
});
/// Test frameworks and test-double libraries production JS must not import.
const JS_TEST_PACKAGES: [&str; 6] = [
    "jest",
    "@jest/globals",
    "jest-mock",
    "vitest",
    "sinon",
    "@sinonjs/fake-timers",
];

/// A JS/TS import: its specifier, offset, and whether it is type-only (erased at build).
#[derive(Debug)]
pub struct JsImport {
    pub specifier: String,
    pub offset: usize,
    pub type_only: bool,
}

pub fn js_imports(lexed: &Lexed) -> Vec<JsImport> {
    let mut out: Vec<JsImport> = Vec::new();
    for re in JS_IMPORTS.iter() {
        for c in re.captures_iter(&lexed.code) {
            let offset = c.get(0).unwrap().start();
            // A match that starts inside a string is not code.
            if lexed.bare.as_bytes()[offset] == b' ' {
                continue;
            }
            if out.iter().any(|i| i.offset == offset) {
                continue;
            }
            out.push(JsImport {
                specifier: c[3].to_string(),
                offset,
                type_only: c.get(1).is_some_and(|t| !t.as_str().is_empty()),
            });
        }
    }
    out.sort_by_key(|i| i.offset);
    out
}

/// The package a bare specifier names: `@scope/name` or `name`.
pub fn package_of(specifier: &str) -> String {
    let spec = specifier.trim_start_matches("node:");
    let mut parts = spec.split('/');
    match (parts.next(), parts.next()) {
        (Some(scope), Some(name)) if scope.starts_with('@') => format!("{scope}/{name}"),
        (Some(name), _) => name.to_string(),
        _ => spec.to_string(),
    }
}

fn js(rel: &str, lexed: &Lexed, out: &mut CodeCheck) {
    let extended: Vec<String> = JS_EXTENDS
        .captures_iter(&lexed.bare)
        .map(|c| c[1].to_string())
        .collect();
    // Classes whose methods may throw "not implemented" as an interface does.
    let interfaces: Vec<(usize, usize)> = JS_CLASS
        .captures_iter(&lexed.bare)
        .filter(|c| {
            let name = &c[2];
            c.get(1).is_some()
                || extended.iter().any(|e| e == name)
                || name.starts_with("Base")
                || name.starts_with("Abstract")
                || name.ends_with("Base")
                || name.ends_with("Mixin")
                || name.ends_with("Interface")
        })
        .map(|c| {
            let m = c.get(0).unwrap();
            (m.start(), matching_brace(&lexed.bare, m.end() - 1))
        })
        .collect();
    for c in JS_THROW.captures_iter(&lexed.code) {
        let at = c.get(0).unwrap().start();
        let said = c
            .get(1)
            .or(c.get(2))
            .or(c.get(3))
            .map_or("", |m| m.as_str());
        if lexed.bare.as_bytes()[at] != b'{' || !NOT_IMPLEMENTED.is_match(said) {
            continue;
        }
        if interfaces.iter().any(|(s, e)| (*s..=*e).contains(&at)) {
            continue;
        }
        out.push(
            Severity::Critical,
            IssueKind::Placeholder,
            rel,
            Some(lexed.line(at + c[0].find("throw").unwrap_or(0))),
            format!("a body that only throws \"{said}\": the function is not implemented"),
        );
    }
    for import in js_imports(lexed) {
        if import.type_only {
            continue;
        }
        let spec = &import.specifier;
        let leak = if spec.starts_with('.') {
            let parts: Vec<&str> = spec.split('/').collect();
            let name = parts.last().copied().unwrap_or("");
            parts[..parts.len() - 1]
                .iter()
                .any(|p| ["test", "tests", "__tests__", "__mocks__", "__fixtures__"].contains(p))
                || name.contains(".test")
                || name.contains(".spec")
        } else {
            JS_TEST_PACKAGES.contains(&package_of(spec).as_str())
        };
        if leak {
            out.push(
                Severity::Critical,
                IssueKind::MockLeakage,
                rel,
                Some(lexed.line(import.offset)),
                format!("production code imports the test framework or test code `{spec}`"),
            );
        }
    }
}

static GO_PANIC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\bpanic\s*\(\s*(?:"([^"\n]*)"|`([^`]*)`)\s*\)"#).unwrap());
static GO_IMPORT_BLOCK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^\s*import\s*\(([^)]*)\)").unwrap());
static GO_IMPORT_ONE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?m)^\s*import\s+(?:[\w.]+\s+)?"([^"]+)""#).unwrap());
static GO_QUOTED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#""([^"]+)""#).unwrap());
const GO_TEST_PACKAGES: [&str; 4] = [
    "github.com/golang/mock",
    "go.uber.org/mock",
    "github.com/stretchr/testify",
    "github.com/vektra/mockery",
];

fn go(rel: &str, lexed: &Lexed, out: &mut CodeCheck) {
    for c in GO_PANIC.captures_iter(&lexed.code) {
        let said = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
        if !NOT_IMPLEMENTED.is_match(said) {
            continue;
        }
        let at = c.get(0).unwrap().start();
        out.push(
            Severity::Critical,
            IssueKind::Placeholder,
            rel,
            Some(lexed.line(at)),
            format!("`panic(\"{said}\")`: the function is not implemented"),
        );
    }
    let mut imports: Vec<(usize, String)> = Vec::new();
    for block in GO_IMPORT_BLOCK.captures_iter(&lexed.code) {
        let body = block.get(1).unwrap();
        for q in GO_QUOTED.captures_iter(body.as_str()) {
            imports.push((body.start() + q.get(0).unwrap().start(), q[1].to_string()));
        }
    }
    for one in GO_IMPORT_ONE.captures_iter(&lexed.code) {
        imports.push((one.get(0).unwrap().start(), one[1].to_string()));
    }
    for (at, path) in imports {
        if GO_TEST_PACKAGES
            .iter()
            .any(|p| path == *p || path.starts_with(&format!("{p}/")))
        {
            out.push(
                Severity::Critical,
                IssueKind::MockLeakage,
                rel,
                Some(lexed.line(at)),
                format!("production code imports the test package `{path}`"),
            );
        }
    }
}
