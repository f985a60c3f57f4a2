//! The added-roles section: the roles added to the session and what they did.

use serde_json::Value;

use super::model::AddedRole;
use crate::session::SessionDir;
use crate::tasks::TaskGraph;

/// The tasks of dynamic roles, with their outcome and the files they wrote (relative to the
/// session where they are inside it).
pub(super) fn added_roles(graph: &TaskGraph, session: &SessionDir) -> Vec<AddedRole> {
    let root = session.root.display().to_string();
    graph
        .tasks
        .iter()
        .filter(|t| t.meta.get("dynamic") == Some(&Value::Bool(true)))
        .map(|t| AddedRole {
            role: t.owner.clone(),
            task_id: t.id.clone(),
            status: t.status.as_str().to_string(),
            summary: t
                .outcome
                .as_ref()
                .map(|o| o.summary.clone())
                .or_else(|| t.reason.clone())
                .unwrap_or_default(),
            reason: t
                .meta
                .get("added_because")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            artifacts: t
                .artifacts
                .iter()
                .map(|a| {
                    a.strip_prefix(&root)
                        .map(|r| r.trim_start_matches('/').to_string())
                        .unwrap_or_else(|| a.clone())
                })
                .collect(),
        })
        .collect()
}
