//! handleCallback: a task's outcome (failure and retry, not applicable, completion and the GC
//! checkpoint), a worker that stopped holding tasks, and a resume's tasks left in progress.

use serde_json::json;

use super::effect::publish;
use super::{Effect, Scheduler, COORDINATOR};
use crate::bus::message::{ErrorReport, Payload, Progress};
use crate::tasks::data::FAIL_FAST;
use crate::tasks::{Outcome, OutcomeStatus, TaskStatus};

/// A task a dead process left in progress, and its outcome if the record on disk shows that
/// this very attempt finished.
#[derive(Debug, Clone)]
pub struct Stranded {
    pub task_id: String,
    pub recorded: Option<Outcome>,
}

impl Scheduler {
    /// A worker's task_complete. Role isolation: only the worker the task was handed to may
    /// complete it.
    pub fn task_reported(
        &mut self,
        from: &str,
        task_id: &str,
        outcome: Outcome,
        now: &str,
    ) -> Vec<Effect> {
        let holder = self.graph.get(task_id).and_then(|t| t.worker.clone());
        if holder.as_deref() != Some(from) {
            return vec![publish(
                COORDINATOR,
                format!("[coordinator] ignored: {from} reported {task_id}, which is not its task"),
                Payload::Error(ErrorReport {
                    task_id: Some(task_id.to_string()),
                    message: format!("{from} may not complete {task_id}"),
                    retry: false,
                }),
            )];
        }
        let mut effects = self.outcome(task_id, outcome, now);
        effects.push(Effect::QueueBeat);
        effects
    }

    fn outcome(&mut self, task_id: &str, outcome: Outcome, now: &str) -> Vec<Effect> {
        let Some(task) = self.graph.get(task_id).cloned() else {
            tracing::warn!("outcome for unknown task {task_id}");
            return Vec::new();
        };
        if task.status != TaskStatus::InProgress {
            tracing::warn!(
                "ignoring a second outcome for {task_id} ({})",
                task.status.as_str()
            );
            return Vec::new();
        }
        let mut effects = Vec::new();
        if let Some(instance) = task.worker.as_deref() {
            if self.instances.release(instance, task_id, task.inner_loop) {
                effects.push(Effect::Release {
                    instance: instance.to_string(),
                });
            }
        }
        let is_critic = task.owner == self.config.gc.critic && task.layer.is_some();
        let outcome = match (&outcome.status, is_critic, outcome.pass_rate) {
            (OutcomeStatus::Completed, true, None) => Outcome {
                status: OutcomeStatus::Failed,
                summary: "the executor reported no pass_rate".into(),
                ..outcome
            },
            _ => outcome,
        };
        match outcome.status {
            OutcomeStatus::Failed => effects.push(self.failed(task_id, outcome, now)),
            OutcomeStatus::NotApplicable => {
                effects.push(self.not_applicable(task_id, task.layer.as_deref(), outcome, now))
            }
            OutcomeStatus::Completed => {
                let _ = self.graph.complete(task_id, outcome.clone(), now);
                if is_critic {
                    effects.extend(self.gc_checkpoint(task_id, &outcome, now));
                    if let Some(reason) = outcome.data.get(FAIL_FAST).and_then(|v| v.as_str()) {
                        effects.extend(self.fail_fast(task.layer.as_deref(), reason, now));
                    }
                }
            }
        }
        effects
    }

    /// The scenario plan's fail-fast: a critical scenario failed in `layer`, so the later layers
    /// do not run (their tasks are not applicable, with the reason); the report still follows.
    fn fail_fast(&mut self, layer: Option<&str>, reason: &str, now: &str) -> Vec<Effect> {
        let Some(layer) = layer else {
            return Vec::new();
        };
        let code = crate::tasks::layer_code(layer).to_string();
        let gc = &self.config.gc;
        let owners = [gc.generator.clone(), gc.critic.clone()];
        let later: Vec<String> = self
            .graph
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Pending && t.owner == owners[0])
            .filter(|t| {
                t.layer
                    .as_deref()
                    .is_some_and(|l| crate::tasks::layer_code(l) > code.as_str())
            })
            .map(|t| t.id.clone())
            .collect();
        if later.is_empty() {
            return Vec::new();
        }
        let why = format!("fail-fast: {reason}");
        let owner_refs = [owners[0].as_str(), owners[1].as_str()];
        let mut stopped = Vec::new();
        for id in &later {
            stopped.push(id.clone());
            stopped.extend(
                self.graph
                    .not_applicable(id, Outcome::not_applicable(why.clone()), &owner_refs, now)
                    .unwrap_or_default(),
            );
        }
        vec![publish(
            COORDINATOR,
            format!("[coordinator] {why}; not run: {}", stopped.join(", ")),
            Payload::Progress(Progress {
                task_id: later[0].clone(),
                phase: "fail_fast".into(),
                progress_pct: None,
                detail: Some(why),
            }),
        )]
    }

    /// Back to pending while attempts remain, else failed (its successors are skipped at the
    /// next beat). A failure only the user can fix (a blocker) is not retried.
    fn failed(&mut self, task_id: &str, outcome: Outcome, now: &str) -> Effect {
        let reason = outcome.summary.clone();
        let blocker = outcome
            .data
            .get(crate::tasks::data::BLOCKER)
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        let attempts = if blocker { 1 } else { self.config.max_attempts };
        let retry = self
            .graph
            .fail_attempt(task_id, &reason, attempts, Some(outcome), now)
            .unwrap_or(false);
        publish(
            COORDINATOR,
            format!(
                "[coordinator] {task_id} failed{}: {reason}",
                if retry { ", retrying" } else { "" }
            ),
            Payload::Error(ErrorReport {
                task_id: Some(task_id.to_string()),
                message: reason,
                retry,
            }),
        )
    }

    /// Nothing to do for the layer: its runs are not applicable either, so no gate is judged
    /// and no GC round opens for it.
    fn not_applicable(
        &mut self,
        task_id: &str,
        layer: Option<&str>,
        outcome: Outcome,
        now: &str,
    ) -> Effect {
        let reason = outcome.summary.clone();
        let gc = &self.config.gc;
        let owners = [gc.generator.as_str(), gc.critic.as_str()];
        let also = self
            .graph
            .not_applicable(task_id, outcome, &owners, now)
            .unwrap_or_default();
        let mut data = serde_json::Map::new();
        data.insert("task_id".into(), json!(task_id));
        data.insert("layer".into(), json!(layer));
        data.insert("not_applicable".into(), json!(reason));
        data.insert("also_not_applicable".into(), json!(also));
        publish(
            COORDINATOR,
            format!(
                "[coordinator] {} not applicable{}: {reason}",
                layer.unwrap_or(task_id),
                if also.is_empty() {
                    String::new()
                } else {
                    format!(" ({task_id}, {})", also.join(", "))
                }
            ),
            Payload::StateUpdate(data),
        )
    }

    /// A worker stopped (crashed, or its mailbox closed) holding tasks: each is a failed attempt.
    pub fn worker_stopped(&mut self, instance: &str, now: &str) -> Vec<Effect> {
        let Some(stopped) = self.instances.remove(instance) else {
            return Vec::new();
        };
        let mut effects = Vec::new();
        for id in stopped.tasks {
            let reason = format!(
                "worker {instance} ({}) stopped before finishing",
                stopped.role
            );
            let retry = self
                .graph
                .fail_attempt(&id, &reason, self.config.max_attempts, None, now)
                .unwrap_or(false);
            effects.push(publish(
                COORDINATOR,
                format!("[coordinator] {id}: {reason}"),
                Payload::Error(ErrorReport {
                    task_id: Some(id.clone()),
                    message: reason,
                    retry,
                }),
            ));
        }
        effects
    }

    /// The tasks a dead process left in progress, with the attempt each was on: their outcome
    /// records tell whether that attempt finished.
    pub fn stranded(&self) -> Vec<(String, u32)> {
        self.graph
            .in_progress()
            .map(|t| (t.id.clone(), t.attempts))
            .collect()
    }

    /// handleResume: finished tasks (their outcome recorded for this attempt) are taken as
    /// reported; the rest go back to pending.
    pub fn resume(&mut self, stranded: Vec<Stranded>, now: &str) -> Vec<Effect> {
        let mut data = serde_json::Map::new();
        data.insert("status".into(), json!("active"));
        let mut effects = vec![publish(
            COORDINATOR,
            "[coordinator] session resumed",
            Payload::StateUpdate(data),
        )];
        for Stranded { task_id, recorded } in stranded {
            match recorded {
                Some(outcome) => {
                    effects.push(publish(
                        COORDINATOR,
                        format!(
                            "[coordinator] {task_id} finished before the interruption: {}",
                            outcome.headline()
                        ),
                        Payload::Progress(Progress {
                            task_id: task_id.clone(),
                            phase: "recovered".into(),
                            progress_pct: Some(100.0),
                            detail: Some("outcome recorded before the interruption".into()),
                        }),
                    ));
                    effects.extend(self.outcome(&task_id, outcome, now));
                }
                None => {
                    if let Some(t) = self.graph.get_mut(&task_id) {
                        t.status = TaskStatus::Pending;
                        t.attempts = t.attempts.saturating_sub(1);
                        t.worker = None;
                        t.claimed_at = None;
                    }
                    effects.push(publish(
                        COORDINATOR,
                        format!("[coordinator] {task_id} was interrupted; back to pending"),
                        Payload::Progress(Progress {
                            task_id: task_id.clone(),
                            phase: "requeued".into(),
                            progress_pct: None,
                            detail: Some("in progress when the previous process stopped".into()),
                        }),
                    ));
                }
            }
        }
        effects
    }
}
