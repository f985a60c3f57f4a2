//! The project's own test suite, run once before any test is generated: what it passes, fails
//! and covers is the baseline the generated tests add to. Recorded as `results/baseline.json` (a
//! run record of layer `baseline`) and `results/coverage-baseline.json`; the executor's gate
//! judges the baseline and the layer's tests together.

use std::path::Path;

use crate::artifacts::{CoverageRecord, CoverageScope, RunRecord, TestRecord};
use crate::team::error::RoleError;
use crate::team::util::{sandbox_for, time_left};
use crate::team::RoleContext;
use crate::testing::framework::{Family, Framework};
use crate::testing::report::{CoverageReport, TestTotals};
use crate::testing::runner::SuiteSpec;
use crate::testing::toolchain::Toolchain;
use crate::util::{atomic_write_json, mkdirs, now_ts, read_json};

/// The run record's layer and the file names' tag.
pub(crate) use crate::testing::runner::BASELINE;

/// What running the project's own suite came to.
pub(crate) enum Baseline {
    /// The project has no tests of its own.
    NoSuite,
    /// No runner runs this framework's project suites yet.
    NotSupported(String),
    /// It ran: the record as written to `results/baseline.json`.
    Ran(Box<RunRecord>),
    /// It could not run (an env issue); the pipeline goes on without a baseline.
    CannotRun(String),
}

/// Runs the project's own tests (`tests`, repository-relative) once, sandboxed, with at most
/// four fifths of what is left of the task's time, and records the result.
pub(crate) fn run(
    ctx: &RoleContext,
    framework: Option<Framework>,
    tools: &Toolchain,
    tests: &[String],
    scope: &[String],
) -> Result<Baseline, RoleError> {
    let Some(framework) = framework else {
        return Ok(if tests.is_empty() {
            Baseline::NoSuite
        } else {
            Baseline::NotSupported("unknown".into())
        });
    };
    let tests = own_tests(ctx.repo, framework.family(), tests);
    if tests.is_empty() {
        return Ok(Baseline::NoSuite);
    }
    let tests = tests.as_slice();
    let runner = crate::family::runner_for(framework);
    let workspace = ctx.session.root.join("workspace");
    let dirs = runner.suite_dirs(&workspace);
    if dirs.is_empty() {
        return Ok(Baseline::NotSupported(framework.to_string()));
    }
    let results = ctx.session.root.join("results");
    let mut writable = vec![results.clone()];
    writable.extend(dirs);
    for dir in &writable {
        mkdirs(dir)?;
    }
    let sandbox = sandbox_for(ctx, BASELINE, runner.read_roots(tools, ctx.repo), &writable)?;
    let spec = SuiteSpec {
        repo: ctx.repo,
        session: &ctx.session.root,
        tests,
        tools,
        results: results.clone(),
        timeout: time_left(ctx.deadline)?.mul_f64(0.8),
        sandbox: sandbox.as_ref(),
    };
    let started_at = now_ts();
    let Some(out) = runner.own_suite(&spec) else {
        return Ok(Baseline::NotSupported(framework.to_string()));
    };
    if let Some(problem) = out.env_problem {
        return Ok(Baseline::CannotRun(problem));
    }
    let in_scope = |p: &str| scope.is_empty() || scope.iter().any(|s| s == p);
    let totals = TestTotals::of(&out.cases);
    let coverage_file = format!("results/coverage-{BASELINE}.json");
    if let Some(report) = &out.coverage {
        atomic_write_json(
            &ctx.session.root.join(&coverage_file),
            &CoverageRecord::of(report, scope),
        )?;
    }
    let record = RunRecord {
        task_id: ctx.task.id.clone(),
        layer: BASELINE.into(),
        framework: framework.to_string(),
        command: Some(Some(out.command.clone())),
        exit_code: Some(out.exit_code),
        duration_s: Some(out.duration_s),
        started_at: Some(started_at),
        finished_at: Some(now_ts()),
        total: totals.total,
        passed: Some(totals.passed),
        failed: Some(totals.failed),
        errors: Some(totals.errors),
        skipped: Some(totals.skipped),
        pass_rate: Some(totals.pass_rate().unwrap_or(0.0)),
        coverage: Some(out.coverage.as_ref().and_then(|c| c.line_percent(in_scope))),
        branch_coverage: Some(
            out.coverage
                .as_ref()
                .and_then(|c| c.branch_percent(in_scope)),
        ),
        coverage_scope: Some(CoverageScope::of(scope)),
        coverage_problem: Some(out.coverage_problem.clone()),
        coverage_file: Some(out.coverage.as_ref().map(|_| coverage_file.clone())),
        tests: Some(
            out.cases
                .iter()
                .map(|c| TestRecord::of(c, None, false))
                .collect(),
        ),
        reports: Some(out.reports.clone()),
        output_tail: Some(out.output_tail.clone()),
        ..RunRecord::default()
    };
    atomic_write_json(&results.join(format!("{BASELINE}.json")), &record)?;
    Ok(Baseline::Ran(Box::new(record)))
}

/// The project's test files this family's runner runs: a polyglot repository's other tests are
/// not its own, and a crate's unit tests live in its sources (`#[test]` inside `src/`).
fn own_tests(repo: &Path, family: Family, tests: &[String]) -> Vec<String> {
    let mut own: Vec<String> = tests
        .iter()
        .filter(|t| match family {
            Family::Python => t.ends_with(".py"),
            Family::Cargo => t.ends_with(".rs"),
            Family::Go => t.ends_with("_test.go"),
            Family::Node => [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"]
                .iter()
                .any(|ext| t.ends_with(ext)),
        })
        .cloned()
        .collect();
    if family == Family::Cargo {
        let sources = crate::testing::detect::walk(repo).into_iter().filter(|p| {
            p.ends_with(".rs")
                && !own.contains(p)
                && std::fs::read_to_string(repo.join(p)).is_ok_and(|text| text.contains("#[test]"))
        });
        own.extend(sources.collect::<Vec<_>>());
    }
    own
}

/// The baseline's coverage detail, when the session has one.
pub(crate) fn coverage(session: &Path) -> Option<CoverageRecord> {
    read_json(
        &session
            .join("results")
            .join(format!("coverage-{BASELINE}.json")),
    )
    .ok()
}

/// Line coverage of the baseline over the files `keep` accepts; None when it measured none.
pub(crate) fn line_percent(baseline: &CoverageRecord, keep: impl Fn(&str) -> bool) -> Option<f64> {
    let (total, covered) = baseline
        .files
        .iter()
        .filter(|f| keep(&f.path))
        .fold((0, 0), |(t, c), f| (t + f.lines_total, c + f.lines_covered));
    (total > 0).then(|| covered as f64 * 100.0 / total as f64)
}

/// `run` with the baseline's lines added: a line either covered counts as covered (files
/// measured both times with the same executable lines; the others keep the run's figures).
/// Branches are counted, not listed, so the combined figure is the better of the two.
pub(crate) fn combine(run: &CoverageReport, baseline: &CoverageRecord) -> CoverageReport {
    let mut combined = run.clone();
    for file in &mut combined.files {
        let Some(base) = baseline.files.iter().find(|b| b.path == file.path) else {
            continue;
        };
        if base.lines_total != file.lines_total {
            continue;
        }
        file.missing_lines
            .retain(|line| base.missing_lines.contains(line));
        if !file.executed_lines.is_empty() {
            file.executed_lines.extend(&base.executed_lines);
            file.executed_lines.sort_unstable();
            file.executed_lines.dedup();
            file.executed_lines
                .retain(|l| !file.missing_lines.contains(l));
        }
        // A line partial in the run but fully taken by the project's tests is no longer partial.
        file.partial_lines.retain(|l| {
            base.partial_lines.contains(l)
                || base.missing_lines.contains(l)
                || base.executed_lines.is_empty()
        });
        file.lines_covered = file.lines_total - file.missing_lines.len();
        file.branches_covered = file
            .branches_covered
            .max(base.branches_covered)
            .min(file.branches_total);
    }
    combined
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::CoverageFile;
    use crate::testing::report::FileCoverage;

    #[test]
    fn a_line_covered_by_either_suite_counts_once() {
        let run = CoverageReport {
            format: "coverage.py".into(),
            files: vec![FileCoverage {
                path: "pkg/m.py".into(),
                lines_total: 10,
                lines_covered: 6,
                missing_lines: vec![3, 4, 8, 9],
                branches_total: 4,
                branches_covered: 1,
                ..Default::default()
            }],
        };
        let baseline = CoverageRecord {
            format: "coverage.py".into(),
            scope: vec![],
            files: vec![CoverageFile {
                path: "pkg/m.py".into(),
                lines_total: 10,
                lines_covered: 5,
                line_percent: Some(50.0),
                missing_lines: vec![1, 2, 3, 8, 10],
                branches_total: 4,
                branches_covered: 3,
                ..Default::default()
            }],
        };
        let both = combine(&run, &baseline);
        assert_eq!(both.files[0].missing_lines, vec![3, 8]);
        assert_eq!(both.files[0].lines_covered, 8);
        assert_eq!(both.files[0].branches_covered, 3);
    }
}
