//! The terminal progress view, a bus subscriber. On a terminal it draws a live view in place
//! (the pipeline's progress, the running tasks, the layers, the notable messages; see
//! [`board`]); off a terminal, with `NO_COLOR`, in CI, or when stdout carries `--json`, it prints
//! one plain line per message, as a log reader expects.

mod board;
mod live;
mod sink;

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use indicatif::ProgressDrawTarget;

pub use board::Board;
pub use live::{render, LiveView};
pub use sink::{write_pending_lines, LineSink};

use crate::bus::{Delivered, Message, Payload};

pub struct ProgressView {
    mode: Mode,
}

enum Mode {
    /// One line per message; to stderr when stdout carries --json output. Written by a thread
    /// of their own where one starts.
    Plain {
        to_stderr: bool,
        sink: Option<Arc<LineSink>>,
    },
    Live {
        view: LiveView,
        board: Board,
    },
}

/// Whether a live view may be drawn on this terminal: not asked to keep plain (NO_COLOR), not in
/// CI, and a terminal that can redraw.
pub fn live_allowed() -> bool {
    let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    !set("NO_COLOR") && !set("CI") && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

impl ProgressView {
    /// `total` and `done`: the task graph's size and finished tasks when the run begins.
    pub fn new(to_stderr: bool, total: usize, done: usize) -> Self {
        let mode = if !to_stderr && std::io::stdout().is_terminal() && live_allowed() {
            Mode::Live {
                view: LiveView::new(ProgressDrawTarget::stdout()),
                board: Board::new(total, done),
            }
        } else {
            let out: Box<dyn Write + Send> = match to_stderr {
                true => Box::new(std::io::stderr()),
                false => Box::new(std::io::stdout()),
            };
            Mode::Plain {
                to_stderr,
                sink: LineSink::start(out).map(Arc::new),
            }
        };
        ProgressView { mode }
    }

    /// The thread writing the plain lines, if any: [`LineSink::finish`] it before printing
    /// what follows the run.
    pub fn line_sink(&self) -> Option<Arc<LineSink>> {
        match &self.mode {
            Mode::Plain { sink, .. } => sink.clone(),
            Mode::Live { .. } => None,
        }
    }
}

/// The plain line of a message, as `run` prints it off a terminal.
pub fn plain_line(m: &Message) -> String {
    let time = chrono::Local::now().format("%H:%M:%S");
    format!(
        "[{time}] {} → {} ({}) {}",
        m.from,
        m.to,
        m.kind(),
        m.summary
    )
}

impl Actor for ProgressView {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if matches!(self.mode, Mode::Live { .. }) {
            // The running tasks' clocks move between messages.
            ctx.run_interval(Duration::from_millis(500), |this, _| {
                if let Mode::Live { view, board } = &this.mode {
                    if board.ended.is_none() {
                        view.draw(board, Instant::now());
                    }
                }
            });
        }
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        if let Mode::Live { view, .. } = &self.mode {
            view.finish();
        }
    }
}

impl Handler<Delivered> for ProgressView {
    type Result = ();

    fn handle(&mut self, msg: Delivered, _: &mut Self::Context) {
        let m = &msg.0;
        // state_update merges into meta.json; it is noise on a terminal.
        if matches!(m.payload, Payload::StateUpdate(_)) {
            return;
        }
        match &mut self.mode {
            Mode::Plain {
                sink: Some(sink), ..
            } => sink.push(&plain_line(m)),
            Mode::Plain {
                to_stderr: true,
                sink: None,
            } => {
                // One write: stderr is unbuffered, and writeln! would make two.
                let mut line = plain_line(m);
                line.push('\n');
                let _ = std::io::stderr().write_all(line.as_bytes());
            }
            Mode::Plain {
                to_stderr: false,
                sink: None,
            } => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", plain_line(m));
                let _ = out.flush();
            }
            Mode::Live { view, board } => {
                board.apply(m, Instant::now());
                if board.ended.is_some() {
                    // The summary printed next stays on screen, not under a stale block.
                    view.finish();
                } else {
                    view.draw(board, Instant::now());
                }
            }
        }
    }
}
