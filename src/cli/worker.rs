//! `team-testing worker` (run the cluster's tasks on this host) and `team-testing workers` (who
//! is live now).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;

use super::args::NatsArgs;
use crate::remote::worker::{WorkerOptions, REMOTE_ROLES};

#[derive(Args, Debug)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub nats: NatsArgs,
    /// The roles this worker runs (it takes no other task).
    #[arg(long, value_name = "ROLES", value_delimiter = ',', default_values_t = REMOTE_ROLES.map(String::from))]
    pub roles: Vec<String>,
    /// Tasks it runs at once.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub slots: u64,
    /// Its own folder: caches, repository checkouts, one folder per running task (default:
    /// $XDG_CACHE_HOME/team-testing/worker, else ~/.cache/team-testing/worker).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The name `workers` and `status` show (default: the host name).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// How long a task may go without this worker's heartbeat before NATS hands it to another
    /// worker (seconds; the worker heartbeats every third of it while a task runs).
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub ack_wait: u64,
}

#[derive(Args, Debug)]
pub struct WorkersArgs {
    #[command(flatten)]
    pub nats: NatsArgs,
    /// One JSON array on stdout.
    #[arg(long)]
    pub json: bool,
}

pub fn worker(args: WorkerArgs) -> anyhow::Result<i32> {
    let settings = args
        .nats
        .settings()?
        .context("worker needs --nats URL (or $TEAM_TESTING_NATS)")?;
    let dir = match args.dir {
        Some(d) => d,
        None => default_dir()?,
    };
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    let name = args.name.unwrap_or_else(host_name);
    let opts = WorkerOptions {
        settings,
        roles: args.roles,
        slots: args.slots as usize,
        dir,
        name,
        ack_wait: Duration::from_secs(args.ack_wait),
    };
    let roles = opts.roles.join(", ");
    let (slots, url) = (opts.slots, opts.settings.url.clone());
    crate::remote::worker::serve(opts, |me| {
        eprintln!(
            "team-testing worker {} ({}) on {}: roles {roles}, {slots} slot(s), NATS {url}; Ctrl-C stops it",
            me.name, me.id, me.host
        );
    })?;
    Ok(0)
}

pub fn workers(args: WorkersArgs) -> anyhow::Result<i32> {
    let settings = args
        .nats
        .settings()?
        .context("workers needs --nats URL (or $TEAM_TESTING_NATS)")?;
    let list = crate::remote::worker::list_workers(&settings)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(0);
    }
    if list.is_empty() {
        println!("no live workers on {}", settings.url);
        return Ok(0);
    }
    println!(
        "{:<16} {:<24} {:<20} {:>5}  running",
        "name", "host", "roles", "slots"
    );
    for w in &list {
        let running: Vec<String> = w
            .tasks
            .iter()
            .map(|t| match t.shard {
                Some(s) => format!("{} {} (shard {})", t.session, t.task_id, s + 1),
                None => format!("{} {}", t.session, t.task_id),
            })
            .collect();
        println!(
            "{:<16} {:<24} {:<20} {:>5}  {}",
            w.name,
            w.host,
            w.roles.join(","),
            w.slots,
            if running.is_empty() {
                "idle".to_string()
            } else {
                running.join(", ")
            }
        );
    }
    Ok(0)
}

fn default_dir() -> anyhow::Result<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .context("no --dir, and neither XDG_CACHE_HOME nor HOME is set")?;
    Ok(base.join("team-testing").join("worker"))
}

fn host_name() -> String {
    crate::remote::worker::host_name()
}
