//! Rust's tests traced one by one, for the test-fix cycle: each test runs alone under
//! `cargo llvm-cov` (`-- --exact <path>`), which gives its libtest outcome and failure report and
//! an LCOV of the lines it ran. The instrumented build lands in a target folder of the trace's
//! scratch, so it is built once and every later test only runs.
//!
//! Test ids are `<target>::<libtest path>`: `lib::shapes::tests::area` for the library's unit
//! tests, the target's root file otherwise (`tests/calc.rs::adds`, `src/main.rs::tests::parse`,
//! `crates/geo/src/lib.rs::tests::area` for another package of a workspace).
//!
//! Which files are test files: `tests/**/*.rs`, and the crate roots `src/lib.rs` and
//! `src/main.rs`. The fixer finds a project's tests by walking its files through
//! [`SuiteTrace::is_test_file`], and unit tests live inside the code's own files, which a path
//! alone cannot tell; the crate roots stand for them (a root in the selection runs every unit
//! test of its target). Their code is still code: reach and `is_code` count it.

mod direct;
mod test_code;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use serde::Deserialize;

use super::gate::{first_errors, ERROR_LINES};
use super::libtest::parse_libtest;
use super::run::interleave;
use crate::family::suites::{
    MutationError, Reach, SuiteMutations, SuiteTrace, TestReach, TraceJob,
};
use crate::proc::Captured;
use crate::testing::exec::{Exec, ExecError};
use crate::testing::lcov::parse_lcov;
use crate::testing::report::{CoverageReport, TestStatus};
use crate::testing::toolchain::Toolchain;
use crate::util::tail_lines;

/// The coverage tool the trace needs (as the toolchain names it).
const LLVM_COV: &str = "cargo-llvm-cov";
/// The target token of the root package's library (`src/lib.rs`).
pub(super) const LIB: &str = "lib";
/// Lines of a crashed test's output kept as its failure report.
const CRASH_LINES: usize = 30;

/// Rust as the test-fix cycle sees it.
pub struct RustTrace;

impl SuiteTrace for RustTrace {
    fn unready(&self, tools: &Toolchain) -> Option<String> {
        if !tools.runner_available {
            return Some(
                "cargo is not installed: install Rust with rustup (https://rustup.rs)".into(),
            );
        }
        (tools.coverage_tool.as_deref() != Some(LLVM_COV)).then(|| {
            format!(
                "per-test coverage of Rust tests needs cargo-llvm-cov ({}): rustup component add llvm-tools-preview && cargo install cargo-llvm-cov --locked",
                tools.coverage_reason
            )
        })
    }

    /// Nothing beyond what every sandbox reads: the toolchain roots (rustup, cargo's home and
    /// its registry) are added by the sandbox itself, as for the cargo runner.
    fn sandbox_reads(&self, _tools: &Toolchain, _repo: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    fn trace(&self, job: &TraceJob) -> Result<SuiteMutations, MutationError> {
        let cargo = Cargo::new(job)?;
        let mut out = SuiteMutations::default();
        match trace_all(self, &cargo, job, &mut out) {
            Ok(()) => Ok(out),
            // What ran so far is kept: the fixer works with a partial trace.
            Err(stop @ ExecError::TimedOut { .. }) => {
                out.problems.push(format!(
                    "the trace ran out of its {}s after {} tests; the rest did not run ({stop})",
                    job.timeout.as_secs(),
                    out.tests.len()
                ));
                Ok(out)
            }
            Err(cause) => Err(MutationError::Exec {
                suite: job.name.clone(),
                cause,
            }),
        }
    }

    /// Test files: `tests/**/*.rs` and the crate roots that hold the unit tests (see the
    /// module's comment).
    fn is_test_file(&self, path: &str) -> bool {
        let Some(dirs) = rust_dirs(path) else {
            return false;
        };
        let name = path.rsplit('/').next().unwrap_or(path);
        match dirs.iter().position(|d| matches!(*d, "src" | "tests")) {
            Some(i) if dirs[i] == "tests" => true,
            Some(i) => i + 1 == dirs.len() && matches!(name, "lib.rs" | "main.rs"),
            None => false,
        }
    }

    /// `.rs` files under a package's `src/` (not tests/, benches/, examples/, build.rs).
    fn is_code(&self, path: &str) -> bool {
        rust_dirs(path).is_some_and(|dirs| {
            dirs.iter()
                .take_while(|d| !matches!(**d, "tests" | "benches" | "examples"))
                .any(|d| *d == "src")
        })
    }

    /// The session's generated Rust tests are not carried into the fix suite yet: none.
    fn test_files(&self, _dir: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// The file that declares the test's module, guessed from its path: `lib::tests::x` ->
    /// `src/lib.rs`, `lib::shapes::tests::x` -> `src/shapes.rs` (or `src/shapes/mod.rs`, which
    /// a path cannot tell); an integration test's own file.
    fn file_of(&self, id: &str) -> String {
        match split_id(id) {
            Some((target, path)) => module_file(&root_of(target), path),
            None => id.split("::").next().unwrap_or(id).to_string(),
        }
    }

    /// From libtest's report: the backtrace's frames (with `RUST_BACKTRACE=1`, which the trace
    /// sets), outermost first, then each `panicked at` location.
    fn frames(&self, detail: &str) -> Vec<String> {
        let mut backtrace: Vec<String> = Vec::new();
        let mut panics: Vec<String> = Vec::new();
        for line in detail.lines().map(str::trim) {
            if let Some((_, after)) = line.split_once("panicked at ") {
                // `src/lib.rs:17:5:` now, `'msg', src/lib.rs:17:5` before Rust 1.73.
                let loc = after.trim_end_matches(':').rsplit(' ').next().unwrap_or("");
                panics.extend(file_line(loc));
            } else if let Some(loc) = line.strip_prefix("at ") {
                backtrace.extend(file_line(loc));
            }
        }
        let mut out: Vec<String> = Vec::new();
        for at in backtrace.into_iter().rev().chain(panics) {
            let file = at.rsplit_once(':').map_or(at.as_str(), |(f, _)| f);
            if self.is_code(file) && !out.contains(&at) {
                out.push(at);
            }
        }
        out
    }
}

/// The folders of a relative `.rs` path outside target/ and hidden folders (the fixer's
/// carried tests); None for any other path.
fn rust_dirs(path: &str) -> Option<Vec<&str>> {
    let rel = Path::new(path);
    if !path.ends_with(".rs") || !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    let mut dirs: Vec<&str> = path.split('/').collect();
    dirs.pop();
    let hidden = dirs.iter().any(|d| d.starts_with('.') || *d == "target");
    (!hidden).then_some(dirs)
}

/// `src/lib.rs:17:5` (or `./src/lib.rs:17:5`) -> `src/lib.rs:17`.
fn file_line(loc: &str) -> Option<String> {
    let mut parts = loc.rsplitn(3, ':');
    let _column: u32 = parts.next()?.parse().ok()?;
    let line: u32 = parts.next()?.parse().ok()?;
    let file = parts.next()?;
    let file = file.strip_prefix("./").unwrap_or(file);
    (!file.is_empty()).then(|| format!("{file}:{line}"))
}

/// `lib::tests::x` -> (`lib`, `tests::x`); a target is `lib` or a root file's path.
pub(super) fn split_id(id: &str) -> Option<(&str, &str)> {
    id.split_once("::")
        .filter(|(target, path)| (*target == LIB || target.ends_with(".rs")) && !path.is_empty())
}

/// The root file of a target token.
pub(super) fn root_of(target: &str) -> String {
    if target == LIB {
        "src/lib.rs".into()
    } else {
        target.into()
    }
}

/// The file of a test's module: a crate root declares its modules beside it (`src/a/b.rs` for
/// `a::b::…`); the module path is cut at the first `tests`/`test` module, which is inline. An
/// integration test's modules are its own file's.
fn module_file(root: &str, path: &str) -> String {
    let (dir, name) = root.rsplit_once('/').unwrap_or(("", root));
    if !matches!(name, "lib.rs" | "main.rs") {
        return root.to_string();
    }
    let mut modules: Vec<&str> = path.split("::").collect();
    modules.pop();
    let modules: Vec<&str> = modules
        .into_iter()
        .take_while(|m| !matches!(*m, "tests" | "test"))
        .collect();
    if modules.is_empty() {
        return root.to_string();
    }
    let file = format!("{}.rs", modules.join("/"));
    if dir.is_empty() {
        file
    } else {
        format!("{dir}/{file}")
    }
}

/// One target cargo can test alone.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Target {
    /// How ids name it: `lib`, or its root file (mirror-relative).
    pub token: String,
    /// Its root file (mirror-relative).
    pub root: String,
    /// What selects it on cargo's command line (`--lib`, `--test calc`, `-p geo`).
    pub args: Vec<String>,
    /// Its package's folder (mirror-relative, empty at the root): where cargo runs its tests.
    pub dir: String,
}

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<Package>,
}

#[derive(Deserialize)]
struct Package {
    name: String,
    manifest_path: PathBuf,
    targets: Vec<MetaTarget>,
}

#[derive(Deserialize)]
struct MetaTarget {
    name: String,
    kind: Vec<String>,
    src_path: PathBuf,
}

/// The testable targets (libraries, binaries, integration tests) of `cargo metadata`'s JSON,
/// with their roots relative to the mirror (`roots`: its paths, as given and canonical).
pub(super) fn targets_of(json: &str, roots: &[&Path]) -> Result<Vec<Target>, serde_json::Error> {
    let meta: Metadata = serde_json::from_str(json)?;
    let several = meta.packages.len() > 1;
    let mut out = Vec::new();
    for package in &meta.packages {
        let dir = package
            .manifest_path
            .parent()
            .and_then(|d| roots.iter().find_map(|r| d.strip_prefix(r).ok()))
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        for t in &package.targets {
            let Some(root) = roots
                .iter()
                .find_map(|r| t.src_path.strip_prefix(r).ok())
                .map(|p| p.to_string_lossy().into_owned())
            else {
                continue;
            };
            let mut args: Vec<String> = match t.kind.first().map(String::as_str) {
                Some("lib" | "rlib" | "dylib" | "cdylib" | "staticlib" | "proc-macro") => {
                    vec!["--lib".into()]
                }
                Some("bin") => vec!["--bin".into(), t.name.clone()],
                Some("test") => vec!["--test".into(), t.name.clone()],
                _ => continue,
            };
            if several {
                args.extend(["--package".into(), package.name.clone()]);
            }
            let token = if args[0] == "--lib" && root == "src/lib.rs" {
                LIB.to_string()
            } else {
                root.clone()
            };
            out.push(Target {
                token,
                root,
                args,
                dir: dir.clone(),
            });
        }
    }
    Ok(out)
}

/// What of each target to run: every test (None) or the named ones.
type Plan = BTreeMap<usize, Option<BTreeSet<String>>>;

/// The selection as targets: ids go to their target, a target's root file (and an empty
/// selection) runs all of it. Helper modules under tests/ are no targets and need no run.
fn plan(selection: &[String], targets: &[Target], problems: &mut Vec<String>) -> Plan {
    let mut plan = Plan::new();
    if selection.is_empty() {
        plan.extend((0..targets.len()).map(|i| (i, None)));
    }
    for entry in selection {
        if let Some((token, path)) = split_id(entry) {
            match targets.iter().position(|t| t.token == token) {
                Some(i) => {
                    if let Some(names) = plan.entry(i).or_insert_with(|| Some(BTreeSet::new())) {
                        names.insert(path.to_string());
                    }
                }
                None => problems.push(format!("{entry}: the crate has no target {token}")),
            }
        } else if let Some(i) = targets.iter().position(|t| t.root == *entry) {
            plan.insert(i, None);
        } else if !is_test_helper(entry) {
            problems.push(format!("{entry}: no test target of the crate runs it"));
        }
    }
    plan
}

/// A file in a folder under tests/ (`tests/common/mod.rs`): a module the test targets share.
fn is_test_helper(path: &str) -> bool {
    let dirs: Vec<&str> = path.split('/').collect();
    dirs.iter()
        .position(|d| *d == "tests")
        .is_some_and(|i| i + 2 < dirs.len())
}

/// `cargo` in the mirror, sandboxed, on the trace's clock, building into our scratch.
struct Cargo<'a> {
    program: String,
    exec: Exec<'a>,
    /// `<scratch>/rust-trace`: the LCOV of each test.
    reports: PathBuf,
    /// Where cargo-llvm-cov leaves the raw profiles of a run (in the target folder).
    profiles: PathBuf,
    /// The mirror as given and canonical (paths in cargo's output may be either).
    mirror: PathBuf,
    real: PathBuf,
    /// The toolchain's LLVM tools, once looked for; None when a test runs under cargo-llvm-cov.
    llvm: std::cell::OnceCell<Option<super::gen::coverage::LlvmTools>>,
}

impl<'a> Cargo<'a> {
    fn new(job: &TraceJob<'a>) -> Result<Self, MutationError> {
        // Absolute: CARGO_TARGET_DIR must not depend on the child's cwd.
        let scratch = std::path::absolute(job.scratch).unwrap_or_else(|_| job.scratch.into());
        let reports = scratch.join("rust-trace");
        std::fs::create_dir_all(&reports).map_err(|cause| MutationError::Write {
            path: reports.clone(),
            cause,
        })?;
        let target = scratch.join("rust-target");
        let profiles = target.join("llvm-cov-target");
        let target_dir = target.to_string_lossy().into_owned();
        let program = match job.tools.interpreter.as_str() {
            "" => "cargo".to_string(),
            c => c.to_string(),
        };
        let env = [
            ("CARGO_TARGET_DIR", target_dir.as_str()),
            // Plain text for the parsers, and a backtrace for `frames`.
            ("CARGO_TERM_COLOR", "never"),
            ("RUST_BACKTRACE", "1"),
        ];
        Ok(Cargo {
            program,
            exec: Exec {
                sandbox: job.sandbox,
                cwd: job.mirror.to_path_buf(),
                env: env
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                deadline: Instant::now() + job.timeout,
            },
            reports,
            profiles,
            mirror: job.mirror.to_path_buf(),
            real: std::fs::canonicalize(job.mirror).unwrap_or_else(|_| job.mirror.into()),
            llvm: std::cell::OnceCell::new(),
        })
    }

    fn run(
        &self,
        args: &[&str],
        more: &[String],
        test_args: &[&str],
    ) -> Result<Captured, ExecError> {
        let mut argv = vec![self.program.clone()];
        argv.extend(args.iter().map(|a| a.to_string()));
        argv.extend(more.iter().cloned());
        argv.push("--".into());
        argv.extend(test_args.iter().map(|a| a.to_string()));
        self.exec.run(&argv)
    }

    /// The raw profiles earlier runs left (`*.profraw`).
    fn remove_profiles(&self) {
        let Ok(entries) = std::fs::read_dir(&self.profiles) else {
            return;
        };
        for e in entries.flatten() {
            if e.path().extension().is_some_and(|x| x == "profraw") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    fn targets(&self) -> Result<Vec<Target>, Step> {
        let mut argv = vec![self.program.clone()];
        argv.extend(["metadata", "--no-deps", "--format-version", "1"].map(String::from));
        let run = self.exec.run(&argv)?;
        if !run.success() {
            return Err(Step::Problem(format!(
                "cargo metadata failed: {}",
                first_errors(&run.stderr, ERROR_LINES)
            )));
        }
        targets_of(&run.stdout, &[&self.real, &self.mirror])
            .map_err(|e| Step::Problem(format!("cargo metadata is unreadable: {e}")))
    }

    /// The tests of `target`, listed by its instrumented build (which later runs reuse), and
    /// that build's test binary when cargo named it.
    fn list(&self, target: &Target) -> Result<Listed, Step> {
        let run = self.run(
            &["llvm-cov", "--no-report"],
            &target.args,
            &["--list", "--format", "terse"],
        )?;
        if !run.success() {
            let text = interleave(&run.stdout, &run.stderr);
            return Err(Step::Problem(format!(
                "cannot list the tests of {}: {}",
                target.root,
                build_errors(&text)
            )));
        }
        let names = run
            .stdout
            .lines()
            .filter_map(|l| l.strip_suffix(": test"))
            .map(String::from)
            .collect();
        Ok(Listed {
            names,
            binary: direct::test_binary(&run.stderr),
        })
    }

    /// Runs test `path` of `target` alone under coverage: its outcome and report, the LCOV in
    /// `reports/<n>.info` (None when llvm-cov wrote none).
    fn trace_test(
        &self,
        target: &Target,
        path: &str,
        n: usize,
    ) -> Result<(TestReach, Option<CoverageReport>), Step> {
        let lcov = self.reports.join(format!("{n}.info"));
        let _ = std::fs::remove_file(&lcov);
        let lcov_arg = lcov.to_string_lossy();
        // --no-clean: the instrumented build is reused, not redone for every test; the raw
        // profiles of the last test go instead, so each report is this test's alone.
        // --ignore-run-fail: llvm-cov writes its report even when the test fails.
        self.remove_profiles();
        let args = [
            "llvm-cov",
            "--no-clean",
            "--ignore-run-fail",
            "--lcov",
            "--output-path",
            &lcov_arg,
        ];
        let run = self.run(&args, &target.args, &["--exact", path])?;
        let reach = outcome_of(&run, target, path)?;
        Ok((reach, parse_lcov(&lcov).ok()))
    }
}

/// What the test binary's run said of test `path`: its outcome and failure report.
fn outcome_of(run: &Captured, target: &Target, path: &str) -> Result<TestReach, Step> {
    let text = interleave(&run.stdout, &run.stderr);
    let parsed = parse_libtest(&text);
    if parsed.build_failed {
        return Err(Step::DoesNotBuild(build_errors(&text)));
    }
    Ok(match parsed.cases.iter().find(|c| c.id == path) {
        Some(case) => TestReach {
            outcome: outcome(case.status).into(),
            reached: BTreeMap::new(),
            detail: (outcome(case.status) == "failed")
                .then(|| case.detail.clone().unwrap_or_default()),
        },
        // Started but never reported: the test binary died (abort, stack overflow).
        None if parsed.incomplete => TestReach {
            outcome: "failed".into(),
            reached: BTreeMap::new(),
            detail: Some(tail_lines(&text, CRASH_LINES)),
        },
        None => {
            return Err(Step::Problem(format!(
                "{}::{path}: no such test",
                target.token
            )))
        }
    })
}

/// A target's listed tests, and its instrumented test binary when known.
struct Listed {
    names: Vec<String>,
    binary: Option<PathBuf>,
}

/// Why a step of the trace gave nothing.
#[derive(Debug, thiserror::Error)]
enum Step {
    /// Noted in the trace's `problems`; the trace goes on.
    #[error("{0}")]
    Problem(String),
    /// Noted once; the target's other tests are not tried (each would build again).
    #[error("the crate does not build: {0}")]
    DoesNotBuild(String),
    /// The child did not run (out of time, no cargo): the trace ends.
    #[error(transparent)]
    Exec(#[from] ExecError),
}

impl Step {
    /// Notes a problem in `problems`; only a child that did not run stays an error.
    fn noted(self, problems: &mut Vec<String>) -> Result<(), ExecError> {
        match self {
            Step::Exec(e) => Err(e),
            other => {
                problems.push(other.to_string());
                Ok(())
            }
        }
    }
}

/// A failed build's compiler errors, each with where it is (`error[E0308]: mismatched types
/// at tests/a.rs:2:23`), without cargo's lines about the processes that failed.
fn build_errors(text: &str) -> String {
    let mut errors: Vec<String> = Vec::new();
    let mut open = false;
    for line in text.lines().map(str::trim_start) {
        if line.starts_with("error") && !line.starts_with("error: process didn't exit") {
            errors.push(line.to_string());
            open = true;
        } else if let Some(at) = line.strip_prefix("--> ").filter(|_| open) {
            if let Some(last) = errors.last_mut() {
                last.push_str(&format!(" at {at}"));
            }
            open = false;
        } else if line.starts_with("warning") {
            open = false;
        }
    }
    errors.truncate(ERROR_LINES);
    if errors.is_empty() {
        tail_lines(text, ERROR_LINES)
    } else {
        errors.join("\n")
    }
}

fn outcome(status: TestStatus) -> &'static str {
    match status {
        TestStatus::Passed => "passed",
        TestStatus::Failed | TestStatus::Error => "failed",
        TestStatus::Skipped => "skipped",
    }
}

/// Lists, then traces, every test the selection names, until the time runs out.
fn trace_all(
    trace: &RustTrace,
    cargo: &Cargo,
    job: &TraceJob,
    out: &mut SuiteMutations,
) -> Result<(), ExecError> {
    let targets = match cargo.targets() {
        Ok(t) => t,
        Err(step) => return step.noted(&mut out.problems),
    };
    let mut reach = ReachMap::new(&cargo.mirror, &cargo.real);
    for (i, names) in plan(&job.selection, &targets, &mut out.problems) {
        let target = &targets[i];
        // Also with the names given: the listing builds the binary and names it. When it
        // fails, each test goes through cargo-llvm-cov, which says why.
        let listed = match (names, cargo.list(target)) {
            (Some(n), listed) => Ok(Listed {
                names: n.into_iter().collect(),
                binary: listed.ok().and_then(|l| l.binary),
            }),
            (None, listed) => listed,
        };
        let Listed { names, binary } = match listed {
            Ok(l) => l,
            Err(step) => {
                step.noted(&mut out.problems)?;
                continue;
            }
        };
        for path in names {
            let id = format!("{}::{path}", target.token);
            let n = out.tests.len();
            let direct = binary
                .as_deref()
                .and_then(|b| cargo.trace_direct(target, b, &path, n));
            let traced = match direct {
                Some(traced) => traced,
                None => cargo.trace_test(target, &path, n),
            };
            match traced {
                Ok((mut test, Some(lcov))) => {
                    test.reached = reach.reach(lcov, &|f| trace.is_code(f));
                    out.tests.insert(id, test);
                }
                Ok((test, None)) => {
                    if test.outcome != "skipped" {
                        out.problems
                            .push(format!("{id}: cargo llvm-cov wrote no coverage"));
                    }
                    out.tests.insert(id, test);
                }
                Err(step @ Step::DoesNotBuild(_)) => {
                    step.noted(&mut out.problems)?;
                    break;
                }
                Err(step) => step.noted(&mut out.problems)?,
            }
        }
    }
    Ok(())
}

/// A test's LCOV as its reach: the project's code lines it ran, keyed by absolute path in the
/// mirror, without the lines of test code (the unit tests' own bodies).
struct ReachMap<'a> {
    mirror: &'a Path,
    real: &'a Path,
    /// Mirror-relative file -> its test-code lines, read once per trace.
    test_code: BTreeMap<String, BTreeSet<u32>>,
}

impl<'a> ReachMap<'a> {
    fn new(mirror: &'a Path, real: &'a Path) -> Self {
        ReachMap {
            mirror,
            real,
            test_code: BTreeMap::new(),
        }
    }

    fn reach(
        &mut self,
        report: CoverageReport,
        is_code: &dyn Fn(&str) -> bool,
    ) -> BTreeMap<String, Reach> {
        let report = report.relative_to(self.real).relative_to(self.mirror);
        let mut out = BTreeMap::new();
        for file in report.files {
            if !is_code(&file.path) {
                continue;
            }
            let mirror = self.mirror;
            let tests = self.test_code.entry(file.path.clone()).or_insert_with(|| {
                std::fs::read_to_string(mirror.join(&file.path))
                    .map(|src| test_code::test_lines(&src))
                    .unwrap_or_default()
            });
            let lines: Vec<u32> = file
                .executed_lines
                .into_iter()
                .filter(|l| !tests.contains(l))
                .collect();
            if !lines.is_empty() {
                let key = mirror.join(&file.path).to_string_lossy().into_owned();
                out.insert(
                    key,
                    Reach {
                        lines,
                        arcs: Vec::new(),
                    },
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
