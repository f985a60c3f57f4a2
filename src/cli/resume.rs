//! `team-testing resume [SESSION]`: reopen a paused, interrupted or failed session and finish it.

use clap::Args;

use super::drive::{drive, open, DriveArgs};
use super::Location;
use crate::actors::coordinator::Begin;
use crate::error::Error;
use crate::session::SessionStatus;
use crate::tasks::TaskStatus;

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
    // Refused before the session is opened (which takes its lock and tidies it): a refused
    // command leaves the session exactly as it was.
    let found = crate::session::resolve(&root, args.session.as_deref())?;
    let status = found.load_state()?.status;
    let finished_earlier = status == SessionStatus::Archived
        || (status == SessionStatus::Completed && found.in_legacy_archive());
    if finished_earlier {
        let session = &found;
        return Err(Error::Session(format!(
            "session {} is already completed and archived; nothing to resume{}",
            session.id,
            match super::extend::next_steps(session) {
                steps if steps.is_empty() => String::new(),
                steps => format!(". Next: {}", steps.join("; ")),
            }
        ))
        .into());
    }
    let mut opened = open(&root, args.session.as_deref(), &args.drive)?;
    let (session, state) = (&opened.session, &opened.state);
    if state.status == SessionStatus::Completed {
        // Completed but still under the sessions root: the process ended between the last beat
        // and the completion action (which archives or pauses it). Driving it again runs no
        // task; it ends the pipeline and carries out the action.
        eprintln!(
            "team-testing: session {} finished its tasks, but its completion action was interrupted; finishing it",
            session.id
        );
    }
    if state.status == SessionStatus::Failed {
        // A failed pipeline gets its failed tasks (and what they skipped) another full try.
        for t in opened.graph.tasks.iter_mut() {
            if matches!(t.status, TaskStatus::Failed | TaskStatus::Skipped) {
                t.status = TaskStatus::Pending;
                t.attempts = 0;
                t.reason = None;
                // Attempt numbers restart, so an old record must not pass for a new one.
                let _ = std::fs::remove_file(session.outcome_file(&t.id));
            }
        }
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
    drive(
        opened,
        Begin {
            resume: true,
            selected: None,
        },
        &args.drive,
    )
}
