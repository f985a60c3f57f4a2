//! Editing a generated JavaScript test file as text: its test blocks, cutting tests out,
//! carrying tests of an earlier round over, and each framework's expected-failure form for the
//! tests that found code defects (what `apply` and the generator's rounds both do to a file).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::testing::framework::Framework;

/// The line that opens a test of a generated file, and the test's name: `  test("name", ...`.
fn opening(line: &str) -> Option<String> {
    let rest = line
        .strip_prefix("  test(")
        .or_else(|| line.strip_prefix("  it("))?;
    let name_end = json_string_end(rest)?;
    serde_json::from_str(&rest[..name_end]).ok()
}

/// The end of the JSON string literal `text` starts with.
fn json_string_end(text: &str) -> Option<usize> {
    let mut chars = text.char_indices();
    if chars.next()?.1 != '"' {
        return None;
    }
    let mut escaped = false;
    for (i, c) in chars {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// Whether a defect map names this test: by its id's last part (`suite > name`) or its name.
fn defect_reason<'a>(defects: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    defects
        .iter()
        .find(|(k, _)| {
            let k = unescape_xml(k);
            k == name || k.rsplit(" > ").next() == Some(name)
        })
        .map(|(_, v)| v.as_str())
}

/// A test name as a JUnit report may still carry it (`initials(&quot;&quot;)`).
pub fn unescape_xml(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The framework whose expected-failure form fits the project's installed runner: jest before
/// 28 has no `test.failing`, so its defect tests take the skip-with-evidence form (mocha's).
/// `node_modules` is the project's (None: unknown, the framework's own form).
pub fn expected_failure_form(framework: Framework, node_modules: Option<&Path>) -> Framework {
    if framework != Framework::Jest {
        return framework;
    }
    let major = node_modules
        .and_then(|nm| {
            crate::util::read_json::<serde_json::Value>(&nm.join("jest/package.json")).ok()
        })
        .and_then(|v| {
            v["version"]
                .as_str()
                .and_then(|s| s.split('.').next())
                .and_then(|m| m.parse::<u64>().ok())
        });
    match major {
        Some(m) if m < 28 => Framework::Mocha,
        _ => framework,
    }
}

/// Marks the tests that found code defects as the framework's expected failure, with the
/// evidence: node's `{ todo }`, jest's `test.failing`, vitest's `test.fails`, a skip with the
/// evidence for mocha (which has none). A test already marked stays as it is.
pub fn mark_expected_failures(
    source: &str,
    defects: &BTreeMap<String, String>,
    framework: Framework,
) -> String {
    let mut out = String::with_capacity(source.len() + 200);
    for line in source.lines() {
        let Some(name) = opening(line) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let Some(reason) = defect_reason(defects, &name) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let quoted = serde_json::to_string(&name).unwrap_or_default();
        let reason_text = reason.replace('\n', " ");
        let reason_json = serde_json::to_string(&reason_text).unwrap_or_default();
        let call = if line.starts_with("  it(") {
            "it"
        } else {
            "test"
        };
        let after = &line[format!("  {call}(").len() + quoted.len()..];
        out.push_str(&format!("  // {}\n", reason_text.replace("*/", "* /")));
        let marked = match framework {
            Framework::Jest => format!("  {call}.failing({quoted}{after}"),
            Framework::Vitest => format!("  {call}.fails({quoted}{after}"),
            Framework::Mocha => format!("  {call}.skip({quoted}{after}"),
            _ => format!("  {call}({quoted}, {{ todo: {reason_json} }}{after}"),
        };
        out.push_str(&marked);
        out.push('\n');
    }
    out
}

/// The test blocks of a generated file: (name, text from the opening line to its `  });`).
fn test_blocks(source: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, String)> = None;
    let mut comment = String::new();
    for line in source.lines() {
        let opened = line
            .strip_prefix("  test")
            .or_else(|| line.strip_prefix("  it"))
            .filter(|r| r.starts_with('(') || r.starts_with('.'))
            .and_then(|r| r.split_once('('))
            .and_then(|(_, r)| json_string_end(r).map(|e| r[..e].to_string()))
            .and_then(|q| serde_json::from_str::<String>(&q).ok());
        if current.is_none() {
            if let Some(name) = opened {
                current = Some((name, std::mem::take(&mut comment) + line + "\n"));
                continue;
            }
            if line.starts_with("  //") {
                comment.push_str(line);
                comment.push('\n');
            } else {
                comment.clear();
            }
            continue;
        }
        if let Some((_, text)) = current.as_mut() {
            text.push_str(line);
            text.push('\n');
        }
        if line == "  });" {
            blocks.extend(current.take());
        }
    }
    blocks
}

/// `source` without the test blocks named (by their titles), and the names not found.
pub fn remove_tests(
    source: &str,
    names: &std::collections::BTreeSet<String>,
) -> (String, Vec<String>) {
    let mut out = source.to_string();
    let mut found = std::collections::BTreeSet::new();
    for (name, block) in test_blocks(source) {
        if names.contains(&name) {
            out = out.replacen(&block, "", 1);
            found.insert(name);
        }
    }
    let missing = names.difference(&found).cloned().collect();
    (without_gaps(&out), missing)
}

/// The file's layout after blocks were cut out: one blank line between tests at most, none
/// after the suite's opening line or before its closing one.
fn without_gaps(source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::with_capacity(source.len());
    for (i, line) in lines.iter().enumerate() {
        let blank = line.trim().is_empty();
        let next_blank_or_close = lines
            .get(i + 1)
            .is_some_and(|next| next.trim().is_empty() || next.starts_with("});"));
        let after_open = i > 0 && lines[i - 1].ends_with('{');
        if blank && (next_blank_or_close || after_open) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The titles of a generated file's test blocks, in order.
pub fn test_titles(source: &str) -> Vec<String> {
    test_blocks(source).into_iter().map(|(n, _)| n).collect()
}

/// How many test blocks a generated file holds.
pub fn test_count(source: &str) -> usize {
    test_blocks(source).len()
}

/// Tests of the previous round that must survive a regeneration (they found code defects) and
/// that the new file lacks, added at the end of its suite; nothing in `drop` is carried.
pub fn carry_over(
    old: &str,
    new: &str,
    keep: &BTreeMap<String, String>,
    drop: &BTreeSet<String>,
) -> String {
    let new_names: BTreeSet<String> = test_blocks(new).into_iter().map(|(n, _)| n).collect();
    let carried: Vec<String> = test_blocks(old)
        .into_iter()
        .filter(|(name, _)| {
            defect_reason(keep, name).is_some()
                && !new_names.contains(name)
                && !drop
                    .iter()
                    .map(|d| unescape_xml(d))
                    .any(|d| d == *name || d.ends_with(&format!(" > {name}")))
        })
        .map(|(_, text)| text)
        .collect();
    let Some(end) = new.rfind("\n});") else {
        return new.to_string();
    };
    if carried.is_empty() {
        return new.to_string();
    }
    let mut out = new[..end].to_string();
    for block in carried {
        out.push_str("\n\n");
        out.push_str(block.trim_end());
    }
    out.push_str(&new[end..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "import { f } from '../../src/m.js';\n\ndescribe(\"m\", () => {\n  test(\"f(1) [aaaaaa]\", () => {\n    assert.equal(f(1), 2);\n  });\n\n  test(\"f(\\\"\\\") does not throw [bbbbbb]\", () => {\n    assert.equal(typeof (f(\"\")), \"string\");\n  });\n});\n";

    #[test]
    fn defect_tests_take_each_frameworks_expected_failure_form() {
        let mut defects = BTreeMap::new();
        defects.insert(
            "m > f(\"\") does not throw [bbbbbb]".to_string(),
            "code_defect found by team-testing at src/m.js:3: TypeError".to_string(),
        );
        let node = mark_expected_failures(FILE, &defects, Framework::NodeTest);
        assert!(
            node.contains("  test(\"f(\\\"\\\") does not throw [bbbbbb]\", { todo: \"code_defect found by team-testing at src/m.js:3: TypeError\" }, () => {"),
            "{node}"
        );
        assert!(
            node.contains("  // code_defect found by team-testing"),
            "{node}"
        );
        assert!(node.contains("  test(\"f(1) [aaaaaa]\", () => {"), "{node}");
        let jest = mark_expected_failures(FILE, &defects, Framework::Jest);
        assert!(
            jest.contains("  test.failing(\"f(\\\"\\\") does not throw"),
            "{jest}"
        );
        let vitest = mark_expected_failures(FILE, &defects, Framework::Vitest);
        assert!(
            vitest.contains("  test.fails(\"f(\\\"\\\") does not throw"),
            "{vitest}"
        );
        // Marking twice changes nothing more.
        assert_eq!(
            mark_expected_failures(&jest, &defects, Framework::Jest),
            jest
        );
    }

    #[test]
    fn defect_tests_of_the_last_round_are_carried_over() {
        let new = "import { f } from '../../src/m.js';\n\ndescribe(\"m\", () => {\n  test(\"f(2) [cccccc]\", () => {\n    assert.equal(f(2), 3);\n  });\n});\n";
        let mut keep = BTreeMap::new();
        keep.insert(
            "m > f(\"\") does not throw [bbbbbb]".to_string(),
            "why".to_string(),
        );
        let out = carry_over(FILE, new, &keep, &BTreeSet::new());
        assert!(out.contains("f(2) [cccccc]"), "{out}");
        assert!(out.contains("does not throw [bbbbbb]"), "{out}");
        assert!(!out.contains("f(1) [aaaaaa]"), "{out}");
        assert!(out.ends_with("  });\n});\n"), "{out}");
    }

    #[test]
    fn removing_a_test_leaves_no_gap() {
        let (left, missing) = remove_tests(FILE, &["f(1) [aaaaaa]".to_string()].into());
        assert!(missing.is_empty());
        assert_eq!(
            left,
            "import { f } from '../../src/m.js';\n\ndescribe(\"m\", () => {\n  test(\"f(\\\"\\\") does not throw [bbbbbb]\", () => {\n    assert.equal(typeof (f(\"\")), \"string\");\n  });\n});\n"
        );
        let (last, _) = remove_tests(
            FILE,
            &["f(\"\") does not throw [bbbbbb]".to_string()].into(),
        );
        assert!(
            last.ends_with("    assert.equal(f(1), 2);\n  });\n});\n"),
            "{last}"
        );
    }
}
