//! The sections the Markdown report has, as HTML, plus the charts: the score with its formula,
//! the baseline, mutation analysis, layers (with coverage and pass rate per round), defect
//! patterns, GC effectiveness, gaps, confidence, trends, recommendations and what is missing.
//! Every figure comes from the [`Report`]; every project string is escaped.

use std::fmt::Write as _;

use super::charts::{bars, line_chart, LineChart, Series};
use super::escape::{esc, pct, rate, table};
use crate::report::{
    Report, TREND_COVERAGE_POINTS, TREND_SCORE_POINTS, W_COVERAGE, W_DETECTION, W_EFFECTIVENESS,
    W_GC,
};

/// The headline figures as cards.
pub fn overview(out: &mut String, r: &Report) {
    out.push_str("<div class=\"cards\">");
    let score = if r.scored {
        format!("{:.1}<small> / 100</small>", r.quality_score)
    } else {
        "not scored".into()
    };
    let band_class = match r.band.as_str() {
        "good" => "good",
        "concerning" => "bad",
        _ => "warn",
    };
    let _ = write!(
        out,
        "<div class=\"card\">Quality score<b class=\"{band_class}\">{score}</b>{}</div>",
        esc(&r.band)
    );
    let gates = r.gates();
    let _ = write!(
        out,
        "<div class=\"card\">Layers meeting their gate<b>{} / {}</b>{}</div>",
        gates.met,
        gates.applicable,
        if gates.not_applicable > 0 {
            format!("{} not applicable", gates.not_applicable)
        } else {
            String::new()
        }
    );
    let tests: u64 = r.runs.iter().map(|x| x.total).sum();
    let _ = write!(
        out,
        "<div class=\"card\">Test results<b>{tests}</b>in {} run(s)</div>",
        r.runs.len()
    );
    let _ = write!(
        out,
        "<div class=\"card\">Code defects<b>{}</b>{} contract finding(s)</div>",
        r.findings.code_defects.len(),
        r.findings.contract_findings.len()
    );
    let _ = write!(
        out,
        "<div class=\"card\">GC rounds used<b>{}</b>of {}</div>",
        r.score.gc_rounds_used, r.score.gc_budget
    );
    let _ = write!(
        out,
        "<div class=\"card\">Confidence<b>{:.2}</b>mean of five dimensions</div>",
        r.confidence.overall
    );
    out.push_str("</div>\n");
}

pub fn score(out: &mut String, r: &Report) {
    let s = &r.score;
    out.push_str("<h2 id=\"score\">Quality Score</h2>\n");
    if !r.scored {
        let _ = writeln!(
            out,
            "<p><strong>Not scored</strong>: none of the {} layer(s) had anything to test.</p>",
            r.layers.len()
        );
    }
    let rows = vec![
        vec![
            "Coverage achievement: mean over layers of min(1, final coverage / target); unknown coverage uses the pass rate".into(),
            format!("{W_COVERAGE:.0}%"),
            format!("{:.3}", s.coverage_achievement),
            format!("{:.1}", W_COVERAGE * s.coverage_achievement),
        ],
        vec![
            "Test effectiveness: mean final pass rate".into(),
            format!("{W_EFFECTIVENESS:.0}%"),
            format!("{:.3}", s.test_effectiveness),
            format!("{:.1}", W_EFFECTIVENESS * s.test_effectiveness),
        ],
        vec![
            format!("Defect detection: classified failing tests / failing tests ({} / {}; 1.0 when nothing failed)", s.classified_failing_tests, s.failing_tests),
            format!("{W_DETECTION:.0}%"),
            format!("{:.3}", s.defect_detection),
            format!("{:.1}", W_DETECTION * s.defect_detection),
        ],
        vec![
            format!("GC-loop efficiency: 1 − rounds used / (max rounds × layers) = 1 − {} / {}", s.gc_rounds_used, s.gc_budget),
            format!("{W_GC:.0}%"),
            format!("{:.3}", s.gc_efficiency),
            format!("{:.1}", W_GC * s.gc_efficiency),
        ],
    ];
    table(out, "", &["Dimension", "Weight", "Value", "Points"], &rows);
    let total = if r.scored {
        format!("<strong>{:.1}</strong>", r.quality_score)
    } else {
        "<strong>not scored</strong> (no layer had anything to test)".to_string()
    };
    let _ = writeln!(
        out,
        "<p>Score = {W_COVERAGE:.0} × coverage + {W_EFFECTIVENESS:.0} × effectiveness + {W_DETECTION:.0} × detection + {W_GC:.0} × GC efficiency = {total}. Bands: ≥ 80 good, 60–79 needs improvement, &lt; 60 concerning.</p>"
    );
}

pub fn baseline(out: &mut String, b: &crate::report::BaselineReport) {
    out.push_str("<h2 id=\"baseline\">Baseline: the Project's Own Tests</h2>\n");
    let coverage = b.coverage.map_or_else(
        || "coverage unknown".to_string(),
        |c| format!("{c:.1}% line coverage of the files in scope"),
    );
    let _ = writeln!(
        out,
        "<p>{} test(s), {} passed; {coverage}.</p>",
        b.tests, b.passed
    );
    let rows: Vec<Vec<String>> = b
        .layers
        .iter()
        .map(|l| {
            vec![
                esc(&l.layer),
                format!("{:.1}%", l.before),
                format!("{:.1}%", l.after),
                format!("{:+.1}", l.after - l.before),
                l.new_tests.to_string(),
            ]
        })
        .collect();
    if !rows.is_empty() {
        table(
            out,
            "",
            &["Layer", "Before", "After", "Points", "New tests"],
            &rows,
        );
    }
    if !b.files.is_empty() {
        let rows: Vec<Vec<String>> = b
            .files
            .iter()
            .map(|f| vec![esc(&f.file), pct(f.before), pct(f.after)])
            .collect();
        table(
            out,
            "",
            &[
                "File",
                "The project's own tests",
                "With the generated tests",
            ],
            &rows,
        );
    }
    if !b.failing_tests.is_empty() {
        let _ = writeln!(
            out,
            "<p>Existing tests that fail (reported, never removed): {}</p>",
            esc(&b.failing_tests.join(", "))
        );
    }
}

pub fn mutation(out: &mut String, m: &crate::artifacts::MutationRecord) {
    out.push_str("<h2 id=\"mutation\">Mutation Analysis</h2>\n");
    let own = m.baseline.as_ref().map_or(String::new(), |b| {
        format!(
            "; the project's own {} test(s) alone {:.1}%",
            b.tests, b.score
        )
    });
    let _ = writeln!(
        out,
        "<p>{} mutant(s) of {} module(s) ({} reached by no test). Mutation score {:.1}% with the project's tests and the kept generated ones; the {} kept generated test(s) alone {:.1}%{own}.{}</p>",
        m.mutants,
        m.modules.len(),
        m.no_coverage,
        m.combined.score,
        m.generated.tests,
        m.generated.score,
        if m.exhausted { " The time budget ended first: the figures cover the mutants that ran." } else { "" }
    );
    let rows: Vec<Vec<String>> = m
        .layers
        .iter()
        .map(|l| {
            vec![
                esc(&l.layer),
                format!("{} → {}", l.before.tests, l.after.tests),
                l.dropped.len().to_string(),
                format!("{:.1}% → {:.1}%", l.before.score, l.after.score),
                format!("{:.1}% → {:.1}%", l.combined_before, l.combined_after),
            ]
        })
        .collect();
    if !rows.is_empty() {
        table(
            out,
            "",
            &[
                "Layer",
                "Tests (minimized)",
                "Dropped",
                "Score alone",
                "With the project's tests",
            ],
            &rows,
        );
    }
    if !m.survivors.is_empty() {
        let mut shown: Vec<String> = m
            .survivors
            .iter()
            .map(|s| format!("{} ({})", s.location, s.operator))
            .collect();
        shown.dedup();
        let _ = writeln!(
            out,
            "<p>Surviving mutants (no test notices the change): {}</p>",
            esc(&shown.join(", "))
        );
    }
}

/// The layers' table, round history and the two per-round charts.
pub fn layers(out: &mut String, r: &Report) {
    let _ = writeln!(
        out,
        "<h2 id=\"layers\">Coverage by Layer</h2>\n<p>Gate: pass rate ≥ {:.0}% and coverage ≥ the layer target (unknown coverage: pass rate alone).</p>",
        r.pass_rate_target * 100.0
    );
    if r.layers.is_empty() {
        out.push_str("<p>No layer was run.</p>\n");
        return;
    }
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
    let coverage: Vec<Series> = r
        .layers
        .iter()
        .map(|l| Series {
            name: l.layer.clone(),
            points: l
                .history
                .iter()
                .filter_map(|p| p.coverage.map(|c| (f64::from(p.round), c)))
                .collect(),
            target: l.target,
        })
        .collect();
    let passing: Vec<Series> = r
        .layers
        .iter()
        .map(|l| Series {
            name: l.layer.clone(),
            points: l
                .history
                .iter()
                .filter_map(|p| p.pass_rate.map(|c| (f64::from(p.round), c * 100.0)))
                .collect(),
            target: None,
        })
        .collect();
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

    let rows: Vec<Vec<String>> = r
        .layers
        .iter()
        .map(|l| match &l.not_applicable {
            Some(why) => vec![
                esc(&l.layer),
                pct(l.target),
                "-".into(),
                "-".into(),
                format!("not applicable: {}", esc(why)),
                "-".into(),
            ],
            None => vec![
                esc(&l.layer),
                pct(l.target),
                pct(l.final_coverage),
                rate(l.final_pass_rate),
                format!("<span class=\"{0}\">{0}</span>", esc(&l.gate)),
                format!("{} of {}", l.gc_rounds_used, r.max_gc_rounds),
            ],
        })
        .collect();
    table(
        out,
        "",
        &[
            "Layer",
            "Target",
            "Final coverage",
            "Final pass rate",
            "Gate",
            "GC rounds",
        ],
        &rows,
    );
    let na: Vec<String> = r
        .layers
        .iter()
        .filter(|l| l.not_applicable.is_some())
        .map(|l| esc(&l.layer))
        .collect();
    if !na.is_empty() {
        let _ = writeln!(
            out,
            "<p>Not applicable, so left out of the score and the GC budget: {}.</p>",
            na.join(", ")
        );
    }
    let rows: Vec<Vec<String>> = r
        .layers
        .iter()
        .flat_map(|l| {
            l.history.iter().map(move |p| {
                vec![
                    esc(&l.layer),
                    p.round.to_string(),
                    esc(&p.task_id),
                    esc(&p.status),
                    pct(p.coverage),
                    rate(p.pass_rate),
                    esc(p.run.as_deref().unwrap_or("-")),
                ]
            })
        })
        .collect();
    out.push_str("<h3>Round history (task order)</h3>\n");
    table(
        out,
        "",
        &[
            "Layer",
            "Round",
            "Task",
            "Status",
            "Coverage",
            "Pass rate",
            "Run",
        ],
        &rows,
    );
}

pub fn defect_patterns(out: &mut String, r: &Report) {
    out.push_str("<h2 id=\"patterns\">Defect Patterns</h2>\n<p>Severity: HIGH ≥ 3 occurrences, MEDIUM 2, LOW 1 (every failing test record of every run, grouped by classification:error).</p>\n");
    if r.defect_patterns.is_empty() {
        out.push_str("<p>No failing tests were recorded.</p>\n");
        return;
    }
    let rows: Vec<Vec<String>> = r
        .defect_patterns
        .iter()
        .map(|d| {
            vec![
                esc(&d.kind),
                d.count.to_string(),
                esc(&d.severity),
                esc(&d.tests.join(", ")),
                esc(&d.files.join(", ")),
            ]
        })
        .collect();
    table(
        out,
        "",
        &["Pattern", "Occurrences", "Severity", "Tests", "Files"],
        &rows,
    );
}

pub fn gc(out: &mut String, r: &Report) {
    out.push_str("<h2 id=\"gc\">GC-Loop Effectiveness</h2>\n<p>Rating by coverage gained per round: HIGH &gt; 10 points, MEDIUM &gt; 5, LOW otherwise; n/a when no round was used or coverage is unknown.</p>\n");
    if r.gc_effectiveness.is_empty() {
        out.push_str("<p>No layer was run.</p>\n");
        return;
    }
    let signed = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:+.1}"));
    let rows: Vec<Vec<String>> = r
        .gc_effectiveness
        .iter()
        .map(|g| {
            let deltas: Vec<String> = g
                .per_round
                .iter()
                .map(|d| d.map_or("?".into(), |d| format!("{d:+.1}")))
                .collect();
            vec![
                esc(&g.layer),
                g.rounds_used.to_string(),
                pct(g.initial_coverage),
                pct(g.final_coverage),
                signed(g.coverage_gained),
                signed(g.gain_per_round),
                if deltas.is_empty() {
                    "-".into()
                } else {
                    deltas.join(", ")
                },
                esc(&g.rating),
            ]
        })
        .collect();
    table(
        out,
        "",
        &[
            "Layer",
            "Rounds used",
            "First coverage",
            "Final coverage",
            "Gained",
            "Per round",
            "Round deltas",
            "Rating",
        ],
        &rows,
    );
}

pub fn gaps(out: &mut String, r: &Report) {
    out.push_str("<h2 id=\"gaps\">Coverage Gaps</h2>\n<p>Per module, from the coverage file of each layer's final run.</p>\n");
    if r.coverage_gaps.is_empty() {
        out.push_str("<p>No uncovered lines were recorded.</p>\n");
        return;
    }
    let rows: Vec<Vec<String>> = r
        .coverage_gaps
        .iter()
        .map(|g| {
            vec![
                esc(&g.layer),
                esc(&g.module),
                format!("{:.1}%", g.line_percent),
                pct(g.target),
                format!("{:.1}", g.gap),
                if g.uncovered.is_empty() {
                    "-".into()
                } else {
                    esc(&g.uncovered)
                },
                esc(&g.recommendation),
            ]
        })
        .collect();
    table(
        out,
        "",
        &[
            "Layer",
            "Module",
            "Current",
            "Target",
            "Gap",
            "Uncovered lines",
            "Recommendation",
        ],
        &rows,
    );
}

pub fn confidence(out: &mut String, r: &Report) {
    let c = &r.confidence;
    out.push_str("<h2 id=\"confidence\">Confidence</h2>\n");
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
    let rows = vec![
        vec![
            "Scenario coverage (modules in scope exercised by the tests)".into(),
            format!("{:.2}", c.scenario_coverage),
        ],
        vec![
            "Test quality (tests neither flaky nor quarantined)".into(),
            format!("{:.2}", c.test_quality),
        ],
        vec![
            "Diagnostic accuracy (failing tests with classification and evidence location)".into(),
            format!("{:.2}", c.diagnostic_accuracy),
        ],
        vec![
            "Strategy effectiveness (layers meeting their gate)".into(),
            format!("{:.2}", c.strategy_effectiveness),
        ],
        vec![
            "Infrastructure fitness (1 − env_issue share; 0 after an environment problem)".into(),
            format!("{:.2}", c.infrastructure_fitness),
        ],
        vec!["Overall (mean)".into(), format!("{:.2}", c.overall)],
    ];
    table(out, "", &["Dimension", "Value"], &rows);
}

/// Earlier sessions of the repository and this one: the score and each layer's coverage.
pub fn trends(out: &mut String, r: &Report) {
    let _ = writeln!(
        out,
        "<h2 id=\"trends\">Trends</h2>\n<p>Earlier sessions of the same repository; compared with the most recent. Stable within ±{TREND_COVERAGE_POINTS} coverage points, ±{TREND_SCORE_POINTS} score points.</p>"
    );
    if r.trends.previous.is_empty() {
        out.push_str("<p>No earlier session of this repository.</p>\n");
        return;
    }
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
    let rows: Vec<Vec<String>> = r
        .trends
        .previous
        .iter()
        .map(|p| {
            let layers: Vec<String> = p
                .layers
                .iter()
                .map(|(l, c)| format!("{} {}", esc(l), pct(*c)))
                .collect();
            vec![
                esc(&p.session_id),
                esc(&p.created_at),
                p.quality_score.map_or("-".into(), |s| format!("{s:.1}")),
                layers.join(", "),
                p.defect_patterns.to_string(),
            ]
        })
        .collect();
    table(
        out,
        "",
        &[
            "Session",
            "Created",
            "Score",
            "Coverage by layer",
            "Defect occurrences",
        ],
        &rows,
    );
    out.push_str("<ul>");
    for t in r
        .trends
        .coverage
        .iter()
        .chain(r.trends.score.iter())
        .chain(r.trends.defect_patterns.iter())
    {
        let _ = write!(
            out,
            "<li>{}: {:.1} → {:.1} ({:+.1}) {}</li>",
            esc(&t.subject),
            t.previous,
            t.current,
            t.delta,
            esc(&t.direction)
        );
    }
    out.push_str("</ul>\n");
}

pub fn recommendations(out: &mut String, r: &Report) {
    out.push_str("<h2 id=\"recommendations\">Recommendations</h2>\n");
    if r.recommendations.is_empty() {
        out.push_str("<p>None: every layer meets its gate and no defect is open.</p>\n");
        return;
    }
    out.push_str("<ul>");
    for rec in &r.recommendations {
        let _ = write!(out, "<li>{}</li>", esc(rec));
    }
    out.push_str("</ul>\n");
}

pub fn missing(out: &mut String, r: &Report) {
    if r.missing.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"missing\">Missing</h2>\n<p>This report covers what exists; these parts of the session are missing or partial:</p><ul>");
    for m in &r.missing {
        let _ = write!(out, "<li>{}</li>", esc(m));
    }
    out.push_str("</ul>\n");
}
