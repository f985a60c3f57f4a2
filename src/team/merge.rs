//! The orchestrator's side of a critic's run. As in the seed's wave workflow, the workers return
//! their results and the orchestrator owns the shared plan: each scenario of the layer gets its
//! result in scenarios.csv, a critical one that failed stops the later layers (`fail_fast`, with
//! a blocker on the board), and the reflective strategy reflects on the layer's runs.

use serde_json::json;

use crate::artifacts::RunRecord;
use crate::pipeline::config::TeamConfig;
use crate::scenario::board::Discovery;
use crate::session::SessionDir;
use crate::tasks::{data, Outcome, OutcomeStatus, Task};

use super::shared::{discoveries, reflect, scenario_results};

/// Merges the run that `outcome` of the critic's `task` names into the session, and adds what
/// it decided to `outcome`. Any other task's outcome is left as it is.
pub fn merge_critic_run(
    session: &SessionDir,
    config: &TeamConfig,
    task: &Task,
    outcome: &mut Outcome,
) {
    let Some(layer) = task.layer.as_deref() else {
        return;
    };
    if task.owner != config.gc.critic || outcome.status != OutcomeStatus::Completed {
        return;
    }
    let Some(run) = outcome.data.get(data::RUN).and_then(|v| v.as_str()) else {
        return;
    };
    let Ok(record) = crate::artifacts::read_run(&session.root.join(run)) else {
        return;
    };
    if config.reflective {
        reflect_on(session, layer, task, outcome);
    }
    scenario_results_of(session, layer, task, &record, outcome);
}

/// The reflective strategy reflects on every run of the layer and leaves the next round's plan.
fn reflect_on(session: &SessionDir, layer: &str, task: &Task, outcome: &mut Outcome) {
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
            outcome.data.insert("reflection".into(), json!(r));
        }
        Err(e) => {
            outcome
                .data
                .insert("reflection_error".into(), json!(e.to_string()));
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
) {
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
        }
        Ok(None) => {}
        Err(e) => {
            outcome
                .data
                .insert("scenario_results_error".into(), json!(e.to_string()));
        }
    }
}
