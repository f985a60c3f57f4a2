//! The run itself (nextest, a coverage tool or plain `cargo test`) and single-test reruns.

use std::path::PathBuf;
use std::time::Instant;

use super::ctx::{stopped, Ctx};
use super::gate::{first_errors, gate, ERROR_LINES};
use super::stage::generated_files;
use super::STAGED_PREFIX;
use crate::family::rust::libtest::parse_libtest;
use crate::proc::Captured;
use crate::testing::exec::ExecError;
use crate::testing::junit::parse_junit;
use crate::testing::lcov::parse_lcov;
use crate::testing::report::{TestCase, TestStatus};
use crate::testing::runner::{RunOutput, RunSpec};
use crate::util::tail_lines;

/// Our nextest profile, defined in a tool config file outside the copy, so a repository's own
/// `.config/nextest.toml` is neither overwritten nor edited. Tool profiles carry the tool's prefix.
const NEXTEST_PROFILE: &str = "team-testing:run";

pub(super) fn run(spec: &RunSpec) -> RunOutput {
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

/// `-- --skip <id>` per deselected test. libtest's --skip matches substrings, so it also leaves
/// out tests whose path merely contains the id; `--exact` would fix that but also turns every
/// other filter exact, so it is left out for now.
pub(super) fn skip_args(deselect: &[String]) -> Vec<String> {
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
fn run_libtest(ctx: &Ctx, out: &mut RunOutput) -> Result<(), ExecError> {
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
pub(super) fn interleave(stdout: &str, stderr: &str) -> String {
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
pub(super) fn nextest_match(id: &str) -> String {
    let mut alternatives: Vec<String> = id
        .match_indices("::")
        .map(|(i, _)| format!("(binary_id(={}) & test(={}))", &id[..i], &id[i + 2..]))
        .collect();
    alternatives.push(format!("test(={id})"));
    alternatives.join(" | ")
}

/// nextest's store (where it writes our profile's JUnit): one per layer in the target folder.
/// Its default, the copy's own target/, is read-only in the sandbox, and layers may run at once.
fn nextest_store(ctx: &Ctx) -> PathBuf {
    ctx.target_dir.join(format!("nextest-{}", ctx.spec.layer))
}

/// Where nextest writes our profile's JUnit.
fn nextest_junit(ctx: &Ctx) -> PathBuf {
    nextest_store(ctx).join(NEXTEST_PROFILE).join("junit.xml")
}

/// `cargo nextest run` with our profile; `filter` narrows the run (rerun, deselect).
fn nextest(ctx: &Ctx, filter: Option<String>) -> Result<(Vec<String>, Captured), ExecError> {
    let config = ctx.copy.with_file_name("nextest-team-testing.toml");
    // Retries off: flakiness is found by rerun, not hidden by the repository's retry policy.
    let profile = format!(
        "[store]\ndir = {}\n\n[profile.\"{NEXTEST_PROFILE}\"]\nfail-fast = false\nretries = 0\n\n[profile.\"{NEXTEST_PROFILE}\".junit]\npath = \"junit.xml\"\n",
        toml::Value::String(nextest_store(ctx).display().to_string())
    );
    crate::util::write_nofollow(&config, profile.as_bytes()).map_err(|cause| {
        ExecError::WriteConfig {
            path: config.clone(),
            cause,
        }
    })?;
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

fn run_nextest(ctx: &Ctx, out: &mut RunOutput) -> Result<(), ExecError> {
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
fn run_coverage(ctx: &Ctx, tool: &str, out: &mut RunOutput) -> Result<(), ExecError> {
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
pub(super) fn rerun(spec: &RunSpec, case_id: &str) -> Option<TestStatus> {
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
pub(super) fn status_of(cases: &[TestCase], id: &str) -> Option<TestStatus> {
    let mut matching = cases.iter().filter(|c| c.id == id).map(|c| c.status);
    let first = matching.next()?;
    Some(
        matching
            .chain([first])
            .find(|s| matches!(s, TestStatus::Failed | TestStatus::Error))
            .unwrap_or(first),
    )
}
