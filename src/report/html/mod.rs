//! analysis/report.html: the report as one self-contained page. Inline CSS, inline SVG charts
//! drawn by [`charts`], [`plots`] and [`timeline`], a few lines of inline script that only sort
//! and expand; a Content-Security-Policy that allows no request, so the file works from disk and
//! offline.
//!
//! The sections are the Markdown's ([`crate::report::sections`]), rendered by [`blocks`]: the
//! same words and figures. Only the page has the charts, the tasks' timeline from the message
//! log, the per-file coverage table with each file's coloured source ([`files`], [`source`]),
//! and a list of every test result. Every string from the project is escaped ([`escape`]).
//!
//! Reads the session (final coverage records, the message log, the repository's files) besides
//! the [`Report`]; writes nothing.

mod blocks;
mod charts;
mod escape;
mod files;
mod plots;
mod shell;
mod source;
mod timeline;

use std::fmt::Write as _;

use crate::report::document::Extra;
use crate::report::sections::document;
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
    let doc = document(r);
    let mut b = String::with_capacity(64 * 1024);
    let _ = writeln!(b, "<header><h1>{}</h1>", esc(&doc.title));
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
    b.push_str("<nav aria-label=\"Sections\">");
    for h in doc.sections.iter().filter_map(|s| s.heading.as_ref()) {
        if let Some(label) = h.nav {
            let _ = write!(b, "<a href=\"#{}\">{label}</a>", h.anchor);
        }
    }
    b.push_str("</nav>\n<main>\n");
    let mut extra = |out: &mut String, e: Extra| match e {
        Extra::LayerCharts => plots::layers(out, r),
        Extra::TrendChart => plots::trends(out, r),
        Extra::ConfidenceBars => plots::confidence(out, r),
        Extra::FixCycleChart => {
            if let Some(f) = &r.fix_cycle {
                plots::fix_cycle(out, &f.state.iterations);
            }
        }
        Extra::Timeline => {
            if spans.is_empty() {
                out.push_str("<p>The message log records no task.</p>\n");
            } else {
                out.push_str("<p>Each task from its start to its completion, on its worker (from the message log). Bars side by side ran in parallel.</p>\n<figure>");
                out.push_str(&timeline::svg(&spans));
                out.push_str("</figure>\n");
            }
        }
        Extra::Files => files::table(out, &rows, &layers, &mut sources),
        Extra::TestResults => tests(out, r),
    };
    for s in &doc.sections {
        blocks::section(&mut b, s, &mut extra);
    }
    b.push_str("</main>\n");
    shell::page(&doc.title, &b)
}

/// Every test result of every run (results.csv), failing first, in a closed `<details>`.
fn tests(out: &mut String, r: &Report) {
    let _ = writeln!(
        out,
        "<details><summary>{} test result(s) of {} run(s)</summary>",
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
