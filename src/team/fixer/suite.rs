//! Running the suite the fixer works on: the project's own tests (and the session's tests that
//! found code defects) against a mirror of the worktree, sandboxed, once under coverage with a
//! context per test. One run gives each test's outcome, its failure report and the lines it
//! reaches: the pass rate, the localisation and the progressive selection all come from it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::family::suites::{Reach, SuiteMutations, SuiteTrace, TestReach, TraceJob};
use crate::sandbox::Sandbox;
use crate::testing::toolchain::Toolchain;

/// Where the session's carried tests sit inside the mirror (never a folder of the project).
pub const CARRIED_DIR: &str = ".team-testing-fix";

/// One test's latest result.
#[derive(Debug, Clone, Default)]
pub struct TestResult {
    pub passed: bool,
    pub outcome: String,
    pub detail: Option<String>,
    /// Repository-relative module -> lines the test runs.
    pub reach: BTreeMap<String, Vec<u32>>,
}

/// Every test of the suite by pytest node id, with the result of the last run that ran it.
#[derive(Debug, Clone, Default)]
pub struct SuiteResults {
    pub tests: BTreeMap<String, TestResult>,
}

impl SuiteResults {
    pub fn total(&self) -> usize {
        self.tests.len()
    }

    pub fn passed(&self) -> usize {
        self.tests.values().filter(|t| t.passed).count()
    }

    /// Percent; 100 for an empty suite.
    pub fn pass_rate(&self) -> f64 {
        if self.tests.is_empty() {
            100.0
        } else {
            round1(self.passed() as f64 * 100.0 / self.total() as f64)
        }
    }

    pub fn failed(&self) -> Vec<String> {
        self.tests
            .iter()
            .filter(|(_, t)| !t.passed)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The results of a partial run replace those of the same tests.
    pub fn merge(&mut self, newer: SuiteResults) {
        self.tests.extend(newer.tests);
    }

    /// As the localisation reads a traced suite.
    pub fn as_trace(&self, mirror: &Path) -> SuiteMutations {
        let mut trace = SuiteMutations::default();
        for (id, t) in &self.tests {
            let reached = t
                .reach
                .iter()
                .map(|(file, lines)| {
                    (
                        mirror.join(file).to_string_lossy().into_owned(),
                        Reach {
                            lines: lines.clone(),
                            arcs: Vec::new(),
                        },
                    )
                })
                .collect();
            trace.tests.insert(
                id.clone(),
                TestReach {
                    outcome: t.outcome.clone(),
                    reached,
                    detail: t.detail.clone(),
                },
            );
        }
        trace
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("cannot copy the worktree to {}: {cause}", into.display())]
    Mirror {
        into: PathBuf,
        cause: std::io::Error,
    },
    #[error(transparent)]
    Run(#[from] crate::family::suites::MutationError),
    #[error("the suite did not run: {0}")]
    DidNotRun(String),
}

/// The suite of one fix cycle.
pub struct Suite<'a> {
    /// The family's tracing of its tests one by one.
    pub analysis: &'a dyn SuiteTrace,
    pub tools: &'a Toolchain,
    pub sandbox: Option<&'a Sandbox>,
    /// The worktree whose code is tested (read only: it is mirrored first).
    pub worktree: &'a Path,
    /// The user's repository (read only: its installed dependencies).
    pub repo: &'a Path,
    /// The session (read only: what was fetched for the project).
    pub session: &'a Path,
    /// The mirror the tests run in, and a scratch folder of ours (both writable in the sandbox).
    pub mirror: PathBuf,
    pub scratch: PathBuf,
    /// The project's test files (repository-relative) and the carried tests (mirror-relative
    /// file -> bytes, under [`CARRIED_DIR`]) with the node ids of theirs that belong to the suite.
    pub project_tests: Vec<String>,
    pub carried: BTreeMap<PathBuf, Vec<u8>>,
    pub carried_ids: Vec<String>,
}

impl Suite<'_> {
    /// Every test of the suite, as pytest arguments.
    pub fn everything(&self) -> Vec<String> {
        let mut all = self.project_tests.clone();
        all.extend(self.carried_ids.iter().cloned());
        all
    }

    /// Runs `selection` (test ids or files; the whole suite when None) within `timeout`. Every
    /// test of `expect` the run does not report comes back failed: a test that hung, took its
    /// runner down or no longer builds is no pass, and must not leave the count either.
    pub fn run(
        &self,
        selection: Option<&[String]>,
        name: &str,
        timeout: Duration,
        expect: &[String],
    ) -> Result<(SuiteResults, Duration), SuiteError> {
        let started = Instant::now();
        crate::workspace::mirror(self.worktree, &self.mirror, &self.carried).map_err(|cause| {
            SuiteError::Mirror {
                into: self.mirror.clone(),
                cause,
            }
        })?;
        std::fs::create_dir_all(&self.scratch).map_err(|cause| SuiteError::Mirror {
            into: self.scratch.clone(),
            cause,
        })?;
        let selection = match selection {
            Some(s) => s.to_vec(),
            None => self.everything(),
        };
        let s = |p: &Path| p.to_string_lossy().into_owned();
        let traced = self.analysis.trace(&TraceJob {
            name: name.to_string(),
            tools: self.tools,
            scratch: &self.scratch,
            mirror: &self.mirror,
            repo: self.repo,
            session: self.session,
            selection,
            sandbox: self.sandbox,
            timeout,
        })?;
        let problems = if traced.problems.is_empty() {
            "no test ran".to_string()
        } else {
            traced.problems.join("; ")
        };
        if traced.tests.is_empty() && expect.is_empty() {
            return Err(SuiteError::DidNotRun(problems));
        }
        let mut results = SuiteResults::default();
        for (id, t) in traced.tests {
            let reach = t
                .reached
                .into_iter()
                .map(|(file, r)| {
                    let rel = Path::new(&file)
                        .strip_prefix(&self.mirror)
                        .map(s)
                        .unwrap_or(file);
                    (rel, r.lines)
                })
                .collect();
            results.tests.insert(
                id,
                TestResult {
                    passed: t.outcome == "passed" || t.outcome == "skipped",
                    outcome: t.outcome,
                    detail: t.detail,
                    reach,
                },
            );
        }
        for id in expect {
            results
                .tests
                .entry(id.clone())
                .or_insert_with(|| TestResult {
                    passed: false,
                    outcome: "failed".into(),
                    detail: Some(format!("did not run: {problems}")),
                    reach: BTreeMap::new(),
                });
        }
        Ok((results, started.elapsed()))
    }
}

/// The project's test files in the worktree: those its framework's configuration names (mocha's
/// spec, jest's testMatch, pytest's testpaths, cargo's targets) and those the family's naming
/// makes tests.
pub fn project_test_files(
    analysis: &dyn SuiteTrace,
    worktree: &Path,
    framework: crate::testing::framework::Framework,
) -> Vec<String> {
    let configured = crate::testing::project_files::of_repo(worktree, Some(framework)).tests;
    let named = crate::testing::detect::walk(worktree)
        .into_iter()
        .filter(|p| analysis.is_test_file(p));
    let all: BTreeSet<String> = configured.into_iter().chain(named).collect();
    all.into_iter().collect()
}

/// Progressive testing: the tests a change to `modified` can affect, as the family reads them
/// (what each test ran last time, what it imports); None: the whole suite.
pub fn affected(
    analysis: &dyn SuiteTrace,
    results: &SuiteResults,
    modified: &[String],
    source: &dyn Fn(&str) -> Option<String>,
) -> Option<Vec<String>> {
    let reach: BTreeMap<String, BTreeSet<String>> = results
        .tests
        .iter()
        .map(|(id, t)| (id.clone(), t.reach.keys().cloned().collect()))
        .collect();
    analysis.affected(&reach, modified, source)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(passed: bool, files: &[&str]) -> TestResult {
        TestResult {
            passed,
            outcome: if passed { "passed" } else { "failed" }.into(),
            detail: None,
            reach: files.iter().map(|f| (f.to_string(), vec![1])).collect(),
        }
    }

    #[test]
    fn partial_results_replace_those_of_the_same_tests() {
        let mut r = SuiteResults::default();
        r.tests.insert("a".into(), result(false, &[]));
        r.tests.insert("b".into(), result(true, &[]));
        assert_eq!(r.pass_rate(), 50.0);
        let mut newer = SuiteResults::default();
        newer.tests.insert("a".into(), result(true, &[]));
        r.merge(newer);
        assert_eq!(r.pass_rate(), 100.0);
        assert!(r.failed().is_empty());
    }
}
