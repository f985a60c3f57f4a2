//! JavaScript/TypeScript's suite analysis under mutation: one copy of the package (as a layer
//! run makes it: `node_modules` linked, every generated layer's files under `tt-tests/<layer>/`),
//! each test file traced alone with the project's framework and coverage (node's runners
//! measure coverage per process, so a file's tests share its reach), and each mutant written
//! into the copy and run with the project's framework, coverage off, over the test files that
//! reach its line; then the file is put back. ESM, CommonJS and TypeScript alike: the mutant is
//! source text, loaded however the project loads its code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::ctx::Ctx;
use super::run::Coverage;
use super::trace::{title_of, NodeTrace};
use super::warm::{Warm, WarmMocha};
use super::TESTS_DIR;
use crate::family::mutants::{self, failed_at, Points, Verdict, WorkCopy};
use crate::family::suites::{
    MutationError, SuiteAnalysis, SuiteJob, SuiteMutations, SuiteTrace, TestReach,
};
use crate::testing::framework::Framework;
use crate::testing::report::TestStatus;
use crate::testing::runner::{RunOutput, RunSpec};
use crate::testing::toolchain::Toolchain;

/// JavaScript/TypeScript as the analyst's mutation analysis sees it.
pub struct NodeSuites;

/// How long the copy may take to prepare, and a traced file to run, at most.
const PREPARE: Duration = Duration::from_secs(600);

impl SuiteAnalysis for NodeSuites {
    fn unready(&self, tools: &Toolchain) -> Option<String> {
        NodeTrace.unready(tools)
    }

    fn sandbox_reads(&self, tools: &Toolchain, repo: &Path) -> Vec<PathBuf> {
        NodeTrace.sandbox_reads(tools, repo)
    }

    fn analyse(&self, job: &SuiteJob) -> Result<SuiteMutations, MutationError> {
        mutants::alone(self, job)
    }

    fn analyse_all(&self, jobs: &[SuiteJob]) -> Vec<Result<SuiteMutations, MutationError>> {
        let Some(first) = jobs.first() else {
            return Vec::new();
        };
        let framework = Framework::parse(&first.tools.framework).unwrap_or(Framework::NodeTest);
        let scratch = std::path::absolute(first.scratch).unwrap_or_else(|_| first.scratch.into());
        let none = scratch.join("node-mutation-none");
        let results = scratch.join("node-mutation-results");
        for dir in [&none, &results] {
            if let Err(cause) = std::fs::create_dir_all(dir) {
                let e = MutationError::Write {
                    path: dir.clone(),
                    cause,
                };
                return mutants::failed_all(jobs, &e);
            }
        }
        if let Err(e) = link_node_modules(first) {
            return mutants::failed_all(jobs, &e);
        }
        // Each worker's copy is named after its layer: `node-mutation`, `node-mutation-1`, …
        let layers: Vec<String> = (0..first.workers.max(1))
            .map(|n| match n {
                0 => "mutation".to_string(),
                n => format!("mutation-{n}"),
            })
            .collect();
        let spec = RunSpec {
            repo: first.mirror,
            session: &scratch,
            layer: &layers[0],
            test_dir: none,
            tools: first.tools,
            results,
            run_no: "mutation".into(),
            timeout: PREPARE,
            deselect: &[],
            sandbox: first.sandbox,
        };
        let ctx = match Ctx::prepare(&spec, framework, true) {
            Ok(ctx) => ctx,
            Err(cause) => {
                let e = MutationError::Write {
                    path: scratch.join("workspace/node-mutation"),
                    cause,
                };
                return mutants::failed_all(jobs, &e);
            }
        };
        // Bound to a name: the copy (and its resident mocha) must end before `layers` does.
        let analysed = match NodeCopy::new(ctx, jobs, &layers) {
            Ok(mut copy) => mutants::analyse(&mut copy, jobs),
            Err(e) => mutants::failed_all(jobs, &e),
        };
        analysed
    }

    fn test_files(&self, dir: &Path) -> Vec<PathBuf> {
        super::workspace::generated_files(dir)
    }

    fn is_own_language(&self, path: &str) -> bool {
        let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
        ["js", "mjs", "cjs", "ts", "mts", "cts", "jsx", "tsx"].contains(&ext)
    }

    fn is_test_file(&self, path: &str) -> bool {
        NodeTrace.is_test_file(path)
    }

    fn is_code(&self, path: &str) -> bool {
        NodeTrace.is_code(path) && !path.starts_with(&format!("{TESTS_DIR}/"))
    }

    /// A package's command is code its tests reach like any other.
    fn is_entry_point(&self, _path: &str) -> bool {
        false
    }

    /// `names` are titles as the runner reports them (`suite > test`); a generated file's blocks
    /// are its tests' own names.
    fn remove_tests(&self, source: &str, names: &BTreeSet<String>) -> Option<String> {
        let names: BTreeSet<String> = names
            .iter()
            .map(|n| n.rsplit(" > ").next().unwrap_or(n).to_string())
            .collect();
        let (left, _) = super::edit::remove_tests(source, &names);
        (super::edit::test_count(&left) > 0).then_some(left)
    }

    fn prune_assertions(
        &self,
        source: &str,
        noticed: &[(&str, &BTreeSet<u32>)],
    ) -> Option<(String, Vec<String>)> {
        crate::family::mutants::prune::prune(source, noticed, &JS_CHECKS)
    }
}

/// The checks the generators write: one `assert.…(…);` or `expect(…)…;` per line inside a
/// `test('name', …) => {` (a test inside a `describe` is named `suite > name`).
const JS_CHECKS: crate::family::mutants::prune::Checks = crate::family::mutants::prune::Checks {
    opens: |line, name| {
        let name = name.rsplit(" > ").next().unwrap_or(name);
        ["test(", "it("].iter().any(|open| {
            line.strip_prefix(open).is_some_and(|rest| {
                ['\'', '"', '`'].iter().any(|q| {
                    rest.strip_prefix(*q)
                        .and_then(|r| r.strip_prefix(name))
                        .is_some_and(|r| r.starts_with(*q))
                })
            })
        })
    },
    check_at: |lines, i| {
        let l = lines[i].strip_prefix("await ").unwrap_or(lines[i]);
        ((l.starts_with("assert.") || l.starts_with("expect(")) && l.ends_with(");")).then_some(i)
    },
};

/// The mirror has no node_modules (never copied): the repository's, or those fetched into the
/// session, linked, as the trace links them.
fn link_node_modules(job: &SuiteJob) -> Result<(), MutationError> {
    let linked = job.mirror.join("node_modules");
    let installed = crate::testing::deps::node_modules(job.repo, job.session);
    if let Some(installed) = installed.filter(|_| std::fs::symlink_metadata(&linked).is_err()) {
        std::os::unix::fs::symlink(&installed, &linked).map_err(|cause| MutationError::Write {
            path: linked.clone(),
            cause,
        })?;
    }
    Ok(())
}

/// The package copy with every suite's test files.
struct NodeCopy<'a> {
    ctx: Ctx<'a>,
    jobs: &'a [SuiteJob<'a>],
    /// Every worker's layer name, which names its copy.
    layers: &'a [String],
    mirror: PathBuf,
    /// A test file of the copy (copy-relative) -> (its suite, its name in the suite).
    owners: BTreeMap<String, (usize, String)>,
    /// Traced test id -> its file (copy-relative).
    file_of: BTreeMap<String, String>,
    /// The package's own test files: their lines are no code a mutant goes into.
    own_tests: BTreeSet<String>,
    /// mocha kept loaded for the mutants' runs, where the project allows it.
    warm: Option<WarmMocha<'a>>,
    /// Whether the unmutated run is done.
    ran_once: bool,
}

impl<'a> NodeCopy<'a> {
    fn new(
        ctx: Ctx<'a>,
        jobs: &'a [SuiteJob<'a>],
        layers: &'a [String],
    ) -> Result<Self, MutationError> {
        let mut owners = BTreeMap::new();
        for (n, job) in jobs.iter().enumerate() {
            if job.own_config {
                for f in &job.files {
                    owners.insert(f.clone(), (n, f.clone()));
                }
                continue;
            }
            let dir = ctx.copy.join(TESTS_DIR).join(&job.name);
            super::workspace::install_tests(&job.cwd, &dir).map_err(|cause| {
                MutationError::Write {
                    path: dir.clone(),
                    cause,
                }
            })?;
            for f in &job.files {
                owners.insert(format!("{TESTS_DIR}/{}/{f}", job.name), (n, f.clone()));
            }
        }
        let mirror = std::path::absolute(jobs[0].mirror).unwrap_or_else(|_| jobs[0].mirror.into());
        let framework = Some(ctx.framework);
        let own_tests = crate::testing::project_files::of_repo(&mirror, framework)
            .tests
            .into_iter()
            .collect();
        let warm = WarmMocha::new(&ctx);
        Ok(NodeCopy {
            warm,
            ran_once: false,
            ctx,
            jobs,
            layers,
            mirror,
            owners,
            file_of: BTreeMap::new(),
            own_tests,
        })
    }

    /// The test files' run in the copy within `timeout`.
    fn run_files(&mut self, files: &[String], coverage: Coverage, timeout: Duration) -> RunOutput {
        let paths: Vec<PathBuf> = files.iter().map(|f| self.ctx.copy.join(f)).collect();
        let mut out = RunOutput::default();
        if let (Coverage::Off, Some(warm)) = (coverage, self.warm.as_mut()) {
            if let Warm::Ran = warm.run(&self.ctx, &paths, timeout, &mut out) {
                return out;
            }
            out = RunOutput::default();
        }
        self.ctx.set_deadline(Instant::now() + timeout);
        self.ctx.run_tests_with(&paths, None, coverage, &mut out);
        out
    }

    /// The id of `case` when it ran from `file`.
    fn id_of(file: &str, case: &crate::testing::report::TestCase) -> String {
        format!("{file}::{}", title_of(file, case))
    }
}

impl WorkCopy for NodeCopy<'_> {
    fn trace(&mut self, timeout: Duration) -> Result<SuiteMutations, MutationError> {
        let deadline = Instant::now() + timeout;
        let mut out = SuiteMutations::default();
        let files: Vec<String> = self.owners.keys().cloned().collect();
        for file in files {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                out.problems.push(format!("out of time before {file}"));
                break;
            }
            let coverage = self.ctx.coverage();
            let run = self.run_files(std::slice::from_ref(&file), coverage, left);
            if let Some(problem) = &run.env_problem {
                out.problems.push(format!("{file}: {problem}"));
                continue;
            }
            let reached: BTreeMap<String, _> = NodeTrace
                .reach_of(&run, &self.mirror, &self.own_tests)
                .into_iter()
                .collect();
            for case in &run.cases {
                let id = Self::id_of(&file, case);
                let outcome = match case.status {
                    TestStatus::Passed => "passed",
                    TestStatus::Skipped => "skipped",
                    _ => "failed",
                };
                self.file_of.insert(id.clone(), file.clone());
                out.tests.insert(
                    id,
                    TestReach {
                        outcome: outcome.into(),
                        reached: reached.clone(),
                        detail: case.detail.clone().or_else(|| case.message.clone()),
                    },
                );
            }
        }
        Ok(out)
    }

    fn suite_of(&self, id: &str) -> Option<(usize, String)> {
        let file = self.file_of.get(id)?;
        let (suite, local) = self.owners.get(file)?;
        let rest = id.strip_prefix(&format!("{file}::"))?;
        Some((*suite, format!("{local}::{rest}")))
    }

    fn points(&mut self, modules: &[PathBuf]) -> (Points, Vec<String>) {
        let mut out = BTreeMap::new();
        let mut problems = Vec::new();
        for m in modules {
            match std::fs::read_to_string(m) {
                Ok(source) => {
                    let typescript = m
                        .extension()
                        .is_some_and(|x| matches!(x.to_str(), Some("ts" | "mts" | "cts" | "tsx")));
                    out.insert(m.clone(), super::mutants::points(&source, typescript));
                }
                Err(e) => problems.push(format!("{}: {e}", m.display())),
            }
        }
        (out, problems)
    }

    fn run(&mut self, module: &Path, text: &str, tests: &[String], timeout: Duration) -> Verdict {
        // An ES module stays loaded in the resident mocha once imported: its mutants run in a
        // mocha of their own.
        let esm = module.extension().is_some_and(|e| e == "mjs" || e == "mts");
        let warm = if esm { self.warm.take() } else { None };
        let verdict = self.run_mutant(module, text, tests, timeout);
        if warm.is_some() {
            self.warm = warm;
        }
        // The first run is the unmutated code's: if it fails in the resident mocha, the
        // resident is not to be trusted here, and a mocha per run decides from now on.
        if !self.ran_once {
            self.ran_once = true;
            if verdict != Verdict::Passed && self.warm.take().is_some() {
                return self.run_mutant(module, text, tests, timeout);
            }
        }
        verdict
    }

    /// A fork knows the trace already, and starts after the unmutated run.
    fn fork(&self, n: usize) -> Result<Self, MutationError> {
        let mut copy = self.fork_copy(n)?;
        copy.ran_once = true;
        copy.warm = copy.warm.filter(|_| self.warm.is_some());
        Ok(copy)
    }
}

impl NodeCopy<'_> {
    /// `text` in place of `module` in the copy, and the test files that reach it run.
    fn run_mutant(
        &mut self,
        module: &Path,
        text: &str,
        tests: &[String],
        timeout: Duration,
    ) -> Verdict {
        let Ok(rel) = module.strip_prefix(&self.mirror) else {
            return Verdict::Unviable(format!("{} is not in the mirror", module.display()));
        };
        let target = self.ctx.copy.join(rel);
        let original = match std::fs::read(&target) {
            Ok(o) => o,
            Err(e) => return Verdict::Unviable(format!("{}: {e}", target.display())),
        };
        if let Err(e) = crate::util::write_nofollow(&target, text.as_bytes()) {
            return Verdict::Unviable(format!("{}: {e}", target.display()));
        }
        let wanted: BTreeSet<&str> = tests.iter().map(String::as_str).collect();
        let files: Vec<String> = tests
            .iter()
            .filter_map(|t| self.file_of.get(t).cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        // One file per run when several: a case's file is then known for sure.
        let mut failed = BTreeMap::new();
        let mut timed_out = false;
        let mut problem = None;
        let deadline = Instant::now() + timeout;
        // The project's own suite needs one kill, not all its killers: once one of its files
        // failed, its others do not run.
        let mut own_killed = false;
        for file in &files {
            let own = self
                .owners
                .get(file)
                .is_some_and(|(suite, _)| self.jobs[*suite].own_config);
            if own && own_killed {
                continue;
            }
            let failed_before = failed.len();
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                timed_out = true;
                break;
            }
            let run = self.run_files(std::slice::from_ref(file), Coverage::Off, left);
            if run.timed_out {
                timed_out = true;
                break;
            }
            if let Some(p) = run.env_problem {
                problem = Some(p);
                break;
            }
            let mine: Vec<&String> = tests
                .iter()
                .filter(|t| self.file_of.get(*t) == Some(file))
                .collect();
            let mut any_failed = false;
            for case in &run.cases {
                if !matches!(case.status, TestStatus::Failed | TestStatus::Error) {
                    continue;
                }
                any_failed = true;
                let id = Self::id_of(file, case);
                if wanted.contains(id.as_str()) {
                    let detail = case.detail.clone().unwrap_or_default();
                    failed.insert(id, failed_at(&detail, file));
                }
            }
            // The file failed to load, or failed outside its tests: each of its tests saw it.
            let broken = run.cases.is_empty() && run.exit_code != Some(0);
            if broken || (any_failed && !mine.iter().any(|t| failed.contains_key(*t))) {
                for t in mine {
                    failed.entry(t.clone()).or_insert(None);
                }
            }
            own_killed |= own && failed.len() > failed_before;
        }
        let restored = crate::util::write_nofollow(&target, &original);
        if let Err(e) = restored {
            return Verdict::Unviable(format!("cannot restore {}: {e}", target.display()));
        }
        if !failed.is_empty() {
            Verdict::Failed(failed)
        } else if timed_out {
            Verdict::TimedOut
        } else if let Some(p) = problem {
            Verdict::Unviable(p)
        } else {
            Verdict::Passed
        }
    }

    /// A package copy of its own, with the same test files, that knows what the trace learned.
    fn fork_copy(&self, n: usize) -> Result<Self, MutationError> {
        let Some(layer) = self.layers.get(n) else {
            return Err(MutationError::NoResult {
                suite: self.jobs[0].name.clone(),
                problem: format!("no copy was planned for mutant worker {n}"),
            });
        };
        let mut spec = self.ctx.spec.clone();
        spec.layer = layer;
        spec.run_no = layer.clone();
        let ctx = Ctx::prepare(&spec, self.ctx.framework, true).map_err(|cause| {
            MutationError::Write {
                path: spec.session.join("workspace").join(format!("node-{layer}")),
                cause,
            }
        })?;
        let mut copy = NodeCopy::new(ctx, self.jobs, self.layers)?;
        copy.file_of = self.file_of.clone();
        Ok(copy)
    }
}
