//! Findings as HTML: code defects with their evidence and the test that shows each, the
//! generator's contract findings, side effects, skipped examples, test files that do not load,
//! added roles, the sandbox, flaky and quarantined tests.

use std::fmt::Write as _;

use serde_json::Value;

use super::escape::{esc, table};
use crate::report::Report;

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or("-")
}

pub fn code_defects(out: &mut String, r: &Report) {
    out.push_str("<h2 id=\"findings\">Findings</h2>\n<h3 id=\"code-defects\">Code defects</h3>\n");
    if r.findings.code_defects.is_empty() {
        out.push_str("<p>No test was classified code_defect.</p>\n");
        return;
    }
    for d in &r.findings.code_defects {
        let e = &d.evidence;
        let _ = write!(
            out,
            "<div class=\"defect\"><p><strong>{}</strong> at <code>{}</code></p>\
             <p>Shown by the test <code>{}</code> ({}, {}, round {}); criticality {}.</p>",
            esc(s(e, "error")),
            esc(s(e, "location")),
            esc(&d.test),
            esc(&d.layer),
            esc(&d.task_id),
            d.round,
            esc(d
                .criticality_rule
                .as_deref()
                .or(d.criticality.as_deref())
                .unwrap_or("-"))
        );
        if d.hits > 1 {
            let _ = write!(
                out,
                "<p>Hit by {} tests (one location, one exception type); also: {}</p>",
                d.hits,
                esc(&d.same_cause.join(", "))
            );
        }
        if !d.suspects.is_empty() {
            let _ = write!(
                out,
                "<p>Likely at (fault localisation): <code>{}</code></p>",
                esc(&d.suspects.join(", "))
            );
        }
        if let Some(m) = &d.message {
            let _ = write!(out, "<p>Message: {}</p>", esc(m));
        }
        let _ = write!(out, "<p>Reason: {}</p>", esc(s(e, "reason")));
        if let Some(x) = e["excerpt"].as_str() {
            let _ = write!(out, "<pre>{}</pre>", esc(x));
        }
        out.push_str("</div>\n");
    }
}

pub fn contracts(out: &mut String, r: &Report) {
    out.push_str("<h3 id=\"contracts\">Contract findings of the generator</h3>\n");
    if r.findings.contract_findings.is_empty() {
        out.push_str("<p>None.</p>\n");
        return;
    }
    out.push_str("<p>One row per function, kind and exception type: the shortest call shows it, Calls counts the calls that hit it.</p>\n");
    let rows: Vec<Vec<String>> = r
        .findings
        .contract_findings
        .iter()
        .map(|f| {
            vec![
                esc(s(f, "module")),
                esc(s(f, "function")),
                esc(s(f, "kind")),
                format!("<code>{}</code>", esc(s(f, "call"))),
                esc(s(f, "expected")),
                esc(s(f, "actual")),
                f["hits"].as_u64().unwrap_or(1).to_string(),
                esc(s(f, "test")),
            ]
        })
        .collect();
    table(
        out,
        "",
        &[
            "Module", "Function", "Kind", "Call", "Expected", "Actual", "Calls", "Test",
        ],
        &rows,
    );
}

/// A heading, an explanation, then a row per finding (function, call, what it does), or None.
fn calls(out: &mut String, heading: &str, id: &str, intro: &str, list: &[Value]) {
    let _ = writeln!(out, "<h3 id=\"{id}\">{heading}</h3>\n<p>{intro}</p>");
    if list.is_empty() {
        out.push_str("<p>None.</p>\n");
        return;
    }
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|f| {
            vec![
                esc(s(f, "function")),
                format!("<code>{}</code>", esc(s(f, "call"))),
                esc(s(f, "actual")),
            ]
        })
        .collect();
    table(out, "", &["Function", "Call", "What it does"], &rows);
}

pub fn other_findings(out: &mut String, r: &Report) {
    calls(
        out,
        "Flagged for review (suspicious results)",
        "review",
        "Results that look like bugs rather than behaviour to keep: they are not asserted (the test checks only their type) until a person says which is right.",
        &r.findings.review,
    );
    calls(
        out,
        "Side effects (never tests)",
        "side-effects",
        "Calls that change something outside the temporary folder a test creates: after <code>apply</code> that would be your project or your home folder. No delivered test makes them.",
        &r.findings.side_effects,
    );
    calls(
        out,
        "Docstring examples left out",
        "skipped-examples",
        "Their expected output only holds on the machine they were written on.",
        &r.findings.skipped_examples,
    );
    if !r.findings.load_errors.is_empty() {
        out.push_str("<h3 id=\"load-errors\">Test files that do not load</h3>\n<p>Classified like failing tests: a module that exists nowhere is the test's fault, a dependency that is not installed the environment's (with the command that installs it), a syntax error in the project's code a code defect.</p>\n");
        let rows: Vec<Vec<String>> = r
            .findings
            .load_errors
            .iter()
            .map(|l| {
                vec![
                    esc(&l.file),
                    esc(&l.layer),
                    esc(l.classification.as_deref().unwrap_or("unclassified")),
                    esc(&l.reason),
                    l.install
                        .as_deref()
                        .map_or("-".into(), |i| format!("<code>{}</code>", esc(i))),
                ]
            })
            .collect();
        table(
            out,
            "",
            &["File", "Layer", "Classification", "Why", "Install"],
            &rows,
        );
    }
}

pub fn added_roles(out: &mut String, r: &Report) {
    if r.added_roles.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"roles\">Added Roles</h2>\n<p>Roles added to this session (roles add, or a capability gap a worker reported).</p>\n");
    let rows: Vec<Vec<String>> = r
        .added_roles
        .iter()
        .map(|a| {
            vec![
                esc(&a.role),
                esc(&a.task_id),
                esc(&a.status),
                esc(&a.summary),
                esc(&a.reason),
                esc(&a.artifacts.join(", ")),
            ]
        })
        .collect();
    table(
        out,
        "",
        &["Role", "Task", "Status", "Result", "Why", "Files"],
        &rows,
    );
}

pub fn sandbox(out: &mut String, r: &Report) {
    out.push_str("<h2 id=\"sandbox\">Sandbox</h2>\n");
    match &r.sandbox.protections {
        None => out.push_str("<p>Not recorded (the session predates the sandbox).</p>\n"),
        Some(p) => {
            let rows = vec![
                vec!["Filesystem".into(), esc(&p.filesystem)],
                vec!["Network".into(), esc(&p.network)],
                vec!["Limits".into(), esc(&p.limits)],
                vec!["Environment".into(), esc(&p.environment)],
            ];
            table(out, "", &["Protection", "State"], &rows);
            if p.missing.is_empty() {
                out.push_str("<p>Missing protections: none.</p>\n");
            } else {
                out.push_str("<p>Missing protections:</p><ul>");
                for m in &p.missing {
                    let _ = write!(out, "<li>{}</li>", esc(m));
                }
                out.push_str("</ul>\n");
            }
        }
    }
    if !r.sandbox.watch.is_empty() {
        out.push_str("<p>File-system watch of the kept tests (their writes diverted to a throwaway layer and listed):</p><ul>");
        for w in &r.sandbox.watch {
            let _ = write!(out, "<li>{}</li>", esc(&w.line()));
        }
        out.push_str("</ul>\n");
    }
    calls(
        out,
        "Blocked attempts",
        "blocked",
        "Calls of the generator the sandbox stopped (a limit, or what the effect audit cannot see); no test keeps them.",
        &r.sandbox.blocked,
    );
}

pub fn flaky_and_quarantined(out: &mut String, r: &Report) {
    out.push_str("<h2 id=\"flaky\">Flaky Tests</h2>\n");
    if r.flaky_tests.is_empty() {
        out.push_str("<p>None.</p>\n");
    } else {
        let rows: Vec<Vec<String>> = r
            .flaky_tests
            .iter()
            .map(|f| vec![esc(&f.test), esc(&f.layer), esc(&f.task_id)])
            .collect();
        table(out, "", &["Test", "Layer", "Task"], &rows);
    }
    out.push_str("<h2 id=\"quarantined\">Quarantined Tests</h2>\n");
    if r.quarantined.is_empty() {
        out.push_str("<p>None.</p>\n");
    } else {
        let rows: Vec<Vec<String>> = r
            .quarantined
            .iter()
            .map(|q| {
                vec![
                    format!(
                        "{}{}",
                        esc(&q.test),
                        if q.whole_file { " (whole file)" } else { "" }
                    ),
                    esc(&q.task_id),
                    esc(&q.reason),
                ]
            })
            .collect();
        table(out, "", &["Test", "Task", "Reason"], &rows);
    }
}
