//! Dynamic roles' rules, on the graph and the registry alone: the role cap, a new role's task
//! and its wiring, and which role or template covers a capability gap. No files: the
//! scheduler decides with these, and whoever installs a role's files applies the decision.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::json;

use crate::error::Error;
use crate::pipeline::extend::next_id;
use crate::roles::{Registry, RoleSpec};
use crate::tasks::{GraphError, Task, TaskGraph, TaskStatus};

/// The roles a session uses: the coordinator and every owner of a task that is not deleted.
pub fn roles_in_use(graph: &TaskGraph) -> BTreeSet<String> {
    let mut roles: BTreeSet<String> = graph
        .tasks
        .iter()
        .filter(|t| t.status != TaskStatus::Deleted)
        .map(|t| t.owner.clone())
        .collect();
    roles.insert("coordinator".into());
    roles
}

/// The seed's cap: a role not yet in use may join only while fewer than `max_roles` are.
pub fn check_cap(graph: &TaskGraph, role: &str, max_roles: usize) -> Result<(), Error> {
    let in_use = roles_in_use(graph);
    if in_use.contains(role) || in_use.len() < max_roles {
        return Ok(());
    }
    Err(Error::RoleCap {
        role: role.to_string(),
        in_use: in_use.into_iter().collect::<Vec<_>>().join(", "),
        max: max_roles,
    })
}

/// The role's first task, `PREFIX-001` (or the next free number).
pub fn role_task(
    graph: &TaskGraph,
    spec: &RoleSpec,
    after: Option<&str>,
    session_dir: &Path,
    reason: &str,
    now: &str,
) -> Task {
    let prefix = spec.prefix.clone().unwrap_or_default();
    let id = next_id(graph, &prefix);
    let subject = if spec.description.is_empty() {
        format!("Run role {}", spec.name)
    } else {
        first_sentence(&spec.description)
    };
    let mut task = Task {
        created_at: now.to_string(),
        ..Task::new(
            &id,
            &subject,
            &spec.name,
            after.map(|a| vec![a.to_string()]).unwrap_or_default(),
        )
    };
    task.meta.insert("dynamic".into(), json!(true));
    task.meta.insert("added_because".into(), json!(reason));
    task.description = format!(
        "PURPOSE: {}\nTASK:\n  - Do the work the role file describes\nCONTEXT:\n  - Session: {}\n  - Added: {reason}\n  - Upstream artifacts: {}\nEXPECTED: results in {}/results/ and {}/analysis/\nCONSTRAINTS: Only write inside the session folder\n---\nInnerLoop: false\nRoleSpec: {}\n",
        if spec.description.is_empty() { subject.clone() } else { spec.description.clone() },
        session_dir.display(),
        after.unwrap_or("none"),
        session_dir.display(),
        session_dir.display(),
        spec.source_label(),
    );
    task
}

fn first_sentence(text: &str) -> String {
    let line = text.lines().next().unwrap_or(text).trim();
    let end = line.find(". ").map(|i| i + 1).unwrap_or(line.len());
    line[..end].chars().take(80).collect()
}

/// Wires `task` into the graph: `--after X` (it waits on X, and pending tasks that waited on X
/// wait on it) and `--before Y` (Y, still pending, waits on it). Validated; on error nothing
/// changes.
pub fn insert_role_task(
    graph: &mut TaskGraph,
    task: Task,
    after: Option<&str>,
    before: &[String],
    role_exists: impl Fn(&str) -> bool,
) -> Result<(), Error> {
    let id = task.id.clone();
    let path_err = |e: GraphError| Error::Usage(e.to_string());
    if let Some(a) = after {
        if graph.get(a).is_none() {
            return Err(Error::Usage(format!(
                "--after {a}: no such task in this session"
            )));
        }
    }
    let mut next = graph.clone();
    for b in before {
        let t = next
            .get_mut(b)
            .ok_or_else(|| Error::Usage(format!("--before {b}: no such task in this session")))?;
        if t.status != TaskStatus::Pending {
            return Err(Error::Usage(format!(
                "--before {b}: it is already {}, too late to run anything before it",
                t.status.as_str()
            )));
        }
        t.blocked_by.push(id.clone());
    }
    next.insert(vec![task], after.map(|a| (a, id.as_str())), role_exists)
        .map_err(path_err)?;
    *graph = next;
    Ok(())
}

/// The templates handleAdapt instantiates, with the words that select them.
pub const TEMPLATES: [(&str, &[&str]); 3] = [
    (
        "lint",
        &[
            "lint",
            "linter",
            "static analysis",
            "style",
            "ruff",
            "pyflakes",
            "flake8",
            "clippy",
            "eslint",
        ],
    ),
    (
        "mutation",
        &[
            "mutation",
            "mutant",
            "mutmut",
            "cargo-mutants",
            "test strength",
        ],
    ),
    (
        "security-scan",
        &["security", "vulnerab", "bandit", "cve", "audit", "secret"],
    ),
];

/// The template that covers a gap: its suggested capability first, then its words.
pub fn template_for(suggested: Option<&str>, gap: &str) -> Option<&'static str> {
    let find = |text: &str| {
        let text = text.to_ascii_lowercase();
        TEMPLATES
            .iter()
            .find(|(name, words)| text == *name || words.iter().any(|w| text.contains(w)))
            .map(|(name, _)| *name)
    };
    suggested.and_then(find).or_else(|| find(gap))
}

/// A registered role (not the coordinator) whose name or description covers the gap.
pub fn covering_role<'a>(
    registry: &'a Registry,
    suggested: Option<&str>,
    gap: &str,
) -> Option<&'a RoleSpec> {
    let template = template_for(suggested, gap);
    registry
        .iter()
        .filter(|r| r.name != "coordinator")
        .find(|r| {
            let desc = r.description.to_ascii_lowercase();
            suggested.is_some_and(|s| s.eq_ignore_ascii_case(&r.name))
                || template.is_some_and(|t| {
                    r.name == t
                        || TEMPLATES
                            .iter()
                            .find(|(n, _)| *n == t)
                            .is_some_and(|(_, words)| words.iter().any(|w| desc.contains(w)))
                })
        })
}
