//! Go's suite analysis under mutation: every suite's tests go into one mirror of the module (a
//! generated layer's files staged into their packages as a layer run stages them), the tests are
//! traced one by one (`trace`), the mutation points come from the generator's helper program
//! (go/ast), and each mutant runs through `go test -overlay`, so the mirror's files never change
//! and the build cache of the run serves every mutant: only the mutated package and the test
//! packages above it recompile.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::events::parse_events;
use super::package::module_path;
use super::stage::{generated_files, Staged};
use super::trace::GoTrace;
use crate::family::mutants::{self, failed_at, Points, Verdict, WorkCopy};
use crate::family::suites::{
    MutationError, SuiteAnalysis, SuiteJob, SuiteMutations, SuiteTrace, TraceJob,
};
use crate::testing::exec::{Exec, ExecError};
use crate::testing::report::TestStatus;
use crate::testing::toolchain::Toolchain;

/// Go as the analyst's mutation analysis sees it.
pub struct GoSuites;

impl SuiteAnalysis for GoSuites {
    fn unready(&self, tools: &Toolchain) -> Option<String> {
        GoTrace.unready(tools)
    }

    fn sandbox_reads(&self, tools: &Toolchain, repo: &Path) -> Vec<PathBuf> {
        GoTrace.sandbox_reads(tools, repo)
    }

    fn analyse(&self, job: &SuiteJob) -> Result<SuiteMutations, MutationError> {
        mutants::alone(self, job)
    }

    fn analyse_all(&self, jobs: &[SuiteJob]) -> Vec<Result<SuiteMutations, MutationError>> {
        match GoCopy::new(jobs) {
            Ok(mut copy) => mutants::analyse(&mut copy, jobs),
            Err(e) => mutants::failed_all(jobs, &e),
        }
    }

    fn test_files(&self, dir: &Path) -> Vec<PathBuf> {
        super::stage::test_files(dir)
            .into_iter()
            .map(|f| dir.join(f))
            .collect()
    }

    fn is_own_language(&self, path: &str) -> bool {
        path.ends_with(".go")
    }

    fn is_test_file(&self, path: &str) -> bool {
        GoTrace.is_test_file(path)
    }

    fn is_code(&self, path: &str) -> bool {
        GoTrace.is_code(path)
    }

    /// A command's `main` is code its tests reach like any other.
    fn is_entry_point(&self, _path: &str) -> bool {
        false
    }

    fn remove_tests(&self, source: &str, names: &BTreeSet<String>) -> Option<String> {
        let left = super::gen::remove_tests(source, names);
        left.lines()
            .any(|l| l.starts_with("func Test") || l.starts_with("func Example"))
            .then_some(left)
    }

    fn prune_assertions(
        &self,
        source: &str,
        noticed: &[(&str, &BTreeSet<u32>)],
    ) -> Option<(String, Vec<String>)> {
        crate::family::mutants::prune::prune(source, noticed, &super::gen::GO_CHECKS)
    }
}

/// The mirror with every suite's tests, and how to run go in it. Mutants go in through overlays,
/// so several workers share the mirror and the build cache.
#[derive(Clone)]
struct GoCopy<'a> {
    mirror: PathBuf,
    scratch: PathBuf,
    module: String,
    tools: &'a Toolchain,
    sandbox: Option<&'a crate::sandbox::Sandbox>,
    /// A test file of the mirror (module-relative) -> (its suite, its name in the suite).
    owners: BTreeMap<String, (usize, String)>,
    /// Which worker this copy is: names its overlays.
    worker: usize,
    runs: usize,
}

impl<'a> GoCopy<'a> {
    fn new(jobs: &'a [SuiteJob<'a>]) -> Result<Self, MutationError> {
        let first = &jobs[0];
        let mirror = std::path::absolute(first.mirror).unwrap_or_else(|_| first.mirror.into());
        let module = module_path(&mirror).ok_or_else(|| MutationError::NoResult {
            suite: first.name.clone(),
            problem: "go.mod declares no module: go test needs a module".into(),
        })?;
        let mut owners = BTreeMap::new();
        for (n, job) in jobs.iter().enumerate() {
            if job.own_config {
                for f in &job.files {
                    owners.insert(f.clone(), (n, f.clone()));
                }
                continue;
            }
            let staged: Vec<Staged> = generated_files(&job.cwd, &mirror, &job.name)
                .into_iter()
                .filter(|s| job.files.contains(&s.original))
                .collect();
            for s in staged {
                let to = mirror.join(s.rel());
                let bytes = std::fs::read(job.cwd.join(&s.original)).map_err(|cause| {
                    MutationError::Write {
                        path: job.cwd.join(&s.original),
                        cause,
                    }
                })?;
                crate::util::write_nofollow(&to, &bytes)
                    .map_err(|cause| MutationError::Write { path: to, cause })?;
                owners.insert(s.rel().to_string_lossy().into_owned(), (n, s.original));
            }
        }
        let scratch = std::path::absolute(first.scratch).unwrap_or_else(|_| first.scratch.into());
        Ok(GoCopy {
            mirror,
            scratch,
            module,
            tools: first.tools,
            sandbox: first.sandbox,
            owners,
            worker: 0,
            runs: 0,
        })
    }

    fn go(&self) -> String {
        match self.tools.interpreter.as_str() {
            "" => "go".to_string(),
            g => g.to_string(),
        }
    }

    /// The environment every go command of the analysis runs with: one build cache for the
    /// trace and every mutant, the module on its own, nothing downloaded.
    fn env(&self) -> Vec<(String, String)> {
        vec![
            (
                "GOCACHE".into(),
                self.scratch.join("go-cache").display().to_string(),
            ),
            ("GOWORK".into(), "off".into()),
            ("GOTOOLCHAIN".into(), "local".into()),
            ("GOPROXY".into(), "off".into()),
            ("GOFLAGS".into(), "-modcacherw".into()),
        ]
    }

    /// `pkg/x_test.go::TestA` -> (`pkg`, `TestA`).
    fn dir_and_name(id: &str) -> Option<(String, &str)> {
        let (file, name) = id.split_once("::")?;
        let dir = Path::new(file)
            .parent()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        Some((dir, name))
    }

    fn import_path(&self, dir: &str) -> String {
        match dir {
            "" => self.module.clone(),
            d => format!("{}/{d}", self.module),
        }
    }
}

impl WorkCopy for GoCopy<'_> {
    fn trace(&mut self, timeout: Duration) -> Result<SuiteMutations, MutationError> {
        let selection: Vec<String> = self.owners.keys().cloned().collect();
        let job = TraceJob {
            name: "mutation".into(),
            tools: self.tools,
            scratch: &self.scratch,
            mirror: &self.mirror,
            repo: &self.mirror,
            session: &self.scratch,
            selection,
            sandbox: self.sandbox,
            timeout,
        };
        GoTrace.trace(&job)
    }

    fn suite_of(&self, id: &str) -> Option<(usize, String)> {
        let (file, name) = id.split_once("::")?;
        let (suite, local) = self.owners.get(file)?;
        Some((*suite, format!("{local}::{name}")))
    }

    fn points(&mut self, modules: &[PathBuf]) -> (Points, Vec<String>) {
        let helper = self.scratch.join("go-mutants");
        let cache = self.scratch.join("go-cache");
        match super::gen::mutation_points(&helper, &cache, modules) {
            Ok(found) => found,
            Err(e) => (BTreeMap::new(), vec![format!("go mutation points: {e}")]),
        }
    }

    fn run(&mut self, module: &Path, text: &str, tests: &[String], timeout: Duration) -> Verdict {
        self.runs += 1;
        let dir = self.scratch.join("go-overlay");
        let mutated = dir.join(format!("mutant-{}-{}.go", self.worker, self.runs));
        let overlay = dir.join(format!("overlay-{}-{}.json", self.worker, self.runs));
        let body = serde_json::json!({ "Replace": { module.display().to_string(): mutated.display().to_string() } });
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| crate::util::write_nofollow(&mutated, text.as_bytes()))
            .and_then(|()| crate::util::write_nofollow(&overlay, body.to_string().as_bytes()));
        if let Err(e) = written {
            return Verdict::Unviable(format!("cannot write the overlay: {e}"));
        }
        let mut wanted: BTreeMap<(String, String), &String> = BTreeMap::new();
        let mut dirs: BTreeSet<String> = BTreeSet::new();
        for id in tests {
            if let Some((d, name)) = Self::dir_and_name(id) {
                wanted.insert((self.import_path(&d), name.to_string()), id);
                dirs.insert(d);
            }
        }
        let names: BTreeSet<&str> = wanted.keys().map(|(_, n)| n.as_str()).collect();
        let mut argv = vec![
            self.go(),
            "test".into(),
            "-json".into(),
            "-count=1".into(),
            "-vet=off".into(),
            format!("-overlay={}", overlay.display()),
            format!("-timeout={}s", timeout.as_secs().max(1)),
            "-run".into(),
            format!(
                "^({})$",
                names.iter().copied().collect::<Vec<_>>().join("|")
            ),
        ];
        argv.extend(dirs.iter().map(|d| super::ctx::package_arg(d)));
        let exec = Exec {
            sandbox: self.sandbox,
            cwd: self.mirror.clone(),
            env: self.env(),
            // go's own -timeout fails a hanging test; this stops a hanging build too.
            deadline: Instant::now() + timeout + Duration::from_secs(10),
        };
        let ran = exec.run(&argv);
        let _ = std::fs::remove_file(&mutated);
        let _ = std::fs::remove_file(&overlay);
        let ran = match ran {
            Ok(ran) => ran,
            Err(ExecError::TimedOut { .. }) => return Verdict::TimedOut,
            Err(e) => return Verdict::Unviable(e.to_string()),
        };
        let parsed = parse_events(&ran.stdout);
        let mut failed = BTreeMap::new();
        let mut seen = 0;
        for t in parsed.tests.iter().filter(|t| !t.name.contains('/')) {
            let Some(id) = wanted.get(&(t.package.clone(), t.name.clone())) else {
                continue;
            };
            match t.status {
                Some(TestStatus::Passed) | Some(TestStatus::Skipped) => seen += 1,
                _ => {
                    seen += 1;
                    let file = id.split_once("::").map_or("", |(f, _)| f);
                    failed.insert(id.to_string(), failed_at(&t.output, file));
                }
            }
        }
        if !failed.is_empty() {
            return Verdict::Failed(failed);
        }
        if seen == 0 || !ran.success() {
            // The package did not build (or died before its tests reported): not a kill.
            return Verdict::Unviable(crate::util::tail_lines(
                &format!("{}{}", parsed.transcript, ran.stderr),
                6,
            ));
        }
        Verdict::Passed
    }

    fn fork(&self, n: usize) -> Result<Self, MutationError> {
        Ok(GoCopy {
            worker: n,
            runs: 0,
            ..self.clone()
        })
    }
}
