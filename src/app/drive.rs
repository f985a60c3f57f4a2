//! Driving a session to its end: run the pipeline on the actors, then the completion action; a
//! Deepen choice runs the new layer in the same session and asks again. What the person sees and
//! decides goes through [`DriveUi`], so this holds no terminal code.

use super::complete::{self, Choice, Done};
use super::open::Opened;
use super::team::{check_sandbox, SandboxNote};
use crate::actors::boot::launch;
use crate::actors::coordinator::{Begin, RunEnd};
use crate::actors::RunEnv;
use crate::error::{Error, Result};
use crate::roles::RoleSource;
use crate::session::{SessionDir, SessionStatus};

/// The person at the other end of a driven session.
pub trait DriveUi {
    /// What the sandbox protects; called once per process.
    fn sandbox(&mut self, note: &SandboxNote);
    /// A run of the pipeline ended (completed, failed or paused).
    fn summary(&mut self, session: &SessionDir, end: &RunEnd) -> Result<()>;
    /// Every task is done: archive, keep or deepen?
    fn completion(&mut self, session: &SessionDir) -> Choice;
    /// What the completion action did, or why a Deepen choice could not be carried out.
    fn done(&mut self, session: &SessionDir, done: &Done);
    fn cannot_deepen(&mut self, error: &Error);
}

/// How a driven session ended.
pub struct Driven {
    pub session: SessionDir,
    pub end: RunEnd,
    /// The completion action, when the pipeline completed.
    pub done: Option<Done>,
}

/// Runs the opened session to its end and carries out the completion action. `quiet` keeps the
/// live progress off stdout (`--json`); `cluster` (`--nats`) runs the roles its workers serve on
/// them.
pub fn drive(
    opened: Opened,
    begin: Begin,
    quiet: bool,
    cluster: Option<&crate::remote::ClusterSettings>,
    ui: &mut dyn DriveUi,
) -> Result<Driven> {
    let Opened {
        session,
        lock,
        mut state,
        config,
        mut registry,
        mut graph,
        mut sandbox_shown,
        ..
    } = opened;
    let mut begin = Some(begin);
    let remote = match cluster {
        Some(settings) => Some(std::sync::Arc::new(
            crate::remote::Link::connect(
                settings.clone(),
                &session,
                &state.repo,
                crate::remote::link::Team {
                    config: config.clone(),
                    sandbox: state.sandbox.clone(),
                    agents: state.agents.clone(),
                },
            )
            .map_err(|e| Error::Cluster(Box::new(e)))?,
        )),
        None => None,
    };
    loop {
        graph
            .validate(|r| registry.contains(r))
            .map_err(|e| Error::BadTask {
                path: session.tasks_json(),
                task: e.task().to_string(),
                problem: e.to_string(),
            })?;
        let note = check_sandbox(&mut state, &registry, &graph)?;
        if !sandbox_shown {
            ui.sandbox(&note);
            sandbox_shown = true;
        }
        state.status = SessionStatus::Active;
        let env = RunEnv {
            session: session.clone(),
            repo: state.repo.clone(),
            config: config.clone(),
            registry: registry.clone(),
            sandbox: state.sandbox.clone(),
            agents: state.agents.clone(),
            remote: remote.clone(),
        };
        let this_begin = begin.take().unwrap_or(Begin {
            resume: true,
            selected: None,
        });
        let mut end = launch(env, graph, state, this_begin, quiet, None)
            .map_err(|e| Error::Session(format!("running session {}: {e}", session.id)))?;
        // The generated tests that passed are kept for later sessions (never before they ran).
        crate::team::promote_generated(&session);
        if let Some(why) = unfixed(&session) {
            end.exit_code = crate::error::EXIT_PIPELINE_FAILED;
            end.warnings.push(why);
        }
        ui.summary(&session, &end)?;
        if end.status != SessionStatus::Completed {
            drop(lock);
            return Ok(Driven {
                session,
                end,
                done: None,
            });
        }
        let done = complete(&session, ui).map_err(|e| {
            Error::Session(format!(
                "the pipeline finished, but its completion action did not ({e}); {} carries it out",
                crate::hint::quoted(&session, "resume", &[])
            ))
        })?;
        ui.done(&session, &done);
        if let Done::Deepened(_) = done {
            // Back for another pass: the roles may have grown (role-specs/), the graph did.
            state = session.load_state()?;
            graph = session.load_tasks()?;
            let specs = session.root.join("role-specs");
            if specs.is_dir() {
                registry.load_dir(&specs, RoleSource::Session)?;
            }
            continue;
        }
        drop(lock);
        return Ok(Driven {
            session,
            end,
            done: Some(done),
        });
    }
}

/// The completion action the UI chose; a Deepen that cannot be done is said and asked again.
fn complete(session: &SessionDir, ui: &mut dyn DriveUi) -> Result<Done> {
    // The pipeline is completed in session.json, its action not yet carried out.
    crate::failpoint::hit("completion");
    loop {
        return match ui.completion(session) {
            Choice::Archive => complete::archive(session),
            Choice::Keep => complete::keep(session),
            Choice::Deepen => match super::extend::deepen_in_place(session, None, None) {
                Ok(summary) => Ok(Done::Deepened(summary)),
                Err(e) => {
                    ui.cannot_deepen(&e);
                    continue;
                }
            },
        };
    }
}

/// Why a session whose pipeline ran the test-fix cycle fixed nothing, when it did not: such a
/// run ends with exit 1 (a completed pipeline, but not what was asked of it).
fn unfixed(session: &SessionDir) -> Option<String> {
    use crate::artifacts::CycleStatus;
    let graph = session.load_tasks().ok()?;
    if !graph.tasks.iter().any(|t| t.owner == "fixer") {
        return None;
    }
    let state = crate::artifacts::IterationState::load(&session.root)?;
    match state.status {
        CycleStatus::NeedsAgent => Some(format!(
            "nothing was fixed: the fixer needs an agent backend (the built-in one writes the \
             localisation and the fix plan only); run {} with --backend fixer=<agent>",
            crate::hint::quoted(session, "fix", &[])
        )),
        CycleStatus::Failure => Some(format!(
            "the test-fix cycle ended below its target: {}",
            state.summary
        )),
        _ => None,
    }
}
