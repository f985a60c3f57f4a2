//! `team-testing status [SESSION]`: the seed's check view, from the session snapshot plus the
//! latest progress and blocker messages (read from the log's tail, so a log of any size costs
//! the same).

use std::collections::HashMap;

use clap::Args;
use serde_json::json;

use super::Location;
use crate::bus::reader::Follower;
use crate::session::{self, SessionDir, SessionState};
use crate::tasks::{layer_code, Task, TaskGraph, TaskStatus};

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Session id under the sessions root, or its path (default: the one active or paused).
    pub session: Option<String>,
    #[command(flatten)]
    pub location: Location,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Follow a running session until it ends: a live view on a terminal, plain lines elsewhere.
    #[arg(long, conflicts_with = "json")]
    pub watch: bool,
}

pub fn status(args: StatusArgs) -> anyhow::Result<i32> {
    let root = args.location.root();
    let session = session::resolve(&root, args.session.as_deref())?;
    if args.watch {
        return watch(&session);
    }
    let state = session.load_state()?;
    let graph = session.load_tasks()?;
    if args.json {
        let tasks: Vec<_> = graph
            .tasks
            .iter()
            .map(|t| {
                json!({"id": t.id, "owner": t.owner, "status": t.status, "blockedBy": t.blocked_by,
                       "layer": t.layer, "worker": t.worker, "attempts": t.attempts,
                       "host": t.meta.get(crate::tasks::data::HOST),
                       "pass_rate": t.outcome.as_ref().and_then(|o| o.pass_rate),
                       "coverage": t.outcome.as_ref().and_then(|o| o.coverage)})
            })
            .collect();
        let out = json!({
            "session_id": session.id,
            "coverage_change": crate::artifacts::coverage_change(&session.root),
            "fix_cycle": crate::artifacts::IterationState::load(&session.root),
            "status": state.status,
            "pipeline_mode": state.pipeline_mode,
            "gc_rounds": state.gc_rounds,
            "progress": {"done": done(&graph), "total": graph.len()},
            "active_workers": state.active_workers,
            // The live coordinator's pid; null when none holds the session (a stale lock too).
            "coordinator_pid": crate::session::SessionLock::holder(&session.lock_file()),
            "warnings": state.warnings,
            "tasks": tasks,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(0);
    }
    print!("{}", render(&session, &state, &graph)?);
    Ok(0)
}

/// `status --watch`: follows the session's log with the live view of `run` (plain lines off a
/// terminal) until no coordinator is left to write, then prints the status.
fn watch(session: &SessionDir) -> anyhow::Result<i32> {
    use crate::actors::progress::{live_allowed, plain_line, Board, LiveView};
    use std::io::{IsTerminal, Write};
    use std::time::{Duration, Instant};

    let graph = session.load_tasks()?;
    let live = std::io::stdout().is_terminal() && live_allowed();
    let mut board = Board::new(graph.len(), 0);
    let mut follower = Follower::new(&session.messages(), 0, 0, &[&session.root])?;
    // What happened before: replayed into the board (with each message's own time), not printed.
    let (history, _) = follower.poll_new()?;
    let now = Instant::now();
    let utc = chrono::Utc::now();
    for r in &history {
        let Some(m) = r.to_message() else { continue };
        let ago = crate::util::parse_ts(&r.ts)
            .map(|t| {
                (utc - t.with_timezone(&chrono::Utc))
                    .to_std()
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        board.apply(&m, now.checked_sub(ago).unwrap_or(now));
    }
    board.done = done(&graph);
    let view = live.then(|| LiveView::new(indicatif::ProgressDrawTarget::stdout()));
    loop {
        let running = crate::session::SessionLock::holder(&session.lock_file()).is_some();
        let (records, _) = follower.poll_new()?;
        for r in &records {
            let Some(m) = r.to_message() else { continue };
            if matches!(m.payload, crate::bus::Payload::StateUpdate(_)) {
                continue;
            }
            board.apply(&m, Instant::now());
            if view.is_none() {
                let mut out = std::io::stdout().lock();
                writeln!(out, "{}", plain_line(&m))?;
                out.flush()?;
            }
        }
        if let Some(v) = &view {
            v.draw(&board, Instant::now());
        }
        if !running && records.is_empty() {
            break;
        }
        follower.wait(Duration::from_millis(500));
    }
    if let Some(v) = &view {
        v.finish();
    }
    let state = session.load_state()?;
    let graph = session.load_tasks()?;
    print!("{}", render(session, &state, &graph)?);
    Ok(0)
}

/// How much of the log's end status reads for running tasks' milestones and blockers: a few
/// thousand messages, far more than a beat's worth.
const RECENT_LOG_BYTES: u64 = 1 << 20;

fn done(graph: &TaskGraph) -> usize {
    graph.tasks.iter().filter(|t| t.status.is_done()).count()
}

/// The text view.
pub fn render(
    session: &SessionDir,
    state: &SessionState,
    graph: &TaskGraph,
) -> crate::error::Result<String> {
    let (records, _) = Follower::read_tail(&session.messages(), RECENT_LOG_BYTES)?;
    let mut milestone: HashMap<String, String> = HashMap::new();
    let mut blockers = Vec::new();
    for r in &records {
        match r.kind.as_str() {
            "progress" => {
                if let Some(t) = r.task_id() {
                    let phase = r.data.get("phase").and_then(|v| v.as_str()).unwrap_or("");
                    let pct = r
                        .data
                        .get("progress_pct")
                        .and_then(|v| v.as_f64())
                        .map(|p| format!(" {p:.0}%"))
                        .unwrap_or_default();
                    milestone.insert(t.to_string(), format!("{phase}{pct}"));
                }
            }
            "blocker" => blockers.push(r.clone()),
            _ => {}
        }
    }
    let c = "[coordinator]";
    let total = graph.len();
    let d = done(graph);
    let pct = (d * 100).checked_div(total).unwrap_or(0);
    let mut out = String::new();
    let holder = crate::session::SessionLock::holder(&session.lock_file());
    let live = match (&holder, state.status) {
        (Some(pid), _) => format!("coordinator pid {pid}"),
        (None, crate::session::SessionStatus::Active) => "no coordinator running: resume it".into(),
        (None, _) => "no coordinator running".into(),
    };
    out.push_str(&format!(
        "{c} Testing Pipeline Status — {} ({}, {live})\n",
        session.id,
        state.status.as_str()
    ));
    out.push_str(&format!("{c} Mode: {}\n", state.pipeline_mode));
    if let Some(route) = crate::scenario::gate::session_gate_lines(&session.root).first() {
        out.push_str(&format!("{c} Scenario plan: {route}\n"));
    }
    out.push_str(&format!("{c} Progress: {d}/{total} ({pct}%)\n"));
    // What the change altered, first of the results: what a reviewer of the change asks.
    if let Some(b) = crate::gen::behaviour::BehaviourReport::load(&session.root) {
        out.push_str(&format!("{c} {}\n", b.headline()));
        for line in b.lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    let mut layers: Vec<String> = graph
        .tasks
        .iter()
        .filter_map(|t| t.layer.as_deref().map(|l| layer_code(l).to_string()))
        .collect();
    layers.dedup();
    layers.sort();
    layers.dedup();
    let rounds: Vec<String> = layers
        .iter()
        .map(|l| {
            format!(
                "{l}: {}/{}",
                state.gc_rounds.get(l).copied().unwrap_or(0),
                state.max_gc_rounds
            )
        })
        .collect();
    out.push_str(&format!("{c} GC Rounds: {}\n", rounds.join(", ")));
    if let Some(change) = crate::artifacts::coverage_change(&session.root) {
        out.push_str(&coverage_lines(&change));
    }
    if let Some(cycle) = crate::artifacts::IterationState::load(&session.root) {
        out.push_str(&fix_cycle_lines(&cycle, c));
    }
    out.push('\n');
    out.push_str(&format!("{c} Pipeline Graph:\n"));
    let width = graph.tasks.iter().map(|t| t.id.len()).max().unwrap_or(0) + 1;
    for t in &graph.tasks {
        out.push_str(&format!(
            "  {:width$} {:4} {}\n",
            format!("{}:", t.id),
            word(t),
            detail(t, graph, &milestone, holder.is_some())
        ));
    }
    out.push('\n');
    let now = chrono::Utc::now();
    let workers: Vec<String> = state
        .active_workers
        .iter()
        .filter(|_| holder.is_some())
        .map(|w| {
            let secs = crate::util::parse_ts(&w.started_at)
                .map(|s| (now - s.with_timezone(&chrono::Utc)).num_seconds().max(0))
                .unwrap_or(0);
            format!("{} on {} ({}s)", w.name, w.task_id, secs)
        })
        .collect();
    out.push_str(&format!(
        "{c} Active Workers: {}\n",
        if workers.is_empty() {
            "none".into()
        } else {
            workers.join(", ")
        }
    ));
    let ready: Vec<&str> = graph.ready().iter().map(|t| t.id.as_str()).collect();
    out.push_str(&format!(
        "{c} Ready: {}\n",
        if ready.is_empty() {
            "none".into()
        } else {
            ready.join(", ")
        }
    ));
    if !blockers.is_empty() {
        out.push_str(&format!("{c} Active Blockers:\n"));
        for b in blockers.iter().rev().take(10) {
            out.push_str(&format!("  {} {}: {}\n", b.id, b.from, b.summary));
        }
    }
    for w in &state.warnings {
        out.push_str(&format!("{c} Warning: {w}\n"));
    }
    out.push_str(&format!(
        "{c} Commands: {}\n",
        next_commands(session, state, graph)
    ));
    Ok(out)
}

/// Coverage before -> after: the project's own tests, then with the generated ones, per layer
/// and per file.
/// The test-fix loop: where it is, its pass rate over the iterations, what is stuck.
fn fix_cycle_lines(cycle: &crate::artifacts::IterationState, c: &str) -> String {
    let rates: Vec<String> = cycle
        .iterations
        .iter()
        .map(|i| format!("{:.1}%", i.pass_rate))
        .collect();
    let done = cycle.iterations.last().map_or(0, |i| i.iteration);
    let at = if cycle.status == crate::artifacts::CycleStatus::Running {
        format!(
            "iteration {done} of at most {} done, next {} strategy",
            cycle.max_iterations,
            cycle.selected_strategy.as_str()
        )
    } else {
        format!("after {done} iteration(s)")
    };
    let mut out = format!(
        "{c} Test-Fix Cycle: {} ({at}); pass rate {}; branch {}\n",
        cycle.status.as_str().replace('_', " "),
        if rates.is_empty() {
            "-".to_string()
        } else {
            rates.join(" -> ")
        },
        if cycle.branch.is_empty() {
            "-"
        } else {
            &cycle.branch
        }
    );
    if !cycle.stuck_tests.is_empty() {
        out.push_str(&format!("  stuck: {}\n", cycle.stuck_tests.join(", ")));
    }
    out
}

fn coverage_lines(change: &crate::artifacts::CoverageChange) -> String {
    let c = "[coordinator]";
    let pct = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{p:.1}%"));
    let mut out = format!("{c} Coverage (the project's own tests -> with the generated ones):\n");
    for l in &change.layers {
        out.push_str(&format!(
            "  {}: {:.1}% -> {:.1}%, {:+.1} points by {} new test(s)\n",
            l.layer,
            l.before,
            l.after,
            l.points(),
            l.new_tests
        ));
    }
    for f in &change.files {
        out.push_str(&format!(
            "    {}: {} -> {}\n",
            f.file,
            pct(f.before),
            pct(f.after)
        ));
    }
    out
}

/// What the user can run next: `resume` only while tasks are left; once every task is done,
/// how to take the tests and read the report.
fn next_commands(session: &SessionDir, state: &SessionState, graph: &TaskGraph) -> String {
    let hint = |verb: &str| crate::hint::quoted(session, verb, &[]);
    let all_done = graph.tasks.iter().all(|t| t.status.is_done());
    let running = crate::session::SessionLock::holder(&session.lock_file()).is_some();
    if running {
        // `resume` would be refused while its coordinator runs: watch it instead.
        format!(
            "{} to watch it | {} to refresh",
            crate::hint::quoted(session, "log", &["--follow"]),
            hint("status")
        )
    } else if all_done || state.status == crate::session::SessionStatus::Archived {
        let steps = crate::app::extend::next_steps(session);
        if steps.is_empty() {
            "none: every task is done".into()
        } else {
            steps.join(" | ")
        }
    } else {
        format!(
            "{} to advance | {} to refresh",
            hint("resume"),
            hint("status")
        )
    }
}

fn word(t: &Task) -> &'static str {
    match t.status {
        TaskStatus::Completed | TaskStatus::Deleted => "done",
        TaskStatus::InProgress => "run",
        TaskStatus::Pending => "wait",
        TaskStatus::Failed => "fail",
        TaskStatus::Skipped => "skip",
        TaskStatus::NotApplicable => "n/a",
    }
}

fn detail(t: &Task, graph: &TaskGraph, milestone: &HashMap<String, String>, live: bool) -> String {
    let text = status_detail(t, graph, milestone, live);
    // A task a cluster worker took says which host runs (or ran) it.
    match t
        .meta
        .get(crate::tasks::data::HOST)
        .and_then(|h| h.as_str())
    {
        Some(host) if matches!(t.status, TaskStatus::InProgress | TaskStatus::Completed) => {
            format!("{text} [host {host}]")
        }
        _ => text,
    }
}

fn status_detail(
    t: &Task,
    graph: &TaskGraph,
    milestone: &HashMap<String, String>,
    live: bool,
) -> String {
    match t.status {
        TaskStatus::Completed => t
            .outcome
            .as_ref()
            .map(crate::tasks::Outcome::headline)
            .unwrap_or_default(),
        TaskStatus::InProgress if !live => {
            "interrupted: runs again on resume (unless its outcome was recorded)".into()
        }
        TaskStatus::InProgress => format!(
            "{} on {}",
            milestone
                .get(&t.id)
                .cloned()
                .unwrap_or_else(|| "started".into()),
            t.worker.as_deref().unwrap_or("?")
        ),
        TaskStatus::Pending => {
            let waiting: Vec<&str> = t
                .blocked_by
                .iter()
                .filter(|b| !graph.get(b).is_some_and(|d| d.status.is_done()))
                .map(String::as_str)
                .collect();
            if waiting.is_empty() {
                "ready".into()
            } else {
                format!("blocked by {}", waiting.join(", "))
            }
        }
        _ => t.reason.clone().unwrap_or_default(),
    }
}
