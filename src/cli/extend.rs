//! `deepen`, `revise` and `rerun`: grow a session's graph and run it again in the same session.

use clap::Args;

use super::args::{DriveArgs, Location};
use super::drive::{drive, resume_begin};
use crate::app;

#[derive(Args, Debug)]
pub struct DeepenArgs {
    /// Session id or path (default: the one active or paused).
    pub session: Option<String>,
    /// The layer to add (or, when it has run, whose target to raise): L1, L2 or L3.
    #[arg(long, value_name = "LAYER")]
    pub layer: Option<String>,
    /// The layer's coverage target in percent (a raised target opens new GC rounds).
    #[arg(long, value_name = "PERCENT")]
    pub target: Option<f64>,
    #[command(flatten)]
    pub location: Location,
    #[command(flatten)]
    pub drive: DriveArgs,
}

#[derive(Args, Debug)]
pub struct ReviseArgs {
    /// The task to revise (TESTGEN-001, STRATEGY-001, …).
    pub task: String,
    /// What the revision should change; given to the role as context.
    #[arg(long, value_name = "TEXT")]
    pub feedback: String,
    /// Session id or path (default: the one active or paused).
    #[arg(long, value_name = "SESSION")]
    pub session: Option<String>,
    #[command(flatten)]
    pub location: Location,
    #[command(flatten)]
    pub drive: DriveArgs,
}

#[derive(Args, Debug)]
pub struct RerunArgs {
    /// Session id or path (default: the one active or paused).
    pub session: Option<String>,
    #[command(flatten)]
    pub location: Location,
    #[command(flatten)]
    pub drive: DriveArgs,
}

#[derive(Args, Debug)]
pub struct FixArgs {
    /// Session id or path (default: the one active or paused).
    pub session: Option<String>,
    /// Iterations of the loop (default 10).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_iterations: Option<u32>,
    #[command(flatten)]
    pub location: Location,
    #[command(flatten)]
    pub drive: DriveArgs,
}

/// Adds the test-fix cycle to a session (its code defects and the project's failing tests) and
/// runs it: the code is fixed in a git worktree; `apply --fixes` brings the fixes over.
pub fn fix(args: FixArgs) -> anyhow::Result<i32> {
    let root = args.location.root();
    let mut opened = app::open::open(&root, args.session.as_deref(), &args.drive.open_options())?;
    let summary = app::extend::fix(&mut opened, args.max_iterations)?;
    println!("Session {}: {summary}", opened.session.id);
    drive(opened, resume_begin(), &args.drive)
}

pub fn deepen(args: DeepenArgs) -> anyhow::Result<i32> {
    let root = args.location.root();
    let mut opened = app::open::open(&root, args.session.as_deref(), &args.drive.open_options())?;
    let summary = app::extend::deepen(&mut opened, args.layer.as_deref(), args.target)?;
    println!("Session {}: {summary}", opened.session.id);
    drive(opened, resume_begin(), &args.drive)
}

pub fn revise(args: ReviseArgs) -> anyhow::Result<i32> {
    let root = args.location.root();
    let mut opened = app::open::open(&root, args.session.as_deref(), &args.drive.open_options())?;
    let summary = app::extend::revise(&mut opened, &args.task, &args.feedback)?;
    println!("Session {}: {summary}", opened.session.id);
    drive(opened, resume_begin(), &args.drive)
}

/// Reopens the failed and skipped tasks, and runs again only the tests that failed in each
/// layer's last run (the executor keeps that run's passes).
pub fn rerun(args: RerunArgs) -> anyhow::Result<i32> {
    let root = args.location.root();
    let mut opened = app::open::open(&root, args.session.as_deref(), &args.drive.open_options())?;
    let summary = app::extend::rerun(&mut opened)?;
    println!("Session {}: {summary}", opened.session.id);
    drive(opened, resume_begin(), &args.drive)
}
