//! What the runs measured beyond the layers: the project's own suite (baseline), the mutation
//! analysis, and the trends against earlier sessions.

use crate::artifacts::MutationRecord;
use crate::report::document::{pct, Block, Extra, Section, Table, Text};
use crate::report::{BaselineReport, Report, TREND_COVERAGE_POINTS, TREND_SCORE_POINTS};

/// The project's own suite, and what each layer's tests added to it.
pub fn baseline(b: &BaselineReport) -> Section {
    let mut out = Section::new("Baseline: the Project's Own Tests", "baseline");
    let coverage = b.coverage.map_or_else(
        || "coverage unknown".to_string(),
        |c| format!("{c:.1}% line coverage of the files in scope"),
    );
    out.para(format!(
        "{} test(s), {} passed; {coverage}.",
        b.tests, b.passed
    ));
    if !b.layers.is_empty() {
        let rows = b
            .layers
            .iter()
            .map(|l| {
                vec![
                    l.layer.as_str().into(),
                    format!("{:.1}%", l.before).into(),
                    format!("{:.1}%", l.after).into(),
                    format!("{:+.1}", l.after - l.before).into(),
                    l.new_tests.to_string().into(),
                ]
            })
            .collect();
        out.push(Block::Table(Table::new(
            &["Layer", "Before", "After", "Points", "New tests"],
            rows,
        )));
    }
    if !b.files.is_empty() {
        let rows = b
            .files
            .iter()
            .map(|f| {
                vec![
                    f.file.as_str().into(),
                    pct(f.before).into(),
                    pct(f.after).into(),
                ]
            })
            .collect();
        out.push(Block::Table(Table::new(
            &[
                "File",
                "The project's own tests",
                "With the generated tests",
            ],
            rows,
        )));
    }
    if !b.failing_tests.is_empty() {
        out.para(format!(
            "Existing tests that fail (reported, never removed): {}",
            b.failing_tests.join(", ")
        ));
    }
    out
}

/// How many mutants each suite kills, and what minimization dropped.
pub fn mutation(m: &MutationRecord) -> Section {
    let mut out = Section::new("Mutation Analysis", "mutation");
    let own = m.baseline.as_ref().map_or(String::new(), |b| {
        format!(
            "; the project's own {} test(s) alone {:.1}%",
            b.tests, b.score
        )
    });
    out.para(format!(
        "{} mutant(s) of {} module(s) (operators, conditions, constants and returns changed; {} reached by no test). Mutation score {:.1}% with the project's tests and the kept generated ones; the {} kept generated test(s) alone {:.1}%{own}.{}",
        m.mutants,
        m.modules.len(),
        m.no_coverage,
        m.combined.score,
        m.generated.tests,
        m.generated.score,
        if m.exhausted {
            " The time budget ended first: the figures cover the mutants that ran."
        } else {
            ""
        }
    ));
    if !m.layers.is_empty() {
        let rows = m
            .layers
            .iter()
            .map(|l| {
                vec![
                    l.layer.as_str().into(),
                    format!("{} → {}", l.before.tests, l.after.tests).into(),
                    l.dropped.len().to_string().into(),
                    format!("{:.1}% → {:.1}%", l.before.score, l.after.score).into(),
                    format!("{:.1}% → {:.1}%", l.combined_before, l.combined_after).into(),
                ]
            })
            .collect();
        out.push(Block::Table(Table::new(
            &[
                "Layer",
                "Tests (minimized: dropped when they add no line, arc or killed mutant)",
                "Dropped",
                "Score alone",
                "With the project's tests",
            ],
            rows,
        )));
    }
    if !m.survivors.is_empty() {
        let mut shown: Vec<String> = m
            .survivors
            .iter()
            .map(|s| format!("{} ({})", s.location, s.operator))
            .collect();
        shown.dedup();
        out.para(format!(
            "Surviving mutants (no test notices the change): {}",
            shown.join(", ")
        ));
    }
    out
}

/// Earlier sessions of the repository and this one: the score and each layer's coverage.
pub fn trends(r: &Report) -> Section {
    let mut out = Section::new("Trends", "trends").nav("Trends");
    out.para(format!("Earlier sessions of the same repository; compared with the most recent. Stable within ±{TREND_COVERAGE_POINTS} coverage points, ±{TREND_SCORE_POINTS} score points."));
    if r.trends.previous.is_empty() {
        out.para("No earlier session of this repository.");
        return out;
    }
    out.push(Block::Extra(Extra::TrendChart));
    let rows = r
        .trends
        .previous
        .iter()
        .map(|p| {
            let layers: Vec<String> = p
                .layers
                .iter()
                .map(|(l, c)| format!("{l} {}", pct(*c)))
                .collect();
            vec![
                p.session_id.as_str().into(),
                p.created_at.as_str().into(),
                p.quality_score
                    .map_or("-".into(), |s| format!("{s:.1}"))
                    .into(),
                layers.join(", ").into(),
                p.defect_patterns.to_string().into(),
            ]
        })
        .collect();
    out.push(Block::Table(Table::new(
        &[
            "Session",
            "Created",
            "Score",
            "Coverage by layer",
            "Defect occurrences",
        ],
        rows,
    )));
    let changes = r
        .trends
        .coverage
        .iter()
        .chain(r.trends.score.iter())
        .chain(r.trends.defect_patterns.iter())
        .map(|t| {
            Text::from(format!(
                "{}: {:.1} → {:.1} ({:+.1}) {}",
                t.subject, t.previous, t.current, t.delta, t.direction
            ))
        })
        .collect::<Vec<_>>();
    if !changes.is_empty() {
        out.push(Block::List(changes));
    }
    out
}
