//! The change scope the session analysed (task-analysis.json's "scope"), as the roles read it.

use serde::Deserialize;

use crate::pipeline::scope::ChangedFile;
use crate::session::SessionDir;
use crate::util::read_json;

/// The part of task-analysis.json's "scope" the roles need.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Scope {
    #[serde(default)]
    pub whole_project: bool,
    #[serde(default)]
    pub whole_project_reason: Option<String>,
    #[serde(default)]
    pub is_git: bool,
    #[serde(default)]
    pub base_commit: Option<String>,
    #[serde(default)]
    pub base_ref: Option<String>,
    #[serde(default)]
    pub files: Vec<ChangedFile>,
    #[serde(default)]
    pub modules: Vec<String>,
    #[serde(default)]
    pub warnings: Vec<String>,
}

#[derive(Deserialize)]
struct Analysis {
    scope: Scope,
}

/// task-analysis.json could not be read (missing, unreadable or not the expected shape).
#[derive(Debug, thiserror::Error)]
#[error("cannot read the change scope: {cause}")]
pub struct ScopeError {
    pub cause: crate::util::FileError,
}

pub(crate) fn load_scope(session: &SessionDir) -> Result<Scope, ScopeError> {
    read_json::<Analysis>(&session.analysis_json())
        .map(|a| a.scope)
        .map_err(|cause| ScopeError { cause })
}
