//! Executor: runs a layer's tests for real with the detected framework, keeps the raw reports,
//! classifies every failure (test_defect / code_defect / env_issue) with evidence, re-runs failures
//! to tell flaky tests apart, quarantines broken tests in up to 3 repair iterations, and reports
//! pass rate and line coverage of the files in scope for the GC gate.

mod carried;
mod quarantine;
mod record;
pub mod watch;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::error::RoleError;
use super::util::{sandbox_for, time_left};
use super::RoleContext;
use crate::artifacts::{Quarantined, Repair, RepairAction};
use crate::session::framework::{session_framework, strategist_outcome};
use crate::tasks::Outcome;
use crate::testing::classify::{classify, Classification, Criticality, Verdict};
use crate::testing::effects;
use crate::testing::framework::{self, SessionFramework};
use crate::testing::load_error::classify_load_error;
use crate::testing::report::{TestCase, TestStatus};
use crate::testing::runner::{RunOutput, RunSpec, Runner};
use crate::testing::toolchain::{self, Toolchain};
use crate::util::{mkdirs, now_ts};
use carried::Carried;
use quarantine::{load_quarantine, move_out, save_quarantine, take_out, unsafe_tests};
pub use record::reserve_run;
use record::{empty_run, env_blocker, finish, Finish};

/// Repair iterations inside one task (the seed's bound).
const MAX_REPAIRS: usize = 3;
/// Re-runs of a failing test before it counts as a real failure.
const FLAKY_RERUNS: usize = 3;

pub fn run(ctx: &RoleContext) -> Outcome {
    let Some(layer) = ctx.task.layer.as_deref() else {
        return Outcome::failed(format!(
            "task {} has no layer: the executor needs one",
            ctx.task.id
        ));
    };
    let results = ctx.session.root.join("results");
    if let Err(e) = mkdirs(&results) {
        return Outcome::failed(e.to_string());
    }
    let session_fw = session_framework(ctx.session, ctx.repo);
    let framework = framework::name_of(&session_fw);
    let tools = recorded_toolchain(ctx, &session_fw);
    (ctx.progress)(
        "context_loaded",
        Some(10.0),
        Some(format!("framework {framework}, layer {layer}")),
    );
    let (n, run_path) = match run_number(ctx, &results) {
        Ok(r) => r,
        Err(e) => return Outcome::failed(e.to_string()),
    };
    let test_dir = ctx.session.root.join("tests").join(layer);
    let runner = match &session_fw {
        Ok(known) => crate::family::runner_for(*known),
        Err(unknown) => return empty_run(ctx, layer, framework, &run_path, unknown.to_string()),
    };
    let runner = runner.as_ref();
    let (writable, sandbox) = match layer_sandbox(ctx, runner, &tools, layer, &results) {
        Ok(s) => s,
        Err(e) => return Outcome::failed(e.to_string()),
    };
    if !runner.has_tests(&test_dir) {
        return empty_run(
            ctx,
            layer,
            framework,
            &run_path,
            format!("no tests in {layer}"),
        );
    }
    let quarantine_dir = ctx
        .session
        .root
        .join("tests")
        .join("quarantine")
        .join(layer);
    let mut quarantined: Vec<Quarantined> = load_quarantine(&quarantine_dir);
    // `rerun`: only the tests that failed in the earlier run run again; its passes are kept.
    let carried = match Carried::load(ctx, runner, &test_dir) {
        Ok(c) => c,
        Err(e) => return Outcome::failed(e.to_string()),
    };
    let mut repairs: Vec<Repair> = Vec::new();
    // What a sandbox denial looks like in this run: writes outside `writable`, the network off.
    let sandbox_ctx = sandbox
        .as_ref()
        .map(|_| (writable.as_slice(), !ctx.sandbox.allow_network));
    let started_at = now_ts();
    let clock = Instant::now();
    let mut iteration = 0;
    // Flaky across iterations: a test that failed once and passed on a re-run stays flaky.
    let mut flaky: Vec<String> = Vec::new();
    let mut judged: BTreeMap<String, bool> = BTreeMap::new();
    // Files found unloadable in any iteration (they are gone from the later ones).
    let mut load_errors = Vec::new();
    let mut watched: Option<crate::artifacts::WatchRecord>;
    let (out, verdicts) = loop {
        iteration += 1;
        let timeout = match time_left(ctx.deadline) {
            Ok(t) => t,
            Err(e) => return Outcome::failed(e.to_string()),
        };
        let mut deselect: Vec<String> = quarantined
            .iter()
            .filter(|q| !q.file)
            .map(|q| q.id.clone())
            .collect();
        if let Some(c) = &carried {
            deselect.extend(c.passed.iter().cloned());
        }
        let spec = RunSpec {
            repo: ctx.repo,
            session: &ctx.session.root,
            layer,
            test_dir: test_dir.clone(),
            tools: &tools,
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
        let out = run_layer(ctx, runner, &spec);
        if let Some(problem) = &out.env_problem {
            return env_blocker(
                ctx,
                layer,
                framework,
                &run_path,
                &tools,
                problem,
                out.timed_out,
            );
        }
        // Files that do not load leave the layer, classified like failures: whose fault it is
        // (the test's, the code's, the machine's) and what to do about it.
        let mut changed = false;
        let mut out = out;
        for le in out.load_errors.iter_mut() {
            let v = classify_load_error(le, ctx.repo, |p| is_test_path(p, layer));
            le.verdict = Some(v);
        }
        load_errors.extend(out.load_errors.iter().cloned());
        for le in &out.load_errors {
            let reason = match &le.verdict {
                Some(v) => format!(
                    "does not load ({}): {}",
                    v.verdict.classification.as_str(),
                    v.verdict.reason
                ),
                None => format!("does not load: {}", error_gist(&le.error)),
            };
            if move_out(&test_dir, &quarantine_dir, &le.file).is_ok() {
                let mut step = Repair::on_file(iteration, RepairAction::QuarantinedFile, &le.file);
                step.reason = Some(reason.clone());
                repairs.push(step);
                quarantined.push(Quarantined {
                    id: le.file.clone(),
                    file: true,
                    reason,
                    task_id: ctx.task.id.clone(),
                    unsafe_effect: None,
                });
                changed = true;
            }
        }
        // Tests that changed something outside their own temporary folders leave the layer
        // whatever their outcome: after `apply` they would do it unsandboxed, to the project.
        let mut found_unsafe = false;
        for (id, file, what) in unsafe_tests(&out.effects, &test_dir) {
            if quarantined.iter().any(|q| q.id == id)
                || (file && move_out(&test_dir, &quarantine_dir, &id).is_err())
            {
                continue;
            }
            let q = Quarantined {
                id,
                file,
                reason: format!("unsafe: {what}"),
                task_id: ctx.task.id.clone(),
                unsafe_effect: Some(what),
            };
            found_unsafe |= take_out(q, iteration, &mut quarantined, &mut repairs);
        }
        let is_test = |p: &str| is_test_path(p, layer);
        let mut verdicts: BTreeMap<String, Verdict> = BTreeMap::new();
        for case in out
            .cases
            .iter()
            .filter(|c| matches!(c.status, TestStatus::Failed | TestStatus::Error))
        {
            // Each failing test is re-run once per task, not in every repair iteration.
            let is_flaky = *judged
                .entry(case.id.clone())
                .or_insert_with(|| passes_on_rerun(runner, &spec, case, ctx.deadline));
            if is_flaky {
                if !flaky.contains(&case.id) {
                    flaky.push(case.id.clone());
                }
                continue;
            }
            let observed = is_observation(&test_dir, case);
            verdicts.insert(
                case.id.clone(),
                verdict_for(case, is_test, sandbox_ctx, observed),
            );
        }
        // A sandbox denial is the test reaching outside: unsafe, like an audited effect.
        for case in &out.cases {
            let Some(v) = verdicts.get(&case.id) else {
                continue;
            };
            if v.classification != Classification::SandboxDenied {
                continue;
            }
            let q = Quarantined {
                id: runner.selector(&test_dir, case),
                file: false,
                reason: format!("unsafe: {}", v.reason),
                task_id: ctx.task.id.clone(),
                unsafe_effect: Some(v.reason.clone()),
            };
            found_unsafe |= take_out(q, iteration, &mut quarantined, &mut repairs);
        }
        // Built-in repair: tests that are themselves wrong leave the layer so the pass rate
        // reflects the tests that are kept; a later GC round regenerates them.
        if iteration < MAX_REPAIRS {
            // With agent backends for the executor, a file whose tests are wrong goes to them
            // first; a repaired file replaces it and the layer runs again.
            let repaired = agent_repairs(
                ctx,
                layer,
                runner,
                &test_dir,
                &out.cases,
                &verdicts,
                iteration,
                &mut repairs,
            );
            changed |= !repaired.is_empty();
            for case in &out.cases {
                let Some(v) = verdicts.get(&case.id) else {
                    continue;
                };
                if v.classification != Classification::TestDefect {
                    continue;
                }
                if case.file.as_ref().is_some_and(|f| repaired.contains(f)) {
                    continue;
                }
                let q = Quarantined {
                    id: runner.selector(&test_dir, case),
                    file: false,
                    reason: format!(
                        "test_defect: {} ({})",
                        v.reason,
                        v.location.clone().unwrap_or_default()
                    ),
                    task_id: ctx.task.id.clone(),
                    unsafe_effect: None,
                };
                changed |= take_out(q, iteration, &mut quarantined, &mut repairs);
            }
        }
        // Unsafe tests are taken out even after the last repair iteration (they only ever
        // leave, so this ends): the layer's figures must never count them.
        if !found_unsafe && (!changed || iteration >= MAX_REPAIRS) {
            // The second line of defence, on the tests about to be kept: what they change
            // with every write real (diverted), whoever makes it. What it finds leaves, and
            // the layer runs again without it.
            let check = watch::check(ctx, runner, &spec, &out, &writable, &flaky);
            watched = Some(check.record);
            let mut found = false;
            for f in check.findings {
                if f.whole_file && move_out(&test_dir, &quarantine_dir, &f.id).is_err() {
                    continue;
                }
                let q = Quarantined {
                    id: f.id,
                    file: f.whole_file,
                    reason: format!("unsafe: {}", f.what),
                    task_id: ctx.task.id.clone(),
                    unsafe_effect: Some(f.what),
                };
                found |= take_out(q, iteration, &mut quarantined, &mut repairs);
            }
            if found {
                continue;
            }
            flaky.retain(|id| out.cases.iter().any(|c| &c.id == id));
            let mut out = out;
            out.load_errors = std::mem::take(&mut load_errors);
            break (out, verdicts);
        }
    };
    if let Err(e) = save_quarantine(&quarantine_dir, &quarantined) {
        return Outcome::failed(e.to_string());
    }
    (ctx.progress)("tests_done", Some(85.0), None);
    finish(
        ctx,
        Finish {
            layer,
            framework,
            n,
            run_path: &run_path,
            out,
            verdicts,
            flaky,
            quarantined,
            repairs,
            started_at,
            seconds: clock.elapsed().as_secs_f64(),
            carried,
            watched,
        },
    )
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

/// The folders a layer run writes (its copy of the project, cargo's target folder, the raw
/// reports; not the rest of the workspace, where other roles' copies and helpers live), made,
/// and the sandbox that lets it write there only.
fn layer_sandbox(
    ctx: &RoleContext,
    runner: &dyn Runner,
    tools: &Toolchain,
    layer: &str,
    results: &Path,
) -> crate::team::error::Result<(Vec<PathBuf>, Option<crate::sandbox::Sandbox>)> {
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
    let sandbox = sandbox_for(ctx, &format!("executor-{layer}"), read, &writable)?;
    Ok((writable, sandbox))
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
pub fn run_shard(ctx: &RoleContext, layer: &str, run_no: &str, deselect: &[String]) -> RunOutput {
    let failed = |problem: String| RunOutput {
        env_problem: Some(problem),
        ..Default::default()
    };
    let results = ctx.session.root.join("results");
    let session_fw = session_framework(ctx.session, ctx.repo);
    let known = match &session_fw {
        Ok(known) => *known,
        Err(unknown) => return failed(unknown.to_string()),
    };
    let tools = recorded_toolchain(ctx, &session_fw);
    let runner = crate::family::runner_for(known);
    let (_, sandbox) = match layer_sandbox(ctx, runner.as_ref(), &tools, layer, &results) {
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
        tools: &tools,
        results,
        run_no: run_no.to_string(),
        timeout,
        deselect,
        sandbox: sandbox.as_ref(),
    })
}

/// The toolchain the strategist probed, else a fresh probe.
fn recorded_toolchain(ctx: &RoleContext, framework: &SessionFramework) -> Toolchain {
    strategist_outcome(ctx.session)
        .and_then(|o| o.data.get(crate::tasks::data::TOOLCHAIN).cloned())
        .and_then(|v| serde_json::from_value::<Toolchain>(v).ok())
        .filter(|t| t.framework == framework::name_of(framework))
        .unwrap_or_else(|| toolchain::detect(ctx.repo, framework.as_ref().ok().copied()))
}

/// The verdict on a failing test: a sandbox denial (when a sandbox ran it: its writable folders
/// and whether the network was off) before anything else, else the classifier's. A test that
/// pins what the built-in search observed (`observed`) and fails is not the code's fault: the
/// same code did something else when it was written, so the observation does not hold.
fn verdict_for(
    case: &TestCase,
    is_test: impl Fn(&str) -> bool,
    sandbox: Option<(&[PathBuf], bool)>,
    observed: bool,
) -> Verdict {
    let mut verdict = classify(case, is_test);
    if observed && verdict.classification == Classification::CodeDefect {
        verdict.classification = Classification::TestDefect;
        verdict.criticality = Criticality::Low;
        verdict.reason = format!(
            "what the search observed when it wrote this test did not hold when it ran again \
             ({}): the test is unstable or depends on where it runs",
            verdict.error
        );
    }
    let text = format!(
        "{}\n{}",
        case.message.as_deref().unwrap_or(""),
        case.detail.as_deref().unwrap_or("")
    );
    match sandbox.and_then(|(w, net_off)| effects::sandbox_denial(&text, w, net_off)) {
        Some(denial) => Verdict {
            classification: Classification::SandboxDenied,
            criticality: Criticality::Low,
            reason: denial,
            ..verdict
        },
        None => verdict,
    }
}

/// Re-runs a failing test up to FLAKY_RERUNS times within the task's deadline.
fn passes_on_rerun(
    runner: &dyn Runner,
    spec: &RunSpec,
    case: &TestCase,
    deadline: Instant,
) -> bool {
    (0..FLAKY_RERUNS).any(|_| {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let spec = RunSpec {
            repo: spec.repo,
            session: spec.session,
            layer: spec.layer,
            test_dir: spec.test_dir.clone(),
            tools: spec.tools,
            results: spec.results.clone(),
            run_no: spec.run_no.clone(),
            timeout: left,
            deselect: spec.deselect,
            sandbox: spec.sandbox,
        };
        runner.rerun(&spec, case) == Some(TestStatus::Passed)
    })
}

/// Whether a failing test pins an observation of a built-in search (not a contract: a
/// docstring or JSDoc example, an annotation, a scenario's stated check), from its file's
/// header and its name. What the search saw may hold only where it ran (process.argv, the
/// terminal's width): failing elsewhere, the test is wrong, not the code.
fn is_observation(test_dir: &Path, case: &TestCase) -> bool {
    const CONTRACTS: [&str; 4] = ["_contract_", "_doctest", "@example ", " does not throw"];
    if case.name.starts_with("test_at_") || CONTRACTS.iter().any(|c| case.name.contains(c)) {
        return false;
    }
    let text = match case.file.as_deref() {
        Some(file) => {
            crate::util::read_regular(&test_dir.join(file.rsplit('/').next().unwrap_or(file)))
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        }
        // mocha's report names no file: the generated file that holds the test's title.
        None => generated_file_with(test_dir, &case.name),
    };
    let Some(text) = text else {
        return false;
    };
    let head: String = text.chars().take(400).collect();
    head.contains("generated by team-testing's built-in generator")
        || head.starts_with("// Generated by team-testing (")
}

/// The text of the file in `test_dir` whose source names the test `title` (as a string literal).
fn generated_file_with(test_dir: &Path, title: &str) -> Option<String> {
    let title = title.rsplit(" > ").next().unwrap_or(title);
    let quoted = serde_json::to_string(title).ok()?;
    std::fs::read_dir(test_dir)
        .ok()?
        .flatten()
        .filter_map(|e| crate::util::read_regular(&e.path()).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .find(|text| text.contains(&quoted))
}

/// Test code, as opposed to code under test, in a traceback path.
fn is_test_path(path: &str, layer: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.contains(layer)
        || path.contains("/tests/")
        || path.starts_with("tests/")
        || path.contains(&format!("{}/", crate::family::node::TESTS_DIR))
        || name.starts_with("test_")
        || name.ends_with("_test.py")
        || name.ends_with("_test.go")
        || name.contains(".test.")
}

/// The lines of a loader error that say what went wrong: pytest's `E ` lines, else the last ones.
fn error_gist(text: &str) -> String {
    let e_lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("E "))
        .take(4)
        .collect();
    if !e_lines.is_empty() {
        return e_lines
            .iter()
            .map(|l| l.trim_start_matches('E').trim())
            .collect::<Vec<_>>()
            .join(" / ");
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(4)..].join(" / ")
}

/// The executor's self-repair through its agent chain (Python layers): each file with test_defect
/// failures is sent with the evidence; the files a backend repaired (and that load and pass 5
/// runs) are rewritten. Returns the repaired files.
#[allow(clippy::too_many_arguments)]
fn agent_repairs(
    ctx: &RoleContext,
    layer: &str,
    runner: &dyn Runner,
    test_dir: &Path,
    cases: &[TestCase],
    verdicts: &BTreeMap<String, Verdict>,
    iteration: usize,
    repairs: &mut Vec<Repair>,
) -> BTreeSet<String> {
    let chain = ctx.agents.chain("executor");
    let mut repaired = BTreeSet::new();
    if !runner.agents_repair() || chain.iter().all(|b| b.is_builtin()) {
        return repaired;
    }
    let mut by_file: BTreeMap<String, String> = BTreeMap::new();
    for case in cases {
        let defect = verdicts
            .get(&case.id)
            .is_some_and(|v| v.classification == Classification::TestDefect);
        let Some(file) = case.file.as_ref().filter(|_| defect) else {
            continue;
        };
        let detail: String = case
            .detail
            .as_deref()
            .unwrap_or("")
            .chars()
            .take(1500)
            .collect();
        let entry = by_file.entry(file.clone()).or_default();
        entry.push_str(&format!(
            "- {}: {}\n{detail}\n",
            case.id,
            case.message.as_deref().unwrap_or("")
        ));
    }
    for (file, failures) in by_file {
        let path = test_dir.join(&file);
        match super::shared::agent_gen::repair_file(ctx, layer, &chain, &path, &failures) {
            Ok((backend, content)) => match crate::util::atomic_write(&path, content.as_bytes()) {
                Ok(()) => {
                    let mut step = Repair::on_file(iteration, RepairAction::RepairedByAgent, &file);
                    step.backend = Some(backend);
                    repairs.push(step);
                    repaired.insert(file);
                }
                Err(e) => repairs.push(repair_failed(iteration, &file, e.to_string())),
            },
            Err(e) => repairs.push(repair_failed(iteration, &file, e.to_string())),
        }
    }
    repaired
}

fn repair_failed(iteration: usize, file: &str, reason: String) -> Repair {
    let mut step = Repair::on_file(iteration, RepairAction::AgentRepairFailed, file);
    step.reason = Some(reason);
    step
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

    #[test]
    fn test_paths_are_told_from_code() {
        assert!(is_test_path("test_bug.py", "L1-unit"));
        assert!(is_test_path("/s/tests/L1-unit/x.py", "L1-unit"));
        assert!(!is_test_path("calc/ops.py", "L1-unit"));
    }
}
