//! Executor: runs a layer's tests for real with the detected framework, keeps the raw reports,
//! classifies every failure (test_defect / code_defect / env_issue) with evidence, re-runs failures
//! to tell flaky tests apart, quarantines broken tests in up to 3 repair iterations, and reports
//! pass rate and line coverage of the files in scope for the GC gate.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};

use super::util::{sandbox_for, time_left, to_map};
use super::RoleContext;
use crate::tasks::Outcome;
use crate::testing::classify::{classify, Classification, Criticality, Verdict};
use crate::testing::detect::{session_framework, strategist_outcome};
use crate::testing::effects::{self, Effect};
use crate::testing::framework::{self, SessionFramework};
use crate::testing::load_error::classify_load_error;
use crate::testing::report::{CoverageReport, TestCase, TestStatus, TestTotals};
use crate::testing::runner::{RunOutput, RunSpec, Runner};
use crate::testing::toolchain::{self, Toolchain};
use crate::util::{atomic_write_json, mkdirs, now_ts};

/// Repair iterations inside one task (the seed's bound).
const MAX_REPAIRS: usize = 3;
/// Re-runs of a failing test before it counts as a real failure.
const FLAKY_RERUNS: usize = 3;

/// A test taken out of the layer, and why.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Quarantined {
    /// The runner's selector for it (pytest node id, test name, or the file for load errors).
    id: String,
    /// A whole file moved out of the layer (it did not load), rather than one deselected test.
    #[serde(default)]
    file: bool,
    reason: String,
    task_id: String,
    /// Set when the test is unsafe (an effect outside its tmp_path, or a sandbox denial): what it
    /// did. Such a test is never kept by a revision round, and `apply` refuses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unsafe_effect: Option<String>,
}

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
    let (n, run_path) = match reserve_run(&results) {
        Ok(r) => r,
        Err(e) => return Outcome::failed(e),
    };
    let test_dir = ctx.session.root.join("tests").join(layer);
    let runner = match &session_fw {
        Ok(known) => known.runner(),
        Err(unknown) => return empty_run(ctx, layer, framework, &run_path, unknown.to_string()),
    };
    let runner = runner.as_ref();
    let read = runner.read_roots(&tools, ctx.repo);
    // Its own copy of the project (and cargo's target folder) and the raw reports; not the rest
    // of the workspace, where other roles' copies and helpers live.
    let workspace = ctx.session.root.join("workspace");
    let mut writable = vec![results.clone()];
    writable.extend(runner.workspace_dirs(&workspace, layer));
    for dir in &writable {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return Outcome::failed(format!("cannot create {}: {e}", dir.display()));
        }
    }
    let sandbox = match sandbox_for(ctx, &format!("executor-{layer}"), read, &writable) {
        Ok(s) => s,
        Err(e) => return Outcome::failed(e),
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
        Err(e) => return Outcome::failed(e),
    };
    let mut repairs: Vec<Value> = Vec::new();
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
    let (out, verdicts) = loop {
        iteration += 1;
        let timeout = match time_left(ctx.deadline) {
            Ok(t) => t,
            Err(e) => return Outcome::failed(e),
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
        let out = runner.run(&spec);
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
                repairs.push(json!({"iteration": iteration, "action": "quarantined file", "file": le.file, "reason": reason}));
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
            verdicts.insert(case.id.clone(), verdict_for(case, is_test, sandbox_ctx));
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
            flaky.retain(|id| out.cases.iter().any(|c| &c.id == id));
            let mut out = out;
            out.load_errors = std::mem::take(&mut load_errors);
            break (out, verdicts);
        }
    };
    if let Err(e) = save_quarantine(&quarantine_dir, &quarantined) {
        return Outcome::failed(e);
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
        },
    )
}

/// What a rerun keeps from the run it repeats: the tests that passed there (as the runner's
/// deselect ids) and that run's coverage, which the failed tests alone cannot measure.
struct Carried {
    from: String,
    passed: Vec<String>,
    coverage: Option<f64>,
}

impl Carried {
    fn load(
        ctx: &RoleContext,
        runner: &dyn Runner,
        test_dir: &Path,
    ) -> Result<Option<Carried>, String> {
        let Some(from) = ctx.task.meta.get("rerun_of").and_then(Value::as_str) else {
            return Ok(None);
        };
        let graph = ctx.session.load_tasks().map_err(|e| e.to_string())?;
        let outcome = graph
            .get(from)
            .and_then(|t| t.outcome.clone())
            .ok_or_else(|| format!("rerun of {from}: it has no recorded outcome"))?;
        let run = outcome
            .data
            .get("run")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("rerun of {from}: no run record named in its outcome"))?;
        let record: Value = crate::util::read_json(&ctx.session.root.join(run))
            .map_err(|e| format!("rerun of {from}: {e}"))?;
        let tests: Vec<&Value> = record["tests"].as_array().into_iter().flatten().collect();
        let not_passed: Vec<&str> = tests
            .iter()
            .filter(|t| t["status"] != "passed" && t["status"] != "skipped")
            .filter_map(|t| t["id"].as_str())
            .collect();
        let passed = tests
            .iter()
            .filter(|t| t["status"] == "passed")
            // libtest's --skip matches substrings: a pass whose name is inside a failed test's
            // name would skip that one too, so it runs again instead.
            .filter(|t| {
                !runner.deselect_matches_substrings()
                    || t["id"]
                        .as_str()
                        .is_some_and(|id| !not_passed.iter().any(|f| f.contains(id)))
            })
            .filter_map(|t| {
                let id = t["id"].as_str()?;
                let (classname, name) = match id.rsplit_once("::") {
                    Some((c, n)) => (Some(c.to_string()), n.to_string()),
                    None => (None, id.to_string()),
                };
                let case = TestCase {
                    id: id.to_string(),
                    name,
                    classname,
                    file: t["file"].as_str().map(str::to_string),
                    line: None,
                    status: TestStatus::Passed,
                    duration_s: None,
                    message: None,
                    detail: None,
                };
                Some(runner.selector(test_dir, &case))
            })
            .collect();
        Ok(Some(Carried {
            from: from.to_string(),
            passed,
            coverage: outcome.coverage,
        }))
    }
}

struct Finish<'a> {
    layer: &'a str,
    framework: &'a str,
    n: usize,
    run_path: &'a Path,
    out: RunOutput,
    verdicts: BTreeMap<String, Verdict>,
    flaky: Vec<String>,
    quarantined: Vec<Quarantined>,
    repairs: Vec<Value>,
    started_at: String,
    seconds: f64,
    carried: Option<Carried>,
}

/// Writes run-NNN.json and coverage-NNN.json and builds the outcome.
fn finish(ctx: &RoleContext, f: Finish) -> Outcome {
    let results = ctx.session.root.join("results");
    // Flaky tests (failed, then passed on a re-run) are neither failures nor passes: they are
    // reported on their own, since a flake can also be an order dependence in the code.
    let cases: Vec<TestCase> = f
        .out
        .cases
        .iter()
        .filter(|c| !f.flaky.contains(&c.id))
        // A runner that still reports deselected tests (node) must not count a kept pass twice.
        .filter(|c| !f.carried.as_ref().is_some_and(|k| k.passed.contains(&c.id)))
        .cloned()
        .collect();
    let mut totals = TestTotals::of(&cases);
    if let Some(c) = &f.carried {
        // The layer's result: the earlier passes count as they were.
        totals.total += c.passed.len();
        totals.passed += c.passed.len();
    }
    let pass_rate = totals.pass_rate().unwrap_or(0.0);
    let scope = scope_files(ctx);
    let in_scope = |p: &str| scope.is_empty() || scope.iter().any(|s| s == p);
    let mut f = f;
    // Files outside the project in a coverage report are left out, and named.
    let outside = f
        .out
        .coverage
        .as_mut()
        .map(|c| c.drop_outside())
        .unwrap_or_default();
    let unmeasured = match f.out.coverage.as_mut() {
        Some(report) => add_unmeasured(report, &scope, ctx.repo),
        None => Vec::new(),
    };
    let measured = f
        .out
        .coverage
        .as_ref()
        .and_then(|c| c.line_percent(in_scope));
    // A rerun's own coverage comes from the failed tests alone: the layer keeps the better figure.
    let coverage = match (&f.carried, measured) {
        (Some(c), Some(m)) => Some(c.coverage.map_or(m, |k| k.max(m))),
        (Some(c), None) => c.coverage,
        (None, m) => m,
    };
    let branch = f
        .out
        .coverage
        .as_ref()
        .and_then(|c| c.branch_percent(in_scope));
    let cov_rel = format!("results/coverage-{:03}.json", f.n);
    if let Some(report) = &f.out.coverage {
        let detail = coverage_detail(report, &scope);
        if let Err(e) =
            atomic_write_json(&results.join(format!("coverage-{:03}.json", f.n)), &detail)
        {
            return Outcome::failed(e.to_string());
        }
    }
    let tests: Vec<Value> = f
        .out
        .cases
        .iter()
        .map(|c| test_record(c, f.verdicts.get(&c.id), f.flaky.contains(&c.id)))
        .collect();
    let mut patterns: BTreeMap<String, usize> = BTreeMap::new();
    for v in f.verdicts.values() {
        *patterns
            .entry(format!(
                "{}:{}",
                serde_json::to_value(v.classification)
                    .unwrap_or_default()
                    .as_str()
                    .unwrap_or(""),
                v.error
            ))
            .or_default() += 1;
    }
    let record = json!({
        "task_id": ctx.task.id, "layer": f.layer, "framework": f.framework,
        "command": f.out.command, "exit_code": f.out.exit_code, "duration_s": f.seconds,
        "started_at": f.started_at, "finished_at": now_ts(),
        "total": totals.total, "passed": totals.passed, "failed": totals.failed, "errors": totals.errors,
        "skipped": totals.skipped, "flaky": f.flaky, "pass_rate": pass_rate,
        "coverage": coverage, "branch_coverage": branch, "coverage_scope": if scope.is_empty() { json!("whole project") } else { json!(scope) },
        "coverage_problem": f.out.coverage_problem, "unmeasured_files": unmeasured,
        "coverage_outside_repo": outside,
        "coverage_file": f.out.coverage.as_ref().map(|_| cov_rel.clone()),
        "tests": tests, "load_errors": f.out.load_errors, "quarantined": f.quarantined, "repairs": f.repairs,
        "defect_patterns": patterns, "reports": f.out.reports, "output_tail": f.out.output_tail,
    });
    if let Err(e) = atomic_write_json(f.run_path, &record) {
        return Outcome::failed(e.to_string());
    }
    let cov_text = coverage.map_or_else(|| "n/a".to_string(), |c| format!("{c:.1}%"));
    let defects = f
        .verdicts
        .values()
        .filter(|v| v.classification == Classification::CodeDefect)
        .count();
    let mut out = Outcome::completed(format!(
        "{}: {} tests, {} passed, {} failed, {} errors, {} skipped, {} flaky; {} code defect(s); pass {:.1}% cov {cov_text}",
        f.layer, totals.total, totals.passed, totals.failed, totals.errors, totals.skipped, f.flaky.len(), defects, pass_rate * 100.0
    ));
    out.pass_rate = Some(pass_rate);
    if let Some(c) = &f.carried {
        out.summary = format!(
            "re-ran the tests that failed in {}, kept its {} passes; {}",
            c.from,
            c.passed.len(),
            out.summary
        );
        out.data.insert("rerun_of".into(), json!(c.from));
        out.data
            .insert("carried_passes".into(), json!(c.passed.len()));
    }
    out.coverage = coverage;
    if coverage.is_none() {
        out.data.insert(
            "coverage_warning".into(),
            json!(f
                .out
                .coverage_problem
                .clone()
                .unwrap_or_else(|| "no coverage data".into())),
        );
    }
    // The seed's executor state: what worked (when most did) and one point of the coverage history.
    // What `rerun` names in the layer's next run (bounded: the full list is in the run record).
    let failed_ids: Vec<&str> = f
        .out
        .cases
        .iter()
        .filter(|c| matches!(c.status, TestStatus::Failed | TestStatus::Error))
        .filter(|c| !f.flaky.contains(&c.id))
        .map(|c| c.id.as_str())
        .take(100)
        .collect();
    let effective: Vec<&str> = if pass_rate > 0.8 {
        effective_files(&cases)
    } else {
        Vec::new()
    };
    out.data.extend(to_map(json!({
        "effective_patterns": effective,
        "coverage_history_entry": {"task_id": ctx.task.id, "layer": f.layer, "pass_rate": pass_rate, "coverage": coverage},
        "run": format!("results/run-{:03}.json", f.n), "total": totals.total, "passed": totals.passed,
        "failed": totals.failed, "errors": totals.errors, "flaky": f.flaky, "branch_coverage": branch,
        "defect_patterns": patterns, "quarantined": f.quarantined.len(),
        "failed_tests": failed_ids,
    })));
    out.artifacts = std::iter::once(format!("results/run-{:03}.json", f.n))
        .chain(f.out.reports.iter().cloned())
        .collect();
    if f.out.coverage.is_some() {
        out.artifacts.push(cov_rel);
    }
    out
}

/// Files in scope that the coverage report does not list (never imported or loaded) count as 0 %
/// of their code lines, so an untested file cannot pass the gate unseen. Returns their paths.
fn add_unmeasured(report: &mut CoverageReport, scope: &[String], repo: &Path) -> Vec<String> {
    let mut added = Vec::new();
    for path in scope {
        if report.files.iter().any(|f| &f.path == path) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(repo.join(path)) else {
            continue;
        };
        let lines: Vec<u32> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| {
                let t = l.trim();
                !t.is_empty() && !t.starts_with('#') && !t.starts_with("//")
            })
            .map(|(i, _)| i as u32 + 1)
            .collect();
        report.files.push(crate::testing::report::FileCoverage {
            path: path.clone(),
            lines_total: lines.len(),
            lines_covered: 0,
            missing_lines: lines,
            branches_total: 0,
            branches_covered: 0,
        });
        added.push(path.clone());
    }
    added
}

/// Test files all of whose tests passed.
fn effective_files(cases: &[TestCase]) -> Vec<&str> {
    let mut files: Vec<&str> = cases.iter().filter_map(|c| c.file.as_deref()).collect();
    files.sort();
    files.dedup();
    files.retain(|f| {
        cases
            .iter()
            .filter(|c| c.file.as_deref() == Some(f))
            .all(|c| c.status == TestStatus::Passed)
    });
    files
}

fn test_record(c: &TestCase, v: Option<&Verdict>, flaky: bool) -> Value {
    json!({
        "id": c.id, "file": c.file, "status": if flaky { "flaky" } else { status_word(c.status) },
        "duration_s": c.duration_s, "message": c.message,
        "classification": v.map(|v| v.classification), "criticality": v.map(|v| v.criticality),
        "evidence": v.map(|v| json!({"location": v.location, "error": v.error, "excerpt": v.excerpt, "reason": v.reason})),
    })
}

fn status_word(s: TestStatus) -> &'static str {
    match s {
        TestStatus::Passed => "passed",
        TestStatus::Failed => "failed",
        TestStatus::Error => "error",
        TestStatus::Skipped => "skipped",
    }
}

/// Per-file coverage of the files in scope (all files when the scope is empty), with missing lines.
fn coverage_detail(report: &CoverageReport, scope: &[String]) -> Value {
    let files: Vec<Value> = report
        .files
        .iter()
        .filter(|f| scope.is_empty() || scope.contains(&f.path))
        .map(|f| {
            json!({"path": f.path, "lines_total": f.lines_total, "lines_covered": f.lines_covered,
            "line_percent": f.line_percent(), "missing_lines": f.missing_lines,
            "branches_total": f.branches_total, "branches_covered": f.branches_covered})
        })
        .collect();
    json!({"format": report.format, "scope": scope, "files": files})
}

/// The strategist's priority files: coverage is judged on them (whole project when there are none).
fn scope_files(ctx: &RoleContext) -> Vec<String> {
    strategist_outcome(ctx.session)
        .and_then(|o| o.data.get("priority_files").cloned())
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

/// The toolchain the strategist probed, else a fresh probe.
fn recorded_toolchain(ctx: &RoleContext, framework: &SessionFramework) -> Toolchain {
    strategist_outcome(ctx.session)
        .and_then(|o| o.data.get("toolchain").cloned())
        .and_then(|v| serde_json::from_value::<Toolchain>(v).ok())
        .filter(|t| t.framework == framework::name_of(framework))
        .unwrap_or_else(|| toolchain::detect(ctx.repo, framework.as_ref().ok().copied()))
}

/// Takes a test (or a whole file) out of the layer and logs the repair; false when it was out
/// already.
fn take_out(
    q: Quarantined,
    iteration: usize,
    quarantined: &mut Vec<Quarantined>,
    repairs: &mut Vec<Value>,
) -> bool {
    if quarantined.iter().any(|k| k.id == q.id) {
        return false;
    }
    let action = if q.file {
        "quarantined file"
    } else {
        "quarantined test"
    };
    repairs
        .push(json!({"iteration": iteration, "action": action, "test": q.id, "reason": q.reason}));
    quarantined.push(q);
    true
}

/// The verdict on a failing test: a sandbox denial (when a sandbox ran it: its writable folders
/// and whether the network was off) before anything else, else the classifier's.
fn verdict_for(
    case: &TestCase,
    is_test: impl Fn(&str) -> bool,
    sandbox: Option<(&[PathBuf], bool)>,
) -> Verdict {
    let verdict = classify(case, is_test);
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

/// The tests (or, for what importing a file did, the files) with effects outside their own
/// temporary folders: (selector, whole file, what they did).
fn unsafe_tests(found: &[Effect], test_dir: &Path) -> Vec<(String, bool, String)> {
    let mut out: Vec<(String, bool, String)> = Vec::new();
    for e in found {
        let file = !e.test.contains("::");
        if file && !test_dir.join(effects::file_of(&e.test)).is_file() {
            continue; // the session itself, not a file of the layer
        }
        match out.iter_mut().find(|(id, _, _)| id == &e.test) {
            Some(entry) => {
                if entry.2.matches("; ").count() < 2 {
                    entry.2.push_str("; ");
                    entry.2.push_str(&e.effect);
                }
            }
            None => out.push((e.test.clone(), file, e.effect.clone())),
        }
    }
    out
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

/// Test code, as opposed to code under test, in a traceback path.
fn is_test_path(path: &str, layer: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.contains(layer)
        || path.contains("/tests/")
        || path.starts_with("tests/")
        || path.contains(&format!("{}/", crate::testing::node::TESTS_DIR))
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

/// Moves a test file out of the layer into the quarantine folder.
fn move_out(test_dir: &Path, quarantine: &Path, file: &str) -> Result<(), String> {
    let from = test_dir.join(file);
    let to = quarantine.join(file);
    if let Some(parent) = to.parent() {
        mkdirs(parent).map_err(|e| e.to_string())?;
    }
    std::fs::rename(&from, &to).map_err(|e| format!("cannot quarantine {}: {e}", from.display()))
}

fn load_quarantine(dir: &Path) -> Vec<Quarantined> {
    crate::util::read_json(&dir.join("quarantine.json")).unwrap_or_default()
}

fn save_quarantine(dir: &Path, items: &[Quarantined]) -> Result<(), String> {
    if items.is_empty() {
        return Ok(());
    }
    mkdirs(dir).map_err(|e| e.to_string())?;
    atomic_write_json(&dir.join("quarantine.json"), items).map_err(|e| e.to_string())
}

/// The runner could not run (missing tool, timeout): an env_issue with the exact fix, posted as a
/// blocker; the task fails so the coordinator's retry and the user both see it.
fn env_blocker(
    ctx: &RoleContext,
    layer: &str,
    framework: &str,
    run_path: &Path,
    tools: &Toolchain,
    problem: &str,
    timed_out: bool,
) -> Outcome {
    let record = json!({
        "task_id": ctx.task.id, "layer": layer, "framework": framework, "total": 0, "pass_rate": null,
        "classification": "env_issue", "timed_out": timed_out, "problem": problem,
        "install": tools.install_hint, "finished_at": now_ts(),
    });
    let _ = atomic_write_json(run_path, &record);
    let mut out = Outcome::failed(format!("env_issue: {problem}"));
    out.data = to_map(
        json!({"blocker": true, "classification": "env_issue", "install": tools.install_hint, "timed_out": timed_out}),
    );
    out
}

/// A run with nothing executed is still recorded, so the analyst sees every attempt.
fn empty_run(
    ctx: &RoleContext,
    layer: &str,
    framework: &str,
    run_path: &Path,
    summary: String,
) -> Outcome {
    let record = json!({
        "task_id": ctx.task.id, "layer": layer, "framework": framework, "command": null,
        "exit_code": null, "total": 0, "passed": 0, "failed": 0, "skipped": 0, "pass_rate": 0.0,
        "coverage": null, "tests": [], "note": summary, "finished_at": now_ts(),
    });
    if let Err(e) = atomic_write_json(run_path, &record) {
        return Outcome::failed(e.to_string());
    }
    let mut out = Outcome::completed(summary);
    out.pass_rate = Some(0.0);
    out.data = to_map(record);
    out.data.insert("tests".into(), json!(0));
    out.artifacts = vec![run_path
        .file_name()
        .map(|n| format!("results/{}", n.to_string_lossy()))
        .unwrap_or_default()];
    out
}

/// Claims the next free run number by creating run-NNN.json exclusively (parallel executors
/// share the folder), starting after the runs already recorded.
fn reserve_run(results: &Path) -> Result<(usize, PathBuf), String> {
    let existing = std::fs::read_dir(results)
        .map(|rd| {
            rd.flatten()
                .filter(|e| is_run_file(&e.file_name().to_string_lossy()))
                .count()
        })
        .unwrap_or(0);
    for n in existing + 1..existing + 1000 {
        let path = results.join(format!("run-{n:03}.json"));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(_) => return Ok((n, path)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
        }
    }
    Err(format!("no free run number in {}", results.display()))
}

pub(crate) fn is_run_file(name: &str) -> bool {
    name.starts_with("run-") && name.ends_with(".json")
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
    repairs: &mut Vec<Value>,
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
        match super::agent_gen::repair_file(ctx, layer, &chain, &path, &failures) {
            Ok((backend, content)) => match crate::util::atomic_write(&path, content.as_bytes()) {
                Ok(()) => {
                    repairs.push(json!({"iteration": iteration, "action": "repaired by agent", "file": file, "backend": backend}));
                    repaired.insert(file);
                }
                Err(e) => repairs.push(json!({"iteration": iteration, "action": "agent repair failed", "file": file, "reason": e.to_string()})),
            },
            Err(e) => repairs.push(json!({"iteration": iteration, "action": "agent repair failed", "file": file, "reason": e})),
        }
    }
    repaired
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
