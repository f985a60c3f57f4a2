//! Small helpers shared by the built-in roles: the task's time budget and JSON object conversion.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::error::{Result, RoleError};
use super::RoleContext;
use crate::agents::call::CallInput;
use crate::sandbox::Sandbox;

/// The input of an agent call for `ctx`'s task: its role's instructions as the system prompt,
/// the session's replay, and what is left of the task's time.
pub(crate) fn agent_input<'a>(
    ctx: &'a RoleContext,
    role: &'a str,
    prompt: &'a str,
    folder: &'a Path,
) -> Result<CallInput<'a>> {
    Ok(CallInput {
        session: &ctx.session.root,
        repo: ctx.repo,
        role,
        task_id: &ctx.task.id,
        system: ctx.role_body,
        prompt,
        folder,
        replay: ctx.agents.replay.as_deref(),
        time_left: time_left(ctx.deadline)?,
    })
}

/// A sandbox for children of `ctx`'s task that run the project's code, in its own folder
/// `workspace/sandbox/<name>`: it reads the repository, the session and `read`, and writes only
/// `write` and its own folder. None with `--unsafe-no-sandbox`.
pub(crate) fn sandbox_for(
    ctx: &RoleContext,
    name: &str,
    mut read: Vec<PathBuf>,
    write: &[PathBuf],
) -> Result<Option<Sandbox>> {
    if !ctx.sandbox.enabled {
        return Ok(None);
    }
    let root = ctx
        .session
        .root
        .join("workspace")
        .join("sandbox")
        .join(name);
    read.push(ctx.repo.to_path_buf());
    read.push(ctx.session.root.clone());
    Sandbox::new(ctx.sandbox, &root, &read, write)
        .map(Some)
        .map_err(|cause| RoleError::Sandbox { root, cause })
}

/// What is left of the task's time budget; an error once the deadline has passed.
pub(crate) fn time_left(deadline: Instant) -> Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(RoleError::DeadlinePassed)
    } else {
        Ok(left)
    }
}

pub(crate) fn to_map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}
