//! `team-testing mutate [--repo DIR]`: the mutation score of the project's own suite, with no
//! test generation (the figure Stryker, cargo-mutants or mutmut would give).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::args::SandboxArgs;
use crate::app::mutate::{mutate as run_mutate, MutateOptions};

#[derive(Args, Debug)]
pub struct MutateArgs {
    /// The repository whose own tests are analysed (default: the current directory).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// Mutants at most, sampled with the seed, stratified over files.
    #[arg(long, default_value_t = 300)]
    pub max_mutants: usize,
    /// Mutants run at the same time, each in a copy of its own (default: the machine's cores,
    /// at most four).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// The mutants' time, all told, in seconds (the trace of the suite comes first).
    #[arg(long, default_value_t = 600.0)]
    pub budget_s: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where the mirror and the builds go (default: a folder in the system's temporary folder,
    /// removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

pub fn mutate(args: MutateArgs) -> anyhow::Result<i32> {
    let repo = args.repo.unwrap_or_else(|| PathBuf::from("."));
    let repo = repo
        .canonicalize()
        .with_context(|| format!("{}: cannot read the folder", repo.display()))?;
    anyhow::ensure!(repo.is_dir(), "{}: not a folder", repo.display());
    let settings = args.sandbox.settings()?;
    let temp = std::env::temp_dir().join(format!("team-testing-mutate-{}", std::process::id()));
    let work = args.work_dir.clone().unwrap_or_else(|| temp.clone());
    let summary = run_mutate(&MutateOptions {
        repo: &repo,
        work: &work,
        max_mutants: args.max_mutants,
        jobs: args
            .jobs
            .unwrap_or_else(crate::pipeline::config::default_mutation_workers),
        budget: Duration::from_secs_f64(args.budget_s.max(0.0)),
        seed: args.seed,
        sandbox: &settings,
    });
    if args.work_dir.is_none() {
        let _ = std::fs::remove_dir_all(&temp);
    }
    let summary = summary?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(0);
    }
    println!(
        "mutation score {:.1}%: {} of {} mutants killed by the project's {} tests ({})",
        summary.score, summary.killed, summary.mutants, summary.tests, summary.framework
    );
    println!(
        "  survived {}, reached by no test {}, did not build {}; {:.1}s{}",
        summary.survived,
        summary.no_coverage,
        summary.unviable,
        summary.duration_s,
        if summary.exhausted {
            " (the budget ended first)"
        } else {
            ""
        }
    );
    for s in summary.survivors.iter().take(20) {
        println!("  survivor: {s}");
    }
    for p in &summary.problems {
        println!("  problem: {p}");
    }
    Ok(0)
}
