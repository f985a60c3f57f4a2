//! What the change altered: each behaviour change with its input, before and after side by
//! side, its verdict, and how to keep either side's test.

use crate::gen::behaviour::BehaviourReport;
use crate::report::document::{Block, Section, Table, Text};

pub fn behaviour(b: &BehaviourReport) -> Section {
    let mut out = Section::new("What the Change Altered", "behaviour").nav("Change");
    let pinned = format!(
        "{}; {} call(s) compared against the base {}, {} test(s) pin behaviour it did not alter.",
        b.headline(),
        b.compared,
        short(&b.base),
        b.unchanged_tests
    );
    out.para(pinned.as_str());
    if !b.changes.is_empty() {
        let rows = b
            .changes
            .iter()
            .map(|c| {
                let input = match c.more_inputs {
                    0 => Text::default().code(c.input.as_str()),
                    n => Text::default()
                        .code(c.input.as_str())
                        .plain(format!(" (and {n} more input(s))")),
                };
                vec![
                    Text::from(c.id.as_str()),
                    Text::from(c.function.as_str()),
                    input,
                    Text::from(c.before.as_str()),
                    Text::from(c.after.as_str()),
                    Text::from(c.verdict.words()),
                ]
            })
            .collect();
        let mut table = Table::new(
            &["Id", "Function", "Input", "Before", "After", "Verdict"],
            rows,
        );
        table.id = Some("behaviour-changes");
        out.push(Block::Table(table));
        for c in b.changes.iter().filter(|c| !c.hunk.is_empty()) {
            out.push(Block::Paragraph(
                Text::default()
                    .plain(format!("{} goes through this part of the change to ", c.id))
                    .code(c.function.as_str())
                    .plain(":"),
            ));
            out.push(Block::Pre(c.hunk.clone()));
        }
        out.push(Block::Paragraph(Text::backquoted(
            "None of these is applied by default. `team-testing apply --keep-new B1` keeps the \
             test of the new behaviour (the change was intended); `--keep-old B1` keeps the \
             regression test of the old one, which fails until the code is fixed.",
        )));
    }
    if !b.added.is_empty() {
        out.push(Block::Paragraph(Text::from(format!(
            "New in this change, so not compared with the base: {}.",
            b.added.join(", ")
        ))));
    }
    if !b.problems.is_empty() {
        out.push(Block::List(
            b.problems.iter().map(|p| Text::from(p.as_str())).collect(),
        ));
    }
    out
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}
