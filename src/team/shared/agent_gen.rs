//! The generator's work handed to an agent backend, in every family: the prompt
//! (`agent_prompt`: PURPOSE / TASK / CONTEXT / EXPECTED / CONSTRAINTS in the family's terms), the
//! call, in a copy of the repository the agent can explore and run, and the accept filter of
//! TestGen-LLM and CoverUp (`accept`): a candidate test file is kept only if it loads, passes 5
//! runs in a row, changes nothing outside its own temporary folders, and adds coverage of the
//! scope. Every rejected candidate is recorded with its reason. The executor's self-repair goes
//! through the same chain and the same bench.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use super::accept::{accept_filter, check_passes, file_name, Demand};
use super::agent_prompt::{self, PromptFacts, REPAIR_DIR};
use crate::agents::answer::AnswerFile;
use crate::agents::backends::Backend;
use crate::agents::call::{self, WorkDir};
use crate::family::agent::Conventions;
use crate::tasks::Outcome;
use crate::team::error::{Result, RoleError};
use crate::team::util::{agent_input, to_map};
use crate::team::RoleContext;
use crate::testing::framework::Framework;
use crate::util::{atomic_write, mkdirs};

/// One round of the generator through `backend` for a `framework` project; Err when it gave no
/// accepted test (the chain then tries its next backend).
pub(crate) fn agent_round(
    ctx: &RoleContext,
    layer: &str,
    round: Option<u64>,
    backend: &Backend,
    framework: Framework,
) -> Result<Outcome> {
    // A planned layer's first round: one call per scenario of a requirement or a gap (the code
    // route's scenarios are the modules in scope, which the layer's call covers; a plan too big
    // for one call each goes the same way).
    let planned: Vec<_> = super::agent_scenarios::rows_for(&ctx.session.root, layer)
        .into_iter()
        .filter(|r| r.source == "spec" || r.source == "gap")
        .collect();
    if round.is_none() && !planned.is_empty() && planned.len() <= super::agent_scenarios::MAX_CALLS
    {
        return super::agent_scenarios::scenario_round(ctx, layer, backend, &planned);
    }
    let facts = PromptFacts::of(ctx, framework)?;
    if facts.sources.is_empty() {
        return Err(RoleError::NoModuleInScope);
    }
    let prompt = agent_prompt::generation(ctx, layer, &facts);
    let folder = working_copy(ctx, &format!("agent-{layer}"), &BTreeMap::new())?;
    (ctx.progress)(
        "agent_call",
        Some(20.0),
        Some(format!(
            "{} for {} file(s) in scope",
            backend.name,
            facts.sources.len()
        )),
    );
    let input = agent_input(
        ctx,
        "generator",
        &prompt,
        &folder,
        WorkDir::CopyOf(ctx.repo),
    )?;
    let called = call::call(backend, &input)?;
    (ctx.progress)(
        "accept_filter",
        Some(50.0),
        Some(format!("{} candidate file(s)", called.files.len())),
    );
    let judged = accept_filter(
        ctx,
        layer,
        &called.files,
        &facts.sources,
        Demand::NewCoverage,
    )?;
    let accepted: Vec<&AnswerFile> = judged
        .iter()
        .filter(|(_, v)| v.is_none())
        .map(|(f, _)| *f)
        .collect();
    let rejected: Vec<Value> = judged
        .iter()
        .filter_map(|(f, v)| v.as_ref().map(|why| json!({"file": f.path, "reason": why})))
        .collect();
    if accepted.is_empty() {
        let reasons = judged
            .iter()
            .filter_map(|(f, v)| v.as_ref().map(|why| format!("{}: {why}", f.path.display())))
            .collect();
        return Err(RoleError::NothingAccepted {
            backend: backend.name.clone(),
            reasons,
        });
    }
    let dir = ctx.session.root.join("tests").join(layer);
    mkdirs(&dir)?;
    let mut written = Vec::new();
    for f in &accepted {
        // Beside, never over, a test file the layer already has (it was judged against it).
        let name = free_name(&dir, &file_name(&f.path), &facts.conventions);
        atomic_write(&dir.join(&name), f.content.as_bytes())?;
        written.push(format!("tests/{layer}/{name}"));
    }
    let mut out = Outcome::completed(format!(
        "{layer}: {} test file(s) from {}{}, {} candidate(s) rejected",
        written.len(),
        backend.name,
        if called.replayed { " (replayed)" } else { "" },
        rejected.len()
    ));
    out.artifacts = written.clone();
    out.data = to_map(json!({
        "layer": layer, "test_files": written, "round": round, "is_revision": round.is_some(),
        "backend": backend.name, "replayed": called.replayed, "rejected": rejected,
        "refused": called.refused, "tokens_in": called.tokens.0, "tokens_out": called.tokens.1,
    }));
    Ok(out)
}

/// A copy of the repository (and `extra` files, relative path -> bytes) under the session's
/// workspace as `name`: an agent's working folder. The user's tree is never one.
fn working_copy(
    ctx: &RoleContext,
    name: &str,
    extra: &BTreeMap<std::path::PathBuf, Vec<u8>>,
) -> Result<std::path::PathBuf> {
    let folder = ctx.session.root.join("workspace").join(name);
    crate::workspace::mirror(ctx.repo, &folder, extra).map_err(|cause| RoleError::Mirror {
        into: folder.clone(),
        cause,
    })?;
    Ok(folder)
}

/// Test files rewritten by agents: the executor's self-repair, reached through this trait so
/// that the critic's loop knows nothing of prompts and backends.
pub(crate) trait RepairTests {
    /// The repairing backend's name and the file's new content, for `file` whose failures are
    /// `failures`; Err when no backend gave one that loads and passes.
    fn repair(&self, file: &Path, failures: &str) -> Result<(String, String)>;
}

/// The executor's agent chain on its task's layer.
pub(crate) struct AgentRepair<'c, 'a> {
    ctx: &'c RoleContext<'a>,
    layer: &'c str,
    framework: Framework,
    chain: Vec<Backend>,
}

impl<'c, 'a> AgentRepair<'c, 'a> {
    /// None when the task has no layer, the session no known framework, or the executor's
    /// chain no agent backend (only the built-in one).
    pub(crate) fn of(ctx: &'c RoleContext<'a>) -> Option<Self> {
        let layer = ctx.task.layer.as_deref()?;
        let framework = crate::session::framework::session_framework(ctx.session, ctx.repo).ok()?;
        let chain = ctx.agents.chain("executor");
        (!chain.iter().all(|b| b.is_builtin())).then_some(AgentRepair {
            ctx,
            layer,
            framework,
            chain,
        })
    }
}

impl RepairTests for AgentRepair<'_, '_> {
    fn repair(&self, file: &Path, failures: &str) -> Result<(String, String)> {
        repair_file(self, file, failures)
    }
}

/// The executor's self-repair through its agent chain: a test file with failures the executor
/// judged the test's own fault goes to the backends with the evidence and the code it calls; the
/// first corrected file that loads and passes 5 runs in a row replaces it. The agent works in a
/// copy of the repository holding the file under repair. Returns (backend, new content); Err
/// when no backend gave one (the executor then quarantines the tests).
fn repair_file(r: &AgentRepair, file: &Path, failures: &str) -> Result<(String, String)> {
    let ctx = r.ctx;
    let name = file_name(file);
    let content = std::fs::read_to_string(file).map_err(RoleError::io("read", file))?;
    let facts = PromptFacts::of(ctx, r.framework)?;
    // Where the runner places the file (so its imports resolve if the agent runs it there).
    let in_copy = crate::family::runner_for(r.framework)
        .apply_path(ctx.repo, r.layer, file)
        .unwrap_or_else(|| Path::new(REPAIR_DIR).join(&name));
    let prompt = agent_prompt::repair(ctx, r.layer, &facts, &name, &content, failures, &in_copy);
    let extra = BTreeMap::from([(in_copy.clone(), content.clone().into_bytes())]);
    let mut errors = Vec::new();
    for backend in r.chain.iter().filter(|b| !b.is_builtin()) {
        let folder = working_copy(ctx, &format!("repair-{}", r.layer), &extra)?;
        let called = call::call(
            backend,
            &agent_input(ctx, "executor", &prompt, &folder, WorkDir::CopyOf(ctx.repo))?,
        );
        let files = match called {
            Ok(c) => c.files,
            Err(e) => {
                errors.push(format!("{}: {e}", backend.name));
                continue;
            }
        };
        // The file changed in place, else a block (or a file at the copy's top) named like it;
        // never another file of the project it changed, and not the file as handed over.
        let changed = || files.iter().filter(|f| f.content != content);
        let fixed = changed().find(|f| f.path == in_copy).or_else(|| {
            changed().find(|f| f.path.parent() == Some(Path::new("")) && file_name(&f.path) == name)
        });
        let Some(fixed) = fixed else {
            errors.push(format!("{}: the answer has no new {name}", backend.name));
            continue;
        };
        match check_passes(ctx, r.layer, &name, &fixed.content) {
            None => return Ok((backend.name.clone(), fixed.content.clone())),
            Some(why) => errors.push(format!("{}: the repaired file {why}", backend.name)),
        }
    }
    Err(RoleError::NoRepair { attempts: errors })
}

/// `name`, or a numbered name beside it that is still a test file name, when `dir` has it.
fn free_name(dir: &Path, name: &str, conventions: &Conventions) -> String {
    if !dir.join(name).exists() {
        return name.to_string();
    }
    (2..)
        .map(|k| Conventions::numbered(name, k))
        .find(|n| !dir.join(n).exists() && (conventions.is_test_file)(n))
        .expect("some name is free")
}
