//! The project's own pytest suite, run once before generating: from a mirror of the repository
//! (so the project's own pytest configuration and conftest apply, as when its developers run it),
//! under coverage.py with branches, its temporary files kept in a folder of ours.

use std::path::Path;
use std::time::Instant;

use super::run::repo_paths;
use crate::family::python::coveragepy::parse_coveragepy_json;
use crate::testing::exec::{Exec, ExecError};
use crate::testing::junit::parse_junit;
use crate::testing::runner::{RunOutput, SuiteSpec};
use crate::util::tail_lines;

/// The mirror's folder under the session's workspace.
pub(super) const COPY: &str = "python-baseline";

pub(super) fn run(spec: &SuiteSpec) -> RunOutput {
    let started = Instant::now();
    let mut out = RunOutput::default();
    let copy = spec.session.join("workspace").join(COPY);
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
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let mut paths = vec![s(&copy)];
    if copy.join("src").is_dir() {
        paths.push(s(&copy.join("src")));
    }
    let exec = Exec {
        sandbox: spec.sandbox,
        cwd: copy.clone(),
        env: vec![
            ("PYTHONPATH".into(), paths.join(":")),
            ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
            (
                "COVERAGE_FILE".into(),
                s(&spec.results.join(".coverage-baseline")),
            ),
        ],
        deadline: started + spec.timeout,
    };
    let junit = spec.results.join("junit-baseline.xml");
    let with_coverage = spec.tools.coverage_tool.as_deref() == Some("coverage.py");
    let mut argv = vec![spec.tools.interpreter.clone()];
    if with_coverage {
        argv.extend(["-m", "coverage", "run", "--branch"].map(String::from));
        argv.push(format!("--source={}", s(&copy)));
    }
    argv.extend(["-m", "pytest", "-p", "no:cacheprovider", "-q"].map(String::from));
    argv.push(format!("--rootdir={}", s(&copy)));
    argv.push(format!("--basetemp={}", s(&copy.with_extension("tmp"))));
    argv.push(format!("--junitxml={}", s(&junit)));
    argv.extend(spec.tests.iter().cloned());
    out.command = argv.clone();
    let ran = match exec.run(&argv) {
        Ok(r) => r,
        Err(e) => {
            out.timed_out = matches!(e, ExecError::TimedOut { .. });
            out.env_problem = Some(format!("the project's own tests did not finish: {e}"));
            return finish(out, started);
        }
    };
    out.exit_code = ran.status;
    let transcript = format!("{}{}", ran.stdout, ran.stderr);
    out.output_tail = tail_lines(&transcript, 60);
    if crate::util::write_nofollow(
        &spec.results.join("pytest-baseline.txt"),
        transcript.as_bytes(),
    )
    .is_ok()
    {
        out.reports.push("results/pytest-baseline.txt".into());
    }
    match parse_junit(&junit) {
        Ok(cases) => {
            out.cases = cases.into_iter().map(|c| repo_paths(c, &copy)).collect();
            out.reports.push("results/junit-baseline.xml".into());
        }
        Err(e) => {
            out.env_problem = Some(format!(
                "the project's own tests ended with {:?} and no usable report ({e}): {}",
                ran.status,
                tail_lines(&transcript, 5)
            ));
            return finish(out, started);
        }
    }
    if !with_coverage {
        out.coverage_problem = Some(spec.tools.coverage_reason.clone());
        return finish(out, started);
    }
    let json = spec.results.join("coveragepy-baseline.json");
    let export = [
        spec.tools.interpreter.clone(),
        "-m".into(),
        "coverage".into(),
        "json".into(),
        "-q".into(),
        "-o".into(),
        s(&json),
    ];
    match exec.run(&export) {
        Ok(r) if r.success() => match parse_coveragepy_json(&json) {
            Ok(report) => {
                out.coverage = Some(report.relative_to(&copy));
                out.reports.push("results/coveragepy-baseline.json".into());
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
    finish(out, started)
}

fn finish(mut out: RunOutput, started: Instant) -> RunOutput {
    out.duration_s = started.elapsed().as_secs_f64();
    out
}
