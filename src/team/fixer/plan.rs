//! The fix plan of one iteration, the part of the seed's planning agent that code can do with no
//! LLM: each failing test's evidence, the failures grouped by the file they point at, and for
//! each group the lines to change (`modification_points`, file:line with the function and the
//! reason), ranked by Ochiai over per-test coverage with the traceback's frames.

use std::collections::BTreeMap;
use std::path::Path;

use super::suite::SuiteResults;
use crate::artifacts::TestLocalisation;
pub use crate::artifacts::{FixPlan, ModificationPoint, PlannedFix};
use crate::family::suites::SuiteTrace;
use crate::team::shared::localise::{self, FaultCluster};
use crate::testing::classify::{classify, Criticality};
use crate::testing::report::{TestCase, TestStatus};

/// Modification points kept per group.
const POINTS: usize = 3;

/// One failing test's evidence.
#[derive(Debug, Clone)]
pub struct Failure {
    pub id: String,
    pub error: String,
    pub location: Option<String>,
    pub excerpt: String,
    pub criticality: Criticality,
    /// The error and the file it points at: failures alike share it.
    pub signature: String,
}

/// The evidence of every failing test, classified as the executor classifies.
pub fn failures(results: &SuiteResults, trace: &dyn SuiteTrace) -> Vec<Failure> {
    results
        .tests
        .iter()
        .filter(|(_, t)| !t.passed)
        .map(|(id, t)| {
            let file = trace.file_of(id);
            let case = TestCase {
                id: id.clone(),
                name: id.rsplit("::").next().unwrap_or(id).to_string(),
                classname: None,
                file: Some(file),
                line: None,
                status: TestStatus::Failed,
                duration_s: None,
                message: None,
                detail: t.detail.clone(),
            };
            let v = classify(&case, |p| trace.is_test_file(p));
            let pointed = v
                .location
                .as_deref()
                .and_then(|l| l.rsplit_once(':').map(|(f, _)| f.to_string()))
                .unwrap_or_default();
            Failure {
                id: id.clone(),
                signature: format!("{}@{pointed}", v.error),
                error: v.error,
                location: v.location,
                excerpt: v.excerpt,
                criticality: v.criticality,
            }
        })
        .collect()
}

/// The per-test localisation and the groups, from the suite's latest results (traced in
/// `mirror`); the code quoted comes from `code` (the worktree as it is now).
pub fn localise(
    trace_of: &dyn SuiteTrace,
    results: &SuiteResults,
    fails: &[Failure],
    mirror: &Path,
    (code, changed): (&Path, &std::collections::BTreeSet<String>),
) -> (Vec<TestLocalisation>, Vec<FaultCluster>) {
    let trace = results.as_trace(mirror);
    let is_code = |f: &str| trace_of.is_code(f) && inside(code, f).is_some_and(|p| p.is_file());
    let mut raised = BTreeMap::new();
    let mut stacks = BTreeMap::new();
    for f in fails {
        let id = localise::record_id(&f.id);
        if let Some(at) = f
            .location
            .as_deref()
            .filter(|l| is_code(l.rsplit_once(':').map_or(*l, |(file, _)| file)))
        {
            raised.insert(id.clone(), at.to_string());
        }
        if let Some(detail) = results.tests.get(&f.id).and_then(|t| t.detail.as_deref()) {
            let frames: Vec<String> = trace_of
                .frames(detail)
                .into_iter()
                .filter(|at| is_code(at.rsplit_once(':').map_or(at.as_str(), |(f, _)| f)))
                .collect();
            stacks.insert(id, frames);
        }
    }
    let rel = |file: &str| -> String {
        Path::new(file)
            .strip_prefix(mirror)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| file.to_string())
    };
    let per_test = localise::localise(
        &[("fix suite".into(), &trace)],
        &raised,
        &rel,
        (code, changed),
    );
    let groups = localise::clusters(&per_test, &trace, &stacks, &rel, (code, changed));
    (per_test, groups)
}

/// The plan from the groups (the most failing tests first). A group with a stuck test (failing
/// 3+ iterations in a row, `stuck` by node id) gets every ranked line, not the top few: the
/// fixes aimed at the top lines did not reach it.
pub fn plan(
    iteration: u32,
    strategy: &str,
    groups: &[FaultCluster],
    fails: &[Failure],
    stuck: &[String],
    code: &Path,
) -> FixPlan {
    let stuck: Vec<String> = stuck.iter().map(|t| localise::record_id(t)).collect();
    let mut fixes: Vec<PlannedFix> = groups
        .iter()
        .map(|g| {
            let errors: Vec<&str> = fails
                .iter()
                .filter(|f| g.tests.contains(&localise::record_id(&f.id)))
                .map(|f| f.error.as_str())
                .collect();
            let is_stuck = g.tests.iter().any(|t| stuck.contains(t));
            let points = g
                .suspects
                .iter()
                .take(if is_stuck { usize::MAX } else { POINTS })
                .enumerate()
                .map(|(rank, s)| {
                    let (file, line) = s
                        .location
                        .rsplit_once(':')
                        .map(|(f, l)| (f.to_string(), l.parse().unwrap_or(0)))
                        .unwrap_or_default();
                    let mut reason = format!(
                        "ranked {} of the lines these {} failing test(s) run (Ochiai {:.3}; {} passing test(s) run it too)",
                        rank + 1,
                        g.tests.len(),
                        s.score,
                        s.passing
                    );
                    if s.raised_here {
                        reason.push_str("; the exception was raised here");
                    } else if g.in_stack.contains(&s.location) {
                        reason.push_str("; a frame of the failure's traceback");
                    }
                    ModificationPoint {
                        function: inside(code, &file)
                            .and_then(|path| enclosing_function(&path, line)),
                        file,
                        line,
                        code: s.code.clone(),
                        score: s.score,
                        reason,
                    }
                })
                .collect();
            let mut distinct: Vec<&str> = errors.clone();
            distinct.sort();
            distinct.dedup();
            PlannedFix {
                file: g.file.clone(),
                tests: g.tests.clone(),
                root_cause: format!(
                    "{} failing test(s) point at {} ({}){}",
                    g.tests.len(),
                    g.file,
                    distinct.join(", "),
                    if is_stuck {
                        "; stuck: earlier fixes did not reach these, every ranked line is listed"
                    } else {
                        ""
                    }
                ),
                modification_points: points,
            }
        })
        .collect();
    fixes.sort_by(|a, b| b.tests.len().cmp(&a.tests.len()).then(a.file.cmp(&b.file)));
    let confidence_score = fixes
        .iter()
        .filter_map(|f| f.modification_points.first())
        .map(|p| p.score)
        .fold(0.0, f64::max);
    FixPlan {
        iteration,
        strategy: strategy.to_string(),
        fixes,
        confidence_score,
    }
}

/// `code/rel` when `rel` is a relative path of plain names that stays inside `code` (symlinks
/// resolved): test ids and traceback frames come from the project's code and name what they like.
pub fn inside(code: &Path, rel: &str) -> Option<std::path::PathBuf> {
    let rel = Path::new(rel);
    if rel.as_os_str().is_empty()
        || !rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
    {
        return None;
    }
    let root = code.canonicalize().ok()?;
    let real = code.join(rel).canonicalize().ok()?;
    real.starts_with(&root).then_some(real)
}

/// The name of the Python function whose body holds `line`.
fn enclosing_function(file: &Path, line: u32) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let at = (line as usize)
        .checked_sub(1)
        .filter(|&i| i < lines.len())?;
    let indent = |l: &str| l.len() - l.trim_start().len();
    let name = |t: &str| {
        t.strip_prefix("def ")
            .or_else(|| t.strip_prefix("async def "))
            .and_then(|rest| rest.split('(').next())
            .map(|n| n.trim().to_string())
    };
    if let Some(n) = name(lines[at].trim_start()) {
        return Some(n);
    }
    let mut limit = indent(lines[at]);
    for l in lines[..at].iter().rev() {
        let t = l.trim_start();
        if t.is_empty() || t.starts_with('#') || indent(l) >= limit {
            continue;
        }
        if let Some(n) = name(t) {
            return Some(n);
        }
        limit = indent(l);
        if limit == 0 {
            return None;
        }
    }
    None
}

/// `.process/iteration-N-analysis.md`: the evidence, the localisation and the plan.
pub fn markdown(
    plan: &FixPlan,
    fails: &[Failure],
    per_test: &[TestLocalisation],
    note: &str,
) -> String {
    let mut md = format!(
        "# Iteration {} analysis\n\nStrategy: {}. {note}\n\n## Failing tests ({})\n\n",
        plan.iteration,
        plan.strategy,
        fails.len()
    );
    for f in fails {
        md.push_str(&format!(
            "- `{}`: {} at {} (criticality {})\n",
            f.id,
            f.error,
            f.location.as_deref().unwrap_or("an unknown place"),
            f.criticality.as_str()
        ));
        for line in f.excerpt.lines().take(4) {
            md.push_str(&format!("  > {line}\n"));
        }
    }
    md.push_str("\n## Fix plan\n\n");
    if plan.fixes.is_empty() {
        md.push_str(
            "No line could be ranked: the failing tests reach no measured line of the project.\n",
        );
    }
    for fix in &plan.fixes {
        md.push_str(&format!(
            "### {}\n\nTests: {}\n\n| Modification point | Function | Score | Reason | Code |\n|---|---|---|---|---|\n",
            fix.root_cause,
            fix.tests.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
        ));
        for p in &fix.modification_points {
            md.push_str(&format!(
                "| {}:{} | {} | {:.3} | {} | `{}` |\n",
                p.file,
                p.line,
                p.function.as_deref().unwrap_or("-"),
                p.score,
                p.reason,
                p.code.replace('|', "\\|").replace('`', "'")
            ));
        }
        md.push('\n');
    }
    md.push_str(&format!("Confidence: {:.2}\n\n", plan.confidence_score));
    md.push_str(&localise::markdown(per_test).replacen(
        "# Fault Localisation",
        "## Per-test localisation",
        1,
    ));
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_enclosing_function_of_a_line_is_found_through_nested_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.py");
        std::fs::write(
            &file,
            "X = 1\n\n\ndef outer(a):\n    if a:\n        return 1\n    return 2\n\n\nclass C:\n    def m(self):\n        pass\n",
        )
        .unwrap();
        assert_eq!(enclosing_function(&file, 6).as_deref(), Some("outer"));
        assert_eq!(enclosing_function(&file, 4).as_deref(), Some("outer"));
        assert_eq!(enclosing_function(&file, 12).as_deref(), Some("m"));
        assert_eq!(enclosing_function(&file, 1), None);
    }
}
