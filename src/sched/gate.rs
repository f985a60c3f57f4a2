//! The Generator-Critic checkpoint after a layer's run: the gate met, a GC round opened (its fix
//! tasks inserted and the run's waiters rewired onto them), or the layer accepted below its
//! gate with a warning.

use serde_json::json;

use super::effect::publish;
use super::{Effect, Scheduler, COORDINATOR};
use crate::bus::message::{GcLoopTrigger, Payload, QualityGate};
use crate::pipeline::select::gc_fix_tasks;
use crate::tasks::{
    gc_decision, layer_code, GateInput, GcDecision, Outcome, RunFigures, LOOP_STOPPED,
};

impl Scheduler {
    /// After a TESTRUN: go on, open a GC round, or accept the layer below its gate.
    pub(super) fn gc_checkpoint(
        &mut self,
        task_id: &str,
        outcome: &Outcome,
        now: &str,
    ) -> Vec<Effect> {
        let task = self.graph.get(task_id).cloned().expect("exists");
        let layer = task.layer.clone().unwrap_or_default();
        let code = layer_code(&layer).to_string();
        let pass_rate = outcome.pass_rate.unwrap_or(0.0);
        let target = task
            .coverage_target()
            .or_else(|| self.config.coverage_target(&layer));
        let used = self.graph.gc_rounds().get(&code).copied().unwrap_or(0);
        // `deepen` with a raised target opens a fresh budget of rounds: count from its base.
        let base = task.rounds_from().unwrap_or(0) as u32;
        let config = &self.config;
        let input = GateInput {
            pass_rate,
            coverage: outcome.coverage,
            figures: outcome.gate.clone(),
            pass_rate_target: config.pass_rate_target,
            coverage_target: target,
            branch_target: target.map(|t| t.min(config.branch_coverage_target)),
            rounds_used: used.saturating_sub(base),
            max_rounds: config.max_gc_rounds,
            converge_on_code_defects: config.reflective,
            previous: self.previous_run(task_id),
            plateau_points: config.gc_plateau_points,
        };
        let decision = match gc_decision(&input) {
            GcDecision::Revise { reason, .. } => GcDecision::Revise {
                round: used + 1,
                reason,
            },
            other => other,
        };
        let mut gate = QualityGate {
            layer: layer.clone(),
            task_id: task_id.to_string(),
            verdict: String::new(),
            pass_rate,
            coverage: outcome.coverage,
            coverage_target: target,
            rounds_used: used,
            warning: None,
        };
        if outcome.coverage.is_none() {
            gate.warning = Some(format!(
                "{layer}: coverage unknown (no coverage tool); judged on pass rate alone"
            ));
        }
        let mut effects = Vec::new();
        match decision {
            GcDecision::Pass => {
                gate.verdict = "pass".into();
                let defects = outcome.gate.as_ref().map_or(0, |f| f.code_defects);
                let note = match defects {
                    0 => String::new(),
                    n => format!(" ({n} code defect(s) reported, not held against the tests)"),
                };
                effects.push(publish(
                    COORDINATOR,
                    format!("[coordinator] {code} gate met after {task_id}{note}"),
                    Payload::QualityGate(gate),
                ));
            }
            GcDecision::Partial { note } => {
                gate.verdict = "partial_success".into();
                gate.warning = Some(format!("{layer}: {note}"));
                effects.push(publish(
                    COORDINATOR,
                    format!("[coordinator] {code} gate met after {task_id}: {note}"),
                    Payload::QualityGate(gate),
                ));
            }
            GcDecision::GiveUp { reason } => {
                let warning = format!("{layer} still below its gate: {reason}");
                effects.push(self.accepted_below_gate(gate, warning));
            }
            GcDecision::Plateau { reason } => {
                let warning = format!("{layer} {LOOP_STOPPED}{reason}");
                effects.push(self.accepted_below_gate(gate, warning));
            }
            GcDecision::Revise { round, reason } => {
                let gen_instance = self
                    .graph
                    .tasks
                    .iter()
                    .rev()
                    .find(|t| t.owner == config.gc.generator && t.layer.as_deref() == Some(&layer))
                    .and_then(|t| t.instance.clone());
                let session_dir = self.session_root.display().to_string();
                let (gen, run) =
                    gc_fix_tasks(config, &task, gen_instance, round, &session_dir, now);
                let fix_ids = vec![gen.id.clone(), run.id.clone()];
                let run_id = run.id.clone();
                let registry = &self.registry;
                if let Err(e) = self
                    .graph
                    .insert(vec![gen, run], Some((task_id, &run_id)), |r| {
                        registry.contains(r)
                    })
                {
                    // The gate is still missed: say so rather than let the layer pass silently.
                    let warning = format!(
                        "{layer} below its gate ({reason}) but GC round {round} could not be opened: {e}"
                    );
                    effects.push(self.accepted_below_gate(gate, warning));
                    return effects;
                }
                gate.verdict = "revise".into();
                effects.push(publish(
                    COORDINATOR,
                    format!("[coordinator] {code} below gate after {task_id}: {reason}"),
                    Payload::QualityGate(gate),
                ));
                effects.push(publish(
                    COORDINATOR,
                    format!(
                        "[coordinator] GC round {round}/{} for {code}: {}",
                        self.config.max_gc_rounds,
                        fix_ids.join(", ")
                    ),
                    Payload::GcLoopTrigger(GcLoopTrigger {
                        layer,
                        round,
                        after_task: task_id.to_string(),
                        pass_rate,
                        coverage: outcome.coverage,
                        coverage_target: target,
                        reason,
                        fix_tasks: fix_ids,
                    }),
                ));
            }
        }
        self.state.gc_rounds = self.graph.gc_rounds();
        let mut data = serde_json::Map::new();
        data.insert("gc_rounds".into(), json!(self.state.gc_rounds));
        effects.push(publish(
            COORDINATOR,
            "[coordinator] gc rounds",
            Payload::StateUpdate(data),
        ));
        effects
    }

    /// What the run of the same layer before `task_id` measured (the one a GC round revised),
    /// when there is one.
    fn previous_run(&self, task_id: &str) -> Option<RunFigures> {
        let tasks = &self.graph.tasks;
        let at = tasks.iter().position(|t| t.id == task_id)?;
        let this = &tasks[at];
        tasks
            .iter()
            .filter(|t| t.id != task_id && t.owner == this.owner && t.layer == this.layer)
            .filter_map(|t| Some((t.completed_at.as_deref()?, t.outcome.as_ref()?)))
            .filter(|(_, o)| o.pass_rate.is_some())
            .max_by_key(|(done, _)| *done)
            .map(|(_, o)| RunFigures {
                pass_rate: o
                    .gate
                    .as_ref()
                    .map_or(o.pass_rate.unwrap_or(0.0), |f| f.pass_rate()),
                coverage: o.coverage,
                branch_coverage: o.gate.as_ref().and_then(|f| f.branch_coverage),
            })
    }

    /// The layer goes on below its gate: a warning kept in the session and on the gate.
    fn accepted_below_gate(&mut self, mut gate: QualityGate, warning: String) -> Effect {
        self.state.warnings.push(warning.clone());
        gate.verdict = "accepted_below_gate".into();
        gate.warning = Some(warning.clone());
        publish(
            COORDINATOR,
            format!("[coordinator] warning: {warning}"),
            Payload::QualityGate(gate),
        )
    }
}
