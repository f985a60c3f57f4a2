//! Saving a beat: the bus made durable first, then one journal line (or tasks.json and
//! session.json whole); when the session cannot be saved, the run stops.

use super::{Coordinator, RunEnd};
use crate::sched::Save;
use crate::session::journal::Journal;
use crate::session::SessionStatus;
use crate::tasks::{Changed, Task};
use crate::util::now_ts;

impl Coordinator {
    /// Makes the bus durable, then the beat (a journal line with the state and the tasks that
    /// changed): nothing is dispatched before the messages and state that led to it are on disk.
    /// Returns false (and ends the run) when the session cannot be saved.
    pub(super) fn persist(&mut self, save: Save) -> bool {
        self.sched.stamp_for_save(&now_ts());
        // The log first: a reader that sees the new state finds every message that led to it.
        let saved = self
            .bus
            .sync()
            .map_err(|e| e.to_string())
            .and_then(|_| self.save_beat(save).map_err(|e| e.to_string()));
        match saved {
            Ok(()) => true,
            Err(problem) => {
                self.abort(problem);
                false
            }
        }
    }

    /// One fdatasync for a journal line; whole snapshots (atomic, fsynced) when asked, when
    /// the graph changed in ways a line does not say, or when the journal outgrew them.
    fn save_beat(&mut self, save: Save) -> crate::error::Result<()> {
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
                ),
            changed => {
                // The beat goes to the journal first: a crash between the two snapshot files
                // then loses nothing (for a graph changed beyond what a line says, the state
                // alone; tasks.json follows at once).
                let tasks: Vec<&Task> = match &changed {
                    Changed::Some(set) => set.iter().map(|&i| &graph.tasks[i]).collect(),
                    Changed::All => Vec::new(),
                };
                journal.append(self.beat, self.sched.state(), tasks.into_iter())?;
                self.sched.mark_snapshot(self.beat);
                session.save_tasks(self.sched.graph())?;
                session.save_state(self.sched.state())?;
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
