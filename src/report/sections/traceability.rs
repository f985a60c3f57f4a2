//! The requirements traceability section (also written alone as analysis/traceability.md):
//! the verdict counts, one row per scenario of each acceptance criterion (requirement,
//! criterion and verdict shared by its scenarios), criteria with no passing test first as the
//! model orders them, then the other routes' scenarios by reference.

use crate::report::document::{code, toned, Block, Body, Group, Section, Table, Text, Tone};
use crate::report::{CriteriaFrom, ScenarioStatus, Traceability, TracedScenario, Verdict};

pub fn traceability(t: &Traceability) -> Section {
    let mut out = Section::new("Requirements Traceability", "traceability").nav("Traceability");
    out.blocks = blocks(t);
    out
}

/// Longest criterion text in a table cell; report.json has it whole.
const TEXT_CELL: usize = 120;

fn short(text: &str) -> String {
    if text.chars().count() <= TEXT_CELL {
        text.to_string()
    } else {
        let cut: String = text.chars().take(TEXT_CELL - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

/// The section's body, without its heading.
pub fn blocks(t: &Traceability) -> Vec<Block> {
    let s = &t.summary;
    let from = match t.criteria_from {
        CriteriaFrom::Requirements => "the requirement files",
        CriteriaFrom::Scenarios => "the scenarios' req_ref",
    };
    let mut out = vec![
        Block::Paragraph(format!(
            "Each acceptance criterion, the scenarios planned for it (scenarios.csv) and the last result of their tests. {} criteria of {} requirement(s), from {from}; criteria with no passing test first.",
            s.criteria, s.requirements
        ).into()),
        Block::Paragraph(
            Text::from("Verdicts: ")
                .tone(Tone::Good, format!("{} covered", s.covered))
                .plain(", ")
                .tone(Tone::Bad, format!("{} violated", s.violated))
                .plain(", ")
                .tone(Tone::Bad, format!("{} failing", s.failing))
                .plain(", ")
                .tone(Tone::Muted, format!("{} not run", s.not_run))
                .plain(", ")
                .tone(Tone::Muted, format!("{} with no scenario", s.no_scenario))
                .plain(". Violated: a test of the criterion fails as a code defect; failing: it fails otherwise."),
        ),
    ];
    if !t.notes.is_empty() {
        let notes = t.notes.iter().map(|n| format!("Note: {n}").into());
        out.push(Block::List(notes.collect()));
    }
    if t.criteria.is_empty() {
        out.push(Block::Paragraph(
            Text::from("No acceptance criterion: no requirement file was read and no scenario names one (req_ref ")
                .code("REQ-001:AC-1")
                .plain(")."),
        ));
    } else {
        out.push(Block::Table(criteria(t)));
    }
    if !t.other_scenarios.is_empty() {
        out.push(Block::Heading(crate::report::document::Heading::new(
            3,
            "Scenarios of Other Routes",
            "other-routes",
        )));
        out.push(Block::Paragraph("Coverage gaps, code boundaries and defects: traced to their reference rather than to a criterion.".into()));
        let rows = t
            .other_scenarios
            .iter()
            .map(|sc| {
                let reference = if sc.req_ref.trim().is_empty() {
                    "-".into()
                } else {
                    sc.req_ref.as_str().into()
                };
                [vec![reference], scenario_cells(sc)].concat()
            })
            .collect();
        let mut table = Table::new(
            &[
                "Reference",
                "Scenario",
                "Layer",
                "Priority",
                "Test file",
                "Last status",
            ],
            rows,
        );
        table.id = Some("other-routes-table");
        out.push(Block::Table(table));
    }
    out
}

/// One group per criterion: requirement, criterion and verdict, shared by its scenarios' rows.
fn criteria(t: &Traceability) -> Table {
    let groups = t
        .criteria
        .iter()
        .map(|c| {
            let requirement = match c.requirement_title.as_deref() {
                Some(title) if !title.is_empty() && title != c.requirement => {
                    format!("{}: {title}", c.requirement)
                }
                _ => c.requirement.clone(),
            };
            let criterion = match (&c.text, t.criteria_from) {
                (Some(words), _) => format!("{}: {}", c.criterion, short(words)).into(),
                (None, CriteriaFrom::Requirements) => Text::from(format!("{} ", c.criterion))
                    .tone(Tone::Muted, "(not in the requirement files)"),
                (None, CriteriaFrom::Scenarios) => c.criterion.as_str().into(),
            };
            let rows = if c.scenarios.is_empty() {
                vec![vec!["-".into(); 5]]
            } else {
                c.scenarios.iter().map(scenario_cells).collect()
            };
            Group {
                shared: vec![
                    requirement.into(),
                    criterion,
                    toned(verdict_tone(c.verdict), c.verdict.words()),
                ],
                rows,
            }
        })
        .collect();
    Table {
        id: Some("traceability-table"),
        head: [
            "Requirement",
            "Criterion",
            "Verdict",
            "Scenario",
            "Layer",
            "Priority",
            "Test file",
            "Last status",
        ]
        .map(String::from)
        .to_vec(),
        body: Body::Groups(groups),
    }
}

/// Violated and failing red, covered green, not run and no scenario grey.
fn verdict_tone(v: Verdict) -> Tone {
    match v {
        Verdict::Violated | Verdict::Failing => Tone::Bad,
        Verdict::Covered => Tone::Good,
        Verdict::NotRun | Verdict::NoScenario => Tone::Muted,
    }
}

/// Scenario (id and name), layer, priority, test file and last status (where it comes from as
/// its tooltip).
fn scenario_cells(sc: &TracedScenario) -> Vec<Text> {
    let tone = match sc.status {
        ScenarioStatus::Passed => Tone::Good,
        ScenarioStatus::Failed => Tone::Bad,
        ScenarioStatus::NotRun => Tone::Muted,
    };
    let mut status = toned(tone, sc.status_words());
    if let Some(from) = &sc.status_from {
        status = status.titled(format!("from {from}"));
    }
    vec![
        format!("{} {}", sc.id, sc.name).into(),
        sc.layer.as_str().into(),
        sc.priority.as_str().into(),
        if sc.test_file.trim().is_empty() {
            "-".into()
        } else {
            code(sc.test_file.as_str())
        },
        status,
    ]
}
