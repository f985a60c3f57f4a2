//! The generator's work handed to an agent backend: the prompt (PURPOSE / TASK / CONTEXT /
//! EXPECTED / CONSTRAINTS, with the strategy, the source in scope with line numbers and the last
//! run's failures and missing lines), the call, and the accept filter of TestGen-LLM and CoverUp:
//! a candidate test file is kept only if it loads, passes 5 runs in a row, changes nothing outside
//! its own temporary folders (the effects plugin watches every run), and adds coverage of the
//! scope. Every rejected candidate is recorded with its reason.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use super::accept::{accept_filter, check_passes, file_name};
use super::feedback::feedback;
use super::python_modules::modules_in_scope;
use crate::agents::answer::AnswerFile;
use crate::agents::backends::Backend;
use crate::agents::call;
use crate::gen::ModuleRef;
use crate::tasks::Outcome;
use crate::team::error::{Result, RoleError};
use crate::team::util::{agent_input, to_map};
use crate::team::RoleContext;
use crate::util::{atomic_write, mkdirs};

/// Lines of one source file shown in the prompt.
const MAX_SOURCE_LINES: usize = 400;

/// One round of the generator through `backend`; Err when it gave no accepted test (the chain
/// then tries its next backend).
pub(crate) fn agent_round(
    ctx: &RoleContext,
    layer: &str,
    round: Option<u64>,
    backend: &Backend,
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
    let modules = modules_in_scope(ctx)?;
    if modules.is_empty() {
        return Err(RoleError::NoModuleInScope);
    }
    let prompt = build_prompt(ctx, layer, &modules);
    let workspace = ctx.session.root.join("workspace");
    let folder = workspace.join(format!("agent-{layer}"));
    (ctx.progress)(
        "agent_call",
        Some(20.0),
        Some(format!("{} for {} module(s)", backend.name, modules.len())),
    );
    let called = call::call(backend, &agent_input(ctx, "generator", &prompt, &folder)?)?;
    (ctx.progress)(
        "accept_filter",
        Some(50.0),
        Some(format!("{} candidate file(s)", called.files.len())),
    );
    let scope: Vec<String> = modules.iter().map(|m| m.file.clone()).collect();
    let judged = accept_filter(ctx, layer, &called.files, &scope, false)?;
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
        let name = free_name(&dir, &file_name(&f.path));
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
    chain: Vec<Backend>,
}

impl<'c, 'a> AgentRepair<'c, 'a> {
    /// None when the task has no layer or the executor's chain has no agent backend (only the
    /// built-in one).
    pub(crate) fn of(ctx: &'c RoleContext<'a>) -> Option<Self> {
        let layer = ctx.task.layer.as_deref()?;
        let chain = ctx.agents.chain("executor");
        (!chain.iter().all(|b| b.is_builtin())).then_some(AgentRepair { ctx, layer, chain })
    }
}

impl RepairTests for AgentRepair<'_, '_> {
    fn repair(&self, file: &Path, failures: &str) -> Result<(String, String)> {
        repair_file(self.ctx, self.layer, &self.chain, file, failures)
    }
}

/// The executor's self-repair through its agent chain: a test file with failures the executor
/// judged the test's own fault goes to the backends with the evidence; the first corrected file
/// that loads and passes 5 runs in a row replaces it. Returns (backend, new content); Err when
/// no backend gave one (the executor then quarantines the tests).
fn repair_file(
    ctx: &RoleContext,
    layer: &str,
    chain: &[Backend],
    file: &Path,
    failures: &str,
) -> Result<(String, String)> {
    let name = file_name(file);
    let content = std::fs::read_to_string(file).map_err(RoleError::io("read", file))?;
    let modules = modules_in_scope(ctx).unwrap_or_default();
    let mut p = String::new();
    let _ = writeln!(
        p,
        "PURPOSE: repair the {layer} pytest file `{name}`: its failing tests are wrong as written (the executor judged the failures to be the tests' own fault, not the code's).\n"
    );
    let _ = writeln!(p, "TASK: fix the mistakes in the failing tests so they test what they meant to; keep every passing test as it is.\n");
    p.push_str("CONTEXT:\n\n");
    let _ = writeln!(p, "The test file `{name}`, with line numbers:\n");
    for (i, line) in content.lines().enumerate() {
        let _ = writeln!(p, "{:>4} | {line}", i + 1);
    }
    let _ = writeln!(p, "\nThe failures:\n\n{}\n", truncate(failures, 6000));
    for m in &modules {
        if let Ok(source) = std::fs::read_to_string(ctx.repo.join(&m.file)) {
            let _ = writeln!(p, "Source of {} (module `{}`):\n", m.file, m.module);
            for (i, line) in source.lines().take(MAX_SOURCE_LINES).enumerate() {
                let _ = writeln!(p, "{:>4} | {line}", i + 1);
            }
            p.push('\n');
        }
    }
    let _ = writeln!(
        p,
        "EXPECTED: the whole corrected file in one fenced code block whose first line is `# path: {name}`.\n\n\
         CONSTRAINTS: never weaken an assertion to make it pass on wrong behaviour; do not change the project's files; pytest only.\n"
    );
    let folder = ctx
        .session
        .root
        .join("workspace")
        .join(format!("repair-{layer}"));
    let mut errors = Vec::new();
    for backend in chain.iter().filter(|b| !b.is_builtin()) {
        let called = call::call(backend, &agent_input(ctx, "executor", &p, &folder)?);
        let files = match called {
            Ok(c) => c.files,
            Err(e) => {
                errors.push(format!("{}: {e}", backend.name));
                continue;
            }
        };
        let Some(fixed) = files.into_iter().find(|f| file_name(&f.path) == name) else {
            errors.push(format!("{}: the answer has no {name}", backend.name));
            continue;
        };
        match check_passes(ctx, layer, &name, &fixed.content) {
            None => return Ok((backend.name.clone(), fixed.content)),
            Some(why) => errors.push(format!("{}: the repaired file {why}", backend.name)),
        }
    }
    Err(RoleError::NoRepair { attempts: errors })
}

/// `name`, or `stem_2.py`, `stem_3.py`, … when `dir` has it already.
fn free_name(dir: &Path, name: &str) -> String {
    if !dir.join(name).exists() {
        return name.to_string();
    }
    let stem = name.strip_suffix(".py").unwrap_or(name);
    (2..)
        .map(|k| format!("{stem}_{k}.py"))
        .find(|n| !dir.join(n).exists())
        .expect("some name is free")
}

/// The prompt. It names files relative to the repository only, so the same repository and
/// task give the same prompt (and replay finds its recording).
fn build_prompt(ctx: &RoleContext, layer: &str, modules: &[ModuleRef]) -> String {
    let target = ctx.config.coverage_target(layer).unwrap_or(80.0);
    let fb = feedback(&ctx.session.root, layer);
    let mut p = String::new();
    let _ = writeln!(
        p,
        "PURPOSE: write {layer} pytest tests for the code in scope, reaching at least {target:.0}% line coverage of it, that pass on the code as it is unless it has a real bug.\n"
    );
    // The task text names the session's folder; the prompt must not (replay matches by prompt).
    let session = ctx.session.root.display().to_string();
    let task = ctx.task.description.replace(&session, "<session>");
    let _ = writeln!(p, "TASK: {}\n", task.trim());
    p.push_str("CONTEXT:\n\n");
    p.push_str(&super::discoveries::prompt_section(&ctx.session.root));
    if let Ok(strategy) =
        std::fs::read_to_string(ctx.session.root.join("strategy/test-strategy.md"))
    {
        let _ = writeln!(p, "Test strategy:\n\n{}\n", truncate(&strategy, 6000));
    }
    for m in modules {
        let Ok(source) = std::fs::read_to_string(ctx.repo.join(&m.file)) else {
            continue;
        };
        let _ = writeln!(
            p,
            "Source of {} (module `{}`), with line numbers:\n",
            m.file, m.module
        );
        for (i, line) in source.lines().take(MAX_SOURCE_LINES).enumerate() {
            let _ = writeln!(p, "{:>4} | {line}", i + 1);
        }
        p.push('\n');
    }
    if !fb.avoid.is_empty() {
        let _ = writeln!(
            p,
            "Tests of the last run that failed as written (do not repeat them): {}\n",
            fb.avoid.join(", ")
        );
    }
    if !fb.missing.is_empty() {
        p.push_str(if fb.missing_from_baseline {
            "Lines the project's own tests do not cover (they cover the rest; aim here, a test that covers nothing new is dropped):\n"
        } else {
            "Lines the last run did not cover:\n"
        });
        for (file, lines) in &fb.missing {
            let _ = writeln!(p, "- {file}: {}", ranges(lines));
        }
        p.push('\n');
    }
    p.push_str(
        "EXPECTED: one fenced code block per test file. Name the file on the first line inside the block as `# path: test_<name>.py` (or write `path=test_<name>.py` after the opening fence). Tests import the project normally (`from package.module import name`) and use pytest only; every test asserts something.\n\n\
         CONSTRAINTS: write test files only; never change the project's files; no network; write files only under pytest's tmp_path; no sleeping, no randomness without a fixed seed.\n",
    );
    p
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// `[1, 2, 3, 7]` as `1-3, 7`.
fn ranges(lines: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut sorted = lines.to_vec();
    sorted.sort_unstable();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ranges_are_compact() {
        assert_eq!(ranges(&[7, 1, 2, 3, 9, 10]), "1-3, 7, 9-10");
        assert_eq!(ranges(&[]), "");
    }
}
