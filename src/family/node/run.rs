//! One run of the layer (gate, tests, coverage) and one test's rerun.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::ctx::Ctx;
use super::NODE_COVERAGE;
use super::TESTS_DIR;
use crate::proc::Captured;
use crate::testing::framework::Framework;
use crate::testing::junit::parse_junit;
use crate::testing::lcov::parse_lcov;
use crate::testing::report::{CoverageReport, ReportParseError, TestCase, TestStatus};
use crate::testing::runner::{RunOutput, RunSpec};
use crate::util::tail_lines;

/// Runs the layer's tests once, with coverage when the toolchain has a coverage tool.
pub(super) fn run(spec: &RunSpec, framework: Framework) -> RunOutput {
    let started = Instant::now();
    let mut out = RunOutput::default();
    if let Some(problem) = runner_problem(spec, framework) {
        out.env_problem = Some(problem);
        return out;
    }
    let ctx = match Ctx::prepare(spec, framework, true) {
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

/// The project's own test files (`tests`, package-relative), run in a fresh copy of the package
/// by the project's framework, with coverage as a layer run measures it.
pub(super) fn baseline(spec: &RunSpec, framework: Framework, tests: &[String]) -> RunOutput {
    baseline_named(spec, framework, tests, None)
}

/// [`baseline`], of only the tests whose title ends with `title` when one is given (the
/// framework's name filter): one test's own coverage.
pub(super) fn baseline_named(
    spec: &RunSpec,
    framework: Framework,
    tests: &[String],
    title: Option<&str>,
) -> RunOutput {
    let started = Instant::now();
    let mut out = RunOutput::default();
    if let Some(problem) = runner_problem(spec, framework) {
        out.env_problem = Some(problem);
        return out;
    }
    let ctx = match Ctx::prepare(spec, framework, true) {
        Ok(ctx) => ctx,
        Err(e) => {
            out.env_problem = Some(format!("cannot prepare the package copy: {e}"));
            return out;
        }
    };
    let files: Vec<PathBuf> = tests
        .iter()
        .map(|t| ctx.copy.join(t))
        .filter(|f| f.is_file())
        .collect();
    ctx.run_tests_named(&files, title, &mut out);
    finish(out, started)
}

pub(super) fn finish(mut out: RunOutput, started: Instant) -> RunOutput {
    out.duration_s = started.elapsed().as_secs_f64();
    out
}

/// Why the framework's runner cannot run at all; None when it can (a missing `node` binary is
/// only found out by starting it).
pub(super) fn runner_problem(spec: &RunSpec, framework: Framework) -> Option<String> {
    let tools = spec.tools;
    match framework {
        Framework::NodeTest => None,
        _ if tools.runner_available => None,
        _ => Some(format!(
            "{framework} is not installed in the project: {}",
            tools
                .install_hint
                .as_deref()
                .unwrap_or("npm install --save-dev it")
        )),
    }
}

/// A command to run and where it leaves its reports.
pub(super) struct Plan {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub junit: PathBuf,
    /// The attribution reporter's output (node only).
    pub attribution: Option<PathBuf>,
    /// Where the coverage tool writes LCOV; None when coverage is not measured.
    pub lcov: Option<PathBuf>,
}

/// How coverage is measured for this run.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Coverage {
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
    pub(super) fn coverage(&self) -> Coverage {
        let tools = self.spec.tools;
        match tools.coverage_tool.as_deref() {
            _ if self.wrapper_blind() => Coverage::Off,
            Some(NODE_COVERAGE) if self.framework == Framework::NodeTest => Coverage::NodeBuiltin,
            Some("c8") => Coverage::C8,
            Some("nyc") => Coverage::Nyc,
            Some(t) if t.starts_with("jest") || t.starts_with("vitest") => Coverage::Framework,
            _ => Coverage::Off,
        }
    }

    /// c8 and nyc see nothing of jest's and vitest's runs: both load the code under test
    /// through their own module loaders (found on vitest: an empty LCOV).
    pub(super) fn wrapper_blind(&self) -> bool {
        let tools = self.spec.tools;
        matches!(tools.coverage_tool.as_deref(), Some("c8" | "nyc"))
            && matches!(self.framework, Framework::Jest | Framework::Vitest)
    }

    pub(super) fn coverage_off_reason(&self) -> String {
        let tools = self.spec.tools;
        if self.wrapper_blind() {
            return format!(
                "c8/nyc cannot see code {} loads; vitest needs @vitest/coverage-v8 \
                 (npm install --save-dev @vitest/coverage-v8), jest measures itself",
                self.framework
            );
        }
        tools.coverage_reason.clone()
    }

    pub(super) fn run_tests(&self, files: &[PathBuf], out: &mut RunOutput) {
        self.run_tests_named(files, None, out)
    }

    /// [`Ctx::run_tests`] of the tests whose title ends with `title` only, when given.
    pub(super) fn run_tests_named(
        &self,
        files: &[PathBuf],
        title: Option<&str>,
        out: &mut RunOutput,
    ) {
        self.run_tests_with(files, title, self.coverage(), out);
    }

    /// [`Ctx::run_tests_named`] with `coverage` as given (`Off` for a mutant's run).
    pub(super) fn run_tests_with(
        &self,
        files: &[PathBuf],
        title: Option<&str>,
        coverage: Coverage,
        out: &mut RunOutput,
    ) {
        let mut plan = self.plan(files, coverage);
        if let Some(title) = title {
            self.filter_by_title(&mut plan, files.len(), title, false);
        }
        out.command = plan.argv.clone();
        let run = match self.exec(&plan.argv, &plan.env) {
            Ok(run) => run,
            Err(stop) => {
                self.stopped(stop, out);
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
                    self.framework, run.status
                ));
                return;
            }
        }
        mark_deselected(&mut out.cases, self.spec.deselect);
        self.read_coverage(coverage, plan.lcov.as_deref(), out);
    }

    /// The whole output: the last lines as evidence, all of it under results/.
    pub(super) fn keep_output(&self, run: &Captured, out: &mut RunOutput) {
        // stdout first: with the spec reporter it ends with node's summary.
        let text = format!("{}{}", run.stdout, drop_reporter_noise(&run.stderr));
        out.output_tail = tail_lines(&text, 60);
        let (path, rel) = self.result_file("output", "txt");
        if crate::util::write_nofollow(&path, text.as_bytes()).is_ok() {
            out.reports.push(rel);
        }
    }

    /// JUnit cases, attributed to their files when the attribution reporter ran.
    pub(super) fn read_cases(
        &self,
        junit: &Path,
        attribution: Option<&Path>,
    ) -> Result<Vec<TestCase>, ReportParseError> {
        let mut cases = parse_junit(junit)?;
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
    pub(super) fn relativize(&self, text: &str) -> String {
        let root = format!("{}/", self.copy.display());
        text.replace(&format!("file://{root}"), "")
            .replace(&root, "")
    }

    pub(super) fn read_coverage(
        &self,
        coverage: Coverage,
        lcov: Option<&Path>,
        out: &mut RunOutput,
    ) {
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
    pub(super) fn package_coverage(&self, report: CoverageReport) -> CoverageReport {
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
pub(super) fn drop_reporter_noise(stderr: &str) -> String {
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
pub(super) fn mark_deselected(cases: &mut [TestCase], deselect: &[String]) {
    for case in cases.iter_mut().filter(|c| deselect.contains(&c.id)) {
        case.status = TestStatus::Skipped;
        case.message = Some("deselected (quarantined): it still ran, its result is ignored".into());
        case.detail = None;
    }
}
