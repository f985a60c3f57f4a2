//! Pynguin's assertion minimization for the languages whose generated tests the built-in
//! generators write one check per statement: in a test with several checks, a check that
//! noticed no mutant, while another check of the test did, goes. Line based, on purpose: it
//! edits only the shapes the generators write, and leaves anything else alone.

use std::collections::BTreeSet;

/// How a language's generated tests are shaped.
pub struct Checks {
    /// Whether `line` opens test `name` (`func TestAdd(t *testing.T) {`, `fn adds() {`,
    /// `test('adds', () => {`).
    pub opens: fn(line: &str, name: &str) -> bool,
    /// The lines `i..=j` of the check that starts at line `i`, when one does.
    pub check_at: fn(lines: &[&str], i: usize) -> Option<usize>,
}

/// `source` without the checks of `noticed`'s tests that noticed nothing (each test with the
/// lines of the file where one of its checks noticed a mutant); the new source and each
/// dropped `test:line` (1-based), or None when nothing goes.
pub fn prune(
    source: &str,
    noticed: &[(&str, &BTreeSet<u32>)],
    checks: &Checks,
) -> Option<(String, Vec<String>)> {
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let trimmed: Vec<&str> = lines.iter().map(|l| l.trim()).collect();
    let mut drop: BTreeSet<usize> = BTreeSet::new();
    let mut dropped = Vec::new();
    for (test, seen) in noticed {
        let Some((start, end)) = body_of(&lines, &trimmed, test, checks) else {
            continue;
        };
        let mut found: Vec<(usize, usize)> = Vec::new();
        let mut i = start + 1;
        while i < end {
            match (checks.check_at)(&trimmed, i).filter(|&j| j < end) {
                Some(j) => {
                    found.push((i, j));
                    i = j + 1;
                }
                None => i += 1,
            }
        }
        let noticing = |&(i, j): &(usize, usize)| (i..=j).any(|k| seen.contains(&(k as u32 + 1)));
        if found.len() < 2 || !found.iter().any(noticing) {
            continue;
        }
        for (i, j) in found.iter().filter(|c| !noticing(c)) {
            drop.extend(*i..=*j);
            dropped.push(format!("{test}:{}", i + 1));
        }
    }
    if dropped.is_empty() {
        return None;
    }
    let kept: String = lines
        .iter()
        .enumerate()
        .filter(|(n, _)| !drop.contains(n))
        .map(|(_, l)| *l)
        .collect();
    Some((kept, dropped))
}

/// The lines that open and close test `name`: its opening line, and the first later line as
/// indented as it that closes a block.
fn body_of(
    lines: &[&str],
    trimmed: &[&str],
    name: &str,
    checks: &Checks,
) -> Option<(usize, usize)> {
    let start = trimmed.iter().position(|l| (checks.opens)(l, name))?;
    let indent = indent_of(lines[start]);
    let end = (start + 1..lines.len())
        .find(|&k| indent_of(lines[k]) == indent && trimmed[k].starts_with('}'))?;
    Some((start, end))
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go_checks() -> Checks {
        Checks {
            opens: |l, name| l.starts_with(&format!("func {name}(")),
            check_at: |lines, i| {
                (lines[i].starts_with("if ")
                    && lines.get(i + 1)?.starts_with("t.Errorf(")
                    && *lines.get(i + 2)? == "}")
                    .then_some(i + 2)
            },
        }
    }

    #[test]
    fn a_check_that_noticed_nothing_goes_when_another_noticed() {
        let source = "func TestA(t *testing.T) {\n\tx := New()\n\tif got := x.Len(); got != 0 {\n\t\tt.Errorf(\"len\")\n\t}\n\tif got := x.Cap(); got != 4 {\n\t\tt.Errorf(\"cap\")\n\t}\n}\n\nfunc TestB(t *testing.T) {\n\tif a != b {\n\t\tt.Errorf(\"one\")\n\t}\n}\n";
        let seen_a: BTreeSet<u32> = [4].into();
        let seen_b: BTreeSet<u32> = [].into();
        let (kept, dropped) = prune(
            source,
            &[("TestA", &seen_a), ("TestB", &seen_b)],
            &go_checks(),
        )
        .unwrap();
        assert_eq!(dropped, vec!["TestA:6"]);
        assert!(kept.contains("x.Len()") && !kept.contains("x.Cap()"));
        assert!(kept.contains("t.Errorf(\"one\")"), "a single check stays");
        // A test none of whose checks noticed anything keeps them all.
        assert!(prune(source, &[("TestA", &seen_b)], &go_checks()).is_none());
    }
}
