//! `team-testing roles list [SESSION]`: the role registry (built-in, --roles-dir, the session's
//! role-specs/), with prefix, inner loop, backend and where each came from.

use clap::{Args, Subcommand};
use serde_json::json;

use super::Location;
use crate::agents::backends::AgentSettings;
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
    }
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
