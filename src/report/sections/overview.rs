//! The opening figures, the score with its formula, confidence, recommendations and what is
//! missing: the sections that judge the session as a whole.

use crate::report::document::{Block, Extra, Figure, Section, Table, Text, Tone};
use crate::report::{Report, W_COVERAGE, W_DETECTION, W_EFFECTIVENESS, W_GC};

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
    let rows = vec![
        row("Coverage achievement: mean over layers of min(1, final coverage / target); unknown coverage uses the pass rate".into(), W_COVERAGE, s.coverage_achievement),
        row("Test effectiveness: mean final pass rate".into(), W_EFFECTIVENESS, s.test_effectiveness),
        row(format!("Defect detection: classified failing tests / failing tests ({} / {}; 1.0 when nothing failed)", s.classified_failing_tests, s.failing_tests), W_DETECTION, s.defect_detection),
        row(format!("GC-loop efficiency: 1 − rounds used / (max rounds × layers) = 1 − {} / {}", s.gc_rounds_used, s.gc_budget), W_GC, s.gc_efficiency),
    ];
    out.push(Block::Table(Table::new(
        &["Dimension", "Weight", "Value", "Points"],
        rows,
    )));
    let formula = format!(
        "Score = {W_COVERAGE:.0} × coverage + {W_EFFECTIVENESS:.0} × effectiveness + {W_DETECTION:.0} × detection + {W_GC:.0} × GC efficiency = "
    );
    let total = if r.scored {
        Text::from(formula)
            .strong(format!("{:.1}", r.quality_score))
            .plain(".")
    } else {
        Text::from(formula)
            .strong("not scored")
            .plain(" (no layer had anything to test).")
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
