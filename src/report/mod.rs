//! The analyst's report: every figure computed from the session's own files (tasks.json,
//! session.json, results/run-NNN.json, results/coverage-NNN.json) and written as
//! analysis/quality-report.md, report.html (`html/`, which also reads the coverage records, the
//! message log and the repository's files), report.json (+ report.schema.json), results.csv and
//! issues.jsonl; for a session planned with scenarios, analysis/traceability.md too.
//!
//! [`build`] reads (`load`) and computes one section after the other, each from the loaded
//! files and what the sections before it computed (no writes); [`write`] writes the files,
//! [`render`] serves the `team-testing report` command.

mod baseline;
mod document;
mod findings;
mod fix_cycle;
mod gaps;
pub mod html;
mod layers;
mod load;
mod locate;
mod markdown;
mod model;
mod numbers;
mod pr;
mod recommendations;
mod render;
mod roles;
mod sarif;
pub mod schema;
mod score;
mod sections;
#[cfg(test)]
mod tests;
mod traceability;
mod trends;

use crate::pipeline::config::TeamConfig;
use crate::session::SessionDir;

pub use findings::pattern_severity;
pub use gaps::line_ranges;
pub use layers::gc_rating;
pub use load::round_of;
pub use markdown::markdown;
pub use model::*;
pub use pr::{pr_summary, COMMENT_LIMIT};
pub use render::{render, write, ARTIFACTS, CSV_HEADER};
pub use sarif::sarif;
pub use schema::{validate, REPORT_SCHEMA};
pub use score::{
    band, band_of, quality_score, Detection, LayerFinal, NOT_SCORED, UNVERIFIED, W_COVERAGE,
    W_DETECTION, W_EFFECTIVENESS, W_GC,
};
pub use trends::{TREND_COVERAGE_POINTS, TREND_SCORE_POINTS};

// The unit tests reach these through `use super::*`.
#[cfg(test)]
use crate::util::read_json;
#[cfg(test)]
use trends::direction;

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
    let mut found = findings::findings(
        &loaded.runs,
        &loaded.graph,
        &config.gc.generator,
        &layers.final_runs,
    );
    // An earlier session's figures for trends need no traceability (nor a walk of its
    // repository for requirement files).
    let mut plan_missing = Vec::new();
    let plan = if with_trends {
        traceability::read_plan(session, &mut plan_missing)
    } else {
        None
    };
    // The matrix traces requirements (the seed writes it for the spec route): a plan without
    // acceptance criteria has none, though its rows still annotate results.csv.
    let traced = plan
        .as_ref()
        .map(|scenarios| {
            traceability::annotate_rows(&mut found.rows, scenarios);
            traceability::traceability(
                session,
                state.map(|s| s.repo.as_path()),
                scenarios,
                &loaded.runs,
            )
        })
        .filter(|t| !t.criteria.is_empty());
    findings::add_suspects(&mut found.findings.code_defects, &session.root);
    let gaps = gaps::coverage_gaps(
        &session.root,
        &loaded.runs,
        &loaded.graph,
        &layers.layers,
        &layers.final_runs,
    );
    let mutation: Option<crate::artifacts::MutationRecord> =
        crate::util::read_json(&session.root.join(crate::artifacts::MUTATION_FILE)).ok();
    let score = score::score(&layers.layers, &found, mutation.as_ref(), max_rounds);
    let missing_dependencies = missing_dependencies(&loaded.graph);
    let env_problem =
        loaded.runs.iter().any(|r| r.env_problem().is_some()) || missing_dependencies.is_some();
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
        behaviour: crate::util::read_json(&session.root.join(crate::gen::behaviour::REPORT_FILE))
            .ok(),
        repo: state.map(|s| s.repo.display().to_string()),
        created_at: state.map(|s| s.created_at.clone()),
        quality_score: score.quality_score,
        band: score.band,
        scored: score.scored,
        score: score.breakdown,
        baseline: baseline::baseline(session, &layers.final_runs),
        missing_dependencies,
        mutation,
        fix_cycle: fix_cycle::fix_cycle(session),
        traceability: traced,
        layers: layers.layers,
        defect_patterns: found.defect_patterns,
        gc_effectiveness: layers.gc_effectiveness,
        coverage_gaps: gaps.coverage_gaps,
        findings: found.findings,
        sandbox: SandboxReport {
            protections: state.and_then(|s| s.protections.clone()),
            blocked: found.blocked,
            watch: watched_layers(&layers.final_runs),
        },
        added_roles: roles::added_roles(&loaded.graph, session),
        flaky_tests: found.flaky_tests,
        quarantined: found.quarantined,
        confidence,
        trends,
        recommendations: Vec::new(),
        // In the order found: the files, then the layers, then the coverage files, then the plan.
        missing: [loaded.missing, layers.missing, gaps.missing, plan_missing].concat(),
        runs: loaded.runs.iter().map(load::Run::summary).collect(),
        rows: found.rows,
        pass_rate_target: config.pass_rate_target,
        max_gc_rounds: max_rounds,
    };
    // A test-fix session generates no layer: its result is the cycle's, not a quality score.
    if report.layers.is_empty() && report.fix_cycle.is_some() {
        report.scored = false;
        report.band = NOT_SCORED.into();
    }
    report.recommendations = recommendations::recommendations(&report);
    report
}

/// Each final layer run's file-system watch, for runs that recorded one.
fn watched_layers(final_runs: &[&load::Run]) -> Vec<model::LayerWatch> {
    final_runs
        .iter()
        .filter_map(|r| {
            let w = r.record.watch.as_ref()?;
            Some(model::LayerWatch {
                layer: r.layer.clone(),
                checked: w.checked,
                note: w.note.clone(),
                unwatched: w.unwatched.clone(),
            })
        })
        .collect()
}

/// The strategist's dependency fetch, when it failed.
fn missing_dependencies(graph: &crate::tasks::TaskGraph) -> Option<model::MissingDependencies> {
    let deps = graph
        .tasks
        .iter()
        .rev()
        .filter(|t| t.owner == "strategist")
        .find_map(|t| t.outcome.as_ref()?.data.get("dependencies").cloned())?;
    (deps["status"] == "failed").then(|| model::MissingDependencies {
        command: deps["command"].as_str().unwrap_or("").to_string(),
        problem: deps["problem"].as_str().unwrap_or("").to_string(),
    })
}
