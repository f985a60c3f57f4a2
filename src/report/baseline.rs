//! The baseline section: what the project's own suite passed, failed and covered before any
//! generated test, and each layer's coverage before and after its tests were added.

use super::load::Run;
use super::model::{BaselineLayer, BaselineReport};
use crate::artifacts::RecordedStatus;
use crate::session::SessionDir;

/// None when the session ran no baseline (no suite of its own, or an earlier version).
pub(super) fn baseline(session: &SessionDir, final_runs: &[&Run]) -> Option<BaselineReport> {
    let record = crate::artifacts::read_run(&session.root.join("results/baseline.json")).ok()?;
    let failing_tests = record
        .tests()
        .iter()
        .filter(|t| matches!(t.status, RecordedStatus::Failed | RecordedStatus::Error))
        .map(|t| t.id.clone())
        .collect();
    let layers = final_runs
        .iter()
        .filter_map(|run| {
            Some(BaselineLayer {
                layer: run.layer.clone(),
                before: run.record.baseline_coverage?,
                after: run.record.coverage()?,
                new_tests: run.record.total as u64,
            })
        })
        .collect();
    Some(BaselineReport {
        tests: record.total as u64,
        passed: record.passed.unwrap_or(0) as u64,
        failing_tests,
        coverage: record.coverage(),
        layers,
        files: crate::artifacts::coverage_change(&session.root)
            .map(|c| c.files)
            .unwrap_or_default(),
    })
}
