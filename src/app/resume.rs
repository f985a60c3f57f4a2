//! `resume`: reopen a paused, interrupted or failed session to run it to the end. An archived
//! session is refused before anything is touched.

use std::path::Path;

use super::open::{open, OpenOptions, Opened};
use crate::error::{Error, Result};
use crate::session::SessionStatus;
use crate::tasks::TaskStatus;

/// A session reopened to resume, and how it was found.
pub struct Resumed {
    pub opened: Opened,
    /// Its tasks were all done but the completion action was interrupted: running it again
    /// runs no task, it carries out the action.
    pub completion_interrupted: bool,
}

pub fn resume(root: &Path, arg: Option<&str>, options: &OpenOptions) -> Result<Resumed> {
    // Refused before the session is opened (which takes its lock and tidies it): a refused
    // command leaves the session exactly as it was.
    let found = crate::session::resolve(root, arg)?;
    let status = found.load_state()?.status;
    let finished_earlier = status == SessionStatus::Archived
        || (status == SessionStatus::Completed && found.in_legacy_archive());
    if finished_earlier {
        return Err(Error::Session(format!(
            "session {} is already completed and archived; nothing to resume{}",
            found.id,
            match super::extend::next_steps(&found) {
                steps if steps.is_empty() => String::new(),
                steps => format!(". Next: {}", steps.join("; ")),
            }
        )));
    }
    let mut opened = open(root, arg, options)?;
    if opened.state.status == SessionStatus::Failed {
        // A failed pipeline gets its failed tasks (and what they skipped) another full try.
        for t in opened.graph.tasks.iter_mut() {
            if matches!(t.status, TaskStatus::Failed | TaskStatus::Skipped) {
                t.status = TaskStatus::Pending;
                t.attempts = 0;
                t.reason = None;
                // Attempt numbers restart, so an old record must not pass for a new one.
                let _ = std::fs::remove_file(opened.session.outcome_file(&t.id));
            }
        }
    }
    Ok(Resumed {
        completion_interrupted: opened.state.status == SessionStatus::Completed,
        opened,
    })
}
