//! The layers section: each layer's gate, final figures and round history, the GC loop's
//! effectiveness per layer, and the run each layer's final figures come from.

use std::collections::{BTreeMap, BTreeSet};

use super::load::{round_of, Run};
use super::model::{GcEffect, LayerReport, RoundPoint};
use super::numbers::round_to;
use crate::pipeline::config::TeamConfig;
use crate::session::SessionState;
use crate::tasks::{layer_code, Task, TaskGraph, TaskStatus};

/// What the layers section computes.
pub(super) struct Layers<'a> {
    /// In task order, then any layer only the run records name.
    pub layers: Vec<LayerReport>,
    /// One per layer that had something to do.
    pub gc_effectiveness: Vec<GcEffect>,
    /// The run each layer's final figures come from, for the findings and gaps sections.
    pub final_runs: Vec<&'a Run>,
    pub missing: Vec<String>,
}

pub fn gc_rating(gain_per_round: Option<f64>) -> &'static str {
    match gain_per_round {
        None => "n/a",
        Some(g) if g > 10.0 => "HIGH",
        Some(g) if g > 5.0 => "MEDIUM",
        Some(_) => "LOW",
    }
}

/// Computes the layers from the critic's tasks in tasks.json and the run records: a layer's
/// final figures are those of its last round with a pass rate; its GC rounds the most that
/// session.json, tasks.json or its history show.
pub(super) fn layers<'a>(
    runs: &'a [Run],
    graph: &TaskGraph,
    state: Option<&SessionState>,
    config: &TeamConfig,
) -> Layers<'a> {
    let critic = config.gc.critic.as_str();
    let critic_tasks: Vec<&Task> = graph
        .tasks
        .iter()
        .filter(|t| t.owner == critic && t.layer.is_some() && t.status != TaskStatus::Deleted)
        .collect();
    let task_rounds = graph.gc_rounds();
    let mut out = Layers {
        layers: Vec::new(),
        gc_effectiveness: Vec::new(),
        final_runs: Vec::new(),
        missing: Vec::new(),
    };
    for layer in layer_names(&critic_tasks, runs) {
        let tasks: Vec<&Task> = critic_tasks
            .iter()
            .copied()
            .filter(|t| t.layer.as_deref() == Some(layer.as_str()))
            .collect();
        let never_ran = !runs.iter().any(|r| r.layer == layer);
        if never_ran && tasks.iter().all(|t| t.status == TaskStatus::NotApplicable) {
            // Nothing to do for this layer: reported with its reason, left out of the score.
            out.layers.push(LayerReport {
                target: config.coverage_target(&layer),
                gate: "NotApplicable".into(),
                not_applicable: tasks.iter().find_map(|t| t.reason.clone()),
                loop_stopped: None,
                final_pass_rate: None,
                final_coverage: None,
                gc_rounds_used: 0,
                history: Vec::new(),
                layer,
            });
            continue;
        }
        let target = config
            .coverage_target(&layer)
            .or_else(|| tasks.first().and_then(|t| t.coverage_target()));
        let history = history(&layer, &tasks, runs, &mut out.missing);
        let last = history.iter().rev().find(|p| p.pass_rate.is_some());
        let (pass_rate, coverage) = (
            last.and_then(|p| p.pass_rate),
            last.and_then(|p| p.coverage),
        );
        if let Some(run) = last
            .and_then(|p| p.run.as_ref())
            .and_then(|f| runs.iter().find(|r| &r.file == f))
        {
            out.final_runs.push(run);
        }
        if pass_rate.is_none() {
            out.missing.push(format!("{layer}: no completed test run"));
        } else if coverage.is_none() {
            out.missing.push(format!(
                "{layer}: coverage unknown (no coverage data); judged on pass rate alone"
            ));
        }
        let rounds_used = rounds_used(&layer, &history, state, &task_rounds);
        out.gc_effectiveness
            .push(gc_effect(&layer, &history, rounds_used, coverage));
        out.layers.push(LayerReport {
            target,
            gate: gate(pass_rate, coverage, target, config.pass_rate_target).into(),
            not_applicable: None,
            loop_stopped: loop_stopped(&layer, state),
            final_pass_rate: pass_rate,
            final_coverage: coverage,
            gc_rounds_used: rounds_used,
            history,
            layer,
        });
    }
    out
}

/// Why the layer's GC loop stopped before its last round, from the session's warnings (the
/// scheduler's words: "<layer> below its gate, GC loop stopped: <why>").
fn loop_stopped(layer: &str, state: Option<&SessionState>) -> Option<String> {
    let prefix = format!("{layer} {}", crate::tasks::LOOP_STOPPED);
    state?
        .warnings
        .iter()
        .rev()
        .find_map(|w| w.strip_prefix(&prefix).map(str::to_string))
}

/// Layer names in task order, then any layer only the run records name.
fn layer_names(critic_tasks: &[&Task], runs: &[Run]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for l in critic_tasks
        .iter()
        .filter_map(|t| t.layer.clone())
        .chain(runs.iter().map(|r| r.layer.clone()))
    {
        if !names.contains(&l) {
            names.push(l);
        }
    }
    names
}

/// One point per critic task of the layer (its latest run's figures, else its outcome's when
/// it has no run record), then the layer's runs whose task is not in tasks.json.
fn history(
    layer: &str,
    tasks: &[&Task],
    runs: &[Run],
    missing: &mut Vec<String>,
) -> Vec<RoundPoint> {
    let mut history = Vec::new();
    let mut seen_tasks = BTreeSet::new();
    for t in tasks {
        seen_tasks.insert(t.id.clone());
        let run = runs.iter().rev().find(|r| r.task_id == t.id);
        let outcome = t
            .outcome
            .as_ref()
            .filter(|_| t.status == TaskStatus::Completed);
        let (pass_rate, coverage) = match run {
            // A run stopped by its environment measured nothing.
            Some(r) if r.env_problem().is_none() => (r.record.pass_rate, r.record.coverage()),
            Some(_) => (None, None),
            None => (
                outcome.and_then(|o| o.pass_rate),
                outcome.and_then(|o| o.coverage),
            ),
        };
        if run.is_none() {
            missing.push(format!(
                "{} ({}): no run record in results/{}",
                t.id,
                t.status.as_str(),
                if outcome.is_some() {
                    "; figures taken from tasks.json"
                } else {
                    ""
                }
            ));
        }
        history.push(RoundPoint {
            task_id: t.id.clone(),
            round: t.gc_round().map_or_else(|| round_of(&t.id), |r| r as u32),
            status: t.status.as_str().to_string(),
            pass_rate,
            coverage,
            run: run.map(|r| r.file.clone()),
        });
    }
    // Runs whose task is not in tasks.json still count, after the known ones.
    for r in runs
        .iter()
        .filter(|r| r.layer == layer && !seen_tasks.contains(&r.task_id))
    {
        history.push(RoundPoint {
            task_id: r.task_id.clone(),
            round: r.round,
            status: "unknown".into(),
            pass_rate: r.record.pass_rate,
            coverage: r.record.coverage(),
            run: Some(r.file.clone()),
        });
    }
    history
}

/// The GC rounds a layer used: the most of session.json's count, the task graph's, and the
/// highest round in its history (one source may lag the others).
fn rounds_used(
    layer: &str,
    history: &[RoundPoint],
    state: Option<&SessionState>,
    task_rounds: &BTreeMap<String, u32>,
) -> u32 {
    let code = layer_code(layer).to_string();
    let from_state = state
        .and_then(|s| s.gc_rounds.get(&code).copied())
        .unwrap_or(0);
    let from_tasks = task_rounds
        .get(&code)
        .copied()
        .unwrap_or(0)
        .max(history.iter().map(|p| p.round).max().unwrap_or(0));
    from_state.max(from_tasks)
}

/// Met when the pass rate reaches the target and so does coverage (when both are known).
fn gate(
    pass_rate: Option<f64>,
    coverage: Option<f64>,
    target: Option<f64>,
    pass_rate_target: f64,
) -> &'static str {
    let met = match pass_rate {
        None => false,
        Some(p) => {
            p >= pass_rate_target
                && match (coverage, target) {
                    (Some(c), Some(t)) => c >= t,
                    _ => true,
                }
        }
    };
    if met {
        "Met"
    } else {
        "Below"
    }
}

/// GC effectiveness: the coverage of the layer's first round against its final coverage,
/// per round used, and the change of each round against the one before it.
fn gc_effect(
    layer: &str,
    history: &[RoundPoint],
    rounds_used: u32,
    final_coverage: Option<f64>,
) -> GcEffect {
    let covs: Vec<Option<f64>> = history.iter().map(|p| p.coverage).collect();
    let first = covs.iter().flatten().next().copied();
    let gained = match (first, final_coverage) {
        (Some(a), Some(b)) if history.len() > 1 => Some(b - a),
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    };
    let per_round: Vec<Option<f64>> = covs
        .windows(2)
        .map(|w| match (w[0], w[1]) {
            (Some(a), Some(b)) => Some(round_to(b - a, 2)),
            _ => None,
        })
        .collect();
    let gain_per_round = gained
        .filter(|_| rounds_used > 0)
        .map(|g| g / f64::from(rounds_used));
    GcEffect {
        layer: layer.to_string(),
        rounds_used,
        initial_coverage: first,
        final_coverage,
        coverage_gained: gained.map(|g| round_to(g, 2)),
        gain_per_round: gain_per_round.map(|g| round_to(g, 2)),
        per_round,
        rating: gc_rating(gain_per_round).to_string(),
    }
}
