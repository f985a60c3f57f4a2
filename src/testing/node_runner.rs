//! Runs a layer's JavaScript tests: node's built-in runner (`node --test`), or jest, vitest or
//! mocha when the project has them in node_modules. The target repository is never written to:
//! the package is copied into the session and the generated tests run inside that copy.
//!
//! Layout convention (the generator follows it): a layer's generated files are copied to
//! `<package copy>/tt-tests/<layer>/`, two folders below the package root, so a generated test
//! imports the code under test relative to the package root: `import { f } from '../../strings.js'`
//! (or `require('../../strings.js')` in a CommonJS package). The copy keeps the package's
//! package.json, so `"type": "module"` and node_modules resolve as they do in the repository.
//!
//! A run: copy the package (node_modules symlinked, not copied), copy the layer's files, an L0
//! gate (`node --check` per file; a file that does not parse is a [`LoadError`] and stays out),
//! then one test run writing JUnit (and LCOV when coverage is measured) under `results/`.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::junit::parse_junit;
use super::lcov::parse_lcov;
use super::report::{CoverageReport, TestCase, TestStatus};
use super::runner::{tail_lines, LoadError, RunOutput, RunSpec};
use crate::error::Error;
use crate::proc::{run_sandboxed, Captured};

/// Extensions of generated test files.
const TEST_EXTS: [&str; 4] = ["js", "mjs", "cjs", "ts"];
/// Folder of the package copy that holds the generated tests, one subfolder per layer.
const TESTS_DIR: &str = "tt-tests";
/// The coverage tool value that means node's own coverage (see toolchain.rs).
const NODE_COVERAGE: &str = "node --experimental-test-coverage";
/// Lines of a `node --check` error kept in a LoadError.
const LOAD_ERROR_LINES: usize = 8;
/// Bytes of a failed file's stderr kept as evidence of why it did not load.
const STDERR_LIMIT: usize = 4096;

/// The env problem when the node binary (`program`) cannot be started.
fn missing_node(program: &str) -> String {
    format!("{program} not found: install Node.js (apt-get install nodejs)")
}

/// A custom node:test reporter. Node 20's JUnit has no file attribute, names every classname
/// `test` and flattens away the suites, so ids would collide across files and describe blocks.
/// This reporter rebuilds the very tree node's JUnit reporter builds (same events, same rules:
/// lib/internal/test_runner/reporter/junit.js), so its leaves line up one-to-one, in order, with
/// the `<testcase>` elements, and writes what JUnit leaves out: file, line, enclosing suites.
/// It also keeps each file's stderr, which holds the error when a file fails to import.
const ATTRIBUTION_REPORTER: &str = r#"// Written by team-testing (src/testing/node_runner.rs).
export default async function* attribution(source) {
  let current = null;
  const roots = [];
  const stderr = new Map();
  const start = (data, synthetic) => {
    const node = { name: data.name, nesting: data.nesting, parent: current, children: [], synthetic };
    if (current) current.children.push(node); else roots.push(node);
    current = node;
  };
  for await (const event of source) {
    const data = event.data;
    if (event.type === 'test:stderr' && data.file) {
      const kept = stderr.get(data.file) ?? '';
      if (kept.length < 4096) stderr.set(data.file, kept + data.message);
      continue;
    }
    if (event.type === 'test:start') { start(data, false); continue; }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    if (!current) start({ name: 'root', nesting: 0 }, true);
    if (current.name !== data.name || current.nesting !== data.nesting) start(data, false);
    const test = current;
    if (current.nesting === data.nesting) current = current.parent;
    test.file = data.file ?? null;
    test.line = data.line ?? null;
  }
  function* leaves(node, suites) {
    if (node.children.length === 0) {
      yield JSON.stringify({ name: node.name, file: node.file ?? null, line: node.line ?? null, suites }) + '\n';
      return;
    }
    const inner = node.synthetic ? suites : [...suites, node.name];
    for (const child of node.children) yield* leaves(child, inner);
  }
  for (const root of roots) yield* leaves(root, []);
  for (const [file, text] of stderr) yield JSON.stringify({ stderr: file, text }) + '\n';
}
"#;

/// Runs the layer's tests once, with coverage when the toolchain has a coverage tool.
pub fn run(spec: &RunSpec) -> RunOutput {
    let started = Instant::now();
    let mut out = RunOutput::default();
    if let Some(problem) = runner_problem(spec) {
        out.env_problem = Some(problem);
        return out;
    }
    let ctx = match Ctx::prepare(spec, true) {
        Ok(ctx) => ctx,
        Err(e) => {
            out.env_problem = Some(format!("cannot prepare the package copy: {e}"));
            return out;
        }
    };
    let files = match ctx.gate(&mut out) {
        Some(files) => files,
        None => return finish(out, started),
    };
    if files.is_empty() {
        out.coverage_problem = Some("no loadable test files".into());
        return finish(out, started);
    }
    ctx.run_tests(&files, &mut out);
    finish(out, started)
}

/// Runs one test again (flaky detection); its status, or None when it could not run or the
/// test is no longer there.
pub fn rerun(spec: &RunSpec, case_id: &str) -> Option<TestStatus> {
    if runner_problem(spec).is_some() {
        return None;
    }
    let ctx = Ctx::prepare(spec, false).ok()?;
    let target = Target::of(&ctx, case_id);
    let plan = ctx.rerun_plan(&target)?;
    let child = ctx.exec(&plan.argv, &plan.env);
    let Child::Done(_) = child else { return None };
    let cases = ctx
        .read_cases(&plan.junit, plan.attribution.as_deref())
        .ok()?;
    target.status_in(&cases, case_id)
}

fn finish(mut out: RunOutput, started: Instant) -> RunOutput {
    out.duration_s = started.elapsed().as_secs_f64();
    out
}

/// Why the framework's runner cannot run at all; None when it can (a missing `node` binary is
/// only found out by starting it).
fn runner_problem(spec: &RunSpec) -> Option<String> {
    let tools = spec.tools;
    match tools.framework.as_str() {
        "node" | "" => None,
        "jest" | "vitest" | "mocha" if tools.runner_available => None,
        "jest" | "vitest" | "mocha" => Some(format!(
            "{} is not installed in the project: {}",
            tools.framework,
            tools
                .install_hint
                .as_deref()
                .unwrap_or("npm install --save-dev it")
        )),
        other => Some(format!("the node runner does not run {other} tests")),
    }
}

/// How a child process ended.
enum Child {
    Done(Captured),
    TimedOut,
    /// It could not start (missing program) or be waited for: the exact problem.
    Failed(String),
}

/// One run's places and clock.
struct Ctx<'a> {
    spec: &'a RunSpec<'a>,
    /// The package copy (canonical: node reports real paths).
    copy: PathBuf,
    /// `<copy>/tt-tests/<layer>`.
    layer_dir: PathBuf,
    /// Files of ours that must not sit inside the copy (reporter, rerun reports, c8 temp).
    scratch: PathBuf,
    deadline: Instant,
}

impl<'a> Ctx<'a> {
    /// Lays out the package copy. `fresh` (a run) recopies the package, since tests may have
    /// written into it; a rerun reuses it and only refreshes the layer's files.
    fn prepare(spec: &'a RunSpec<'a>, fresh: bool) -> io::Result<Ctx<'a>> {
        let deadline = Instant::now() + spec.timeout;
        // One copy per layer: layers may run at the same time and each run recopies.
        let base = spec.session.join("workspace");
        let copy = base.join(format!("node-{}", spec.layer));
        let scratch = base.join(format!("node-{}.tmp", spec.layer));
        if fresh || !copy.join("package.json").exists() {
            fresh_copy(spec.repo, &copy, spec.session)?;
        }
        std::fs::create_dir_all(&scratch)?;
        crate::util::write_nofollow(
            &scratch.join("attribution.mjs"),
            ATTRIBUTION_REPORTER.as_bytes(),
        )?;
        let copy = copy.canonicalize()?;
        let layer_dir = copy.join(TESTS_DIR).join(spec.layer);
        install_tests(&spec.test_dir, &layer_dir)?;
        Ok(Ctx {
            spec,
            copy,
            layer_dir,
            scratch: scratch.canonicalize()?,
            deadline,
        })
    }

    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Runs `argv` in the package copy with whatever is left of the run's time.
    fn exec(&self, argv: &[String], env: &[(String, String)]) -> Child {
        if self.left().is_zero() {
            return Child::TimedOut;
        }
        let args: Vec<&str> = argv.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        match run_sandboxed(
            self.spec.sandbox,
            &args,
            &self.copy,
            &env,
            None,
            self.left(),
        ) {
            Ok(captured) => Child::Done(captured),
            Err(Error::Io { cause, .. }) if cause.kind() == io::ErrorKind::NotFound => {
                let program = argv.first().map_or("", String::as_str);
                Child::Failed(if program == self.node() {
                    missing_node(program)
                } else {
                    format!("{program} not found")
                })
            }
            // After a successful start the only other error run_captured_env returns is its
            // timeout (an Environment error).
            Err(Error::Environment(_)) => Child::TimedOut,
            Err(e) => Child::Failed(e.to_string()),
        }
    }

    fn node(&self) -> String {
        match self.spec.tools.interpreter.as_str() {
            "" => "node".into(),
            other => other.into(),
        }
    }

    /// `<results>/<kind>-<run_no>.<ext>` and its session-relative name.
    fn result_file(&self, kind: &str, ext: &str) -> (PathBuf, String) {
        let name = format!("{kind}-{}.{ext}", self.spec.run_no);
        (self.spec.results.join(&name), format!("results/{name}"))
    }

    /// A generated file's path relative to the layer's test folder.
    fn rel(&self, path: &Path) -> String {
        path.strip_prefix(&self.layer_dir)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    /// A generated file's path relative to the copy (as the command line names it).
    fn in_copy(&self, path: &Path) -> String {
        path.strip_prefix(&self.copy)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }
}

// ---- workspace ---------------------------------------------------------------------------

/// Replaces `copy` with a copy of the package at `repo`.
fn fresh_copy(repo: &Path, copy: &Path, session: &Path) -> io::Result<()> {
    // Emptied, not replaced: the sandbox's rules name this very folder.
    if copy.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
        std::fs::remove_file(copy)?;
    }
    std::fs::create_dir_all(copy)?;
    for entry in std::fs::read_dir(copy)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    let repo = repo.canonicalize()?;
    // The session may live inside the repository; copying it would copy the copy.
    let session = session
        .canonicalize()
        .unwrap_or_else(|_| session.to_path_buf());
    copy_tree(&repo, copy, &session)
}

/// Copies a directory tree: skips .git and .workflow, recreates symlinks as symlinks, and links
/// every node_modules instead of copying it (large, and only read by tests).
fn copy_tree(from: &Path, to: &Path, session: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let source = entry.path();
        if name == ".git" || name == ".workflow" || source == session {
            continue;
        }
        let dest = to.join(&name);
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source)?, &dest)?;
        } else if kind.is_dir() && name == "node_modules" {
            std::os::unix::fs::symlink(&source, &dest)?;
        } else if kind.is_dir() {
            std::fs::create_dir(&dest)?;
            copy_tree(&source, &dest, session)?;
        } else if kind.is_file() {
            std::fs::copy(&source, &dest)?;
        }
    }
    Ok(())
}

/// The layer's generated files (`*.{js,mjs,cjs,ts}`, top level), sorted.
fn generated_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            p.extension()
                .is_some_and(|x| TEST_EXTS.iter().any(|t| x == *t))
        })
        .collect();
    files.sort();
    files
}

/// Replaces `<copy>/tt-tests/<layer>` with the layer's generated files.
fn install_tests(test_dir: &Path, layer_dir: &Path) -> io::Result<()> {
    if layer_dir.exists() {
        std::fs::remove_dir_all(layer_dir)?;
    }
    std::fs::create_dir_all(layer_dir)?;
    for file in generated_files(test_dir) {
        if let Some(name) = file.file_name() {
            crate::util::copy_nofollow(&file, &layer_dir.join(name))?;
        }
    }
    Ok(())
}

// ---- L0 gate -----------------------------------------------------------------------------

impl Ctx<'_> {
    /// `node --check` on every generated file: unparsable files become load errors, files the
    /// deselect list names by file are left out. None when the gate itself could not run (the
    /// problem is then in `out`).
    fn gate(&self, out: &mut RunOutput) -> Option<Vec<PathBuf>> {
        let mut kept = Vec::new();
        for file in generated_files(&self.layer_dir) {
            let rel = self.rel(&file);
            if self.spec.deselect.contains(&rel) {
                continue;
            }
            if !self.node_parses(&file) {
                kept.push(file);
                continue;
            }
            match self.exec(&[self.node(), "--check".into(), self.in_copy(&file)], &[]) {
                Child::Done(c) if c.success() => kept.push(file),
                Child::Done(c) => out.load_errors.push(LoadError {
                    error: self.load_error_text(&c.stderr, &file),
                    file: rel,
                    verdict: None,
                }),
                Child::TimedOut => {
                    out.timed_out = true;
                    return None;
                }
                Child::Failed(problem) => {
                    out.env_problem = Some(problem);
                    return None;
                }
            }
        }
        Some(kept)
    }

    /// Whether node itself must be able to parse `file`: always under node --test (node 20 runs
    /// no TypeScript, so a .ts file there is rightly a load error); under jest, vitest and mocha
    /// only plain JavaScript, since their loaders may compile TypeScript.
    fn node_parses(&self, file: &Path) -> bool {
        let plain = file
            .extension()
            .is_some_and(|x| x == "js" || x == "mjs" || x == "cjs");
        plain || self.spec.tools.framework == "node"
    }

    /// The first lines of node's complaint (no stack frames), with the copy's path of the file
    /// replaced by the layer-relative name.
    fn load_error_text(&self, stderr: &str, file: &Path) -> String {
        let text = stderr.replace(&*file.to_string_lossy(), &self.rel(file));
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .filter(|l| !l.trim_start().starts_with("at ") && !l.starts_with("Node.js v"))
            .take(LOAD_ERROR_LINES)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

// ---- the run -----------------------------------------------------------------------------

/// A command to run and where it leaves its reports.
struct Plan {
    argv: Vec<String>,
    env: Vec<(String, String)>,
    junit: PathBuf,
    /// The attribution reporter's output (node only).
    attribution: Option<PathBuf>,
    /// Where the coverage tool writes LCOV; None when coverage is not measured.
    lcov: Option<PathBuf>,
}

/// How coverage is measured for this run.
#[derive(Clone, Copy, PartialEq)]
enum Coverage {
    /// `node --test --experimental-test-coverage` with the lcov reporter.
    NodeBuiltin,
    /// A wrapper around the whole command (`c8 ...`, `nyc ...`).
    C8,
    Nyc,
    /// The test framework's own flags (jest, vitest).
    Framework,
    Off,
}

impl Ctx<'_> {
    fn coverage(&self) -> Coverage {
        let tools = self.spec.tools;
        match tools.coverage_tool.as_deref() {
            _ if self.wrapper_blind() => Coverage::Off,
            Some(NODE_COVERAGE) if tools.framework == "node" => Coverage::NodeBuiltin,
            Some("c8") => Coverage::C8,
            Some("nyc") => Coverage::Nyc,
            Some(t) if t.starts_with("jest") || t.starts_with("vitest") => Coverage::Framework,
            _ => Coverage::Off,
        }
    }

    /// c8 and nyc see nothing of jest's and vitest's runs: both load the code under test
    /// through their own module loaders (found on vitest: an empty LCOV).
    fn wrapper_blind(&self) -> bool {
        let tools = self.spec.tools;
        matches!(tools.coverage_tool.as_deref(), Some("c8" | "nyc"))
            && matches!(tools.framework.as_str(), "jest" | "vitest")
    }

    fn coverage_off_reason(&self) -> String {
        let tools = self.spec.tools;
        if self.wrapper_blind() {
            return format!(
                "c8/nyc cannot see code {} loads; vitest needs @vitest/coverage-v8 \
                 (npm install --save-dev @vitest/coverage-v8), jest measures itself",
                tools.framework
            );
        }
        tools.coverage_reason.clone()
    }

    fn run_tests(&self, files: &[PathBuf], out: &mut RunOutput) {
        let coverage = self.coverage();
        let plan = match self.plan(files, coverage) {
            Ok(plan) => plan,
            Err(problem) => {
                out.env_problem = Some(problem);
                return;
            }
        };
        out.command = plan.argv.clone();
        let run = match self.exec(&plan.argv, &plan.env) {
            Child::Done(run) => run,
            Child::TimedOut => {
                out.timed_out = true;
                return;
            }
            Child::Failed(problem) => {
                out.env_problem = Some(problem);
                return;
            }
        };
        out.exit_code = run.status;
        self.keep_output(&run, out);
        match self.read_cases(&plan.junit, plan.attribution.as_deref()) {
            Ok(cases) => {
                out.cases = cases;
                out.reports.push(self.result_file("junit", "xml").1);
            }
            Err(e) => {
                out.env_problem = Some(format!(
                    "{} exited with {:?} and its JUnit report is unusable: {e}",
                    self.spec.tools.framework, run.status
                ));
                return;
            }
        }
        mark_deselected(&mut out.cases, self.spec.deselect);
        self.read_coverage(coverage, plan.lcov.as_deref(), out);
    }

    /// The whole output: the last lines as evidence, all of it under results/.
    fn keep_output(&self, run: &Captured, out: &mut RunOutput) {
        // stdout first: with the spec reporter it ends with node's summary.
        let text = format!("{}{}", run.stdout, drop_reporter_noise(&run.stderr));
        out.output_tail = tail_lines(&text, 60);
        let (path, rel) = self.result_file("output", "txt");
        if crate::util::write_nofollow(&path, text.as_bytes()).is_ok() {
            out.reports.push(rel);
        }
    }

    /// JUnit cases, attributed to their files when the attribution reporter ran.
    fn read_cases(
        &self,
        junit: &Path,
        attribution: Option<&Path>,
    ) -> Result<Vec<TestCase>, String> {
        let mut cases = parse_junit(junit).map_err(|e| e.to_string())?;
        match attribution {
            Some(path) => self.attribute(&mut cases, path),
            None => self.attribute_by_report(&mut cases),
        }
        for case in &mut cases {
            case.message = case.message.as_deref().map(|m| self.relativize(m));
            case.detail = case.detail.as_deref().map(|d| self.relativize(d));
        }
        Ok(cases)
    }

    /// The copy's absolute paths in messages and tracebacks made package-relative
    /// (`tt-tests/L1-unit/x.test.js:6:10`): stable across sessions, recognisable as test code.
    fn relativize(&self, text: &str) -> String {
        let root = format!("{}/", self.copy.display());
        text.replace(&format!("file://{root}"), "")
            .replace(&root, "")
    }

    fn read_coverage(&self, coverage: Coverage, lcov: Option<&Path>, out: &mut RunOutput) {
        let Some(lcov) = lcov.filter(|_| coverage != Coverage::Off) else {
            out.coverage_problem = Some(self.coverage_off_reason());
            return;
        };
        let (kept, rel) = self.result_file("lcov", "info");
        if lcov != kept && crate::util::copy_nofollow(lcov, &kept).is_err() {
            out.coverage_problem = Some(format!("the coverage tool wrote no {}", lcov.display()));
            return;
        }
        match parse_lcov(&kept) {
            Ok(report) => {
                out.coverage = Some(self.package_coverage(report));
                out.reports.push(rel);
            }
            Err(e) => out.coverage_problem = Some(e.to_string()),
        }
    }

    /// Paths relative to the package root (so they match repo-relative paths), without the
    /// generated tests themselves.
    fn package_coverage(&self, report: CoverageReport) -> CoverageReport {
        let repo = self
            .spec
            .repo
            .canonicalize()
            .unwrap_or_else(|_| self.spec.repo.into());
        // node_modules is a symlink into the repo, and node reports real paths.
        let mut report = report.relative_to(&self.copy).relative_to(&repo);
        let ours = format!("{TESTS_DIR}/");
        report.files.retain(|f| !f.path.starts_with(&ours));
        report
    }
}

/// Node 20 warns about its own reporters when several are attached (MaxListenersExceeded):
/// noise, not evidence.
fn drop_reporter_noise(stderr: &str) -> String {
    let mut kept = String::new();
    let mut skip_hint = false;
    for line in stderr.split_inclusive('\n') {
        if line.contains("MaxListenersExceededWarning") && line.contains("TestsStream") {
            skip_hint = true;
            continue;
        }
        if skip_hint && line.starts_with("(Use `node --trace-warnings") {
            skip_hint = false;
            continue;
        }
        kept.push_str(line);
    }
    kept
}

/// Node 20 has no option to skip tests by name (`--test-skip-pattern` came in node 22, and a
/// negative `--test-name-pattern` does not work: the file's own test matches it, and a match
/// runs every test below). So quarantined tests still run; their results are recorded as
/// skipped. Whole files on the list are left out of the run (see [`Ctx::gate`]).
fn mark_deselected(cases: &mut [TestCase], deselect: &[String]) {
    for case in cases.iter_mut().filter(|c| deselect.contains(&c.id)) {
        case.status = TestStatus::Skipped;
        case.message = Some("deselected (quarantined): it still ran, its result is ignored".into());
        case.detail = None;
    }
}

// ---- commands ----------------------------------------------------------------------------

impl Ctx<'_> {
    fn plan(&self, files: &[PathBuf], coverage: Coverage) -> Result<Plan, String> {
        let junit = self.result_file("junit", "xml").0;
        let lcov_dir = self.scratch.join("coverage");
        // A repair iteration reruns under the same run number: an old report must not pass
        // for this run's when the tool dies before writing its own.
        let _ = std::fs::remove_dir_all(&lcov_dir);
        let _ = std::fs::remove_file(&junit);
        let _ = std::fs::remove_file(self.result_file("lcov", "info").0);
        let files: Vec<String> = files.iter().map(|f| self.in_copy(f)).collect();
        let mut plan = match self.spec.tools.framework.as_str() {
            "jest" => self.jest(&files, &junit, coverage, &lcov_dir)?,
            "vitest" => self.vitest(&files, &junit, coverage, &lcov_dir),
            "mocha" => self.mocha(&files, &junit),
            _ => self.node_test(&files, &junit, coverage == Coverage::NodeBuiltin),
        };
        self.wrap_coverage(&mut plan, coverage, &lcov_dir);
        Ok(plan)
    }

    /// `node --test` with JUnit, spec (stdout), attribution and, with node's own coverage, LCOV.
    fn node_test(&self, files: &[String], junit: &Path, coverage: bool) -> Plan {
        let attribution = self
            .scratch
            .join(format!("attribution-{}.jsonl", self.spec.run_no));
        let _ = std::fs::remove_file(&attribution);
        let mut argv = self.node_runner();
        argv.extend(self.reporters(junit, &attribution));
        argv.extend(
            ["--test-reporter=spec", "--test-reporter-destination=stdout"].map(String::from),
        );
        let mut lcov = None;
        if coverage {
            let path = self.result_file("lcov", "info").0;
            argv.push("--experimental-test-coverage".into());
            argv.push("--test-reporter=lcov".into());
            argv.push(format!("--test-reporter-destination={}", path.display()));
            lcov = Some(path);
        }
        argv.extend(files.iter().cloned());
        Plan {
            argv,
            env: Vec::new(),
            junit: junit.to_path_buf(),
            attribution: Some(attribution),
            lcov,
        }
    }

    /// `node --test` (the toolchain's runner argv when it has one).
    fn node_runner(&self) -> Vec<String> {
        let runner = &self.spec.tools.runner;
        if runner.is_empty() || self.spec.tools.framework != "node" {
            vec![self.node(), "--test".into()]
        } else {
            runner.clone()
        }
    }

    /// The JUnit and attribution reporters (every node run has both).
    fn reporters(&self, junit: &Path, attribution: &Path) -> Vec<String> {
        let reporter = self.scratch.join("attribution.mjs");
        vec![
            "--test-reporter=junit".into(),
            format!("--test-reporter-destination={}", junit.display()),
            format!("--test-reporter={}", reporter.display()),
            format!("--test-reporter-destination={}", attribution.display()),
        ]
    }

    /// jest with jest-junit (jest's own JSON is not a format we parse).
    fn jest(
        &self,
        files: &[String],
        junit: &Path,
        coverage: Coverage,
        lcov_dir: &Path,
    ) -> Result<Plan, String> {
        if !self.copy.join("node_modules/jest-junit").is_dir() {
            return Err(format!(
                "jest needs jest-junit to report results: npm install --save-dev jest-junit  (in {})",
                self.spec.repo.display()
            ));
        }
        let mut argv = self.spec.tools.runner.clone();
        argv.extend(["--ci", "--reporters=default", "--reporters=jest-junit"].map(String::from));
        let mut lcov = None;
        if coverage == Coverage::Framework {
            argv.extend(["--coverage".into(), "--coverageReporters=lcov".into()]);
            argv.push(format!("--coverageDirectory={}", lcov_dir.display()));
            lcov = Some(lcov_dir.join("lcov.info"));
        }
        // Array options (--reporters, --coverageReporters) swallow the plain words after them:
        // a boolean flag right before the files ends them.
        argv.push("--runTestsByPath".into());
        argv.extend(files.iter().cloned());
        let mut env = vec![
            (
                "JEST_JUNIT_OUTPUT_FILE".to_string(),
                junit.display().to_string(),
            ),
            ("JEST_JUNIT_ADD_FILE_ATTRIBUTE".into(), "true".into()),
            // classname = the enclosing describe blocks, name = the test: ids like node's.
            ("JEST_JUNIT_CLASSNAME".into(), "{classname}".into()),
            ("JEST_JUNIT_TITLE".into(), "{title}".into()),
            ("JEST_JUNIT_ANCESTOR_SEPARATOR".into(), " > ".into()),
            // Without it a test file that fails to load is missing from the report.
            ("JEST_JUNIT_REPORT_TEST_SUITE_ERRORS".into(), "true".into()),
        ];
        // jest runs ES modules only under node's VM-modules flag.
        if self.is_esm_package() {
            let inherited = std::env::var("NODE_OPTIONS").unwrap_or_default();
            let options = format!("{inherited} --experimental-vm-modules");
            env.push(("NODE_OPTIONS".into(), options.trim().to_string()));
        }
        Ok(Plan {
            argv,
            env,
            junit: junit.to_path_buf(),
            attribution: None,
            lcov,
        })
    }

    fn vitest(&self, files: &[String], junit: &Path, coverage: Coverage, lcov_dir: &Path) -> Plan {
        let mut argv = self.spec.tools.runner.clone();
        argv.extend(["run", "--reporter=default", "--reporter=junit"].map(String::from));
        argv.push(format!("--outputFile.junit={}", junit.display()));
        let mut lcov = None;
        if coverage == Coverage::Framework {
            // vitest writes no coverage for a failing run unless told to.
            argv.extend(
                [
                    "--coverage.enabled=true",
                    "--coverage.reporter=lcov",
                    "--coverage.reportOnFailure=true",
                ]
                .map(String::from),
            );
            argv.push(format!(
                "--coverage.reportsDirectory={}",
                lcov_dir.display()
            ));
            lcov = Some(lcov_dir.join("lcov.info"));
        }
        argv.extend(files.iter().cloned());
        Plan {
            argv,
            env: Vec::new(),
            junit: junit.to_path_buf(),
            attribution: None,
            lcov,
        }
    }

    /// mocha with its built-in xunit reporter (JUnit-shaped XML).
    fn mocha(&self, files: &[String], junit: &Path) -> Plan {
        let mut argv = self.spec.tools.runner.clone();
        argv.push("--reporter=xunit".into());
        argv.push(format!("--reporter-option=output={}", junit.display()));
        argv.extend(files.iter().cloned());
        Plan {
            argv,
            env: Vec::new(),
            junit: junit.to_path_buf(),
            attribution: None,
            lcov: None,
        }
    }

    /// c8 and nyc wrap the whole command and write `lcov.info` into `lcov_dir`.
    fn wrap_coverage(&self, plan: &mut Plan, coverage: Coverage, lcov_dir: &Path) {
        let bin = |name: &str| {
            self.copy
                .join("node_modules/.bin")
                .join(name)
                .display()
                .to_string()
        };
        let mut wrapper = match coverage {
            Coverage::C8 => vec![
                bin("c8"),
                "--reporter=lcovonly".into(),
                format!("--reports-dir={}", lcov_dir.display()),
                format!("--temp-directory={}", lcov_dir.join("tmp").display()),
            ],
            Coverage::Nyc => vec![
                bin("nyc"),
                "--reporter=lcovonly".into(),
                format!("--report-dir={}", lcov_dir.display()),
                format!("--temp-dir={}", lcov_dir.join("nyc_output").display()),
            ],
            _ => return,
        };
        wrapper.append(&mut plan.argv);
        plan.argv = wrapper;
        plan.lcov = Some(lcov_dir.join("lcov.info"));
    }

    fn is_esm_package(&self) -> bool {
        let text = std::fs::read_to_string(self.copy.join("package.json")).unwrap_or_default();
        serde_json::from_str::<serde_json::Value>(&text)
            .is_ok_and(|v| v.get("type").and_then(|t| t.as_str()) == Some("module"))
    }
}

// ---- attribution -------------------------------------------------------------------------

/// One line of the attribution reporter: a JUnit leaf, or a file's stderr.
#[derive(Deserialize)]
#[serde(untagged)]
enum Record {
    Leaf {
        name: String,
        file: Option<String>,
        line: Option<u32>,
        suites: Vec<String>,
    },
    Stderr {
        stderr: String,
        text: String,
    },
}

impl Ctx<'_> {
    /// Gives each node case its file, line and an id unique across files and describe blocks:
    /// `<file>::<suite> > <test>` (file relative to the layer's test folder). A file that failed
    /// to load (its "test" is named by its absolute path) gets the file alone as id and its
    /// stderr as evidence. Cases stay as parse_junit made them when the leaves do not line up.
    fn attribute(&self, cases: &mut [TestCase], path: &Path) {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let records: Vec<Record> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let mut leaves = Vec::new();
        let mut stderr = std::collections::HashMap::new();
        for record in records {
            match record {
                Record::Leaf {
                    name,
                    file,
                    line,
                    suites,
                } => leaves.push((name, file, line, suites)),
                Record::Stderr { stderr: file, text } => {
                    stderr.insert(file, text);
                }
            }
        }
        let aligned = leaves.len() == cases.len()
            && leaves.iter().zip(cases.iter()).all(|(l, c)| l.0 == c.name);
        if !aligned {
            return;
        }
        for (case, (name, file, line, suites)) in cases.iter_mut().zip(leaves) {
            let Some(file) = file else { continue };
            let rel = self.rel(Path::new(&file));
            case.file = Some(rel.clone());
            case.line = line;
            if name == file {
                self.file_failure(case, &rel, stderr.get(&file));
            } else {
                case.id = test_id(&rel, &suites, &name);
            }
        }
    }

    /// A file whose top level failed (import error, uncaught exception): node reports it as one
    /// test named by its path, with "test failed" and no cause; the cause is on its stderr.
    fn file_failure(&self, case: &mut TestCase, rel: &str, stderr: Option<&String>) {
        case.id = rel.to_string();
        case.name = rel.to_string();
        let Some(stderr) = stderr else { return };
        let stderr: String = stderr.chars().take(STDERR_LIMIT).collect();
        if let Some(error) = stderr.lines().find(|l| is_error_line(l)) {
            case.message = Some(error.trim().to_string());
        }
        let detail = case.detail.take().unwrap_or_default();
        case.detail = Some(format!("{}\n{detail}", stderr.trim_end()));
    }

    /// jest, vitest and mocha name the file themselves (file attribute, or vitest's classname):
    /// the same id shape as node's, `<file>::<suite> > <test>`, for the cases in our files.
    fn attribute_by_report(&self, cases: &mut [TestCase]) {
        for case in cases.iter_mut() {
            let from_file = case.file.as_deref().and_then(|f| self.ours(f));
            let from_class = case.classname.as_deref().and_then(|c| self.ours(c));
            let Some(rel) = from_file.or(from_class.clone()) else {
                continue;
            };
            // vitest: classname is the file, name the suites and test already joined by " > ";
            // jest (as configured in `jest`) and mocha: classname is the enclosing suites.
            let title = match (&case.classname, from_class) {
                (Some(suites), None) => format!("{suites} > {}", case.name),
                _ => case.name.clone(),
            };
            // A file that failed to load is named by its path: the file alone is its id.
            case.id = match self.ours(&case.name) {
                Some(_) => rel.clone(),
                None => format!("{rel}::{title}"),
            };
            case.file = Some(rel);
        }
    }

    /// The layer-relative name of one of our generated files, from an absolute or copy-relative
    /// path; None for any other file.
    fn ours(&self, path: &str) -> Option<String> {
        let copy = self.copy.to_string_lossy();
        let path = path
            .strip_prefix(&*copy)
            .map_or(path, |p| p.trim_start_matches('/'));
        let prefix = format!("{TESTS_DIR}/{}/", self.spec.layer);
        path.strip_prefix(&prefix).map(str::to_string)
    }
}

/// `SyntaxError: ...`, `Error [ERR_MODULE_NOT_FOUND]: ...`, `ReferenceError: ...`.
fn is_error_line(line: &str) -> bool {
    let head = line.trim_start().split(':').next().unwrap_or("");
    let word = head.split_whitespace().next().unwrap_or("");
    (word.ends_with("Error") || word.ends_with("Exception")) && line.contains(':')
}

/// `<file>::<suite> > <suite> > <test>`.
fn test_id(rel: &str, suites: &[String], name: &str) -> String {
    let mut path: Vec<&str> = suites.iter().map(String::as_str).collect();
    path.push(name);
    format!("{rel}::{}", path.join(" > "))
}

// ---- rerun -------------------------------------------------------------------------------

/// What a rerun runs, from a case id.
struct Target {
    /// Generated files to run (the case's own file when the id names one).
    files: Vec<PathBuf>,
    /// The test's title (`suite > test`), for the framework's name filter; None runs the whole
    /// file (a file-level failure).
    name: Option<String>,
}

impl Target {
    fn of(ctx: &Ctx, case_id: &str) -> Target {
        let file_of = |rel: &str| {
            let path = ctx.layer_dir.join(rel);
            (path.is_file() && !rel.is_empty()).then_some(path)
        };
        if let Some(file) = file_of(case_id) {
            return Target {
                files: vec![file],
                name: None,
            };
        }
        let (file, rest) = case_id.split_once("::").unwrap_or(("", case_id));
        match file_of(file) {
            Some(path) => Target {
                files: vec![path],
                name: Some(rest.to_string()),
            },
            // Not one of our ids (no attribution): every file, name after the last `::`.
            None => Target {
                files: generated_files(&ctx.layer_dir),
                name: Some(case_id.rsplit("::").next().unwrap_or(case_id).to_string()),
            },
        }
    }

    /// The rerun case's status; for a whole file, Failed while it still fails to load, else
    /// the worst status of its tests.
    fn status_in(&self, cases: &[TestCase], case_id: &str) -> Option<TestStatus> {
        if let Some(case) = cases.iter().find(|c| c.id == case_id) {
            return Some(case.status);
        }
        if self.name.is_some() || cases.is_empty() {
            return None;
        }
        let failed = cases
            .iter()
            .any(|c| matches!(c.status, TestStatus::Failed | TestStatus::Error));
        Some(if failed {
            TestStatus::Failed
        } else {
            TestStatus::Passed
        })
    }
}

impl Ctx<'_> {
    /// The command for a rerun: the case's file, a name filter, JUnit into the scratch folder
    /// (rerun reports are not kept), no coverage.
    fn rerun_plan(&self, target: &Target) -> Option<Plan> {
        if target.files.is_empty() {
            return None;
        }
        let junit = self.scratch.join("rerun-junit.xml");
        let _ = std::fs::remove_file(&junit);
        let files: Vec<String> = target.files.iter().map(|f| self.in_copy(f)).collect();
        let mut plan = match self.spec.tools.framework.as_str() {
            "jest" => self
                .jest(&files, &junit, Coverage::Off, &self.scratch)
                .ok()?,
            "vitest" => self.vitest(&files, &junit, Coverage::Off, &self.scratch),
            "mocha" => self.mocha(&files, &junit),
            _ => return Some(self.node_rerun(&files, junit, target.name.as_deref())),
        };
        if let Some(title) = &target.name {
            // jest -t, vitest -t and mocha --grep match the full title: suites and test joined
            // by spaces.
            let flag = match self.spec.tools.framework.as_str() {
                "mocha" => "--grep",
                _ => "-t",
            };
            let full = regex_escape(&title.replace(" > ", " "));
            // Before the files: jest's array options would swallow what follows them.
            let at = plan.argv.len() - files.len();
            plan.argv
                .splice(at..at, [flag.to_string(), format!("^{full}$")]);
        }
        Some(plan)
    }

    fn node_rerun(&self, files: &[String], junit: PathBuf, title: Option<&str>) -> Plan {
        let attribution = self.scratch.join("rerun-attribution.jsonl");
        let mut argv = self.node_runner();
        argv.extend(self.reporters(&junit, &attribution));
        if let Some(title) = title {
            // node matches each test's own name (suites always run to reach their tests), so
            // the pattern is the last segment, anchored.
            let name = title.rsplit(" > ").next().unwrap_or(title);
            argv.push(format!("--test-name-pattern=^{}$", regex_escape(name)));
        }
        argv.extend(files.iter().cloned());
        Plan {
            argv,
            env: Vec::new(),
            junit,
            attribution: Some(attribution),
            lcov: None,
        }
    }
}

/// `text` as a literal JavaScript regular expression.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.|?*+()[]{}/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::report::TestTotals;
    use crate::testing::toolchain::Toolchain;

    const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/node-pkg");

    const PASSING: &str = "import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { capitalize, slugify } from '../../strings.js';

describe('capitalize', () => {
  test('handles the empty string', () => assert.equal(capitalize(''), ''));
});
describe('slugify', () => {
  test('handles the empty string', () => assert.equal(slugify(''), ''));
  test('joins words', () => assert.equal(slugify('Hello, World!'), 'hello-world'));
});
";

    const FAILING: &str = "import { test } from 'node:test';
import assert from 'node:assert/strict';
import { truncate } from '../../strings.js';

test('truncate keeps a string of exactly max characters', () => {
  assert.equal(truncate('hello', 5), 'hello');
});
test('truncate cuts a long string', () => {
  assert.equal(truncate('hello world', 5), 'hell…');
});
";

    const BROKEN: &str =
        "import { test } from 'node:test';\ntest('broken', () => {\n  const x = ;\n});\n";

    const BAD_IMPORT: &str =
        "import { test } from 'node:test';\nimport { nope } from '../../strings.js';\ntest('never runs', () => {});\n";

    struct Fixture {
        _dir: tempfile::TempDir,
        repo: PathBuf,
        session: PathBuf,
        tools: Toolchain,
    }

    impl Fixture {
        /// The fixture package copied to a temp repo, and a session whose L1-unit layer holds
        /// `tests` (file name, source).
        fn new(tests: &[(&str, &str)]) -> Fixture {
            let dir = tempfile::tempdir().expect("tempdir");
            let repo = dir.path().join("repo");
            std::fs::create_dir_all(&repo).expect("repo");
            copy_tree(Path::new(FIXTURE), &repo, Path::new("/nonexistent")).expect("copy fixture");
            let session = dir.path().join("session");
            let layer = session.join("tests/L1-unit");
            std::fs::create_dir_all(&layer).expect("layer");
            std::fs::create_dir_all(session.join("results")).expect("results");
            for (name, text) in tests {
                std::fs::write(layer.join(name), text).expect("test file");
            }
            let tools = Toolchain {
                framework: "node".into(),
                interpreter: "node".into(),
                runner: vec!["node".into(), "--test".into()],
                runner_available: true,
                coverage_tool: Some(NODE_COVERAGE.into()),
                ..Default::default()
            };
            Fixture {
                _dir: dir,
                repo,
                session,
                tools,
            }
        }

        fn spec<'a>(&'a self, deselect: &'a [String], timeout: Duration) -> RunSpec<'a> {
            RunSpec {
                repo: &self.repo,
                session: &self.session,
                layer: "L1-unit",
                test_dir: self.session.join("tests/L1-unit"),
                tools: &self.tools,
                results: self.session.join("results"),
                run_no: "001".into(),
                timeout,
                deselect,
                sandbox: None,
            }
        }
    }

    /// Every file under `dir` with its bytes, sorted by path.
    fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    out.push((p.clone(), std::fs::read(&p).expect("read")));
                }
            }
        }
        out.sort();
        out
    }

    /// node's own summary: the `ℹ tests N` / `ℹ pass N` / ... lines of the spec reporter.
    fn node_summary(output: &str, key: &str) -> usize {
        let prefix = format!("ℹ {key} ");
        let line = output.lines().find(|l| l.starts_with(&prefix));
        let line = line.unwrap_or_else(|| panic!("no `{prefix}` line in:\n{output}"));
        line[prefix.len()..].trim().parse().expect("a count")
    }

    fn require_node() {
        let ok = std::process::Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            ok,
            "{} (these tests run the real node --test)",
            missing_node("node")
        );
    }

    #[test]
    fn runs_node_tests_with_junit_coverage_and_a_load_gate() {
        require_node();
        let fx = Fixture::new(&[
            ("passing.test.js", PASSING),
            ("failing.test.js", FAILING),
            ("broken.test.js", BROKEN),
        ]);
        let before = snapshot(&fx.repo);
        let out = run(&fx.spec(&[], Duration::from_secs(120)));
        assert_eq!(out.env_problem, None, "{}", out.output_tail);
        assert!(!out.timed_out);
        assert_eq!(out.exit_code, Some(1), "a test fails");

        // The syntax error is a load error and stays out of the run.
        assert_eq!(out.load_errors.len(), 1, "{:?}", out.load_errors);
        assert_eq!(out.load_errors[0].file, "broken.test.js");
        assert!(
            out.load_errors[0].error.contains("SyntaxError"),
            "{}",
            out.load_errors[0].error
        );
        assert!(
            out.load_errors[0].error.contains("broken.test.js:3"),
            "{}",
            out.load_errors[0].error
        );
        assert!(!out.command.iter().any(|a| a.contains("broken")));

        // JUnit counts equal node's own summary.
        let log = std::fs::read_to_string(fx.session.join("results/output-001.txt")).expect("log");
        let t = TestTotals::of(&out.cases);
        assert_eq!(t.total, node_summary(&log, "tests"));
        assert_eq!(t.passed, node_summary(&log, "pass"));
        assert_eq!(t.failed + t.errors, node_summary(&log, "fail"));
        assert_eq!(t.skipped, node_summary(&log, "skipped"));
        assert_eq!([t.total, t.passed, t.failed], [5, 4, 1]);

        // Ids name the file and the describe blocks, so equal test names stay apart.
        let ids: Vec<&str> = out.cases.iter().map(|c| c.id.as_str()).collect();
        assert!(
            ids.contains(&"passing.test.js::capitalize > handles the empty string"),
            "{ids:?}"
        );
        assert!(
            ids.contains(&"passing.test.js::slugify > handles the empty string"),
            "{ids:?}"
        );
        let failed = out
            .cases
            .iter()
            .find(|c| c.status == TestStatus::Failed)
            .expect("a failure");
        assert_eq!(
            failed.id,
            "failing.test.js::truncate keeps a string of exactly max characters"
        );
        assert_eq!(failed.file.as_deref(), Some("failing.test.js"));
        assert_eq!(failed.line, Some(5));
        assert!(
            failed.message.as_deref().unwrap_or("").contains("'hell…'"),
            "{failed:?}"
        );

        let detail = failed.detail.as_deref().unwrap_or("");
        assert!(
            detail.contains("at TestContext.<anonymous> (tt-tests/L1-unit/failing.test.js:6:"),
            "{detail}"
        );

        // Coverage of the package's code, repo-relative, without the generated tests.
        let coverage = out
            .coverage
            .as_ref()
            .unwrap_or_else(|| panic!("{:?}", out.coverage_problem));
        let strings = coverage
            .files
            .iter()
            .find(|f| f.path == "strings.js")
            .expect("strings.js covered");
        assert!(
            strings.lines_total >= 15 && strings.lines_covered > 10,
            "{strings:?}"
        );
        assert!(strings.lines_covered < strings.lines_total || strings.missing_lines.is_empty());
        assert!(strings.branches_total > 0);
        assert!(
            coverage.files.iter().all(|f| !f.path.contains("tt-tests")),
            "{coverage:?}"
        );

        assert_eq!(
            out.reports,
            [
                "results/output-001.txt",
                "results/junit-001.xml",
                "results/lcov-001.info"
            ]
        );
        assert!(out.output_tail.contains("ℹ fail 1"), "{}", out.output_tail);
        assert!(!out.output_tail.contains("MaxListenersExceededWarning"));
        assert!(out.duration_s > 0.0);
        assert_eq!(snapshot(&fx.repo), before, "the repository is unchanged");

        // The failing test fails again on its own; the passing one passes.
        let spec = fx.spec(&[], Duration::from_secs(60));
        assert_eq!(rerun(&spec, &failed.id), Some(TestStatus::Failed));
        assert_eq!(
            rerun(&spec, "passing.test.js::slugify > handles the empty string"),
            Some(TestStatus::Passed)
        );
        assert_eq!(rerun(&spec, "passing.test.js::no such test"), None);
        assert_eq!(
            snapshot(&fx.repo),
            before,
            "reruns leave the repository alone too"
        );
    }

    #[test]
    fn a_file_that_fails_to_import_carries_its_error() {
        require_node();
        let fx = Fixture::new(&[
            ("bad-import.test.js", BAD_IMPORT),
            ("failing.test.js", FAILING),
        ]);
        let deselect = vec!["failing.test.js::truncate cuts a long string".to_string()];
        let out = run(&fx.spec(&deselect, Duration::from_secs(120)));
        assert!(
            out.load_errors.is_empty(),
            "node --check passes it: imports resolve at run time"
        );
        let file = out
            .cases
            .iter()
            .find(|c| c.id == "bad-import.test.js")
            .expect("file-level case");
        assert_eq!(file.status, TestStatus::Failed);
        let message = file.message.as_deref().unwrap_or("");
        assert!(
            message.starts_with("SyntaxError:") && message.contains("nope"),
            "{message}"
        );
        assert!(file
            .detail
            .as_deref()
            .unwrap_or("")
            .contains("tt-tests/L1-unit/bad-import.test.js:2"));
        assert!(!file
            .detail
            .as_deref()
            .unwrap_or("")
            .contains(&*fx.session.to_string_lossy()));
        let skipped = out
            .cases
            .iter()
            .find(|c| c.id == deselect[0])
            .expect("deselected case");
        assert_eq!(skipped.status, TestStatus::Skipped);
        let spec = fx.spec(&[], Duration::from_secs(60));
        assert_eq!(rerun(&spec, "bad-import.test.js"), Some(TestStatus::Failed));
    }

    #[test]
    fn a_hanging_test_times_out_and_a_missing_node_is_an_env_problem() {
        require_node();
        let hang = "import { test } from 'node:test';\ntest('hangs', () => new Promise(() => setInterval(() => {}, 1000)));\n";
        let fx = Fixture::new(&[("hang.test.js", hang)]);
        let started = Instant::now();
        let out = run(&fx.spec(&[], Duration::from_secs(3)));
        assert!(out.timed_out, "{out:?}");
        assert!(started.elapsed() < Duration::from_secs(20));

        let mut fx = Fixture::new(&[("passing.test.js", PASSING)]);
        fx.tools.interpreter = "tt-no-such-node".into();
        fx.tools.runner = vec!["tt-no-such-node".into(), "--test".into()];
        let out = run(&fx.spec(&[], Duration::from_secs(30)));
        let problem = out.env_problem.unwrap_or_default();
        assert_eq!(
            problem,
            "tt-no-such-node not found: install Node.js (apt-get install nodejs)"
        );
        let mut fx = Fixture::new(&[("passing.test.js", PASSING)]);
        fx.tools.framework = "jest".into();
        fx.tools.runner_available = false;
        let out = run(&fx.spec(&[], Duration::from_secs(30)));
        assert!(out
            .env_problem
            .unwrap_or_default()
            .starts_with("jest is not installed"));
    }

    #[test]
    fn helpers() {
        assert_eq!(
            regex_escape("a (b) [c]/d.e*"),
            "a \\(b\\) \\[c\\]\\/d\\.e\\*"
        );
        assert_eq!(
            test_id("x.test.js", &["a".into(), "b".into()], "t"),
            "x.test.js::a > b > t"
        );
        assert!(is_error_line("SyntaxError: The requested module"));
        assert!(is_error_line(
            "Error [ERR_MODULE_NOT_FOUND]: Cannot find module"
        ));
        assert!(!is_error_line("    at ModuleJob._instantiate"));
        let noise = "(node:1) MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 11 end listeners added to [TestsStream].\n(Use `node --trace-warnings ...` to show where the warning was created)\nreal\n";
        assert_eq!(drop_reporter_noise(noise), "real\n");
    }

    fn case(classname: Option<&str>, name: &str, file: Option<&str>) -> TestCase {
        TestCase {
            id: String::new(),
            name: name.into(),
            classname: classname.map(String::from),
            file: file.map(String::from),
            line: None,
            status: TestStatus::Failed,
            duration_s: None,
            message: None,
            detail: None,
        }
    }

    /// jest, vitest and mocha are not installed here; their report shapes (checked by hand with
    /// jest 30 + jest-junit, vitest 3, mocha 10) get node-shaped ids, and reruns filter by title.
    #[test]
    fn other_frameworks_get_node_shaped_ids_and_title_filters() {
        let mut fx = Fixture::new(&[("a.test.js", PASSING)]);
        fx.tools.framework = "jest".into();
        fx.tools.runner = vec!["jest".into()];
        let spec = fx.spec(&[], Duration::from_secs(30));
        let ctx = Ctx::prepare(&spec, true).expect("workspace");
        let abs = ctx.layer_dir.join("a.test.js").display().to_string();
        let mut cases = vec![
            // vitest: classname is the file, name the title path.
            case(Some("tt-tests/L1-unit/a.test.js"), "s > t", None),
            // jest (jest-junit as configured) and mocha: file attribute, classname the suites.
            case(Some("s"), "t", Some(&abs)),
            case(None, "top", Some("tt-tests/L1-unit/a.test.js")),
            // jest's "Test suite failed to run" and vitest's load failure name the file.
            case(
                Some("Test suite failed to run"),
                "tt-tests/L1-unit/a.test.js",
                Some(&abs),
            ),
            // Not ours: untouched.
            case(Some("other"), "x", Some("test/strings.test.js")),
        ];
        ctx.attribute_by_report(&mut cases);
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "a.test.js::s > t",
                "a.test.js::s > t",
                "a.test.js::top",
                "a.test.js",
                ""
            ]
        );
        assert!(cases[..4]
            .iter()
            .all(|c| c.file.as_deref() == Some("a.test.js")));

        let target = Target::of(&ctx, "a.test.js::s > t (1)");
        assert_eq!(target.files, [ctx.layer_dir.join("a.test.js")]);
        // jest needs jest-junit, which this copy lacks.
        assert!(ctx.rerun_plan(&target).is_none());
        std::fs::create_dir_all(ctx.copy.join("node_modules/jest-junit")).expect("fake jest-junit");
        let plan = ctx.rerun_plan(&target).expect("plan");
        let tail: Vec<&str> = plan
            .argv
            .iter()
            .rev()
            .take(4)
            .rev()
            .map(String::as_str)
            .collect();
        assert_eq!(
            tail,
            [
                "--runTestsByPath",
                "-t",
                r"^s t \(1\)$",
                "tt-tests/L1-unit/a.test.js"
            ]
        );
        let vm = (
            "NODE_OPTIONS".to_string(),
            "--experimental-vm-modules".to_string(),
        );
        assert!(plan.env.contains(&vm));

        let whole = Target::of(&ctx, "a.test.js");
        assert!(whole.name.is_none());
        let mut passed = case(None, "x", None);
        passed.status = TestStatus::Passed;
        assert_eq!(
            whole.status_in(&[passed], "a.test.js"),
            Some(TestStatus::Passed)
        );
        assert_eq!(whole.status_in(&[], "a.test.js"), None);
        let foreign = Target::of(&ctx, "test::plain name");
        assert_eq!(foreign.name.as_deref(), Some("plain name"));
        assert_eq!(foreign.files.len(), 1);
    }
}
