//! Which framework and toolchain a session works with: the ones its strategist recorded, else a
//! fresh detection of the repository.

use std::path::Path;

use super::SessionDir;
use crate::tasks::{data, Outcome, TaskStatus};
use crate::testing::detect::{detect_framework, walk};
use crate::testing::framework::{self, SessionFramework};
use crate::testing::toolchain::{self, Toolchain};

/// What the roles that run the project's code need to know about it, resolved once per task
/// before the role starts, so that a role is handed it rather than reading the session for it.
#[derive(Debug, Clone)]
pub struct Project {
    pub framework: SessionFramework,
    pub tools: Toolchain,
    /// The strategist's priority files, where coverage is judged (the whole project when empty).
    pub scope: Vec<String>,
}

impl Project {
    /// The framework's name as recorded in runs (`unknown` when none was found).
    pub fn framework_name(&self) -> &str {
        framework::name_of(&self.framework)
    }
}

/// The session's framework and the toolchain the strategist probed for it; a toolchain is
/// probed afresh only when none was recorded (or it was recorded for another framework).
pub fn session_project(session: &SessionDir, repo: &Path) -> Project {
    let framework = session_framework(session, repo);
    let strategist = strategist_outcome(session);
    let scope = strategist
        .as_ref()
        .map(|o| o.priority_files())
        .unwrap_or_default();
    let recorded = strategist
        .and_then(|o| o.data.get(data::TOOLCHAIN).cloned())
        .and_then(|v| serde_json::from_value::<Toolchain>(v).ok())
        .filter(|t| t.framework == framework::name_of(&framework));
    let tools =
        recorded.unwrap_or_else(|| toolchain::detect(repo, framework.as_ref().ok().copied()));
    Project {
        framework,
        tools,
        scope,
    }
}

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
