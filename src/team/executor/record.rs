//! What a run leaves: `results/run-NNN.json` and `coverage-NNN.json`, and the outcome the
//! coordinator reads; also the records of runs that ran nothing or could not run.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::carried::Carried;
use crate::artifacts::{
    self, junit_file, junit_xml, CoverageRecord, CoverageScope, LoadErrorRecord, LoadVerdictRecord,
    Quarantined, Repair, RunRecord, TestRecord,
};
use crate::tasks::{data, GateFigures, Outcome};
use crate::team::error::RoleError;
use crate::team::shared::baseline;
use crate::team::util::to_map;
use crate::team::RoleContext;
use crate::testing::classify::{Classification, Criticality, Verdict};
use crate::testing::load_error::LoadError;
use crate::testing::report::{CoverageReport, TestCase, TestStatus, TestTotals};
use crate::testing::runner::RunOutput;
use crate::testing::toolchain::Toolchain;
use crate::util::{atomic_write_json, now_ts};

pub(super) struct Finish<'a> {
    pub layer: &'a str,
    pub framework: &'a str,
    /// The files whose coverage the gate judges (the whole project when empty).
    pub scope: &'a [String],
    pub n: usize,
    pub run_path: &'a Path,
    pub out: RunOutput,
    pub verdicts: BTreeMap<String, Verdict>,
    pub flaky: Vec<String>,
    pub quarantined: Vec<Quarantined>,
    pub repairs: Vec<Repair>,
    pub started_at: String,
    pub seconds: f64,
    pub carried: Option<Carried>,
    /// What the file-system watch made of the kept tests.
    pub watched: Option<crate::artifacts::WatchRecord>,
    /// The layer's files as the last iteration ran them.
    pub judged: crate::artifacts::FileDigests,
    /// The earlier run whose results the last iteration took instead of running.
    pub reused_from: Option<String>,
}

/// Writes run-NNN.json and coverage-NNN.json and builds the outcome.
pub(super) fn finish(ctx: &RoleContext, f: Finish) -> Outcome {
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
    // A test quarantined as wrong as written, which no repair fixed, is not forgotten: it stays
    // in the pass rate's denominator as a test that did not pass. (Unsafe tests and files that
    // did not load are reported on their own.)
    // This task's, and a rerun's source's (the layer still holds them): the record also holds
    // what earlier rounds took out of tests a revision has since dropped.
    let rerun_of = f.carried.as_ref().map(|c| c.from.as_str());
    let not_repaired = f
        .quarantined
        .iter()
        .filter(|q| q.task_id == ctx.task.id || Some(q.task_id.as_str()) == rerun_of)
        .filter(|q| !q.file && q.unsafe_effect.is_none())
        .count();
    let ran = totals.passed + totals.failed + totals.errors + not_repaired;
    let pass_rate = if ran > 0 {
        totals.passed as f64 / ran as f64
    } else {
        0.0
    };
    let scope = f.scope;
    // Entry points (`__main__.py`) are L3's: an L1 or L2 gate cannot reach them.
    let entry_points_out = !f.layer.starts_with("L3");
    let in_scope = |p: &str| {
        (scope.is_empty() || scope.iter().any(|s| s == p))
            && !(entry_points_out && is_entry_point(p))
    };
    let mut f = f;
    // Files outside the project in a coverage report are left out, and named.
    let outside = f
        .out
        .coverage
        .as_mut()
        .map(|c| c.drop_outside())
        .unwrap_or_default();
    // llvm-cov lists every file the build compiled, run or not: a Rust file it does not list
    // was not built here (a feature that is off, another target), so it is no untested code.
    let lists_all_compiled = f.framework == "cargo";
    let unmeasured = match f.out.coverage.as_mut() {
        Some(report) if !lists_all_compiled => add_unmeasured(report, scope, ctx.repo),
        _ => Vec::new(),
    };
    // The gate judges the project's own suite and the layer's tests together.
    let baseline = baseline::coverage(&ctx.session.root);
    let alone = baseline.as_ref().and_then(|_| {
        f.out
            .coverage
            .as_ref()
            .and_then(|c| c.line_percent(in_scope))
    });
    if let (Some(report), Some(base)) = (f.out.coverage.as_mut(), &baseline) {
        *report = baseline::combine(report, base);
    }
    // Before and after over the same files: a file in scope that neither run measured counts
    // as 0 % in both (else the figure would fall by the files only the "after" lists).
    let before = baseline.as_ref().and_then(|b| {
        let mut b = b.clone();
        let zeros: Vec<&crate::testing::report::FileCoverage> = f
            .out
            .coverage
            .iter()
            .flat_map(|c| &c.files)
            .filter(|x| unmeasured.contains(&x.path) && !b.files.iter().any(|y| y.path == x.path))
            .collect();
        for file in zeros {
            b.files.push(crate::artifacts::CoverageFile {
                path: file.path.clone(),
                lines_total: file.lines_total,
                ..Default::default()
            });
        }
        baseline::line_percent(&b, in_scope)
    });
    let measured = f
        .out
        .coverage
        .as_ref()
        .and_then(|c| c.line_percent(in_scope));
    let left_out: Vec<String> = f
        .out
        .coverage
        .iter()
        .flat_map(|c| &c.files)
        .map(|file| file.path.clone())
        .filter(|p| entry_points_out && is_entry_point(p))
        .filter(|p| scope.is_empty() || scope.contains(p))
        .collect();
    // A rerun's own coverage comes from the failed tests alone: the run it repeats is added to
    // it, file by file, and every figure (the layer's and each file's) comes from the sum.
    let carried_record = f.carried.as_ref().and_then(|c| c.coverage_record.as_ref());
    let merged = match (&f.out.coverage, carried_record) {
        (Some(report), Some(earlier)) => {
            Some(CoverageRecord::of(report, scope).merged_with(earlier))
        }
        _ => None,
    };
    let coverage = match (&f.carried, measured, &merged) {
        (Some(_), _, Some(m)) => m.line_percent(in_scope),
        (Some(c), Some(m), None) => Some(c.coverage.map_or(m, |k| k.max(m))),
        (Some(c), None, None) => c.coverage,
        (None, m, _) => m,
    };
    let branch = f
        .out
        .coverage
        .as_ref()
        .and_then(|c| c.branch_percent(in_scope));
    let cov_rel = format!("results/coverage-{:03}.json", f.n);
    if let Some(report) = &f.out.coverage {
        let detail = merged
            .clone()
            .unwrap_or_else(|| CoverageRecord::of(report, scope));
        if let Err(e) =
            atomic_write_json(&results.join(format!("coverage-{:03}.json", f.n)), &detail)
        {
            return Outcome::failed(e.to_string());
        }
    }
    let tests: Vec<TestRecord> = f
        .out
        .cases
        .iter()
        .map(|c| TestRecord::of(c, f.verdicts.get(&c.id), f.flaky.contains(&c.id)))
        .collect();
    let mut patterns: BTreeMap<String, usize> = BTreeMap::new();
    for v in f.verdicts.values() {
        *patterns
            .entry(format!("{}:{}", v.classification.as_str(), v.error))
            .or_default() += 1;
    }
    let record = RunRecord {
        task_id: ctx.task.id.clone(),
        layer: f.layer.to_string(),
        framework: f.framework.to_string(),
        command: Some(Some(f.out.command.clone())),
        exit_code: Some(f.out.exit_code),
        duration_s: Some(f.seconds),
        started_at: Some(f.started_at.clone()),
        finished_at: Some(now_ts()),
        total: totals.total,
        passed: Some(totals.passed),
        failed: Some(totals.failed),
        errors: Some(totals.errors),
        skipped: Some(totals.skipped),
        flaky: Some(f.flaky.clone()),
        pass_rate: Some(pass_rate),
        coverage: Some(coverage),
        branch_coverage: Some(branch),
        coverage_scope: Some(CoverageScope::of(scope)),
        coverage_problem: Some(f.out.coverage_problem.clone()),
        unmeasured_files: Some(unmeasured),
        coverage_outside_repo: Some(outside),
        left_out_of_gate: (!left_out.is_empty()).then(|| left_out.clone()),
        baseline_coverage: before,
        tests_coverage: alone,
        coverage_file: Some(f.out.coverage.as_ref().map(|_| cov_rel.clone())),
        tests: Some(tests),
        load_errors: Some(f.out.load_errors.iter().map(load_error_record).collect()),
        quarantined: Some(f.quarantined.clone()),
        repairs: Some(f.repairs.clone()),
        defect_patterns: Some(patterns.clone()),
        reports: Some(f.out.reports.clone()),
        output_tail: Some(f.out.output_tail.clone()),
        watch: f.watched.clone(),
        judged_files: Some(f.judged.clone()),
        reused_from: f.reused_from.clone(),
        ..RunRecord::default()
    };
    if let Err(e) = atomic_write_json(f.run_path, &record) {
        return Outcome::failed(e.to_string());
    }
    if let Err(e) = write_junit(ctx, &record) {
        return Outcome::failed(e.to_string());
    }
    let cov_text = match (before, coverage) {
        (Some(b), Some(c)) => format!(
            "{b:.1}% -> {c:.1}% with the project's own tests ({:+.1} points)",
            c - b
        ),
        (_, c) => c.map_or_else(|| "n/a".to_string(), |c| format!("{c:.1}%")),
    };
    let defects = f
        .verdicts
        .values()
        .filter(|v| v.classification == Classification::CodeDefect)
        .count();
    let mut out = Outcome::completed(format!(
        "{}: {} tests, {} passed, {} failed, {} errors, {} skipped, {} flaky, {not_repaired} quarantined as not repaired; {} code defect(s); pass {:.1}% cov {cov_text}",
        f.layer, totals.total, totals.passed, totals.failed, totals.errors, totals.skipped, f.flaky.len(), defects, pass_rate * 100.0
    ));
    out.pass_rate = Some(pass_rate);
    out.gate = Some(gate_figures(&f, branch));
    if !left_out.is_empty() {
        out.summary = format!(
            "{}; coverage leaves out {} (entry points: only L3 reaches them)",
            out.summary,
            left_out.join(", ")
        );
    }
    if let Some(from) = &f.reused_from {
        out.summary = format!(
            "results of {from} reused (nothing changed); {}",
            out.summary
        );
        out.data.insert("reused_from".into(), json!(from));
    }
    if let Some(c) = &f.carried {
        out.summary = format!(
            "re-ran the tests that failed in {}, kept its {} passes; {}",
            c.from,
            c.passed.len(),
            out.summary
        );
        out.data.insert(data::RERUN_OF.into(), json!(c.from));
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
        data::RUN: format!("results/run-{:03}.json", f.n), "total": totals.total, "passed": totals.passed,
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
pub(super) fn add_unmeasured(
    report: &mut CoverageReport,
    scope: &[String],
    repo: &Path,
) -> Vec<String> {
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
            missing_arcs: Vec::new(),
            path: path.clone(),
            lines_total: lines.len(),
            lines_covered: 0,
            missing_lines: lines,
            branches_total: 0,
            branches_covered: 0,
            executed_lines: Vec::new(),
            partial_lines: Vec::new(),
        });
        added.push(path.clone());
    }
    added
}

/// Test files all of whose tests passed.
pub(super) fn effective_files(cases: &[TestCase]) -> Vec<&str> {
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

/// A file that did not load, as the run record lists it.
fn load_error_record(le: &LoadError) -> LoadErrorRecord {
    LoadErrorRecord {
        file: le.file.clone(),
        error: le.error.clone(),
        verdict: le.verdict.as_ref().map(|v| LoadVerdictRecord {
            classification: Some(v.verdict.classification),
            criticality: Some(v.verdict.criticality),
            location: v.verdict.location.clone(),
            error: v.verdict.error.clone(),
            excerpt: v.verdict.excerpt.clone(),
            reason: v.verdict.reason.clone(),
            install: v.install.clone(),
        }),
    }
}

/// What the quality gate judges: every test that ran (flaky ones as failures) but those that
/// failed on a code defect, which are real bugs, reported and never held against the tests.
fn gate_figures(f: &Finish, branch_coverage: Option<f64>) -> GateFigures {
    let mut figures = GateFigures {
        all_low: true,
        branch_coverage,
        ..GateFigures::default()
    };
    if let Some(c) = &f.carried {
        figures.counted += c.passed.len();
        figures.passed += c.passed.len();
    }
    let carried = |id: &str| {
        f.carried
            .as_ref()
            .is_some_and(|k| k.passed.iter().any(|p| p == id))
    };
    for case in f.out.cases.iter().filter(|c| !carried(&c.id)) {
        let verdict = f.verdicts.get(&case.id);
        let flaky = f.flaky.contains(&case.id);
        match case.status {
            TestStatus::Skipped => continue,
            TestStatus::Passed if !flaky => {
                figures.counted += 1;
                figures.passed += 1;
            }
            _ if !flaky
                && verdict.is_some_and(|v| v.classification == Classification::CodeDefect) =>
            {
                figures.code_defects += 1;
            }
            _ => {
                figures.counted += 1;
                // A flaky test is the test's own problem, of low criticality; an unjudged failure
                // is taken as serious.
                let low = flaky || verdict.is_some_and(|v| v.criticality == Criticality::Low);
                figures.all_low &= low;
            }
        }
    }
    figures
}

/// The layer's last run as JUnit XML for a CI's test tab (`results/junit-<layer>.xml`).
fn write_junit(ctx: &RoleContext, record: &RunRecord) -> Result<(), crate::util::FileError> {
    let path = ctx.session.root.join(junit_file(&record.layer));
    crate::util::atomic_write(&path, junit_xml(record).as_bytes())
}

/// A module only an end-to-end test reaches: the package's `__main__.py`.
fn is_entry_point(path: &str) -> bool {
    path == "__main__.py" || path.ends_with("/__main__.py")
}

/// The runner could not run (missing tool, timeout): an env_issue with the exact fix, posted as a
/// blocker; the task fails so the coordinator's retry and the user both see it.
pub(super) fn env_blocker(
    ctx: &RoleContext,
    layer: &str,
    framework: &str,
    run_path: &Path,
    tools: &Toolchain,
    problem: &str,
    timed_out: bool,
) -> Outcome {
    let record = RunRecord {
        task_id: ctx.task.id.clone(),
        layer: layer.to_string(),
        framework: framework.to_string(),
        total: 0,
        pass_rate: None,
        classification: Some(Classification::EnvIssue),
        timed_out: Some(timed_out),
        problem: Some(problem.to_string()),
        install: Some(tools.install_hint.clone()),
        finished_at: Some(now_ts()),
        ..RunRecord::default()
    };
    let _ = atomic_write_json(run_path, &record);
    // The layer's last run ran nothing: a CI's test tab must not show the one before.
    let _ = std::fs::remove_file(ctx.session.root.join(junit_file(layer)));
    let mut out = Outcome::failed(format!("env_issue: {problem}"));
    out.data = to_map(
        json!({data::BLOCKER: true, "classification": "env_issue", "install": tools.install_hint, "timed_out": timed_out}),
    );
    out
}

/// A run with nothing executed is still recorded, so the analyst sees every attempt.
pub(super) fn empty_run(
    ctx: &RoleContext,
    layer: &str,
    framework: &str,
    run_path: &Path,
    summary: String,
) -> Outcome {
    let record = RunRecord {
        task_id: ctx.task.id.clone(),
        layer: layer.to_string(),
        framework: framework.to_string(),
        command: Some(None),
        exit_code: Some(None),
        total: 0,
        passed: Some(0),
        failed: Some(0),
        skipped: Some(0),
        pass_rate: Some(0.0),
        coverage: Some(None),
        tests: Some(Vec::new()),
        note: Some(summary.clone()),
        finished_at: Some(now_ts()),
        // Nothing ran, so nothing in the layer's folder was judged.
        judged_files: Some(Default::default()),
        ..RunRecord::default()
    };
    if let Err(e) = atomic_write_json(run_path, &record).and_then(|_| write_junit(ctx, &record)) {
        return Outcome::failed(e.to_string());
    }
    let mut out = Outcome::completed(summary);
    out.pass_rate = Some(0.0);
    out.data = to_map(serde_json::to_value(&record).unwrap_or_default());
    out.data.insert("tests".into(), json!(0));
    out.artifacts = vec![run_path
        .file_name()
        .map(|n| format!("results/{}", n.to_string_lossy()))
        .unwrap_or_default()];
    out
}

/// Claims the next free run number by creating run-NNN.json exclusively (parallel executors
/// share the folder), starting after the runs already recorded.
pub fn reserve_run(results: &Path) -> Result<(usize, PathBuf), RoleError> {
    let existing = std::fs::read_dir(results)
        .map(|rd| {
            rd.flatten()
                .filter(|e| artifacts::is_run_file(&e.file_name().to_string_lossy()))
                .count()
        })
        .unwrap_or(0);
    for n in existing + 1..existing + 1000 {
        let path = results.join(format!("run-{n:03}.json"));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(_) => return Ok((n, path)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(RoleError::io("create", &path)(e)),
        }
    }
    Err(RoleError::NoFreeRunNumber {
        results: results.to_path_buf(),
    })
}
