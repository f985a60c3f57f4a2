//! Edits of a generated Rust test file between rounds: which tests it holds, carrying the tests
//! that found code defects into the next round's file, marking defects ignored with their
//! reason, dropping tests. Plain text edits on the shape the generator renders:
//!
//! ```text
//! /// `f(1)` returns `2`.        <- doc lines (optional)
//! #[test]                        <- attributes at column 0, one of them `#[test]`
//! #[ignore = "code_defect: …"]
//! fn f_1() {
//!     …
//! }                              <- the first line that is exactly `}`
//! ```
//!
//! Everything before the first test is the header; text between tests is left alone.

use std::collections::{BTreeMap, BTreeSet};

/// Longest reason an `#[ignore = "…"]` line carries, in characters.
const MAX_REASON: usize = 300;

/// A test in a source: its name and the lines it spans (`end` exclusive).
struct Span {
    name: String,
    start: usize,
    end: usize,
}

/// The source's lines, each with its line break.
fn lines(source: &str) -> Vec<&str> {
    source.split_inclusive('\n').collect()
}

/// A line without its line break.
fn bare(line: &str) -> &str {
    line.trim_end_matches(['\n', '\r'])
}

/// The test blocks of `lines`, in order.
fn spans(lines: &[&str]) -> Vec<Span> {
    let mut out = Vec::new();
    // The first doc or attribute line of the run just above the current line.
    let mut run: Option<usize> = None;
    let mut has_test = false;
    let mut i = 0;
    while i < lines.len() {
        let line = bare(lines[i]);
        if line.starts_with("///") || line.starts_with("#[") {
            run.get_or_insert(i);
            has_test |= line.trim_end() == "#[test]";
            i += 1;
            continue;
        }
        if let (Some(start), true, Some(name)) = (run, has_test, fn_name(line)) {
            let end = lines[i..]
                .iter()
                .position(|l| bare(l) == "}")
                .map_or(lines.len(), |p| i + p + 1);
            out.push(Span { name, start, end });
            i = end;
        } else {
            i += 1;
        }
        run = None;
        has_test = false;
    }
    out
}

/// The name of the function a `fn NAME() {` line at column 0 opens.
fn fn_name(line: &str) -> Option<String> {
    let rest = line.strip_prefix("fn ")?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    (end > 0).then(|| rest[..end].to_string())
}

/// A test id's function name: ids may come with a path (`binary::module::name`).
fn key(id: &str) -> &str {
    id.rsplit("::").next().unwrap_or(id)
}

/// An `#[ignore …]` attribute line.
fn is_ignore(line: &str) -> bool {
    let line = bare(line);
    line == "#[ignore]" || line.starts_with("#[ignore ") || line.starts_with("#[ignore=")
}

/// (name, block text) of each test in `source`, in order.
pub fn test_blocks(source: &str) -> Vec<(String, String)> {
    let lines = lines(source);
    spans(&lines)
        .into_iter()
        .map(|s| {
            let mut text = lines[s.start..s.end].concat();
            if !text.ends_with('\n') {
                text.push('\n');
            }
            (s.name, text)
        })
        .collect()
}

/// Names of the tests in `source`.
pub fn test_names(source: &str) -> Vec<String> {
    spans(&lines(source)).into_iter().map(|s| s.name).collect()
}

/// The file a revision round keeps: `new`, plus the tests of `old` that found code defects
/// (`#[ignore = "code_defect…"]` blocks, or named in `defects`) and that `new` lacks and `avoid`
/// does not name, appended at the end (header of `new` kept). A defect stays pinned by a test
/// even when the new round did not write one for it; carried blocks keep their text as it was
/// (`mark_defects` after this marks the ones named in `defects`).
pub fn carry_over(
    old: &str,
    new: &str,
    defects: &BTreeMap<String, String>,
    avoid: &BTreeSet<String>,
) -> String {
    let defect_names: BTreeSet<&str> = defects.keys().map(|k| key(k)).collect();
    let avoided: BTreeSet<&str> = avoid.iter().map(|k| key(k)).collect();
    let mut present: BTreeSet<String> = test_names(new).into_iter().collect();
    let mut out = new.to_string();
    for (name, block) in test_blocks(old) {
        let found_defect = defect_names.contains(name.as_str())
            || block
                .lines()
                .any(|l| is_ignore(l) && l.contains("\"code_defect"));
        if !found_defect || avoided.contains(name.as_str()) || present.contains(&name) {
            continue;
        }
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(&block);
        present.insert(name);
    }
    out
}

/// Marks the tests named in `defects` (name -> reason) as `#[ignore = "<reason>"]`, so the
/// suite stays green while the defect is reported: the line goes after `#[test]`, replacing an
/// existing `#[ignore …]` line (a `#[should_panic…]` line stays). The reason is escaped as a
/// Rust string and cut to 300 characters. Tests not named are unchanged.
pub fn mark_defects(source: &str, defects: &BTreeMap<String, String>) -> String {
    let reasons: BTreeMap<&str, &str> = defects.iter().map(|(k, v)| (key(k), v.as_str())).collect();
    let lines = lines(source);
    let mut out = String::with_capacity(source.len());
    let mut at = 0;
    for span in spans(&lines) {
        let Some(reason) = reasons.get(span.name.as_str()) else {
            continue;
        };
        out.push_str(&lines[at..span.start].concat());
        let cut: String = reason.chars().take(MAX_REASON).collect();
        let mark = format!("#[ignore = {cut:?}]\n");
        // Only the doc and attribute lines above `fn` are looked at, never the body.
        let fn_line = (span.start..span.end)
            .find(|i| fn_name(bare(lines[*i])).is_some())
            .unwrap_or(span.end);
        for line in &lines[span.start..fn_line] {
            if is_ignore(line) {
                continue;
            }
            out.push_str(line);
            if bare(line).trim_end() == "#[test]" {
                out.push_str(&mark);
            }
        }
        out.push_str(&lines[fn_line..span.end].concat());
        at = span.end;
    }
    out.push_str(&lines[at..].concat());
    out
}

/// Removes the tests named in `names`, with the blank line that separated each from the next
/// one (or from the one before, for the last).
pub fn remove_tests(source: &str, names: &BTreeSet<String>) -> String {
    let names: BTreeSet<&str> = names.iter().map(|n| key(n)).collect();
    let lines = lines(source);
    let mut drop = vec![false; lines.len()];
    for span in spans(&lines) {
        if !names.contains(span.name.as_str()) {
            continue;
        }
        drop[span.start..span.end]
            .iter_mut()
            .for_each(|d| *d = true);
        let blank = |i: usize| bare(lines[i]).trim().is_empty();
        if span.end < lines.len() && blank(span.end) {
            drop[span.end] = true;
        } else if span.start > 0 && blank(span.start - 1) {
            drop[span.start - 1] = true;
        }
    }
    let mut kept: String = lines
        .iter()
        .zip(&drop)
        .filter(|(_, d)| !**d)
        .map(|(l, _)| *l)
        .collect();
    // Two removed neighbours at the end may leave a blank line behind.
    if drop.iter().any(|d| *d) {
        while kept.ends_with("\n\n") {
            kept.pop();
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"//! Tests of `my_crate::parser` (team-testing, seed 7): header.

use my_crate::parser;

/// `parse_number("42")` returns `Ok(42)`.
#[test]
fn parse_number_1() {
    let value = my_crate::parser::parse_number("42");
    assert_eq!(value, Ok(42));
}

/// `first(&[])` panics: index out of bounds: the len is 0 but the index is 0
/// code_defect: evidence
#[test]
#[ignore = "code_defect: panics on well-typed input: index out of bounds"]
fn first_panics_1() {
    let value = my_crate::first(&[]);
    let _ = value;
}

#[test]
#[should_panic(expected = "empty")]
fn pop_panics_1() {
    #[allow(unused)]
    let s = "
}x";
    my_crate::pop(&mut vec![]);
}
"#;

    const NEW: &str = r#"//! Tests of `my_crate::parser` (team-testing, seed 8): new header.

/// `parse_number("7")` returns `Ok(7)`.
#[test]
fn parse_number_1() {
    assert_eq!(my_crate::parser::parse_number("7"), Ok(7));
}
"#;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn blocks_run_from_docs_to_the_first_closing_brace() {
        assert_eq!(
            test_names(FILE),
            ["parse_number_1", "first_panics_1", "pop_panics_1"]
        );
        let blocks = test_blocks(FILE);
        assert!(blocks[0].1.starts_with("/// `parse_number(\"42\")`"));
        assert!(blocks[0].1.ends_with("Ok(42));\n}\n"));
        assert!(blocks[1].1.starts_with("/// `first(&[])` panics"));
        assert_eq!(blocks[1].1.lines().count(), 8);
        // A `}` that is not alone on its line does not close the block.
        assert!(blocks[2].1.starts_with("#[test]\n#[should_panic"));
        assert!(blocks[2].1.ends_with("pop(&mut vec![]);\n}\n"));
        // Helpers without `#[test]` and indented tests are not blocks.
        let other = "#[allow(dead_code)]\nfn helper() {\n}\n\nmod m {\n    #[test]\n    fn inner() {\n    }\n}\n";
        assert!(test_names(other).is_empty());
        assert!(test_names("").is_empty());
    }

    #[test]
    fn carried_tests_are_the_defects_the_new_file_lacks() {
        let none = BTreeMap::new();
        let out = carry_over(FILE, NEW, &none, &BTreeSet::new());
        // The ignored code-defect test comes along; the new file's own tests stay as written.
        assert!(out.starts_with(NEW));
        assert_eq!(test_names(&out), ["parse_number_1", "first_panics_1"]);
        assert!(out.ends_with("let _ = value;\n}\n"));
        assert!(out.contains("Ok(7));\n}\n\n/// `first(&[])`"));
        // Named as a defect (with a path): carried too; `avoid` wins over both.
        let defects = map(&[("tt_L1_team_testing_parser::pop_panics_1", "code_defect: x")]);
        let out = carry_over(FILE, NEW, &defects, &BTreeSet::new());
        assert_eq!(
            test_names(&out),
            ["parse_number_1", "first_panics_1", "pop_panics_1"]
        );
        let out = carry_over(FILE, NEW, &defects, &set(&["lib::x::first_panics_1"]));
        assert_eq!(test_names(&out), ["parse_number_1", "pop_panics_1"]);
        // A defect test the new file already has is not doubled.
        let defects = map(&[("parse_number_1", "code_defect: y")]);
        let out = carry_over(FILE, NEW, &defects, &set(&["first_panics_1"]));
        assert_eq!(out, NEW);
        // A new file without a trailing newline still gets a blank line between tests.
        let out = carry_over(FILE, NEW.trim_end(), &BTreeMap::new(), &BTreeSet::new());
        assert!(out.contains("Ok(7));\n}\n\n/// `first(&[])`"));
    }

    #[test]
    fn marking_puts_the_reason_after_test_and_replaces_an_ignore() {
        let defects = map(&[
            (
                "tt_L1::parse_number_1",
                "code_defect: returns \"42\"\nwrong",
            ),
            ("first_panics_1", "code_defect: again"),
            ("pop_panics_1", "code_defect: panics"),
        ]);
        let out = mark_defects(FILE, &defects);
        assert_eq!(test_names(&out), test_names(FILE));
        let blocks = test_blocks(&out);
        assert!(blocks[0].1.contains(
            "#[test]\n#[ignore = \"code_defect: returns \\\"42\\\"\\nwrong\"]\nfn parse_number_1() {"
        ));
        assert!(blocks[1]
            .1
            .contains("#[test]\n#[ignore = \"code_defect: again\"]\nfn first_panics_1"));
        assert_eq!(blocks[1].1.matches("#[ignore").count(), 1);
        assert!(blocks[2].1.contains(
            "#[test]\n#[ignore = \"code_defect: panics\"]\n#[should_panic(expected = \"empty\")]\n"
        ));
        // The header and the bodies are untouched, and marking twice changes nothing more.
        assert!(out
            .starts_with("//! Tests of `my_crate::parser` (team-testing, seed 7): header.\n\nuse"));
        assert_eq!(mark_defects(&out, &defects), out);
        assert_eq!(mark_defects(FILE, &BTreeMap::new()), FILE);
    }

    #[test]
    fn long_reasons_are_cut_on_a_char_boundary() {
        let defects = map(&[("parse_number_1", &"é".repeat(400))]);
        let out = mark_defects(FILE, &defects);
        let want = format!("#[ignore = \"{}\"]\n", "é".repeat(300));
        assert!(out.contains(&want));
    }

    #[test]
    fn removing_drops_the_block_and_its_separator() {
        let out = remove_tests(FILE, &set(&["first_panics_1"]));
        assert_eq!(test_names(&out), ["parse_number_1", "pop_panics_1"]);
        assert!(out.contains("Ok(42));\n}\n\n#[test]\n#[should_panic"));
        let out = remove_tests(FILE, &set(&["x::pop_panics_1", "first_panics_1"]));
        assert_eq!(test_names(&out), ["parse_number_1"]);
        assert!(out.ends_with("Ok(42));\n}\n"));
        let out = remove_tests(
            FILE,
            &set(&["parse_number_1", "first_panics_1", "pop_panics_1"]),
        );
        assert_eq!(out, "//! Tests of `my_crate::parser` (team-testing, seed 7): header.\n\nuse my_crate::parser;\n");
        assert_eq!(remove_tests(FILE, &set(&["absent"])), FILE);
    }
}
