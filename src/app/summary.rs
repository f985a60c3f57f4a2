//! What a finished run produced, as data: the `--json` summary, each layer's final result, the
//! score and the deliverables. The CLI prints it; nothing here writes.

use crate::actors::coordinator::RunEnd;
use crate::error::Result;
use crate::session::{SessionDir, SessionState};
use crate::tasks::TaskGraph;

/// How the run ended, as one JSON object (`--json`).
pub fn summary_json(session: &SessionDir, end: &RunEnd) -> Result<serde_json::Value> {
    let graph = session.load_tasks()?;
    let state = session.load_state()?;
    Ok(serde_json::json!({
        "session_id": session.id,
        "session_dir": session.root,
        "status": end.status.as_str(),
        "pipeline_mode": state.pipeline_mode,
        "tasks_total": graph.len(),
        "tasks_completed": graph.count(crate::tasks::TaskStatus::Completed),
        "tasks_not_applicable": graph.count(crate::tasks::TaskStatus::NotApplicable),
        "gc_rounds": state.gc_rounds,
        "layers": final_layer_results(&graph, &state),
        "quality_score": quality_score(session)
            .filter(|(_, band)| band != crate::report::NOT_SCORED)
            .map(|(score, _)| score),
        "deliverables": deliverables(session),
        "first_tests_s": first_tests_s(&graph, &state),
        "warnings": end.warnings,
    }))
}

/// The analyst's score and band, when a report was written.
pub fn quality_score(session: &SessionDir) -> Option<(f64, String)> {
    let report: serde_json::Value =
        crate::util::read_json(&session.root.join("analysis/report.json")).ok()?;
    let score = report["quality_score"].as_f64()?;
    Some((score, report["band"].as_str().unwrap_or("").to_string()))
}

/// What the session produced, relative to its folder: the strategy, the tests per layer, the
/// report, and the files of dynamic roles.
pub fn deliverables(session: &SessionDir) -> Vec<String> {
    let mut out = Vec::new();
    for f in [
        "strategy/test-strategy.md",
        "analysis/quality-report.md",
        "iteration-state.json",
        "analysis/fault-localisation.md",
        "fixes/combined.patch",
    ] {
        if session.root.join(f).is_file() {
            out.push(f.to_string());
        }
    }
    for layer in crate::session::LAYER_DIRS {
        let n = std::fs::read_dir(session.root.join("tests").join(layer))
            .map(|rd| rd.flatten().filter(|e| e.path().is_file()).count())
            .unwrap_or(0);
        if n > 0 {
            out.push(format!("tests/{layer}/ ({n} files)"));
        }
    }
    out
}

/// Seconds from the session's start to its first round of generated tests (the first generator
/// task that wrote any): how long a user waits for something to look at.
pub fn first_tests_s(graph: &TaskGraph, state: &SessionState) -> Option<f64> {
    let start = crate::util::parse_ts(&state.created_at)?;
    graph
        .tasks
        .iter()
        .filter(|t| t.owner == "generator" && t.status == crate::tasks::TaskStatus::Completed)
        .filter_map(|t| {
            let data = &t.outcome.as_ref()?.data;
            // A long first round wrote a short search's tests ahead of its own.
            if let Some(first) = data.get("first_tests_at").and_then(|a| a.as_str()) {
                return crate::util::parse_ts(first);
            }
            let tests = data.get("tests").and_then(|n| n.as_u64()).unwrap_or(0);
            (tests > 0).then(|| crate::util::parse_ts(t.completed_at.as_deref()?))?
        })
        .map(|done| (done - start).num_milliseconds() as f64 / 1000.0)
        .min_by(f64::total_cmp)
}

/// The last completed TESTRUN result of each layer.
pub fn final_layer_results(graph: &TaskGraph, state: &SessionState) -> serde_json::Value {
    let mut layers = serde_json::Map::new();
    for t in &graph.tasks {
        let Some(layer) = &t.layer else {
            continue;
        };
        // The generator's verdict stands for the layer: its run never happened.
        if t.status == crate::tasks::TaskStatus::NotApplicable && t.outcome.is_some() {
            layers.insert(
                layer.clone(),
                serde_json::json!({"task_id": t.id, "status": "not_applicable",
                                   "not_applicable": t.reason, "gc_rounds": 0}),
            );
            continue;
        }
        let Some(o) = &t.outcome else {
            continue;
        };
        if o.pass_rate.is_none() || t.status != crate::tasks::TaskStatus::Completed {
            continue;
        }
        let code = crate::tasks::layer_code(layer).to_string();
        layers.insert(
            layer.clone(),
            serde_json::json!({
                "task_id": t.id,
                "pass_rate": o.pass_rate,
                "coverage": o.coverage,
                "gc_rounds": state.gc_rounds.get(&code).copied().unwrap_or(0),
            }),
        );
    }
    serde_json::Value::Object(layers)
}
