use serde_json::{json, Value};

use super::*;

/// The example sessions in the repository, written by the current version.
fn example_sessions() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
    let mut dirs: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("session.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn example_sessions_load_and_round_trip() {
    let sessions = example_sessions();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    let mut records = 0;
    for s in &sessions {
        let results = runs(s);
        assert!(results.unreadable.is_empty(), "{:?}", results.unreadable);
        for (name, record) in &results.runs {
            records += 1;
            // Writing the record back gives the same keys, in the same order, with the same values.
            let text = std::fs::read_to_string(s.join("results").join(name)).unwrap();
            let original: Value = serde_json::from_str(&text).unwrap();
            let written = serde_json::to_value(record).unwrap();
            assert_eq!(written, original, "{name}");
            let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
            assert_eq!(keys(&written), keys(&original), "{name}");
            if let Some(cf) = record.coverage_file() {
                let cov: CoverageRecord = crate::util::read_json(&s.join(cf)).unwrap();
                let original: Value = crate::util::read_json(&s.join(cf)).unwrap();
                assert_eq!(serde_json::to_value(&cov).unwrap(), original, "{cf}");
            }
        }
    }
    assert!(records > 0, "the example sessions hold no run record");
}

#[test]
fn the_three_shapes_keep_their_keys() {
    let env = json!({
        "task_id": "TESTRUN-001", "layer": "L1-unit", "framework": "pytest", "total": 0,
        "pass_rate": null, "classification": "env_issue", "timed_out": false,
        "problem": "pytest is missing", "install": null, "finished_at": "2026-12-03T00:00:00Z",
    });
    let empty = json!({
        "task_id": "TESTRUN-001", "layer": "L1-unit", "framework": "pytest", "command": null,
        "exit_code": null, "total": 0, "passed": 0, "failed": 0, "skipped": 0, "pass_rate": 0.0,
        "coverage": null, "tests": [], "note": "no tests in L1-unit",
        "finished_at": "2026-12-03T00:00:00Z",
    });
    for shape in [env, empty] {
        let r: RunRecord = serde_json::from_value(shape.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), shape);
    }
}

#[test]
fn older_and_hand_written_records_still_load() {
    let r: RunRecord = serde_json::from_value(json!({
        "task_id": "TESTRUN-001", "pass_rate": 0.5, "future_field": 1,
        "tests": [{"id": "t::a", "status": "failed", "classification": "code_defect"},
                  {"id": "t::b", "status": "someday"}],
        "quarantined": [{"id": "t::c"}],
    }))
    .unwrap();
    assert_eq!(r.tests()[0].status, RecordedStatus::Failed);
    assert_eq!(r.tests()[1].status, RecordedStatus::Unknown);
    assert_eq!(r.quarantined()[0].reason, "");
    assert_eq!(r.coverage(), None);
    assert_eq!(r.env_problem(), None);
}

#[test]
fn repairs_leave_out_the_keys_they_do_not_use() {
    let mut r = Repair::on_file(2, RepairAction::RepairedByAgent, "test_a.py");
    r.backend = Some("claude".into());
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"iteration": 2, "action": "repaired by agent", "file": "test_a.py", "backend": "claude"})
    );
}

#[test]
fn findings_are_listed_by_their_kind() {
    assert_eq!(
        FindingCategory::of_kind("sandbox_denied"),
        FindingCategory::Blocked
    );
    assert_eq!(
        FindingCategory::of_kind("generator_error"),
        FindingCategory::Blocked
    );
    assert_eq!(
        FindingCategory::of_kind("side_effect"),
        FindingCategory::SideEffect
    );
    assert_eq!(
        FindingCategory::of_kind("exception"),
        FindingCategory::Contract
    );
}
