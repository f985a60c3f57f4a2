//! Runs a layer's Rust tests: the crate is mirrored into `<session>/workspace/cargo-<layer>`, the layer's
//! generated files become integration-test targets there (`tests/tt_<layer>_<name>.rs`), an L0
//! build gate leaves out the files that do not compile, and the tests run with nextest (JUnit),
//! `cargo llvm-cov`/`cargo tarpaulin` (LCOV) or plain `cargo test` (libtest output). The target
//! repository is only read.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::junit::parse_junit;
use super::lcov::parse_lcov;
use super::libtest::parse_libtest;
use super::report::{TestCase, TestStatus};
use super::runner::{tail_lines, LoadError, RunOutput, RunSpec};
use super::workspace::mirror;
use crate::error::Error;
use crate::proc::{run_sandboxed, Captured};

/// Prefix of every staged test target, so they never clash with the crate's own tests.
pub const STAGED_PREFIX: &str = "tt_";
/// Our nextest profile, defined in a tool config file outside the copy, so a repository's own
/// `.config/nextest.toml` is neither overwritten nor edited. Tool profiles carry the tool's prefix.
const NEXTEST_PROFILE: &str = "team-testing:run";
/// Directories never copied (at any depth); `target` only at the root, where cargo puts it.
/// Located error lines kept per unloadable file.
const ERROR_LINES: usize = 8;

/// The integration-test target a generated file becomes: `("L1-unit", "area-test.rs")` ->
/// `tt_L1_area_test` (layer code only; `-` is not allowed in a crate name).
pub fn staged_name(layer: &str, file: &str) -> String {
    let code = layer.split('-').next().unwrap_or(layer);
    let stem = file.strip_suffix(".rs").unwrap_or(file);
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    };
    format!("{STAGED_PREFIX}{}_{}", clean(code), clean(stem))
}

/// A generated test file and the target it is staged as.
#[derive(Debug, Clone, PartialEq)]
struct Staged {
    /// Its name in the layer's test folder.
    original: String,
    /// The target name (`tests/<target>.rs` in the copy).
    target: String,
}

/// The layer's `*.rs` files (top level only), sorted, with distinct target names.
fn generated_files(test_dir: &Path, layer: &str) -> Vec<Staged> {
    let mut names: Vec<String> = std::fs::read_dir(test_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".rs"))
        .collect();
    names.sort();
    let mut taken = BTreeSet::new();
    names
        .into_iter()
        .map(|original| {
            let base = staged_name(layer, &original);
            let mut target = base.clone();
            // `a-b.rs` and `a_b.rs` would both become `tt_L1_a_b`.
            for n in 2.. {
                if taken.insert(target.clone()) {
                    break;
                }
                target = format!("{base}_{n}");
            }
            Staged { original, target }
        })
        .collect()
}

/// How a child process ended when it gave no output to read.
enum Stop {
    TimedOut(String),
    /// The program could not be started (cargo missing).
    Missing,
    Failed(String),
}

struct Ctx<'a> {
    spec: &'a RunSpec<'a>,
    /// The program that is cargo (`spec.tools.interpreter`, default `cargo`).
    cargo: String,
    /// `<session>/workspace/cargo-<layer>`: the mirrored crate, where every command runs.
    copy: PathBuf,
    /// `<session>/workspace/cargo-target`, shared by every run of the session.
    target_dir: PathBuf,
    deadline: Instant,
}

impl<'a> Ctx<'a> {
    fn new(spec: &'a RunSpec<'a>, deadline: Instant) -> Self {
        // Absolute: children run in the copy, and CARGO_TARGET_DIR must not depend on their cwd.
        let session = std::path::absolute(spec.session).unwrap_or_else(|_| spec.session.into());
        let cargo = match spec.tools.interpreter.as_str() {
            "" => "cargo".to_string(),
            c => c.to_string(),
        };
        Ctx {
            spec,
            cargo,
            // One copy per layer: the comprehensive pipeline runs two layers at the same time.
            copy: session
                .join("workspace")
                .join(format!("cargo-{}", spec.layer)),
            target_dir: session.join("workspace/cargo-target"),
            deadline,
        }
    }

    fn argv(&self, args: &[&str]) -> Vec<String> {
        let mut argv = vec![self.cargo.clone()];
        argv.extend(args.iter().map(|a| a.to_string()));
        argv
    }

    /// Runs `argv` in the copy with what is left of the time budget.
    fn exec(&self, argv: &[String]) -> Result<Captured, Stop> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Stop::TimedOut(format!(
                "no time left to run {}",
                argv.join(" ")
            )));
        }
        let args: Vec<&str> = argv.iter().map(String::as_str).collect();
        let target = self.target_dir.to_string_lossy();
        // No colour codes in what the parsers read, whatever the user's cargo config says.
        let env = [
            ("CARGO_TARGET_DIR", &*target),
            ("CARGO_TERM_COLOR", "never"),
        ];
        run_sandboxed(self.spec.sandbox, &args, &self.copy, &env, None, left).map_err(|e| match e {
            Error::Io { cause, .. } if cause.kind() == io::ErrorKind::NotFound => Stop::Missing,
            Error::Environment(m) if m.contains("timed out") => Stop::TimedOut(m),
            other => Stop::Failed(other.to_string()),
        })
    }

    /// `results/<kind>-<run_no>.<ext>`: the absolute path and the session-relative name.
    fn result_file(&self, kind: &str, ext: &str) -> (PathBuf, String) {
        let path = self
            .spec
            .results
            .join(format!("{kind}-{}.{ext}", self.spec.run_no));
        let rel = path
            .strip_prefix(self.spec.session)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        (path, rel)
    }

    /// Keeps `text` as a raw report (rewritten when kept again).
    fn keep(&self, kind: &str, ext: &str, text: &str, out: &mut RunOutput) {
        let (path, rel) = self.result_file(kind, ext);
        if crate::util::write_nofollow(&path, text.as_bytes()).is_ok()
            && !out.reports.contains(&rel)
        {
            out.reports.push(rel);
        }
    }
}

/// Records how a stopped child ends the run.
fn stopped(stop: Stop, cargo: &str, out: &mut RunOutput) {
    match stop {
        Stop::TimedOut(m) => {
            out.timed_out = true;
            out.output_tail = m;
        }
        Stop::Missing => {
            out.env_problem = Some(format!("{cargo} not found: install Rust with rustup"));
        }
        Stop::Failed(m) => out.env_problem = Some(m),
    }
}

pub fn run(spec: &RunSpec) -> RunOutput {
    let started = Instant::now();
    let ctx = Ctx::new(spec, started + spec.timeout);
    let mut out = RunOutput::default();
    let _ = std::fs::create_dir_all(&spec.results);
    let mut staged = generated_files(&spec.test_dir, spec.layer);
    if let Err(stop) = gate(&ctx, &mut staged, &mut out) {
        stopped(stop, &ctx.cargo, &mut out);
    } else {
        let result = match spec.tools.coverage_tool.as_deref() {
            Some(tool @ ("cargo-llvm-cov" | "cargo-tarpaulin")) => {
                run_coverage(&ctx, tool, &mut out)
            }
            _ if spec.tools.nextest => run_nextest(&ctx, &mut out),
            _ => run_libtest(&ctx, &mut out),
        };
        if let Err(stop) = result {
            stopped(stop, &ctx.cargo, &mut out);
        }
        if out.coverage.is_none() && out.coverage_problem.is_none() {
            out.coverage_problem = Some(spec.tools.coverage_reason.clone());
        }
    }
    out.duration_s = started.elapsed().as_secs_f64();
    out
}

/// L0: builds every test target (`--keep-going`, so all broken files show in one round); files
/// that do not compile become load errors and leave the copy. A crate that does not build
/// without them is an environment problem. Bounded: one round per file, plus the last.
fn gate(ctx: &Ctx, staged: &mut Vec<Staged>, out: &mut RunOutput) -> Result<(), Stop> {
    let argv = ctx.argv(&["build", "--tests", "--keep-going", "--message-format=short"]);
    out.command = argv.clone();
    let mut log = String::new();
    for _round in 0..=staged.len() {
        stage(ctx, staged).map_err(|e| {
            Stop::Failed(format!(
                "cannot copy {} to {}: {e}",
                ctx.spec.repo.display(),
                ctx.copy.display()
            ))
        })?;
        let build = ctx.exec(&argv)?;
        if build.success() {
            return Ok(());
        }
        let text = format!("{}{}", build.stderr, build.stdout);
        log.push_str(&text);
        ctx.keep("cargo-build", "txt", &log, out);
        let units = failed_units(&text);
        let ours: Vec<Staged> = staged
            .iter()
            .filter(|s| units.contains(&format!("test \"{}\"", s.target)))
            .cloned()
            .collect();
        let theirs = units.len().saturating_sub(ours.len());
        if ours.is_empty() || theirs > 0 {
            out.output_tail = tail_lines(&text, 60);
            let errors = first_errors(&text, ERROR_LINES);
            return Err(Stop::Failed(format!("the crate does not build: {errors}")));
        }
        for s in &ours {
            out.load_errors.push(LoadError {
                file: s.original.clone(),
                error: file_errors(&text, s),
                verdict: None,
            });
        }
        staged.retain(|s| !ours.contains(s));
    }
    Err(Stop::Failed(
        "the crate still does not build after leaving out every broken test file".into(),
    ))
}

/// `error: could not compile `pkg` (test "tt_L1_x") due to ...` -> `test "tt_L1_x"`; also
/// `lib`, `lib test`, `bin "x"`: which compilation units failed.
fn failed_units(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("error: could not compile `"))
        .filter_map(|rest| rest.split_once("` (")?.1.split_once(')'))
        .map(|(unit, _)| unit.to_string())
        .collect()
}

/// A file's errors from `--message-format=short` lines (`tests/tt_L1_x.rs:3:5: error[E..]: ..`),
/// renamed to the file's name in the layer folder; the unit's failure line if none is located.
fn file_errors(text: &str, s: &Staged) -> String {
    let path = format!("tests/{}.rs:", s.target);
    let lines: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let at = l.find(&path)?;
            let rest = &l[at + path.len()..];
            let located = at == 0 || l[..at].ends_with('/');
            (located && rest.contains(": error")).then(|| format!("{}:{rest}", s.original))
        })
        .take(ERROR_LINES)
        .collect();
    if lines.is_empty() {
        let unit = format!("(test \"{}\")", s.target);
        return text
            .lines()
            .find(|l| l.contains(&unit))
            .unwrap_or("does not compile")
            .trim()
            .to_string();
    }
    lines.join("\n")
}

/// The first `n` error lines of a failed build.
fn first_errors(text: &str, n: usize) -> String {
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("error") || l.contains(": error"))
        .take(n)
        .collect();
    if errors.is_empty() {
        tail_lines(text, n)
    } else {
        errors.join("\n")
    }
}

/// Mirrors the repository into the copy with the staged test files (and, for a crate with
/// `autotests = false`, their `[[test]]` entries).
fn stage(ctx: &Ctx, staged: &[Staged]) -> io::Result<()> {
    let mut extra = BTreeMap::new();
    for s in staged {
        let body = std::fs::read(ctx.spec.test_dir.join(&s.original))?;
        extra.insert(PathBuf::from(format!("tests/{}.rs", s.target)), body);
    }
    let manifest = std::fs::read_to_string(ctx.spec.repo.join("Cargo.toml"))?;
    let targets: Vec<&str> = staged.iter().map(|s| s.target.as_str()).collect();
    if let Some(m) = with_test_targets(&manifest, &targets) {
        extra.insert(PathBuf::from("Cargo.toml"), m.into_bytes());
    }
    mirror(ctx.spec.repo, &ctx.copy, &extra)
}

/// Cargo only finds `tests/*.rs` by itself when autotests is on; otherwise each staged file
/// needs its own `[[test]]` entry, appended (a table array after anything is valid TOML).
fn with_test_targets(manifest: &str, targets: &[&str]) -> Option<String> {
    let off = manifest.lines().any(|l| {
        let l: String = l
            .split('#')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        l == "autotests=false"
    });
    if !off || targets.is_empty() {
        return None;
    }
    let mut m = manifest.trim_end().to_string();
    for t in targets {
        m.push_str(&format!(
            "\n\n[[test]]\nname = \"{t}\"\npath = \"tests/{t}.rs\""
        ));
    }
    m.push('\n');
    Some(m)
}

/// `-- --skip <id>` per deselected test. libtest's --skip matches substrings, so it also leaves
/// out tests whose path merely contains the id; `--exact` would fix that but also turns every
/// other filter exact, so it is left out for now.
fn skip_args(deselect: &[String]) -> Vec<String> {
    if deselect.is_empty() {
        return Vec::new();
    }
    let mut args = vec!["--".to_string()];
    for id in deselect {
        args.extend(["--skip".to_string(), id.clone()]);
    }
    args
}

/// `cargo test`: the libtest output is kept as `cargo-test-<run_no>.txt` and parsed.
fn run_libtest(ctx: &Ctx, out: &mut RunOutput) -> Result<(), Stop> {
    let mut argv = ctx.argv(&["test", "--no-fail-fast"]);
    argv.extend(skip_args(ctx.spec.deselect));
    out.command = argv.clone();
    let run = ctx.exec(&argv)?;
    libtest_cases(ctx, &run, out);
    Ok(())
}

/// Fills the cases and evidence from a libtest-printing run (cargo test, llvm-cov, tarpaulin).
fn libtest_cases(ctx: &Ctx, run: &Captured, out: &mut RunOutput) {
    let text = interleave(&run.stdout, &run.stderr);
    ctx.keep("cargo-test", "txt", &text, out);
    let parsed = parse_libtest(&text);
    if parsed.build_failed {
        out.env_problem = Some(format!(
            "the crate does not build: {}",
            first_errors(&text, ERROR_LINES)
        ));
    }
    out.exit_code = run.status;
    out.output_tail = tail_lines(&text, 60);
    out.cases = parsed.cases;
}

/// `cargo test` prints each binary's `Running <source>` line on stderr and its results on
/// stdout, while parse_libtest wants them interleaved as a terminal shows them (it takes the
/// test's file from the `Running` line). Binaries run one after another, so the k-th
/// `Running`/`Doc-tests` line belongs to the k-th `running N tests` block.
fn interleave(stdout: &str, stderr: &str) -> String {
    let mut blocks: Vec<String> = vec![String::new()];
    for line in stdout.lines() {
        if line.starts_with("running ") && (line.ends_with(" tests") || line.ends_with(" test")) {
            blocks.push(String::new());
        }
        let block = blocks.last_mut().expect("never empty");
        block.push_str(line);
        block.push('\n');
    }
    let mut blocks = blocks.into_iter();
    let mut text = blocks.next().unwrap_or_default();
    for line in stderr.lines() {
        text.push_str(line);
        text.push('\n');
        let marker = line.trim_start();
        if marker.starts_with("Running ") || marker.starts_with("Doc-tests ") {
            text.push_str(&blocks.next().unwrap_or_default());
        }
    }
    // Output with no markers (tarpaulin) or more blocks than markers: keep the rest in order.
    blocks.for_each(|b| text.push_str(&b));
    text
}

/// The nextest filterset that matches one test id. JUnit ids are `<binary id>::<test path>` and
/// both halves may contain `::`, so every split is tried; the bare path matches libtest ids.
fn nextest_match(id: &str) -> String {
    let mut alternatives: Vec<String> = id
        .match_indices("::")
        .map(|(i, _)| format!("(binary_id(={}) & test(={}))", &id[..i], &id[i + 2..]))
        .collect();
    alternatives.push(format!("test(={id})"));
    alternatives.join(" | ")
}

/// Where nextest writes our profile's JUnit: under the workspace root's target/, not
/// CARGO_TARGET_DIR (nextest's `store.dir` is workspace-relative).
fn nextest_junit(ctx: &Ctx) -> PathBuf {
    ctx.copy
        .join("target/nextest")
        .join(NEXTEST_PROFILE)
        .join("junit.xml")
}

/// `cargo nextest run` with our profile; `filter` narrows the run (rerun, deselect).
fn nextest(ctx: &Ctx, filter: Option<String>) -> Result<(Vec<String>, Captured), Stop> {
    let config = ctx.copy.with_file_name("nextest-team-testing.toml");
    // Retries off: flakiness is found by rerun, not hidden by the repository's retry policy.
    let profile = format!(
        "[profile.\"{NEXTEST_PROFILE}\"]\nfail-fast = false\nretries = 0\n\n[profile.\"{NEXTEST_PROFILE}\".junit]\npath = \"junit.xml\"\n"
    );
    crate::util::write_nofollow(&config, profile.as_bytes())
        .map_err(|e| Stop::Failed(format!("cannot write {}: {e}", config.display())))?;
    // A stale report from an earlier run must not pass for this one's.
    let _ = std::fs::remove_file(nextest_junit(ctx));
    let tool_config = format!("team-testing:{}", config.display());
    let mut argv = ctx.argv(&["nextest", "run", "--no-fail-fast", "--no-tests=warn"]);
    argv.extend([
        "--tool-config-file".into(),
        tool_config,
        "--profile".into(),
        NEXTEST_PROFILE.into(),
    ]);
    if let Some(f) = filter {
        argv.extend(["-E".into(), f]);
    }
    let run = ctx.exec(&argv)?;
    Ok((argv, run))
}

fn run_nextest(ctx: &Ctx, out: &mut RunOutput) -> Result<(), Stop> {
    let deselect: Vec<String> = ctx
        .spec
        .deselect
        .iter()
        .map(|id| format!("({})", nextest_match(id)))
        .collect();
    let filter = (!deselect.is_empty()).then(|| format!("not ({})", deselect.join(" | ")));
    let (argv, run) = nextest(ctx, filter)?;
    out.command = argv;
    out.exit_code = run.status;
    let text = format!("{}{}", run.stderr, run.stdout);
    out.output_tail = tail_lines(&text, 60);
    ctx.keep("nextest", "txt", &text, out);
    let (kept, rel) = ctx.result_file("junit", "xml");
    match crate::util::copy_nofollow(&nextest_junit(ctx), &kept) {
        Ok(_) => out.reports.push(rel),
        Err(e) => {
            out.env_problem = Some(format!(
                "nextest wrote no JUnit report ({e}); exit {:?}",
                run.status
            ));
            return Ok(());
        }
    }
    match parse_junit(&kept) {
        Ok(cases) => out.cases = cases.into_iter().map(with_staged_file).collect(),
        Err(e) => out.env_problem = Some(e.to_string()),
    }
    Ok(())
}

/// nextest's JUnit names no file; for a staged target (classname `<crate>::tt_L1_x`) it is
/// known, as libtest's `Running tests/tt_L1_x.rs` line gives it on the other path.
fn with_staged_file(mut case: TestCase) -> TestCase {
    let target = case
        .classname
        .as_deref()
        .and_then(|c| c.split_once("::"))
        .map(|(_, t)| t);
    if let Some(t) = target.filter(|t| t.starts_with(STAGED_PREFIX) && !t.contains("::")) {
        case.file.get_or_insert_with(|| format!("tests/{t}.rs"));
    }
    case
}

/// The tests run under the coverage tool instead of plain `cargo test`: it prints libtest
/// output and writes LCOV with absolute paths, made relative to the copy (= repo-relative).
fn run_coverage(ctx: &Ctx, tool: &str, out: &mut RunOutput) -> Result<(), Stop> {
    let (lcov, rel) = ctx.result_file("lcov", "info");
    // tarpaulin only takes a folder and names the file itself.
    let scratch = ctx.copy.with_file_name("tarpaulin-out");
    let mut argv = if tool == "cargo-llvm-cov" {
        let path = lcov.to_string_lossy();
        // --ignore-run-fail, not --no-fail-fast: with the latter llvm-cov writes no report when a
        // test fails. It then exits 0 though tests failed; the cases still say so.
        ctx.argv(&[
            "llvm-cov",
            "--ignore-run-fail",
            "--lcov",
            "--output-path",
            &path,
        ])
    } else {
        let dir = scratch.to_string_lossy();
        ctx.argv(&[
            "tarpaulin",
            "--no-fail-fast",
            "--skip-clean",
            "--out",
            "Lcov",
            "--output-dir",
            &dir,
        ])
    };
    argv.extend(skip_args(ctx.spec.deselect));
    out.command = argv.clone();
    let _ = std::fs::remove_file(&lcov);
    let run = ctx.exec(&argv)?;
    libtest_cases(ctx, &run, out);
    if tool == "cargo-tarpaulin" {
        let _ = std::fs::rename(scratch.join("lcov.info"), &lcov);
    }
    match parse_lcov(&lcov) {
        Ok(report) => {
            let real = std::fs::canonicalize(&ctx.copy).unwrap_or_else(|_| ctx.copy.clone());
            out.coverage = Some(report.relative_to(&real).relative_to(&ctx.copy));
            out.reports.push(rel);
        }
        Err(e) => out.coverage_problem = Some(format!("{tool} wrote no usable LCOV: {e}")),
    }
    Ok(())
}

/// Runs one test again in the copy a previous [`run`] left (exact filter); its status, or None
/// when there is no copy, it did not run or no test has that id.
pub fn rerun(spec: &RunSpec, case_id: &str) -> Option<TestStatus> {
    let ctx = Ctx::new(spec, Instant::now() + spec.timeout);
    if !ctx.copy.join("Cargo.toml").is_file() {
        return None;
    }
    let cases = if spec.tools.nextest {
        nextest(&ctx, Some(nextest_match(case_id))).ok()?;
        parse_junit(&nextest_junit(&ctx)).ok()?
    } else {
        let argv = ctx.argv(&["test", "--no-fail-fast", "--", "--exact", case_id]);
        let run = ctx.exec(&argv).ok()?;
        parse_libtest(&interleave(&run.stdout, &run.stderr)).cases
    };
    status_of(&cases, case_id)
}

/// The status of the cases with `id` (libtest ids repeat across binaries): any failure wins.
fn status_of(cases: &[TestCase], id: &str) -> Option<TestStatus> {
    let mut matching = cases.iter().filter(|c| c.id == id).map(|c| c.status);
    let first = matching.next()?;
    Some(
        matching
            .chain([first])
            .find(|s| matches!(s, TestStatus::Failed | TestStatus::Error))
            .unwrap_or(first),
    )
}

#[cfg(test)]
mod tests {
    use crate::testing::workspace::list_files;
    use std::time::Duration;

    use super::*;
    use crate::testing::report::TestTotals;
    use crate::testing::toolchain::Toolchain;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

    fn staged(original: &str, target: &str) -> Staged {
        Staged {
            original: original.into(),
            target: target.into(),
        }
    }

    #[test]
    fn generated_files_become_prefixed_test_targets() {
        assert_eq!(staged_name("L1-unit", "area-test.rs"), "tt_L1_area_test");
        assert_eq!(staged_name("L2", "x.rs"), "tt_L2_x");
        let dir = tempfile::tempdir().unwrap();
        for f in ["b.rs", "a-b.rs", "a_b.rs", "notes.txt"] {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        let files = generated_files(dir.path(), "L1-unit");
        assert_eq!(
            files,
            [
                staged("a-b.rs", "tt_L1_a_b"),
                staged("a_b.rs", "tt_L1_a_b_2"),
                staged("b.rs", "tt_L1_b")
            ]
        );
    }

    #[test]
    fn build_errors_are_traced_to_their_generated_files() {
        let text =
            std::fs::read_to_string(format!("{FIXTURES}reports/cargo-build-error.txt")).unwrap();
        assert_eq!(
            failed_units(&text),
            ["test \"tt_L1_bad2\"", "test \"tt_L1_bad\""]
        );
        let bad = file_errors(&text, &staged("bad.rs", "tt_L1_bad"));
        let lines: Vec<&str> = bad.lines().collect();
        assert_eq!(lines.len(), 2, "{bad}");
        assert!(
            lines[0].starts_with("bad.rs:1:5: error[E0432]: unresolved import"),
            "{bad}"
        );
        assert!(
            lines[1].starts_with("bad.rs:5:18: error[E0308]: mismatched types"),
            "{bad}"
        );
        // tt_L1_bad must not pick up tt_L1_bad2's lines.
        let bad2 = file_errors(&text, &staged("bad2.rs", "tt_L1_bad2"));
        assert!(
            bad2.starts_with("bad2.rs:4:5: error[E0425]") && !bad2.contains('\n'),
            "{bad2}"
        );

        let crate_broken = "src/lib.rs:29:24: error[E0308]: mismatched types\n\
            error: could not compile `shapes` (lib) due to 1 previous error\n\
            warning: build failed, waiting for other jobs to finish...\n\
            error: could not compile `shapes` (lib test) due to 1 previous error\n";
        assert_eq!(failed_units(crate_broken), ["lib", "lib test"]);
        assert!(first_errors(crate_broken, 1).starts_with("src/lib.rs:29:24: error[E0308]"));
    }

    #[test]
    fn running_lines_from_stderr_are_put_before_their_binary_results() {
        let stdout = "\nrunning 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n\
                      \nrunning 1 test\ntest b ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        let stderr = "   Compiling x v0.1.0\n     Running unittests src/lib.rs (t/x-1)\n     Running tests/it.rs (t/it-2)\nerror: 1 target failed\n";
        let text = interleave(stdout, stderr);
        let it = text.find("Running tests/it.rs").unwrap();
        assert!(
            text.find("test a ... ok").unwrap() < it && it < text.find("test b ... ok").unwrap()
        );
        assert!(text.ends_with("error: 1 target failed\n"));
        let files: Vec<_> = parse_libtest(&text)
            .cases
            .into_iter()
            .map(|c| c.file.unwrap())
            .collect();
        assert_eq!(files, ["src/lib.rs", "tests/it.rs"]);
    }

    #[test]
    fn ids_map_to_filters_and_manifest_entries() {
        assert_eq!(
            nextest_match("shapes::tt_L1_a::t"),
            "(binary_id(=shapes) & test(=tt_L1_a::t)) | (binary_id(=shapes::tt_L1_a) & test(=t)) | test(=shapes::tt_L1_a::t)"
        );
        assert_eq!(skip_args(&["a::b".into()]), ["--", "--skip", "a::b"]);
        let m = "[package]\nname = \"x\"\nautotests = false # by hand\n";
        let with = with_test_targets(m, &["tt_L1_a"]).unwrap();
        assert!(with.ends_with("[[test]]\nname = \"tt_L1_a\"\npath = \"tests/tt_L1_a.rs\"\n"));
        assert_eq!(
            with_test_targets("[package]\nname = \"x\"\n", &["tt_L1_a"]),
            None
        );
        let cases = [
            ("a", TestStatus::Passed),
            ("a", TestStatus::Failed),
            ("b", TestStatus::Skipped),
        ]
        .map(|(id, status)| TestCase {
            id: id.into(),
            name: id.into(),
            classname: None,
            file: None,
            line: None,
            status,
            duration_s: None,
            message: None,
            detail: None,
        });
        assert_eq!(status_of(&cases, "a"), Some(TestStatus::Failed));
        assert_eq!(status_of(&cases, "b"), Some(TestStatus::Skipped));
        assert_eq!(status_of(&cases, "c"), None);
    }

    #[test]
    fn the_mirror_rewrites_only_what_changed_and_drops_what_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let (repo, copy) = (dir.path().join("repo"), dir.path().join("copy"));
        for f in [
            "Cargo.toml",
            "src/lib.rs",
            "src/old.rs",
            ".git/HEAD",
            "target/x",
            "a/target/y",
        ] {
            std::fs::create_dir_all(repo.join(f).parent().unwrap()).unwrap();
            std::fs::write(repo.join(f), f).unwrap();
        }
        let extra = BTreeMap::from([(PathBuf::from("tests/tt_L1_a.rs"), b"t".to_vec())]);
        mirror(&repo, &copy, &extra).unwrap();
        let names: Vec<PathBuf> = tree(&copy).into_keys().collect();
        let expected = [
            "Cargo.toml",
            "a/target/y",
            "src/lib.rs",
            "src/old.rs",
            "tests/tt_L1_a.rs",
        ];
        assert_eq!(names, expected.map(PathBuf::from));

        // Cargo rebuilds by mtime: an unchanged file must keep it. Gone files leave the copy;
        // cargo's own target/ and Cargo.lock stay.
        let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
        let lib_time = mtime(&copy.join("src/lib.rs"));
        std::fs::remove_file(repo.join("src/old.rs")).unwrap();
        std::fs::create_dir_all(copy.join("target")).unwrap();
        std::fs::write(copy.join("target/keep"), "").unwrap();
        std::fs::write(copy.join("Cargo.lock"), "").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        mirror(&repo, &copy, &BTreeMap::new()).unwrap();
        assert_eq!(mtime(&copy.join("src/lib.rs")), lib_time);
        assert!(!copy.join("src/old.rs").exists() && !copy.join("tests/tt_L1_a.rs").exists());
        assert!(copy.join("target/keep").exists() && copy.join("Cargo.lock").exists());
    }

    /// Every file under `root` (no target/) with its bytes.
    fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        list_files(root, Path::new(""), None, &mut |rel, abs| {
            files.insert(rel, std::fs::read(abs).unwrap());
        })
        .unwrap();
        files
    }

    const PASSING: &str = "use shapes::square_perimeter;\n\n#[test]\nfn square_perimeter_is_four_sides() {\n    assert_eq!(square_perimeter(5), 20);\n}\n";
    const FAILING: &str = "use shapes::interior_angle_sum;\n\n#[test]\nfn triangle_angles_sum_to_180() {\n    assert_eq!(interior_angle_sum(3), 180);\n}\n";
    const BROKEN: &str = "use shapes::circle_area;\n\n#[test]\nfn circle() {\n    assert_eq!(circle_area(1), 3);\n}\n";

    struct Fixture {
        _dir: tempfile::TempDir,
        repo: PathBuf,
        session: PathBuf,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        mirror(
            &Path::new(FIXTURES).join("rust-crate"),
            &repo,
            &BTreeMap::new(),
        )
        .unwrap();
        let session = dir.path().join("session");
        let tests = session.join("tests/L1-unit");
        std::fs::create_dir_all(&tests).unwrap();
        std::fs::create_dir_all(session.join("results")).unwrap();
        for (name, body) in [
            ("pass.rs", PASSING),
            ("angles.rs", FAILING),
            ("broken.rs", BROKEN),
        ] {
            std::fs::write(tests.join(name), body).unwrap();
        }
        Fixture {
            _dir: dir,
            repo,
            session,
        }
    }

    fn spec<'a>(
        f: &'a Fixture,
        tools: &'a Toolchain,
        run_no: &str,
        deselect: &'a [String],
    ) -> RunSpec<'a> {
        RunSpec {
            repo: &f.repo,
            session: &f.session,
            layer: "L1-unit",
            test_dir: f.session.join("tests/L1-unit"),
            tools,
            results: f.session.join("results"),
            run_no: run_no.into(),
            timeout: Duration::from_secs(600),
            deselect,
            sandbox: None,
        }
    }

    /// `cargo <subcommand>` works on this machine.
    fn installed(subcommand: &str) -> bool {
        let argv = ["cargo", subcommand, "--version"];
        crate::proc::run_captured(&argv, Path::new(FIXTURES), Duration::from_secs(60))
            .is_ok_and(|c| c.success())
    }

    fn cargo_tools(nextest: bool) -> Toolchain {
        Toolchain {
            framework: "cargo".into(),
            interpreter: "cargo".into(),
            runner_available: true,
            coverage_reason: "no coverage tool in this test".into(),
            nextest,
            ..Default::default()
        }
    }

    #[test]
    fn a_real_cargo_run_counts_failures_and_leaves_out_files_that_do_not_compile() {
        let f = fixture();
        let before = tree(&f.repo);
        let tools = cargo_tools(false);
        let out = run(&spec(&f, &tools, "001", &[]));
        assert_eq!(out.env_problem, None, "{}", out.output_tail);
        assert!(!out.timed_out);

        // The broken file is a load error, named as in the layer folder, with rustc's errors.
        assert_eq!(out.load_errors.len(), 1, "{:?}", out.load_errors);
        assert_eq!(out.load_errors[0].file, "broken.rs");
        assert!(
            out.load_errors[0]
                .error
                .starts_with("broken.rs:1:5: error[E0432]"),
            "{}",
            out.load_errors[0].error
        );
        let copy = f.session.join("workspace/cargo-L1-unit");
        assert!(!copy.join("tests/tt_L1_broken.rs").exists());
        assert!(copy.join("tests/tt_L1_pass.rs").is_file());

        // Counts agree with libtest's own `test result:` lines: the crate's unit test and
        // pass.rs pass, angles.rs catches the off-by-one.
        let raw = std::fs::read_to_string(f.session.join("results/cargo-test-001.txt")).unwrap();
        let summary = parse_libtest(&raw).summary;
        let totals = TestTotals::of(&out.cases);
        assert_eq!(
            (totals.passed, totals.failed),
            (summary.passed, summary.failed)
        );
        assert_eq!((totals.passed, totals.failed), (2, 1), "{:?}", out.cases);
        let failed = out
            .cases
            .iter()
            .find(|c| c.status == TestStatus::Failed)
            .unwrap();
        assert_eq!(failed.id, "triangle_angles_sum_to_180");
        assert_eq!(failed.file.as_deref(), Some("tests/tt_L1_angles.rs"));
        assert!(failed.detail.as_deref().unwrap_or("").contains("left: 360"));
        assert_eq!(out.exit_code, Some(101));
        assert_eq!(out.command, ["cargo", "test", "--no-fail-fast"]);
        assert!(
            out.reports
                .contains(&"results/cargo-test-001.txt".to_string()),
            "{:?}",
            out.reports
        );
        assert!(out
            .reports
            .contains(&"results/cargo-build-001.txt".to_string()));
        assert_eq!(
            (out.coverage, out.coverage_problem.as_deref()),
            (None, Some("no coverage tool in this test"))
        );
        assert!(f.session.join("workspace/cargo-target/debug").is_dir());

        // The repository is untouched: same files, no target/ or Cargo.lock written into it.
        assert_eq!(tree(&f.repo), before);
        assert!(!f.repo.join("target").exists() && !f.repo.join("Cargo.lock").exists());

        // Rerun reuses the copy; a deselected test is skipped on the next run.
        let s = spec(&f, &tools, "001", &[]);
        assert_eq!(
            rerun(&s, "triangle_angles_sum_to_180"),
            Some(TestStatus::Failed)
        );
        assert_eq!(
            rerun(&s, "tests::rectangle_area_multiplies_the_sides"),
            Some(TestStatus::Passed)
        );
        assert_eq!(rerun(&s, "no_such_test"), None);
        let deselect = ["triangle_angles_sum_to_180".to_string()];
        let out = run(&spec(&f, &tools, "002", &deselect));
        let totals = TestTotals::of(&out.cases);
        assert_eq!(
            (totals.passed, totals.failed),
            (2, 0),
            "{}",
            out.output_tail
        );
        assert_eq!(out.load_errors.len(), 1);

        // The same run through nextest, when it is installed here.
        if !installed("nextest") {
            eprintln!("cargo-nextest is not installed: its half of the test is skipped");
            return;
        }
        let tools = cargo_tools(true);
        let out = run(&spec(&f, &tools, "003", &[]));
        assert_eq!(out.env_problem, None, "{}", out.output_tail);
        assert!(
            out.reports.contains(&"results/junit-003.xml".to_string()),
            "{:?}",
            out.reports
        );
        let totals = TestTotals::of(&out.cases);
        assert_eq!((totals.passed, totals.failed), (2, 1), "{:?}", out.cases);
        let failed = out
            .cases
            .iter()
            .find(|c| c.status == TestStatus::Failed)
            .unwrap();
        assert_eq!(
            failed.id,
            "shapes::tt_L1_angles::triangle_angles_sum_to_180"
        );
        assert_eq!(failed.file.as_deref(), Some("tests/tt_L1_angles.rs"));
        let s = spec(&f, &tools, "003", &[]);
        assert_eq!(rerun(&s, &failed.id), Some(TestStatus::Failed));
        let deselect = [failed.id.clone()];
        let out = run(&spec(&f, &tools, "004", &deselect));
        let totals = TestTotals::of(&out.cases);
        assert_eq!(
            (totals.passed, totals.failed),
            (2, 0),
            "{}",
            out.output_tail
        );
        assert_eq!(tree(&f.repo), before);
    }

    #[test]
    fn coverage_comes_from_cargo_llvm_cov_when_it_is_installed() {
        let f = fixture();
        let mut tools = cargo_tools(false);
        tools.coverage_tool = Some("cargo-llvm-cov".into());
        let s = spec(&f, &tools, "001", &[]);
        if !installed("llvm-cov") {
            eprintln!("cargo-llvm-cov is not installed: coverage test skipped");
            return;
        }
        let out = run(&s);
        assert_eq!(
            (out.env_problem, out.coverage_problem),
            (None, None),
            "{}",
            out.output_tail
        );
        let totals = TestTotals::of(&out.cases);
        assert_eq!((totals.passed, totals.failed), (2, 1), "{:?}", out.cases);
        assert!(
            out.reports.contains(&"results/lcov-001.info".to_string()),
            "{:?}",
            out.reports
        );
        // Paths are repo-relative, and every line of the three functions ran.
        let coverage = out.coverage.unwrap();
        let lib = coverage
            .files
            .iter()
            .find(|c| c.path == "src/lib.rs")
            .unwrap();
        assert!(
            lib.lines_covered > 0 && lib.missing_lines.is_empty(),
            "{lib:?}"
        );
    }

    #[test]
    fn missing_cargo_and_an_empty_budget_are_reported_not_panicked() {
        let f = fixture();
        let mut tools = cargo_tools(false);
        tools.interpreter = "/nonexistent/cargo".into();
        let out = run(&spec(&f, &tools, "001", &[]));
        assert_eq!(
            out.env_problem.as_deref(),
            Some("/nonexistent/cargo not found: install Rust with rustup")
        );
        let tools = cargo_tools(false);
        let mut s = spec(&f, &tools, "002", &[]);
        s.timeout = Duration::ZERO;
        let out = run(&s);
        assert!(out.timed_out && out.cases.is_empty() && out.env_problem.is_none());
    }
}
