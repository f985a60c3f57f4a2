//! analysis/report.html: the report as one self-contained page. Inline CSS, inline SVG charts
//! drawn by [`charts`] and [`timeline`], a few lines of inline script that only sort and expand;
//! a Content-Security-Policy that allows no request, so the file works from disk and offline.
//!
//! Everything the Markdown report has ([`sections`], [`findings`]; the test-fix cycle,
//! [`fix_cycle`], and requirements traceability, [`traceability`], when the session has them)
//! plus coverage and pass rate per round, the tasks' timeline from the message log, the per-file
//! coverage table with each file's coloured source ([`files`], [`source`]), and a list of every
//! test result. Every string from the project is escaped ([`escape`]).
//!
//! Reads the session (final coverage records, the message log, the repository's files) besides
//! the [`Report`]; writes nothing.

mod charts;
mod escape;
mod files;
mod findings;
mod fix_cycle;
mod sections;
mod shell;
mod source;
mod timeline;
mod traceability;

use std::fmt::Write as _;

use crate::report::Report;
use crate::session::SessionDir;
use escape::esc;

pub use source::{MAX_FILE_BYTES, SOURCE_BUDGET};

/// Test results listed at most (every run's tests); the rest are counted, not listed.
pub const MAX_TEST_ROWS: usize = 20_000;

/// The page for `report` of `session`.
pub fn html(session: &SessionDir, report: &Report) -> String {
    let state = session.load_state().ok();
    let graph = session
        .load_tasks()
        .unwrap_or_else(|_| crate::tasks::TaskGraph::new(Vec::new()));
    let records = crate::bus::reader::read_all(&session.messages())
        .map(|(r, _)| r)
        .unwrap_or_default();
    let spans = timeline::spans(&records, &graph);
    let (rows, layers) = files::rows(&session.root, report);
    let mut sources = source::Sources::new(
        state.as_ref().map(|s| s.repo.as_path()),
        state.as_ref().and_then(|s| s.base_commit.as_deref()),
    );

    let r = report;
    let mut b = String::with_capacity(64 * 1024);
    let _ = writeln!(
        b,
        "<header><h1>Quality Report — {}</h1>",
        esc(&r.session_id)
    );
    let mut about = Vec::new();
    if let Some(repo) = &r.repo {
        about.push(format!("repository <code>{}</code>", esc(repo)));
    }
    if let Some(s) = &state {
        about.push(format!("task “{}”", esc(&s.task_description)));
        about.push(format!("pipeline {}", esc(&s.pipeline_mode)));
    }
    if let Some(c) = &r.created_at {
        about.push(format!("started {}", esc(c)));
    }
    let _ = writeln!(b, "<p class=\"muted\">{}</p></header>", about.join(" · "));
    b.push_str("<nav aria-label=\"Sections\"><a href=\"#score\">Score</a>");
    if r.fix_cycle.is_some() {
        b.push_str("<a href=\"#fix-cycle\">Fix cycle</a>");
    }
    if r.traceability.is_some() {
        b.push_str("<a href=\"#traceability\">Traceability</a>");
    }
    b.push_str(
        "<a href=\"#layers\">Layers</a>\
         <a href=\"#timeline-section\">Timeline</a><a href=\"#files\">Files</a><a href=\"#findings\">Findings</a>\
         <a href=\"#flaky\">Flaky</a><a href=\"#confidence\">Confidence</a><a href=\"#trends\">Trends</a>\
         <a href=\"#tests\">Tests</a><a href=\"#recommendations\">Recommendations</a></nav>\n<main>\n",
    );
    sections::overview(&mut b, r);
    sections::score(&mut b, r);
    if let Some(base) = &r.baseline {
        sections::baseline(&mut b, base);
    }
    if let Some(m) = &r.mutation {
        sections::mutation(&mut b, m);
    }
    if let Some(f) = &r.fix_cycle {
        fix_cycle::section(&mut b, f, &r.session_id);
    }
    if let Some(t) = &r.traceability {
        traceability::section(&mut b, t);
    }
    sections::layers(&mut b, r);

    b.push_str("<h2 id=\"timeline-section\">Timeline</h2>\n");
    if spans.is_empty() {
        b.push_str("<p>The message log records no task.</p>\n");
    } else {
        b.push_str("<p>Each task from its start to its completion, on its worker (from the message log). Bars side by side ran in parallel.</p>\n<figure>");
        b.push_str(&timeline::svg(&spans));
        b.push_str("</figure>\n");
    }

    b.push_str("<h2 id=\"files\">Coverage by File</h2>\n");
    files::table(&mut b, &rows, &layers, &mut sources);

    sections::defect_patterns(&mut b, r);
    sections::gc(&mut b, r);
    sections::gaps(&mut b, r);
    findings::code_defects(&mut b, r);
    findings::contracts(&mut b, r);
    findings::other_findings(&mut b, r);
    findings::added_roles(&mut b, r);
    findings::sandbox(&mut b, r);
    findings::flaky_and_quarantined(&mut b, r);
    sections::confidence(&mut b, r);
    sections::trends(&mut b, r);
    tests(&mut b, r);
    sections::recommendations(&mut b, r);
    sections::missing(&mut b, r);
    b.push_str("</main>\n");
    shell::page(&format!("Quality Report — {}", r.session_id), &b)
}

/// Every test result of every run (results.csv), failing first, in a closed `<details>`.
fn tests(out: &mut String, r: &Report) {
    let _ = writeln!(
        out,
        "<h2 id=\"tests\">Test Results</h2>\n<details><summary>{} test result(s) of {} run(s)</summary>",
        r.rows.len(),
        r.runs.len()
    );
    let mut rows: Vec<&crate::report::CsvRow> = r.rows.iter().collect();
    rows.sort_by_key(|t| (t.status == "passed", t.status == "skipped"));
    out.push_str("<div class=\"scroll\"><table class=\"sortable\" id=\"test-table\"><thead><tr><th>Test</th><th>Layer</th><th>Round</th><th>Status</th><th>Classification</th><th>Criticality</th><th class=\"n\">Seconds</th></tr></thead>\n");
    for t in rows.iter().take(MAX_TEST_ROWS) {
        out.push_str("<tbody><tr><td>");
        escape::push_esc(out, &t.id);
        out.push_str("</td><td>");
        escape::push_esc(out, &t.layer);
        let _ = write!(out, "</td><td class=\"n\">{}</td><td>", t.round);
        escape::push_esc(out, &t.status);
        out.push_str("</td><td>");
        escape::push_esc(out, &t.classification);
        out.push_str("</td><td>");
        escape::push_esc(out, &t.criticality);
        match t.duration {
            Some(d) => {
                let _ = writeln!(
                    out,
                    "</td><td class=\"n\" data-v=\"{d}\">{d:.3}</td></tr></tbody>"
                );
            }
            None => out.push_str("</td><td class=\"n\" data-v=\"-1\">-</td></tr></tbody>\n"),
        }
    }
    out.push_str("</table></div>");
    if rows.len() > MAX_TEST_ROWS {
        let _ = write!(
            out,
            "<p>{} more in results.csv.</p>",
            rows.len() - MAX_TEST_ROWS
        );
    }
    out.push_str("</details>\n");
}
