//! handleSpawnNext and handleComplete: a beat skips what can no longer run, claims the ready
//! tasks the concurrency cap leaves room for, hands each to a worker instance, and ends the run
//! when nothing is left (or pauses it when asked to).

use serde_json::json;

use super::effect::publish;
use super::{Effect, Ending, Save, Scheduler, Start, StartOn, COORDINATOR};
use crate::bus::message::{ErrorReport, Payload, Shutdown, TaskDispatched};
use crate::error::EXIT_PIPELINE_FAILED;
use crate::session::SessionStatus;
use crate::tasks::TaskStatus;

impl Scheduler {
    /// One beat: what the messages before it changed is saved, then every ready task starts.
    pub fn beat(&mut self, now: &str) -> Vec<Effect> {
        if self.finished {
            return Vec::new();
        }
        let mut effects = Vec::new();
        if let Some(reason) = self.pausing.clone() {
            // Nothing new starts; the session ends paused when the running tasks are done.
            if self.graph.in_progress().next().is_none() {
                self.end_paused(&reason, &mut effects);
            } else {
                effects.push(Effect::Persist(Save::Beat));
            }
            return effects;
        }
        for (id, reason) in self.graph.propagate_skips() {
            effects.push(publish(
                COORDINATOR,
                format!("[coordinator] {id} skipped: {reason}"),
                Payload::Error(ErrorReport {
                    task_id: Some(id),
                    message: format!("skipped: {reason}"),
                    retry: false,
                }),
            ));
        }
        let claimed = self.claim_ready(now, &mut effects);
        if claimed.is_empty() {
            if self.graph.in_progress().next().is_none() {
                self.settle(&mut effects);
            } else {
                // Nothing to dispatch; the beat's state change still goes to disk.
                effects.push(Effect::Persist(Save::Beat));
            }
            return effects;
        }
        // The claims are durable before any worker starts.
        effects.push(Effect::Persist(Save::Beat));
        for (instance, id, on) in claimed {
            let task = self.graph.get(&id).cloned().expect("claimed");
            let chain = if self.launch_roles.contains(&task.owner) {
                Vec::new()
            } else {
                self.state.agents.chain(&task.owner)
            };
            effects.push(Effect::Start(Box::new(Start {
                instance,
                on,
                role: self.registry.get(&task.owner).cloned(),
                chain,
                task,
            })));
        }
        effects
    }

    /// Claims the ready tasks `-c/--concurrency` leaves room for (the rest waits for a later
    /// beat), each for its instance, and announces each. Returns (instance, task, where).
    fn claim_ready(
        &mut self,
        now: &str,
        effects: &mut Vec<Effect>,
    ) -> Vec<(String, String, StartOn)> {
        let cap = self.state.controls.concurrency.unwrap_or(usize::MAX);
        let room = cap.saturating_sub(self.graph.in_progress_count());
        let mut claimed = Vec::new();
        for id in self.graph.next_ready(room) {
            if self.graph.in_progress_count() >= cap {
                break;
            }
            let task = self.graph.get(&id).cloned().expect("ready task exists");
            let wanted = task.instance_name().to_string();
            // An inner-loop task goes to its instance's running worker; any other task that
            // finds its instance busy gets one more instance beside it.
            let (instance, queued) = match self.instances.contains(&wanted) {
                true if task.inner_loop => (wanted, true),
                true => (self.instances.free_name(&wanted), false),
                false => (wanted, false),
            };
            if let Err(e) = self.graph.claim(&id, &instance, now) {
                tracing::error!("{e}");
                continue;
            }
            let on = if self.instances.assign(&instance, &task.owner, &id) {
                StartOn::NewWorker
            } else {
                StartOn::RunningWorker
            };
            let attempt = self.graph.get(&id).map(|t| t.attempts).unwrap_or(1);
            effects.push(publish(
                &instance,
                format!(
                    "[coordinator] {id} -> {instance}{}",
                    if queued {
                        " (handed to its running inner-loop worker)"
                    } else {
                        ""
                    }
                ),
                Payload::TaskUnblocked(TaskDispatched {
                    task_id: id.clone(),
                    worker: instance.clone(),
                    attempt,
                    queued,
                }),
            ));
            claimed.push((instance, id, on));
        }
        claimed
    }

    /// handleComplete: no task is left to run. Failed tasks fail the pipeline; otherwise it is
    /// completed (or kept paused, `auto_keep`), with "N/M tasks completed" as the reason.
    fn settle(&mut self, effects: &mut Vec<Effect>) {
        self.finished = true;
        let failed: Vec<String> = self
            .graph
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Failed)
            .map(|t| t.id.clone())
            .collect();
        let (status, reason) = if failed.is_empty() {
            let done = self.graph.count(TaskStatus::Completed);
            let na = self.graph.count(TaskStatus::NotApplicable);
            let status = if self.state.keeps_paused_on_completion() {
                SessionStatus::Paused
            } else {
                SessionStatus::Completed
            };
            (
                status,
                format!(
                    "{done}/{} tasks completed{}",
                    self.graph.len(),
                    if na > 0 {
                        format!(", {na} not applicable")
                    } else {
                        String::new()
                    }
                ),
            )
        } else {
            (
                SessionStatus::Failed,
                format!("failed: {}", failed.join(", ")),
            )
        };
        self.state.status = status;
        let mut data = serde_json::Map::new();
        data.insert("status".into(), json!(status.as_str()));
        data.insert("gc_rounds".into(), json!(self.state.gc_rounds));
        data.insert("warnings".into(), json!(self.state.warnings));
        effects.push(publish(
            COORDINATOR,
            format!("[coordinator] pipeline {}", status.as_str()),
            Payload::StateUpdate(data),
        ));
        effects.push(publish(
            "all",
            format!("[coordinator] pipeline {}: {reason}", status.as_str()),
            Payload::Shutdown(Shutdown {
                status: status.as_str().into(),
                reason,
            }),
        ));
        effects.push(Effect::Persist(Save::Whole));
        self.instances.clear();
        let exit_code = if status == SessionStatus::Failed {
            EXIT_PIPELINE_FAILED
        } else {
            0
        };
        effects.push(Effect::End(Ending::Settled {
            status,
            exit_code,
            warnings: self.state.warnings.clone(),
        }));
    }

    /// Ends the run paused (the role cap): resumable once the user raises --max-roles.
    fn end_paused(&mut self, reason: &str, effects: &mut Vec<Effect>) {
        self.finished = true;
        self.state.status = SessionStatus::Paused;
        let mut data = serde_json::Map::new();
        data.insert("status".into(), json!("paused"));
        data.insert("warnings".into(), json!(self.state.warnings));
        effects.push(publish(
            COORDINATOR,
            "[coordinator] pipeline paused",
            Payload::StateUpdate(data),
        ));
        effects.push(publish(
            "all",
            format!("[coordinator] pipeline paused: {reason}"),
            Payload::Shutdown(Shutdown {
                status: "paused".into(),
                reason: reason.to_string(),
            }),
        ));
        effects.push(Effect::Persist(Save::Whole));
        self.instances.clear();
        effects.push(Effect::End(Ending::PausedAtRoleCap {
            reason: reason.to_string(),
            // One role more than the cap is what a capability gap asks for.
            raise_to: self.max_roles() + 1,
        }));
    }
}
