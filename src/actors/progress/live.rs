//! Draws a [`Board`] on a terminal: one block redrawn in place (indicatif), so the screen shows
//! what is going on now instead of scrolling one line per message. Cleared when the run ends, so
//! the final summary printed after it stays on screen.

use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::board::Board;

pub struct LiveView {
    block: ProgressBar,
}

impl LiveView {
    pub fn new(target: ProgressDrawTarget) -> Self {
        let block = ProgressBar::with_draw_target(None, target);
        block.set_style(
            ProgressStyle::with_template("{msg}").unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        LiveView { block }
    }

    pub fn draw(&self, board: &Board, now: Instant) {
        self.block.set_message(render(board, now));
    }

    pub fn finish(&self) {
        self.block.finish_and_clear();
    }
}

/// The block's text: the pipeline bar, the layers, the running tasks, the notable messages.
pub fn render(board: &Board, now: Instant) -> String {
    const WIDTH: usize = 30;
    let filled = (board.done * WIDTH)
        .checked_div(board.total.max(1))
        .unwrap_or(0)
        .min(WIDTH);
    let mut out = format!(
        "Pipeline [{}{}] {}/{} tasks",
        "#".repeat(filled),
        "-".repeat(WIDTH - filled),
        board.done,
        board.total
    );
    for line in board.layer_lines() {
        out.push_str("\n  ");
        out.push_str(&line);
    }
    let workers = board.worker_lines(now);
    if workers.is_empty() {
        out.push_str("\n  (no task running)");
    }
    for line in workers {
        out.push_str("\n  > ");
        out.push_str(&line);
    }
    for note in board.notable() {
        out.push_str("\n  * ");
        out.push_str(&shorten(note, 110));
    }
    out
}

fn shorten(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() <= max {
        return line.to_string();
    }
    let cut: String = line.chars().take(max - 1).collect();
    format!("{cut}…")
}
