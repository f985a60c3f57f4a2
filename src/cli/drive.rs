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
use crate::roles::{Registry, RoleSource, RoleSpec};
use crate::session::{self, SessionDir, SessionLock, SessionState, SessionStatus};
use crate::tasks::TaskGraph;

#[derive(Args, Debug, Default)]
pub struct DriveArgs {
    /// Answer yes to every question (no prompts); the session is archived at the end unless
    /// --completion says otherwise.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// When every task is done: interactive (ask: archive, keep or deepen; keep when there is no
    /// terminal), archive (status archived, in place; rebuildable copies removed) or keep
    /// (paused, resumable).
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
    /// The sandbox's description was printed already (by `run`): once is enough.
    pub sandbox_shown: bool,
}

/// Resolves SESSION, takes its lock, and loads everything a run needs (an archived session runs
/// where it is). `--max-roles` and new backend options are applied to the session's state.
pub fn open(root: &Path, arg: Option<&str>, drive: &DriveArgs) -> anyhow::Result<Opened> {
    let session = session::resolve(root, arg)?;
    let lock = SessionLock::acquire(&session.lock_file(), &session.id)?;
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
        sandbox_shown: false,
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
        session,
        lock,
        mut state,
        config,
        mut registry,
        mut graph,
        mut sandbox_shown,
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
        check_sandbox(&mut state, &registry, &graph, drive.json, sandbox_shown)?;
        sandbox_shown = true;
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
                     {} carries it out",
                    crate::hint::quoted(&session, "resume", &[])
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
    Archived,
    Kept,
    Deepen,
}

impl Done {
    fn label(&self) -> &'static str {
        match self {
            Done::Archived => "archived",
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
                    (
                        "a",
                        "Archive & Clean: mark archived, remove rebuildable copies",
                    ),
                    ("k", "Keep Active: leave it paused, resumable"),
                    (
                        "d",
                        "Deepen Coverage: add the next layer, or raise a target",
                    ),
                ],
                1,
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
            state.status = SessionStatus::Archived;
            state.completion_action = "archive".into();
            state.pid = None;
            // The message first: meta.json (CCW's `team_msg` reads its status) follows it.
            log_completion(session, "archived", "archived")?;
            session.save_state(&state)?;
            refuse_pending_requests(session);
            let freed = session.clean_rebuildable();
            if !drive.json {
                println!(
                    "Archived in place: {} (workspace copies removed, {} freed)",
                    session.root.display(),
                    human_bytes(freed)
                );
            }
            Done::Archived
        }
        _ => {
            state.status = SessionStatus::Paused;
            state.completion_action = "keep".into();
            state.pid = None;
            // The message first: a `log --follow` ends once the status is no longer active.
            log_completion(session, "paused", "kept")?;
            session.save_state(&state)?;
            if !drive.json {
                // The summary above said what can be run next.
                println!("Kept (paused).");
            }
            Done::Kept
        }
    };
    Ok(done)
}

/// `roles add` requests that came after the last beat: the session is archived, so they are
/// answered (refused) rather than applied some day later by a run nobody asked for.
fn refuse_pending_requests(session: &SessionDir) {
    for request in crate::session::inbox::pending(&session.root) {
        // The same request again, offline: it adds the role to the archived session.
        let name = std::fs::read_to_string(&request.spec)
            .ok()
            .and_then(|text| RoleSpec::parse(&text, &request.spec, RoleSource::Builtin).ok())
            .map(|spec| spec.name)
            .unwrap_or_else(|| "ROLE".into());
        let spec = request.spec.to_string_lossy().into_owned();
        let again =
            crate::hint::with_session_option(session, &["roles", "add", &name, "--spec", &spec]);
        let _ = crate::session::inbox::answer(
            &session.root,
            &crate::session::inbox::Reply {
                id: request.id,
                ok: false,
                message: format!(
                    "session {} finished and was archived before the request was applied; \
                     {again} adds the role to it now",
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

/// 1536 -> "1.5 KiB".
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// Asks one question with lettered options on `out`; an answer is the letter, the number or the
/// label's first word, and Enter alone takes `default`. None when the input ends.
pub fn ask(
    question: &str,
    options: &[(&str, &str)],
    default: usize,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Option<usize> {
    loop {
        let _ = writeln!(out, "{question}");
        for (i, (key, label)) in options.iter().enumerate() {
            let _ = writeln!(out, "  [{key}] {}. {label}", i + 1);
        }
        let keys: Vec<&str> = options.iter().map(|(k, _)| *k).collect();
        let _ = write!(out, "Choose {} [{}]: ", keys.join("/"), options[default].0);
        let _ = out.flush();
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        let answer = line.trim().to_ascii_lowercase();
        if answer.is_empty() {
            return Some(default);
        }
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
        let mut pick = |text: &str| ask("Next?", &options, 1, &mut text.as_bytes(), &mut out);
        assert_eq!(pick("k\n"), Some(1));
        assert_eq!(pick("3\n"), Some(2));
        assert_eq!(pick("archive\n"), Some(0));
        assert_eq!(pick("zzz\nd\n"), Some(2));
        assert_eq!(pick(""), None);
        // Enter alone takes the default, whatever spaces came with it.
        assert_eq!(pick("\n"), Some(1));
        assert_eq!(pick("  \n"), Some(1));
        assert!(String::from_utf8_lossy(&out).contains("'zzz' is not one of the choices"));
    }
}
