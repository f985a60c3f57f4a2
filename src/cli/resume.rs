//! `team-testing resume [SESSION]`: reopen a paused, interrupted or failed session and finish it.

use clap::Args;

use super::args::{DriveArgs, Location};
use super::drive::{drive, resume_begin};
use crate::app::resume::Resumed;

#[derive(Args, Debug)]
pub struct ResumeArgs {
    /// Session id under the sessions root, or its path (default: the one active or paused).
    pub session: Option<String>,
    #[command(flatten)]
    pub location: Location,
    #[command(flatten)]
    pub drive: DriveArgs,
}

pub fn resume(args: ResumeArgs) -> anyhow::Result<i32> {
    let root = args.location.root();
    let Resumed {
        opened,
        completion_interrupted,
    } = crate::app::resume::resume(&root, args.session.as_deref(), &args.drive.open_options())?;
    let session = &opened.session;
    if completion_interrupted {
        eprintln!(
            "team-testing: session {} finished its tasks, but its completion action was interrupted; finishing it",
            session.id
        );
    }
    if args.drive.json {
        eprintln!("{}", session.id);
    } else {
        println!(
            "Session {} ({}) resumed",
            session.id,
            session.root.display()
        );
    }
    drive(opened, resume_begin(), &args.drive)
}
