//! The analyst's report: every figure computed from the session's own files (tasks.json,
//! session.json, results/run-NNN.json, results/coverage-NNN.json) and written as
//! analysis/quality-report.md, report.json (+ report.schema.json), results.csv and issues.jsonl.
//!
//! [`build`] reads (`load`) and computes one section after the other, each from the loaded
//! files and what the sections before it computed (no writes); [`write`] writes the files,
//! [`render`] serves the `team-testing report` command.

mod findings;
mod gaps;
mod layers;
mod load;
mod markdown;
mod model;
mod numbers;
mod recommendations;
mod roles;
pub mod schema;
mod score;
#[cfg(test)]
mod tests;
mod trends;

use std::path::Path;

use serde_json::{json, Value};

use crate::pipeline::config::TeamConfig;
use crate::session::SessionDir;
use crate::util::{atomic_write, atomic_write_json, mkdirs};

pub use findings::pattern_severity;
pub use gaps::line_ranges;
pub use layers::gc_rating;
pub use load::round_of;
pub use markdown::markdown;
pub use model::*;
pub use schema::{validate, REPORT_SCHEMA};
pub use score::{
    band, quality_score, LayerFinal, NOT_SCORED, W_COVERAGE, W_DETECTION, W_EFFECTIVENESS, W_GC,
};
pub use trends::{TREND_COVERAGE_POINTS, TREND_SCORE_POINTS};

// The unit tests reach these through `use super::*`.
#[cfg(test)]
use crate::util::read_json;
#[cfg(test)]
use trends::direction;

/// The columns of analysis/results.csv, in order.
pub const CSV_HEADER: [&str; 8] = [
    "id",
    "layer",
    "file",
    "status",
    "classification",
    "criticality",
    "duration",
    "round",
];

/// The files [`write`] produces, relative to the session folder.
pub const ARTIFACTS: [&str; 5] = [
    "analysis/quality-report.md",
    "analysis/report.json",
    "analysis/report.schema.json",
    "analysis/results.csv",
    "analysis/issues.jsonl",
];

/// Reads the session and computes the report. Writes nothing.
pub fn build(session: &SessionDir, config: &TeamConfig) -> Report {
    compose(session, config, true)
}

/// An earlier session's own figures, for this one's trends: without trends of its own, which
/// would compare it with sessions earlier still for nothing.
fn build_without_trends(session: &SessionDir, config: &TeamConfig) -> Report {
    compose(session, config, false)
}

/// The sections in order, each given what it reads explicitly.
fn compose(session: &SessionDir, config: &TeamConfig, with_trends: bool) -> Report {
    let loaded = load::load(session);
    let state = loaded.state.as_ref();
    let max_rounds = state.map_or(config.max_gc_rounds, |s| s.max_gc_rounds);
    let layers = layers::layers(&loaded.runs, &loaded.graph, state, config);
    let found = findings::findings(
        &loaded.runs,
        &loaded.graph,
        &config.gc.generator,
        &layers.final_runs,
    );
    let gaps = gaps::coverage_gaps(
        &session.root,
        &loaded.runs,
        &loaded.graph,
        &layers.layers,
        &layers.final_runs,
    );
    let score = score::score(&layers.layers, &found, max_rounds);
    let env_problem = loaded.runs.iter().any(|r| r.env_problem().is_some());
    let confidence = score::confidence(&layers.layers, &found, &gaps, env_problem);
    let trends = match state.filter(|_| with_trends) {
        Some(state) => {
            let current = trends::Current {
                layers: &layers.layers,
                quality_score: score.quality_score,
                defect_occurrences: found.defect_patterns.iter().map(|d| d.count).sum(),
            };
            trends::trends(session, state, config, &current)
        }
        None => trends::no_trends(),
    };
    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        session_id: session.id.clone(),
        repo: state.map(|s| s.repo.display().to_string()),
        created_at: state.map(|s| s.created_at.clone()),
        quality_score: score.quality_score,
        band: score.band,
        scored: score.scored,
        score: score.breakdown,
        layers: layers.layers,
        defect_patterns: found.defect_patterns,
        gc_effectiveness: layers.gc_effectiveness,
        coverage_gaps: gaps.coverage_gaps,
        findings: found.findings,
        sandbox: SandboxReport {
            protections: state.and_then(|s| s.protections.clone()),
            blocked: found.blocked,
        },
        added_roles: roles::added_roles(&loaded.graph, session),
        flaky_tests: found.flaky_tests,
        quarantined: found.quarantined,
        confidence,
        trends,
        recommendations: Vec::new(),
        // In the order found: the files, then the layers, then the coverage files.
        missing: [loaded.missing, layers.missing, gaps.missing].concat(),
        runs: loaded.runs.iter().map(load::Run::summary).collect(),
        rows: found.rows,
        pass_rate_target: config.pass_rate_target,
        max_gc_rounds: max_rounds,
    };
    report.recommendations = recommendations::recommendations(&report);
    report
}

impl Report {
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// One row per test of every run, in the column order of [`CSV_HEADER`].
    pub fn csv(&self) -> Result<String, String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        if self.rows.is_empty() {
            // Serialized rows write the header themselves; an empty CSV still gets one.
            w.write_record(CSV_HEADER).map_err(|e| e.to_string())?;
        }
        for row in &self.rows {
            w.serialize(row).map_err(|e| e.to_string())?;
        }
        let bytes = w.into_inner().map_err(|e| e.to_string())?;
        String::from_utf8(bytes).map_err(|e| e.to_string())
    }

    /// One JSON object a line per code defect.
    pub fn issues_jsonl(&self) -> String {
        let mut out = String::new();
        for d in &self.findings.code_defects {
            let error = d.evidence["error"].as_str().unwrap_or("code defect");
            let location = d.evidence["location"].as_str();
            let title = match location {
                Some(l) => format!("{error} at {l} (found by {})", d.test),
                None => format!("{error} (found by {})", d.test),
            };
            let v = json!({"title": title, "test": d.test, "file": d.file, "location": location,
                "evidence": d.evidence, "layer": d.layer, "criticality": d.criticality,
                "task_id": d.task_id, "round": d.round});
            out.push_str(&v.to_string());
            out.push('\n');
        }
        out
    }

    /// The outcome data the analyst reports (merged into meta.json under its instance).
    pub fn outcome_data(&self) -> Value {
        json!({
            "quality_score": self.quality_score, "band": self.band,
            "coverage_gaps": self.coverage_gaps,
            "top_defect_patterns": self.defect_patterns.iter().take(5).collect::<Vec<_>>(),
            "gc_effectiveness": self.gc_effectiveness,
            "recommendations": self.recommendations,
            "confidence": self.confidence,
            "missing": self.missing,
        })
    }
}

/// Writes every file of [`ARTIFACTS`] under `<session>/analysis/`.
pub fn write(session: &SessionDir, report: &Report) -> Result<Vec<String>, String> {
    let dir = session.root.join("analysis");
    mkdirs(&dir).map_err(|e| e.to_string())?;
    let put =
        |name: &str, bytes: &[u8]| atomic_write(&dir.join(name), bytes).map_err(|e| e.to_string());
    put("quality-report.md", markdown(report).as_bytes())?;
    atomic_write_json(&dir.join("report.json"), &report.to_json()).map_err(|e| e.to_string())?;
    put("report.schema.json", REPORT_SCHEMA.as_bytes())?;
    put("results.csv", report.csv()?.as_bytes())?;
    put("issues.jsonl", report.issues_jsonl().as_bytes())?;
    Ok(ARTIFACTS.iter().map(|s| s.to_string()).collect())
}

fn read_if(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .filter(|t| !t.trim().is_empty())
}

/// The report of `session` in `format` (md, json or csv): the file the analyst wrote when there
/// is one, else built fresh from the session (nothing is written).
pub fn render(session: &SessionDir, config: &TeamConfig, format: &str) -> Result<String, String> {
    let file = match format {
        "md" | "markdown" => "quality-report.md",
        "json" => "report.json",
        "csv" => "results.csv",
        other => return Err(format!("unknown report format {other:?} (md, json or csv)")),
    };
    if let Some(text) = read_if(&session.root.join("analysis").join(file)) {
        return Ok(text);
    }
    let report = build(session, config);
    match file {
        "quality-report.md" => Ok(markdown(&report)),
        "report.json" => serde_json::to_string_pretty(&report.to_json())
            .map(|s| s + "\n")
            .map_err(|e| e.to_string()),
        _ => report.csv(),
    }
}
