//! What a role that runs the project's code is handed about the project, resolved once per task
//! before the role starts: the framework and toolchain the strategist found, and the files it
//! gave priority to.

use std::path::Path;

use crate::session::framework::{session_framework, strategist_outcome};
use crate::session::SessionDir;
use crate::tasks::data;
use crate::testing::framework::{self, SessionFramework};
use crate::testing::toolchain::Toolchain;

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
    let tools = recorded
        .unwrap_or_else(|| crate::family::toolchain(repo, framework.as_ref().ok().copied()));
    Project {
        framework,
        tools,
        scope,
    }
}
