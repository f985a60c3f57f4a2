//! The accept filter for test files an agent wrote, in every family: a candidate is kept only when
//! it is a test file of the project's framework, passes the family's static check (Rust and Go:
//! no file-system, process or network calls outside a temporary folder), loads or compiles,
//! passes every one of several runs in a row inside the sandbox, changes nothing under the
//! file-system watch, and adds coverage of the scope measured by the family's own tool. The runs
//! are the family's `Runner`, the executor's own, on a bench folder holding the layer's tests and
//! the one candidate. Rejections carry the reason.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::agents::answer::AnswerFile;
use crate::family::agent::Conventions;
use crate::family::Language;
use crate::sandbox::Sandbox;
use crate::team::error::{Result, RoleError};
use crate::team::project::{session_project, Project};
use crate::team::util::{layer_sandbox, time_left};
use crate::team::RoleContext;
use crate::testing::report::{TestCase, TestStatus};
use crate::testing::runner::{RunOutput, RunSpec, Runner};
use crate::util::mkdirs;

/// Runs a candidate must pass in a row to count as not flaky.
const ACCEPT_RUNS: usize = 5;
/// The longest one bench run may take.
const RUN_LIMIT: Duration = Duration::from_secs(300);

/// A path's last component, as text.
pub(super) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What a candidate must show to be kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Demand {
    /// A generated test: loads, passes every run, is safe, adds coverage.
    NewCoverage,
    /// A scenario's test traces its requirement: it loads and is safe; whether it passes is the
    /// executor's to judge (a failure may be the defect the scenario is for).
    Scenario,
    /// A repaired test: loads, passes every run, is safe.
    Passes,
}

/// Each candidate with None (accepted) or why it was rejected.
pub(super) fn accept_filter<'f>(
    ctx: &RoleContext,
    layer: &str,
    files: &'f [AnswerFile],
    scope: &[String],
    demand: Demand,
) -> Result<Vec<(&'f AnswerFile, Option<String>)>> {
    let project = session_project(ctx.session, ctx.repo);
    // What the layer's tests already cover: a candidate must add to it.
    let layer_dir = ctx.session.root.join("tests").join(layer);
    let keep: Vec<PathBuf> = if demand == Demand::NewCoverage {
        layer_files(&layer_dir)
    } else {
        Vec::new()
    };
    let bench = Bench::new(ctx, &project, layer, "accept", scope, (&layer_dir, &keep))?;
    let mut before = bench.before()?;
    let mut out = Vec::new();
    for f in files {
        let verdict = bench.judge(&file_name(&f.path), &f.content, &mut before, demand);
        out.push((f, verdict));
    }
    Ok(out)
}

/// None when `content`, a test file of the layer named `name`, loads, passes 5 runs in a row in
/// the sandbox and is safe; else why not (the executor's self-repair asks this of a repair).
pub(super) fn check_passes(
    ctx: &RoleContext,
    layer: &str,
    name: &str,
    content: &str,
) -> Option<String> {
    let project = session_project(ctx.session, ctx.repo);
    let checked = Bench::new(
        ctx,
        &project,
        layer,
        "repair-check",
        &[],
        (Path::new(""), &[]),
    )
    .and_then(|bench| {
        let mut before = bench.before()?;
        Ok(bench.judge(name, content, &mut before, Demand::Passes))
    });
    checked.unwrap_or_else(|e| Some(format!("could not be checked: {e}")))
}

/// The files of a layer's folder, relative to it (not hidden, not in caches).
fn layer_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let _ = crate::workspace::list_files(dir, Path::new(""), None, &mut |rel, _| {
        let hidden = rel
            .components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
        if !hidden {
            out.push(rel);
        }
    });
    out
}

/// What the bench's tests do without the candidate: their outcomes and the lines they reach.
pub(super) struct Before {
    cases: BTreeMap<String, TestStatus>,
    covered: BTreeMap<String, BTreeSet<u32>>,
}

/// The family's runner on a folder of its own: the layer's tests and one candidate at a time.
struct Bench<'c, 'a> {
    ctx: &'c RoleContext<'a>,
    runner: Box<dyn Runner>,
    language: &'static dyn Language,
    conventions: Conventions,
    project: &'c Project,
    layer: &'c str,
    /// The bench's test folder.
    dir: PathBuf,
    results: PathBuf,
    sandbox: Option<Sandbox>,
    /// The same runs under the file-system watch: the second look at what a candidate changes.
    watching: Option<Sandbox>,
    /// Repository-relative files whose coverage counts (empty: every file).
    scope: &'c [String],
    runs: Cell<usize>,
}

impl<'c, 'a> Bench<'c, 'a> {
    /// A bench for `purpose` on `layer`, holding copies of `keep.1`, files relative to the
    /// folder `keep.0` (the layer's tests).
    fn new(
        ctx: &'c RoleContext<'a>,
        project: &'c Project,
        layer: &'c str,
        purpose: &str,
        scope: &'c [String],
        keep: (&Path, &[PathBuf]),
    ) -> Result<Self> {
        let framework = project.framework.clone()?;
        let language = crate::family::of(framework.family());
        let runner = language.runner(framework);
        let bench = ctx
            .session
            .root
            .join("workspace")
            .join(format!("{purpose}-{layer}"));
        let _ = std::fs::remove_dir_all(&bench);
        let dir = bench.join("tests");
        let results = bench.join("results");
        mkdirs(&dir)?;
        let (from, files) = keep;
        for rel in files {
            let to = dir.join(rel);
            if let Some(parent) = to.parent() {
                mkdirs(parent)?;
            }
            let source = from.join(rel);
            let bytes =
                crate::util::read_regular(&source).map_err(RoleError::io("read", &source))?;
            crate::util::write_nofollow(&to, &bytes).map_err(RoleError::io("write", &to))?;
        }
        let name = format!("{purpose}-{layer}");
        let (writable, sandbox) =
            layer_sandbox(ctx, runner.as_ref(), &project.tools, layer, &name, &results)?;
        let watching = watching_sandbox(ctx, &format!("{name}-watch"), &writable);
        Ok(Bench {
            ctx,
            runner,
            language,
            conventions: language.conventions(framework, ctx.repo),
            project,
            layer,
            dir,
            results,
            sandbox,
            watching,
            scope,
            runs: Cell::new(0),
        })
    }

    /// One run of the bench's folder, in `sandbox`.
    fn run(&self, sandbox: Option<&Sandbox>) -> Result<RunOutput> {
        let n = self.runs.get() + 1;
        self.runs.set(n);
        let spec = RunSpec {
            repo: self.ctx.repo,
            session: &self.ctx.session.root,
            layer: self.layer,
            test_dir: self.dir.clone(),
            tools: &self.project.tools,
            results: self.results.clone(),
            run_no: format!("{n:03}"),
            timeout: time_left(self.ctx.deadline)?.min(RUN_LIMIT),
            deselect: &[],
            sandbox,
        };
        Ok(self.runner.run(&spec))
    }

    /// The bench without a candidate. It runs even with no test in it: cargo and go run the
    /// project's own tests beside the layer's, and those are not the candidate's (with nothing
    /// of the layer to run, a runner that runs nothing else says so, and nothing is covered).
    fn before(&self) -> Result<Before> {
        let mut before = Before {
            cases: BTreeMap::new(),
            covered: BTreeMap::new(),
        };
        let out = self.run(self.sandbox.as_ref())?;
        if !self.runner.has_tests(&self.dir) {
            if out.env_problem.is_none() {
                before.cases = out.cases.iter().map(|c| (c.id.clone(), c.status)).collect();
                before.covered = self.lines(&out);
            }
            return Ok(before);
        }
        let why = out
            .env_problem
            .clone()
            .or_else(|| out.coverage.is_none().then(|| coverage_problem(&out)));
        if let Some(why) = why {
            // Without it every candidate would "add coverage": that is no filter.
            return Err(RoleError::NoBaselineCoverage {
                layer: self.layer.to_string(),
                why,
            });
        }
        before.cases = out.cases.iter().map(|c| (c.id.clone(), c.status)).collect();
        before.covered = self.lines(&out);
        Ok(before)
    }

    /// None when the candidate `name` with `content` meets `demand` (then `before` takes in what
    /// it covers), else why not.
    fn judge(
        &self,
        name: &str,
        content: &str,
        before: &mut Before,
        demand: Demand,
    ) -> Option<String> {
        if !(self.conventions.is_test_file)(name) {
            return Some(format!(
                "not a {} test file name ({name}; expected {})",
                self.conventions.framework, self.conventions.file_name
            ));
        }
        let calls = self.language.unsafe_calls(content);
        if !calls.is_empty() {
            let shown: Vec<String> = calls.iter().take(3).map(|c| c.to_string()).collect();
            return Some(format!("unsafe: {} (static check)", shown.join("; ")));
        }
        // Beside, never over, a layer file of the same name (the generator writes it beside too).
        let name = (1..)
            .map(|k| match k {
                1 => name.to_string(),
                k => Conventions::numbered(name, k),
            })
            .find(|n| !self.dir.join(n).exists())
            .expect("some name is free");
        let name = name.as_str();
        let path = self.dir.join(name);
        if let Err(e) = std::fs::write(&path, content) {
            return Some(format!(
                "could not be checked: cannot write {}: {e}",
                path.display()
            ));
        }
        let verdict = self.trial(name, before, demand);
        let _ = std::fs::remove_file(&path);
        verdict
    }

    fn trial(&self, name: &str, before: &mut Before, demand: Demand) -> Option<String> {
        let runs = if demand == Demand::Scenario {
            1
        } else {
            ACCEPT_RUNS
        };
        let mut first: Option<RunOutput> = None;
        let mut passed = true;
        for i in 0..runs {
            let out = match self.run(self.sandbox.as_ref()) {
                Ok(out) => out,
                Err(e) => return Some(format!("did not run: {e}")),
            };
            if let Some(problem) = &out.env_problem {
                return Some(format!("did not run: {problem}"));
            }
            if let Some(effects) = effects(&out) {
                return Some(format!("unsafe: {effects} (outside its temporary folder)"));
            }
            if let Some(error) = out
                .load_errors
                .iter()
                .find(|l| file_name(Path::new(&l.file)) == name)
            {
                return Some(format!("did not load: {}", first_lines(&error.error, 3)));
            }
            let mine = own_cases(&out.cases, before);
            if mine.is_empty() {
                return Some("no test of it ran".into());
            }
            if let Some(broken) = out
                .cases
                .iter()
                .find(|c| before.cases.get(&c.id) == Some(&TestStatus::Passed) && failed(c))
            {
                return Some(format!("breaks {}, one of the layer's tests", broken.id));
            }
            let failing = mine.iter().find(|c| failed(c));
            if demand != Demand::Scenario {
                if let Some(case) = failing {
                    return Some(if i == 0 {
                        format!(
                            "failed: {}: {}",
                            case.id,
                            first_lines(case.message.as_deref().unwrap_or(""), 2)
                        )
                    } else {
                        format!("flaky: passed {i} run(s), then failed")
                    });
                }
            } else {
                passed = failing.is_none();
            }
            first.get_or_insert(out);
        }
        if let Some(why) = self.watched(before, passed) {
            return Some(why);
        }
        if demand != Demand::NewCoverage {
            return None;
        }
        let out = first.expect("at least one run");
        if out.coverage.is_none() {
            return Some(format!(
                "coverage could not be measured ({})",
                coverage_problem(&out)
            ));
        }
        let mut added = 0;
        for (file, lines) in self.lines(&out) {
            let known = before.covered.entry(file).or_default();
            added += lines.into_iter().filter(|l| known.insert(*l)).count();
        }
        if added == 0 {
            return Some("no new coverage of the scope".into());
        }
        None
    }

    /// One more run under the file-system watch: None when it changed nothing outside the run's
    /// own folders and the candidate's outcome is the sandboxed runs' (`passed`).
    fn watched(&self, before: &Before, passed: bool) -> Option<String> {
        let sandbox = self.watching.as_ref()?;
        let out = match self.run(Some(sandbox)) {
            Ok(out) => out,
            Err(e) => {
                return Some(format!(
                    "could not be checked under the file-system watch: {e}"
                ))
            }
        };
        let reports = sandbox.take_watch_reports();
        if let Some(error) = reports.iter().find_map(|r| r.error.clone()) {
            return Some(format!(
                "could not be checked under the file-system watch: {error}"
            ));
        }
        let changes: Vec<String> = reports
            .iter()
            .flat_map(|r| r.changes.iter().map(|c| c.describe()))
            .take(3)
            .collect();
        if !changes.is_empty() {
            return Some(format!(
                "unsafe: {} (seen by the file-system watch)",
                changes.join("; ")
            ));
        }
        if let Some(problem) = &out.env_problem {
            return Some(format!(
                "could not be checked under the file-system watch: {problem}"
            ));
        }
        let mine = own_cases(&out.cases, before);
        let passed_here = !mine.is_empty() && !mine.iter().any(|c| failed(c));
        (passed_here != passed).then(|| {
            format!(
                "unsafe: it {} in the sandbox but {} when its writes are real (diverted to a \
                 throwaway layer): its result depends on what the sandbox denies",
                if passed { "passes" } else { "fails" },
                if passed { "fails" } else { "passes" },
            )
        })
    }

    /// The lines each file in scope had run in `out`.
    fn lines(&self, out: &RunOutput) -> BTreeMap<String, BTreeSet<u32>> {
        let Some(report) = &out.coverage else {
            return BTreeMap::new();
        };
        report
            .files
            .iter()
            .filter(|f| self.scope.is_empty() || self.scope.contains(&f.path))
            .map(|f| (f.path.clone(), f.executed_lines.iter().copied().collect()))
            .collect()
    }
}

/// The cases of a run that the candidate brought: those the bench without it did not have.
fn own_cases<'o>(cases: &'o [TestCase], before: &Before) -> Vec<&'o TestCase> {
    cases
        .iter()
        .filter(|c| !before.cases.contains_key(&c.id))
        .collect()
}

fn failed(case: &TestCase) -> bool {
    matches!(case.status, TestStatus::Failed | TestStatus::Error)
}

/// What the run's tests changed outside their own temporary folders, as the language's hook
/// saw it (Python's audit events), in words.
fn effects(out: &RunOutput) -> Option<String> {
    let first: Vec<String> = out
        .effects
        .iter()
        .take(3)
        .map(|e| format!("{} {}", e.test, e.effect))
        .collect();
    (!first.is_empty()).then(|| first.join("; "))
}

fn coverage_problem(out: &RunOutput) -> String {
    out.coverage_problem
        .clone()
        .unwrap_or_else(|| "the runner measured none".into())
}

/// A watching sandbox for a bench's runs (the file-system watch), where the machine has one;
/// without it the executor's watch of the layer is the one check of what they change.
fn watching_sandbox(ctx: &RoleContext, name: &str, writable: &[PathBuf]) -> Option<Sandbox> {
    if !ctx.sandbox.enabled || crate::sandbox::watch::support().is_err() {
        return None;
    }
    let root = ctx
        .session
        .root
        .join("workspace")
        .join("sandbox")
        .join(name);
    Sandbox::watching(ctx.sandbox, &root, &[], writable).ok()
}

/// The first `n` non-empty lines of `text`, joined, at most 300 characters.
fn first_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(n)
        .collect();
    lines.join(" / ").chars().take(300).collect()
}
