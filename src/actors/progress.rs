//! The terminal progress view: a bus subscriber that prints one plain line per message. On a
//! terminal it also keeps a spinner line below them with what is running; elsewhere (pipes, CI
//! logs) it prints the plain lines only.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::time::Duration;

use actix::prelude::*;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::bus::{Delivered, Payload};

pub struct ProgressView {
    /// Print to stderr (when stdout carries --json output).
    to_stderr: bool,
    spinner: Option<ProgressBar>,
    /// Running task -> "worker phase".
    running: BTreeMap<String, String>,
    done: usize,
}

impl ProgressView {
    pub fn new(to_stderr: bool) -> Self {
        let tty = if to_stderr {
            std::io::stderr().is_terminal()
        } else {
            std::io::stdout().is_terminal()
        };
        let spinner = tty.then(|| {
            let target = if to_stderr {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::stdout()
            };
            let bar = ProgressBar::with_draw_target(None, target);
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed}] {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        ProgressView {
            to_stderr,
            spinner,
            running: BTreeMap::new(),
            done: 0,
        }
    }

    fn print(&self, line: &str) {
        match &self.spinner {
            Some(bar) => bar.println(line),
            None if self.to_stderr => {
                let _ = writeln!(std::io::stderr(), "{line}");
            }
            None => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        }
    }

    fn refresh(&self) {
        if let Some(bar) = &self.spinner {
            let running: Vec<String> = self
                .running
                .iter()
                .map(|(task, what)| format!("{task} ({what})"))
                .collect();
            bar.set_message(format!(
                "{} done | running: {}",
                self.done,
                if running.is_empty() {
                    "-".into()
                } else {
                    running.join(", ")
                }
            ));
        }
    }
}

impl Actor for ProgressView {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Self::Context) {
        if let Some(bar) = &self.spinner {
            bar.finish_and_clear();
        }
    }
}

impl Handler<Delivered> for ProgressView {
    type Result = ();

    fn handle(&mut self, msg: Delivered, _: &mut Self::Context) {
        let m = &msg.0;
        match &m.payload {
            // state_update merges into meta.json; it is noise on a terminal.
            Payload::StateUpdate(_) => return,
            Payload::TaskUnblocked(d) => {
                self.running.insert(d.task_id.clone(), d.worker.clone());
            }
            Payload::Progress(p) if self.running.contains_key(&p.task_id) => {
                self.running
                    .insert(p.task_id.clone(), format!("{} {}", m.from, p.phase));
            }
            Payload::TaskComplete(c) => {
                self.running.remove(&c.task_id);
                self.done += 1;
            }
            _ => {}
        }
        let time = chrono::Local::now().format("%H:%M:%S");
        self.print(&format!(
            "[{time}] {} → {} ({}) {}",
            m.from,
            m.to,
            m.kind(),
            m.summary
        ));
        if matches!(m.payload, Payload::Shutdown(_)) {
            if let Some(bar) = self.spinner.take() {
                bar.finish_and_clear();
            }
        } else {
            self.refresh();
        }
    }
}
