//! Editing generated (gofmt-formatted) Go test files between rounds. A test is a top-level
//! `func TestX(t *testing.T) {` … `}`; a case of a table is the `{` … `},` block holding its
//! `name: "row",`; a case of a sequences test is its `t.Run("row", …)` block. The feedback
//! names them `TestX` or `TestX/row`.

use std::collections::{BTreeMap, BTreeSet};

/// A test function's lines: [start, end] (inclusive), found by its header and the closing
/// brace at column 0.
fn function_span(lines: &[&str], name: &str) -> Option<(usize, usize)> {
    let header = format!("func {name}(");
    let start = lines.iter().position(|l| l.starts_with(&header))?;
    let end = (start..lines.len()).find(|&i| lines[i] == "}")?;
    Some((start, end))
}

/// A case's lines within a function: the table element or the `t.Run("row", …)` block.
fn row_span(lines: &[&str], (from, to): (usize, usize), row: &str) -> Option<(usize, usize)> {
    let quoted = go_quote(row);
    for i in from..=to {
        let t = lines[i].trim_start();
        let indent = &lines[i][..lines[i].len() - t.len()];
        if t.starts_with(&format!("t.Run({quoted}, ")) {
            let close = format!("{indent}}})");
            return (i..=to).find(|&j| lines[j] == close).map(|j| (i, j));
        }
        let is_name = t
            .strip_prefix("name:")
            .is_some_and(|v| v.trim() == format!("{quoted},"));
        if is_name && i > from {
            let open = lines[i - 1];
            let open_indent = &open[..open.len() - open.trim_start().len()];
            if open.trim() == "{" {
                let close = format!("{open_indent}}},");
                return (i..=to).find(|&j| lines[j] == close).map(|j| (i - 1, j));
            }
        }
    }
    None
}

/// `TestX/row` -> (`TestX`, Some(`row`)).
fn split_id(id: &str) -> (&str, Option<&str>) {
    match id.split_once('/') {
        Some((f, r)) => (f, Some(r)),
        None => (id, None),
    }
}

/// The file without the tests `avoid` names (whole functions, or single cases).
pub fn remove_tests(text: &str, avoid: &BTreeSet<String>) -> String {
    let mut text = text.to_string();
    for id in avoid {
        let lines: Vec<&str> = text.lines().collect();
        let (func, row) = split_id(id);
        let Some(span) = function_span(&lines, func) else {
            continue;
        };
        let (a, b) = match row {
            None => {
                // The function and the blank line after it.
                let end = if lines.get(span.1 + 1) == Some(&"") {
                    span.1 + 1
                } else {
                    span.1
                };
                (span.0, end)
            }
            Some(r) => match row_span(&lines, span, r) {
                Some(s) => s,
                None => continue,
            },
        };
        let kept: Vec<&str> = lines[..a].iter().chain(&lines[b + 1..]).copied().collect();
        // gofmt's file ends with one newline, even when its last function went.
        text = kept.join("\n").trim_end().to_string() + "\n";
    }
    if avoid.is_empty() {
        text
    } else {
        tidy(&text)
    }
}

/// The file with only the tests `keep` names (`TestX` whole, `TestX/row` one case of it) and
/// the imports they use; None when it would keep none.
pub fn keep_only(text: &str, keep: &BTreeSet<String>) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut drop = BTreeSet::new();
    let mut kept = 0;
    for f in function_names(text) {
        if keep.contains(&f) {
            kept += 1;
            continue;
        }
        let Some(span) = function_span(&lines, &f) else {
            continue;
        };
        let rows = row_names(&lines, span);
        let wanted = rows
            .iter()
            .filter(|r| keep.contains(&format!("{f}/{r}")))
            .count();
        if wanted == 0 {
            drop.insert(f);
            continue;
        }
        kept += wanted;
        drop.extend(
            rows.iter()
                .map(|r| format!("{f}/{r}"))
                .filter(|id| !keep.contains(id)),
        );
    }
    (kept > 0).then(|| remove_tests(text, &drop))
}

/// The names of a function's cases: its table's `name: "row",` and its `t.Run("row", …)`.
fn row_names(lines: &[&str], (from, to): (usize, usize)) -> Vec<String> {
    lines[from..=to]
        .iter()
        .filter_map(|l| {
            let t = l.trim_start();
            let quoted = t
                .strip_prefix("name:")
                .map(|v| v.trim().strip_suffix(',').unwrap_or(v.trim()))
                .or_else(|| t.strip_prefix("t.Run(")?.split_once(", ").map(|(q, _)| q))?;
            go_unquote(quoted)
        })
        .collect()
}

/// The string a double-quoted Go literal (as [`go_quote`] writes one) stands for.
fn go_unquote(quoted: &str) -> Option<String> {
    let inner = quoted.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'x' => {
                let hex: String = chars.by_ref().take(2).collect();
                out.push(char::from(u8::from_str_radix(&hex, 16).ok()?));
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// Go's double-quoted form of a string.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The names of a file's top-level test functions.
fn function_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("func "))
        .filter_map(|l| l.split('(').next())
        .map(str::to_string)
        .collect()
}

/// Whether `code` uses the package imported as `qualifier` (`strings.` not inside `xstrings.`).
fn uses_qualifier(code: &str, qualifier: &str) -> bool {
    let needle = format!("{qualifier}.");
    code.match_indices(&needle).any(|(at, _)| {
        !code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
    })
}

/// The file without the import specs its code no longer uses, and without a `dir :=
/// t.TempDir()` no line of its function reads any more (both would not compile).
fn tidy(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let (Some(open), Some(close)) = (
        lines.iter().position(|l| *l == "import ("),
        lines.iter().position(|l| *l == ")"),
    ) else {
        return text.to_string();
    };
    let code = lines[close + 1..].join("\n");
    let mut block: Vec<&str> = Vec::new();
    for line in &lines[open + 1..close] {
        let spec = line.trim();
        if spec.is_empty() {
            if block.last().is_some_and(|l| !l.trim().is_empty()) {
                block.push(line);
            }
            continue;
        }
        let path = spec[spec.find('"').unwrap_or(0)..].trim_matches('"');
        let name = match spec.split_once(' ') {
            Some((alias, _)) => alias,
            None => path.rsplit('/').next().unwrap_or(path),
        };
        if uses_qualifier(&code, name) {
            block.push(line);
        }
    }
    while block.last().is_some_and(|l| l.trim().is_empty()) {
        block.pop();
    }
    let mut out: Vec<&str> = lines[..=open].to_vec();
    out.extend(block);
    let mut body: Vec<&str> = lines[close..].to_vec();
    // An unused `dir := t.TempDir()`: the rest of its function never reads `dir`.
    let mut i = 0;
    while i < body.len() {
        if body[i].trim() == "dir := t.TempDir()" {
            let end = (i..body.len())
                .find(|&j| body[j] == "}")
                .unwrap_or(body.len() - 1);
            let rest = body[i + 1..=end].join("\n");
            if !reads_dir(&rest) {
                body.remove(i);
                continue;
            }
        }
        i += 1;
    }
    out.extend(body);
    out.join("\n") + "\n"
}

/// Whether code reads the variable `dir` (as a whole word).
fn reads_dir(code: &str) -> bool {
    code.match_indices("dir").any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + 3..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '"');
        !word(before) && !word(after) && before != Some('.')
    })
}

/// The import specs of a file's import block, by the name its code uses them as.
fn imports(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut inside = false;
    for line in text.lines() {
        match line {
            "import (" => inside = true,
            ")" if inside => break,
            l if inside && l.trim().ends_with('"') => {
                let spec = l.trim();
                let path = spec[spec.find('"').unwrap_or(0)..].trim_matches('"');
                let name = match spec.split_once(' ') {
                    Some((alias, _)) => alias.to_string(),
                    None => path.rsplit('/').next().unwrap_or(path).to_string(),
                };
                out.insert(name, spec.to_string());
            }
            _ => {}
        }
    }
    out
}

/// `new` with the imports in `add` it lacks, the standard library's in its group, others in
/// the second.
fn with_imports(new: &str, add: &BTreeSet<String>) -> String {
    let have = imports(new);
    let missing: Vec<&String> = add
        .iter()
        .filter(|s| !have.values().any(|h| h == *s))
        .collect();
    if missing.is_empty() {
        return new.to_string();
    }
    let specs: BTreeSet<String> = have
        .values()
        .cloned()
        .chain(missing.into_iter().cloned())
        .collect();
    let is_std = |spec: &String| {
        let path = spec[spec.find('"').unwrap_or(0)..].trim_matches('"');
        !path.split('/').next().unwrap_or("").contains('.')
    };
    let std: Vec<String> = specs
        .iter()
        .filter(|s| is_std(s))
        .map(|s| format!("\t{s}"))
        .collect();
    let other: Vec<String> = specs
        .iter()
        .filter(|s| !is_std(s))
        .map(|s| format!("\t{s}"))
        .collect();
    let mut block = std.join("\n");
    if !other.is_empty() {
        block = format!("{block}\n\n{}", other.join("\n"));
    }
    let Some(start) = new.find("import (\n") else {
        return new.to_string();
    };
    let Some(len) = new[start..].find("\n)\n") else {
        return new.to_string();
    };
    format!("{}import (\n{block}{}", &new[..start], &new[start + len..])
}

/// The new file plus the defect tests of the previous round it lacks (with the imports their
/// code uses), unless the executor said to avoid them.
pub fn carry_over(
    previous: &str,
    new: &str,
    defects: &BTreeMap<String, String>,
    avoid: &BTreeSet<String>,
) -> String {
    if previous.is_empty() {
        return new.to_string();
    }
    let have = function_names(new);
    let old_imports = imports(previous);
    let lines: Vec<&str> = previous.lines().collect();
    let mut carried = String::new();
    let mut used = BTreeSet::new();
    for name in function_names(previous) {
        if have.contains(&name) || avoid.contains(&name) {
            continue;
        }
        let Some((a, b)) = function_span(&lines, &name) else {
            continue;
        };
        let body = lines[a..=b].join("\n");
        let defect = body.contains("t.Skip(\"code_defect")
            || defects.keys().any(|id| split_id(id).0 == name);
        if !defect {
            continue;
        }
        for (qualifier, spec) in &old_imports {
            if uses_qualifier(&body, qualifier) {
                used.insert(spec.clone());
            }
        }
        carried.push('\n');
        carried.push_str(&body);
        carried.push('\n');
    }
    if carried.is_empty() {
        return new.to_string();
    }
    let mut out = with_imports(new, &used);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out + &carried
}

/// Skips every test the executor found a code defect with, with the evidence: a whole
/// function at its first line, a case at the start of its subtest.
pub fn mark_defects(text: &str, defects: &BTreeMap<String, String>) -> String {
    let mut text = text.to_string();
    for (id, reason) in defects {
        let lines: Vec<&str> = text.lines().collect();
        let (func, row) = split_id(id);
        let Some(span) = function_span(&lines, func) else {
            continue;
        };
        let skip = format!("t.Skip({})", go_quote(reason));
        let (at, line) = match row {
            None => {
                if lines[span.0 + 1].trim_start().starts_with("t.Skip(") {
                    continue;
                }
                (span.0 + 1, format!("\t{skip}"))
            }
            Some(r) => {
                if let Some((a, _)) = row_span(&lines, span, r)
                    .filter(|(a, _)| lines[*a].trim_start().starts_with("t.Run("))
                {
                    if lines
                        .get(a + 1)
                        .is_some_and(|l| l.trim_start().starts_with("t.Skip("))
                    {
                        continue;
                    }
                    let indent = &lines[a][..lines[a].len() - lines[a].trim_start().len()];
                    (a + 1, format!("{indent}\t{skip}"))
                } else if let Some(run) = (span.0..=span.1)
                    .find(|&i| lines[i].trim_start().starts_with("t.Run(tt.name, "))
                {
                    let guard = format!("if tt.name == {} {{", go_quote(r));
                    if lines.get(run + 1).is_some_and(|l| l.trim() == guard) {
                        continue;
                    }
                    let indent = &lines[run][..lines[run].len() - lines[run].trim_start().len()];
                    (
                        run + 1,
                        format!(
                            "{indent}\tif tt.name == {} {{\n{indent}\t\t{skip}\n{indent}\t}}",
                            go_quote(r)
                        ),
                    )
                } else {
                    continue;
                }
            }
        };
        let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        out.insert(at, line);
        text = out.join("\n") + "\n";
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "// Code generated by team-testing from stats.go. DO NOT EDIT.

package stats_test

import (
\t\"testing\"

\t\"example.com/m/stats\"
)

func TestMean(t *testing.T) {
\ttests := []struct {
\t\tname string
\t\twant float64
\t}{
\t\t{
\t\t\tname: \"three\",
\t\t\twant: 2,
\t\t},
\t\t{
\t\t\tname: \"one\",
\t\t\twant: 1,
\t\t},
\t}
\tfor _, tt := range tests {
\t\tt.Run(tt.name, func(t *testing.T) {
\t\t\tif got := stats.Mean(); got != tt.want {
\t\t\t\tt.Errorf(\"bad\")
\t\t\t}
\t\t})
\t}
}

func TestStack_Sequences(t *testing.T) {
\tt.Run(\"Push_Pop\", func(t *testing.T) {
\t\tv := stats.New()
\t\tv.Push(1)
\t})
}
";

    #[test]
    fn avoided_functions_and_cases_are_removed() {
        let avoid: BTreeSet<String> = ["TestMean/three".to_string(), "TestStack_Sequences".into()]
            .into_iter()
            .collect();
        let out = remove_tests(FILE, &avoid);
        assert!(
            !out.contains("\"three\"") && out.contains("\"one\""),
            "{out}"
        );
        assert!(!out.contains("TestStack_Sequences"), "{out}");
        assert!(
            out.contains("func TestMean(") && out.ends_with("}\n"),
            "{out}"
        );
    }

    #[test]
    fn keeping_one_case_drops_the_other_cases_and_functions() {
        let keep: BTreeSet<String> = ["TestMean/one".to_string()].into_iter().collect();
        let out = keep_only(FILE, &keep).unwrap();
        assert!(
            out.contains("\"one\"") && !out.contains("\"three\""),
            "{out}"
        );
        assert!(!out.contains("TestStack_Sequences"), "{out}");
        let keep: BTreeSet<String> = ["TestStack_Sequences/Push_Pop".to_string()]
            .into_iter()
            .collect();
        let out = keep_only(FILE, &keep).unwrap();
        assert!(
            !out.contains("TestMean") && out.contains("Push_Pop"),
            "{out}"
        );
        let none: BTreeSet<String> = ["TestOther".to_string()].into_iter().collect();
        assert_eq!(keep_only(FILE, &none), None);
    }

    #[test]
    fn defects_are_skipped_with_their_evidence() {
        let defects: BTreeMap<String, String> = [
            (
                "TestMean/one".to_string(),
                "code_defect: \"x\" broke".to_string(),
            ),
            (
                "TestStack_Sequences/Push_Pop".into(),
                "code_defect: pop".into(),
            ),
        ]
        .into_iter()
        .collect();
        let out = mark_defects(FILE, &defects);
        assert!(
            out.contains("\t\t\tif tt.name == \"one\" {\n\t\t\t\tt.Skip(\"code_defect: \\\"x\\\" broke\")\n\t\t\t}"),
            "{out}"
        );
        assert!(
            out.contains(
                "func(t *testing.T) {\n\t\tt.Skip(\"code_defect: pop\")\n\t\tv := stats.New()"
            ),
            "{out}"
        );
        // Marking twice changes nothing for a whole function already skipped.
        let whole: BTreeMap<String, String> =
            [("TestMean".to_string(), "code_defect: y".to_string())].into();
        let once = mark_defects(FILE, &whole);
        assert_eq!(mark_defects(&once, &whole), once);
        assert_eq!(mark_defects(&out, &defects), out);
    }

    #[test]
    fn defect_tests_the_new_file_lacks_are_carried_over_with_their_imports() {
        let previous = format!(
            "{FILE}\nfunc TestMedian_CodeDefect(t *testing.T) {{\n\tt.Skip(\"code_defect: panics\")\n\tstats.Median(nil)\n\t_ = math.Pi\n}}\n"
        )
        .replace("\t\"testing\"\n", "\t\"math\"\n\t\"testing\"\n");
        let out = carry_over(&previous, FILE, &BTreeMap::new(), &BTreeSet::new());
        assert!(out.contains("func TestMedian_CodeDefect("), "{out}");
        assert!(
            out.contains("import (\n\t\"math\"\n\t\"testing\"\n\n\t\"example.com/m/stats\"\n)"),
            "{out}"
        );
        let avoid: BTreeSet<String> = ["TestMedian_CodeDefect".to_string()].into();
        assert_eq!(carry_over(&previous, FILE, &BTreeMap::new(), &avoid), FILE);
    }

    #[test]
    fn removing_a_test_removes_the_imports_and_the_folder_only_it_used() {
        let file = FILE
            .replace("\t\"testing\"\n", "\t\"math\"\n\t\"testing\"\n")
            .replace(
                "func TestStack_Sequences(t *testing.T) {\n",
                "func TestStack_Sequences(t *testing.T) {\n\t_ = math.Pi\n",
            )
            + "\nfunc TestDir(t *testing.T) {\n\tdir := t.TempDir()\n\tt.Run(\"dir\", func(t *testing.T) {\n\t\t_ = stats.Mean()\n\t})\n}\n";
        let avoid: BTreeSet<String> = ["TestStack_Sequences".to_string()].into();
        let out = remove_tests(&file, &avoid);
        assert!(!out.contains("\"math\""), "{out}");
        assert!(
            out.contains("\"testing\"") && out.contains("\"example.com/m/stats\""),
            "{out}"
        );
        // A `dir` no line reads (the subtest's name is not a read) goes.
        assert!(!out.contains("dir := t.TempDir()"), "{out}");
        assert!(uses_qualifier("x := xstrings.Len(s)", "xstrings"));
        assert!(!uses_qualifier("x := xstrings.Len(s)", "strings"));
        assert!(reads_dir("f(filepath.Join(dir, \"x\"))") && !reads_dir("t.Run(\"dir\", f)"));
    }

    #[test]
    fn go_quoting_escapes_what_go_needs() {
        assert_eq!(go_quote("a\"b\\c\nd\u{1}é"), "\"a\\\"b\\\\c\\nd\\x01é\"");
    }
}
