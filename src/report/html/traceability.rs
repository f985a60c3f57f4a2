//! Requirements traceability as HTML (what the Markdown has): the verdict counts, one row per
//! scenario of each acceptance criterion (requirement, criterion and verdict spanning them),
//! criteria with no passing test first as the model orders them, then the other routes'
//! scenarios by reference. Verdicts and statuses take the page's pass and fail colours.

use std::fmt::Write as _;

use super::escape::{esc, push_esc};
use crate::report::{CriteriaFrom, ScenarioStatus, Traceability, TracedScenario, Verdict};

pub fn section(out: &mut String, t: &Traceability) {
    let s = &t.summary;
    let from = match t.criteria_from {
        CriteriaFrom::Requirements => "the requirement files",
        CriteriaFrom::Scenarios => "the scenarios' req_ref",
    };
    let _ = writeln!(
        out,
        "<h2 id=\"traceability\">Requirements Traceability</h2>\n\
         <p>Each acceptance criterion, the scenarios planned for it (scenarios.csv) and the last result of their tests. {} criteria of {} requirement(s), from {from}; criteria with no passing test first.</p>\n\
         <p>Verdicts: <span class=\"good\">{} covered</span>, <span class=\"bad\">{} violated</span>, <span class=\"bad\">{} failing</span>, <span class=\"muted\">{} not run</span>, <span class=\"muted\">{} with no scenario</span>. Violated: a test of the criterion fails as a code defect; failing: it fails otherwise.</p>",
        s.criteria, s.requirements, s.covered, s.violated, s.failing, s.not_run, s.no_scenario
    );
    if !t.notes.is_empty() {
        out.push_str("<ul>");
        for n in &t.notes {
            let _ = write!(out, "<li>Note: {}</li>", esc(n));
        }
        out.push_str("</ul>\n");
    }
    if t.criteria.is_empty() {
        out.push_str("<p>No acceptance criterion: no requirement file was read and no scenario names one (req_ref <code>REQ-001:AC-1</code>).</p>\n");
    } else {
        out.push_str("<div class=\"scroll\"><table id=\"traceability-table\"><thead><tr><th scope=\"col\">Requirement</th><th scope=\"col\">Criterion</th><th scope=\"col\">Verdict</th><th scope=\"col\">Scenario</th><th scope=\"col\">Layer</th><th scope=\"col\">Priority</th><th scope=\"col\">Test file</th><th scope=\"col\">Last status</th></tr></thead>\n");
        for c in &t.criteria {
            let mut requirement = esc(&c.requirement);
            if let Some(title) = c
                .requirement_title
                .as_deref()
                .filter(|title| !title.is_empty() && *title != c.requirement)
            {
                let _ = write!(requirement, ": {}", esc(title));
            }
            let criterion = match (&c.text, t.criteria_from) {
                (Some(text), _) => format!("{}: {}", esc(&c.criterion), esc(text)),
                (None, CriteriaFrom::Requirements) => format!(
                    "{} <span class=\"muted\">(not in the requirement files)</span>",
                    esc(&c.criterion)
                ),
                (None, CriteriaFrom::Scenarios) => esc(&c.criterion),
            };
            let span = c.scenarios.len().max(1);
            let _ = write!(
                out,
                "<tbody><tr><td rowspan=\"{span}\">{requirement}</td><td rowspan=\"{span}\">{criterion}</td><td rowspan=\"{span}\"><span class=\"{}\">{}</span></td>",
                verdict_class(c.verdict),
                c.verdict.words()
            );
            if c.scenarios.is_empty() {
                out.push_str("<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td></tr>");
            }
            for (i, sc) in c.scenarios.iter().enumerate() {
                if i > 0 {
                    out.push_str("<tr>");
                }
                scenario_cells(out, sc);
                out.push_str("</tr>");
            }
            out.push_str("</tbody>\n");
        }
        out.push_str("</table></div>\n");
    }
    if !t.other_scenarios.is_empty() {
        out.push_str("<h3 id=\"other-routes\">Scenarios of Other Routes</h3>\n<p>Coverage gaps, code boundaries and defects: traced to their reference rather than to a criterion.</p>\n");
        out.push_str("<div class=\"scroll\"><table id=\"other-routes-table\"><thead><tr><th scope=\"col\">Reference</th><th scope=\"col\">Scenario</th><th scope=\"col\">Layer</th><th scope=\"col\">Priority</th><th scope=\"col\">Test file</th><th scope=\"col\">Last status</th></tr></thead><tbody>\n");
        for sc in &t.other_scenarios {
            out.push_str("<tr><td>");
            if sc.req_ref.trim().is_empty() {
                out.push('-');
            } else {
                push_esc(out, &sc.req_ref);
            }
            out.push_str("</td>");
            scenario_cells(out, sc);
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
    }
}

/// Violated and failing red, covered green, not run and no scenario grey.
fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Violated | Verdict::Failing => "bad",
        Verdict::Covered => "good",
        Verdict::NotRun | Verdict::NoScenario => "muted",
    }
}

/// Scenario (id and name), layer, priority, test file and last status (where it comes from in
/// its tooltip).
fn scenario_cells(out: &mut String, sc: &TracedScenario) {
    out.push_str("<td>");
    push_esc(out, &sc.id);
    out.push(' ');
    push_esc(out, &sc.name);
    out.push_str("</td><td>");
    push_esc(out, &sc.layer);
    out.push_str("</td><td>");
    push_esc(out, sc.priority.as_str());
    out.push_str("</td><td>");
    if sc.test_file.trim().is_empty() {
        out.push('-');
    } else {
        out.push_str("<code>");
        push_esc(out, &sc.test_file);
        out.push_str("</code>");
    }
    let class = match sc.status {
        ScenarioStatus::Passed => "good",
        ScenarioStatus::Failed => "bad",
        ScenarioStatus::NotRun => "muted",
    };
    out.push_str("</td><td>");
    let _ = write!(out, "<span class=\"{class}\"");
    if let Some(from) = &sc.status_from {
        out.push_str(" title=\"from ");
        push_esc(out, from);
        out.push('"');
    }
    out.push('>');
    push_esc(out, &sc.status_words());
    out.push_str("</span></td>");
}
