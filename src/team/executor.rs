//! Executor: runs a layer's generated tests for real (pytest, under coverage.py when it is
//! installed), parses the JUnit XML, and records results/run-NNN.json.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use super::util::{time_left, to_map};
use super::RoleContext;
use crate::proc::{run_captured_env, Captured};
use crate::tasks::Outcome;
use crate::testing::detect::session_framework;
use crate::util::{atomic_write, atomic_write_json, mkdirs, now_ts};

/// Counts and failures read from a JUnit XML report.
#[derive(Debug, Default, PartialEq)]
struct Junit {
    passed: u64,
    failed: u64,
    skipped: u64,
    failures: Vec<(String, String)>,
}

impl Junit {
    /// passed / (passed + failed); skipped tests do not count, no runnable test is 0.
    fn pass_rate(&self) -> f64 {
        let runnable = self.passed + self.failed;
        if runnable == 0 {
            0.0
        } else {
            self.passed as f64 / runnable as f64
        }
    }
}

pub fn run(ctx: &RoleContext) -> Outcome {
    let Some(layer) = ctx.task.layer.as_deref() else {
        return Outcome::failed(format!(
            "task {} has no layer: the executor needs one",
            ctx.task.id
        ));
    };
    let framework = session_framework(ctx.session, ctx.repo);
    let results = ctx.session.root.join("results");
    if let Err(e) = mkdirs(&results) {
        return Outcome::failed(e.to_string());
    }
    (ctx.progress)(
        "context_loaded",
        Some(10.0),
        Some(format!("framework {framework}, layer {layer}")),
    );
    let test_dir = ctx.session.root.join("tests").join(layer);
    if !matches!(framework.as_str(), "pytest" | "unittest") {
        return empty_run(
            ctx,
            layer,
            &framework,
            &results,
            format!("no built-in runner for {framework} yet"),
        );
    }
    if !has_python_tests(&test_dir) {
        return empty_run(
            ctx,
            layer,
            &framework,
            &results,
            format!("no tests in {layer}"),
        );
    }
    match run_pytest(ctx, layer, &framework, &test_dir, &results) {
        Ok(out) => out,
        Err(e) => Outcome::failed(e),
    }
}

fn has_python_tests(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.flatten().any(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("test_") && n.ends_with(".py")
        })
    })
}

/// A run with nothing executed is still recorded, so the analyst sees every attempt.
fn empty_run(
    ctx: &RoleContext,
    layer: &str,
    framework: &str,
    results: &Path,
    summary: String,
) -> Outcome {
    let (n, run_path) = match reserve_run(results) {
        Ok(r) => r,
        Err(e) => return Outcome::failed(e),
    };
    let record = json!({
        "task_id": ctx.task.id, "layer": layer, "framework": framework, "command": null,
        "exit_code": null, "total": 0, "passed": 0, "failed": 0, "skipped": 0, "pass_rate": 0.0,
        "coverage": null, "failures": [], "junit": null, "coverage_file": null, "note": summary,
    });
    if let Err(e) = atomic_write_json(&run_path, &record) {
        return Outcome::failed(e.to_string());
    }
    let mut out = Outcome::completed(summary);
    out.pass_rate = Some(0.0);
    out.data = to_map(record);
    out.data.insert("tests".into(), json!(0));
    out.artifacts = vec![format!("results/run-{n:03}.json")];
    out
}

/// Claims the next free run number by creating run-NNN.json exclusively (parallel executors
/// share the folder), starting after the runs already recorded.
fn reserve_run(results: &Path) -> Result<(usize, PathBuf), String> {
    let existing = std::fs::read_dir(results)
        .map(|rd| {
            rd.flatten()
                .filter(|e| is_run_file(&e.file_name().to_string_lossy()))
                .count()
        })
        .unwrap_or(0);
    for n in existing + 1..existing + 1000 {
        let path = results.join(format!("run-{n:03}.json"));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(_) => return Ok((n, path)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
        }
    }
    Err(format!("no free run number in {}", results.display()))
}

pub(crate) fn is_run_file(name: &str) -> bool {
    name.starts_with("run-") && name.ends_with(".json")
}

fn run_pytest(
    ctx: &RoleContext,
    layer: &str,
    framework: &str,
    test_dir: &Path,
    results: &Path,
) -> Result<Outcome, String> {
    let venv = ctx.repo.join(".venv/bin/python");
    let python = if venv.is_file() {
        venv.to_string_lossy().into_owned()
    } else {
        "python3".to_string()
    };
    let env = python_env(ctx.repo);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let probe = |module: &str| -> Result<bool, String> {
        let t = time_left(ctx.deadline)?.min(Duration::from_secs(60));
        run_captured_env(
            &[&python, "-c", &format!("import {module}")],
            test_dir,
            &env,
            t,
        )
        .map(|c| c.success())
        .map_err(|e| format!("cannot run {python}: {e}"))
    };
    if !probe("pytest")? {
        return Err(format!(
            "pytest is not installed for {python}: cannot run the {layer} tests"
        ));
    }
    let with_coverage = probe("coverage")?;
    let (n, run_path) = reserve_run(results)?;
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let rel = |name: String| (results.join(&name), format!("results/{name}"));
    let (junit_path, junit_rel) = rel(format!("junit-{n:03}.xml"));
    let (cov_json, cov_rel) = rel(format!("coverage-{n:03}.json"));
    // COVERAGE_FILE rather than --data-file: every coverage.py version reads it.
    let data_file = s(&results.join(format!(".coverage-{n:03}")));
    let mut env = env.clone();
    env.push(("COVERAGE_FILE", data_file.as_str()));
    // An ini of our own keeps the target's pytest addopts and conftest.py out of the run.
    let ini = results.join("pytest-isolated.ini");
    atomic_write(&ini, b"[pytest]\n").map_err(|e| e.to_string())?;
    let mut argv: Vec<String> = vec![python.clone()];
    if with_coverage {
        let omit = format!(
            "{}/*,{}/*,{}/*",
            s(&ctx.session.root),
            s(&ctx.repo.join(".workflow")),
            s(&ctx.repo.join(".venv"))
        );
        argv.extend(["-m", "coverage", "run", "--branch"].map(String::from));
        argv.extend([
            format!("--source={}", s(ctx.repo)),
            format!("--omit={omit}"),
        ]);
    }
    argv.extend(["-m", "pytest", "-q", "-p", "no:cacheprovider"].map(String::from));
    argv.extend([
        format!("--junitxml={}", s(&junit_path)),
        "-c".into(),
        s(&ini),
        format!("--rootdir={}", s(test_dir)),
        s(test_dir),
    ]);
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    (ctx.progress)("tests_running", Some(30.0), None);
    let started_at = now_ts();
    let run = run_captured_env(&args, test_dir, &env, time_left(ctx.deadline)?)
        .map_err(|e| e.to_string())?;
    let junit_text = std::fs::read_to_string(&junit_path).map_err(|_| pytest_broke(&run))?;
    let junit = parse_junit(&junit_text);
    (ctx.progress)("tests_done", Some(70.0), None);
    let coverage = if with_coverage {
        coverage_json(ctx, &python, &cov_json, test_dir, &env)
    } else {
        None
    };
    let pass_rate = junit.pass_rate();
    let failures: Vec<Value> = junit
        .failures
        .iter()
        .map(|(n, m)| json!({"name": n, "message": m}))
        .collect();
    let total = junit.passed + junit.failed + junit.skipped;
    let record = json!({
        "task_id": ctx.task.id, "layer": layer, "framework": framework, "command": args.join(" "),
        "env": env.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "exit_code": run.status, "total": total, "passed": junit.passed, "failed": junit.failed,
        "skipped": junit.skipped, "pass_rate": pass_rate, "coverage": coverage, "failures": failures,
        "junit": junit_rel, "coverage_file": coverage.map(|_| cov_rel.clone()),
        "started_at": started_at, "finished_at": now_ts(), "output_tail": tail(&run.stdout, 40),
    });
    atomic_write_json(&run_path, &record).map_err(|e| e.to_string())?;
    let cov_text = coverage.map_or("unknown (coverage.py not installed)".to_string(), |c| {
        format!("{c:.1}%")
    });
    let mut out = Outcome::completed(format!(
        "{layer}: {total} tests, {} passed, {} failed, {} skipped; pass {:.1}% cov {cov_text}",
        junit.passed,
        junit.failed,
        junit.skipped,
        pass_rate * 100.0
    ));
    out.pass_rate = Some(pass_rate);
    out.coverage = coverage;
    out.data = to_map(record);
    out.artifacts = vec![format!("results/run-{n:03}.json"), junit_rel];
    if coverage.is_some() {
        out.artifacts.push(cov_rel);
    }
    Ok(out)
}

/// PYTHONPATH: the repository (and its src/ folder) before whatever the caller had.
fn python_env(repo: &Path) -> Vec<(String, String)> {
    let mut paths = vec![repo.to_string_lossy().into_owned()];
    if repo.join("src").is_dir() {
        paths.push(repo.join("src").to_string_lossy().into_owned());
    }
    if let Ok(old) = std::env::var("PYTHONPATH") {
        paths.extend(old.split(':').filter(|p| !p.is_empty()).map(String::from));
    }
    vec![("PYTHONPATH".into(), paths.join(":"))]
}

/// pytest wrote no JUnit file: it could not start (usage error, internal error, crash).
fn pytest_broke(run: &Captured) -> String {
    format!(
        "pytest exited with {:?} and wrote no JUnit report: {}",
        run.status,
        tail(&format!("{}{}", run.stdout, run.stderr), 15)
    )
}

/// Exports the coverage data to JSON and reads totals.percent_covered; None when it cannot.
fn coverage_json(
    ctx: &RoleContext,
    python: &str,
    out: &Path,
    cwd: &Path,
    env: &[(&str, &str)],
) -> Option<f64> {
    let out_arg = out.to_string_lossy();
    let argv = [python, "-m", "coverage", "json", "-o", &out_arg];
    let run = run_captured_env(&argv, cwd, env, time_left(ctx.deadline).ok()?).ok()?;
    if !run.success() {
        return None;
    }
    let report: Value = serde_json::from_str(&std::fs::read_to_string(out).ok()?).ok()?;
    report["totals"]["percent_covered"].as_f64()
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A tolerant JUnit reader: every `<testcase` is a test; one holding `<failure` or `<error` failed,
/// one holding `<skipped` was skipped, the rest passed.
fn parse_junit(xml: &str) -> Junit {
    let mut j = Junit::default();
    for chunk in xml.split("<testcase").skip(1) {
        let head_end = chunk.find('>').unwrap_or(chunk.len());
        let head = &chunk[..head_end];
        let body = if head.ends_with('/') {
            ""
        } else {
            chunk[head_end..].split("</testcase>").next().unwrap_or("")
        };
        let failed_at = ["<failure", "<error"]
            .iter()
            .filter_map(|t| body.find(t))
            .min();
        if let Some(at) = failed_at {
            j.failed += 1;
            let class = attr(head, "classname").unwrap_or_default();
            let name = attr(head, "name").unwrap_or_default();
            let full = if class.is_empty() {
                name
            } else {
                format!("{class}::{name}")
            };
            let tag = &body[at..body[at..].find('>').map_or(body.len(), |e| at + e)];
            j.failures
                .push((full, attr(tag, "message").unwrap_or_default()));
        } else if body.contains("<skipped") {
            j.skipped += 1;
        } else {
            j.passed += 1;
        }
    }
    j
}

/// The unescaped value of ` key="…"` in a start tag.
fn attr(tag: &str, key: &str) -> Option<String> {
    let start = tag.find(&format!(" {key}=\""))? + key.len() + 3;
    let len = tag[start..].find('"')?;
    let raw = &tag[start..start + len];
    Some(
        raw.replace("&#10;", "\n")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYTEST_JUNIT: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="4" time="0.046" timestamp="2026-12-02T18:03:23.380544+00:00" hostname="vm"><testcase classname="test_calc" name="test_pos" time="0.000" /><testcase classname="test_calc" name="test_neg" time="0.000" /><testcase classname="test_calc" name="test_fail" time="0.001"><failure message="AssertionError: assert 'zero' == 'pos'&#10;  &#10;  - pos&#10;  + zero">&gt;   def test_fail(): assert classify(0) == "pos"
                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^
E   AssertionError: assert 'zero' == 'pos'
E     
E     - pos
E     + zero

test_calc.py:5: AssertionError</failure></testcase><testcase classname="test_calc" name="test_skip" time="0.000"><skipped type="pytest.skip" message="demo">/home/user/pyproj/test_calc.py:6: demo</skipped></testcase></testsuite></testsuites>"#;

    #[test]
    fn pytest_junit_is_counted() {
        let j = parse_junit(PYTEST_JUNIT);
        assert_eq!((j.passed, j.failed, j.skipped), (2, 1, 1));
        assert!((j.pass_rate() - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(j.failures[0].0, "test_calc::test_fail");
        assert!(j.failures[0]
            .1
            .starts_with("AssertionError: assert 'zero' == 'pos'\n"));
    }

    #[test]
    fn errors_fail_and_nothing_runnable_is_zero() {
        let j = parse_junit(
            r#"<testsuite><testcase classname="" name="t"><error message="boom &amp; bust"/></testcase></testsuite>"#,
        );
        assert_eq!((j.passed, j.failed), (0, 1));
        assert_eq!(j.failures[0], ("t".to_string(), "boom & bust".to_string()));
        assert_eq!(parse_junit("<testsuite/>").pass_rate(), 0.0);
    }

    #[test]
    fn run_numbers_are_claimed_in_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("run-001.json"), "{}").unwrap();
        let (n, path) = reserve_run(dir.path()).unwrap();
        assert_eq!(n, 2);
        assert!(path.ends_with("run-002.json"));
        assert_eq!(reserve_run(dir.path()).unwrap().0, 3);
    }
}
