//! A dynamic agent role: a role file with `backend: builtin` and `agent: [...]` that team-testing
//! has no built-in implementation of. The role file's body is the agent's instructions, the
//! task's description the prompt, and the answer the role's report in analysis/.

use serde_json::json;

use super::util::time_left;
use super::RoleContext;
use crate::agents::call::{ask, CallInput};
use crate::tasks::Outcome;
use crate::util::{atomic_write, mkdirs};

pub fn run(ctx: &RoleContext) -> Outcome {
    let role = ctx.task.owner.as_str();
    let chain: Vec<_> = ctx
        .agents
        .chain(role)
        .into_iter()
        .filter(|b| !b.is_builtin())
        .collect();
    if chain.is_empty() {
        return Outcome::failed(format!(
            "role {role} has backend: builtin, no built-in implementation, and no agent backend"
        ));
    }
    let folder = ctx
        .session
        .root
        .join("workspace")
        .join(format!("agent-{role}"));
    if let Err(e) = mkdirs(&folder) {
        return Outcome::failed(e.to_string());
    }
    let mut tried = Vec::new();
    for backend in chain {
        let time_left = match time_left(ctx.deadline) {
            Ok(t) => t,
            Err(e) => return Outcome::failed(e.to_string()),
        };
        (ctx.progress)("agent_call", Some(30.0), Some(backend.name.clone()));
        let input = CallInput {
            workdir: crate::agents::call::WorkDir::Empty,
            session: &ctx.session.root,
            repo: ctx.repo,
            role,
            task_id: &ctx.task.id,
            system: ctx.role_body,
            prompt: &ctx.task.description,
            folder: &folder,
            replay: ctx.agents.replay.as_deref(),
            time_left,
        };
        match ask(&backend, &input) {
            Ok((answer, replayed)) => {
                let rel = format!("analysis/{}.md", ctx.task.id);
                let path = ctx.session.root.join(&rel);
                if let Err(e) = atomic_write(&path, answer.as_bytes()) {
                    return Outcome::failed(e.to_string());
                }
                let headline: String = answer
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .unwrap_or("")
                    .trim_start_matches('#')
                    .trim()
                    .chars()
                    .take(120)
                    .collect();
                let mut out = Outcome::completed(format!("{}: {headline}", backend.name));
                out.artifacts = vec![path.display().to_string()];
                out.data.insert("backend".into(), json!(backend.name));
                out.data.insert("replayed".into(), json!(replayed));
                out.data.insert("report".into(), json!(rel));
                if !tried.is_empty() {
                    out.data.insert("fallbacks".into(), json!(tried));
                }
                return out;
            }
            Err(e) => tried.push(json!({"backend": backend.name, "error": e.to_string()})),
        }
    }
    let mut out = Outcome::failed(format!("every agent backend of role {role} failed"));
    out.data.insert("fallbacks".into(), json!(tried));
    out
}
