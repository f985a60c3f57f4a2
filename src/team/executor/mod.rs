//! Executor: runs a layer's tests for real with the detected framework, keeps the raw reports,
//! classifies every failure (test_defect / code_defect / env_issue) with evidence, re-runs failures
//! to tell flaky tests apart, quarantines broken tests in up to 3 repair iterations, and reports
//! pass rate and line coverage of the files in scope for the GC gate.

mod carried;
mod critic;
mod record;
mod repair;
mod run_cache;
pub mod watch;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::error::RoleError;
use super::project::Project;
use super::shared::agent_gen::RepairTests;
use super::util::{layer_sandbox, time_left};
use super::RoleContext;
use crate::tasks::Outcome;
use crate::testing::runner::{RunOutput, RunSpec, Runner};
use crate::util::{mkdirs, now_ts};
use carried::Carried;
use critic::{Critic, Folders};
pub use record::reserve_run;
use record::{empty_run, env_blocker, finish, Finish};
use run_cache::{keepable, Kept, RunCache};

/// Repair iterations inside one task (the seed's bound).
const MAX_REPAIRS: usize = 3;

/// Runs the task's layer for `project` (its framework and toolchain, resolved before the role
/// starts) and judges it, repairing and re-running up to MAX_REPAIRS times. Test files whose
/// tests are wrong go first to `repairer` (the agent chain, when the session has one), in
/// every family; quarantine is what is left when it gives no repair that passes.
pub(crate) fn run(
    ctx: &RoleContext,
    project: &Project,
    repairer: Option<&dyn RepairTests>,
) -> Outcome {
    let Some(layer) = ctx.task.layer.as_deref() else {
        return Outcome::failed(format!(
            "task {} has no layer: the executor needs one",
            ctx.task.id
        ));
    };
    // A step that cannot be done fails the task with its reason.
    judge_layer(ctx, project, repairer, layer).unwrap_or_else(|e| Outcome::failed(e.to_string()))
}

/// The layer's runs and the critic's judgement of them, to the run record and the outcome.
fn judge_layer(
    ctx: &RoleContext,
    project: &Project,
    repairer: Option<&dyn RepairTests>,
    layer: &str,
) -> Result<Outcome, RoleError> {
    let results = ctx.session.root.join("results");
    mkdirs(&results)?;
    let framework = project.framework_name();
    let tools = &project.tools;
    (ctx.progress)(
        "context_loaded",
        Some(10.0),
        Some(format!("framework {framework}, layer {layer}")),
    );
    let (n, run_path) = run_number(ctx, &results)?;
    let test_dir = ctx.session.root.join("tests").join(layer);
    let runner = match &project.framework {
        Ok(known) => crate::family::runner_for(*known),
        Err(unknown) => {
            return Ok(empty_run(
                ctx,
                layer,
                framework,
                &run_path,
                unknown.to_string(),
            ))
        }
    };
    let runner = runner.as_ref();
    let (writable, sandbox) = layer_sandbox(
        ctx,
        runner,
        tools,
        layer,
        &format!("executor-{layer}"),
        &results,
    )?;
    if !runner.has_tests(&test_dir) {
        let why = format!("no tests in {layer}");
        return Ok(empty_run(ctx, layer, framework, &run_path, why));
    }
    let quarantine_dir = ctx
        .session
        .root
        .join("tests")
        .join("quarantine")
        .join(layer);
    // `rerun`: only the tests that failed in the earlier run run again; its passes are kept.
    let carried = Carried::load(ctx, runner, &test_dir)?;
    let carried_passes = carried.as_ref().map_or(&[][..], |c| c.passed.as_slice());
    // A run of the very same files on the very same code is taken from an earlier session (a
    // rerun's partial runs are never kept or reused).
    let run_cache = match carried {
        None => RunCache::open(ctx, tools, layer),
        Some(_) => None,
    };
    let folders = Folders {
        layer,
        test_dir: &test_dir,
        quarantine_dir: &quarantine_dir,
    };
    let mut critic = Critic::new(&ctx.task.id, folders);
    // What a sandbox denial looks like in this run: writes outside `writable`, the network off.
    let sandbox_ctx = sandbox
        .as_ref()
        .map(|_| (writable.as_slice(), !ctx.sandbox.allow_network));
    let started_at = now_ts();
    let clock = Instant::now();
    let mut iteration = 0;
    let mut judged;
    let (out, verdicts, watched, key, reused_from) = loop {
        iteration += 1;
        let timeout = time_left(ctx.deadline)?;
        let deselect = critic.deselected(carried_passes);
        let spec = RunSpec {
            repo: ctx.repo,
            session: &ctx.session.root,
            layer,
            test_dir: test_dir.clone(),
            tools,
            results: results.clone(),
            run_no: format!("{n:03}"),
            timeout,
            deselect: &deselect,
            sandbox: sandbox.as_ref(),
        };
        (ctx.progress)(
            "tests_running",
            Some(20.0 + 20.0 * iteration as f64),
            Some(format!("iteration {iteration}")),
        );
        // Taken before the run: a file changed while it runs is not what it judged.
        judged = crate::artifacts::snapshot(&test_dir);
        let key = run_cache.as_ref().map(|c| c.key(&test_dir, &deselect));
        let hit = match (&run_cache, &key) {
            (Some(cache), Some(key)) if iteration == 1 => cache.get(key),
            _ => None,
        };
        let mut out = match &hit {
            Some(entry) => {
                (ctx.progress)(
                    "reused",
                    None,
                    Some(format!(
                        "the results of {}: the repository, the tests and the toolchain are what it ran",
                        entry.from
                    )),
                );
                entry.restore(&results, &spec.run_no)
            }
            None => run_layer(ctx, runner, &spec),
        };
        if let Some(problem) = &out.env_problem {
            let timed_out = out.timed_out;
            return Ok(env_blocker(
                ctx, layer, framework, &run_path, tools, problem, timed_out,
            ));
        }
        let mut changed = critic.take_out_unloadable(&mut out, ctx.repo, iteration);
        let mut found_unsafe = critic.take_out_unsafe(&out.effects, iteration);
        let verdicts = critic.judge(&out, runner, &spec, ctx.deadline, sandbox_ctx);
        found_unsafe |= critic.take_out_denied(&out.cases, &verdicts, runner, iteration);
        if iteration < MAX_REPAIRS {
            let repaired = match repairer {
                Some(r) => repair::agent_repairs(
                    r,
                    &test_dir,
                    &out.cases,
                    &verdicts,
                    iteration,
                    &mut critic.repairs,
                ),
                None => BTreeSet::new(),
            };
            changed |= !repaired.is_empty();
            changed |=
                critic.take_out_test_defects(&out.cases, &verdicts, runner, &repaired, iteration);
        }
        // Unsafe tests are taken out even after the last repair iteration (they only ever
        // leave, so this ends): the layer's figures must never count them.
        if found_unsafe || (changed && iteration < MAX_REPAIRS) {
            continue;
        }
        // The second line of defence, on the tests about to be kept: what they change with
        // every write real (diverted), whoever makes it. What it finds leaves, and the layer
        // runs again without it.
        // A reused run brings the watch's verdict on the same files with it.
        let reused_from = hit.as_ref().map(|e| e.from.clone());
        let check = match hit {
            Some(entry) => watch::Watched {
                record: entry.watched,
                findings: Vec::new(),
            },
            None => watch::check(ctx, runner, &spec, &out, &writable, &critic.flaky),
        };
        if critic.take_out_watched(check.findings, iteration) {
            continue;
        }
        critic
            .flaky
            .retain(|id| out.cases.iter().any(|c| &c.id == id));
        out.load_errors = std::mem::take(&mut critic.load_errors);
        break (out, verdicts, check.record, key, reused_from);
    };
    if let (Some(cache), Some(key), None) = (&run_cache, key, &reused_from) {
        let sandboxed = ctx.sandbox.enabled;
        if keepable(&out, &critic.flaky, &watched, tools, sandboxed) && cache.repo_unchanged(ctx) {
            let kept = Kept {
                from: format!("{} run {n:03}", ctx.session.id),
                run_no: format!("{n:03}"),
                out: out.clone(),
                watched: watched.clone(),
            };
            cache.put(key, kept, &results);
        }
    }
    critic.save()?;
    (ctx.progress)("tests_done", Some(85.0), None);
    Ok(finish(
        ctx,
        Finish {
            layer,
            framework,
            scope: project.scope.as_slice(),
            n,
            run_path: &run_path,
            out,
            verdicts,
            flaky: critic.flaky,
            quarantined: critic.quarantined,
            repairs: critic.repairs,
            started_at,
            seconds: clock.elapsed().as_secs_f64(),
            carried,
            watched: Some(watched),
            judged,
            reused_from,
        },
    ))
}

/// This task's run number: the one the coordinator reserved when it sent the task to a cluster
/// worker, else the next free one here.
fn run_number(ctx: &RoleContext, results: &Path) -> Result<(usize, PathBuf), RoleError> {
    let reserved = ctx
        .task
        .meta
        .get(crate::tasks::data::RESERVED_RUN)
        .and_then(|v| v.as_u64())
        .filter(|&n| (1..1_000_000).contains(&n));
    match reserved {
        Some(n) => Ok((n as usize, results.join(format!("run-{n:03}.json")))),
        None => reserve_run(results),
    }
}

/// One run of the layer: split by test file into shards on the cluster's executors when the
/// run asks for it and the layer has files enough, else here. A shard that cannot run makes the
/// run a local one, with the reason in the progress.
fn run_layer(ctx: &RoleContext, runner: &dyn Runner, spec: &RunSpec) -> RunOutput {
    let Some(shards) = ctx.shards.filter(|s| s.count() > 1) else {
        return runner.run(spec);
    };
    let files = shard_files(&spec.test_dir);
    if files.len() < 2 {
        return runner.run(spec);
    }
    let count = shards.count().min(files.len());
    let mut groups = vec![Vec::new(); count];
    for (i, file) in files.into_iter().enumerate() {
        groups[i % count].push(file);
    }
    (ctx.progress)(
        "sharded",
        None,
        Some(format!("{count} shards on the cluster's executors")),
    );
    let req = super::ShardRequest {
        task: ctx.task,
        layer: spec.layer,
        run_no: &spec.run_no,
        deselect: spec.deselect,
        groups,
        timeout: spec.timeout,
    };
    // A shard whose host lacks the toolchain says nothing about this one: the run is redone here.
    let ran = shards.run(req, ctx.progress).and_then(|outputs| {
        match outputs.iter().find_map(|o| o.env_problem.clone()) {
            Some(problem) => Err(crate::team::ShardError::ShardNotRun(problem)),
            None => Ok(outputs),
        }
    });
    match ran {
        Ok(outputs) => crate::testing::merge::merge_outputs(outputs),
        Err(problem) => {
            (ctx.progress)(
                "shards_failed",
                None,
                Some(format!("{problem}; running the layer here")),
            );
            match time_left(ctx.deadline) {
                Ok(left) => runner.run(&RunSpec {
                    timeout: left,
                    ..spec.clone()
                }),
                Err(e) => RunOutput {
                    timed_out: true,
                    output_tail: format!("{problem}; {e}"),
                    ..Default::default()
                },
            }
        }
    }
}

/// A layer's test files, relative to its folder, in a stable order: what shards split. Files
/// that are not tests themselves (conftest.py, helpers) go to every shard.
pub fn shard_files(test_dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![test_dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !name.starts_with('.') && name != "__pycache__" && name != "node_modules" {
                    stack.push(path);
                }
                continue;
            }
            let is_test = name.starts_with("test")
                || name.ends_with("_test.py")
                || name.ends_with("_test.go")
                || name.contains(".test.")
                || name.contains(".spec.");
            if kind.is_file() && is_test {
                if let Ok(rel) = path.strip_prefix(test_dir) {
                    out.push(rel.to_string_lossy().into_owned());
                }
            }
        }
    }
    out.sort();
    out
}

/// One shard of a layer run, on a cluster worker: the layer's folder holds only the shard's test
/// files; no repairs or re-runs (the executor that split the run does those on the whole).
pub fn run_shard(
    ctx: &RoleContext,
    project: &Project,
    layer: &str,
    run_no: &str,
    deselect: &[String],
) -> RunOutput {
    let failed = |problem: String| RunOutput {
        env_problem: Some(problem),
        ..Default::default()
    };
    let results = ctx.session.root.join("results");
    let known = match &project.framework {
        Ok(known) => *known,
        Err(unknown) => return failed(unknown.to_string()),
    };
    let runner = crate::family::runner_for(known);
    let name = format!("executor-{layer}");
    let (_, sandbox) =
        match layer_sandbox(ctx, runner.as_ref(), &project.tools, layer, &name, &results) {
            Ok(s) => s,
            Err(e) => return failed(e.to_string()),
        };
    let timeout = match time_left(ctx.deadline) {
        Ok(t) => t,
        Err(e) => return failed(e.to_string()),
    };
    runner.run(&RunSpec {
        repo: ctx.repo,
        session: &ctx.session.root,
        layer,
        test_dir: ctx.session.root.join("tests").join(layer),
        tools: &project.tools,
        results,
        run_no: run_no.to_string(),
        timeout,
        deselect,
        sandbox: sandbox.as_ref(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_numbers_are_claimed_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let (a, _) = reserve_run(dir.path()).unwrap();
        let (b, _) = reserve_run(dir.path()).unwrap();
        assert_eq!((a, b), (1, 2));
    }
}
