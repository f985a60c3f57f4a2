//! What a layer's run says of each scenario of the plan: the orchestrator (`team::merge`) writes
//! every scenario's
//! status, red result (the seed's RED-GREEN rules, from the first run), classification, evidence
//! and findings back into scenarios.csv, carries the layer's findings into the next layers'
//! `prev_context`, and says when a critical scenario failed (fail-fast).

use std::path::Path;

use crate::artifacts::{RecordedStatus, RunRecord, TestRecord};
use crate::scenario::plan::{self, Priority, Scenario};
use crate::tasks::layer_code;
use crate::team::error::RoleError;
use crate::testing::classify::Classification;

/// `prev_context` is kept under the seed's 500 characters.
const CONTEXT_MAX: usize = 500;

/// Updates scenarios.csv from `run` (a run of `layer`); the fail-fast reason when a critical
/// scenario of the layer failed. Nothing when the session has no plan.
pub(crate) fn record(
    session: &Path,
    layer: &str,
    run: &RunRecord,
    first_round: bool,
) -> Result<Option<String>, RoleError> {
    let path = session.join(plan::FILE);
    if !path.is_file() {
        return Ok(None);
    }
    plan::update(&path, |rows| apply(session, layer, run, first_round, rows)).map_err(|e| {
        RoleError::Io {
            action: "update",
            path: path.clone(),
            cause: std::io::Error::other(e.to_string()),
        }
    })
}

/// The run's results into the rows; the fail-fast reason when a critical scenario failed.
fn apply(
    session: &Path,
    layer: &str,
    run: &RunRecord,
    first_round: bool,
    rows: &mut [Scenario],
) -> Option<String> {
    let code = layer_code(layer).to_string();
    let mut fail_fast = None;
    let mut findings: Vec<String> = Vec::new();
    for row in rows.iter_mut().filter(|r| r.layer == code) {
        let tests: Vec<&TestRecord> = run.tests().iter().filter(|t| belongs(row, t)).collect();
        if tests.is_empty() {
            continue;
        }
        let failed: Vec<&&TestRecord> = tests
            .iter()
            .filter(|t| matches!(t.status, RecordedStatus::Failed | RecordedStatus::Error))
            .collect();
        row.status = if failed.is_empty() {
            "passed"
        } else {
            "failed"
        }
        .into();
        let first = failed.first();
        let class = first.and_then(|t| t.classification);
        if first_round || row.red_result.is_empty() {
            // RED-GREEN: passing at once may need strengthening; failing on what the code does is
            // the expected red; failing on the test's own setup is not.
            row.red_result = match (failed.is_empty(), class) {
                (true, _) => "pass",
                (false, Some(Classification::CodeDefect)) => "expected_fail",
                (false, _) => "unexpected_fail",
            }
            .into();
        }
        row.classification = class.map(|c| c.as_str().to_string()).unwrap_or_default();
        match first {
            Some(t) => {
                let ev = t.evidence.clone().unwrap_or_default();
                // A location in the session's own test files, said from the session.
                let session_prefix = format!("{}/", session.display());
                let location = ev.location.as_deref().unwrap_or("");
                let location = location.strip_prefix(&session_prefix).unwrap_or(location);
                row.evidence = format!(
                    "{}{}",
                    location,
                    ev.error
                        .as_deref()
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default()
                );
                let line = ev
                    .excerpt
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("");
                row.findings = clip(
                    &format!(
                        "{} of {} test(s) failed; {}: {}",
                        failed.len(),
                        tests.len(),
                        t.id,
                        line.trim()
                    ),
                    CONTEXT_MAX,
                );
                row.error = if class == Some(Classification::CodeDefect) {
                    String::new()
                } else {
                    clip(t.message.as_deref().unwrap_or(""), 200)
                };
                findings.push(format!("{} {}: {}", row.id, row.req_ref, row.evidence));
                if row.priority == Priority::Critical && fail_fast.is_none() {
                    fail_fast = Some(format!(
                        "critical scenario {} ({}) failed in {code}: {}",
                        row.id,
                        if row.req_ref.is_empty() {
                            &row.name
                        } else {
                            &row.req_ref
                        },
                        row.evidence
                    ));
                }
            }
            None => {
                row.evidence.clear();
                row.error.clear();
                row.findings = format!("{} test(s) passed", tests.len());
            }
        }
    }
    // What this layer found goes to the next layers' scenarios (cross-layer context).
    if !findings.is_empty() {
        let context = clip(&findings.join("; "), CONTEXT_MAX);
        for row in rows.iter_mut().filter(|r| r.layer.as_str() > code.as_str()) {
            row.prev_context = context.clone();
        }
    }
    fail_fast
}

/// Whether test `t` is one of the row's: its file is the row's test file (by module stem).
fn belongs(row: &Scenario, t: &TestRecord) -> bool {
    let Some(stem) = Path::new(&row.test_file)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
    else {
        return false;
    };
    let module = t.id.split("::").next().unwrap_or("");
    module == stem || module.ends_with(&format!(".{stem}"))
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let cut: String = text.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::Evidence;

    fn test(id: &str, status: RecordedStatus, class: Option<Classification>) -> TestRecord {
        TestRecord {
            id: id.into(),
            status,
            classification: class,
            evidence: class.map(|_| Evidence {
                location: Some("shop/inventory.py:14".into()),
                error: Some("ValueError".into()),
                excerpt: "E ValueError: only 3 left".into(),
                reason: String::new(),
            }),
            ..TestRecord::default()
        }
    }

    #[test]
    fn scenario_rows_get_their_tests_results_and_a_critical_failure_stops_the_layers() {
        let dir = tempfile::tempdir().unwrap();
        let row = |id: &str, layer: &str, priority, file: &str| Scenario {
            id: id.into(),
            name: id.into(),
            layer: layer.into(),
            priority,
            test_file: file.into(),
            req_ref: format!("REQ-001:{id}"),
            ..Scenario::default()
        };
        plan::write_csv(
            &dir.path().join(plan::FILE),
            &[
                row(
                    "AT-001",
                    "L1",
                    Priority::High,
                    "tests/L1-unit/test_at_001_a.py",
                ),
                row(
                    "AT-002",
                    "L1",
                    Priority::Critical,
                    "tests/L1-unit/test_at_002_b.py",
                ),
                row(
                    "AT-003",
                    "L2",
                    Priority::High,
                    "tests/L2-integration/test_at_003_c.py",
                ),
            ],
        )
        .unwrap();
        let run = RunRecord {
            tests: Some(vec![
                test(
                    "test_at_001_a::test_at_001_case_1",
                    RecordedStatus::Passed,
                    None,
                ),
                test(
                    "test_at_002_b::test_at_002_case_1",
                    RecordedStatus::Failed,
                    Some(Classification::CodeDefect),
                ),
            ]),
            ..RunRecord::default()
        };
        let stop = record(dir.path(), "L1-unit", &run, true).unwrap();
        assert!(stop
            .unwrap()
            .starts_with("critical scenario AT-002 (REQ-001:AT-002) failed in L1"));
        let rows = plan::read_csv(&dir.path().join(plan::FILE)).unwrap();
        assert_eq!(
            (rows[0].status.as_str(), rows[0].red_result.as_str()),
            ("passed", "pass")
        );
        assert_eq!(rows[1].status, "failed");
        assert_eq!(rows[1].red_result, "expected_fail");
        assert_eq!(rows[1].classification, "code_defect");
        assert_eq!(rows[1].evidence, "shop/inventory.py:14: ValueError");
        assert!(rows[2].prev_context.contains("AT-002"), "{:?}", rows[2]);
        assert_eq!(rows[2].status, "pending");
    }
}
