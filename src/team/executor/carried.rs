//! What `rerun` keeps from the run it repeats.

use std::collections::BTreeSet;
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
        let unchanged = unchanged_files(&record, test_dir);
        let not_passed: Vec<&str> = tests
            .iter()
            .filter(|t| !matches!(t.status, RecordedStatus::Passed | RecordedStatus::Skipped))
            .map(|t| t.id.as_str())
            .collect();
        let passed = tests
            .iter()
            .filter(|t| t.status == RecordedStatus::Passed)
            // A pass counts only from a file still as that run ran it: an edited test runs
            // again, under the sandbox and the watch, before anything calls it judged.
            .filter(
                |t| match t.file.as_deref().and_then(|f| Path::new(f).file_name()) {
                    Some(name) => unchanged.files.contains(name.to_string_lossy().as_ref()),
                    // A runner that names no file (node): only when no file changed at all.
                    None => unchanged.all,
                },
            )
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

/// The layer's files still as a run judged them.
#[derive(Default)]
struct Unchanged {
    files: BTreeSet<String>,
    /// No file of the layer changed, came or went.
    all: bool,
}

/// The layer's files that are still what `record`'s run judged. None at all when a file that
/// holds none of its tests changed (a conftest, a helper): any pass may depend on it. A record
/// from before runs listed their files carries nothing.
fn unchanged_files(record: &artifacts::RunRecord, test_dir: &Path) -> Unchanged {
    let Some(judged) = &record.judged_files else {
        return Unchanged::default();
    };
    let now = artifacts::snapshot(test_dir);
    let with_tests: BTreeSet<String> = record
        .tests()
        .iter()
        .filter_map(|t| Path::new(t.file.as_deref()?).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    let names: BTreeSet<&String> = judged.keys().chain(now.keys()).collect();
    let changed: Vec<&String> = names
        .into_iter()
        .filter(|n| judged.get(*n) != now.get(*n))
        .collect();
    if changed.iter().any(|n| !with_tests.contains(*n)) {
        return Unchanged::default();
    }
    Unchanged {
        files: now
            .keys()
            .filter(|n| judged.get(*n) == now.get(*n))
            .cloned()
            .collect(),
        all: changed.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::{RunRecord, TestRecord};

    /// A rerun keeps a pass only from a file still as the run it repeats judged it; a changed
    /// helper, which every test may use, keeps none.
    #[test]
    fn passes_are_kept_only_from_files_the_repeated_run_judged_as_they_are() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        for (name, text) in [("test_a.py", "a"), ("test_b.py", "b"), ("conftest.py", "c")] {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let test = |id: &str, file: &str| TestRecord {
            id: id.into(),
            file: Some(file.into()),
            ..TestRecord::default()
        };
        let record = RunRecord {
            tests: Some(vec![
                test("test_a::t", "test_a.py"),
                test("test_b::t", "test_b.py"),
            ]),
            judged_files: Some(artifacts::snapshot(dir)),
            ..RunRecord::default()
        };
        let same = unchanged_files(&record, dir);
        assert!(same.all && same.files.len() == 3);
        std::fs::write(dir.join("test_b.py"), "b, edited").unwrap();
        let edited = unchanged_files(&record, dir);
        assert!(!edited.all);
        assert_eq!(
            edited.files.into_iter().collect::<Vec<_>>(),
            ["conftest.py", "test_a.py"]
        );
        std::fs::write(dir.join("conftest.py"), "c, edited").unwrap();
        assert!(unchanged_files(&record, dir).files.is_empty());
        let older = RunRecord {
            judged_files: None,
            ..record
        };
        assert!(unchanged_files(&older, dir).files.is_empty());
    }
}
