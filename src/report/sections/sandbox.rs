//! The sandbox section: what it protected, what it lacked, what the file-system watch saw of
//! the kept tests, and the generator's calls it stopped.

use super::findings::calls;
use crate::report::document::{Block, Section, Table, Text};
use crate::report::Report;

pub fn sandbox(r: &Report) -> Section {
    let mut out = Section::new("Sandbox", "sandbox");
    match &r.sandbox.protections {
        None => out.para("Not recorded (the session predates the sandbox)."),
        Some(p) => {
            let rows = [
                ("Filesystem", &p.filesystem),
                ("Network", &p.network),
                ("Limits", &p.limits),
                ("Environment", &p.environment),
            ]
            .into_iter()
            .map(|(what, state)| vec![what.into(), state.as_str().into()])
            .collect();
            out.push(Block::Table(Table::new(&["Protection", "State"], rows)));
            if p.missing.is_empty() {
                out.para("Missing protections: none.");
            } else {
                out.para("Missing protections:");
                out.push(Block::List(
                    p.missing.iter().map(|m| Text::from(m.as_str())).collect(),
                ));
            }
        }
    }
    if !r.sandbox.watch.is_empty() {
        out.para("File-system watch of the kept tests (their writes diverted to a throwaway layer and listed):");
        out.push(Block::List(
            r.sandbox
                .watch
                .iter()
                .map(|w| Text::from(w.line()))
                .collect(),
        ));
    }
    calls(
        &mut out,
        ("Blocked attempts", "blocked"),
        "Calls of the generator the sandbox stopped (a limit, or what the effect audit cannot see); no test keeps them.".into(),
        &r.sandbox.blocked,
    );
    out
}
