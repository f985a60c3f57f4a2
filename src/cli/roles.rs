//! `team-testing roles list [SESSION]`: the role registry (built-in, --roles-dir, the session's
//! role-specs/), with prefix, inner loop, backend and where each came from.

use clap::{Args, Subcommand};
use serde_json::json;

use std::path::PathBuf;

use super::Location;
use crate::agents::backends::{AgentSettings, BackendConfig};
use crate::bus::message::RoleAdded;
use crate::bus::{Message, Payload};
use crate::error::Error;
use crate::pipeline::dynamic;
use crate::roles::{Backend, Registry, RoleSource, RoleSpec};
use crate::session::inbox::{self, Reply, RoleRequest};
use crate::session::{self, SessionLock, SessionStatus};
use crate::util::now_ts;

#[derive(Args, Debug)]
pub struct RolesArgs {
    #[command(subcommand)]
    pub command: RolesCommand,
}

#[derive(Subcommand, Debug)]
pub enum RolesCommand {
    /// The roles a new run (or SESSION) uses.
    List(ListArgs),
    /// Add a role to a session: its role file is checked and copied into role-specs/, its task
    /// (PREFIX-001) wired into the graph; the running (or next resumed) coordinator runs it.
    Add(AddArgs),
}

#[derive(Args, Debug)]
pub struct AddArgs {
    /// The role's name (the `role:` of its file).
    pub name: String,
    /// The role file; a `role.md` brings the folder it is in (its scripts) along.
    #[arg(long, value_name = "FILE")]
    pub spec: PathBuf,
    /// Session id or path (default: the one active or paused).
    #[arg(long, value_name = "SESSION")]
    pub session: Option<String>,
    /// The role's task waits on TASK, and what waited on TASK waits on the role's task.
    #[arg(long, value_name = "TASK")]
    pub after: Option<String>,
    /// TASK (still pending) waits on the role's task; may be given more than once.
    #[arg(long, value_name = "TASK")]
    pub before: Vec<String>,
    /// Raise the session's role cap (coordinator included; default max_roles, 5).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_roles: Option<u64>,
    /// Seconds to wait for a running coordinator's answer.
    #[arg(long, value_name = "S", default_value_t = 30)]
    pub wait: u64,
    #[command(flatten)]
    pub location: Location,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// A session id or path: its roles (with its role-specs/ and agent chains).
    pub session: Option<String>,
    #[command(flatten)]
    pub location: Location,
    /// Extra or overriding role files: DIR/<role>/role.md (without SESSION).
    #[arg(long, value_name = "DIR")]
    pub roles_dir: Option<std::path::PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

pub fn roles(args: RolesArgs) -> anyhow::Result<i32> {
    match args.command {
        RolesCommand::List(a) => list(a),
        RolesCommand::Add(a) => add(a),
    }
}

fn add(args: AddArgs) -> anyhow::Result<i32> {
    let root = args.location.root();
    let session = session::resolve(&root, args.session.as_deref())?;
    let spec_path = args
        .spec
        .canonicalize()
        .map_err(|e| Error::io(format!("role file {}", args.spec.display()), e))?;
    // The file's own errors come first and name it, whoever applies the request.
    let text = std::fs::read_to_string(&spec_path)
        .map_err(|e| Error::io(format!("reading {}", spec_path.display()), e))?;
    let spec = RoleSpec::parse(&text, &spec_path, RoleSource::Session(spec_path.clone()))?;
    if spec.name != args.name {
        return Err(Error::bad_file(
            &spec_path,
            format!("it defines role {}, not {}", spec.name, args.name),
        )
        .into());
    }
    let request = RoleRequest {
        id: inbox::new_id(),
        spec: spec_path,
        after: args.after.clone(),
        before: args.before.clone(),
        max_roles: args.max_roles.map(|n| n as usize),
    };
    match SessionLock::acquire(&session.lock_file(), &session.id) {
        Ok(lock) => add_offline(&session, &request, lock),
        Err(Error::Locked { pid, .. }) => {
            inbox::post(&session.root, &request)?;
            // Where the answer lands (archiving leaves the session where it is).
            let places = [session.root.clone()];
            let lock_file = session.lock_file();
            let gone = || SessionLock::holder(&lock_file).is_none();
            let limit = std::time::Duration::from_secs(args.wait);
            if let Some(reply) = inbox::wait_reply(&places, &request.id, limit, gone) {
                return answer(&session, reply);
            }
            if !inbox::withdraw(&session.root, &request.id) {
                // The coordinator has taken it: its answer comes once it is applied.
                let long = std::time::Duration::from_secs(600);
                return match inbox::wait_reply(&places, &request.id, long, gone) {
                    Some(reply) => answer(&session, reply),
                    None => Err(Error::Session(format!(
                        "the coordinator of {} took the request but ended without answering; \
                         {} shows whether the role was added",
                        session.id,
                        crate::hint::quoted(&session, "roles list", &[])
                    ))
                    .into()),
                };
            }
            // Withdrawn, so nobody applied it: apply it here if the coordinator has ended.
            match SessionLock::acquire(&session.lock_file(), &session.id) {
                Ok(lock) => add_offline(&session, &request, lock),
                Err(_) => Err(Error::Session(format!(
                    "the coordinator of {} (pid {pid}) did not take the request within {} s; nothing was added",
                    session.id, args.wait
                ))
                .into()),
            }
        }
        Err(e) => Err(e.into()),
    }
}

fn answer(session: &session::SessionDir, reply: Reply) -> anyhow::Result<i32> {
    if reply.ok {
        println!("{} (session {}, running)", reply.message, session.id);
        Ok(0)
    } else {
        Err(Error::Session(format!("roles add refused: {}", reply.message)).into())
    }
}

/// No coordinator runs: this process holds the lock and makes the change itself, as the
/// coordinator would (the next `resume` dispatches the task).
fn add_offline(
    session: &session::SessionDir,
    request: &RoleRequest,
    _lock: SessionLock,
) -> anyhow::Result<i32> {
    let mut state = session.load_state()?;
    let (config, mut registry) = super::drive::session_team(session, &state)?;
    let mut graph = session.load_tasks()?;
    let max = request
        .max_roles
        .or(state.controls.max_roles)
        .unwrap_or(config.max_roles);
    let known: Vec<String> = BackendConfig::load(None, &state.repo)?
        .backends
        .into_keys()
        .collect();
    let (spec, task) = dynamic::add_role(
        session,
        &mut registry,
        &mut graph,
        request,
        max,
        |b| known.iter().any(|k| k == b),
        &now_ts(),
    )?;
    if request.max_roles.is_some() {
        state.controls.max_roles = Some(max);
    }
    if !state.roles.contains(&spec.name) {
        state.roles.push(spec.name.clone());
    }
    if let Some(names) = &spec.agent {
        let mut names = names.clone();
        if !names.iter().any(|n| n == "builtin") {
            names.push("builtin".into());
        }
        let chain = BackendConfig::load(None, &state.repo)?.chain_for(
            &spec.name,
            &Default::default(),
            Some(&names),
        )?;
        state.agents.chains.insert(spec.name.clone(), chain);
    }
    // A completed or archived session has work again (a failed one stays failed: resume
    // retries it).
    if matches!(
        state.status,
        SessionStatus::Completed | SessionStatus::Archived
    ) {
        state.status = SessionStatus::Paused;
    }
    state.tasks_total = graph.len();
    state.updated_at = now_ts();
    super::drive::log_message(
        session,
        Message::new(
            "coordinator",
            "all",
            format!(
                "[coordinator] role {} added (roles add): {}",
                spec.name, task.id
            ),
            Payload::RoleAdded(RoleAdded {
                role: spec.name.clone(),
                prefix: spec.prefix.clone(),
                task_id: Some(task.id.clone()),
                source: spec.source_label(),
            }),
        ),
    )?;
    session.save_tasks(&graph)?;
    session.save_state(&state)?;
    let after = if task.blocked_by.is_empty() {
        "now".to_string()
    } else {
        format!("after {}", task.blocked_by.join(", "))
    };
    println!(
        "role {} added to {}: {} will run {after}; {} runs it",
        spec.name,
        session.id,
        task.id,
        crate::hint::quoted(session, "resume", &[])
    );
    Ok(0)
}

fn list(args: ListArgs) -> anyhow::Result<i32> {
    let (registry, agents) = match &args.session {
        Some(s) => {
            let dir = session::resolve(&args.location.root(), Some(s))?;
            let state = dir.load_state()?;
            let mut registry = Registry::load(state.roles_dir.as_deref())?;
            let specs = dir.root.join("role-specs");
            if specs.is_dir() {
                registry.load_dir(&specs, RoleSource::Session)?;
            }
            (registry, state.agents)
        }
        None => (
            Registry::load(args.roles_dir.as_deref())?,
            AgentSettings::default(),
        ),
    };
    let rows: Vec<serde_json::Value> = registry
        .iter()
        .map(|r| {
            let backend = match &r.backend {
                Backend::Builtin => {
                    let chain: Vec<String> =
                        agents.chain(&r.name).into_iter().map(|b| b.name).collect();
                    format!("builtin ({})", chain.join(" → "))
                }
                Backend::Command { argv } => format!("command: {}", argv.join(" ")),
            };
            json!({
                "role": r.name,
                "prefix": r.prefix,
                "inner_loop": r.inner_loop,
                "backend": backend,
                "sandbox": r.sandbox,
                "source": r.source_label(),
            })
        })
        .collect();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(0);
    }
    println!(
        "{:<12} {:<9} {:<10} {:<40} SOURCE",
        "ROLE", "PREFIX", "INNER", "BACKEND"
    );
    for r in &rows {
        let s = |k: &str| match &r[k] {
            serde_json::Value::String(v) => v.clone(),
            serde_json::Value::Null => "-".into(),
            other => other.to_string(),
        };
        println!(
            "{:<12} {:<9} {:<10} {:<40} {}",
            s("role"),
            s("prefix"),
            s("inner_loop"),
            s("backend"),
            s("source")
        );
    }
    Ok(0)
}
