//! The analyst's report: every figure computed from the session's own files (tasks.json,
//! session.json, results/run-NNN.json, results/coverage-NNN.json) and written as
//! analysis/quality-report.md, report.json (+ report.schema.json), results.csv and issues.jsonl.
//!
//! [`build`] reads and computes (no writes), [`write`] writes the files, [`render`] serves the
//! `team-testing report` command.

mod load;
mod markdown;
mod model;
mod numbers;
mod recommendations;
mod roles;
pub mod schema;
#[cfg(test)]
mod tests;
mod trends;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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

use serde_json::{json, Value};

use crate::pipeline::config::TeamConfig;
use crate::session::SessionDir;
use crate::tasks::{layer_code, TaskStatus};
use crate::util::{atomic_write, atomic_write_json, mkdirs, read_json};

use load::{is_failing, str_of, Run};
use numbers::{mean, round_to, share};

// The unit tests reach it through `use super::*`.
#[cfg(test)]
use trends::direction;

pub use load::round_of;
pub use markdown::markdown;
pub use model::*;
pub use schema::{validate, REPORT_SCHEMA};
pub use trends::{TREND_COVERAGE_POINTS, TREND_SCORE_POINTS};

/// Score weights, in points out of 100.
pub const W_COVERAGE: f64 = 30.0;
pub const W_EFFECTIVENESS: f64 = 25.0;
pub const W_DETECTION: f64 = 25.0;
pub const W_GC: f64 = 20.0;
/// The band of a session none of whose layers had anything to test.
pub const NOT_SCORED: &str = "not scored";

/// The files [`write`] produces, relative to the session folder.
pub const ARTIFACTS: [&str; 5] = [
    "analysis/quality-report.md",
    "analysis/report.json",
    "analysis/report.schema.json",
    "analysis/results.csv",
    "analysis/issues.jsonl",
];

pub fn band(score: f64) -> &'static str {
    if score >= 80.0 {
        "good"
    } else if score >= 60.0 {
        "needs improvement"
    } else {
        "concerning"
    }
}

/// One layer's final figures, as the score formula takes them.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerFinal {
    pub pass_rate: f64,
    pub coverage: Option<f64>,
    pub target: Option<f64>,
}

/// The quality score (0..100, one decimal) and its four terms (each 0..1). No layer: 0.
pub fn quality_score(
    layers: &[LayerFinal],
    failing: usize,
    classified: usize,
    rounds_used: u32,
    max_rounds: u32,
) -> (f64, [f64; 4]) {
    if layers.is_empty() {
        return (0.0, [0.0; 4]);
    }
    let cov = mean(
        &layers
            .iter()
            .map(|l| match (l.coverage, l.target.filter(|t| *t > 0.0)) {
                (Some(c), Some(t)) => (c / t).min(1.0),
                _ => l.pass_rate,
            })
            .collect::<Vec<_>>(),
    );
    let eff = mean(&layers.iter().map(|l| l.pass_rate).collect::<Vec<_>>());
    let det = share(classified, failing, 1.0);
    let budget = f64::from(max_rounds) * layers.len() as f64;
    let gc = if budget > 0.0 {
        (1.0 - f64::from(rounds_used) / budget).clamp(0.0, 1.0)
    } else {
        1.0
    };
    let score = W_COVERAGE * cov + W_EFFECTIVENESS * eff + W_DETECTION * det + W_GC * gc;
    (round_to(score, 1), [cov, eff, det, gc])
}

pub fn pattern_severity(count: usize) -> &'static str {
    match count {
        c if c >= 3 => "HIGH",
        2 => "MEDIUM",
        _ => "LOW",
    }
}

pub fn gc_rating(gain_per_round: Option<f64>) -> &'static str {
    match gain_per_round {
        None => "n/a",
        Some(g) if g > 10.0 => "HIGH",
        Some(g) if g > 5.0 => "MEDIUM",
        Some(_) => "LOW",
    }
}

/// Sorted line numbers as ranges: [12,13,14,15,20] → "12-15, 20".
pub fn line_ranges(lines: &[u64]) -> String {
    let mut l: Vec<u64> = lines.to_vec();
    l.sort_unstable();
    l.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < l.len() {
        let start = l[i];
        let mut end = start;
        while i + 1 < l.len() && l[i + 1] == end + 1 {
            i += 1;
            end = l[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(", ")
}

/// Reads the session and computes the report. Writes nothing.
pub fn build(session: &SessionDir, config: &TeamConfig) -> Report {
    build_inner(session, config, true)
}

/// An earlier session's own figures, for this one's trends: without trends of its own, which
/// would compare it with sessions earlier still for nothing.
fn build_without_trends(session: &SessionDir, config: &TeamConfig) -> Report {
    build_inner(session, config, false)
}

fn build_inner(session: &SessionDir, config: &TeamConfig, with_trends: bool) -> Report {
    let load::Loaded {
        state,
        graph,
        runs,
        mut missing,
    } = load::load(session);
    let max_rounds = state
        .as_ref()
        .map_or(config.max_gc_rounds, |s| s.max_gc_rounds);
    let critic = config.gc.critic.as_str();

    // Layers, in task order, then any layer only the run records name.
    let mut layer_names: Vec<String> = Vec::new();
    let critic_tasks: Vec<_> = graph
        .tasks
        .iter()
        .filter(|t| t.owner == critic && t.layer.is_some() && t.status != TaskStatus::Deleted)
        .collect();
    for l in critic_tasks
        .iter()
        .filter_map(|t| t.layer.clone())
        .chain(runs.iter().map(|r| r.layer.clone()))
    {
        if !layer_names.contains(&l) {
            layer_names.push(l);
        }
    }

    let gate_met = |p: Option<f64>, c: Option<f64>, t: Option<f64>| match p {
        None => false,
        Some(p) => {
            p >= config.pass_rate_target
                && match (c, t) {
                    (Some(c), Some(t)) => c >= t,
                    _ => true,
                }
        }
    };
    let task_rounds = graph.gc_rounds();
    let mut layers = Vec::new();
    let mut finals = Vec::new();
    let mut gc_effectiveness = Vec::new();
    let mut final_runs: Vec<&Run> = Vec::new();
    for layer in &layer_names {
        let of_layer = || {
            critic_tasks
                .iter()
                .filter(move |t| t.layer.as_deref() == Some(layer.as_str()))
        };
        let never_ran = !runs.iter().any(|r| &r.layer == layer);
        if never_ran && of_layer().all(|t| t.status == TaskStatus::NotApplicable) {
            // Nothing to do for this layer: reported with its reason, left out of the score.
            layers.push(LayerReport {
                layer: layer.clone(),
                target: config.coverage_target(layer),
                gate: "NotApplicable".into(),
                not_applicable: of_layer().find_map(|t| t.reason.clone()),
                final_pass_rate: None,
                final_coverage: None,
                gc_rounds_used: 0,
                history: Vec::new(),
            });
            continue;
        }
        let target = config.coverage_target(layer).or_else(|| {
            critic_tasks
                .iter()
                .find(|t| t.layer.as_deref() == Some(layer))
                .and_then(|t| t.coverage_target())
        });
        let mut history = Vec::new();
        let mut seen_tasks = BTreeSet::new();
        for t in critic_tasks
            .iter()
            .filter(|t| t.layer.as_deref() == Some(layer.as_str()))
        {
            seen_tasks.insert(t.id.clone());
            let run = runs.iter().rev().find(|r| r.task_id == t.id);
            let outcome = t
                .outcome
                .as_ref()
                .filter(|_| t.status == TaskStatus::Completed);
            let (pass_rate, coverage) = match run {
                Some(r) if r.env_problem().is_none() => {
                    (r.v["pass_rate"].as_f64(), r.v["coverage"].as_f64())
                }
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
                round: t
                    .meta
                    .get("gc_round")
                    .and_then(Value::as_u64)
                    .map_or_else(|| round_of(&t.id), |r| r as u32),
                status: t.status.as_str().to_string(),
                pass_rate,
                coverage,
                run: run.map(|r| r.file.clone()),
            });
        }
        // Runs whose task is not in tasks.json still count, after the known ones.
        for r in runs
            .iter()
            .filter(|r| &r.layer == layer && !seen_tasks.contains(&r.task_id))
        {
            history.push(RoundPoint {
                task_id: r.task_id.clone(),
                round: r.round,
                status: "unknown".into(),
                pass_rate: r.v["pass_rate"].as_f64(),
                coverage: r.v["coverage"].as_f64(),
                run: Some(r.file.clone()),
            });
        }
        let last = history.iter().rev().find(|p| p.pass_rate.is_some());
        let (fp, fc) = (
            last.and_then(|p| p.pass_rate),
            last.and_then(|p| p.coverage),
        );
        if let Some(run) = last
            .and_then(|p| p.run.as_ref())
            .and_then(|f| runs.iter().find(|r| &r.file == f))
        {
            final_runs.push(run);
        }
        if fp.is_none() {
            missing.push(format!("{layer}: no completed test run"));
        } else if fc.is_none() {
            missing.push(format!(
                "{layer}: coverage unknown (no coverage data); judged on pass rate alone"
            ));
        }
        let code = layer_code(layer).to_string();
        let from_state = state
            .as_ref()
            .and_then(|s| s.gc_rounds.get(&code).copied())
            .unwrap_or(0);
        let from_tasks = task_rounds
            .get(&code)
            .copied()
            .unwrap_or(0)
            .max(history.iter().map(|p| p.round).max().unwrap_or(0));
        let rounds_used = from_state.max(from_tasks);
        // GC effectiveness: coverage of the first run against the last.
        let covs: Vec<Option<f64>> = history.iter().map(|p| p.coverage).collect();
        let first = covs.iter().flatten().next().copied();
        let gained = match (first, fc) {
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
        gc_effectiveness.push(GcEffect {
            layer: layer.clone(),
            rounds_used,
            initial_coverage: first,
            final_coverage: fc,
            coverage_gained: gained.map(|g| round_to(g, 2)),
            gain_per_round: gain_per_round.map(|g| round_to(g, 2)),
            per_round,
            rating: gc_rating(gain_per_round).to_string(),
        });
        finals.push(LayerFinal {
            pass_rate: fp.unwrap_or(0.0),
            coverage: fc,
            target,
        });
        layers.push(LayerReport {
            layer: layer.clone(),
            target,
            gate: if gate_met(fp, fc, target) {
                "Met"
            } else {
                "Below"
            }
            .into(),
            not_applicable: None,
            final_pass_rate: fp,
            final_coverage: fc,
            gc_rounds_used: rounds_used,
            history,
        });
    }

    // Defect patterns: every failing test record of every run, by classification:error.
    let mut patterns: BTreeMap<String, (usize, BTreeSet<String>, BTreeSet<String>)> =
        BTreeMap::new();
    let (mut failing, mut classified, mut diagnosed, mut env_failures) = (0, 0, 0, 0);
    for r in &runs {
        for t in r.tests().filter(|t| is_failing(t)) {
            failing += 1;
            let class = str_of(&t["classification"]);
            if class.is_some() {
                classified += 1;
                let loc = t["evidence"]["location"].as_str().unwrap_or("");
                if !loc.is_empty() {
                    diagnosed += 1;
                }
            }
            if class.as_deref() == Some("env_issue") {
                env_failures += 1;
            }
            let kind = match (class, str_of(&t["evidence"]["error"])) {
                (Some(c), Some(e)) => format!("{c}:{e}"),
                (Some(c), None) => c,
                _ => "unclassified".into(),
            };
            let e = patterns.entry(kind).or_default();
            e.0 += 1;
            e.1.insert(str_of(&t["id"]).unwrap_or_default());
            if let Some(f) = str_of(&t["file"]) {
                e.2.insert(f);
            }
        }
    }
    let mut defect_patterns: Vec<DefectPattern> = patterns
        .into_iter()
        .map(|(kind, (count, tests, files))| DefectPattern {
            kind,
            count,
            severity: pattern_severity(count).into(),
            tests: tests.into_iter().collect(),
            files: files.into_iter().collect(),
        })
        .collect();
    defect_patterns.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.kind.cmp(&b.kind)));

    // Code defects (latest record per test), flaky and quarantined tests.
    let mut code_defects: BTreeMap<String, CodeDefect> = BTreeMap::new();
    let mut flaky: BTreeMap<String, FlakyTest> = BTreeMap::new();
    let mut quarantined: BTreeMap<String, QuarantinedTest> = BTreeMap::new();
    let mut load_errors: BTreeMap<String, (LoadErrorFinding, Value, u32)> = BTreeMap::new();
    let mut distinct_tests: BTreeSet<String> = BTreeSet::new();
    let mut rows = Vec::new();
    for r in &runs {
        for id in r.v["flaky"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            flaky.insert(
                id.to_string(),
                FlakyTest {
                    test: id.into(),
                    layer: r.layer.clone(),
                    task_id: r.task_id.clone(),
                },
            );
        }
        for le in r.v["load_errors"].as_array().into_iter().flatten() {
            let Some(file) = str_of(&le["file"]) else {
                continue;
            };
            let finding = LoadErrorFinding {
                file: file.clone(),
                layer: r.layer.clone(),
                task_id: r.task_id.clone(),
                classification: str_of(&le["verdict"]["classification"]),
                reason: str_of(&le["verdict"]["reason"])
                    .or_else(|| str_of(&le["error"]).map(|e| e.lines().last().unwrap_or("").into()))
                    .unwrap_or_default(),
                location: str_of(&le["verdict"]["location"]),
                install: str_of(&le["verdict"]["install"]),
            };
            // The latest record of a file wins.
            load_errors.insert(
                format!("{}/{file}", r.layer),
                (finding, le.clone(), r.round),
            );
        }
        for q in r.v["quarantined"].as_array().into_iter().flatten() {
            let Some(id) = str_of(&q["id"]) else { continue };
            quarantined.entry(id.clone()).or_insert(QuarantinedTest {
                test: id,
                whole_file: q["file"].as_bool().unwrap_or(false),
                reason: str_of(&q["reason"]).unwrap_or_else(|| "no reason recorded".into()),
                task_id: str_of(&q["task_id"]).unwrap_or_else(|| r.task_id.clone()),
            });
        }
        for t in r.tests() {
            let id = str_of(&t["id"]).unwrap_or_default();
            distinct_tests.insert(id.clone());
            let status = str_of(&t["status"]).unwrap_or_default();
            if status == "flaky" {
                flaky.insert(
                    id.clone(),
                    FlakyTest {
                        test: id.clone(),
                        layer: r.layer.clone(),
                        task_id: r.task_id.clone(),
                    },
                );
            }
            if t["classification"].as_str() == Some("code_defect") && is_failing(t) {
                code_defects.insert(
                    id.clone(),
                    CodeDefect {
                        test: id.clone(),
                        layer: r.layer.clone(),
                        file: str_of(&t["file"]),
                        task_id: r.task_id.clone(),
                        round: r.round,
                        criticality: str_of(&t["criticality"]),
                        message: str_of(&t["message"]),
                        evidence: t["evidence"].clone(),
                    },
                );
            }
            rows.push(CsvRow {
                id,
                layer: r.layer.clone(),
                file: str_of(&t["file"]).unwrap_or_default(),
                status,
                classification: str_of(&t["classification"]).unwrap_or_default(),
                criticality: str_of(&t["criticality"]).unwrap_or_default(),
                duration: t["duration_s"].as_f64(),
                round: r.round,
            });
        }
    }
    // Contract findings of the generator tasks.
    let mut contract_findings: Vec<Value> = Vec::new();
    let mut side_effects: Vec<Value> = Vec::new();
    let mut skipped_examples: Vec<Value> = Vec::new();
    let mut blocked: Vec<Value> = Vec::new();
    for t in graph
        .tasks
        .iter()
        .filter(|t| t.owner == config.gc.generator)
    {
        let list = t
            .outcome
            .as_ref()
            .and_then(|o| o.data.get("findings"))
            .and_then(Value::as_array);
        for f in list.into_iter().flatten() {
            let mut f = f.clone();
            if let Some(o) = f.as_object_mut() {
                o.insert("task_id".into(), json!(t.id));
            }
            let key = |v: &Value| {
                (
                    v["module"].clone(),
                    v["function"].clone(),
                    v["call"].clone(),
                )
            };
            let list = match f["kind"].as_str() {
                Some("env_issue" | "sandbox_denied") => &mut blocked,
                Some("side_effect") => &mut side_effects,
                Some("skipped_example") => &mut skipped_examples,
                _ => &mut contract_findings,
            };
            if !list.iter().any(|x| key(x) == key(&f)) {
                list.push(f);
            }
        }
    }

    // Coverage gaps per module, from the coverage file of each layer's final run.
    let mut coverage_gaps = Vec::new();
    let mut exercised: BTreeSet<String> = BTreeSet::new();
    let mut scope: BTreeSet<String> = BTreeSet::new();
    for r in &runs {
        for p in r.v["coverage_scope"].as_array().into_iter().flatten() {
            if let Some(p) = p.as_str() {
                scope.insert(p.to_string());
            }
        }
        let Some(cf) = r.v["coverage_file"].as_str() else {
            continue;
        };
        let detail = match read_json::<Value>(&session.root.join(cf)) {
            Ok(d) => d,
            Err(e) => {
                missing.push(format!("{cf} (named by {}): {e}", r.file));
                continue;
            }
        };
        for f in detail["files"].as_array().into_iter().flatten() {
            let path = str_of(&f["path"]).unwrap_or_default();
            if f["lines_covered"].as_u64().unwrap_or(0) > 0 {
                exercised.insert(path.clone());
            }
            if !final_runs.iter().any(|fr| fr.file == r.file) {
                continue;
            }
            let pct = f["line_percent"].as_f64().unwrap_or_else(|| {
                let total = f["lines_total"].as_f64().unwrap_or(0.0);
                if total > 0.0 {
                    100.0 * f["lines_covered"].as_f64().unwrap_or(0.0) / total
                } else {
                    100.0
                }
            });
            let lines: Vec<u64> = f["missing_lines"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_u64)
                .collect();
            let target = layers
                .iter()
                .find(|l| l.layer == r.layer)
                .and_then(|l| l.target);
            let gap = target.map_or(0.0, |t| (t - pct).max(0.0));
            if lines.is_empty() && gap == 0.0 {
                continue;
            }
            let uncovered = line_ranges(&lines);
            let recommendation = if pct == 0.0 {
                format!("{path} is never exercised: add {} tests that import it and call its public functions", r.layer)
            } else if gap > 0.0 {
                format!(
                    "add {} tests reaching lines {uncovered} to close the {gap:.1}-point gap",
                    r.layer
                )
            } else {
                format!("meets the target; cover lines {uncovered} if they hold error handling or edge cases")
            };
            coverage_gaps.push(CoverageGap {
                layer: r.layer.clone(),
                module: path,
                line_percent: round_to(pct, 2),
                target,
                gap: round_to(gap, 2),
                uncovered,
                recommendation,
            });
        }
    }
    coverage_gaps.sort_by(|a, b| {
        b.gap
            .total_cmp(&a.gap)
            .then_with(|| a.layer.cmp(&b.layer))
            .then_with(|| a.module.cmp(&b.module))
    });
    if scope.is_empty() {
        // The strategist's priority files are the scope when no run named one.
        for t in graph.tasks.iter().filter(|t| t.owner == "strategist") {
            let list = t
                .outcome
                .as_ref()
                .and_then(|o| o.data.get("priority_files"))
                .and_then(Value::as_array);
            for p in list.into_iter().flatten().filter_map(Value::as_str) {
                scope.insert(p.to_string());
            }
        }
    }

    let rounds_used: u32 = layers.iter().map(|l| l.gc_rounds_used).sum();
    // No layer with a completed run: nothing was measured, the score is 0.
    if layers.iter().all(|l| l.final_pass_rate.is_none()) {
        finals.clear();
    }
    let (quality, [cov, eff, det, gc]) =
        quality_score(&finals, failing, classified, rounds_used, max_rounds);
    let scored = layers.is_empty() || layers.iter().any(|l| l.not_applicable.is_none());
    let weights: BTreeMap<String, f64> = [
        ("coverage_achievement", W_COVERAGE),
        ("test_effectiveness", W_EFFECTIVENESS),
        ("defect_detection", W_DETECTION),
        ("gc_efficiency", W_GC),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let score = ScoreBreakdown {
        weights,
        coverage_achievement: round_to(cov, 4),
        test_effectiveness: round_to(eff, 4),
        defect_detection: round_to(det, 4),
        gc_efficiency: round_to(gc, 4),
        gc_rounds_used: rounds_used,
        gc_budget: max_rounds * layers.iter().filter(|l| l.not_applicable.is_none()).count() as u32,
        failing_tests: failing,
        classified_failing_tests: classified,
    };

    let env_problem = runs.iter().any(|r| r.env_problem().is_some());
    let load_findings = load_error_findings(load_errors, &final_runs, &mut code_defects);
    let flaky_or_q: BTreeSet<&String> = flaky.keys().chain(quarantined.keys()).collect();
    let all_tests: BTreeSet<&String> = distinct_tests.iter().chain(quarantined.keys()).collect();
    let c = [
        share(
            scope.iter().filter(|m| exercised.contains(*m)).count(),
            scope.len(),
            0.0,
        ),
        share(
            all_tests.len() - flaky_or_q.len().min(all_tests.len()),
            all_tests.len(),
            0.0,
        ),
        share(diagnosed, failing, 1.0),
        share(
            layers.iter().filter(|l| l.gate == "Met").count(),
            layers.iter().filter(|l| l.not_applicable.is_none()).count(),
            0.0,
        ),
        if env_problem {
            0.0
        } else {
            1.0 - share(env_failures, failing, 0.0)
        },
    ];
    let confidence = Confidence {
        scenario_coverage: round_to(c[0], 4),
        test_quality: round_to(c[1], 4),
        diagnostic_accuracy: round_to(c[2], 4),
        strategy_effectiveness: round_to(c[3], 4),
        infrastructure_fitness: round_to(c[4], 4),
        overall: round_to(mean(&c), 4),
    };

    let run_summaries: Vec<RunSummary> = runs.iter().map(Run::summary).collect();

    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        session_id: session.id.clone(),
        repo: state.as_ref().map(|s| s.repo.display().to_string()),
        created_at: state.as_ref().map(|s| s.created_at.clone()),
        quality_score: quality,
        band: if scored {
            band(quality).into()
        } else {
            NOT_SCORED.into()
        },
        scored,
        score,
        layers,
        defect_patterns,
        gc_effectiveness,
        coverage_gaps,
        findings: Findings {
            code_defects: code_defects.into_values().collect(),
            contract_findings,
            side_effects,
            skipped_examples,
            load_errors: load_findings,
        },
        sandbox: SandboxReport {
            protections: state.as_ref().and_then(|s| s.protections.clone()),
            blocked,
        },
        added_roles: roles::added_roles(&graph, session),
        flaky_tests: flaky.into_values().collect(),
        quarantined: quarantined.into_values().collect(),
        confidence,
        trends: trends::no_trends(),
        recommendations: Vec::new(),
        missing,
        runs: run_summaries,
        rows,
        pass_rate_target: config.pass_rate_target,
        max_gc_rounds: max_rounds,
    };
    if with_trends {
        if let Some(state) = &state {
            let current = trends::Current {
                layers: &report.layers,
                quality_score: report.quality_score,
                defect_occurrences: report.defect_patterns.iter().map(|d| d.count).sum(),
            };
            report.trends = trends::trends(session, state, config, &current);
        }
    }
    report.recommendations = recommendations::recommendations(&report);
    report
}

/// The load errors that still hold at the end: files the layer's last run still holds in
/// quarantine (a file regenerated since and loading fine is no finding). One whose cause is the
/// project's own code (a syntax error there) is a code defect like any other.
fn load_error_findings(
    all: BTreeMap<String, (LoadErrorFinding, Value, u32)>,
    final_runs: &[&Run],
    code_defects: &mut BTreeMap<String, CodeDefect>,
) -> Vec<LoadErrorFinding> {
    let still_out = |layer: &str, file: &str| {
        final_runs.iter().any(|r| {
            r.layer == layer
                && r.v["quarantined"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|q| q["id"] == file)
        })
    };
    let mut out = Vec::new();
    for (key, (finding, record, round)) in all {
        if !still_out(&finding.layer, &finding.file) {
            continue;
        }
        if finding.classification.as_deref() == Some("code_defect") {
            let v = &record["verdict"];
            code_defects.insert(
                key,
                CodeDefect {
                    test: finding.file.clone(),
                    layer: finding.layer.clone(),
                    file: Some(finding.file.clone()),
                    task_id: finding.task_id.clone(),
                    round,
                    criticality: str_of(&v["criticality"]),
                    message: Some(finding.reason.clone()),
                    evidence: json!({"location": finding.location, "error": v["error"],
                                     "excerpt": v["excerpt"], "kind": "load_error"}),
                },
            );
        }
        out.push(finding);
    }
    out
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
