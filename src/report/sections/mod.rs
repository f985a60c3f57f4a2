//! The report's sections, each computed once from a [`Report`] into the neutral
//! [`Document`]: every word, figure and row a section states is decided here, one function per
//! section, and `markdown.rs` and `html/` only render what these return.

mod behaviour;
mod findings;
mod fix_cycle;
mod layers;
mod overview;
mod runs;
mod sandbox;
mod traceability;

use crate::report::document::{Document, Extra, Section};
use crate::report::Report;

pub use traceability::blocks as traceability_blocks;

/// The sections in the order both renderings show them.
pub fn document(r: &Report) -> Document {
    let mut sections = vec![overview::overview(r)];
    // What the change altered comes first: it is what a reviewer of the change asks.
    sections.extend(r.behaviour.as_ref().map(behaviour::behaviour));
    sections.push(overview::score(r));
    sections.extend(r.baseline.as_ref().map(runs::baseline));
    sections.extend(r.mutation.as_ref().map(runs::mutation));
    sections.extend(
        r.fix_cycle
            .as_ref()
            .map(|f| fix_cycle::fix_cycle(f, &r.session_id)),
    );
    sections.extend(r.traceability.as_ref().map(traceability::traceability));
    sections.push(layers::layers(r));
    sections.push(html_only("Timeline", "timeline-section", Extra::Timeline).nav("Timeline"));
    sections.push(html_only("Coverage by File", "files", Extra::Files).nav("Files"));
    sections.push(layers::defect_patterns(r));
    sections.push(layers::gc(r));
    sections.push(layers::gaps(r));
    sections.push(findings::findings(r));
    sections.extend(findings::added_roles(r));
    sections.push(sandbox::sandbox(r));
    sections.push(findings::flaky(r));
    sections.push(findings::quarantined(r));
    sections.push(overview::confidence(r));
    sections.push(runs::trends(r));
    sections.push(html_only("Test Results", "tests", Extra::TestResults).nav("Tests"));
    sections.push(overview::recommendations(r));
    sections.extend(overview::missing(r));
    Document {
        title: format!("Quality Report — {}", r.session_id),
        sections,
    }
}

/// A section only the page has: its heading and what the page draws there.
fn html_only(title: &str, anchor: &'static str, extra: Extra) -> Section {
    let mut s = Section::new(title, anchor);
    s.push(crate::report::document::Block::Extra(extra));
    s.html_only = true;
    s
}
