//! The example sessions in the repository, written by the current version, still load and
//! report: every run record is read, none is left out as unreadable.

use super::*;

#[test]
fn the_example_sessions_report_every_run_record() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
    let mut sessions: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("session.json").is_file())
        .collect();
    sessions.sort();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    let config = TeamConfig::builtin().unwrap();
    for dir in sessions {
        let session = SessionDir::open(dir.clone()).unwrap();
        let records = crate::artifacts::runs(&session.root);
        assert!(records.unreadable.is_empty(), "{:?}", records.unreadable);
        let report = build(&session, &config);
        assert_eq!(report.runs.len(), records.runs.len(), "{}", dir.display());
        assert!(
            !report.missing.iter().any(|m| m.contains("unreadable")),
            "{:?}",
            report.missing
        );
    }
}
