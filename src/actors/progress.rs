//! The terminal progress view: a bus subscriber that prints one plain line per message.

use std::io::Write;

use actix::prelude::*;

use crate::bus::{Delivered, Payload};

pub struct ProgressView {
    /// Print to stderr (when stdout carries --json output).
    pub to_stderr: bool,
}

impl Actor for ProgressView {
    type Context = Context<Self>;
}

impl Handler<Delivered> for ProgressView {
    type Result = ();

    fn handle(&mut self, msg: Delivered, _: &mut Self::Context) {
        let m = &msg.0;
        // state_update merges into meta.json; it is noise on a terminal.
        if matches!(m.payload, Payload::StateUpdate(_)) {
            return;
        }
        let time = chrono::Local::now().format("%H:%M:%S");
        let line = format!(
            "[{time}] {} → {} ({}) {}\n",
            m.from,
            m.to,
            m.kind(),
            m.summary
        );
        if self.to_stderr {
            let _ = std::io::stderr().write_all(line.as_bytes());
        } else {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(line.as_bytes());
            let _ = out.flush();
        }
    }
}
