//! `team-testing doctor [--repo DIR] [--json]`: what team-testing can do for this repository on
//! this machine, capability by capability, and what to install for the rest.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::args::SandboxArgs;
use crate::agents::backends::BackendConfig;
use crate::family::doctor;

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// The repository to check (default: the current directory).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// Backend config instead of <repo>/team-testing.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the check as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

pub fn doctor(args: DoctorArgs) -> anyhow::Result<i32> {
    let repo = args.repo.unwrap_or_else(|| PathBuf::from("."));
    let repo = repo
        .canonicalize()
        .with_context(|| format!("{}: cannot read the folder", repo.display()))?;
    anyhow::ensure!(repo.is_dir(), "{}: not a folder", repo.display());
    let config = BackendConfig::load(args.config.as_deref(), &repo)?;
    let settings = args.sandbox.settings()?;
    let checkup = doctor::check(&repo, &config, &settings);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&checkup)?);
    } else {
        println!("{}", doctor::render(&checkup));
    }
    Ok(0)
}
