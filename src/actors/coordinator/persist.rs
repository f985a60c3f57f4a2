//! Saving a beat: one journal line carrying the bus's lines not yet durable, in one durable
//! write (or the bus made durable, then tasks.json and session.json whole); when the session
//! cannot be saved, the run stops.

use super::{Coordinator, RunEnd};
use crate::sched::Save;
use crate::session::journal::Journal;
use crate::session::SessionStatus;
use crate::tasks::{Changed, Task};
use crate::util::now_ts;

impl Coordinator {
    /// Makes the beat durable (a journal line with the state, the tasks that changed and the
    /// bus's lines not yet durable): nothing is dispatched before the messages and state that led
    /// to it are on disk. Returns false (and ends the run) when the session cannot be saved.
    pub(super) fn persist(&mut self, save: Save) -> bool {
        self.sched.stamp_for_save(&now_ts());
        // The log's tail goes in the same durable write as the state it explains: a reader that
        // sees the new state finds every message that led to it (restored from the journal
        // should the log have lost it).
        let saved = self
            .bus
            .take_tail()
            .map_err(|e| e.to_string())
            .and_then(|tail| self.save_beat(save, &tail).map_err(|e| e.to_string()));
        match saved {
            Ok(()) => true,
            Err(problem) => {
                self.abort(problem);
                false
            }
        }
    }

    /// One durable write for a journal line; whole snapshots (atomic, fsynced) when asked, when
    /// the graph changed in ways a line does not say, or when the journal outgrew them.
    fn save_beat(&mut self, save: Save, tail: &crate::bus::Tail) -> crate::error::Result<()> {
        self.beat += 1;
        let session = &self.env.session;
        let journal = match &mut self.journal {
            Some(j) => j,
            None => self.journal.insert(Journal::open(&session.journal())?),
        };
        let changed = self.sched.take_changed();
        let graph = self.sched.graph();
        match changed {
            Changed::Some(tasks) if save == Save::Beat && !journal.wants_snapshot() => journal
                .append(
                    self.beat,
                    self.sched.state(),
                    tasks.iter().map(|&i| &graph.tasks[i]),
                    tail,
                ),
            changed => {
                // The beat goes to the journal first: a crash between the two snapshot files
                // then loses nothing (for a graph changed beyond what a line says, the state
                // alone; tasks.json follows at once).
                let tasks: Vec<&Task> = match &changed {
                    Changed::Some(set) => set.iter().map(|&i| &graph.tasks[i]).collect(),
                    Changed::All => Vec::new(),
                };
                journal.append(self.beat, self.sched.state(), tasks.into_iter(), tail)?;
                self.sched.mark_snapshot(self.beat);
                session.save_tasks(self.sched.graph())?;
                session.save_state(self.sched.state())?;
                // Emptying the journal drops the log lines it carried: the log is made durable
                // first.
                self.bus
                    .sync()
                    .map_err(|e| crate::error::Error::Session(e.to_string()))?;
                let size = std::fs::metadata(session.tasks_json()).map_or(0, |m| m.len());
                journal.reset(size)
            }
        }
    }

    /// The session cannot be saved (disk full, permissions): stop before dispatching anything
    /// more. What is on disk is the last consistent beat; `resume` continues from there.
    fn abort(&mut self, problem: String) {
        self.sched.halt();
        self.workers.clear();
        crate::proc::kill_all_groups();
        let warning = format!(
            "{problem}; the run stopped, and {} continues it once this is fixed",
            crate::hint::quoted(&self.env.session, "resume", &[])
        );
        self.finish(RunEnd {
            status: SessionStatus::Paused,
            exit_code: crate::error::EXIT_BAD_INPUT,
            warnings: vec![warning],
        });
    }
}
