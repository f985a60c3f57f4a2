//! What the tests found: code defects with their evidence, the generator's contract findings,
//! side effects, results flagged for review, docstring examples left out, test files that do
//! not load; the roles added while the session ran; flaky and quarantined tests.

use serde_json::Value;

use crate::report::document::{code, Block, Section, Table, Text};
use crate::report::{CodeDefect, Report};

/// A string field of a generator finding, or `-`.
fn field<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or("-")
}

pub fn findings(r: &Report) -> Section {
    let mut out = Section::new("Findings", "findings").nav("Findings");
    out.sub("Code defects", "code-defects");
    if r.findings.code_defects.is_empty() {
        out.para("No test was classified code_defect.");
    }
    for d in &r.findings.code_defects {
        out.push(code_defect(d));
    }
    contracts(&mut out, r);
    calls(
        &mut out,
        ("Side effects (never tests)", "side-effects"),
        Text::from(
            "Calls that change something outside the temporary folder a test creates: after ",
        )
        .code("apply")
        .plain(" that would be your project or your home folder. No delivered test makes them."),
        &r.findings.side_effects,
    );
    calls(
        &mut out,
        ("Flagged for review (suspicious results)", "review"),
        "Results that look like bugs rather than behaviour to keep: they are not asserted (the test checks only their type) until a person says which is right.".into(),
        &r.findings.review,
    );
    calls(
        &mut out,
        ("Docstring examples left out", "skipped-examples"),
        "Their expected output only holds on the machine they were written on.".into(),
        &r.findings.skipped_examples,
    );
    load_errors(&mut out, r);
    out
}

/// One defect: what failed where, the test that shows it, and its evidence.
fn code_defect(d: &CodeDefect) -> Block {
    let e = &d.evidence;
    let mut blocks = vec![
        Block::Paragraph(
            Text::default()
                .strong(field(e, "error"))
                .plain(" at ")
                .code(field(e, "location")),
        ),
        Block::Paragraph(
            Text::from("Shown by the test ")
                .code(d.test.as_str())
                .plain(format!(
                    " ({}, {}, round {}); criticality {}.",
                    d.layer,
                    d.task_id,
                    d.round,
                    d.criticality_rule
                        .as_deref()
                        .or(d.criticality.as_deref())
                        .unwrap_or("-")
                )),
        ),
    ];
    if d.hits > 1 {
        blocks.push(Block::Paragraph(
            format!(
                "Hit by {} tests (one location, one exception type); also: {}",
                d.hits,
                d.same_cause.join(", ")
            )
            .into(),
        ));
    }
    if !d.suspects.is_empty() {
        blocks.push(Block::Paragraph(
            Text::from("Likely at (fault localisation): ").code(d.suspects.join(", ")),
        ));
    }
    if let Some(m) = &d.message {
        blocks.push(Block::Paragraph(format!("Message: {m}").into()));
    }
    blocks.push(Block::Paragraph(
        format!("Reason: {}", field(e, "reason")).into(),
    ));
    if let Some(x) = e["excerpt"].as_str() {
        blocks.push(Block::Pre(x.to_string()));
    }
    Block::Boxed(blocks)
}

fn contracts(out: &mut Section, r: &Report) {
    out.sub("Contract findings of the generator", "contracts");
    if r.findings.contract_findings.is_empty() {
        out.para("None.");
        return;
    }
    out.para("One row per function, kind and exception type: the shortest call shows it, Calls counts the calls that hit it.");
    let rows = r
        .findings
        .contract_findings
        .iter()
        .map(|f| {
            vec![
                field(f, "module").into(),
                field(f, "function").into(),
                field(f, "kind").into(),
                code(field(f, "call")),
                field(f, "expected").into(),
                field(f, "actual").into(),
                f["hits"].as_u64().unwrap_or(1).to_string().into(),
                field(f, "test").into(),
            ]
        })
        .collect();
    out.push(Block::Table(Table::new(
        &[
            "Module", "Function", "Kind", "Call", "Expected", "Actual", "Calls", "Test",
        ],
        rows,
    )));
}

/// A heading, what the list is, then a row per finding (function, call, what it does), or
/// "None.".
pub fn calls(
    out: &mut Section,
    (title, anchor): (&str, &'static str),
    intro: Text,
    list: &[Value],
) {
    out.sub(title, anchor);
    out.para(intro);
    if list.is_empty() {
        out.para("None.");
        return;
    }
    let rows = list
        .iter()
        .map(|f| {
            vec![
                field(f, "function").into(),
                code(field(f, "call")),
                field(f, "actual").into(),
            ]
        })
        .collect();
    out.push(Block::Table(Table::new(
        &["Function", "Call", "What it does"],
        rows,
    )));
}

fn load_errors(out: &mut Section, r: &Report) {
    if r.findings.load_errors.is_empty() {
        return;
    }
    out.sub("Test files that do not load", "load-errors");
    out.para("Classified like failing tests: a module that exists nowhere is the test's fault, a dependency that is not installed the environment's (with the command that installs it), a syntax error in the project's code a code defect.");
    let rows = r
        .findings
        .load_errors
        .iter()
        .map(|l| {
            vec![
                l.file.as_str().into(),
                l.layer.as_str().into(),
                l.classification.as_deref().unwrap_or("unclassified").into(),
                l.reason.as_str().into(),
                l.install.as_deref().map_or("-".into(), code),
            ]
        })
        .collect();
    out.push(Block::Table(Table::new(
        &["File", "Layer", "Classification", "Why", "Install"],
        rows,
    )));
}

/// Roles added while the session ran: a lint, a mutation run, a security scan, an agent.
pub fn added_roles(r: &Report) -> Option<Section> {
    if r.added_roles.is_empty() {
        return None;
    }
    let mut out = Section::new("Added Roles", "roles");
    out.para("Roles added to this session (roles add, or a capability gap a worker reported).");
    let rows = r
        .added_roles
        .iter()
        .map(|a| {
            vec![
                a.role.as_str().into(),
                a.task_id.as_str().into(),
                a.status.as_str().into(),
                a.summary.as_str().into(),
                a.reason.as_str().into(),
                a.artifacts.join(", ").into(),
            ]
        })
        .collect();
    out.push(Block::Table(Table::new(
        &["Role", "Task", "Status", "Result", "Why", "Files"],
        rows,
    )));
    Some(out)
}

pub fn flaky(r: &Report) -> Section {
    let mut out = Section::new("Flaky Tests", "flaky").nav("Flaky");
    if r.flaky_tests.is_empty() {
        out.para("None.");
    } else {
        let items = r
            .flaky_tests
            .iter()
            .map(|f| format!("{} ({}, {})", f.test, f.layer, f.task_id).into());
        out.push(Block::List(items.collect()));
    }
    out
}

pub fn quarantined(r: &Report) -> Section {
    let mut out = Section::new("Quarantined Tests", "quarantined");
    if r.quarantined.is_empty() {
        out.para("None.");
    } else {
        let items = r.quarantined.iter().map(|q| {
            format!(
                "{}{} ({}): {}",
                q.test,
                if q.whole_file { " (whole file)" } else { "" },
                q.task_id,
                q.reason
            )
            .into()
        });
        out.push(Block::List(items.collect()));
    }
    out
}
