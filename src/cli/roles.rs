//! `team-testing roles list [SESSION]`: the role registry (built-in, --roles-dir, the session's
//! role-specs/), with prefix, inner loop, backend and where each came from; `roles add`.

use clap::{Args, Subcommand};
use serde_json::json;

use std::path::PathBuf;

use super::Location;
use crate::agents::backends::AgentSettings;
use crate::app::roles::{AddRole, Added};
use crate::roles::{Backend, Registry, RoleSource};
use crate::session;

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
    let ask = AddRole {
        name: args.name.clone(),
        spec: args.spec.clone(),
        after: args.after.clone(),
        before: args.before.clone(),
        max_roles: args.max_roles.map(|n| n as usize),
        wait: std::time::Duration::from_secs(args.wait),
    };
    match crate::app::roles::add(&session, &ask)? {
        Added::Offline {
            role,
            task_id,
            after,
        } => println!(
            "role {role} added to {}: {task_id} will run {after}; {} runs it",
            session.id,
            crate::hint::quoted(&session, "resume", &[])
        ),
        Added::Live { message } => println!("{message} (session {}, running)", session.id),
    }
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
