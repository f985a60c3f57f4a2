//! Coverage by layer (the gate, each layer's final figures, the round history), the defect
//! patterns, the GC loop's effectiveness and the coverage gaps.

use crate::report::document::{pct, rate, signed, toned, Block, Extra, Section, Table, Text, Tone};
use crate::report::Report;

pub fn layers(r: &Report) -> Section {
    let mut out = Section::new("Coverage by Layer", "layers").nav("Layers");
    out.para(format!(
        "Gate: pass rate ≥ {:.0}% and coverage ≥ the layer target (unknown coverage: pass rate alone).",
        r.pass_rate_target * 100.0
    ));
    if r.layers.is_empty() {
        out.para("No layer was run.");
        return out;
    }
    out.push(Block::Extra(Extra::LayerCharts));
    let rows = r
        .layers
        .iter()
        .map(|l| match &l.not_applicable {
            Some(why) => vec![
                l.layer.as_str().into(),
                pct(l.target).into(),
                "-".into(),
                "-".into(),
                format!("not applicable: {why}").into(),
                "-".into(),
            ],
            None => vec![
                l.layer.as_str().into(),
                pct(l.target).into(),
                pct(l.final_coverage).into(),
                rate(l.final_pass_rate).into(),
                gate(&l.gate),
                format!("{} of {}", l.gc_rounds_used, r.max_gc_rounds).into(),
            ],
        })
        .collect();
    out.push(Block::Table(Table::new(
        &[
            "Layer",
            "Target",
            "Final coverage",
            "Final pass rate",
            "Gate",
            "GC rounds",
        ],
        rows,
    )));
    for l in &r.layers {
        if let Some(why) = &l.loop_stopped {
            out.para(format!(
                "{}: the GC loop stopped before its last round: {why}.",
                l.layer
            ));
        }
    }
    let na: Vec<&str> = r
        .layers
        .iter()
        .filter(|l| l.not_applicable.is_some())
        .map(|l| l.layer.as_str())
        .collect();
    if !na.is_empty() {
        out.para(format!(
            "Not applicable, so left out of the score and the GC budget: {}.",
            na.join(", ")
        ));
    }
    out.sub("Round history (task order)", "rounds");
    let rows = r
        .layers
        .iter()
        .flat_map(|l| {
            l.history.iter().map(move |p| {
                vec![
                    l.layer.as_str().into(),
                    p.round.to_string().into(),
                    p.task_id.as_str().into(),
                    p.status.as_str().into(),
                    pct(p.coverage).into(),
                    rate(p.pass_rate).into(),
                    p.run.as_deref().unwrap_or("-").into(),
                ]
            })
        })
        .collect();
    out.push(Block::Table(Table::new(
        &[
            "Layer",
            "Round",
            "Task",
            "Status",
            "Coverage",
            "Pass rate",
            "Run",
        ],
        rows,
    )));
    out
}

/// Met green, Below red.
fn gate(gate: &str) -> Text {
    match gate {
        "Met" => toned(Tone::Good, gate),
        "Below" => toned(Tone::Bad, gate),
        _ => gate.into(),
    }
}

pub fn defect_patterns(r: &Report) -> Section {
    let mut out = Section::new("Defect Patterns", "patterns");
    out.para("Severity: HIGH ≥ 3 occurrences, MEDIUM 2, LOW 1 (every failing test record of every run, grouped by classification:error).");
    if r.defect_patterns.is_empty() {
        out.para("No failing tests were recorded.");
        return out;
    }
    let rows = r
        .defect_patterns
        .iter()
        .map(|d| {
            vec![
                d.kind.as_str().into(),
                d.count.to_string().into(),
                d.severity.as_str().into(),
                d.tests.join(", ").into(),
                d.files.join(", ").into(),
            ]
        })
        .collect();
    out.push(Block::Table(Table::new(
        &["Pattern", "Occurrences", "Severity", "Tests", "Files"],
        rows,
    )));
    out
}

pub fn gc(r: &Report) -> Section {
    let mut out = Section::new("GC-Loop Effectiveness", "gc");
    out.para("Rating by coverage gained per round: HIGH above 10 points, MEDIUM above 5, LOW otherwise; n/a when no round was used or coverage is unknown.");
    if r.gc_effectiveness.is_empty() {
        out.para("No layer was run.");
        return out;
    }
    let rows = r
        .gc_effectiveness
        .iter()
        .map(|g| {
            let deltas: Vec<String> = g
                .per_round
                .iter()
                .map(|d| d.map_or("?".into(), |d| format!("{d:+.1}")))
                .collect();
            vec![
                g.layer.as_str().into(),
                g.rounds_used.to_string().into(),
                pct(g.initial_coverage).into(),
                pct(g.final_coverage).into(),
                signed(g.coverage_gained).into(),
                signed(g.gain_per_round).into(),
                if deltas.is_empty() {
                    "-".into()
                } else {
                    deltas.join(", ").into()
                },
                g.rating.as_str().into(),
            ]
        })
        .collect();
    out.push(Block::Table(Table::new(
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
        rows,
    )));
    out
}

pub fn gaps(r: &Report) -> Section {
    let mut out = Section::new("Coverage Gaps", "gaps");
    out.para("Per module, from the coverage file of each layer's final run.");
    if r.coverage_gaps.is_empty() {
        out.para("No uncovered lines were recorded.");
        return out;
    }
    let rows = r
        .coverage_gaps
        .iter()
        .map(|g| {
            vec![
                g.layer.as_str().into(),
                g.module.as_str().into(),
                format!("{:.1}%", g.line_percent).into(),
                pct(g.target).into(),
                format!("{:.1}", g.gap).into(),
                if g.uncovered.is_empty() {
                    "-".into()
                } else {
                    g.uncovered.as_str().into()
                },
                g.recommendation.as_str().into(),
            ]
        })
        .collect();
    out.push(Block::Table(Table::new(
        &[
            "Layer",
            "Module",
            "Current",
            "Target",
            "Gap",
            "Uncovered lines",
            "Recommendation",
        ],
        rows,
    )));
    out
}
