//! `team-testing sessions`: every session under the root.

use clap::Args;
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
}

pub fn sessions(args: SessionsArgs) -> anyhow::Result<i32> {
    let root = args.location.root();
    let mut rows = Vec::new();
    let archived = session::list_archived(&root);
    for s in session::list(&root).into_iter().chain(archived) {
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
    if rows.is_empty() {
        println!("no sessions under {}", root.display());
        return Ok(0);
    }
    println!(
        "{:<48} {:<10} {:<14} {:>9}  UPDATED",
        "SESSION", "STATUS", "MODE", "PROGRESS"
    );
    let rows_archived = rows.iter().any(|r| r["archived"] == true);
    for r in rows {
        let progress = match (r["done"].as_u64(), r["total"].as_u64()) {
            (Some(d), Some(t)) => format!("{d}/{t}"),
            _ => "-".into(),
        };
        println!(
            "{:<48} {:<10} {:<14} {:>9}  {}",
            r["session_id"].as_str().unwrap_or(""),
            match (r["status"].as_str().unwrap_or(""), r["archived"] == true) {
                (status, true) => format!("{status}*"),
                (status, false) => status.to_string(),
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
            "* archived (under {})",
            root.join(session::ARCHIVE_DIR).display()
        );
    }
    Ok(0)
}
