//! Fault localisation, offline: for each failing test, the project's lines it runs ranked by how
//! few passing tests run them too (Ochiai, with the one failing test as the failing set), the line
//! its exception was raised on first. Computed from the per-test coverage the mutation analysis
//! traces anyway, so it costs no extra run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::artifacts::{Suspect, TestLocalisation};
use crate::testing::python::mutation::SuiteMutations;

/// Suspects kept per failing test.
const TOP: usize = 5;

/// `suites`: (name, trace) of the project's suite and each layer's; `raised`: run-record test id
/// -> `file:line` its exception was raised at (repository-relative); `rel` makes a traced path
/// repository-relative; `mirror` holds the code to quote.
pub(crate) fn localise(
    suites: &[(String, &SuiteMutations)],
    raised: &BTreeMap<String, String>,
    rel: &dyn Fn(&str) -> String,
    mirror: &Path,
) -> Vec<TestLocalisation> {
    // How many passing tests (of every suite) run each line.
    let mut passing: BTreeMap<(String, u32), usize> = BTreeMap::new();
    for (_, trace) in suites {
        for t in trace.tests.values().filter(|t| t.outcome == "passed") {
            for (file, reach) in &t.reached {
                let file = rel(file);
                for line in &reach.lines {
                    *passing.entry((file.clone(), *line)).or_default() += 1;
                }
            }
        }
    }
    let mut sources: BTreeMap<String, Vec<String>> = BTreeMap::new();
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
                    let code = sources
                        .entry(file.clone())
                        .or_insert_with(|| {
                            std::fs::read_to_string(mirror.join(&file))
                                .map(|s| s.lines().map(str::to_string).collect())
                                .unwrap_or_default()
                        })
                        .get(line as usize - 1)
                        .map(|c| c.trim().to_string())
                        .unwrap_or_default();
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
                    .then(a.location.cmp(&b.location))
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
    use crate::testing::python::mutation::{Reach, TestReach};

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
            Path::new("/nowhere"),
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
