//! Who waits for which worker event: the stand-ins of running tasks and shards, the outcomes
//! that came while no one waited (kept for a resumed run), and the attempts already taken, so a
//! repeated or forged outcome is never kept twice.

use std::collections::{HashMap, HashSet};

use async_nats::jetstream;
use tokio::sync::mpsc;

use super::wire::{Finished, WorkerEvent, WorkerId};

/// One event for the task it is about.
pub enum Routed {
    Claimed(WorkerId),
    Progress {
        worker: WorkerId,
        phase: String,
        pct: Option<f64>,
        detail: Option<String>,
    },
    Finished {
        worker: WorkerId,
        attempt: u32,
        finished: Box<Finished>,
        ack: Box<Acker>,
    },
}

/// Acknowledges an event once what it brought is durable in the session.
pub struct Acker(pub(super) Option<jetstream::Message>);

impl Acker {
    pub async fn ack(self) {
        if let Some(msg) = self.0 {
            let _ = msg.ack().await;
        }
    }
}

pub(super) struct Route {
    pub(super) attempt: u32,
    pub(super) tx: mpsc::UnboundedSender<Routed>,
}

pub(super) struct Orphan {
    pub(super) attempt: u32,
    pub(super) worker: WorkerId,
    pub(super) finished: Box<Finished>,
    pub(super) ack: Acker,
}

#[derive(Default)]
pub(super) struct Routes {
    pub(super) tasks: HashMap<String, Route>,
    pub(super) shards: HashMap<String, mpsc::UnboundedSender<(WorkerEvent, Acker)>>,
    /// Outcomes that came with no one waiting (the coordinator was down): a resumed run's
    /// next attempt of the task takes one instead of running the task again.
    pub(super) orphans: HashMap<String, Orphan>,
    /// (task, attempt) of every outcome taken in this process: a second outcome of the same
    /// attempt (a repeat, or one forged by someone who can publish) is ignored, never kept.
    pub(super) taken: HashSet<(String, u32)>,
}

/// What becomes of a `Finished` event.
pub(super) enum Fate {
    /// For the stand-in waiting for this attempt.
    Deliver(Route),
    /// The attempt's outcome was taken already, or one is already kept for it.
    Duplicate,
    /// The session recorded this attempt (or a later one) already.
    Done,
    /// No one waits: kept as an orphan for a resumed run.
    Keep,
}

impl Routes {
    /// Decides a `Finished` of `attempt` of `task`; `recorded` reads the attempt the session's
    /// outcome record holds (only asked when no one waits). A delivered attempt counts as taken.
    pub(super) fn finished(
        &mut self,
        task: &str,
        attempt: u32,
        recorded: impl FnOnce() -> Option<u64>,
    ) -> Fate {
        let key = (task.to_string(), attempt);
        let kept = self.orphans.get(task).is_some_and(|o| o.attempt == attempt);
        if self.taken.contains(&key) || kept {
            return Fate::Duplicate;
        }
        let live = self.tasks.get(task).is_some_and(|r| r.attempt == attempt);
        if live {
            if let Some(route) = self.tasks.remove(task) {
                self.taken.insert(key);
                return Fate::Deliver(route);
            }
        }
        if recorded().is_some_and(|a| a >= u64::from(attempt)) {
            Fate::Done
        } else {
            Fate::Keep
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::wire::ReturnedFiles;

    fn route(routes: &mut Routes, task: &str, attempt: u32) -> mpsc::UnboundedReceiver<Routed> {
        let (tx, rx) = mpsc::unbounded_channel();
        routes.tasks.insert(task.into(), Route { attempt, tx });
        rx
    }

    #[test]
    fn a_second_outcome_of_a_taken_attempt_is_a_duplicate_never_an_orphan() {
        let mut routes = Routes::default();
        let _rx = route(&mut routes, "TESTGEN-001", 1);
        // Not recorded yet: the stand-in is still bringing the files in.
        let unrecorded = || None;
        assert!(matches!(
            routes.finished("TESTGEN-001", 1, unrecorded),
            Fate::Deliver(_)
        ));
        assert!(matches!(
            routes.finished("TESTGEN-001", 1, unrecorded),
            Fate::Duplicate
        ));
        // Recorded: an outcome of an older attempt is for a task that is done.
        assert!(matches!(
            routes.finished("TESTGEN-001", 0, || Some(1)),
            Fate::Done
        ));
        // No one waits and nothing is recorded: kept for a resumed run, once.
        assert!(matches!(
            routes.finished("TESTRUN-001", 2, unrecorded),
            Fate::Keep
        ));
        routes.orphans.insert(
            "TESTRUN-001".into(),
            Orphan {
                attempt: 2,
                worker: WorkerId {
                    id: "w".into(),
                    name: "host-a".into(),
                    host: "h".into(),
                },
                finished: Box::new(Finished {
                    outcome: crate::tasks::Outcome::failed("x"),
                    files: ReturnedFiles::default(),
                }),
                ack: Acker(None),
            },
        );
        assert!(matches!(
            routes.finished("TESTRUN-001", 2, unrecorded),
            Fate::Duplicate
        ));
        assert!(routes.orphans.contains_key("TESTRUN-001"));
        // A live route of another attempt is not this one's.
        let _rx = route(&mut routes, "TESTRUN-002", 3);
        assert!(matches!(
            routes.finished("TESTRUN-002", 2, unrecorded),
            Fate::Keep
        ));
        assert!(routes.tasks.contains_key("TESTRUN-002"));
    }
}
