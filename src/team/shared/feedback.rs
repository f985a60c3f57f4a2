//! What the earlier runs of a layer tell the next generation round: the tests to avoid, the
//! code defects to keep, the lines still missing, and the pass rate history. Read by the
//! built-in generator and by the agent-backed one, from the session's run records.

use std::collections::BTreeMap;
use std::path::Path;

use crate::artifacts::{self, CoverageRecord, RecordedStatus, RunRecord};
use crate::testing::classify::Classification;
use crate::util::read_json;

/// What the last run of this layer says for a revision: tests to avoid, tests that found code
/// defects (kept as xfail with the evidence), and lines still missing per file.
#[derive(Default)]
pub(crate) struct Feedback {
    pub(crate) avoid: Vec<String>,
    pub(crate) defects: BTreeMap<String, String>,
    pub(crate) missing: BTreeMap<String, Vec<u32>>,
    /// `missing` is what the project's own suite leaves uncovered (no run of the layer yet).
    pub(crate) missing_from_baseline: bool,
    /// (generator round the run judged, pass rate) of every run of the layer, in order.
    pub(crate) history: Vec<(u64, f64)>,
    /// How many failing tests share the most common error kind.
    pub(crate) similar_failures: usize,
    /// Failing tests that are not findings (environment trouble): dropped in an aggressive round.
    pub(crate) batch: Vec<String>,
}

/// The generator round a run judged: TESTRUN-001 judged round 0, TESTRUN-L1-fix-2 round 2.
pub(crate) fn judged_round(task_id: &str) -> u64 {
    task_id
        .rsplit_once("-fix-")
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(0)
}

/// What a layer's first round aims at: the lines the project's own tests leave uncovered (none
/// when the session has no baseline coverage).
pub(crate) fn first_round(session: &Path) -> Feedback {
    let mut fb = Feedback::default();
    if let Some(cov) = super::baseline::coverage(session) {
        fb.missing = missing_lines(cov);
        fb.missing_from_baseline = !fb.missing.is_empty();
    }
    fb
}

pub(crate) fn feedback(session: &Path, layer: &str) -> Feedback {
    let mut fb = Feedback::default();
    let results = artifacts::runs(session);
    let layer_runs: Vec<&RunRecord> = results.of_layer(layer).collect();
    fb.history = layer_runs
        .iter()
        .filter_map(|r| Some((judged_round(&r.task_id), r.pass_rate?)))
        .collect();
    let Some(run) = layer_runs.last() else {
        // The first round aims at the gaps the project's own tests leave.
        return Feedback {
            history: fb.history,
            ..first_round(session)
        };
    };
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for t in run.tests().iter().filter(|t| t.status.is_failing()) {
        let kind = t
            .evidence
            .as_ref()
            .and_then(|e| e.error.as_deref())
            .unwrap_or("?");
        *kinds.entry(kind.to_string()).or_default() += 1;
    }
    fb.similar_failures = kinds.values().copied().max().unwrap_or(0);
    for t in run.tests() {
        let name = t.id.rsplit("::").next().unwrap_or("").to_string();
        match (t.status, t.classification) {
            // A sandbox denial means the test reached outside: it never comes back.
            (RecordedStatus::Flaky, _)
            | (_, Some(Classification::TestDefect | Classification::SandboxDenied)) => {
                fb.avoid.push(name)
            }
            (s, Some(Classification::EnvIssue)) if s.is_failing() => fb.batch.push(name),
            (_, Some(Classification::CodeDefect)) => {
                let evidence = t
                    .evidence
                    .as_ref()
                    .map_or("", |e| e.excerpt.as_str())
                    .lines()
                    .next()
                    .unwrap_or("");
                // pytest's `E   ` prefix, not the E of a JavaScript `Expected …`.
                let evidence = evidence.trim_start();
                let evidence = evidence
                    .strip_prefix("E ")
                    .map_or(evidence, str::trim_start);
                // An XML attribute's newlines arrive as runs of spaces (node's junit message).
                let evidence = evidence.split_whitespace().collect::<Vec<_>>().join(" ");
                // The reason goes into the delivered file: only a place in the project is
                // named, never the session's folders (another layer's file, an absolute path).
                let at = t
                    .evidence
                    .as_ref()
                    .and_then(|e| e.location.as_deref())
                    .filter(|l| is_project_place(l));
                let reason = match at {
                    Some(at) => format!("code_defect found by team-testing at {at}: {evidence}"),
                    None => format!("code_defect found by team-testing: {evidence}"),
                };
                fb.defects.insert(name, reason);
            }
            _ => {}
        }
    }
    // Tests quarantined as unsafe (an effect outside their tmp_path) never come back either.
    for q in run.quarantined() {
        if q.unsafe_effect.is_some() {
            if let Some(name) = q.id.rsplit("::").next() {
                if !fb.avoid.iter().any(|a| a == name) {
                    fb.avoid.push(name.to_string());
                }
            }
        }
    }
    if let Some(cov) = run
        .coverage_file()
        .and_then(|rel| read_json::<CoverageRecord>(&session.join(rel)).ok())
    {
        fb.missing = missing_lines(cov);
    }
    fb
}

/// The lines a coverage record leaves uncovered, per file.
fn missing_lines(cov: CoverageRecord) -> BTreeMap<String, Vec<u32>> {
    cov.files
        .into_iter()
        .filter(|f| !f.missing_lines.is_empty())
        .map(|f| (f.path, f.missing_lines))
        .collect()
}

/// A location in the project (`calc/ops.py:12`), not one in the session (its tests, its copies
/// of the project) nor an absolute path of this machine.
fn is_project_place(location: &str) -> bool {
    let path = location.split(':').next().unwrap_or(location);
    !path.is_empty()
        && !path.starts_with('/')
        && !path.starts_with("..")
        && !path.contains("workspace/")
        && !crate::session::LAYER_DIRS
            .iter()
            .any(|l| path.contains(&format!("{l}/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_judges_the_round_its_task_names() {
        assert_eq!(judged_round("TESTRUN-L1-fix-2"), 2);
        assert_eq!(judged_round("TESTRUN-001"), 0);
    }
}
