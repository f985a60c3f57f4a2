//! Mutation analysis for the families whose tests run against a copy of the project on disk
//! (JavaScript/TypeScript, Rust, Go): one language-neutral loop over a family's [`WorkCopy`].
//!
//! Every suite of the session (the project's own tests and each generated layer) is put in one
//! copy and traced once; the mutants are sampled (seeded, stratified over files) from the
//! family's mutation points; each mutant runs once, with only the passing tests that reach its
//! line, and its verdict is split back into one [`SuiteMutations`] per suite, as if each suite had
//! been analysed alone. One build per mutant serves every suite, which is what makes compiled
//! languages affordable. The user's tree is never touched: the copy is a mirror in the session.

pub mod point;
pub mod prune;
mod sample;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use point::Point;

/// Each module's mutation points, by absolute path in the mirror.
pub type Points = BTreeMap<PathBuf, Vec<Point>>;

use super::suites::{Mutant, MutationError, SuiteAnalysis, SuiteJob, SuiteMutations};

/// How one mutant's run of its tests ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Every test passed: the mutant survived.
    Passed,
    /// These tests (work-copy ids) failed, each with the line of its own file where it failed
    /// when the report says (the assertion that noticed).
    Failed(BTreeMap<String, Option<u32>>),
    /// The run outlived its timeout: the mutant made the code hang, which the tests notice.
    TimedOut,
    /// The mutant did not build or load (cargo-mutants' "unviable"): it is in no score.
    Unviable(String),
}

/// A copy of the project with every suite's tests in place, where mutants are written and run.
/// Each family implements it over its own test runner.
pub trait WorkCopy: Send {
    /// Runs every test of the suites once, traced: each test's outcome and reach, reach by
    /// absolute path of the mirror's files.
    fn trace(&mut self, timeout: Duration) -> Result<SuiteMutations, MutationError>;
    /// The suite (index into the jobs) a traced test belongs to, and its id in that suite;
    /// None for a test of none of them.
    fn suite_of(&self, id: &str) -> Option<(usize, String)>;
    /// The mutation points of each module (absolute paths in the mirror), and what could not
    /// be read.
    fn points(&mut self, modules: &[PathBuf]) -> (Points, Vec<String>);
    /// Runs `tests` with `module` (a mirror path) reading `text`, within `timeout`; the module
    /// reads as before afterwards.
    fn run(&mut self, module: &Path, text: &str, tests: &[String], timeout: Duration) -> Verdict;
    /// Another copy that runs mutants next to this one, as worker `n` (from 1). It is made
    /// after the trace and the unmutated run, so it knows what they learned and may start
    /// from their builds.
    fn fork(&self, n: usize) -> Result<Self, MutationError>
    where
        Self: Sized;
}

/// How long one mutant may take: this multiple of the unmutated run of the same tests (a
/// rebuild included where the language builds), and never less than the job's own timeout.
const TIMEOUT_FACTOR: u32 = 3;
/// The longest one mutant may take, whatever the unmutated run took.
const MAX_MUTANT_TIME: Duration = Duration::from_secs(300);

/// Analyses every suite of `jobs` through `copy`: one result per job, in order. The jobs share
/// their budgets, their sampling and their mutants; the mutants run on `copy` and on as many
/// forks of it as the first job has workers.
pub fn analyse<C: WorkCopy>(
    copy: &mut C,
    jobs: &[SuiteJob],
) -> Vec<Result<SuiteMutations, MutationError>> {
    let started = Instant::now();
    let Some(first) = jobs.first() else {
        return Vec::new();
    };
    let budget: Duration = jobs.iter().map(|j| j.budget).sum();
    let trace_timeout = first
        .trace_timeout
        .unwrap_or_else(|| (budget / 2).max(Duration::from_secs(60)));
    let traced = match copy.trace(trace_timeout) {
        Ok(t) => t,
        Err(e) => return failed_all(jobs, &e),
    };
    let mut out: Vec<SuiteMutations> = jobs.iter().map(|_| SuiteMutations::default()).collect();
    let mut owner: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for (id, reach) in &traced.tests {
        if let Some((suite, local)) = copy.suite_of(id) {
            if let Some(o) = out.get_mut(suite) {
                o.tests.insert(local.clone(), reach.clone());
                owner.insert(id.clone(), (suite, local));
            }
        }
    }
    for o in &mut out {
        o.problems.extend(traced.problems.iter().cloned());
    }
    let (points, problems) = copy.points(first.modules);
    for o in &mut out {
        o.problems.extend(problems.iter().cloned());
    }
    let (tasks, problems) = tasks(&traced, &owner, &points, first);
    out[0].problems.extend(problems);
    let Some(calibrating) = tasks.iter().find(|t| !t.tests.is_empty()) else {
        for task in &tasks {
            split(&mut out, &owner, task, None);
        }
        return out.into_iter().map(Ok).collect();
    };
    // The unmutated run of the first mutant's tests sets every mutant's timeout.
    let clock = Instant::now();
    let clean = copy.run(
        &calibrating.file,
        &calibrating.source,
        &calibrating.tests,
        MAX_MUTANT_TIME,
    );
    if clean != Verdict::Passed {
        for o in &mut out {
            o.problems.push(format!(
                "the unmutated code does not pass its tests here ({}): no mutant ran",
                describe(&clean)
            ));
        }
        return out.into_iter().map(Ok).collect();
    }
    let timeout = (clock.elapsed() * TIMEOUT_FACTOR)
        .max(first.per_mutant)
        .min(MAX_MUTANT_TIME);
    let running = tasks.iter().filter(|t| !t.tests.is_empty()).count();
    let mut forks = Vec::new();
    for n in 1..first.workers.min(running) {
        match copy.fork(n) {
            Ok(f) => forks.push(f),
            Err(e) => {
                out[0]
                    .problems
                    .push(format!("mutant worker {n} could not start: {e}"));
                break;
            }
        }
    }
    let mut workers: Vec<&mut C> = vec![copy];
    workers.extend(forks.iter_mut());
    let verdicts = run_all(&mut workers, &tasks, timeout, started + budget);
    let exhausted = verdicts.iter().any(Option::is_none);
    for (task, verdict) in tasks.iter().zip(&verdicts) {
        if let Some(verdict) = verdict {
            split(&mut out, &owner, task, verdict.as_ref());
        }
    }
    for o in &mut out {
        o.exhausted = exhausted;
    }
    out.into_iter().map(Ok).collect()
}

/// One sampled mutant: where it goes, its text, and the passing tests that reach its range.
struct Task {
    file: PathBuf,
    index: usize,
    point: Point,
    /// The module as it is (shared by its mutants), and as the mutant makes it.
    source: std::sync::Arc<String>,
    mutated: String,
    tests: Vec<String>,
}

/// The sampled mutants, in sampling order, with the tests each one runs.
fn tasks(
    traced: &SuiteMutations,
    owner: &BTreeMap<String, (usize, String)>,
    points: &Points,
    first: &SuiteJob,
) -> (Vec<Task>, Vec<String>) {
    let passing: Vec<&String> = traced
        .tests
        .iter()
        .filter(|(id, t)| t.outcome == "passed" && owner.contains_key(*id))
        .map(|(id, _)| id)
        .collect();
    // A test that runs any line of the mutated range may see the mutant: a replaced body's
    // first line may be a declaration no coverage tool counts.
    let covering = |file: &Path, lines: std::ops::RangeInclusive<u32>| -> Vec<String> {
        let key = file.to_string_lossy();
        passing
            .iter()
            .filter(|id| {
                traced.tests[id.as_str()]
                    .reached
                    .get(key.as_ref())
                    .is_some_and(|r| r.lines.iter().any(|l| lines.contains(l)))
            })
            .map(|id| id.to_string())
            .collect()
    };
    let counts: Vec<(PathBuf, usize)> = points.iter().map(|(f, p)| (f.clone(), p.len())).collect();
    let mut sources: BTreeMap<PathBuf, std::io::Result<std::sync::Arc<String>>> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut out = Vec::new();
    for (file, index) in sample::stratified(&counts, first.max_mutants, first.seed) {
        let Some(point) = points.get(&file).and_then(|p| p.get(index)) else {
            continue;
        };
        let source = match sources.get(&file) {
            Some(read) => read,
            None => {
                let read = std::fs::read_to_string(&file).map(std::sync::Arc::new);
                if let Err(e) = &read {
                    problems.push(format!("{}: {e}", file.display()));
                }
                sources.entry(file.clone()).or_insert(read)
            }
        };
        let Ok(source) = source.as_ref().map(std::sync::Arc::clone) else {
            continue;
        };
        let Some(mutated) = point.apply(&source) else {
            continue;
        };
        let last = point::line_of(&source, point.end.saturating_sub(1).max(point.start));
        let tests = covering(&file, point.line..=last.max(point.line));
        out.push(Task {
            file,
            index,
            point: point.clone(),
            source,
            mutated,
            tests,
        });
    }
    (out, problems)
}

/// Runs the tasks on the workers, each taking the next task left until none is or `deadline`
/// passes. A task's verdict: None when it did not run in time, Some(None) when no test reaches
/// it.
fn run_all<C: WorkCopy>(
    workers: &mut [&mut C],
    tasks: &[Task],
    timeout: Duration,
    deadline: Instant,
) -> Vec<Option<Option<Verdict>>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: Vec<Vec<(usize, Option<Verdict>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .iter_mut()
            .map(|worker| {
                let next = &next;
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    while Instant::now() < deadline {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let Some(task) = tasks.get(i) else { break };
                        let verdict = (!task.tests.is_empty())
                            .then(|| worker.run(&task.file, &task.mutated, &task.tests, timeout));
                        mine.push((i, verdict));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut verdicts: Vec<Option<Option<Verdict>>> = tasks.iter().map(|_| None).collect();
    for (i, verdict) in done.into_iter().flatten() {
        verdicts[i] = Some(verdict);
    }
    verdicts
}

/// One suite analysed through a family's `analyse_all` (for a family whose analysis is the
/// shared loop, `analyse` is this).
pub fn alone<A: SuiteAnalysis + ?Sized>(
    analysis: &A,
    job: &SuiteJob,
) -> Result<SuiteMutations, MutationError> {
    let mut all = analysis.analyse_all(std::slice::from_ref(job));
    all.pop().unwrap_or_else(|| {
        Err(MutationError::NoResult {
            suite: job.name.clone(),
            problem: "no result".into(),
        })
    })
}

/// The same error for every job: the work copy could not be made.
pub fn failed_all(
    jobs: &[SuiteJob],
    cause: &MutationError,
) -> Vec<Result<SuiteMutations, MutationError>> {
    let text = cause.to_string();
    jobs.iter()
        .map(|j| {
            Err(MutationError::NoResult {
                suite: j.name.clone(),
                problem: text.clone(),
            })
        })
        .collect()
}

/// One mutant's verdict, as each suite sees it: killed by its own failing tests, survived when
/// its tests reaching the line all passed, no coverage when none of its tests reaches it.
fn split(
    out: &mut [SuiteMutations],
    owner: &BTreeMap<String, (usize, String)>,
    task: &Task,
    verdict: Option<&Verdict>,
) {
    let (file, index, point) = (&task.file, task.index, &task.point);
    for (suite, o) in out.iter_mut().enumerate() {
        let mine: Vec<&(usize, String)> = task
            .tests
            .iter()
            .filter_map(|t| owner.get(t))
            .filter(|(s, _)| *s == suite)
            .collect();
        let mut mutant = Mutant {
            file: file.to_string_lossy().into_owned(),
            line: point.line,
            operator: point.operator.clone(),
            index,
            ..Mutant::default()
        };
        mutant.status = match verdict {
            _ if mine.is_empty() => "no_coverage".into(),
            None => "no_coverage".into(),
            Some(Verdict::Unviable(_)) => "error".into(),
            Some(Verdict::Passed) => "survived".into(),
            Some(Verdict::TimedOut) => {
                mutant.killed_by = mine.iter().map(|(_, l)| l.clone()).collect();
                "killed".into()
            }
            Some(Verdict::Failed(failed)) => {
                for (id, at) in failed {
                    if let Some((s, local)) = owner.get(id).filter(|(s, _)| *s == suite) {
                        let _ = s;
                        mutant.killed_by.push(local.clone());
                        if let Some(line) = at {
                            mutant.killed_at.insert(local.clone(), *line);
                        }
                    }
                }
                if mutant.killed_by.is_empty() {
                    "survived".into()
                } else {
                    "killed".into()
                }
            }
        };
        o.mutants.push(mutant);
    }
}

fn describe(v: &Verdict) -> String {
    match v {
        Verdict::Passed => "passed".into(),
        Verdict::Failed(f) => format!(
            "failing: {}",
            f.keys().take(3).cloned().collect::<Vec<_>>().join(", ")
        ),
        Verdict::TimedOut => "timed out".into(),
        Verdict::Unviable(why) => crate::util::tail_lines(why, 4),
    }
}

/// The first line number after `file_name:` in a failure report: where a test of that file
/// failed (`calc_test.go:23:`, `tests/calc.rs:12:5`, `calc.test.js:8:15`).
pub fn failed_at(report: &str, file_name: &str) -> Option<u32> {
    let name = Path::new(file_name).file_name()?.to_str()?;
    let mut rest = report;
    while let Some(at) = rest.find(name) {
        let after = &rest[at + name.len()..];
        let boundary = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '-'));
        if let (true, Some(digits)) = (boundary, after.strip_prefix(':')) {
            let n: String = digits.chars().take_while(|c| c.is_ascii_digit()).collect();
            if let Ok(line) = n.parse() {
                return Some(line);
            }
        }
        rest = &rest[at + name.len()..];
    }
    None
}

#[cfg(test)]
mod tests;
