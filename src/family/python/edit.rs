//! Editing a generated pytest file as text: its test functions, cutting tests out, carrying
//! tests of an earlier round over, and marking code-defect tests as strict xfails (what `apply`
//! and the generator's rounds both do to a file).

use std::collections::BTreeMap;

/// A test function of a generated file: its decorators, `def` line and body.
fn test_blocks(source: &str) -> Vec<(String, String)> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut pending = String::new();
    for line in source.lines() {
        if line.starts_with('@') {
            pending.push_str(line);
            pending.push('\n');
            continue;
        }
        if let Some(rest) = line.strip_prefix("def ") {
            let name = rest.split('(').next().unwrap_or("").trim().to_string();
            blocks.push((name, std::mem::take(&mut pending) + line + "\n"));
            continue;
        }
        pending.clear();
        if let Some(last) = blocks.last_mut() {
            if line.is_empty() || line.starts_with(' ') {
                last.1.push_str(line);
                last.1.push('\n');
            }
        }
    }
    for b in &mut blocks {
        b.1 = b.1.trim_end().to_string() + "\n";
    }
    blocks
}

/// The names of a generated file's top-level test functions.
pub fn test_names(source: &str) -> Vec<String> {
    test_blocks(source)
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| name.starts_with("test"))
        .collect()
}

/// `source` without the top-level test functions named in `names` (with their decorators), and
/// the names it could not find as top-level functions (a method of a class, or not there).
pub fn remove_tests(
    source: &str,
    names: &std::collections::BTreeSet<String>,
) -> (String, Vec<String>) {
    let mut out = String::with_capacity(source.len());
    let mut pending = String::new();
    let mut skipping = false;
    let mut removed = std::collections::BTreeSet::new();
    for line in source.lines() {
        if line.starts_with('@') {
            pending.push_str(line);
            pending.push('\n');
            continue;
        }
        let def = line
            .strip_prefix("def ")
            .or_else(|| line.strip_prefix("async def "))
            .and_then(|r| r.split('(').next())
            .map(str::trim);
        if let Some(name) = def {
            skipping = names.contains(name);
            if skipping {
                removed.insert(name.to_string());
                pending.clear();
                continue;
            }
        } else if skipping {
            if line.trim().is_empty() || line.starts_with([' ', '\t']) {
                continue;
            }
            skipping = false;
        }
        out.push_str(&std::mem::take(&mut pending));
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&pending);
    let missing = names
        .iter()
        .filter(|n| !removed.contains(*n))
        .cloned()
        .collect();
    (out, missing)
}

/// Names the file imports from each module: `from m import a, b` -> (m, [a, b]).
fn imports(source: &str) -> Vec<(String, Vec<String>)> {
    source
        .lines()
        .filter_map(|l| l.strip_prefix("from "))
        .filter_map(|l| l.split_once(" import "))
        .map(|(m, names)| {
            (
                m.trim().to_string(),
                names.split(',').map(|n| n.trim().to_string()).collect(),
            )
        })
        .collect()
}

/// Tests of the previous round that must survive a regeneration (they found code defects, or
/// already carry an xfail for one): carried into the new file when it lacks them, with the names
/// they import. Everything else comes from the new round, and nothing in `drop` (broken, flaky
/// or unsafe tests) is ever carried.
pub fn carry_over(
    old: &str,
    new: &str,
    keep: &std::collections::BTreeSet<String>,
    drop: &std::collections::BTreeSet<String>,
) -> String {
    let new_names: Vec<String> = test_blocks(new).into_iter().map(|(n, _)| n).collect();
    let carried: Vec<(String, String)> = test_blocks(old)
        .into_iter()
        .filter(|(name, block)| {
            (keep.contains(name) || block.starts_with("@pytest.mark.xfail"))
                && !new_names.contains(name)
                && !drop.contains(name)
                && name.starts_with("test")
        })
        .collect();
    if carried.is_empty() {
        return new.to_string();
    }
    let mut out = new.to_string();
    // Union the from-imports so the carried tests resolve their names.
    for (module, names) in imports(old) {
        let line_prefix = format!("from {module} import ");
        let existing = out
            .lines()
            .find(|l| l.starts_with(&line_prefix))
            .map(str::to_string);
        let mut all: Vec<String> = existing
            .as_deref()
            .map(|l| {
                l[line_prefix.len()..]
                    .split(',')
                    .map(|n| n.trim().to_string())
                    .collect()
            })
            .unwrap_or_default();
        for n in names {
            if !all.contains(&n) {
                all.push(n);
            }
        }
        all.sort();
        let line = format!("{line_prefix}{}", all.join(", "));
        out = match existing {
            Some(old_line) => out.replacen(&old_line, &line, 1),
            None => insert_after_header(&out, &line),
        };
    }
    if carried.iter().any(|(_, b)| b.contains("pytest."))
        && !out.lines().any(|l| l.trim() == "import pytest")
    {
        out = insert_import(&out);
    }
    for (_, block) in carried {
        out = out.trim_end().to_string() + "\n\n\n" + &block;
    }
    out
}

fn insert_after_header(source: &str, line: &str) -> String {
    let mut lines: Vec<String> = source.lines().map(str::to_string).collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("def ") || l.starts_with('@'))
        .unwrap_or(lines.len());
    let at = at.saturating_sub(2).max(1).min(lines.len());
    lines.insert(at, line.to_string());
    lines.join("\n") + "\n"
}

/// Marks tests as expected failures with the reason (a code defect they found), so the layer's
/// pass rate reflects the tests that are right about the code while the finding stays visible.
pub fn mark_xfail(source: &str, tests: &BTreeMap<String, String>) -> String {
    if tests.is_empty() {
        return source.to_string();
    }
    let mut out = String::with_capacity(source.len() + 200);
    let mut marked = false;
    for line in source.lines() {
        let name = line
            .strip_prefix("def ")
            .and_then(|r| r.split('(').next())
            .map(str::trim);
        let already = out
            .trim_end()
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("@pytest.mark.xfail"));
        if let Some(reason) = name.and_then(|n| tests.get(n)).filter(|_| !already) {
            let reason = reason
                .replace('\\', "\\\\")
                .replace('"', "'")
                .replace('\n', " ");
            out.push_str(&format!(
                "@pytest.mark.xfail(reason=\"{reason}\", strict=True)\n"
            ));
            marked = true;
        }
        out.push_str(line);
        out.push('\n');
    }
    if marked && !source.lines().any(|l| l.trim() == "import pytest") {
        out = insert_import(&out);
    }
    out
}

/// Adds `import pytest` after the module docstring (or at the top).
fn insert_import(source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut at = 0;
    if lines.first().is_some_and(|l| l.starts_with("\"\"\"")) {
        let single = lines[0].len() > 3 && lines[0][3..].contains("\"\"\"");
        at = if single {
            1
        } else {
            lines
                .iter()
                .skip(1)
                .position(|l| l.contains("\"\"\""))
                .map_or(0, |i| i + 2)
        };
    }
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    out.insert(at, "import pytest".into());
    out.join("\n") + "\n"
}

/// Pynguin's assertion minimization on one test file: for each (test, the lines of the file where
/// it noticed a mutant), a test with several assertions loses those that noticed none while
/// another did. Only single-line `assert` statements of the test's own body are touched, so a
/// test keeps at least one. The new source and each dropped `test:line`; None when none go.
pub fn prune_assertions(
    source: &str,
    noticed: &[(&str, &std::collections::BTreeSet<u32>)],
) -> Option<(String, Vec<String>)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut remove = std::collections::BTreeSet::new();
    let mut dropped = Vec::new();
    for (name, noticing) in noticed {
        let Some(start) = lines
            .iter()
            .position(|l| l.starts_with(&format!("def {name}(")))
        else {
            continue;
        };
        let body_end = lines[start + 1..]
            .iter()
            .position(|l| !l.trim().is_empty() && !l.starts_with([' ', '\t']))
            .map_or(lines.len(), |i| start + 1 + i);
        let asserts: Vec<usize> = (start + 1..body_end)
            .filter(|&i| is_single_line_assert(lines[i]))
            .collect();
        let silent: Vec<usize> = asserts
            .iter()
            .copied()
            .filter(|i| !noticing.contains(&(*i as u32 + 1)))
            .collect();
        if asserts.len() >= 2 && silent.len() < asserts.len() {
            for i in silent {
                remove.insert(i);
                dropped.push(format!("{name}:{}", i + 1));
            }
        }
    }
    if remove.is_empty() {
        return None;
    }
    let mut pruned: String = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| !remove.contains(i))
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    if !source.ends_with('\n') {
        pruned.pop();
    }
    Some((pruned, dropped))
}

/// `    assert x == 1`: an assertion at a test's body level that is one whole statement.
fn is_single_line_assert(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("    assert ") else {
        return false;
    };
    let depth = rest.chars().fold(0i32, |d, c| match c {
        '(' | '[' | '{' => d + 1,
        ')' | ']' | '}' => d - 1,
        _ => d,
    });
    depth == 0 && !rest.trim_end().ends_with('\\')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revision_round_keeps_the_earlier_tests_it_is_not_told_to_drop() {
        let old = "\"\"\"Old.\"\"\"\nfrom m import f, g\n\n\ndef test_f_aa():\n    assert f(1) == 2\n\n\ndef test_g_bb():\n    assert g(1) == 3\n";
        let new = "\"\"\"New.\"\"\"\nfrom m import h\n\n\ndef test_h_cc():\n    assert h() == 0\n";
        let keep: std::collections::BTreeSet<String> = test_names(old).into_iter().collect();
        let drop: std::collections::BTreeSet<String> = ["test_g_bb".to_string()].into();
        let out = carry_over(old, new, &keep, &drop);
        assert!(out.contains("def test_h_cc():"), "{out}");
        assert!(out.contains("def test_f_aa():"), "{out}");
        assert!(!out.contains("def test_g_bb():"), "{out}");
    }

    #[test]
    fn defect_tests_of_the_last_round_are_carried_over() {
        let old = "\"\"\"Old.\"\"\"\nfrom m import f, g\n\n\ndef test_f_aa():\n    assert f(1) == 2\n\n\n@pytest.mark.xfail(reason=\"x\", strict=True)\ndef test_g_bb():\n    assert g(1) == 3\n";
        let new = "\"\"\"New.\"\"\"\nfrom m import h\n\n\ndef test_h_cc():\n    assert h() == 0\n";
        let keep: std::collections::BTreeSet<String> = ["test_f_aa".to_string()].into();
        let out = carry_over(old, new, &keep, &Default::default());
        assert!(out.contains("from m import f, g, h"), "{out}");
        assert!(out.contains("import pytest"), "{out}");
        assert!(
            out.contains("def test_h_cc():") && out.contains("def test_f_aa():"),
            "{out}"
        );
        assert!(
            out.contains("@pytest.mark.xfail(reason=\"x\", strict=True)\ndef test_g_bb():"),
            "{out}"
        );
        // Marking again does not stack a second decorator.
        let mut reasons = BTreeMap::new();
        reasons.insert("test_g_bb".to_string(), "y".to_string());
        assert_eq!(mark_xfail(&out, &reasons).matches("xfail").count(), 1);
    }

    #[test]
    fn unsafe_tests_are_cut_out_with_their_decorators() {
        let src = "import pytest\n\n\n@pytest.mark.xfail(strict=True)\ndef test_a():\n    f('.')\n\n\ndef test_b(tmp_path):\n    assert g(tmp_path) is None\n";
        let names = ["test_a".to_string(), "test_gone".to_string()].into();
        let (out, missing) = remove_tests(src, &names);
        assert_eq!(
            out,
            "import pytest\n\n\ndef test_b(tmp_path):\n    assert g(tmp_path) is None\n"
        );
        assert_eq!(missing, vec!["test_gone".to_string()]);
    }

    #[test]
    fn xfail_marks_the_named_tests_and_imports_pytest() {
        let src = "\"\"\"Generated.\"\"\"\nfrom m import f\n\n\ndef test_f_1():\n    assert f(1) == 2\n\n\ndef test_f_2():\n    assert f(2) == 3\n";
        let mut t = BTreeMap::new();
        t.insert(
            "test_f_2".to_string(),
            "code_defect: f(2) returned 4".to_string(),
        );
        let out = mark_xfail(src, &t);
        assert!(
            out.starts_with("\"\"\"Generated.\"\"\"\nimport pytest\n"),
            "{out}"
        );
        assert!(out.contains("@pytest.mark.xfail(reason=\"code_defect: f(2) returned 4\", strict=True)\ndef test_f_2():"));
        assert!(!out
            .contains("xfail(reason=\"code_defect: f(2) returned 4\", strict=True)\ndef test_f_1"));
    }
}

#[cfg(test)]
mod prune_tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn only_whole_single_line_assertions_of_the_body_can_go() {
        assert!(is_single_line_assert("    assert f(1) == 2"));
        assert!(!is_single_line_assert("    assert f(\n"));
        assert!(!is_single_line_assert("        assert x"));
        assert!(!is_single_line_assert("    result = f()"));
        assert!(!is_single_line_assert("    assert x == \\"));
    }

    #[test]
    fn a_silent_assertion_goes_only_where_another_of_the_test_noticed_a_mutant() {
        let source = "def test_a():\n    assert f(1) == 2\n    assert g(1) == 3\n\ndef test_b():\n    assert f(2) == 4\n";
        let noticed_a: BTreeSet<u32> = [2].into();
        let noticed_b: BTreeSet<u32> = BTreeSet::new();
        let (pruned, dropped) =
            prune_assertions(source, &[("test_a", &noticed_a), ("test_b", &noticed_b)]).unwrap();
        assert_eq!(
            pruned,
            "def test_a():\n    assert f(1) == 2\n\ndef test_b():\n    assert f(2) == 4\n"
        );
        assert_eq!(dropped, vec!["test_a:3"]);
        // A test none of whose assertions noticed anything keeps them all.
        assert!(prune_assertions(source, &[("test_b", &noticed_b)]).is_none());
    }
}
