//! The charts drawn from the report (with [`super::charts`]): coverage and pass rate per GC
//! round by layer, the score and coverage across sessions, the confidence dimensions, the pass
//! rate over the test-fix iterations. They draw figures the sections state; they state none.

use super::charts::{bars, line_chart, LineChart, Series};
use crate::artifacts::Iteration;
use crate::report::{Report, RoundPoint};

/// One series per layer: `value` of each round that has it, with the layer's target line when
/// `with_target`.
fn per_layer(
    r: &Report,
    value: impl Fn(&RoundPoint) -> Option<f64>,
    with_target: bool,
) -> Vec<Series> {
    r.layers
        .iter()
        .map(|l| Series {
            name: l.layer.clone(),
            points: l
                .history
                .iter()
                .filter_map(|p| value(p).map(|v| (f64::from(p.round), v)))
                .collect(),
            target: l.target.filter(|_| with_target),
        })
        .collect()
}

/// Coverage per round against each layer's target, and pass rate per round against the gate.
pub fn layers(out: &mut String, r: &Report) {
    let max_round = r
        .layers
        .iter()
        .flat_map(|l| l.history.iter().map(|p| p.round))
        .max()
        .unwrap_or(0)
        .max(1);
    let ticks: Vec<(f64, String)> = (0..=max_round)
        .map(|n| (f64::from(n), n.to_string()))
        .collect();
    let coverage = per_layer(r, |p| p.coverage, true);
    let passing = per_layer(r, |p| p.pass_rate.map(|rate| rate * 100.0), false);
    let mut passing = passing;
    passing.push(Series {
        name: "gate".into(),
        points: Vec::new(),
        target: Some(r.pass_rate_target * 100.0),
    });
    out.push_str("<div class=\"charts\"><figure><figcaption>Coverage per round against each layer's target</figcaption>");
    out.push_str(&line_chart(
        &LineChart {
            id: "coverage-chart",
            title: "Line coverage per GC round, by layer",
            y_label: "line coverage %",
            x_label: "GC round",
            y_max: 100.0,
            x_ticks: ticks.clone(),
            unit: "%",
            width: 520.0,
            height: 260.0,
        },
        &coverage,
    ));
    out.push_str("</figure><figure><figcaption>Pass rate per round</figcaption>");
    out.push_str(&line_chart(
        &LineChart {
            id: "pass-rate-chart",
            title: "Pass rate per GC round, by layer",
            y_label: "pass rate %",
            x_label: "GC round",
            y_max: 100.0,
            x_ticks: ticks,
            unit: "%",
            width: 520.0,
            height: 260.0,
        },
        &passing,
    ));
    out.push_str("</figure></div>\n");
}

/// The quality score and each layer's coverage, earlier sessions oldest first, then this one.
pub fn trends(out: &mut String, r: &Report) {
    let mut previous: Vec<&crate::report::PreviousSession> = r.trends.previous.iter().collect();
    previous.sort_by(|a, b| a.created_at.cmp(&b.created_at));
    let n = previous.len();
    let mut ticks: Vec<(f64, String)> = (0..n).map(|i| (i as f64, format!("−{}", n - i))).collect();
    ticks.push((n as f64, "this".into()));
    let mut series = vec![Series {
        name: "quality score".into(),
        points: previous
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.quality_score.map(|s| (i as f64, s)))
            .chain(r.scored.then_some((n as f64, r.quality_score)))
            .collect(),
        target: None,
    }];
    for l in &r.layers {
        series.push(Series {
            name: format!("{} coverage", l.layer),
            points: previous
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    p.layers
                        .get(&l.layer)
                        .copied()
                        .flatten()
                        .map(|c| (i as f64, c))
                })
                .chain(l.final_coverage.map(|c| (n as f64, c)))
                .collect(),
            target: None,
        });
    }
    out.push_str("<figure><figcaption>Score and coverage across sessions</figcaption>");
    out.push_str(&line_chart(
        &LineChart {
            id: "trend-chart",
            title: "Quality score and coverage by layer across sessions",
            y_label: "score / %",
            x_label: "sessions, oldest first",
            y_max: 100.0,
            x_ticks: ticks,
            unit: "",
            width: 520.0,
            height: 200.0,
        },
        &series,
    ));
    out.push_str("</figure>\n");
}

/// The five confidence dimensions and their mean as bars.
pub fn confidence(out: &mut String, r: &Report) {
    let c = &r.confidence;
    let items = [
        ("Scenario coverage", c.scenario_coverage),
        ("Test quality", c.test_quality),
        ("Diagnostic accuracy", c.diagnostic_accuracy),
        ("Strategy effectiveness", c.strategy_effectiveness),
        ("Infrastructure fitness", c.infrastructure_fitness),
        ("Overall (mean)", c.overall),
    ];
    out.push_str(&bars(
        "confidence-chart",
        "The five confidence dimensions",
        &items,
    ));
}

/// The pass rate after each iteration (iteration 0: before any fix).
pub fn fix_cycle(out: &mut String, iterations: &[Iteration]) {
    let ticks: Vec<(f64, String)> = iterations
        .iter()
        .map(|i| (f64::from(i.iteration), i.iteration.to_string()))
        .collect();
    let series = [Series {
        name: "pass rate".into(),
        points: iterations
            .iter()
            .map(|i| (f64::from(i.iteration), i.pass_rate))
            .collect(),
        target: None,
    }];
    out.push_str("<figure><figcaption>Pass rate after each iteration</figcaption>");
    out.push_str(&line_chart(
        &LineChart {
            id: "fix-cycle-chart",
            title: "Pass rate of the suite over the test-fix iterations",
            y_label: "pass rate %",
            x_label: "iteration (0: before any fix)",
            y_max: 100.0,
            x_ticks: ticks,
            unit: "%",
            width: 520.0,
            height: 220.0,
        },
        &series,
    ));
    out.push_str("</figure>\n");
}
