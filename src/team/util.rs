//! Small helpers shared by the built-in roles: the task's time budget and JSON object conversion.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::error::{Result, RoleError};
use super::RoleContext;
use crate::agents::call::{CallInput, WorkDir};
use crate::sandbox::Sandbox;
use crate::testing::runner::Runner;
use crate::testing::toolchain::Toolchain;

/// The input of an agent call for `ctx`'s task: its role's instructions as the system prompt,
/// the session's replay, and what is left of the task's time.
pub(crate) fn agent_input<'a>(
    ctx: &'a RoleContext,
    role: &'a str,
    prompt: &'a str,
    folder: &'a Path,
    workdir: WorkDir<'a>,
) -> Result<CallInput<'a>> {
    Ok(CallInput {
        workdir,
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

/// The folders a layer run writes (its copy of the project, cargo's target folder, the raw
/// reports; not the rest of the workspace, where other roles' copies and helpers live), made,
/// and the sandbox (`workspace/sandbox/<name>`) that lets it write there only.
pub(crate) fn layer_sandbox(
    ctx: &RoleContext,
    runner: &dyn Runner,
    tools: &Toolchain,
    layer: &str,
    name: &str,
    results: &Path,
) -> Result<(Vec<PathBuf>, Option<Sandbox>)> {
    let read = runner.read_roots(tools, ctx.repo);
    let workspace = ctx.session.root.join("workspace");
    let made = runner.workspace_dirs(&workspace, layer);
    for dir in std::iter::once(results).chain(made.iter().map(PathBuf::as_path)) {
        std::fs::create_dir_all(dir).map_err(RoleError::io("create", dir))?;
    }
    // The project's copy stays read-only to the tests: only their own folders are writable.
    let copies = runner.copy_dirs(&workspace, layer);
    let mut writable = vec![results.to_path_buf()];
    writable.extend(made.into_iter().filter(|d| !copies.contains(d)));
    let sandbox = sandbox_for(ctx, name, read, &writable)?;
    Ok((writable, sandbox))
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
