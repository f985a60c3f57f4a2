//! What a change altered: the calls a generator's search ran on HEAD, replayed on a mirror of
//! the base commit and of HEAD by the family's helper, compared. A call whose result or raised
//! exception differs is a behaviour change; one that gives the same on both pins what the change
//! did not alter. Only calls of names both versions have are compared, and only stable results
//! (the same in both of a version's two runs).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// One call of the search: setup statements, then the expression under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// `pricing.total_price`, `Basket.add`.
    pub function: String,
    #[serde(default)]
    pub statements: Vec<String>,
    pub expr: String,
    /// The kept test that asserts it, when it became one.
    #[serde(default)]
    pub test: Option<String>,
    /// The family's own form of the call, handed back to its replay as it came (Rust: the
    /// probe's candidate; Go: the steps and their argument expressions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native: Option<serde_json::Value>,
}

/// The calls of one module, for a replay.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayModule {
    pub module: String,
    pub file: String,
    pub calls: Vec<Call>,
}

/// The helper's request in replay mode.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayRequest {
    pub replay: ReplayBody,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReplayBody {
    pub modules: Vec<ReplayModule>,
    pub call_timeout_s: f64,
    pub seed: u64,
    /// The layer the tests are written for (their file's header).
    pub layer: String,
    /// The framework the replay's test file is written in, where the family has several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
}

/// What one call did in one version.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Replayed {
    pub function: String,
    pub expr: String,
    #[serde(default)]
    pub test: Option<String>,
    /// The test's name in the replay's file.
    #[serde(default)]
    pub name: String,
    /// A test body asserting what happened; None when nothing can be asserted.
    #[serde(default)]
    pub body: Option<Vec<String>>,
    /// `returns 3`, `raises IndexError: string index out of range`.
    #[serde(default)]
    pub shown: String,
    #[serde(default)]
    pub raised: bool,
    #[serde(default)]
    pub stable: bool,
    /// The function does not exist in this version.
    #[serde(default)]
    pub missing: bool,
    /// The called function's docstring or doc comment here.
    #[serde(default)]
    pub doc: Option<String>,
    /// Its first and last line here, when the helper knows them.
    #[serde(default)]
    pub lines: Option<[u32; 2]>,
}

/// One module's replay.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ReplayedModule {
    pub module: String,
    #[serde(default)]
    pub test_file: String,
    /// A test file with one test per replayed call that has a body.
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub replayed: Vec<Replayed>,
    #[serde(default)]
    pub import_error: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ReplayResult {
    #[serde(default)]
    pub modules: Vec<ReplayedModule>,
}

/// How a behaviour change reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The base returned, HEAD raises.
    LikelyRegression,
    /// The function's documentation changed with it.
    LikelyIntended,
    ForReview,
}

impl Verdict {
    pub fn words(self) -> &'static str {
        match self {
            Verdict::LikelyRegression => "likely regression",
            Verdict::LikelyIntended => "likely intended",
            Verdict::ForReview => "for review",
        }
    }
}

/// One behaviour of one function the change altered, with its simplest input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BehaviourChange {
    /// `B1`, `B2`, … in the order of the report; `apply --keep-new B1` names it.
    pub id: String,
    pub module: String,
    pub function: String,
    /// The call, setup first (`label('')`).
    pub input: String,
    /// What it did on the base, and on HEAD.
    pub before: String,
    pub after: String,
    pub verdict: Verdict,
    /// Other inputs that changed the same way.
    pub more_inputs: usize,
    /// The test asserting HEAD's behaviour, and the one asserting the base's, by name in their
    /// files (`behaviour/new/…`, `behaviour/old/…`).
    pub new_test: String,
    pub old_test: String,
    #[serde(default)]
    pub new_body: Vec<String>,
    #[serde(default)]
    pub old_body: Vec<String>,
    /// The two tests' files (session-relative), one test each, for `apply --keep-new/--keep-old`.
    #[serde(default)]
    pub new_file: String,
    #[serde(default)]
    pub old_file: String,
    /// The function's lines on HEAD, when the helper knew them.
    #[serde(default)]
    pub lines: Option<[u32; 2]>,
    /// The hunks of the change's diff that go through the function.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hunk: String,
}

/// One module's comparison.
#[derive(Debug, Default)]
pub struct Compared {
    pub changes: Vec<BehaviourChange>,
    /// Kept tests of the search whose call behaves the same on both: regression tests.
    pub unchanged_tests: BTreeSet<String>,
    /// Kept tests of the search whose call changed: they leave the ordinary tests, the user
    /// chooses between the new and the old assertion.
    pub changed_tests: BTreeSet<String>,
    /// Calls compared (both versions have the name and a stable result).
    pub compared: usize,
}

/// One call as HEAD and the base ran it, with its setup.
type Pair<'a> = (&'a Replayed, &'a Replayed, &'a [String]);

/// `calls` replayed in `head` and in `base` (in the same order) compared. A call whose setup
/// uses a function that changed on its own is that function's change, not its own: a sequence
/// `value = total_price(2, 3); is_free(value)` says nothing new about `is_free`.
pub fn compare(
    module: &str,
    calls: &[Call],
    head: &ReplayedModule,
    base: &ReplayedModule,
) -> Compared {
    let mut out = Compared::default();
    // Function -> its changed calls (with their setup), in call order.
    let mut groups: BTreeMap<String, Vec<Pair>> = BTreeMap::new();
    let no_setup: Vec<String> = Vec::new();
    for (i, (h, b)) in head.replayed.iter().zip(&base.replayed).enumerate() {
        if h.expr != b.expr || h.missing || b.missing || !h.stable || !b.stable {
            continue;
        }
        let setup = calls
            .get(i)
            .filter(|c| c.expr == h.expr)
            .map_or(&no_setup, |c| &c.statements);
        let (Some(after), Some(before)) = (&h.body, &b.body) else {
            continue;
        };
        out.compared += 1;
        if after == before {
            out.unchanged_tests.extend(h.test.iter().cloned());
            continue;
        }
        out.changed_tests.extend(h.test.iter().cloned());
        groups
            .entry(h.function.clone())
            .or_default()
            .push((h, b, setup.as_slice()));
    }
    // The functions whose own calls (no setup) changed, by the name a statement calls them.
    let changed_alone: BTreeSet<String> = groups
        .iter()
        .filter(|(_, calls)| calls.iter().any(|(_, _, setup)| setup.is_empty()))
        .map(|(f, _)| short_name(f).to_string())
        .collect();
    let explained = explained_by_others(&groups);
    for (function, examples) in groups {
        if explained.contains(&function) {
            continue;
        }
        let own: Vec<Pair> = examples
            .into_iter()
            .filter(|(_, _, setup)| {
                !setup.iter().any(|s| {
                    changed_alone
                        .iter()
                        .any(|f| s.contains(&format!("{f}(")) || s.contains(&format!(".{f}(")))
                })
            })
            .collect();
        // One behaviour change per function: the way most of its calls changed (a value for
        // another, a value for an exception, …), shown with that way's shortest input.
        let mut ways: BTreeMap<(bool, bool), Vec<Pair>> = BTreeMap::new();
        for &(h, b, setup) in &own {
            ways.entry((b.raised, h.raised))
                .or_default()
                .push((h, b, setup));
        }
        let Some(((raised_before, raised_after), main)) =
            ways.into_iter().max_by_key(|(_, calls)| calls.len())
        else {
            continue;
        };
        let input = |h: &Replayed, setup: &[String]| {
            let mut parts = setup.to_vec();
            parts.push(h.expr.clone());
            parts.join("; ")
        };
        let Some(&(h, b, setup)) = main.iter().min_by_key(|(h, _, s)| input(h, s).len()) else {
            continue;
        };
        let examples = own;
        let verdict = if !raised_before && raised_after {
            Verdict::LikelyRegression
        } else if h.doc != b.doc {
            Verdict::LikelyIntended
        } else {
            Verdict::ForReview
        };
        out.changes.push(BehaviourChange {
            id: String::new(),
            module: module.to_string(),
            function,
            input: input(h, setup),
            before: b.shown.clone(),
            after: h.shown.clone(),
            verdict,
            more_inputs: examples.len() - 1,
            new_test: h.name.clone(),
            old_test: b.name.clone(),
            new_body: h.body.clone().unwrap_or_default(),
            old_body: b.body.clone().unwrap_or_default(),
            new_file: String::new(),
            old_file: String::new(),
            lines: h.lines,
            hunk: String::new(),
        });
    }
    out
}

/// The functions whose every changed call is another function's change seen through its
/// result: `NewVersion(x)` shows `(1.2.3+b5, nil)` through `String()`, and `String()` alone went
/// from `"1.2.3+b5"` to `"1.2.3"`. Each such call's before, with that other change's before put
/// for its after, is its after; the other change's text is strictly shorter, so two functions
/// never explain each other away.
fn explained_by_others(groups: &BTreeMap<String, Vec<Pair>>) -> BTreeSet<String> {
    let value = |shown: &str| {
        let v = shown.strip_prefix("returns ").unwrap_or(shown).to_string();
        let bare = ['"', '\'', '`']
            .iter()
            .find_map(|q| v.strip_prefix(*q)?.strip_suffix(*q).map(str::to_string));
        [Some(v), bare].into_iter().flatten().collect::<Vec<_>>()
    };
    // Function -> the (before, after) texts of its changed values, in every spelling, with the
    // length of the value as shown.
    let pairs: BTreeMap<&str, Vec<(usize, String, String)>> = groups
        .iter()
        .map(|(f, calls)| {
            let texts = calls
                .iter()
                .filter(|(h, b, _)| !h.raised && !b.raised)
                .flat_map(|(h, b, _)| {
                    let shown = value(&b.shown)[0].len();
                    value(&b.shown)
                        .into_iter()
                        .zip(value(&h.shown))
                        .map(move |(before, after)| (shown, before, after))
                })
                .filter(|(_, before, _)| before.chars().count() >= 3)
                .collect();
            (f.as_str(), texts)
        })
        .collect();
    groups
        .iter()
        .filter(|(f, calls)| {
            calls.iter().all(|(h, b, _)| {
                pairs.iter().filter(|(g, _)| *g != f).any(|(_, texts)| {
                    let own = b.shown.strip_prefix("returns ").unwrap_or(&b.shown);
                    texts.iter().any(|(shown, before, after)| {
                        own.len() > *shown
                            && own.contains(before.as_str())
                            && b.shown.replace(before.as_str(), after) == h.shown
                    })
                })
            })
        })
        .map(|(f, _)| f.clone())
        .collect()
}

/// A function's own name: `pricing.total_price`, `pricing::Basket::add` -> `total_price`,
/// `add`.
pub fn short_name(function: &str) -> &str {
    function
        .rsplit(['.', ':'])
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(function)
}

/// The session's record of what the change altered (`behaviour/changes.json`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BehaviourReport {
    /// The commit compared against.
    pub base: String,
    pub changes: Vec<BehaviourChange>,
    /// Calls compared, and how many kept tests pin behaviour the change did not alter.
    pub compared: usize,
    pub unchanged_tests: usize,
    /// Wall time of the comparisons (the base laid out, both replays), over every layer.
    #[serde(default)]
    pub seconds: f64,
    /// Why the comparison did not run or left something out.
    #[serde(default)]
    pub problems: Vec<String>,
    /// Modules the change added (their files are not on the base): nothing to compare.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
}

impl BehaviourReport {
    /// The session's record, when it compared its change with the base.
    pub fn load(session: &std::path::Path) -> Option<BehaviourReport> {
        crate::util::read_json(&session.join(REPORT_FILE)).ok()
    }

    /// `Your change altered 2 behaviours in 2 functions`.
    pub fn headline(&self) -> String {
        let functions: BTreeSet<&str> = self.changes.iter().map(|c| c.function.as_str()).collect();
        let n = self.changes.len();
        format!(
            "Your change altered {n} behaviour{} in {} function{}",
            if n == 1 { "" } else { "s" },
            functions.len(),
            if functions.len() == 1 { "" } else { "s" }
        )
    }

    /// One line per change: `B1 pricing.label: label('') '' → raises IndexError (likely regression)`.
    pub fn lines(&self) -> Vec<String> {
        self.changes
            .iter()
            .map(|c| {
                format!(
                    "{} {}: {}: {} → {} ({})",
                    c.id,
                    c.function,
                    c.input,
                    c.before,
                    c.after,
                    c.verdict.words()
                )
            })
            .collect()
    }

    /// Numbers the changes in report order: regressions first, then by function.
    pub fn number(&mut self) {
        self.changes
            .sort_by(|a, b| (a.verdict, &a.function).cmp(&(b.verdict, &b.function)));
        for (i, c) in self.changes.iter_mut().enumerate() {
            c.id = format!("B{}", i + 1);
        }
    }
}

/// The lines a unified diff (`-U0`) adds or modifies, in the new file's numbering; where a hunk
/// only removes lines, the line after the removal.
pub fn added_lines(diff: &str) -> Vec<u32> {
    let mut out = std::collections::BTreeSet::new();
    for line in diff.lines() {
        let Some(rest) = line.strip_prefix("@@ ") else {
            continue;
        };
        let Some(new) = rest.split(' ').find_map(|w| w.strip_prefix('+')) else {
            continue;
        };
        let (start, count) = match new.split_once(',') {
            Some((s, c)) => (s.parse().unwrap_or(0), c.parse().unwrap_or(1)),
            None => (new.parse().unwrap_or(0), 1),
        };
        if count == 0 {
            out.insert(start + 1);
        }
        out.extend(start..start + count);
    }
    out.remove(&0);
    out.into_iter().collect()
}

/// The hunks of a one-file unified diff that go through `function` (short name): those whose new
/// lines meet `lines` when known, else those that name it (git puts the enclosing function in a
/// hunk's header). At most `max` lines in all.
pub fn hunks_through(diff: &str, function: &str, lines: Option<[u32; 2]>, max: usize) -> String {
    let mut hunks: Vec<Vec<&str>> = Vec::new();
    for line in diff.lines() {
        if line.starts_with("@@ ") {
            hunks.push(vec![line]);
        } else if let Some(h) = hunks.last_mut() {
            h.push(line);
        }
    }
    let call = format!("{function}(");
    let through = |h: &Vec<&str>| match lines {
        Some([first, last]) => {
            added_lines(h[0]).iter().any(|l| (first..=last).contains(l))
                || new_range(h[0]).is_some_and(|(s, n)| s <= last && s + n.max(1) > first)
        }
        None => h.iter().any(|l| l.contains(&call)),
    };
    let kept: Vec<&str> = hunks
        .iter()
        .filter(|h| through(h))
        .flatten()
        .copied()
        .take(max)
        .collect();
    kept.join("\n")
}

/// A hunk header's new range: (first line, count).
fn new_range(header: &str) -> Option<(u32, u32)> {
    let new = header.split(' ').find_map(|w| w.strip_prefix('+'))?;
    Some(match new.split_once(',') {
        Some((s, c)) => (s.parse().ok()?, c.parse().ok()?),
        None => (new.parse().ok()?, 1),
    })
}

/// [`added_lines`] of each file of a unified diff (`+++ b/<path>` names it).
pub fn added_lines_by_file(diff: &str) -> BTreeMap<String, Vec<u32>> {
    let mut out = BTreeMap::new();
    let mut file: Option<&str> = None;
    let mut hunks = String::new();
    let mut flush = |file: Option<&str>, hunks: &mut String| {
        if let Some(f) = file {
            let lines = added_lines(hunks);
            if !lines.is_empty() {
                out.insert(f.to_string(), lines);
            }
        }
        hunks.clear();
    };
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            flush(file, &mut hunks);
            file = path.strip_prefix("b/").filter(|_| path != "/dev/null");
        } else if line.starts_with("@@ ") {
            hunks.push_str(line);
            hunks.push('\n');
        }
    }
    flush(file, &mut hunks);
    out
}

/// Where a session keeps what its change altered.
pub const REPORT_FILE: &str = "behaviour/changes.json";

#[cfg(test)]
mod tests {
    use super::*;

    fn call(expr: &str, body: &str, shown: &str, raised: bool, doc: &str) -> Replayed {
        Replayed {
            function: format!("pricing.{}", expr.split('(').next().unwrap()),
            expr: expr.into(),
            test: Some(format!("test_{expr}")),
            name: format!("test_{expr}"),
            body: Some(vec![body.into()]),
            shown: shown.into(),
            raised,
            stable: true,
            missing: false,
            doc: Some(doc.into()),
            lines: None,
        }
    }

    #[test]
    fn a_change_seen_only_through_another_functions_result_is_that_functions() {
        let module = |calls: &[(&str, &str, &str)]| ReplayedModule {
            module: "version".into(),
            replayed: calls
                .iter()
                .map(|(expr, body, shown)| call(expr, body, shown, false, "d"))
                .collect(),
            ..ReplayedModule::default()
        };
        let head = module(&[
            ("parse(x)", "got == (1.2.3, nil)", "returns (1.2.3, nil)"),
            ("string(x)", "got == 1.2.3", "returns \"1.2.3\""),
            ("same(x)", "got == '1.2.3'", "returns \"1.2.3\""),
        ]);
        let base = module(&[
            (
                "parse(x)",
                "got == (1.2.3+b5, nil)",
                "returns (1.2.3+b5, nil)",
            ),
            ("string(x)", "got == 1.2.3+b5", "returns \"1.2.3+b5\""),
            ("same(x)", "got == '1.2.3+b5'", "returns \"1.2.3+b5\""),
        ]);
        let out = compare("version", &[], &head, &base);
        let functions: Vec<&str> = out.changes.iter().map(|c| c.function.as_str()).collect();
        // `parse` shows `string`'s change; `same` returns what `string` does: its own.
        assert_eq!(functions, ["pricing.same", "pricing.string"]);
    }

    #[test]
    fn a_diffs_added_and_modified_lines_are_read_in_the_new_numbering() {
        let diff = "diff --git a/p.py b/p.py\n--- a/p.py\n+++ b/p.py\n\
                    @@ -5 +5 @@ def f():\n-    return 1\n+    return 2\n\
                    @@ -9,2 +9,3 @@\n+a\n+b\n+c\n\
                    @@ -20,3 +21,0 @@\n-x\n";
        assert_eq!(added_lines(diff), [5, 9, 10, 11, 22]);
    }

    #[test]
    fn the_hunks_through_a_function_are_found_by_its_lines_or_its_name() {
        let diff = "--- a/p.py\n+++ b/p.py\n\
                    @@ -4,3 +4,3 @@ def total(q, u):\n     \"\"\"Price.\"\"\"\n-    return q * u\n+    return q * u + 1\n\
                    @@ -15,2 +15,3 @@ def label(name):\n-    return name.strip()\n+    name = name.strip()\n+    return name[0]\n";
        let label = hunks_through(diff, "label", Some([14, 17]), 40);
        assert!(
            label.starts_with("@@ -15,2 +15,3 @@ def label(name):"),
            "{label}"
        );
        assert!(!label.contains("q * u"), "{label}");
        let by_name = hunks_through(diff, "total", None, 40);
        assert!(by_name.contains("+    return q * u + 1") && !by_name.contains("name[0]"));
        assert_eq!(
            hunks_through(diff, "label", Some([14, 17]), 2)
                .lines()
                .count(),
            2
        );
    }

    #[test]
    fn a_sequence_whose_setup_calls_a_changed_function_is_that_functions_change() {
        let head = ReplayedModule {
            module: "pricing".into(),
            replayed: vec![
                call(
                    "total(2, 3)",
                    "assert total(2, 3) == 7",
                    "returns 7",
                    false,
                    "d",
                ),
                call(
                    "free(v)",
                    "assert free(v) is False",
                    "returns False",
                    false,
                    "d",
                ),
                call(
                    "free(w)",
                    "assert free(w) is True",
                    "returns True",
                    false,
                    "d",
                ),
            ],
            ..Default::default()
        };
        let mut base = head.clone();
        base.replayed[0] = call(
            "total(2, 3)",
            "assert total(2, 3) == 6",
            "returns 6",
            false,
            "d",
        );
        base.replayed[1] = call(
            "free(v)",
            "assert free(v) is True",
            "returns True",
            false,
            "d",
        );
        base.replayed[2] = call(
            "free(w)",
            "assert free(w) is False",
            "returns False",
            false,
            "d",
        );
        let at = |expr: &str, setup: &[&str]| Call {
            function: String::new(),
            statements: setup.iter().map(|s| s.to_string()).collect(),
            expr: expr.into(),
            test: None,
            native: None,
        };
        let calls = [
            at("total(2, 3)", &[]),
            at("free(v)", &["v = total(0, 0)"]),
            at("free(w)", &["w = 0"]),
        ];
        let out = compare("pricing", &calls, &head, &base);
        let functions: Vec<&str> = out.changes.iter().map(|c| c.function.as_str()).collect();
        assert_eq!(functions, ["pricing.free", "pricing.total"]);
        assert_eq!(out.changes[0].input, "w = 0; free(w)");
        assert_eq!(out.changed_tests.len(), 3);
    }

    #[test]
    fn changed_results_are_grouped_per_function_and_judged() {
        let head = ReplayedModule {
            module: "pricing".into(),
            replayed: vec![
                call(
                    "total(2, 3)",
                    "assert total(2, 3) == 7",
                    "returns 7",
                    false,
                    "plus 1",
                ),
                call(
                    "total(1, 1)",
                    "assert total(1, 1) == 2",
                    "returns 2",
                    false,
                    "plus 1",
                ),
                call(
                    "label('')",
                    "with pytest.raises(IndexError):",
                    "raises IndexError",
                    true,
                    "d",
                ),
                call(
                    "label('a')",
                    "assert label('a') == 'A'",
                    "returns 'A'",
                    false,
                    "d",
                ),
                call("fee(1)", "assert fee(1) == 2", "returns 2", false, "d"),
            ],
            ..Default::default()
        };
        let mut base = head.clone();
        base.replayed[0] = call(
            "total(2, 3)",
            "assert total(2, 3) == 6",
            "returns 6",
            false,
            "",
        );
        base.replayed[1] = call(
            "total(1, 1)",
            "assert total(1, 1) == 1",
            "returns 1",
            false,
            "",
        );
        base.replayed[2] = call(
            "label('')",
            "assert label('') == ''",
            "returns ''",
            false,
            "d",
        );
        base.replayed[4].missing = true;
        let out = compare("pricing", &[], &head, &base);
        assert_eq!(out.compared, 4);
        assert_eq!(out.changes.len(), 2, "{:?}", out.changes);
        let label = out
            .changes
            .iter()
            .find(|c| c.function == "pricing.label")
            .unwrap();
        assert_eq!(label.verdict, Verdict::LikelyRegression);
        assert_eq!(
            (label.before.as_str(), label.after.as_str()),
            ("returns ''", "raises IndexError")
        );
        let total = out
            .changes
            .iter()
            .find(|c| c.function == "pricing.total")
            .unwrap();
        assert_eq!(total.verdict, Verdict::LikelyIntended);
        assert_eq!(
            (total.input.as_str(), total.more_inputs),
            ("total(2, 3)", 1)
        );
        assert_eq!(out.unchanged_tests.len(), 1);
        assert_eq!(out.changed_tests.len(), 3);
        let mut report = BehaviourReport {
            changes: out.changes,
            ..Default::default()
        };
        report.number();
        assert_eq!(report.changes[0].function, "pricing.label");
        assert_eq!(
            report.headline(),
            "Your change altered 2 behaviours in 2 functions"
        );
    }
}
