//! What every command that runs a session shares (run, resume, deepen, rerun, revise): `-y`,
//! `--completion`, `--json`, `--max-roles`, the backend options, opening a session to run it, and
//! the end of a run: the summary, then the completion action.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use anyhow::Context;
use clap::Args;

use super::launch::{launch, print_summary, summary_json};
use super::run::{check_sandbox, load_team, AgentArgs};
use crate::actors::coordinator::Begin;
use crate::actors::RunEnv;
use crate::bus::{Message, Payload, Writer};
use crate::error::Error;
use crate::pipeline::config::TeamConfig;
use crate::roles::{Registry, RoleSource};
use crate::session::{self, SessionDir, SessionLock, SessionState, SessionStatus};
use crate::tasks::TaskGraph;

#[derive(Args, Debug, Default)]
pub struct DriveArgs {
    /// Answer yes to every question (no prompts); the session is archived at the end unless
    /// --completion says otherwise.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// When every task is done: interactive (ask: archive, keep or deepen; keep when there is no
    /// terminal), archive (move it to <sessions root>/archive/) or keep (paused, resumable).
    #[arg(long, value_name = "ACTION", value_parser = ["interactive", "archive", "keep"])]
    pub completion: Option<String>,
    /// Print one JSON object with the result on stdout (progress goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Most roles in use at once, coordinator included (default: the config's max_roles, 5).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_roles: Option<u64>,
    #[command(flatten)]
    pub agents: AgentArgs,
}

/// What to do with a session whose tasks are all done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    Interactive,
    Archive,
    Keep,
}

impl DriveArgs {
    pub fn completion(&self) -> Completion {
        match self.completion.as_deref() {
            Some("archive") => Completion::Archive,
            Some("keep") => Completion::Keep,
            Some(_) => Completion::Interactive,
            None if self.yes => Completion::Archive,
            None => Completion::Interactive,
        }
    }

    /// Questions may be asked: a person at a terminal, no -y, no --json.
    pub fn can_ask(&self) -> bool {
        !self.yes && !self.json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }

    /// The session's stored choice of completion, for session.json.
    pub fn completion_label(&self) -> &'static str {
        match self.completion() {
            Completion::Interactive => "interactive",
            Completion::Archive => "archive",
            Completion::Keep => "keep",
        }
    }
}

/// A session opened to run again: locked, with its config, roles and graph loaded.
pub struct Opened {
    pub session: SessionDir,
    pub lock: SessionLock,
    pub state: SessionState,
    pub config: TeamConfig,
    pub registry: Registry,
    pub graph: TaskGraph,
    /// It came out of archive/ to run: [`Opened::put_back`] returns it when nothing runs.
    pub was_archived: bool,
}

impl Opened {
    /// A command that changed nothing leaves an archived session where it found it.
    pub fn put_back(&self) {
        if self.was_archived {
            if let Err(e) = self.session.archive() {
                eprintln!("team-testing: warning: {e}");
            }
        }
    }
}

/// Resolves SESSION, takes its lock (an archived session moves back under the sessions root),
/// and loads everything a run needs. `--max-roles` and new backend options are applied to the session's state.
pub fn open(root: &Path, arg: Option<&str>, drive: &DriveArgs) -> anyhow::Result<Opened> {
    let found = session::resolve(root, arg)?;
    let lock = SessionLock::acquire(&found.lock_file(), &found.id)?;
    let was_archived = found.is_archived();
    let session = found.unarchive()?;
    if was_archived {
        eprintln!(
            "team-testing: {} restored from the archive to {}",
            session.id,
            session.root.display()
        );
    }
    for stale in session.sweep_stale_temps() {
        eprintln!(
            "team-testing: removed {}, left by an interrupted write",
            stale.display()
        );
    }
    let mut state = session.load_state()?;
    if !state.repo.is_dir() {
        return Err(Error::MissingRepo {
            path: state.repo.clone(),
        }
        .into());
    }
    if let Some(n) = drive.max_roles {
        state.controls.max_roles = Some(n as usize);
    }
    let (config, registry) = session_team(&session, &state)?;
    let agents = &drive.agents;
    if !agents.backends.is_empty() || agents.config.is_some() || agents.replay.is_some() {
        state.agents = agents.settings(&state.repo, &registry, root)?;
        state.sandbox.secret_env = state.agents.secret_env();
    }
    state.completion_action = drive.completion_label().into();
    let graph = session.load_tasks()?;
    Ok(Opened {
        session,
        lock,
        state,
        config,
        registry,
        graph,
        was_archived,
    })
}

/// The session's config (its run controls applied) and roles (with its role-specs/).
pub fn session_team(
    session: &SessionDir,
    state: &SessionState,
) -> anyhow::Result<(TeamConfig, Registry)> {
    let (mut config, mut registry) =
        load_team(state.spec_file.as_deref(), state.roles_dir.as_deref())?;
    state.controls.apply(&mut config);
    let role_specs = session.root.join("role-specs");
    if role_specs.is_dir() {
        registry.load_dir(&role_specs, RoleSource::Session)?;
    }
    Ok((config, registry))
}

/// Runs the opened session to its end, prints the summary and carries out the completion action
/// (a Deepen choice runs the new layer in the same session, then asks again).
pub fn drive(opened: Opened, begin: Begin, drive: &DriveArgs) -> anyhow::Result<i32> {
    let Opened {
        mut session,
        lock,
        mut state,
        config,
        mut registry,
        mut graph,
        ..
    } = opened;
    let mut begin = Some(begin);
    loop {
        graph
            .validate(|r| registry.contains(r))
            .map_err(|e| Error::BadTask {
                path: session.tasks_json(),
                task: e.task().to_string(),
                problem: e.to_string(),
            })?;
        check_sandbox(&mut state, &registry, &graph, drive.json)?;
        state.status = SessionStatus::Active;
        let env = RunEnv {
            session: session.clone(),
            repo: state.repo.clone(),
            config: config.clone(),
            registry: registry.clone(),
            sandbox: state.sandbox.clone(),
            agents: state.agents.clone(),
        };
        let this_begin = begin.take().unwrap_or(Begin {
            resume: true,
            selected: None,
        });
        let end = launch(env, graph, state, this_begin, drive.json, None)
            .with_context(|| format!("running session {}", session.id))?;
        if !drive.json {
            print_summary(&session, &end)?;
        }
        let finished = end.status == SessionStatus::Completed;
        let action = if finished {
            Some(complete(&session, drive).with_context(|| {
                format!(
                    "the pipeline finished, but its completion action did not; \
                     `team-testing resume {}` carries it out",
                    session.id
                )
            })?)
        } else {
            None
        };
        if let Some(Done::Deepen) = action {
            // Back for another pass: the roles may have grown (role-specs/), the graph did.
            state = session.load_state()?;
            graph = session.load_tasks()?;
            let specs = session.root.join("role-specs");
            if specs.is_dir() {
                registry.load_dir(&specs, RoleSource::Session)?;
            }
            continue;
        }
        if let Some(Done::Archived(to)) = &action {
            session = to.clone();
        }
        if drive.json {
            let mut out = summary_json(&session, &end)?;
            if let Some(done) = &action {
                out["completion"] = serde_json::json!(done.label());
                out["session_dir"] = serde_json::json!(session.root);
            }
            println!("{out}");
        }
        drop(lock);
        return Ok(end.exit_code);
    }
}

/// What the completion action did.
#[derive(Debug, Clone)]
enum Done {
    Archived(SessionDir),
    Kept,
    Deepen,
}

impl Done {
    fn label(&self) -> &'static str {
        match self {
            Done::Archived(_) => "archived",
            Done::Kept => "kept",
            Done::Deepen => "deepened",
        }
    }
}

/// The completion action of a pipeline whose every task is completed or deleted.
fn complete(session: &SessionDir, drive: &DriveArgs) -> anyhow::Result<Done> {
    // The pipeline is completed in session.json, its action not yet carried out.
    crate::failpoint::hit("completion");
    let mut choice = drive.completion();
    if choice == Completion::Interactive && !drive.can_ask() {
        eprintln!(
            "team-testing: no terminal to ask on: the session is kept (paused); \
             pass -y or --completion archive to archive it"
        );
        choice = Completion::Keep;
    }
    if choice == Completion::Interactive {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        let mut out = std::io::stderr();
        loop {
            let picked = ask(
                "Pipeline complete. What next?",
                &[
                    ("a", "Archive & Clean: mark completed, move to the archive"),
                    ("k", "Keep Active: leave it paused, resumable"),
                    (
                        "d",
                        "Deepen Coverage: add the next layer, or raise a target",
                    ),
                ],
                &mut input,
                &mut out,
            );
            choice = match picked {
                Some(0) => Completion::Archive,
                Some(1) | None => Completion::Keep,
                _ => match super::extend::deepen_in_place(session, None, None) {
                    Ok(summary) => {
                        eprintln!("team-testing: {summary}");
                        return Ok(Done::Deepen);
                    }
                    Err(e) => {
                        eprintln!("team-testing: cannot deepen: {e:#}");
                        continue;
                    }
                },
            };
            break;
        }
    }
    let mut state = session.load_state()?;
    let done = match choice {
        Completion::Archive => {
            state.status = SessionStatus::Completed;
            state.completion_action = "archive".into();
            session.save_state(&state)?;
            log_completion(session, "completed", "archived")?;
            refuse_pending_requests(session);
            let to = session.archive()?;
            if !drive.json {
                println!("Archived: {}", to.root.display());
            }
            Done::Archived(to)
        }
        _ => {
            state.status = SessionStatus::Paused;
            state.completion_action = "keep".into();
            state.pid = None;
            // The message first: a `log --follow` ends once the status is no longer active.
            log_completion(session, "paused", "kept")?;
            session.save_state(&state)?;
            if !drive.json {
                println!(
                    "Kept (paused): team-testing deepen|revise|rerun {} continues it",
                    session.id
                );
            }
            Done::Kept
        }
    };
    Ok(done)
}

/// `roles add` requests that came after the last beat: the session is archived, so they are
/// answered (refused) rather than carried into the archive and applied some day later.
fn refuse_pending_requests(session: &SessionDir) {
    for request in crate::session::inbox::pending(&session.root) {
        let _ = crate::session::inbox::answer(
            &session.root,
            &crate::session::inbox::Reply {
                id: request.id,
                ok: false,
                message: format!(
                    "session {} finished and was archived before the request was applied;                      `team-testing deepen` or `rerun` brings it back, then add the role",
                    session.id
                ),
                task_id: None,
            },
        );
    }
}

/// The completion action is a state change like any other: one message in the log, and the
/// session status in meta.json follows.
fn log_completion(session: &SessionDir, status: &str, action: &str) -> anyhow::Result<()> {
    let mut data = serde_json::Map::new();
    data.insert("status".into(), serde_json::json!(status));
    data.insert("completion_action".into(), serde_json::json!(action));
    log_message(
        session,
        Message::new(
            "coordinator",
            "coordinator",
            format!("[coordinator] session {action}"),
            Payload::StateUpdate(data),
        ),
    )
}

/// Appends one message to the session's log (durably) outside a run: the caller holds the
/// session's lock and acts as its coordinator.
pub fn log_message(session: &SessionDir, message: Message) -> anyhow::Result<()> {
    let writer = Writer::open(&session.messages(), &session.meta_json())?;
    let handle = writer.handle();
    handle.append(message);
    handle.sync().map_err(Error::Environment)?;
    writer.close();
    Ok(())
}

/// Asks one question with lettered options on `out`; an answer is the letter, the number or the
/// label's first word. None when the input ends.
pub fn ask(
    question: &str,
    options: &[(&str, &str)],
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Option<usize> {
    loop {
        let _ = writeln!(out, "{question}");
        for (i, (key, label)) in options.iter().enumerate() {
            let _ = writeln!(out, "  [{key}] {}. {label}", i + 1);
        }
        let keys: Vec<&str> = options.iter().map(|(k, _)| *k).collect();
        let _ = write!(out, "Choose {}: ", keys.join("/"));
        let _ = out.flush();
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        let answer = line.trim().to_ascii_lowercase();
        let found = options.iter().position(|(key, label)| {
            answer == *key
                || label
                    .split([' ', ':'])
                    .next()
                    .is_some_and(|w| w.eq_ignore_ascii_case(&answer))
        });
        let by_number = answer
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=options.len()).contains(n))
            .map(|n| n - 1);
        if let Some(i) = by_number.or(found) {
            return Some(i);
        }
        let _ = writeln!(out, "'{}' is not one of the choices", line.trim());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ask_takes_a_letter_a_number_or_a_word_and_reasks_on_nonsense() {
        let options = [
            ("a", "Archive & Clean"),
            ("k", "Keep Active"),
            ("d", "Deepen"),
        ];
        let mut out = Vec::new();
        let mut pick = |text: &str| ask("Next?", &options, &mut text.as_bytes(), &mut out);
        assert_eq!(pick("k\n"), Some(1));
        assert_eq!(pick("3\n"), Some(2));
        assert_eq!(pick("archive\n"), Some(0));
        assert_eq!(pick("zzz\nd\n"), Some(2));
        assert_eq!(pick(""), None);
        assert!(String::from_utf8_lossy(&out).contains("'zzz' is not one of the choices"));
    }
}
