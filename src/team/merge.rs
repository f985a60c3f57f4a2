//! The orchestrator's side of a critic's run. As in the seed's wave workflow, the workers return
//! their results and the orchestrator owns the shared plan: each scenario of the layer gets its
//! result in scenarios.csv, a critical one that failed stops the later layers (`fail_fast`, with
//! a blocker on the board), and the reflective strategy reflects on the layer's runs. Merging
//! the same run twice (a resume after a kill in between) changes nothing more.

use serde_json::json;

use crate::artifacts::RunRecord;
use crate::pipeline::config::TeamConfig;
use crate::scenario::board::Discovery;
use crate::session::SessionDir;
use crate::tasks::{data, Outcome, OutcomeStatus, Task};

use super::shared::{discoveries, reflect, scenario_results};

/// Merges the run that `outcome` of the critic's `task` names into the session, and adds what
/// it decided to `outcome`. Returns the line the log shows for it (None: nothing to say). Any
/// other task's outcome, and a critic's that the scheduler will fail (no pass rate), is left as
/// it is.
pub fn merge_critic_run(
    session: &SessionDir,
    config: &TeamConfig,
    task: &Task,
    outcome: &mut Outcome,
) -> Option<String> {
    let layer = task.layer.as_deref()?;
    let counts = task.owner == config.gc.critic
        && outcome.status == OutcomeStatus::Completed
        && outcome.pass_rate.is_some();
    if !counts {
        return None;
    }
    let run = outcome.data.get(data::RUN)?.as_str()?.to_string();
    let mut said = Vec::new();
    if config.reflective {
        said.push(reflect_on(session, layer, task, outcome));
    }
    match crate::artifacts::read_run(&session.root.join(&run)) {
        Ok(record) => said.extend(scenario_results_of(session, layer, task, &record, outcome)),
        Err(e) => {
            let why = format!("cannot read {run}: {e}");
            outcome
                .data
                .insert("scenario_results_error".into(), json!(why));
            said.push(format!("scenario results not recorded: {why}"));
        }
    }
    (!said.is_empty()).then(|| said.join("; "))
}

/// The reflective strategy reflects on every run of the layer and leaves the next round's plan.
fn reflect_on(session: &SessionDir, layer: &str, task: &Task, outcome: &mut Outcome) -> String {
    let results = crate::artifacts::runs(&session.root);
    let runs: Vec<&RunRecord> = results.of_layer(layer).collect();
    match reflect::reflect(
        &session.root,
        layer,
        &task.id,
        &runs,
        task.coverage_target(),
    ) {
        Ok(r) => {
            let line = format!("reflection: {}", r.hypothesis);
            outcome.data.insert("reflection".into(), json!(r));
            line
        }
        Err(e) => {
            outcome
                .data
                .insert("reflection_error".into(), json!(e.to_string()));
            format!("no reflection: {e}")
        }
    }
}

/// The plan's scenarios of this layer get their results; a critical one that failed stops the
/// later layers (the scheduler reads `fail_fast`).
fn scenario_results_of(
    session: &SessionDir,
    layer: &str,
    task: &Task,
    record: &RunRecord,
    outcome: &mut Outcome,
) -> Option<String> {
    let first_round = task.gc_round().is_none();
    match scenario_results::record(&session.root, layer, record, first_round) {
        Ok(Some(reason)) => {
            let blocker = Discovery::Blocker {
                issue: reason.clone(),
                severity: "critical".into(),
                layer: layer.to_string(),
            };
            discoveries::add(&session.root, "executor", &blocker);
            outcome.summary = format!("{}; fail-fast: {reason}", outcome.summary);
            outcome.data.insert(data::FAIL_FAST.into(), json!(reason));
            Some(format!("fail-fast: {reason}"))
        }
        Ok(None) => None,
        Err(e) => {
            outcome
                .data
                .insert("scenario_results_error".into(), json!(e.to_string()));
            Some(format!("scenario results not recorded: {e}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::{RecordedStatus, TestRecord};
    use crate::scenario::plan::{self, Priority, Scenario};
    use crate::testing::classify::Classification;

    /// A session whose plan has a critical L1 scenario, and the L1 run where its test failed.
    fn session_with_a_failed_critical_scenario() -> (tempfile::TempDir, SessionDir) {
        let dir = tempfile::tempdir().unwrap();
        let session = SessionDir {
            root: dir.path().to_path_buf(),
            id: "S".into(),
        };
        let row = Scenario {
            id: "AT-001".into(),
            name: "AT-001".into(),
            layer: "L1".into(),
            priority: Priority::Critical,
            test_file: "tests/L1-unit/test_at_001_a.py".into(),
            req_ref: "REQ-001:AT-001".into(),
            ..Scenario::default()
        };
        plan::write_csv(&dir.path().join(plan::FILE), &[row]).unwrap();
        let run = RunRecord {
            tests: Some(vec![TestRecord {
                id: "test_at_001_a::test_at_001_case_1".into(),
                status: RecordedStatus::Failed,
                classification: Some(Classification::CodeDefect),
                ..TestRecord::default()
            }]),
            layer: "L1-unit".into(),
            task_id: "TESTRUN-001".into(),
            pass_rate: Some(0.0),
            ..RunRecord::default()
        };
        std::fs::create_dir_all(dir.path().join("results")).unwrap();
        crate::util::atomic_write_json(&dir.path().join("results/run-001.json"), &run).unwrap();
        (dir, session)
    }

    fn critic_outcome() -> Outcome {
        let mut out = Outcome::completed("L1-unit: 1 tests, 0 passed");
        out.pass_rate = Some(0.0);
        out.data
            .insert(data::RUN.into(), json!("results/run-001.json"));
        out
    }

    #[test]
    fn a_failed_critical_scenario_stops_the_layers_once_however_often_its_run_is_merged() {
        let (dir, session) = session_with_a_failed_critical_scenario();
        let mut config = TeamConfig::builtin().unwrap();
        config.reflective = true;
        let mut task = Task::new("TESTRUN-001", "run L1", &config.gc.critic, vec![]);
        task.layer = Some("L1-unit".into());

        let mut first = critic_outcome();
        let said = merge_critic_run(&session, &config, &task, &mut first).unwrap();
        assert!(
            said.contains("fail-fast: critical scenario AT-001"),
            "{said}"
        );
        assert!(first.data[data::FAIL_FAST]
            .as_str()
            .unwrap()
            .starts_with("critical scenario AT-001"));
        assert!(first.summary.contains("; fail-fast: "), "{}", first.summary);
        assert!(first.data.contains_key("reflection"), "{:?}", first.data);
        let rows = plan::read_csv(&dir.path().join(plan::FILE)).unwrap();
        assert_eq!(rows[0].status, "failed");

        // A resume merges the recorded outcome again: one blocker, one reflection entry.
        let mut again = critic_outcome();
        merge_critic_run(&session, &config, &task, &mut again).unwrap();
        assert_eq!(again.data[data::FAIL_FAST], first.data[data::FAIL_FAST]);
        let board = std::fs::read_to_string(dir.path().join("discoveries.ndjson")).unwrap();
        assert_eq!(board.lines().count(), 1, "{board}");
        let log = std::fs::read_to_string(dir.path().join(reflect::LOG)).unwrap();
        assert_eq!(log.matches("## Iteration 0 of L1-unit").count(), 1, "{log}");
    }

    #[test]
    fn only_a_critics_completed_run_with_a_pass_rate_is_merged() {
        let (dir, session) = session_with_a_failed_critical_scenario();
        let config = TeamConfig::builtin().unwrap();
        let mut task = Task::new("TESTGEN-001", "write L1", &config.gc.generator, vec![]);
        task.layer = Some("L1-unit".into());
        let mut out = critic_outcome();
        assert_eq!(merge_critic_run(&session, &config, &task, &mut out), None);
        // The scheduler fails a critic's outcome without a pass rate: nothing of it is merged.
        task.owner = config.gc.critic.clone();
        let mut no_rate = critic_outcome();
        no_rate.pass_rate = None;
        assert_eq!(
            merge_critic_run(&session, &config, &task, &mut no_rate),
            None
        );
        assert!(!no_rate.data.contains_key(data::FAIL_FAST));
        let rows = plan::read_csv(&dir.path().join(plan::FILE)).unwrap();
        assert_eq!(rows[0].status, "pending", "{:?}", rows[0]);
    }
}
