//! Analyst: reads every task and every run record and writes analysis/quality-report.md: the runs
//! of each layer against its gate, the GC rounds used, the defect patterns and a quality score
//! whose formula is written out with the session's own numbers.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use super::executor::is_run_file;
use super::util::to_map;
use super::RoleContext;
use crate::tasks::{layer_code, Outcome, Task, TaskStatus};
use crate::util::{atomic_write, mkdirs, now_ts, read_json};

/// The last completed run of a layer, as the score sees it.
#[derive(Debug, Clone, PartialEq)]
struct LayerFinal {
    pass_rate: f64,
    coverage: Option<f64>,
    target: Option<f64>,
}

/// How often one test failed across every run, and the kind of its last error.
#[derive(Debug, Default)]
struct Defect {
    count: usize,
    kind: String,
    message: String,
}

fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

/// 40 × mean pass rate + 40 × mean min(1, coverage/target) (the pass-rate term when no layer has
/// known coverage) + 20 × (1 − rounds used / (max rounds × layers)). No layer run scores 0.
fn quality_score(layers: &[LayerFinal], gc_used: u32, max_rounds: u32) -> (f64, [f64; 3]) {
    if layers.is_empty() {
        return (0.0, [0.0; 3]);
    }
    let pass = mean(&layers.iter().map(|l| l.pass_rate).collect::<Vec<_>>());
    let ratios: Vec<f64> = layers
        .iter()
        .filter_map(|l| Some((l.coverage?, l.target.filter(|t| *t > 0.0)?)))
        .map(|(c, t)| (c / t).min(1.0))
        .collect();
    let cov = if ratios.is_empty() {
        pass
    } else {
        mean(&ratios)
    };
    let budget = f64::from(max_rounds) * layers.len() as f64;
    let gc = if budget > 0.0 {
        (1.0 - f64::from(gc_used) / budget).clamp(0.0, 1.0)
    } else {
        1.0
    };
    let score = 40.0 * pass + 40.0 * cov + 20.0 * gc;
    ((score * 10.0).round() / 10.0, [pass, cov, gc])
}

fn band(score: f64) -> &'static str {
    if score >= 80.0 {
        "good"
    } else if score >= 60.0 {
        "needs improvement"
    } else {
        "concerning"
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("unknown".into(), |v| format!("{v:.1}%"))
}

/// Every results/run-*.json in name order; empty or broken files (an interrupted attempt) are named.
fn load_runs(ctx: &RoleContext) -> (Vec<Value>, Vec<String>) {
    let dir = ctx.session.root.join("results");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| is_run_file(n))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let (mut runs, mut bad) = (Vec::new(), Vec::new());
    for n in names {
        match read_json::<Value>(&dir.join(&n)) {
            Ok(v) => runs.push(v),
            Err(e) => bad.push(format!("{n}: {e}")),
        }
    }
    (runs, bad)
}

fn defect_patterns(runs: &[Value]) -> Vec<(String, Defect)> {
    let mut by_name: BTreeMap<String, Defect> = BTreeMap::new();
    // The executor's per-test records: every failing test with its classification.
    let failing = runs
        .iter()
        .flat_map(|r| r["tests"].as_array().cloned().unwrap_or_default())
        .filter(|t| matches!(t["status"].as_str(), Some("failed" | "error")));
    for f in failing {
        let message = f["message"].as_str().unwrap_or("").trim().to_string();
        let d = by_name
            .entry(f["id"].as_str().unwrap_or("?").to_string())
            .or_default();
        d.count += 1;
        d.kind = match (
            f["classification"].as_str(),
            f["evidence"]["error"].as_str(),
        ) {
            (Some(c), Some(e)) => format!("{c} ({e})"),
            (Some(c), None) => c.to_string(),
            _ => "unclassified".to_string(),
        };
        d.message = message
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(120)
            .collect();
    }
    let mut list: Vec<(String, Defect)> = by_name.into_iter().collect();
    list.sort_by(|a, b| b.1.count.cmp(&a.1.count).then_with(|| a.0.cmp(&b.0)));
    list
}

pub fn run(ctx: &RoleContext) -> Outcome {
    let graph = match ctx.session.load_tasks() {
        Ok(g) => g,
        Err(e) => return Outcome::failed(format!("cannot read the task graph: {e}")),
    };
    let (runs, bad_runs) = load_runs(ctx);
    (ctx.progress)(
        "context_loaded",
        Some(10.0),
        Some(format!(
            "{} tasks, {} run records",
            graph.tasks.len(),
            runs.len()
        )),
    );
    let critic = ctx.config.gc.critic.as_str();
    let test_runs: Vec<&Task> = graph
        .tasks
        .iter()
        .filter(|t| t.owner == critic && t.layer.is_some())
        .collect();
    let mut layers: Vec<String> = Vec::new();
    for l in test_runs.iter().filter_map(|t| t.layer.clone()) {
        if !layers.contains(&l) {
            layers.push(l);
        }
    }
    let gate = ctx.config.pass_rate_target;
    // Unknown coverage (or no target) is judged on the pass rate alone, like the GC checkpoint.
    let met = |p: f64, c: Option<f64>, t: Option<f64>| {
        p >= gate
            && match (c, t) {
                (Some(c), Some(t)) => c >= t,
                _ => true,
            }
    };
    let mut md = String::new();
    let (mut finals, mut layer_data, mut gc_total) = (Vec::new(), Map::new(), 0u32);
    for layer in &layers {
        let target = ctx.config.coverage_target(layer);
        let _ = write!(md, "\n### {layer} (coverage target {})\n\n| Task | Status | Pass rate | Coverage | Target | Gate |\n|---|---|---|---|---|---|\n", pct(target));
        let mut rows = Vec::new();
        let mut last: Option<LayerFinal> = None;
        for t in test_runs
            .iter()
            .filter(|t| t.layer.as_deref() == Some(layer.as_str()))
        {
            let o = t
                .outcome
                .as_ref()
                .filter(|_| t.status == TaskStatus::Completed);
            let (p, c) = (o.and_then(|o| o.pass_rate), o.and_then(|o| o.coverage));
            let verdict = p
                .map(|p| if met(p, c, target) { "Met" } else { "Below" })
                .unwrap_or("-");
            let pass_text = p.map_or("-".into(), |p| format!("{:.1}%", p * 100.0));
            let _ = writeln!(
                md,
                "| {} | {} | {pass_text} | {} | {} | {verdict} |",
                t.id,
                t.status.as_str(),
                pct(c),
                pct(target)
            );
            rows.push(json!({"task_id": t.id, "status": t.status.as_str(), "pass_rate": p, "coverage": c, "gate": verdict}));
            if let Some(p) = p {
                last = Some(LayerFinal {
                    pass_rate: p,
                    coverage: c,
                    target,
                });
            }
        }
        // A layer with no completed run did not pass anything.
        let fin = last.unwrap_or(LayerFinal {
            pass_rate: 0.0,
            coverage: None,
            target,
        });
        let prefix = format!("TESTRUN-{}-fix-", layer_code(layer));
        let rounds = graph
            .tasks
            .iter()
            .filter(|t| t.id.starts_with(&prefix) && t.status != TaskStatus::Deleted)
            .count() as u32;
        gc_total += rounds;
        let verdict = if met(fin.pass_rate, fin.coverage, target) {
            "Met"
        } else {
            "Below"
        };
        let _ = writeln!(
            md,
            "\nFinal: pass {:.1}%, coverage {} -> {verdict}. GC rounds used: {rounds} of {}.",
            fin.pass_rate * 100.0,
            pct(fin.coverage),
            ctx.config.max_gc_rounds
        );
        layer_data.insert(layer.clone(), json!({"runs": rows, "final_pass_rate": fin.pass_rate, "final_coverage": fin.coverage, "coverage_target": target, "gate": verdict, "gc_rounds": rounds}));
        finals.push(fin);
    }
    (ctx.progress)("analysis_done", Some(60.0), None);
    let (score, [p, c, g]) = quality_score(&finals, gc_total, ctx.config.max_gc_rounds);
    let defects = defect_patterns(&runs);
    let report = render(
        ctx,
        &md,
        &layers,
        score,
        [p, c, g],
        gc_total,
        &finals,
        &defects,
        &bad_runs,
    );
    let dir = ctx.session.root.join("analysis");
    if let Err(e) =
        mkdirs(&dir).and_then(|()| atomic_write(&dir.join("quality-report.md"), report.as_bytes()))
    {
        return Outcome::failed(e.to_string());
    }
    let mut out = Outcome::completed(format!(
        "quality score {score:.1} ({}); {} layer(s), {gc_total} GC round(s), {} failing test(s)",
        band(score),
        layers.len(),
        defects.len()
    ));
    let patterns: Vec<Value> = defects
        .iter()
        .map(|(n, d)| json!({"name": n, "count": d.count, "kind": d.kind}))
        .collect();
    out.data = to_map(
        json!({"quality_score": score, "band": band(score), "layers": layer_data, "gc_rounds_used": gc_total, "defect_patterns": patterns}),
    );
    out.artifacts = vec!["analysis/quality-report.md".into()];
    out
}

#[allow(clippy::too_many_arguments)]
fn render(
    ctx: &RoleContext,
    layer_md: &str,
    layers: &[String],
    score: f64,
    terms: [f64; 3],
    gc: u32,
    finals: &[LayerFinal],
    defects: &[(String, Defect)],
    bad: &[String],
) -> String {
    let mut md = format!("# Quality Report\n\nSession {} — written {} by {}.\n\n## Summary\n\nQuality score: **{score:.1} / 100** ({}).\n", ctx.session.id, now_ts(), ctx.task.id, band(score));
    let _ = write!(md, "\n## Layers\n\nGate: pass rate >= {:.0}% and coverage >= the layer target (unknown coverage: pass rate alone).\n", ctx.config.pass_rate_target * 100.0);
    md.push_str(if layers.is_empty() {
        "\nNo test-run tasks were found.\n"
    } else {
        layer_md
    });
    md.push_str("\n## Generator-Critic Rounds\n\n");
    let _ = writeln!(
        md,
        "{gc} round(s) used of a budget of {} ({} per layer × {} layer(s)).",
        ctx.config.max_gc_rounds * layers.len() as u32,
        ctx.config.max_gc_rounds,
        layers.len()
    );
    md.push_str("\n## Defect Patterns\n\n");
    if defects.is_empty() {
        md.push_str("No failing tests were recorded.\n");
    } else {
        md.push_str("| Test | Failures | Error kind | Last message |\n|---|---|---|---|\n");
        for (name, d) in defects {
            let _ = writeln!(
                md,
                "| {name} | {} | {} | {} |",
                d.count,
                d.kind,
                d.message.replace('|', "\\|")
            );
        }
    }
    for b in bad {
        let _ = writeln!(md, "\n- Run record left out: {b}");
    }
    let coverage_note = if finals
        .iter()
        .any(|f| f.coverage.is_some() && f.target.is_some())
    {
        "over the layers with known coverage"
    } else {
        "no layer has known coverage, so the pass-rate term is used instead"
    };
    let _ = write!(
        md,
        "\n## Quality Score\n\n    score = 40 × mean(final pass rate per layer)\n          + 40 × mean(min(1, final coverage / target))   ({coverage_note})\n          + 20 × (1 − GC rounds used / ({} × layers))\n          = 40 × {:.3} + 40 × {:.3} + 20 × {:.3} = {score:.1}\n\nBands: >= 80 good, 60–79 needs improvement, < 60 concerning.\n",
        ctx.config.max_gc_rounds, terms[0], terms[1], terms[2]
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(p: f64, c: Option<f64>, t: f64) -> LayerFinal {
        LayerFinal {
            pass_rate: p,
            coverage: c,
            target: Some(t),
        }
    }

    #[test]
    fn score_follows_the_formula() {
        // 40 × 1 + 40 × min(1, 90/80) + 20 × (1 − 0/3) = 100
        assert_eq!(
            quality_score(&[layer(1.0, Some(90.0), 80.0)], 0, 3).0,
            100.0
        );
        // 40 × 0.75 + 40 × mean(0.5, 1.0) + 20 × (1 − 3/6) = 30 + 30 + 10 = 70
        let (s, _) = quality_score(
            &[layer(0.5, Some(40.0), 80.0), layer(1.0, Some(60.0), 60.0)],
            3,
            3,
        );
        assert!((s - 70.0).abs() < 1e-9, "{s}");
        assert_eq!(band(s), "needs improvement");
    }

    #[test]
    fn unknown_coverage_uses_the_pass_rate_term() {
        // 40 × 0.5 + 40 × 0.5 + 20 × (1 − 1/3) = 53.3
        let (s, terms) = quality_score(&[layer(0.5, None, 80.0)], 1, 3);
        assert_eq!(terms[1], 0.5);
        assert_eq!(s, 53.3);
        assert_eq!(band(s), "concerning");
        assert_eq!(quality_score(&[], 0, 3).0, 0.0);
    }

    #[test]
    fn defects_are_grouped_by_test_name() {
        let fail = |id: &str, class: &str, error: &str| json!({"id": id, "status": "failed", "message": "m", "classification": class, "evidence": {"error": error}});
        let runs = vec![
            json!({"tests": [fail("t::a", "code_defect", "AssertionError"), {"id": "t::ok", "status": "passed"}]}),
            json!({"tests": [fail("t::a", "code_defect", "AssertionError"), fail("t::b", "test_defect", "ImportError")]}),
        ];
        let d = defect_patterns(&runs);
        assert_eq!(d[0].0, "t::a");
        assert_eq!(
            (d[0].1.count, d[0].1.kind.as_str()),
            (2, "code_defect (AssertionError)")
        );
        assert_eq!(d[1].1.kind, "test_defect (ImportError)");
        assert_eq!(d.len(), 2, "passing tests are not defects");
    }
}
