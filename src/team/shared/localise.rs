//! Fault localisation, offline: for each failing test, the project's lines it runs ranked by how
//! few passing tests run them too (Ochiai, with the one failing test as the failing set), the line
//! its exception was raised on first. Computed from the per-test coverage the mutation analysis
//! traces anyway, so it costs no extra run. In a change-scoped session, a line the change added
//! or modified ranks first among equally suspicious lines: a fault is likeliest where the code
//! just changed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::artifacts::{Suspect, TestLocalisation};
use crate::family::suites::SuiteMutations;

/// Suspects kept per failing test.
const TOP: usize = 5;

/// `suites`: (name, trace) of the project's suite and each layer's; `raised`: run-record test id
/// -> `file:line` its exception was raised at (repository-relative); `rel` makes a traced path
/// repository-relative; `mirror` holds the code to quote.
pub(crate) fn localise(
    suites: &[(String, &SuiteMutations)],
    raised: &BTreeMap<String, String>,
    rel: &dyn Fn(&str) -> String,
    (mirror, changed): (&Path, &BTreeSet<String>),
) -> Vec<TestLocalisation> {
    // How many passing tests (of every suite) run each line.
    let passing = passing_counts(suites.iter().map(|(_, t)| *t), rel);
    let mut sources = SourceLines::new(mirror);
    let mut out = Vec::new();
    for (suite, trace) in suites {
        for (id, t) in &trace.tests {
            if !matches!(t.outcome.as_str(), "failed" | "xfailed") {
                continue;
            }
            let test = record_id(id);
            let frame = raised.get(&test);
            let mut lines: BTreeSet<(String, u32)> = BTreeSet::new();
            for (file, reach) in &t.reached {
                let file = rel(file);
                lines.extend(reach.lines.iter().map(|l| (file.clone(), *l)));
            }
            let mut suspects: Vec<Suspect> = lines
                .into_iter()
                .map(|(file, line)| {
                    let ep = passing.get(&(file.clone(), line)).copied().unwrap_or(0);
                    let location = format!("{file}:{line}");
                    let code = sources.line(&file, line);
                    Suspect {
                        raised_here: frame == Some(&location),
                        score: round3(1.0 / ((1 + ep) as f64).sqrt()),
                        passing: ep,
                        location,
                        code,
                    }
                })
                .collect();
            suspects.sort_by(|a, b| {
                b.raised_here
                    .cmp(&a.raised_here)
                    .then(b.score.total_cmp(&a.score))
                    .then(
                        changed
                            .contains(&b.location)
                            .cmp(&changed.contains(&a.location)),
                    )
                    .then(by_place(&a.location, &b.location))
            });
            suspects.truncate(TOP);
            if !suspects.is_empty() {
                out.push(TestLocalisation {
                    test,
                    suite: suite.clone(),
                    suspects,
                });
            }
        }
    }
    out
}

/// Failing tests that point at the same file, ranked together: with several faults in a
/// project, one Ochiai ranking over every failure buries the fault fewer tests show. Each
/// cluster is the failing tests whose own top suspect is in one file; its lines are ranked by
/// Ochiai over the cluster's tests (failing) and every passing test, a line in a cluster test's
/// stack first among equals.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FaultCluster {
    pub file: String,
    pub tests: Vec<String>,
    pub suspects: Vec<Suspect>,
    /// Locations among the suspects that are frames of a cluster test's traceback.
    pub in_stack: BTreeSet<String>,
}

/// `per_test` from [`localise`] over `trace`; `stacks`: test (run-record id) -> the project
/// frames (`file:line`) of its traceback.
pub(crate) fn clusters(
    per_test: &[TestLocalisation],
    trace: &SuiteMutations,
    stacks: &BTreeMap<String, Vec<String>>,
    rel: &dyn Fn(&str) -> String,
    (mirror, changed): (&Path, &BTreeSet<String>),
) -> Vec<FaultCluster> {
    let mut groups: BTreeMap<String, Vec<&TestLocalisation>> = BTreeMap::new();
    for t in per_test {
        if let Some(top) = t.suspects.first() {
            let file = top
                .location
                .rsplit_once(':')
                .map_or(top.location.as_str(), |(f, _)| f);
            groups.entry(file.to_string()).or_default().push(t);
        }
    }
    let lines_of = |t: &crate::family::suites::TestReach| -> BTreeSet<(String, u32)> {
        t.reached
            .iter()
            .flat_map(|(file, reach)| {
                let file = rel(file);
                reach.lines.iter().map(move |l| (file.clone(), *l))
            })
            .collect()
    };
    let passing = passing_counts(std::iter::once(trace), rel);
    let failing: BTreeMap<String, BTreeSet<(String, u32)>> = trace
        .tests
        .iter()
        .filter(|(_, t)| matches!(t.outcome.as_str(), "failed" | "xfailed"))
        .map(|(id, t)| (record_id(id), lines_of(t)))
        .collect();
    let mut sources = SourceLines::new(mirror);
    let mut out = Vec::new();
    for (file, members) in groups {
        let tests: Vec<String> = members.iter().map(|t| t.test.clone()).collect();
        let f = tests.len() as f64;
        let mut ef: BTreeMap<(String, u32), usize> = BTreeMap::new();
        for t in &tests {
            for key in failing.get(t).into_iter().flatten() {
                *ef.entry(key.clone()).or_default() += 1;
            }
        }
        let in_stack: BTreeSet<String> = tests
            .iter()
            .flat_map(|t| stacks.get(t).into_iter().flatten().cloned())
            .collect();
        let raised: BTreeSet<String> = members
            .iter()
            .flat_map(|t| t.suspects.iter().filter(|s| s.raised_here))
            .map(|s| s.location.clone())
            .collect();
        // The words the failures say (their reports and the tests' names): among lines the
        // spectrum cannot tell apart, the one whose code names what failed comes first.
        let said: BTreeSet<String> = trace
            .tests
            .iter()
            .filter(|(id, _)| tests.contains(&record_id(id)))
            .flat_map(|(id, t)| {
                let mut w = words(id);
                w.extend(t.detail.as_deref().map(words).unwrap_or_default());
                w
            })
            .collect();
        let named = |s: &Suspect| words(&s.code).intersection(&said).count();
        let mut suspects: Vec<Suspect> = ef
            .into_iter()
            .map(|((file, line), ef)| {
                let ep = passing.get(&(file.clone(), line)).copied().unwrap_or(0);
                let location = format!("{file}:{line}");
                let code = sources.line(&file, line);
                Suspect {
                    raised_here: raised.contains(&location),
                    score: round3(ef as f64 / (f * (ef + ep) as f64).sqrt()),
                    passing: ep,
                    location,
                    code,
                }
            })
            .collect();
        suspects.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(
                    changed
                        .contains(&b.location)
                        .cmp(&changed.contains(&a.location)),
                )
                .then(
                    in_stack
                        .contains(&b.location)
                        .cmp(&in_stack.contains(&a.location)),
                )
                .then(named(b).cmp(&named(a)))
                .then(by_place(&a.location, &b.location))
        });
        suspects.truncate(TOP);
        let in_stack = suspects
            .iter()
            .filter(|s| in_stack.contains(&s.location))
            .map(|s| s.location.clone())
            .collect();
        out.push(FaultCluster {
            file,
            tests,
            suspects,
            in_stack,
        });
    }
    out
}

/// The lines the session's change added or modified against its base, per file
/// (repository-relative, HEAD's numbering). Empty when the session is not change-scoped.
pub(crate) fn changed_lines(
    session: &crate::session::SessionDir,
    repo: &Path,
) -> BTreeMap<String, Vec<u32>> {
    let Ok(scope) = crate::session::scope::load_scope(session) else {
        return BTreeMap::new();
    };
    let Some(base) = scope
        .base_commit
        .filter(|_| scope.is_git && !scope.whole_project)
    else {
        return BTreeMap::new();
    };
    crate::git::changed_lines_diff(repo, &base, None)
        .map(|diff| crate::gen::behaviour::added_lines_by_file(&diff))
        .unwrap_or_default()
}

/// [`changed_lines`] as `file:line` locations.
pub(crate) fn changed_locations(
    session: &crate::session::SessionDir,
    repo: &Path,
) -> BTreeSet<String> {
    changed_lines(session, repo)
        .into_iter()
        .flat_map(|(file, lines)| lines.into_iter().map(move |l| format!("{file}:{l}")))
        .collect()
}

/// `file:line` in file order, then line order (9 before 10).
fn by_place(a: &str, b: &str) -> std::cmp::Ordering {
    let split = |l: &str| -> (String, u32) {
        let (file, line) = l.rsplit_once(':').unwrap_or((l, "0"));
        (file.to_string(), line.parse().unwrap_or(0))
    };
    split(a).cmp(&split(b))
}

/// Words that do not tell one failure or line from another.
const COMMON_WORDS: [&str; 16] = [
    "test", "tests", "func", "function", "return", "self", "true", "false", "none", "null",
    "expected", "want", "assert", "error", "with", "from",
];

/// The identifiers of `text` as lower-case words of four letters or more, camelCase and
/// snake_case split (`TestRandomUUID` gives `random` and `uuid`).
fn words(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for token in text.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut word = String::new();
        let chars: Vec<char> = token.chars().collect();
        for (i, c) in chars.iter().enumerate() {
            let starts_word = c.is_ascii_uppercase()
                && i > 0
                && (chars[i - 1].is_ascii_lowercase()
                    || chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase()));
            if starts_word {
                out.insert(std::mem::take(&mut word));
            }
            word.push(c.to_ascii_lowercase());
        }
        out.insert(word);
    }
    out.retain(|w| {
        w.len() >= 4
            && !w.chars().all(|c| c.is_ascii_digit())
            && !COMMON_WORDS.contains(&w.as_str())
    });
    out
}

/// How many passing tests of `traces` run each (repository-relative file, line).
fn passing_counts<'a>(
    traces: impl Iterator<Item = &'a SuiteMutations>,
    rel: &dyn Fn(&str) -> String,
) -> BTreeMap<(String, u32), usize> {
    let mut passing: BTreeMap<(String, u32), usize> = BTreeMap::new();
    for trace in traces {
        for t in trace.tests.values().filter(|t| t.outcome == "passed") {
            for (file, reach) in &t.reached {
                let file = rel(file);
                for line in &reach.lines {
                    *passing.entry((file.clone(), *line)).or_default() += 1;
                }
            }
        }
    }
    passing
}

/// The code of a line, each file read once, for quoting suspects.
struct SourceLines<'a> {
    root: &'a Path,
    files: BTreeMap<String, Vec<String>>,
}

impl<'a> SourceLines<'a> {
    fn new(root: &'a Path) -> Self {
        SourceLines {
            root,
            files: BTreeMap::new(),
        }
    }

    fn line(&mut self, file: &str, line: u32) -> String {
        let root = self.root;
        self.files
            .entry(file.to_string())
            .or_insert_with(|| {
                std::fs::read_to_string(root.join(file))
                    .map(|s| s.lines().map(str::to_string).collect())
                    .unwrap_or_default()
            })
            .get((line as usize).wrapping_sub(1))
            .map(|c| c.trim().to_string())
            .unwrap_or_default()
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A pytest node id as the run records name the test (JUnit's classname and name):
/// `tests/test_ops.py::TestA::test_b` -> `tests.test_ops::TestA::test_b`.
pub(crate) fn record_id(node_id: &str) -> String {
    match node_id.split_once("::") {
        Some((file, rest)) => format!("{}::{rest}", file.trim_end_matches(".py").replace('/', ".")),
        None => node_id.to_string(),
    }
}

/// The markdown of `analysis/fault-localisation.md`.
pub(crate) fn markdown(found: &[TestLocalisation]) -> String {
    let mut md = String::from(
        "# Fault Localisation\n\nFor each failing test, the lines of the project it runs, the most suspicious first: the line its exception was raised on, then the lines the fewest passing tests run (Ochiai over per-test coverage).\n\n",
    );
    for t in found {
        md.push_str(&format!("## {} ({})\n\n", t.test, t.suite));
        md.push_str("| Line | Score | Passing tests that run it | Code |\n|---|---|---|---|\n");
        for s in &t.suspects {
            let raised = if s.raised_here { " (raised here)" } else { "" };
            md.push_str(&format!(
                "| {}{raised} | {:.3} | {} | `{}` |\n",
                s.location,
                s.score,
                s.passing,
                s.code.replace('|', "\\|").replace('`', "'")
            ));
        }
        md.push('\n');
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::suites::{Reach, TestReach};
    use std::collections::BTreeMap;

    fn reach(lines: &[u32]) -> BTreeMap<String, Reach> {
        [(
            "/m/pkg/text.py".to_string(),
            Reach {
                lines: lines.to_vec(),
                arcs: Vec::new(),
            },
        )]
        .into()
    }

    #[test]
    fn the_raising_line_comes_first_then_the_lines_no_passing_test_runs() {
        let mut trace = SuiteMutations::default();
        let test = |outcome: &str, lines: &[u32]| TestReach {
            outcome: outcome.into(),
            reached: reach(lines),
            detail: None,
        };
        trace
            .tests
            .insert("t.py::test_ok".into(), test("passed", &[1, 2]));
        trace
            .tests
            .insert("t.py::test_ok2".into(), test("passed", &[1, 2, 3]));
        trace
            .tests
            .insert("t.py::test_bad".into(), test("failed", &[1, 2, 4, 5]));
        let raised = [("t::test_bad".to_string(), "pkg/text.py:5".to_string())].into();
        let rel = |f: &str| f.trim_start_matches("/m/").to_string();
        let found = localise(
            &[("L1-unit".into(), &trace)],
            &raised,
            &rel,
            (Path::new("/nowhere"), &BTreeSet::new()),
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].test, "t::test_bad");
        let order: Vec<&str> = found[0]
            .suspects
            .iter()
            .map(|s| s.location.as_str())
            .collect();
        assert_eq!(
            order,
            vec![
                "pkg/text.py:5",
                "pkg/text.py:4",
                "pkg/text.py:1",
                "pkg/text.py:2"
            ]
        );
        assert_eq!(found[0].suspects[1].score, 1.0);
        assert_eq!(found[0].suspects[2].passing, 2);
        // Lines 1 and 2 are equally suspicious; the one the change touched comes first.
        let changed = BTreeSet::from(["pkg/text.py:2".to_string()]);
        let found = localise(
            &[("L1-unit".into(), &trace)],
            &raised,
            &rel,
            (Path::new("/nowhere"), &changed),
        );
        let order: Vec<&str> = found[0]
            .suspects
            .iter()
            .map(|s| s.location.as_str())
            .collect();
        assert_eq!(order[2..], ["pkg/text.py:2", "pkg/text.py:1"]);
    }

    #[test]
    fn two_faults_are_ranked_in_their_own_groups() {
        // Two files, a fault in each; one ranking over every failure would put b.py's fault
        // below a.py's lines.
        let at = |file: &str, lines: &[u32]| -> BTreeMap<String, Reach> {
            [(
                format!("/m/{file}"),
                Reach {
                    lines: lines.to_vec(),
                    arcs: Vec::new(),
                },
            )]
            .into()
        };
        let mut trace = SuiteMutations::default();
        let mut add = |id: &str, outcome: &str, reached| {
            trace.tests.insert(
                id.into(),
                TestReach {
                    outcome: outcome.into(),
                    reached,
                    detail: None,
                },
            );
        };
        add("t.py::a1", "failed", at("a.py", &[1, 2]));
        add("t.py::a2", "failed", at("a.py", &[1, 2]));
        add("t.py::a_ok", "passed", at("a.py", &[1]));
        add("t.py::b1", "failed", at("b.py", &[5, 6]));
        add("t.py::b_ok", "passed", at("b.py", &[5]));
        add("t.py::b_ok2", "passed", at("b.py", &[5]));
        let rel = |f: &str| f.trim_start_matches("/m/").to_string();
        let nowhere = (Path::new("/nowhere"), &BTreeSet::new());
        let per_test = localise(&[("s".into(), &trace)], &BTreeMap::new(), &rel, nowhere);
        let stacks: BTreeMap<String, Vec<String>> =
            [("t::b1".to_string(), vec!["b.py:6".to_string()])].into();
        let groups = clusters(&per_test, &trace, &stacks, &rel, nowhere);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].file, "a.py");
        assert_eq!(groups[0].tests, vec!["t::a1", "t::a2"]);
        assert_eq!(groups[0].suspects[0].location, "a.py:2");
        assert_eq!(groups[1].suspects[0].location, "b.py:6");
        assert_eq!(groups[1].suspects[0].score, 1.0);
        assert!(groups[1].in_stack.contains("b.py:6"));
    }

    #[test]
    fn the_words_of_a_failure_are_its_identifiers_split() {
        let w = words("uuid_test.go:456: NewDCEPerson: expected version 2, got VERSION_4");
        assert!(
            w.contains("version") && w.contains("person") && w.contains("uuid"),
            "{w:?}"
        );
        assert!(!w.contains("expected") && !w.contains("456"));
        assert!(words("TestRandomUUID").contains("random"));
        assert!(words("TestRandomUUID").contains("uuid"));
        assert_eq!(by_place("a.go:9", "a.go:10"), std::cmp::Ordering::Less);
    }

    #[test]
    fn node_ids_become_run_record_ids() {
        assert_eq!(
            record_id("tests/test_ops.py::test_add"),
            "tests.test_ops::test_add"
        );
        assert_eq!(
            record_id("test_x.py::TestA::test_b"),
            "test_x::TestA::test_b"
        );
    }
}
