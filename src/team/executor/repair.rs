//! The executor's self-repair: each file with test_defect failures goes, with the evidence, to
//! whatever repairs test files (the agent chain); the files it repaired are rewritten and the
//! layer runs again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::artifacts::{Repair, RepairAction};
use crate::team::shared::agent_gen::RepairTests;
use crate::testing::classify::{Classification, Verdict};
use crate::testing::report::TestCase;

/// Failures shown per test, in characters.
const MAX_DETAIL: usize = 1500;

/// Sends every file of `cases` with test_defect verdicts to `repairer`, logs each attempt in
/// `repairs`, and returns the files rewritten.
pub(super) fn agent_repairs(
    repairer: &dyn RepairTests,
    test_dir: &Path,
    cases: &[TestCase],
    verdicts: &BTreeMap<String, Verdict>,
    iteration: usize,
    repairs: &mut Vec<Repair>,
) -> BTreeSet<String> {
    let mut repaired = BTreeSet::new();
    for (file, failures) in failures_by_file(cases, verdicts) {
        let path = test_dir.join(&file);
        let written = match repairer.repair(&path, &failures) {
            Ok((backend, content)) => crate::util::atomic_write(&path, content.as_bytes())
                .map(|()| backend)
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match written {
            Ok(backend) => {
                let mut step = Repair::on_file(iteration, RepairAction::RepairedByAgent, &file);
                step.backend = Some(backend);
                repairs.push(step);
                repaired.insert(file);
            }
            Err(why) => {
                let mut step = Repair::on_file(iteration, RepairAction::AgentRepairFailed, &file);
                step.reason = Some(why);
                repairs.push(step);
            }
        }
    }
    repaired
}

/// The evidence of each file's test_defect failures: one entry per failing test.
fn failures_by_file(
    cases: &[TestCase],
    verdicts: &BTreeMap<String, Verdict>,
) -> BTreeMap<String, String> {
    let mut by_file: BTreeMap<String, String> = BTreeMap::new();
    for case in cases {
        let defect = verdicts
            .get(&case.id)
            .is_some_and(|v| v.classification == Classification::TestDefect);
        let Some(file) = case.file.as_ref().filter(|_| defect) else {
            continue;
        };
        let detail: String = case
            .detail
            .as_deref()
            .unwrap_or("")
            .chars()
            .take(MAX_DETAIL)
            .collect();
        by_file.entry(file.clone()).or_default().push_str(&format!(
            "- {}: {}\n{detail}\n",
            case.id,
            case.message.as_deref().unwrap_or("")
        ));
    }
    by_file
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::team::error::RoleError;
    use crate::testing::classify::Criticality;
    use crate::testing::report::TestStatus;

    /// Repairs `test_a.py` and gives up on every other file, recording what it was sent.
    struct Scripted(std::sync::Mutex<Vec<String>>);

    impl RepairTests for Scripted {
        fn repair(
            &self,
            file: &Path,
            failures: &str,
        ) -> crate::team::error::Result<(String, String)> {
            self.0.lock().unwrap().push(failures.to_string());
            match file.file_name().and_then(|n| n.to_str()) {
                Some("test_a.py") => Ok(("agent".into(), "def test_ok():\n    pass\n".into())),
                _ => Err(RoleError::NoRepair {
                    attempts: vec!["agent: no answer".into()],
                }),
            }
        }
    }

    fn failing(id: &str, file: &str) -> TestCase {
        TestCase {
            id: id.into(),
            name: id.into(),
            classname: None,
            file: Some(file.into()),
            line: None,
            status: TestStatus::Failed,
            duration_s: None,
            message: Some(format!("{id} is wrong")),
            detail: Some("assert 1 == 2".into()),
        }
    }

    fn verdict(classification: Classification) -> Verdict {
        Verdict {
            classification,
            criticality: Criticality::Low,
            location: None,
            error: "AssertionError".into(),
            excerpt: String::new(),
            reason: String::new(),
        }
    }

    #[test]
    fn only_files_with_test_defects_go_to_the_repairer_and_its_answers_are_written() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["test_a.py", "test_b.py", "test_c.py"] {
            std::fs::write(dir.path().join(f), "def test_x():\n    assert 1 == 2\n").unwrap();
        }
        let cases = vec![
            failing("a1", "test_a.py"),
            failing("b1", "test_b.py"),
            failing("c1", "test_c.py"),
        ];
        let verdicts = BTreeMap::from([
            ("a1".to_string(), verdict(Classification::TestDefect)),
            ("b1".to_string(), verdict(Classification::TestDefect)),
            // The code's fault: never the repairer's business.
            ("c1".to_string(), verdict(Classification::CodeDefect)),
        ]);
        let repairer = Scripted(Default::default());
        let mut log = Vec::new();
        let repaired = agent_repairs(&repairer, dir.path(), &cases, &verdicts, 1, &mut log);

        assert_eq!(repaired, BTreeSet::from(["test_a.py".to_string()]));
        let a = std::fs::read_to_string(dir.path().join("test_a.py")).unwrap();
        assert_eq!(a, "def test_ok():\n    pass\n");
        let c = std::fs::read_to_string(dir.path().join("test_c.py")).unwrap();
        assert!(
            c.contains("assert 1 == 2"),
            "a code defect's file is left as it is"
        );
        let sent = repairer.0.lock().unwrap();
        assert_eq!(sent.len(), 2);
        assert!(
            sent[0].contains("- a1: a1 is wrong\nassert 1 == 2"),
            "{sent:?}"
        );
        let actions: Vec<_> = log.iter().map(|r| (r.action, r.file.clone())).collect();
        assert_eq!(
            actions,
            vec![
                (RepairAction::RepairedByAgent, Some("test_a.py".into())),
                (RepairAction::AgentRepairFailed, Some("test_b.py".into())),
            ]
        );
        assert_eq!(log[0].backend.as_deref(), Some("agent"));
        assert!(log[1].reason.as_deref().unwrap_or("").contains("no answer"));
    }
}
