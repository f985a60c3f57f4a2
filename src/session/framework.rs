//! Which framework a session works with: the one its strategist recorded, else a fresh
//! detection of the repository.

use std::path::Path;

use super::SessionDir;
use crate::tasks::{Outcome, TaskStatus};
use crate::testing::detect::{detect_framework, walk};
use crate::testing::framework::{self, SessionFramework};

/// The framework the strategist recorded for this session, else a fresh detection.
pub fn session_framework(session: &SessionDir, repo: &Path) -> SessionFramework {
    match strategist_outcome(session)
        .as_ref()
        .and_then(|o| o.framework_name())
    {
        Some(name) => framework::from_name(name),
        None => detect_framework(repo, &walk(repo))
            .0
            .ok_or_else(|| framework::UnknownFramework {
                name: framework::UNKNOWN.into(),
            }),
    }
}

/// The outcome of the session's (last completed) strategist task, from tasks.json.
pub fn strategist_outcome(session: &SessionDir) -> Option<Outcome> {
    let graph = session.load_tasks().ok()?;
    graph
        .tasks
        .into_iter()
        .rev()
        .filter(|t| t.owner == "strategist" && t.status == TaskStatus::Completed)
        .find_map(|t| t.outcome)
}
