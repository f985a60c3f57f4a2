//! The critic's judgement of one layer across a task's repair iterations: which files and tests
//! leave the layer (unloadable, unsafe, wrong as written) and why, which failures are flaky, and
//! the verdict on every failure that stays. What leaves is recorded under
//! `tests/quarantine/<layer>/`, which later rounds and `apply` read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::watch::Finding;
use crate::artifacts::{Quarantined, Repair, RepairAction};
use crate::team::error::{Result, RoleError};
use crate::testing::classify::{classify, Classification, Criticality, Verdict};
use crate::testing::effects::{self, Effect};
use crate::testing::load_error::{classify_load_error, LoadError};
use crate::testing::report::{TestCase, TestStatus};
use crate::testing::runner::{RunOutput, RunSpec, Runner};
use crate::util::{atomic_write_json, mkdirs};

/// The record of what is out of a layer, in its quarantine folder.
const QUARANTINE_FILE: &str = "quarantine.json";
/// Re-runs of a failing test before it counts as a real failure.
const FLAKY_RERUNS: usize = 3;

/// Where the layer's tests live and where the ones taken out go.
pub(super) struct Folders<'a> {
    pub layer: &'a str,
    pub test_dir: &'a Path,
    pub quarantine_dir: &'a Path,
}

/// What the task has decided about its layer so far.
pub(super) struct Critic<'a> {
    task_id: &'a str,
    folders: Folders<'a>,
    pub quarantined: Vec<Quarantined>,
    pub repairs: Vec<Repair>,
    /// Flaky across iterations: a test that failed once and passed on a re-run stays flaky.
    pub flaky: Vec<String>,
    /// Each failing test is re-run once per task, not in every repair iteration.
    judged: BTreeMap<String, bool>,
    /// Files found unloadable in any iteration (they are gone from the later ones).
    pub load_errors: Vec<LoadError>,
}

impl<'a> Critic<'a> {
    /// The critic of a layer, with what earlier tasks took out of it (`quarantine.json`).
    pub fn new(task_id: &'a str, folders: Folders<'a>) -> Self {
        let record = folders.quarantine_dir.join(QUARANTINE_FILE);
        Critic {
            task_id,
            folders,
            quarantined: crate::util::read_json(&record).unwrap_or_default(),
            repairs: Vec::new(),
            flaky: Vec::new(),
            judged: BTreeMap::new(),
            load_errors: Vec::new(),
        }
    }

    /// Writes what is out of the layer, for later rounds and `apply`.
    pub fn save(&self) -> Result<()> {
        if self.quarantined.is_empty() {
            return Ok(());
        }
        let dir = self.folders.quarantine_dir;
        mkdirs(dir)?;
        Ok(atomic_write_json(
            &dir.join(QUARANTINE_FILE),
            &self.quarantined,
        )?)
    }

    /// The tests a run leaves out: the ones taken out (whole files are gone already) and the
    /// passes a rerun carries over.
    pub fn deselected(&self, carried_passes: &[String]) -> Vec<String> {
        self.quarantined
            .iter()
            .filter(|q| !q.file)
            .map(|q| q.id.clone())
            .chain(carried_passes.iter().cloned())
            .collect()
    }

    /// Takes a test (or a whole file) out of the layer, logging the repair in `iteration`; false
    /// when it was out already.
    fn take(
        &mut self,
        iteration: usize,
        id: String,
        file: bool,
        reason: String,
        effect: Option<String>,
    ) -> bool {
        if self.quarantined.iter().any(|k| k.id == id) {
            return false;
        }
        let action = if file {
            RepairAction::QuarantinedFile
        } else {
            RepairAction::QuarantinedTest
        };
        self.repairs.push(Repair {
            iteration,
            action,
            test: Some(id.clone()),
            file: None,
            reason: Some(reason.clone()),
            backend: None,
        });
        self.quarantined.push(Quarantined {
            id,
            file,
            reason,
            task_id: self.task_id.to_string(),
            unsafe_effect: effect,
        });
        true
    }

    /// Files that do not load leave the layer, classified like failures: whose fault it is (the
    /// test's, the code's, the machine's) and what to do about it. True when one left.
    pub fn take_out_unloadable(
        &mut self,
        out: &mut RunOutput,
        repo: &Path,
        iteration: usize,
    ) -> bool {
        let layer = self.folders.layer;
        for le in out.load_errors.iter_mut() {
            le.verdict = Some(classify_load_error(le, repo, |p| is_test_path(p, layer)));
        }
        self.load_errors.extend(out.load_errors.iter().cloned());
        let mut changed = false;
        for le in &out.load_errors {
            let reason = match &le.verdict {
                Some(v) => format!(
                    "does not load ({}): {}",
                    v.verdict.classification.as_str(),
                    v.verdict.reason
                ),
                None => format!("does not load: {}", error_gist(&le.error)),
            };
            if move_out(self.folders.test_dir, self.folders.quarantine_dir, &le.file).is_ok() {
                let mut step = Repair::on_file(iteration, RepairAction::QuarantinedFile, &le.file);
                step.reason = Some(reason.clone());
                self.repairs.push(step);
                self.quarantined.push(Quarantined {
                    id: le.file.clone(),
                    file: true,
                    reason,
                    task_id: self.task_id.to_string(),
                    unsafe_effect: None,
                });
                changed = true;
            }
        }
        changed
    }

    /// Tests that changed something outside their own temporary folders leave the layer whatever
    /// their outcome: after `apply` they would do it unsandboxed, to the project.
    pub fn take_out_unsafe(&mut self, found: &[Effect], iteration: usize) -> bool {
        let mut any = false;
        for (id, file, what) in unsafe_tests(found, self.folders.test_dir) {
            if self.quarantined.iter().any(|q| q.id == id)
                || (file
                    && move_out(self.folders.test_dir, self.folders.quarantine_dir, &id).is_err())
            {
                continue;
            }
            any |= self.take(iteration, id, file, format!("unsafe: {what}"), Some(what));
        }
        any
    }

    /// The verdict on each failing test of `out` that is not flaky (re-run to tell).
    pub fn judge(
        &mut self,
        out: &RunOutput,
        runner: &dyn Runner,
        spec: &RunSpec,
        deadline: Instant,
        sandbox: Option<(&[PathBuf], bool)>,
    ) -> BTreeMap<String, Verdict> {
        let layer = self.folders.layer;
        let mut verdicts = BTreeMap::new();
        let failing = out
            .cases
            .iter()
            .filter(|c| matches!(c.status, TestStatus::Failed | TestStatus::Error));
        for case in failing {
            let is_flaky = *self
                .judged
                .entry(case.id.clone())
                .or_insert_with(|| passes_on_rerun(runner, spec, case, deadline));
            if is_flaky {
                if !self.flaky.contains(&case.id) {
                    self.flaky.push(case.id.clone());
                }
                continue;
            }
            let observed = is_observation(self.folders.test_dir, case);
            let is_test = |p: &str| is_test_path(p, layer);
            verdicts.insert(
                case.id.clone(),
                verdict_for(case, is_test, sandbox, observed),
            );
        }
        verdicts
    }

    /// A sandbox denial is the test reaching outside: unsafe, like an audited effect.
    pub fn take_out_denied(
        &mut self,
        cases: &[TestCase],
        verdicts: &BTreeMap<String, Verdict>,
        runner: &dyn Runner,
        iteration: usize,
    ) -> bool {
        let mut any = false;
        for case in cases {
            let Some(v) = verdicts.get(&case.id) else {
                continue;
            };
            if v.classification != Classification::SandboxDenied {
                continue;
            }
            let id = runner.selector(self.folders.test_dir, case);
            let reason = format!("unsafe: {}", v.reason);
            any |= self.take(iteration, id, false, reason, Some(v.reason.clone()));
        }
        any
    }

    /// Built-in repair: tests that are themselves wrong leave the layer so the pass rate reflects
    /// the tests that are kept (a later GC round regenerates them); not those in a file an agent
    /// has just `repaired`.
    pub fn take_out_test_defects(
        &mut self,
        cases: &[TestCase],
        verdicts: &BTreeMap<String, Verdict>,
        runner: &dyn Runner,
        repaired: &BTreeSet<String>,
        iteration: usize,
    ) -> bool {
        let mut changed = false;
        for case in cases {
            let Some(v) = verdicts.get(&case.id) else {
                continue;
            };
            if v.classification != Classification::TestDefect
                || case.file.as_ref().is_some_and(|f| repaired.contains(f))
            {
                continue;
            }
            let id = runner.selector(self.folders.test_dir, case);
            let reason = format!(
                "test_defect: {} ({})",
                v.reason,
                v.location.clone().unwrap_or_default()
            );
            changed |= self.take(iteration, id, false, reason, None);
        }
        changed
    }

    /// What the file-system watch found leaves the layer. True when something left.
    pub fn take_out_watched(&mut self, findings: Vec<Finding>, iteration: usize) -> bool {
        let mut any = false;
        for f in findings {
            if f.whole_file
                && move_out(self.folders.test_dir, self.folders.quarantine_dir, &f.id).is_err()
            {
                continue;
            }
            let reason = format!("unsafe: {}", f.what);
            any |= self.take(iteration, f.id, f.whole_file, reason, Some(f.what));
        }
        any
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

/// Moves a test file out of the layer into the quarantine folder.
fn move_out(test_dir: &Path, quarantine: &Path, file: &str) -> Result<()> {
    let from = test_dir.join(file);
    let to = quarantine.join(file);
    if let Some(parent) = to.parent() {
        mkdirs(parent)?;
    }
    std::fs::rename(&from, &to).map_err(RoleError::io("quarantine", &from))
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
            timeout: left,
            ..spec.clone()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths_are_told_from_code() {
        assert!(is_test_path("test_bug.py", "L1-unit"));
        assert!(is_test_path("/s/tests/L1-unit/x.py", "L1-unit"));
        assert!(!is_test_path("calc/ops.py", "L1-unit"));
    }
}
