//! The stand-in for a worker on another host: the coordinator hands it a claimed task as it would
//! a local worker; it puts the task on the cluster's work queue, relays the remote worker's claim
//! and progress, brings the returned files into the session, and ends the attempt exactly as a
//! local worker does (outcome record, state, one task_complete).

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;

use super::worker::{conclude, progress_msg, RunTask, WorkerStopped};
use super::RunEnv;
use crate::bus::BusHandle;
use crate::remote::link::{Routed, TaskRequest};
use crate::remote::wire::{Finished, WorkerId};
use crate::remote::Link;
use crate::tasks::{Outcome, Task};
use crate::util::now_ts;

/// A remote worker took a task: its claim, with who it is, for the task's record.
#[derive(actix::Message)]
#[rtype(result = "()")]
pub struct RemoteClaimed {
    pub task_id: String,
    pub attempt: u32,
    pub worker: WorkerId,
}

pub struct RemoteWorker {
    pub instance: String,
    pub serial: u64,
    pub env: Arc<RunEnv>,
    pub bus: BusHandle,
    pub link: Arc<Link>,
    pub on_stop: Recipient<WorkerStopped>,
    pub on_claim: Recipient<RemoteClaimed>,
}

impl Actor for RemoteWorker {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Self::Context) {
        self.on_stop.do_send(WorkerStopped {
            instance: self.instance.clone(),
            serial: self.serial,
        });
    }
}

impl Handler<RunTask> for RemoteWorker {
    // One task at a time, like a local worker: an inner loop's next task waits in the mailbox.
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, msg: RunTask, _: &mut Self::Context) -> Self::Result {
        let stand_in = StandIn {
            env: self.env.clone(),
            bus: self.bus.clone(),
            link: self.link.clone(),
            instance: self.instance.clone(),
            on_claim: self.on_claim.clone(),
        };
        AtomicResponse::new(Box::pin(
            async move { stand_in.execute(msg).await }.into_actor(self),
        ))
    }
}

struct StandIn {
    env: Arc<RunEnv>,
    bus: BusHandle,
    link: Arc<Link>,
    instance: String,
    on_claim: Recipient<RemoteClaimed>,
}

impl StandIn {
    /// Ends the attempt as failed, the way a local worker would.
    async fn fail(&self, task: &Task, why: String, started_at: String) {
        let outcome = Outcome::failed(why);
        conclude(
            &self.env,
            &self.bus,
            &self.instance,
            task,
            outcome,
            started_at,
        )
        .await;
    }

    async fn execute(self, run: RunTask) {
        let RunTask { task, role, .. } = run;
        let started_at = now_ts();
        let Some(role) = role else {
            return self
                .fail(
                    &task,
                    format!("no role file defines role {}", task.owner),
                    started_at,
                )
                .await;
        };
        self.bus.publish(progress_msg(
            &self.instance,
            &task.id,
            "queued",
            None,
            Some(format!(
                "attempt {} on the cluster's {} queue at {}",
                task.attempts,
                role.name,
                self.link.url()
            )),
        ));
        let request = TaskRequest {
            task: task.clone(),
            instance: self.instance.clone(),
            role: role.name.clone(),
            role_body: role.body.clone(),
            timeout_s: role.timeout_s,
        };
        let mut events = match joined(self.link.start_task(request).await) {
            Ok(rx) => rx,
            Err(e) => {
                return self
                    .fail(
                        &task,
                        format!("cannot hand {} to the cluster: {e}", task.id),
                        started_at,
                    )
                    .await;
            }
        };
        // A task waits in the queue for a free worker, and may be redelivered once: twice the
        // role's budget, then the attempt fails and the scheduler retries it as a new one.
        let patience = Duration::from_secs(role.timeout_s) * 2 + Duration::from_secs(120);
        let deadline = Instant::now() + patience;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let event = tokio::time::timeout(left, events.recv()).await;
            match event {
                Ok(Some(Routed::Claimed(worker))) => self.on_claim.do_send(RemoteClaimed {
                    task_id: task.id.clone(),
                    attempt: task.attempts,
                    worker,
                }),
                Ok(Some(Routed::Progress {
                    phase, pct, detail, ..
                })) => {
                    self.bus
                        .publish(progress_msg(&self.instance, &task.id, &phase, pct, detail))
                }
                Ok(Some(Routed::Finished {
                    worker,
                    finished,
                    ack,
                    ..
                })) => {
                    let Finished { outcome, files } = *finished;
                    let outcome = match joined(self.link.bring_in(files).await) {
                        Ok(_) => outcome,
                        Err(e) => Outcome::failed(format!(
                            "cannot bring {}'s files in from {}: {e}",
                            task.id, worker.name
                        )),
                    };
                    conclude(
                        &self.env,
                        &self.bus,
                        &self.instance,
                        &task,
                        outcome,
                        started_at,
                    )
                    .await;
                    // Only now, with the outcome recorded, is the event done with.
                    ack.ack().await;
                    return;
                }
                Ok(None) => {
                    return self
                        .fail(&task, "the cluster link closed".to_string(), started_at)
                        .await;
                }
                Err(_) => {
                    self.link.forget(&task.id);
                    return self
                        .fail(
                            &task,
                            format!(
                                "no cluster worker finished {} within {}s",
                                task.id,
                                patience.as_secs()
                            ),
                            started_at,
                        )
                        .await;
                }
            }
        }
    }
}

/// Why a job on the link gave no result: the job failed, or its task ended first.
#[derive(Debug, thiserror::Error)]
enum LinkJobError {
    #[error(transparent)]
    Failed(#[from] crate::remote::RemoteError),
    #[error("the link's job ended early: {0}")]
    Ended(#[from] tokio::task::JoinError),
}

/// A link job's result, whether the job failed or its task did.
fn joined<T>(
    r: Result<crate::remote::Result<T>, tokio::task::JoinError>,
) -> Result<T, LinkJobError> {
    Ok(r??)
}
