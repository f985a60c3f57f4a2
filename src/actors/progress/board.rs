//! What the live view shows, as plain data fed message by message: the pipeline's progress, one
//! line per running task with its worker, phase and time, one line per layer with its pass rate,
//! coverage and GC round, and the last few notable messages (blockers, defects, gate decisions).
//! Both `run` and `status --watch` draw it; it knows nothing of terminals.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use crate::bus::{Message, Payload};

/// Notable messages kept on screen.
const NOTABLE: usize = 5;

#[derive(Debug, Default)]
pub struct Board {
    pub total: usize,
    pub done: usize,
    workers: BTreeMap<String, Running>,
    layers: BTreeMap<String, LayerLine>,
    notable: VecDeque<String>,
    /// The pipeline's end, once it is over.
    pub ended: Option<String>,
}

#[derive(Debug)]
struct Running {
    worker: String,
    phase: String,
    since: Instant,
}

#[derive(Debug, Default, Clone, PartialEq)]
struct LayerLine {
    pass_rate: Option<f64>,
    coverage: Option<f64>,
    target: Option<f64>,
    round: u32,
    verdict: Option<String>,
}

impl Board {
    pub fn new(total: usize, done: usize) -> Self {
        Board {
            total,
            done,
            ..Board::default()
        }
    }

    pub fn apply(&mut self, m: &Message, now: Instant) {
        match &m.payload {
            Payload::TaskUnblocked(d) => {
                let running = Running {
                    worker: d.worker.clone(),
                    phase: "starting".into(),
                    since: now,
                };
                if self.workers.insert(d.task_id.clone(), running).is_none() {
                    self.total = self.total.max(self.done + self.workers.len());
                }
            }
            Payload::Progress(p) => {
                if let Some(r) = self.workers.get_mut(&p.task_id) {
                    r.worker = m.from.clone();
                    r.phase = p.phase.clone();
                }
            }
            Payload::TaskComplete(c) => {
                self.workers.remove(&c.task_id);
                self.done += 1;
                self.total = self.total.max(self.done);
                if c.summary_has_defects(&m.summary) {
                    self.note(&m.summary);
                }
            }
            Payload::QualityGate(g) => {
                let line = self.layers.entry(g.layer.clone()).or_default();
                line.pass_rate = Some(g.pass_rate);
                line.coverage = g.coverage;
                line.target = g.coverage_target;
                line.round = g.rounds_used;
                line.verdict = Some(g.verdict.clone());
                self.note(&m.summary);
            }
            Payload::GcLoopTrigger(g) => {
                let line = self.layers.entry(g.layer.clone()).or_default();
                line.pass_rate = Some(g.pass_rate);
                line.coverage = g.coverage;
                line.target = g.coverage_target;
                line.round = g.round;
                line.verdict = Some("revising".into());
                self.note(&m.summary);
            }
            Payload::Blocker(_) | Payload::Error(_) | Payload::CapabilityGap(_) => {
                self.note(&m.summary)
            }
            Payload::Shutdown(s) => {
                self.ended = Some(s.status.clone());
                self.note(&m.summary);
            }
            _ => {}
        }
    }

    fn note(&mut self, summary: &str) {
        if self.notable.len() == NOTABLE {
            self.notable.pop_front();
        }
        self.notable.push_back(summary.to_string());
    }

    /// `executor-1  TESTRUN-001  tests_running  12s`, one per running task.
    pub fn worker_lines(&self, now: Instant) -> Vec<String> {
        self.workers
            .iter()
            .map(|(task, r)| {
                let secs = now.saturating_duration_since(r.since).as_secs();
                format!("{:<14} {:<18} {:<22} {secs}s", r.worker, task, r.phase)
            })
            .collect()
    }

    /// `L1-unit  pass 100.0%  cov 87.5% / 80%  GC round 1  pass`, one per layer judged so far.
    pub fn layer_lines(&self) -> Vec<String> {
        self.layers
            .iter()
            .map(|(layer, l)| {
                let pass = l
                    .pass_rate
                    .map_or("-".to_string(), |p| format!("{:.1}%", p * 100.0));
                let cov = l.coverage.map_or("n/a".to_string(), |c| format!("{c:.1}%"));
                let target = l.target.map_or(String::new(), |t| format!(" / {t:.0}%"));
                format!(
                    "{layer:<16} pass {pass:<7} cov {cov}{target:<6} GC round {}  {}",
                    l.round,
                    l.verdict.as_deref().unwrap_or("")
                )
            })
            .collect()
    }

    pub fn notable(&self) -> impl Iterator<Item = &String> {
        self.notable.iter()
    }

    /// The longest a running task has been at it (what the spinner's clock shows).
    pub fn longest(&self, now: Instant) -> Duration {
        self.workers
            .values()
            .map(|r| now.saturating_duration_since(r.since))
            .max()
            .unwrap_or_default()
    }
}

trait DefectSummary {
    fn summary_has_defects(&self, summary: &str) -> bool;
}

impl DefectSummary for crate::bus::message::TaskComplete {
    /// An executor outcome that reports code defects (`2 code defect(s)`), or a failure.
    fn summary_has_defects(&self, summary: &str) -> bool {
        let defects = summary
            .split("code defect(s)")
            .next()
            .filter(|_| summary.contains("code defect(s)"))
            .and_then(|before| before.split_whitespace().last())
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n > 0);
        defects || self.outcome.status == crate::tasks::OutcomeStatus::Failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::message::{QualityGate, TaskComplete, TaskDispatched};

    fn msg(from: &str, summary: &str, payload: Payload) -> Message {
        Message::new(from, "coordinator", summary, payload)
    }

    #[test]
    fn workers_come_and_go_layers_keep_their_last_gate_and_defects_are_notable() {
        let t0 = Instant::now();
        let mut b = Board::new(6, 0);
        b.apply(
            &msg(
                "coordinator",
                "TESTRUN-001 -> executor",
                Payload::TaskUnblocked(TaskDispatched {
                    task_id: "TESTRUN-001".into(),
                    worker: "executor-1".into(),
                    attempt: 1,
                    queued: false,
                }),
            ),
            t0,
        );
        let lines = b.worker_lines(t0 + Duration::from_secs(12));
        assert_eq!(lines.len(), 1);
        assert!(lines[0].starts_with("executor-1") && lines[0].ends_with("12s"));
        let mut outcome = crate::tasks::Outcome::completed("x");
        outcome.pass_rate = Some(0.9);
        b.apply(
            &msg(
                "executor",
                "TESTRUN-001 completed: 10 tests; 1 code defect(s)",
                Payload::TaskComplete(TaskComplete {
                    task_id: "TESTRUN-001".into(),
                    outcome,
                }),
            ),
            t0,
        );
        assert!(b.worker_lines(t0).is_empty());
        assert_eq!((b.done, b.total), (1, 6));
        b.apply(
            &msg(
                "coordinator",
                "L1-unit gate: pass",
                Payload::QualityGate(QualityGate {
                    layer: "L1-unit".into(),
                    task_id: "TESTRUN-001".into(),
                    verdict: "pass".into(),
                    pass_rate: 0.9,
                    coverage: Some(87.5),
                    coverage_target: Some(80.0),
                    rounds_used: 1,
                    warning: None,
                }),
            ),
            t0,
        );
        let layer = &b.layer_lines()[0];
        assert!(
            layer.contains("pass 90.0%") && layer.contains("cov 87.5% / 80%"),
            "{layer}"
        );
        assert!(
            layer.contains("GC round 1") && layer.ends_with("pass"),
            "{layer}"
        );
        let notable: Vec<&String> = b.notable().collect();
        assert_eq!(notable.len(), 2, "{notable:?}");
    }
}
