//! Rust's suite analysis under mutation: every suite's tests go into one mirror of the crate (a
//! generated layer's files as the integration-test targets a layer run stages), the tests are
//! traced one by one under cargo-llvm-cov (`trace`), and each mutant is written into the mirror,
//! built incrementally into a target folder of the analysis (never the user's `target/`) and
//! run with `cargo test -- --exact` for the tests that reach its line, then the file is put
//! back. The mutants are cargo-mutants' own list when it is installed, else the built-in subset
//! (`mutants`: bodies replaced by a value of their type, operators swapped).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::libtest::parse_libtest;
use super::run::interleave;
use super::stage::{generated_files, with_test_targets};
use super::trace::{root_of, split_id, targets_of, RustTrace, Target};
use crate::family::mutants::{self, failed_at, Point, Points, Verdict, WorkCopy};
use crate::family::suites::{
    MutationError, SuiteAnalysis, SuiteJob, SuiteMutations, SuiteTrace, TraceJob,
};
use crate::testing::exec::{Exec, ExecError};
use crate::testing::report::TestStatus;
use crate::testing::toolchain::Toolchain;

/// Rust as the analyst's mutation analysis sees it.
pub struct RustSuites;

impl SuiteAnalysis for RustSuites {
    fn unready(&self, tools: &Toolchain) -> Option<String> {
        RustTrace.unready(tools)
    }

    fn sandbox_reads(&self, tools: &Toolchain, repo: &Path) -> Vec<PathBuf> {
        RustTrace.sandbox_reads(tools, repo)
    }

    fn analyse(&self, job: &SuiteJob) -> Result<SuiteMutations, MutationError> {
        mutants::alone(self, job)
    }

    fn analyse_all(&self, jobs: &[SuiteJob]) -> Vec<Result<SuiteMutations, MutationError>> {
        match CargoCopy::new(jobs) {
            Ok(mut copy) => mutants::analyse(&mut copy, jobs),
            Err(e) => mutants::failed_all(jobs, &e),
        }
    }

    fn test_files(&self, dir: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "rs"))
            .collect();
        files.sort();
        files
    }

    /// A Rust file of the tests a suite runs (benches and examples are no tests).
    fn is_own_language(&self, path: &str) -> bool {
        path.ends_with(".rs") && !path.starts_with("benches/") && !path.starts_with("examples/")
    }

    fn is_test_file(&self, path: &str) -> bool {
        RustTrace.is_test_file(path)
    }

    fn is_code(&self, path: &str) -> bool {
        RustTrace.is_code(path)
    }

    /// A binary's `main` is code its tests reach like any other.
    fn is_entry_point(&self, _path: &str) -> bool {
        false
    }

    fn remove_tests(&self, source: &str, names: &BTreeSet<String>) -> Option<String> {
        let left = super::gen::remove_tests(source, names);
        left.contains("#[test]").then_some(left)
    }

    fn prune_assertions(
        &self,
        source: &str,
        noticed: &[(&str, &BTreeSet<u32>)],
    ) -> Option<(String, Vec<String>)> {
        crate::family::mutants::prune::prune(source, noticed, &RUST_CHECKS)
    }
}

/// The checks the generators write: one `assert…!(…);` per line inside a `fn name() {`.
const RUST_CHECKS: crate::family::mutants::prune::Checks = crate::family::mutants::prune::Checks {
    opens: |line, name| {
        let line = line.strip_prefix("async ").unwrap_or(line);
        line.strip_prefix("fn ")
            .and_then(|rest| rest.strip_prefix(name))
            .is_some_and(|rest| rest.starts_with('('))
    },
    check_at: |lines, i| {
        let l = lines[i];
        (l.starts_with("assert") && l.contains("!(") && l.ends_with(");")).then_some(i)
    },
};

/// The mirror with every suite's tests, and how to build and run them in it. A fork is a copy of
/// the mirror with a target folder of its own: two cargo builds never share one.
struct CargoCopy<'a> {
    /// Where the crate is built and mutated.
    mirror: PathBuf,
    /// The session's mirror, which names the modules the loop mutates (`mirror` but in a fork).
    origin: PathBuf,
    target: PathBuf,
    scratch: PathBuf,
    tools: &'a Toolchain,
    sandbox: Option<&'a crate::sandbox::Sandbox>,
    /// A staged test target's root (`tests/tt_L1_calc.rs`) -> (its suite, its file there).
    staged: BTreeMap<String, (usize, String)>,
    /// The suite of the project's own tests, when one of the jobs is it.
    own: Option<usize>,
    selection: Vec<String>,
    targets: Vec<Target>,
}

impl<'a> CargoCopy<'a> {
    fn new(jobs: &'a [SuiteJob<'a>]) -> Result<Self, MutationError> {
        let first = &jobs[0];
        let mirror = std::path::absolute(first.mirror).unwrap_or_else(|_| first.mirror.into());
        let scratch = std::path::absolute(first.scratch).unwrap_or_else(|_| first.scratch.into());
        let write_err = |path: &Path| {
            let path = path.to_path_buf();
            move |cause| MutationError::Write { path, cause }
        };
        let mut staged = BTreeMap::new();
        let mut own = None;
        let mut selection = Vec::new();
        let mut targets: Vec<String> = Vec::new();
        for (n, job) in jobs.iter().enumerate() {
            if job.own_config {
                own = Some(n);
                selection.extend(job.files.iter().cloned());
                continue;
            }
            for s in generated_files(&job.cwd, &job.name) {
                if !job.files.contains(&s.original) {
                    continue;
                }
                let root = format!("tests/{}.rs", s.target);
                let from = job.cwd.join(&s.original);
                let bytes = std::fs::read(&from).map_err(write_err(&from))?;
                let to = mirror.join(&root);
                if let Some(dir) = to.parent() {
                    std::fs::create_dir_all(dir).map_err(write_err(dir))?;
                }
                crate::util::write_nofollow(&to, &bytes).map_err(write_err(&to))?;
                selection.push(root.clone());
                targets.push(s.target.clone());
                staged.insert(root, (n, s.original));
            }
        }
        let manifest_path = mirror.join("Cargo.toml");
        let manifest =
            std::fs::read_to_string(&manifest_path).map_err(write_err(&manifest_path))?;
        let names: Vec<&str> = targets.iter().map(String::as_str).collect();
        if let Some(m) = with_test_targets(&manifest, &names) {
            crate::util::write_nofollow(&manifest_path, m.as_bytes())
                .map_err(write_err(&manifest_path))?;
        }
        Ok(CargoCopy {
            origin: mirror.clone(),
            mirror,
            target: scratch.join("rust-mutants-target"),
            scratch,
            tools: first.tools,
            sandbox: first.sandbox,
            staged,
            own,
            selection,
            targets: Vec::new(),
        })
    }

    fn cargo(&self) -> String {
        match self.tools.interpreter.as_str() {
            "" => "cargo".to_string(),
            c => c.to_string(),
        }
    }

    fn exec(&self, deadline: Instant) -> Exec<'a> {
        Exec {
            sandbox: self.sandbox,
            cwd: self.mirror.clone(),
            env: vec![
                ("CARGO_TARGET_DIR".into(), self.target.display().to_string()),
                ("CARGO_TERM_COLOR".into(), "never".into()),
                ("CARGO_NET_OFFLINE".into(), "true".into()),
                // Each mutant rebuilds one crate: no debug info to write makes it faster.
                ("CARGO_PROFILE_DEV_DEBUG".into(), "0".into()),
                ("CARGO_PROFILE_TEST_DEBUG".into(), "0".into()),
            ],
            deadline,
        }
    }

    /// The crate's test targets, from cargo metadata, once.
    fn targets(&mut self) -> &[Target] {
        if self.targets.is_empty() {
            let argv: Vec<String> = [
                self.cargo().as_str(),
                "metadata",
                "--no-deps",
                "--format-version",
                "1",
            ]
            .map(String::from)
            .to_vec();
            let real = std::fs::canonicalize(&self.mirror).unwrap_or_else(|_| self.mirror.clone());
            if let Ok(run) = self
                .exec(Instant::now() + Duration::from_secs(60))
                .run(&argv)
            {
                self.targets = targets_of(&run.stdout, &[&real, &self.mirror]).unwrap_or_default();
            }
        }
        &self.targets
    }

    /// The points cargo-mutants lists for the crate, when it is installed; None otherwise.
    fn cargo_mutants_points(&self, modules: &[PathBuf]) -> Option<BTreeMap<PathBuf, Vec<Point>>> {
        let argv: Vec<String> = [
            self.cargo().as_str(),
            "mutants",
            "--list",
            "--json",
            "--no-shuffle",
        ]
        .map(String::from)
        .to_vec();
        let run = self
            .exec(Instant::now() + Duration::from_secs(120))
            .run(&argv)
            .ok()
            .filter(|r| r.success())?;
        let listed = super::mutants::points_from_cargo_mutants(&run.stdout, &self.mirror).ok()?;
        let wanted: BTreeSet<&PathBuf> = modules.iter().collect();
        let mut out: BTreeMap<PathBuf, Vec<Point>> =
            modules.iter().map(|m| (m.clone(), Vec::new())).collect();
        for (file, point) in listed {
            let file = self.mirror.join(file);
            if wanted.contains(&file) {
                out.entry(file).or_default().push(point);
            }
        }
        Some(out)
    }
}

impl WorkCopy for CargoCopy<'_> {
    fn trace(&mut self, timeout: Duration) -> Result<SuiteMutations, MutationError> {
        let job = TraceJob {
            name: "mutation".into(),
            tools: self.tools,
            scratch: &self.scratch,
            mirror: &self.mirror,
            repo: &self.mirror,
            session: &self.scratch,
            selection: self.selection.clone(),
            sandbox: self.sandbox,
            timeout,
        };
        RustTrace.trace(&job)
    }

    fn suite_of(&self, id: &str) -> Option<(usize, String)> {
        let (token, path) = split_id(id)?;
        match self.staged.get(&root_of(token)) {
            Some((suite, file)) => Some((*suite, format!("{file}::{path}"))),
            None => self.own.map(|own| (own, id.to_string())),
        }
    }

    fn points(&mut self, modules: &[PathBuf]) -> (Points, Vec<String>) {
        if let Some(listed) = self.cargo_mutants_points(modules) {
            return (listed, Vec::new());
        }
        let mut out = BTreeMap::new();
        let mut problems = Vec::new();
        for m in modules {
            match std::fs::read_to_string(m) {
                Ok(source) => {
                    out.insert(m.clone(), super::mutants::points(&source));
                }
                Err(e) => problems.push(format!("{}: {e}", m.display())),
            }
        }
        (out, problems)
    }

    fn run(&mut self, module: &Path, text: &str, tests: &[String], timeout: Duration) -> Verdict {
        let module = match module.strip_prefix(&self.origin) {
            Ok(rel) => self.mirror.join(rel),
            Err(_) => {
                return Verdict::Unviable(format!("{} is not in the mirror", module.display()))
            }
        };
        let module = module.as_path();
        let original = match std::fs::read(module) {
            Ok(o) => o,
            Err(e) => return Verdict::Unviable(format!("{}: {e}", module.display())),
        };
        if let Err(e) = crate::util::write_nofollow(module, text.as_bytes()) {
            return Verdict::Unviable(format!("{}: {e}", module.display()));
        }
        let verdict = self.run_tests(tests, timeout);
        // Put back whatever happened: the next mutant starts from the crate as it was.
        if let Err(e) = crate::util::write_nofollow(module, &original) {
            return Verdict::Unviable(format!("cannot restore {}: {e}", module.display()));
        }
        verdict
    }

    /// A copy of the mirror and of its target folder (the unmutated build, so only the crate
    /// itself is built again; rustc's incremental caches are left out).
    fn fork(&self, n: usize) -> Result<Self, MutationError> {
        let mirror = self.scratch.join(format!("rust-mutants-copy-{n}"));
        let target = self.scratch.join(format!("rust-mutants-target-{n}"));
        crate::workspace::mirror(&self.mirror, &mirror, &BTreeMap::new()).map_err(|cause| {
            MutationError::Write {
                path: mirror.clone(),
                cause,
            }
        })?;
        copy_build(&self.target, &target).map_err(|cause| MutationError::Write {
            path: target.clone(),
            cause,
        })?;
        Ok(CargoCopy {
            mirror,
            origin: self.origin.clone(),
            target,
            scratch: self.scratch.clone(),
            tools: self.tools,
            sandbox: self.sandbox,
            staged: self.staged.clone(),
            own: self.own,
            selection: self.selection.clone(),
            targets: self.targets.clone(),
        })
    }
}

/// Copies a cargo target folder but its `incremental` caches, which only the crate being
/// mutated uses and a fork builds anew.
fn copy_build(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (source, dest) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() && entry.file_name() != "incremental" {
            copy_build(&source, &dest)?;
        } else if kind.is_file() {
            std::fs::copy(&source, &dest)?;
        }
    }
    Ok(())
}

impl CargoCopy<'_> {
    /// Runs `tests` (trace ids), target by target, on one clock.
    fn run_tests(&mut self, tests: &[String], timeout: Duration) -> Verdict {
        let deadline = Instant::now() + timeout;
        let mut by_target: BTreeMap<String, Vec<(&str, &String)>> = BTreeMap::new();
        for id in tests {
            if let Some((token, path)) = split_id(id) {
                by_target
                    .entry(token.to_string())
                    .or_default()
                    .push((path, id));
            }
        }
        let targets = self.targets().to_vec();
        let mut failed = BTreeMap::new();
        // The project's own suite needs one kill, not all its killers: once one of its targets
        // failed, its others do not run.
        let mut own_killed = false;
        for (token, paths) in by_target {
            let Some(target) = targets.iter().find(|t| t.token == token) else {
                continue;
            };
            let own = !self.staged.contains_key(&root_of(&token));
            if own && own_killed {
                continue;
            }
            let failed_before = failed.len();
            let mut argv = vec![self.cargo(), "test".into(), "--no-fail-fast".into()];
            argv.extend(target.args.iter().cloned());
            argv.extend(["--".into(), "--exact".into()]);
            argv.extend(paths.iter().map(|(p, _)| p.to_string()));
            let ran = match self.exec(deadline).run(&argv) {
                Ok(r) => r,
                Err(ExecError::TimedOut { .. }) => return Verdict::TimedOut,
                Err(e) => return Verdict::Unviable(e.to_string()),
            };
            let text = interleave(&ran.stdout, &ran.stderr);
            let parsed = parse_libtest(&text);
            if parsed.build_failed {
                return Verdict::Unviable(crate::util::tail_lines(&text, 8));
            }
            for (path, id) in &paths {
                let case = parsed.cases.iter().find(|c| c.id == *path);
                let dead = case.is_none() && parsed.incomplete;
                if dead
                    || case
                        .is_some_and(|c| matches!(c.status, TestStatus::Failed | TestStatus::Error))
                {
                    let detail = case.and_then(|c| c.detail.clone()).unwrap_or_default();
                    failed.insert(id.to_string(), failed_at(&detail, &target.root));
                }
            }
            own_killed |= own && failed.len() > failed_before;
        }
        if failed.is_empty() {
            Verdict::Passed
        } else {
            Verdict::Failed(failed)
        }
    }
}
