//! `mutate`: how strong a project's own suite is, with no generation. Its tests run against
//! mutants of its code through the family's suite analysis (the analyst's), in a folder of our
//! own, sandboxed; the user's tree is only read. The figures are the ones the field's tools give
//! (Stryker's and cargo-mutants' scores), so the two can be compared on the same suite.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::family::suites::SuiteJob;
use crate::sandbox::{Sandbox, SandboxSettings};
use crate::testing::framework::Framework;

/// What to analyse and how much of it.
pub struct MutateOptions<'a> {
    pub repo: &'a Path,
    /// Where the mirror, the builds and the sandbox's home go (emptied first, kept after).
    pub work: &'a Path,
    pub max_mutants: usize,
    /// Mutants run at the same time, each in a copy of its own.
    pub jobs: usize,
    pub budget: Duration,
    pub seed: u64,
    pub sandbox: &'a SandboxSettings,
}

/// The suite's score and what made it.
#[derive(Debug, Serialize)]
pub struct MutateSummary {
    pub framework: String,
    pub tests: usize,
    /// Mutants run (those that built), killed, survived with a test reaching them, reached by
    /// no test, and those that did not build or load (in no figure but this one).
    pub mutants: usize,
    pub killed: usize,
    pub survived: usize,
    pub no_coverage: usize,
    pub unviable: usize,
    /// Killed / mutants, in percent.
    pub score: f64,
    pub duration_s: f64,
    /// The budget ended before every sampled mutant ran.
    pub exhausted: bool,
    /// `file:line operator` of every mutant no test killed.
    pub survivors: Vec<String>,
    pub problems: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum MutateError {
    #[error("{}: no test framework found ({why})", repo.display())]
    NoFramework { repo: PathBuf, why: String },
    #[error("{}: {family} has no mutation analysis", repo.display())]
    NoAnalysis { repo: PathBuf, family: &'static str },
    #[error("{0}")]
    Unready(String),
    #[error("mutation analysis needs the sandbox: a mutant can turn harmless code into code that writes anywhere")]
    NoSandbox,
    #[error("{}: the project has no test files of its own", repo.display())]
    NoTests { repo: PathBuf },
    #[error("cannot prepare {}: {cause}", path.display())]
    Prepare {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(transparent)]
    Analysis(#[from] crate::family::suites::MutationError),
}

/// Runs the project's own suite against mutants of its code.
pub fn mutate(o: &MutateOptions) -> Result<MutateSummary, MutateError> {
    let started = Instant::now();
    let repo = o.repo;
    let files = crate::testing::detect::walk(repo);
    let (framework, why) = crate::testing::detect::detect_framework(repo, &files);
    let framework = framework.ok_or_else(|| MutateError::NoFramework {
        repo: repo.to_path_buf(),
        why,
    })?;
    let family = crate::family::of(framework.family());
    let analysis = family.suite_analysis().ok_or(MutateError::NoAnalysis {
        repo: repo.to_path_buf(),
        family: family.name(),
    })?;
    if !o.sandbox.enabled {
        return Err(MutateError::NoSandbox);
    }
    let tools = family.toolchain(repo, framework);
    if let Some(why) = analysis.unready(&tools) {
        return Err(MutateError::Unready(why));
    }
    let project = crate::testing::project_files::of_repo(repo, Some(framework));
    let tests = crate::family::suites::own_test_files(analysis, &project);
    if tests.is_empty() {
        return Err(MutateError::NoTests {
            repo: repo.to_path_buf(),
        });
    }
    let prepare = |path: &Path| {
        let path = path.to_path_buf();
        move |cause| MutateError::Prepare { path, cause }
    };
    let work = std::path::absolute(o.work).map_err(prepare(o.work))?;
    let (mirror, scratch) = (work.join("mirror"), work.join("scratch"));
    if work.exists() {
        std::fs::remove_dir_all(&work).map_err(prepare(&work))?;
    }
    std::fs::create_dir_all(&scratch).map_err(prepare(&scratch))?;
    crate::workspace::mirror(repo, &mirror, &BTreeMap::new()).map_err(prepare(&mirror))?;
    // What the project depends on, fetched before the sandbox (which has no network).
    let _ = crate::testing::deps::prepare(repo, &work, Some(framework));
    let mut read = analysis.sandbox_reads(&tools, repo);
    read.extend([repo.to_path_buf(), work.clone()]);
    let sandbox = Sandbox::new(
        o.sandbox,
        &work.join("sandbox"),
        &read,
        &[mirror.clone(), scratch.clone()],
    )
    .map_err(prepare(&work.join("sandbox")))?;
    let modules: Vec<PathBuf> = project
        .sources
        .iter()
        .filter(|p| analysis.is_code(p) && !analysis.is_entry_point(p))
        .map(|p| mirror.join(p))
        .collect();
    let job = SuiteJob {
        name: "own".into(),
        tools: &tools,
        scratch: &scratch,
        mirror: &mirror,
        repo,
        session: &work,
        cwd: mirror.clone(),
        own_config: true,
        files: tests.clone(),
        modules: &modules,
        seed: o.seed,
        budget: o.budget,
        per_mutant: Duration::from_secs(10),
        max_mutants: o.max_mutants,
        workers: o.jobs.max(1),
        sandbox: Some(&sandbox),
        trace_timeout: Some(o.budget.max(Duration::from_secs(600))),
    };
    let result = analysis.analyse(&job)?;
    let count = |status: &str| result.mutants.iter().filter(|m| m.status == status).count();
    let (killed, survived, no_coverage) =
        (count("killed"), count("survived"), count("no_coverage"));
    let unviable = count("error");
    let mutants = killed + survived + no_coverage;
    let rel = |f: &str| {
        Path::new(f)
            .strip_prefix(&mirror)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| f.to_string())
    };
    Ok(MutateSummary {
        framework: framework_name(framework),
        tests: result.tests.len(),
        mutants,
        killed,
        survived,
        no_coverage,
        unviable,
        score: if mutants == 0 {
            0.0
        } else {
            (1000.0 * killed as f64 / mutants as f64).round() / 10.0
        },
        duration_s: started.elapsed().as_secs_f64(),
        exhausted: result.exhausted,
        survivors: result
            .mutants
            .iter()
            .filter(|m| m.status == "survived" || m.status == "no_coverage")
            .map(|m| format!("{}:{} {}", rel(&m.file), m.line, m.operator))
            .collect(),
        problems: result.problems,
    })
}

fn framework_name(framework: Framework) -> String {
    framework.to_string()
}
