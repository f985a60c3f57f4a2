//! What `rerun` keeps from the run it repeats.

use std::path::Path;

use crate::artifacts::{self, RecordedStatus};
use crate::team::error::{RerunProblem, RoleError};
use crate::team::RoleContext;
use crate::testing::report::{TestCase, TestStatus};
use crate::testing::runner::Runner;

/// What a rerun keeps from the run it repeats: the tests that passed there (as the runner's
/// deselect ids) and that run's coverage, which the failed tests alone cannot measure.
pub(super) struct Carried {
    pub from: String,
    pub passed: Vec<String>,
    pub coverage: Option<f64>,
    /// That run's per-file coverage (`results/coverage-NNN.json`), when it wrote one.
    pub coverage_record: Option<artifacts::CoverageRecord>,
}

impl Carried {
    pub(super) fn load(
        ctx: &RoleContext,
        runner: &dyn Runner,
        test_dir: &Path,
    ) -> Result<Option<Carried>, RoleError> {
        let Some(from) = ctx.task.rerun_of() else {
            return Ok(None);
        };
        let graph = ctx.session.load_tasks()?;
        let problem = |problem| RoleError::RerunSource {
            task: from.to_string(),
            problem,
        };
        let outcome = graph
            .get(from)
            .and_then(|t| t.outcome.clone())
            .ok_or_else(|| problem(RerunProblem::NoOutcome))?;
        let run = outcome
            .run_record()
            .ok_or_else(|| problem(RerunProblem::NoRunRecord))?;
        let record = artifacts::read_run(&ctx.session.root.join(run))
            .map_err(|e| problem(RerunProblem::Unreadable(e)))?;
        let tests = record.tests();
        let not_passed: Vec<&str> = tests
            .iter()
            .filter(|t| !matches!(t.status, RecordedStatus::Passed | RecordedStatus::Skipped))
            .map(|t| t.id.as_str())
            .collect();
        let passed = tests
            .iter()
            .filter(|t| t.status == RecordedStatus::Passed)
            // libtest's --skip matches substrings: a pass whose name is inside a failed test's
            // name would skip that one too, so it runs again instead.
            .filter(|t| {
                !runner.deselect_matches_substrings()
                    || !not_passed.iter().any(|f| f.contains(t.id.as_str()))
            })
            .map(|t| {
                let (classname, name) = match t.id.rsplit_once("::") {
                    Some((c, n)) => (Some(c.to_string()), n.to_string()),
                    None => (None, t.id.clone()),
                };
                let case = TestCase {
                    id: t.id.clone(),
                    name,
                    classname,
                    file: t.file.clone(),
                    line: None,
                    status: TestStatus::Passed,
                    duration_s: None,
                    message: None,
                    detail: None,
                };
                runner.selector(test_dir, &case)
            })
            .collect();
        let coverage_record = record
            .coverage_file()
            .and_then(|rel| crate::util::read_json(&ctx.session.root.join(rel)).ok());
        Ok(Some(Carried {
            from: from.to_string(),
            passed,
            coverage: outcome.coverage,
            coverage_record,
        }))
    }
}
