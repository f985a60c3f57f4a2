//! `team-testing resume [SESSION]`: reopen a paused, interrupted or failed session and finish it.

use clap::Args;

use super::launch::{launch, report_end};
use super::run::load_team;
use super::Location;
use crate::actors::coordinator::Begin;
use crate::actors::RunEnv;
use crate::error::Error;
use crate::roles::RoleSource;
use crate::session::{self, SessionLock, SessionStatus};
use crate::tasks::TaskStatus;

#[derive(Args, Debug)]
pub struct ResumeArgs {
    /// Session id under the sessions root, or its path (default: the one active or paused).
    pub session: Option<String>,
    #[command(flatten)]
    pub location: Location,
    /// Print one JSON object with the result on stdout (progress goes to stderr).
    #[arg(long)]
    pub json: bool,
}

pub fn resume(args: ResumeArgs) -> anyhow::Result<i32> {
    let root = args.location.root();
    let session = session::resolve(&root, args.session.as_deref())?;
    let _lock = SessionLock::acquire(&session.lock_file(), &session.id)?;
    let mut state = session.load_state()?;
    if state.status == SessionStatus::Completed {
        return Err(Error::Session(format!(
            "session {} is already completed; nothing to resume",
            session.id
        ))
        .into());
    }
    if !state.repo.is_dir() {
        return Err(Error::MissingRepo {
            path: state.repo.clone(),
        }
        .into());
    }
    let (mut config, mut registry) =
        load_team(state.spec_file.as_deref(), state.roles_dir.as_deref())?;
    state.controls.apply(&mut config);
    let role_specs = session.root.join("role-specs");
    if role_specs.is_dir() {
        registry.load_dir(&role_specs, RoleSource::Session)?;
    }
    let mut graph = session.load_tasks()?;
    if state.status == SessionStatus::Failed {
        // A failed pipeline gets its failed tasks (and what they skipped) another full try.
        for t in graph.tasks.iter_mut() {
            if matches!(t.status, TaskStatus::Failed | TaskStatus::Skipped) {
                t.status = TaskStatus::Pending;
                t.attempts = 0;
                t.reason = None;
                // Attempt numbers restart, so an old record must not pass for a new one.
                let _ = std::fs::remove_file(session.outcome_file(&t.id));
            }
        }
    }
    graph
        .validate(|r| registry.contains(r))
        .map_err(|e| Error::BadTask {
            path: session.tasks_json(),
            task: e.task().to_string(),
            problem: e.to_string(),
        })?;
    super::run::check_sandbox(&mut state, &registry, &graph, args.json)?;
    state.status = SessionStatus::Active;
    if args.json {
        eprintln!("{}", session.id);
    } else {
        println!(
            "Session {} ({}) resumed",
            session.id,
            session.root.display()
        );
    }
    let env = RunEnv {
        session: session.clone(),
        repo: state.repo.clone(),
        config,
        registry,
        sandbox: state.sandbox.clone(),
        agents: state.agents.clone(),
    };
    let end = launch(
        env,
        graph,
        state,
        Begin {
            resume: true,
            selected: None,
        },
        args.json,
    )?;
    Ok(report_end(&session, &end, args.json)?)
}
