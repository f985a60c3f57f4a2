//! Runs a layer's Python tests with pytest (under coverage.py when it is installed): an L0 gate
//! that collects first and leaves unloadable files out, then the run itself with a JUnit report and
//! coverage JSON kept under results/. The repository is only read: it is mirrored into
//! `<session>/workspace/python-<layer>`, the tests run from the session with the mirror on
//! PYTHONPATH, so code that writes next to itself writes into the mirror.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::isolation::{EffectsAudit, EffectsError};
use super::test_files;
use crate::family::python::coveragepy::parse_coveragepy_json;
use crate::proc::Captured;
use crate::testing::exec::{Exec, ExecError};
use crate::testing::junit::parse_junit;
use crate::testing::load_error::LoadError;
use crate::testing::report::{TestCase, TestStatus};
use crate::testing::runner::{RunOutput, RunSpec};
use crate::util::tail_lines;

struct Ctx<'a> {
    spec: &'a RunSpec<'a>,
    /// The mirror of the repository the tests import.
    copy: PathBuf,
    /// Every child runs from the layer's test folder with the Python environment.
    exec: Exec<'a>,
    ini: PathBuf,
    /// The effects plugin every pytest process of the run loads.
    audit: EffectsAudit,
}

impl Ctx<'_> {
    fn exec(&self, argv: &[String]) -> Result<Captured, ExecError> {
        self.exec.run(argv)
    }

    /// `python -m pytest` with our own ini, so the target's addopts and conftest stay out.
    fn pytest(&self) -> Vec<String> {
        let mut argv = vec![
            self.spec.tools.interpreter.clone(),
            "-m".into(),
            "pytest".into(),
        ];
        argv.extend([
            "-c".into(),
            s(&self.ini),
            format!("--rootdir={}", s(&self.spec.test_dir)),
            "-p".into(),
            "no:cacheprovider".into(),
        ]);
        argv.extend(self.audit.pytest_args());
        argv
    }

    fn result_file(&self, kind: &str, ext: &str) -> (PathBuf, String) {
        let name = format!("{kind}-{}.{ext}", self.spec.run_no);
        (self.spec.results.join(&name), format!("results/{name}"))
    }
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// PYTHONPATH with the repository (and its src/) and the effects plugin, no bytecode written
/// into the repository.
fn python_env(repo: &Path, coverage_file: &Path, audit: &EffectsAudit) -> Vec<(String, String)> {
    let mut paths = vec![s(repo)];
    if repo.join("src").is_dir() {
        paths.push(s(&repo.join("src")));
    }
    paths.push(s(&audit.plugin_dir));
    let mut env = vec![
        ("PYTHONPATH".into(), paths.join(":")),
        ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
        ("COVERAGE_FILE".into(), s(coverage_file)),
    ];
    env.extend(audit.env());
    env
}

/// The effects plugin of a run (`tag` tells the main run from a re-run): installed beside the
/// mirror, recording into results/, with a basetemp in `<mirror>.tmp` (writable in the sandbox).
fn effects_audit(spec: &RunSpec, tag: &str) -> Result<EffectsAudit, EffectsError> {
    let copy = copy_dir(spec);
    let plugin = copy.with_extension("plugin");
    let basetemp = copy.with_extension("tmp").join(format!("pytest-{tag}"));
    let file = spec.results.join(format!("effects-{tag}.jsonl"));
    EffectsAudit::prepare(&plugin, &file, &basetemp)
}

/// `<session>/workspace/python-<layer>`.
fn copy_dir(spec: &RunSpec) -> PathBuf {
    spec.session
        .join("workspace")
        .join(format!("python-{}", spec.layer))
}

pub fn run(spec: &RunSpec) -> RunOutput {
    let started = Instant::now();
    let mut out = RunOutput::default();
    let copy = copy_dir(spec);
    if let Err(e) = crate::workspace::mirror(spec.repo, &copy, &std::collections::BTreeMap::new()) {
        out.env_problem = Some(format!(
            "cannot mirror {} into {}: {e}",
            spec.repo.display(),
            copy.display()
        ));
        return out;
    }
    if !spec.tools.runner_available {
        out.env_problem = Some(format!(
            "pytest is not available for {}: install it with `{}`",
            spec.tools.interpreter,
            spec.tools
                .install_hint
                .as_deref()
                .unwrap_or("python3 -m pip install pytest")
        ));
        return out;
    }
    let audit = match effects_audit(spec, &spec.run_no) {
        Ok(a) => a,
        Err(e) => {
            out.env_problem = Some(e.to_string());
            return out;
        }
    };
    let ctx = Ctx {
        spec,
        exec: Exec {
            sandbox: spec.sandbox,
            cwd: spec.test_dir.clone(),
            env: python_env(
                &copy,
                &spec.results.join(format!(".coverage-{}", spec.run_no)),
                &audit,
            ),
            deadline: started + spec.timeout,
        },
        copy,
        ini: spec.results.join("pytest-isolated.ini"),
        audit,
    };
    if let Err(e) = crate::util::write_nofollow(&ctx.ini, b"[pytest]\n") {
        out.env_problem = Some(format!("cannot write {}: {e}", ctx.ini.display()));
        return out;
    }
    let files = test_files(&spec.test_dir);
    match collect(&ctx, &files) {
        Ok(errors) => out.load_errors = errors,
        Err(e) => {
            out.timed_out = matches!(e, ExecError::TimedOut { .. });
            out.env_problem = Some(e.to_string());
            return out;
        }
    }
    let loadable: Vec<&PathBuf> = files
        .iter()
        .filter(|f| {
            !out.load_errors
                .iter()
                .any(|l| spec.test_dir.join(&l.file) == **f)
        })
        .collect();
    if loadable.is_empty() {
        out.duration_s = started.elapsed().as_secs_f64();
        return out;
    }
    run_tests(&ctx, &loadable, &mut out);
    out.effects = ctx.audit.read();
    out.duration_s = started.elapsed().as_secs_f64();
    out
}

/// L0: collect only. Files whose collection fails are reported with pytest's error and left out.
fn collect(ctx: &Ctx, files: &[PathBuf]) -> Result<Vec<LoadError>, ExecError> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let (junit, _) = ctx.result_file("collect", "xml");
    let mut argv = ctx.pytest();
    argv.extend([
        "--collect-only".into(),
        "-q".into(),
        format!("--junitxml={}", s(&junit)),
    ]);
    argv.extend(files.iter().map(|f| s(f)));
    let run = ctx.exec(&argv)?;
    let cases = parse_junit(&junit).map_err(|report| ExecError::NotCollected {
        code: run.status,
        report,
        output_tail: tail_lines(&format!("{}{}", run.stdout, run.stderr), 20),
    })?;
    Ok(cases
        .iter()
        .filter(|c| c.status == TestStatus::Error)
        .map(|c| LoadError {
            file: module_file(&ctx.spec.test_dir, c).unwrap_or_else(|| c.name.clone()),
            error: c
                .detail
                .clone()
                .or_else(|| c.message.clone())
                .unwrap_or_default(),
            verdict: None,
        })
        .collect())
}

/// The test file a collection error names: `classname` is the package path, `name` the module.
fn module_file(test_dir: &Path, case: &TestCase) -> Option<String> {
    let dotted = match case.classname.as_deref() {
        Some(c) if !c.is_empty() => format!("{c}.{}", case.name),
        _ => case.name.clone(),
    };
    let rel = format!("{}.py", dotted.replace('.', "/"));
    test_dir.join(&rel).is_file().then_some(rel)
}

fn run_tests(ctx: &Ctx, files: &[&PathBuf], out: &mut RunOutput) {
    let spec = ctx.spec;
    let (junit, junit_rel) = ctx.result_file("junit", "xml");
    let with_coverage = spec.tools.coverage_tool.as_deref() == Some("coverage.py");
    let mut argv = vec![spec.tools.interpreter.clone()];
    if with_coverage {
        argv.extend(["-m", "coverage", "run", "--branch"].map(String::from));
        argv.push(format!("--source={}", s(&ctx.copy)));
        argv.extend(ctx.pytest().into_iter().skip(1));
    } else {
        argv = ctx.pytest();
    }
    argv.extend(["-q".into(), format!("--junitxml={}", s(&junit))]);
    for id in spec.deselect {
        argv.push(format!("--deselect={id}"));
    }
    argv.extend(files.iter().map(|f| s(f)));
    out.command = argv.clone();
    let run = match ctx.exec(&argv) {
        Ok(r) => r,
        Err(e) => {
            out.timed_out = matches!(e, ExecError::TimedOut { .. });
            out.env_problem = Some(format!("the test run did not finish: {e}"));
            return;
        }
    };
    out.exit_code = run.status;
    out.output_tail = tail_lines(&format!("{}{}", run.stdout, run.stderr), 60);
    let raw = spec.results.join(format!("pytest-{}.txt", spec.run_no));
    if crate::util::write_nofollow(&raw, format!("{}{}", run.stdout, run.stderr).as_bytes()).is_ok()
    {
        out.reports
            .push(format!("results/pytest-{}.txt", spec.run_no));
    }
    match parse_junit(&junit) {
        Ok(cases) => {
            out.cases = cases
                .into_iter()
                .map(|c| repo_paths(c, &ctx.copy))
                .collect();
            out.reports.push(junit_rel);
        }
        Err(e) => {
            out.env_problem = Some(format!(
                "pytest exited with {:?} and its report is unusable: {e}",
                run.status
            ));
            return;
        }
    }
    if with_coverage {
        coverage(ctx, out);
    } else {
        out.coverage_problem = Some(spec.tools.coverage_reason.clone());
    }
}

/// Exports coverage.py's data as JSON (kept as the raw report) and reads it, repo-relative.
fn coverage(ctx: &Ctx, out: &mut RunOutput) {
    let (json, rel) = ctx.result_file("coveragepy", "json");
    let argv = vec![
        ctx.spec.tools.interpreter.clone(),
        "-m".into(),
        "coverage".into(),
        "json".into(),
        "-q".into(),
        "-o".into(),
        s(&json),
    ];
    match ctx.exec(&argv) {
        Ok(r) if r.success() => match parse_coveragepy_json(&json) {
            Ok(report) => {
                out.coverage = Some(report.relative_to(&ctx.copy));
                out.reports.push(rel);
            }
            Err(e) => out.coverage_problem = Some(e.to_string()),
        },
        Ok(r) => {
            out.coverage_problem = Some(format!(
                "coverage json failed: {}",
                tail_lines(&r.stderr, 5)
            ))
        }
        Err(e) => out.coverage_problem = Some(format!("coverage json failed: {e}")),
    }
}

/// Tracebacks name the mirror (`../../workspace/python-L1-unit/pkg/mod.py`): show repository paths.
pub(super) fn repo_paths(mut case: TestCase, copy: &Path) -> TestCase {
    let abs = format!("{}/", s(copy));
    let rel = copy
        .file_name()
        .map(|n| format!("workspace/{}/", n.to_string_lossy()))
        .unwrap_or_default();
    let fix = |t: &str| {
        // pytest writes paths relative to the test folder: ../../workspace/python-L1-unit/x.py
        t.replace(&abs, "")
            .replace(&format!("../../{rel}"), "")
            .replace(&rel, "")
    };
    case.message = case.message.as_deref().map(fix);
    case.detail = case.detail.as_deref().map(fix);
    case
}

/// pytest's node id for a JUnit case: `pkg/test_x.py::TestC::test_y`.
pub fn node_id(test_dir: &Path, case: &TestCase) -> String {
    let parts: Vec<&str> = case
        .classname
        .as_deref()
        .unwrap_or("")
        .split('.')
        .filter(|p| !p.is_empty())
        .collect();
    for split in (1..=parts.len()).rev() {
        let file = format!("{}.py", parts[..split].join("/"));
        if test_dir.join(&file).is_file() {
            let mut id = file;
            for class in &parts[split..] {
                id.push_str("::");
                id.push_str(class);
            }
            return format!("{id}::{}", case.name);
        }
    }
    case.id.clone()
}

/// Runs one test again; its status, or None when it could not run.
pub fn rerun(spec: &RunSpec, case: &TestCase) -> Option<TestStatus> {
    let copy = copy_dir(spec);
    let audit = effects_audit(spec, &format!("rerun-{}", spec.run_no)).ok()?;
    let ctx = Ctx {
        spec,
        exec: Exec {
            sandbox: spec.sandbox,
            cwd: spec.test_dir.clone(),
            env: python_env(
                &copy,
                &spec
                    .results
                    .join(format!(".coverage-rerun-{}", spec.run_no)),
                &audit,
            ),
            deadline: Instant::now() + spec.timeout,
        },
        copy,
        ini: spec.results.join("pytest-isolated.ini"),
        audit,
    };
    let mut argv = ctx.pytest();
    argv.extend(["-q".into(), node_id(&spec.test_dir, case)]);
    let run = ctx.exec(&argv).ok()?;
    match run.status {
        Some(0) => Some(TestStatus::Passed),
        Some(1) => Some(TestStatus::Failed),
        _ => None,
    }
}
