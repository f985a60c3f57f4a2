//! The opening figures, the score with its formula, confidence, recommendations and what is
//! missing: the sections that judge the session as a whole.

use crate::report::document::{Block, Extra, Figure, Section, Table, Text, Tone};
use crate::report::Report;

fn figure(label: &str, value: String, note: String) -> Figure {
    Figure {
        label: label.into(),
        value,
        unit: String::new(),
        tone: None,
        note,
    }
}

/// The headline figures, before any section: the page's cards, the Markdown's first lines.
pub fn overview(r: &Report) -> Section {
    let score = if r.scored {
        Figure {
            unit: " / 100".into(),
            tone: Some(match r.band.as_str() {
                "good" => Tone::Good,
                "concerning" => Tone::Bad,
                // "unverified", "needs improvement".
                _ => Tone::Warn,
            }),
            ..figure(
                "Quality score",
                format!("{:.1}", r.quality_score),
                r.band.clone(),
            )
        }
    } else {
        Figure {
            tone: Some(Tone::Warn),
            ..figure(
                "Quality score",
                "not scored".into(),
                format!(
                    "none of the {} layer(s) had anything to test (see Coverage by Layer)",
                    r.layers.len()
                ),
            )
        }
    };
    // The one gate count: the same words wherever the report states it.
    let gates = r.gates();
    let not_applicable = if gates.not_applicable > 0 {
        format!("{} not applicable", gates.not_applicable)
    } else {
        String::new()
    };
    let tests: u64 = r.runs.iter().map(|x| x.total).sum();
    let figures = vec![
        score,
        figure(
            "Layers meeting their gate",
            format!("{} / {}", gates.met, gates.applicable),
            not_applicable,
        ),
        figure(
            "Test results",
            tests.to_string(),
            format!("in {} run(s)", r.runs.len()),
        ),
        figure(
            "Code defects",
            r.findings.code_defects.len().to_string(),
            format!("{} contract finding(s)", r.findings.contract_findings.len()),
        ),
        figure(
            "GC rounds used",
            r.score.gc_rounds_used.to_string(),
            format!("of {}", r.score.gc_budget),
        ),
        figure(
            "Confidence",
            format!("{:.2}", r.confidence.overall),
            "mean of five dimensions".into(),
        ),
    ];
    Section {
        heading: None,
        blocks: vec![Block::Figures(figures)],
        html_only: false,
    }
}

/// The score's four dimensions, their weights and points, and the total.
pub fn score(r: &Report) -> Section {
    let s = &r.score;
    let mut out = Section::new("Quality Score", "score").nav("Score");
    if !r.scored {
        out.para(Text::default().strong("Not scored").plain(format!(
            ": none of the {} layer(s) had anything to test.",
            r.layers.len()
        )));
    }
    let row = |what: String, weight: f64, value: f64| -> Vec<Text> {
        vec![
            what.into(),
            format!("{weight:.0}%").into(),
            format!("{value:.3}").into(),
            format!("{:.1}", weight * value).into(),
        ]
    };
    let w = |k: &str| s.weights.get(k).copied().unwrap_or(0.0);
    let (wc, we, wd, wg) = (
        w("coverage_achievement"),
        w("test_effectiveness"),
        w("defect_detection"),
        w("gc_efficiency"),
    );
    let detection = if s.detection_measured {
        "Defect detection: the combined suite's mutation score (own and generated tests: the share of seeded bugs a test notices)".to_string()
    } else {
        "Defect detection: not measured (no mutation analysis ran); its weight goes to the other dimensions".to_string()
    };
    let rows = vec![
        row("Coverage achievement: mean over layers of min(1, final coverage / target); unknown coverage uses the pass rate".into(), wc, s.coverage_achievement),
        row("Test effectiveness: mean final pass rate".into(), we, s.test_effectiveness),
        row(detection, wd, s.defect_detection),
        row(format!("GC-loop efficiency: 1 − rounds used / (max rounds × layers) = 1 − {} / {}", s.gc_rounds_used, s.gc_budget), wg, s.gc_efficiency),
    ];
    out.push(Block::Table(Table::new(
        &["Dimension", "Weight", "Value", "Points"],
        rows,
    )));
    let formula = if s.detection_measured {
        format!("Score = {wc:.0} × coverage + {we:.0} × effectiveness + {wd:.0} × detection + {wg:.0} × GC efficiency = ")
    } else {
        format!("Score = {wc:.1} × coverage + {we:.1} × effectiveness + {wg:.1} × GC efficiency (detection not measured) = ")
    };
    let total = if r.scored {
        Text::from(formula)
            .strong(format!("{:.1}", r.quality_score))
            .plain(".")
    } else {
        Text::from(formula)
            .strong("not scored")
            .plain(" (no layer had anything to test).")
    };
    let total = if s.detection_measured {
        total
    } else {
        total.plain(" Without a mutation score nothing says the tests would notice a bug, so a score of 80 or more is \"unverified\", not \"good\".")
    };
    out.para(total.plain(" Bands: ≥ 80 good, 60–79 needs improvement, below 60 concerning."));
    out
}

pub fn confidence(r: &Report) -> Section {
    let c = &r.confidence;
    let mut out = Section::new("Confidence", "confidence").nav("Confidence");
    out.push(Block::Extra(Extra::ConfidenceBars));
    let rows = [
        (
            "Scenario coverage (modules in scope exercised by the tests)",
            c.scenario_coverage,
        ),
        (
            "Test quality (tests neither flaky nor quarantined)",
            c.test_quality,
        ),
        (
            "Diagnostic accuracy (failing tests with classification and evidence location)",
            c.diagnostic_accuracy,
        ),
        (
            "Strategy effectiveness (layers meeting their gate)",
            c.strategy_effectiveness,
        ),
        (
            "Infrastructure fitness (1 − env_issue share; 0 after an environment problem)",
            c.infrastructure_fitness,
        ),
        ("Overall (mean)", c.overall),
    ]
    .into_iter()
    .map(|(what, v)| vec![what.into(), format!("{v:.2}").into()])
    .collect();
    out.push(Block::Table(Table::new(&["Dimension", "Value"], rows)));
    out
}

pub fn recommendations(r: &Report) -> Section {
    let mut out = Section::new("Recommendations", "recommendations").nav("Recommendations");
    if r.recommendations.is_empty() {
        out.para("None: every layer meets its gate and no defect is open.");
    } else {
        // Written with `backquotes` around commands: code on the page too.
        let items = r.recommendations.iter().map(|x| Text::backquoted(x));
        out.push(Block::List(items.collect()));
    }
    out
}

pub fn missing(r: &Report) -> Option<Section> {
    if r.missing.is_empty() {
        return None;
    }
    let mut out = Section::new("Missing", "missing");
    out.para("This report covers what exists; these parts of the session are missing or partial:");
    out.push(Block::List(
        r.missing.iter().map(|m| Text::from(m.as_str())).collect(),
    ));
    Some(out)
}
