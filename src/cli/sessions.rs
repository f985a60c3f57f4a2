//! `team-testing sessions`: every session under the root.

use clap::{Args, Subcommand};
use serde_json::json;

use super::Location;
use crate::session;

#[derive(Args, Debug)]
pub struct SessionsArgs {
    #[command(flatten)]
    pub location: Location,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Archived sessions too (hidden by default).
    #[arg(long)]
    pub all: bool,
    #[command(subcommand)]
    pub action: Option<SessionsAction>,
}

#[derive(Subcommand, Debug)]
pub enum SessionsAction {
    /// Prune the generated tests and the layer runs kept for reuse under the sessions root: the
    /// entries no run used for DAYS days (all of them with `--days 0`).
    Gc(GcArgs),
}

#[derive(Args, Debug)]
pub struct GcArgs {
    #[command(flatten)]
    pub location: Location,
    /// Days since an entry was last used.
    #[arg(long, value_name = "DAYS", default_value_t = 30)]
    pub days: u64,
}

/// `sessions gc`: the caches of generated tests and of layer runs pruned.
fn gc(args: GcArgs) -> anyhow::Result<i32> {
    use crate::gen::cache::{dir_under, runs_dir_under, Cache};
    let root = args.location.root();
    let unused_for = std::time::Duration::from_secs(args.days * 24 * 3600);
    let searches = Cache::under(&root).prune(unused_for);
    let runs = Cache::of_runs(&root).prune(unused_for);
    for (pruned, what, dir) in [
        (searches, "module search(es)", dir_under(&root)),
        (runs, "layer run(s)", runs_dir_under(&root)),
    ] {
        println!(
            "removed {} cached {what} ({} KiB) from {}; {} kept",
            pruned.entries,
            pruned.bytes.div_ceil(1024),
            dir.display(),
            pruned.kept
        );
    }
    Ok(0)
}

pub fn sessions(args: SessionsArgs) -> anyhow::Result<i32> {
    if let Some(SessionsAction::Gc(gc_args)) = args.action {
        return gc(gc_args);
    }
    let root = args.location.root();
    let mut rows = Vec::new();
    let mut hidden = 0;
    for s in session::list_all(&root) {
        if !args.all && s.is_archived() {
            hidden += 1;
            continue;
        }
        let row = match (s.load_state(), s.load_tasks()) {
            (Ok(state), Ok(graph)) => json!({
                "session_id": s.id,
                "path": s.root,
                "status": state.status,
                "archived": s.is_archived(),
                "pipeline_mode": state.pipeline_mode,
                "done": graph.tasks.iter().filter(|t| t.status.is_done()).count(),
                "total": graph.len(),
                "updated_at": state.updated_at,
                "task": state.task_description,
            }),
            (Err(e), _) | (_, Err(e)) => json!({
                "session_id": s.id, "path": s.root, "status": "unreadable", "error": e.to_string(),
            }),
        };
        rows.push(row);
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(0);
    }
    let hidden_note = || {
        if hidden > 0 {
            println!(
                "{hidden} archived session(s) not shown: {} lists them too",
                sessions_all_hint(&args.location)
            );
        }
    };
    if rows.is_empty() {
        println!("no sessions under {}", root.display());
        hidden_note();
        return Ok(0);
    }
    println!(
        "{:<48} {:<10} {:<14} {:>9}  UPDATED",
        "SESSION", "STATUS", "MODE", "PROGRESS"
    );
    let rows_archived = rows
        .iter()
        .any(|r| r["archived"] == true && r["status"] != "archived");
    for r in rows {
        let progress = match (r["done"].as_u64(), r["total"].as_u64()) {
            (Some(d), Some(t)) => format!("{d}/{t}"),
            _ => "-".into(),
        };
        println!(
            "{:<48} {:<10} {:<14} {:>9}  {}",
            r["session_id"].as_str().unwrap_or(""),
            match (r["status"].as_str().unwrap_or(""), r["archived"] == true) {
                ("archived", _) | (_, false) => r["status"].as_str().unwrap_or("").to_string(),
                (status, true) => format!("{status}*"),
            },
            r["pipeline_mode"].as_str().unwrap_or("-"),
            progress,
            r["updated_at"]
                .as_str()
                .or(r["error"].as_str())
                .unwrap_or("")
        );
    }
    if rows_archived {
        println!(
            "* archived by an earlier version (under {})",
            root.join(session::ARCHIVE_DIR).display()
        );
    }
    hidden_note();
    Ok(0)
}

/// `sessions --all` with the same location options, pasteable.
fn sessions_all_hint(location: &Location) -> String {
    crate::hint::with_paths(
        &["sessions", "--all"],
        &[
            ("--repo", location.repo.as_deref()),
            ("--sessions-dir", location.sessions_dir.as_deref()),
        ],
    )
}
