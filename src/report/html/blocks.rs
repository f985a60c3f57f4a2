//! The report's sections ([`crate::report::sections`]) as HTML: the same blocks the Markdown
//! renders, every string escaped through [`esc`]. What only the page draws (an [`Extra`]) is
//! left to the caller's `extra`.

use std::fmt::Write as _;

use super::escape::{esc, push_esc};
use crate::report::document::{
    Block, Body, Extra, Figure, Heading, Section, Span, Style, Table, Text,
};

pub fn section(out: &mut String, s: &Section, extra: &mut dyn FnMut(&mut String, Extra)) {
    if let Some(h) = &s.heading {
        heading(out, h);
    }
    for b in &s.blocks {
        block(out, b, extra);
    }
}

fn heading(out: &mut String, h: &Heading) {
    let _ = writeln!(
        out,
        "<h{0} id=\"{1}\">{2}</h{0}>",
        h.level,
        h.anchor,
        esc(&h.title)
    );
}

fn block(out: &mut String, b: &Block, extra: &mut dyn FnMut(&mut String, Extra)) {
    match b {
        Block::Heading(h) => heading(out, h),
        Block::Paragraph(t) => {
            out.push_str("<p>");
            inline(out, t);
            out.push_str("</p>\n");
        }
        Block::Figures(figures) => {
            out.push_str("<div class=\"cards\">");
            for f in figures {
                card(out, f);
            }
            out.push_str("</div>\n");
        }
        Block::Table(t) => table(out, t),
        Block::List(items) => {
            out.push_str("<ul>");
            for item in items {
                out.push_str("<li>");
                inline(out, item);
                out.push_str("</li>");
            }
            out.push_str("</ul>\n");
        }
        Block::Boxed(blocks) => {
            out.push_str("<div class=\"defect\">");
            for b in blocks {
                block(out, b, extra);
            }
            out.push_str("</div>\n");
        }
        Block::Pre(s) => {
            out.push_str("<pre>");
            push_esc(out, s);
            out.push_str("</pre>\n");
        }
        Block::Extra(e) => extra(out, *e),
    }
}

/// `<div class="card">Quality score<b class="warn">67.9<small> / 100</small></b>needs
/// improvement</div>`.
fn card(out: &mut String, f: &Figure) {
    out.push_str("<div class=\"card\">");
    push_esc(out, &f.label);
    match f.tone {
        Some(t) => {
            let _ = write!(out, "<b class=\"{}\">", t.class());
        }
        None => out.push_str("<b>"),
    }
    push_esc(out, &f.value);
    if !f.unit.is_empty() {
        let _ = write!(out, "<small>{}</small>", esc(&f.unit));
    }
    out.push_str("</b>");
    push_esc(out, &f.note);
    out.push_str("</div>");
}

fn table(out: &mut String, t: &Table) {
    out.push_str("<div class=\"scroll\"><table");
    if let Some(id) = t.id {
        let _ = write!(out, " id=\"{id}\"");
    }
    out.push_str("><thead><tr>");
    for h in &t.head {
        let _ = write!(out, "<th scope=\"col\">{}</th>", esc(h));
    }
    out.push_str("</tr></thead>");
    let cells = |out: &mut String, cells: &[Text], rowspan: Option<usize>| {
        for c in cells {
            match rowspan {
                Some(n) => {
                    let _ = write!(out, "<td rowspan=\"{n}\">");
                }
                None => out.push_str("<td>"),
            }
            inline(out, c);
            out.push_str("</td>");
        }
    };
    match &t.body {
        Body::Rows(rows) => {
            out.push_str("<tbody>");
            for r in rows {
                out.push_str("<tr>");
                cells(out, r, None);
                out.push_str("</tr>");
            }
            out.push_str("</tbody>");
        }
        // A group is a <tbody> (a sorted table keeps it together), its shared cells spanning
        // its rows.
        Body::Groups(groups) => {
            out.push('\n');
            for g in groups {
                out.push_str("<tbody><tr>");
                cells(out, &g.shared, Some(g.rows.len().max(1)));
                for (i, r) in g.rows.iter().enumerate() {
                    if i > 0 {
                        out.push_str("<tr>");
                    }
                    cells(out, r, None);
                    out.push_str("</tr>");
                }
                out.push_str("</tbody>\n");
            }
        }
    }
    out.push_str("</table></div>\n");
}

fn inline(out: &mut String, t: &Text) {
    for s in &t.0 {
        span(out, s);
    }
}

/// Plain text as it is; a tone or a tooltip in a `<span>`; code and strong in their element.
fn span(out: &mut String, s: &Span) {
    let tag = match s.style {
        Style::Plain if s.tone.is_none() && s.title.is_none() => {
            push_esc(out, &s.text);
            return;
        }
        Style::Plain => "span",
        Style::Code => "code",
        Style::Strong => "strong",
    };
    let _ = write!(out, "<{tag}");
    if let Some(t) = s.tone {
        let _ = write!(out, " class=\"{}\"", t.class());
    }
    if let Some(title) = &s.title {
        let _ = write!(out, " title=\"{}\"", esc(title));
    }
    out.push('>');
    push_esc(out, &s.text);
    let _ = write!(out, "</{tag}>");
}
