//! The accept filter for test files an agent wrote: a candidate is kept only when it is a test
//! file, loads, passes every one of several runs in a row inside the sandbox (watched, when the
//! file-system watch works), and adds coverage of the scope. Rejections carry the reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::agents::answer::AnswerFile;
use crate::family::python::isolation::EffectsAudit;
use crate::proc::run_sandboxed;
use crate::sandbox::Sandbox;
use crate::team::error::{Result, RoleError};
use crate::team::util::{sandbox_for, time_left};
use crate::team::RoleContext;
use crate::testing::toolchain::python_for;
use crate::util::mkdirs;

/// pytest with no cache and the bench folder as its root (after `-m`).
const PYTEST: &[&str] = &["pytest", "-q", "-p", "no:cacheprovider", "--rootdir", "."];
/// Runs a candidate must pass in a row to count as not flaky.
const ACCEPT_RUNS: usize = 5;

/// A path's last component, as text.
pub(super) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Each candidate with None (accepted) or why it was rejected: not a test file, did not load,
/// failed, flaky, or no new coverage of the scope.
pub(super) fn accept_filter<'a>(
    ctx: &RoleContext,
    layer: &str,
    files: &'a [AnswerFile],
    scope: &[String],
    scenarios: bool,
) -> Result<Vec<(&'a AnswerFile, Option<String>)>> {
    let python = python_for(ctx.repo);
    let (mirror, _) = crate::gen::scratch_dirs(&ctx.session.root, layer);
    crate::workspace::mirror(ctx.repo, &mirror, &BTreeMap::new()).map_err(|cause| {
        RoleError::Mirror {
            into: mirror.clone(),
            cause,
        }
    })?;
    let bench = ctx
        .session
        .root
        .join("workspace")
        .join(format!("accept-{layer}"));
    let _ = std::fs::remove_dir_all(&bench);
    mkdirs(&bench)?;
    let sandbox = sandbox_for(
        ctx,
        &format!("accept-{layer}"),
        crate::sandbox::python_roots(&python, ctx.repo),
        std::slice::from_ref(&bench),
    )?;
    let audit = bench_audit(&bench)?;
    let watching = watching_sandbox(ctx, &format!("accept-watch-{layer}"), &bench);
    let runner = Bench {
        python: &python,
        mirror: &mirror,
        dir: &bench,
        sandbox: sandbox.as_ref(),
        watching: watching.as_ref(),
        deadline: ctx.deadline,
        scope,
        audit: &audit,
    };
    if scenarios {
        // A scenario's file traces its requirement: it must load and be safe, nothing more.
        let mut out = Vec::new();
        for f in files {
            let name = file_name(&f.path);
            let verdict = if !is_test_name(&name) {
                Some(format!("not a pytest test file name ({name})"))
            } else {
                let path = bench.join(&name);
                std::fs::write(&path, &f.content).map_err(RoleError::io("write", &path))?;
                let verdict = runner.judge_scenario(&path);
                let _ = std::fs::remove_file(&path);
                verdict
            };
            out.push((f, verdict));
        }
        return Ok(out);
    }
    // What the layer's tests already cover: a candidate must add to it.
    let existing: Vec<PathBuf> = std::fs::read_dir(ctx.session.root.join("tests").join(layer))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| is_test_name(&file_name(p)))
                .collect()
        })
        .unwrap_or_default();
    // Without a baseline every candidate would "add coverage": that is no filter.
    let mut covered =
        runner
            .coverage_of(&existing, "baseline")
            .ok_or_else(|| RoleError::NoBaselineCoverage {
                layer: layer.to_string(),
                python: python.clone(),
            })?;
    let mut out = Vec::new();
    for f in files {
        let name = file_name(&f.path);
        let verdict = if !is_test_name(&name) {
            Some(format!("not a pytest test file name ({name})"))
        } else {
            let path = bench.join(&name);
            std::fs::write(&path, &f.content).map_err(RoleError::io("write", &path))?;
            let verdict = runner.judge(&path, &mut covered);
            let _ = std::fs::remove_file(&path);
            verdict
        };
        out.push((f, verdict));
    }
    Ok(out)
}

fn is_test_name(name: &str) -> bool {
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}

/// A watching sandbox for a bench's candidates (the file-system watch), where the machine has
/// one; without it the executor's watch of the layer is the one check of what they change.
fn watching_sandbox(ctx: &RoleContext, name: &str, bench: &Path) -> Option<Sandbox> {
    if !ctx.sandbox.enabled || crate::sandbox::watch::support().is_err() {
        return None;
    }
    let root = ctx
        .session
        .root
        .join("workspace")
        .join("sandbox")
        .join(name);
    Sandbox::watching(
        ctx.sandbox,
        &root,
        &[],
        std::slice::from_ref(&bench.to_path_buf()),
    )
    .ok()
}

/// The effects plugin of a bench: its files inside the bench (the one folder the sandbox lets the
/// candidate's runs write).
fn bench_audit(bench: &Path) -> Result<EffectsAudit> {
    Ok(EffectsAudit::prepare(
        &bench.join(".tt-plugin"),
        &bench.join(".tt-effects.jsonl"),
        &bench.join(".tt-basetemp"),
    )?)
}

/// Why one pytest run of a candidate gave no verdict from its output.
enum Trial {
    /// It changed something outside its own temporary folders (the reason to give).
    Unsafe(String),
    /// It could not run (time, sandbox, start).
    NotRun(RoleError),
}

/// Runs pytest (and coverage.py) on one candidate, in the sandbox.
struct Bench<'a> {
    python: &'a str,
    mirror: &'a Path,
    dir: &'a Path,
    sandbox: Option<&'a Sandbox>,
    /// The same runs under the file-system watch: the second look at what a candidate changes.
    watching: Option<&'a Sandbox>,
    deadline: std::time::Instant,
    /// Repository-relative files whose coverage counts (the scope); empty: every file.
    scope: &'a [String],
    /// Every run loads the effects plugin: a candidate that changes anything outside its own
    /// temporary folders is rejected, whatever its outcome.
    audit: &'a EffectsAudit,
}

impl Bench<'_> {
    fn exec(&self, args: &[&str]) -> Result<crate::proc::Captured> {
        self.exec_in(self.sandbox, args)
    }

    fn exec_in(&self, sandbox: Option<&Sandbox>, args: &[&str]) -> Result<crate::proc::Captured> {
        let left = time_left(self.deadline)?.min(Duration::from_secs(300));
        let mut argv = vec![self.python];
        argv.extend_from_slice(args);
        let pythonpath = format!(
            "{}:{}",
            self.mirror.display(),
            self.audit.plugin_dir.display()
        );
        let mut env: Vec<(String, String)> = vec![
            ("PYTHONPATH".into(), pythonpath),
            ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
        ];
        env.extend(self.audit.env());
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Ok(run_sandboxed(sandbox, &argv, self.dir, &env, None, left)?)
    }

    /// pytest's arguments (after `-m`): no cache, the bench as its root, the effects plugin.
    fn pytest_args(&self) -> Vec<String> {
        let mut args: Vec<String> = PYTEST.iter().map(|a| a.to_string()).collect();
        args.extend(self.audit.pytest_args());
        args
    }

    /// What the candidate's runs changed outside their own temporary folders, in words; None
    /// when nothing.
    fn effects(&self) -> Option<String> {
        let found = self.audit.read();
        let first: Vec<String> = found
            .iter()
            .take(3)
            .map(|e| format!("{} {}", e.test, e.effect))
            .collect();
        (!first.is_empty()).then(|| first.join("; "))
    }

    /// None when the candidate loads, passes every run and adds coverage (then `covered` grows).
    fn judge(&self, file: &Path, covered: &mut BTreeMap<String, BTreeSet<u64>>) -> Option<String> {
        if let Some(why) = self.loads_and_passes(file) {
            return Some(why);
        }
        let Some(now) = self.coverage_of(&[file.to_path_buf()], "candidate") else {
            return Some("coverage could not be measured (is coverage.py installed?)".into());
        };
        let mut added = 0;
        for (src, lines) in &now {
            let known = covered.entry(src.clone()).or_default();
            for l in lines {
                if known.insert(*l) {
                    added += 1;
                }
            }
        }
        if added == 0 {
            return Some("no new coverage of the scope".into());
        }
        None
    }

    /// None when `file` loads and passes [`ACCEPT_RUNS`] runs in a row, else why not.
    fn loads_and_passes(&self, file: &Path) -> Option<String> {
        self.loads(file, true)
    }

    /// A scenario's test file: it must load and stay inside its own temporary folders; whether it
    /// passes is the executor's to judge (a failure may be the code's defect the scenario is for).
    fn judge_scenario(&self, file: &Path) -> Option<String> {
        self.loads(file, false)
    }

    fn loads(&self, file: &Path, must_pass: bool) -> Option<String> {
        if let Err(e) = self.audit.clear() {
            return Some(format!("could not be checked: {e}"));
        }
        let f = file.display().to_string();
        let base = self.pytest_args();
        let pytest = |extra: &[&str]| {
            let mut args = vec!["-m"];
            args.extend(base.iter().map(String::as_str));
            args.extend_from_slice(extra);
            args.push(&f);
            let out = self.exec(&args);
            // Effects decide, not outcomes: one is enough to reject the candidate.
            match self.effects() {
                Some(what) => Err(Trial::Unsafe(format!(
                    "unsafe: {what} (outside its tmp_path)"
                ))),
                None => out.map_err(Trial::NotRun),
            }
        };
        match pytest(&["--collect-only"]) {
            Ok(out) if out.success() => {}
            Ok(out) => {
                return Some(format!(
                    "did not load: {}",
                    last_line(&out.stdout, &out.stderr)
                ))
            }
            Err(Trial::Unsafe(why)) => return Some(why),
            Err(Trial::NotRun(e)) => return Some(format!("did not load: {e}")),
        }
        let passed = if !must_pass {
            match pytest(&[]) {
                Err(Trial::Unsafe(why)) => return Some(why),
                Err(Trial::NotRun(e)) => return Some(format!("did not run: {e}")),
                Ok(out) => out.success(),
            }
        } else {
            let mut passes = 0;
            for _ in 0..ACCEPT_RUNS {
                match pytest(&[]) {
                    Ok(out) if out.success() => passes += 1,
                    Ok(out) if passes == 0 => {
                        return Some(format!("failed: {}", last_line(&out.stdout, &out.stderr)))
                    }
                    Ok(_) => return Some(format!("flaky: passed {passes} run(s), then failed")),
                    Err(Trial::Unsafe(why)) => return Some(why),
                    Err(Trial::NotRun(e)) => return Some(format!("failed: {e}")),
                }
            }
            true
        };
        self.watched(&f, &base, passed)
    }

    /// One more run of the candidate under the file-system watch: None when it changed nothing
    /// and its outcome is the sandboxed runs' (`passed`), else why it is unsafe.
    fn watched(&self, file: &str, base: &[String], passed: bool) -> Option<String> {
        let sandbox = self.watching?;
        let mut args = vec!["-m"];
        args.extend(base.iter().map(String::as_str));
        args.push(file);
        let out = match self.exec_in(Some(sandbox), &args) {
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
        (out.success() != passed).then(|| {
            format!(
                "unsafe: it {} in the sandbox but {} when its writes are real (diverted to a \
                 throwaway layer): its result depends on what the sandbox denies",
                if passed { "passes" } else { "fails" },
                if passed { "fails" } else { "passes" },
            )
        })
    }

    /// Lines of the mirrored project that `files` execute, per file (None when coverage.py fails).
    fn coverage_of(&self, files: &[PathBuf], tag: &str) -> Option<BTreeMap<String, BTreeSet<u64>>> {
        if files.is_empty() {
            return Some(BTreeMap::new());
        }
        let data = self.dir.join(format!(".coverage-{tag}"));
        let json = self.dir.join(format!("coverage-{tag}.json"));
        let data_arg = format!("--data-file={}", data.display());
        let source = format!("--source={}", self.mirror.display());
        let mut args = vec!["-m", "coverage", "run", &data_arg, &source, "-m"];
        let base = self.pytest_args();
        args.extend(base.iter().map(String::as_str));
        let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        args.extend(names.iter().map(String::as_str));
        self.exec(&args).ok()?;
        // Only the candidate's own audited runs are judged, not what this measurement saw.
        self.audit.clear().ok()?;
        let json_arg = json.display().to_string();
        let out = self
            .exec(&["-m", "coverage", "json", &data_arg, "-o", &json_arg])
            .ok()?;
        if !out.success() {
            return None;
        }
        let value: Value = serde_json::from_slice(&crate::util::read_regular(&json).ok()?).ok()?;
        let mut map = BTreeMap::new();
        for (path, entry) in value["files"].as_object()? {
            // coverage.py names files under --source absolutely (or relative to the cwd).
            let rel = Path::new(path)
                .strip_prefix(self.mirror)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| path.clone());
            if !self.scope.is_empty() && !self.scope.contains(&rel) {
                continue;
            }
            let lines: BTreeSet<u64> = entry["executed_lines"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_u64).collect())
                .unwrap_or_default();
            map.insert(path.clone(), lines);
        }
        Some(map)
    }
}

fn last_line(stdout: &str, stderr: &str) -> String {
    let all = format!("{stdout}\n{stderr}");
    all.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .chars()
        .take(200)
        .collect()
}

/// None when `content` loads and passes 5 runs in a row in the sandbox, else why not.
pub(super) fn check_passes(
    ctx: &RoleContext,
    layer: &str,
    name: &str,
    content: &str,
) -> Option<String> {
    let python = python_for(ctx.repo);
    let (mirror, _) = crate::gen::scratch_dirs(&ctx.session.root, layer);
    if let Err(e) = crate::workspace::mirror(ctx.repo, &mirror, &BTreeMap::new()) {
        return Some(format!("could not be checked: {e}"));
    }
    let bench = ctx
        .session
        .root
        .join("workspace")
        .join(format!("repair-check-{layer}"));
    let _ = std::fs::remove_dir_all(&bench);
    if let Err(e) = mkdirs(&bench) {
        return Some(format!("could not be checked: {e}"));
    }
    let sandbox = match sandbox_for(
        ctx,
        &format!("repair-{layer}"),
        crate::sandbox::python_roots(&python, ctx.repo),
        std::slice::from_ref(&bench),
    ) {
        Ok(s) => s,
        Err(e) => return Some(format!("could not be checked: {e}")),
    };
    let audit = match bench_audit(&bench) {
        Ok(a) => a,
        Err(e) => return Some(format!("could not be checked: {e}")),
    };
    let watching = watching_sandbox(ctx, &format!("repair-watch-{layer}"), &bench);
    let runner = Bench {
        python: &python,
        mirror: &mirror,
        dir: &bench,
        sandbox: sandbox.as_ref(),
        watching: watching.as_ref(),
        deadline: ctx.deadline,
        scope: &[],
        audit: &audit,
    };
    let path = bench.join(name);
    if let Err(e) = std::fs::write(&path, content) {
        return Some(format!("could not be checked: {e}"));
    }
    runner.loads_and_passes(&path)
}
