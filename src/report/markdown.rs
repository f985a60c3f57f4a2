//! analysis/quality-report.md and analysis/traceability.md: the sections of
//! [`super::sections`] rendered as Markdown. Nothing here computes a figure or chooses a word;
//! the page (`html/`) renders the same sections. No timestamps: the same session gives the same
//! text.

use std::fmt::Write as _;

use super::document::{Block, Body, Document, Figure, Heading, Section, Style, Table, Text};
use super::model::Traceability;
use super::sections::{document, traceability_blocks};
use super::Report;

pub fn markdown(r: &Report) -> String {
    render(&document(r))
}

/// analysis/traceability.md: the section on its own.
pub fn traceability_document(t: &Traceability, session_id: &str) -> String {
    let mut md = format!("# Requirements Traceability — {}\n\n", text(session_id));
    for b in &traceability_blocks(t) {
        block(&mut md, b);
    }
    md.truncate(md.trim_end().len());
    md.push('\n');
    md
}

/// Any document as Markdown (the pull-request summary's).
pub(super) fn render_document(doc: &Document) -> String {
    render(doc)
}

fn render(doc: &Document) -> String {
    let mut md = format!("# {}\n\n", text(&doc.title));
    for s in doc.sections.iter().filter(|s| !s.html_only) {
        section(&mut md, s);
    }
    md
}

fn section(md: &mut String, s: &Section) {
    if let Some(h) = &s.heading {
        heading(md, h);
    }
    for b in &s.blocks {
        block(md, b);
    }
}

fn heading(md: &mut String, h: &Heading) {
    let hashes = "#".repeat(usize::from(h.level));
    let _ = write!(md, "{hashes} {}\n\n", text(&h.title));
}

fn block(md: &mut String, b: &Block) {
    match b {
        Block::Heading(h) => heading(md, h),
        Block::Paragraph(t) => {
            let _ = write!(md, "{}\n\n", inline(t, false));
        }
        Block::Figures(figures) => {
            for f in figures {
                figure(md, f);
            }
            md.push('\n');
        }
        Block::Table(t) => table(md, t),
        Block::List(items) => {
            for item in items {
                let _ = writeln!(md, "- {}", inline(item, false));
            }
            md.push('\n');
        }
        Block::Boxed(blocks) => {
            for b in blocks {
                block(md, b);
            }
        }
        Block::Pre(s) => {
            // A fence the excerpt cannot close.
            let _ = write!(md, "```\n{}\n```\n\n", s.trim_end().replace("```", "'''"));
        }
        // Drawn on the page only.
        Block::Extra(_) => {}
    }
}

/// "- Quality score: **67.9 / 100** (needs improvement)".
fn figure(md: &mut String, f: &Figure) {
    let _ = write!(
        md,
        "- {}: **{}{}**",
        text(&f.label),
        text(&f.value),
        text(&f.unit)
    );
    if !f.note.is_empty() {
        let _ = write!(md, " ({})", text(&f.note));
    }
    md.push('\n');
}

fn table(md: &mut String, t: &Table) {
    let head: Vec<String> = t.head.iter().map(|h| cell(h)).collect();
    let _ = writeln!(md, "| {} |", head.join(" | "));
    let _ = writeln!(md, "|{}", "---|".repeat(t.head.len()));
    let mut row = |cells: &[&Text]| {
        let cells: Vec<String> = cells.iter().map(|c| inline(c, true)).collect();
        let _ = writeln!(md, "| {} |", cells.join(" | "));
    };
    match &t.body {
        Body::Rows(rows) => {
            for r in rows {
                row(&r.iter().collect::<Vec<_>>());
            }
        }
        // The shared cells on every row of their group.
        Body::Groups(groups) => {
            for g in groups {
                for r in &g.rows {
                    row(&g.shared.iter().chain(r).collect::<Vec<_>>());
                }
            }
        }
    }
    md.push('\n');
}

/// The spans as Markdown; in a table cell, `|` escaped.
fn inline(t: &Text, in_cell: bool) -> String {
    let plain = |s: &str| if in_cell { cell(s) } else { text(s) };
    t.0.iter()
        .map(|s| match s.style {
            Style::Plain => plain(&s.text),
            Style::Strong => format!("**{}**", plain(&s.text)),
            Style::Code => {
                // A lone `\r` (or any control character) would end the span's line too.
                let mut c: String = s
                    .text
                    .replace('`', "'")
                    .replace('\n', " ⏎ ")
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect();
                if in_cell {
                    c = c.replace('|', "\\|");
                }
                format!("`{c}`")
            }
        })
        .collect()
}

/// Text outside code (a test name, a requirement's title, our own words): `&`, `<`, `>` as
/// entities, so a Markdown renderer shows a `<script>` in a title as text instead of passing it
/// on as HTML; a line break as a space.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// [`text`] in a table cell: `|` escaped too.
fn cell(s: &str) -> String {
    text(s).replace('|', "\\|")
}
