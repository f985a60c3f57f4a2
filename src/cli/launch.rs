//! Starts the actor system for a session (new or resumed) and waits for the pipeline to end.

use std::sync::{Arc, Mutex};

use actix::prelude::*;

use crate::actors::coordinator::{Begin, Coordinator, RunEnd};
use crate::actors::progress::ProgressView;
use crate::actors::RunEnv;
use crate::bus::{Bus, BusHandle, Writer};
use crate::error::{Error, Result};
use crate::session::{SessionState, SessionStatus};
use crate::tasks::TaskGraph;

/// Exit code when the user interrupted the run (the session is paused).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Sees every message as the bus delivers it, on the actors' thread (the benchmarks time beats
/// with it). It must return at once.
pub type Observer = Arc<dyn Fn(&crate::bus::Message) + Send + Sync>;

struct Watch(Observer);

impl Actor for Watch {
    type Context = Context<Self>;
}

impl Handler<crate::bus::Delivered> for Watch {
    type Result = ();
    fn handle(&mut self, msg: crate::bus::Delivered, _: &mut Self::Context) {
        (self.0)(&msg.0);
    }
}

pub fn launch(
    env: RunEnv,
    graph: TaskGraph,
    state: SessionState,
    begin: Begin,
    quiet_stdout: bool,
    observer: Option<Observer>,
) -> Result<RunEnd> {
    let writer = Writer::open(&env.session.messages(), &env.session.meta_json())?;
    for repair in &writer.repairs {
        eprintln!("team-testing: warning: {repair}");
    }
    let repairs = writer.repairs.clone();
    let end: Arc<Mutex<Option<RunEnd>>> = Arc::new(Mutex::new(None));
    let session_dir = env.session.clone();
    let sys = System::new();
    let writer_handle = writer.handle();
    let end2 = end.clone();
    sys.block_on(async move {
        let bus = BusHandle::new(writer_handle, Bus::default().start());
        // What the log's opening repaired is said in the log itself, first.
        for repair in repairs {
            bus.publish(crate::bus::Message::new(
                "coordinator",
                "coordinator",
                format!("[coordinator] log repaired: {repair}"),
                crate::bus::Payload::Error(crate::bus::message::ErrorReport {
                    task_id: None,
                    message: repair,
                    retry: false,
                }),
            ));
        }
        let view = ProgressView::new(quiet_stdout).start();
        bus.subscribe(view.recipient());
        if let Some(observer) = observer {
            bus.subscribe(Watch(observer).start().recipient());
        }
        let coordinator = Coordinator::new(Arc::new(env), bus.clone(), graph, state, end2).start();
        bus.subscribe(coordinator.clone().recipient());
        coordinator.do_send(begin);
        // Ctrl-C pauses the session: the state on disk is already consistent (every beat persists),
        // so stopping here loses nothing; `resume` continues.
        actix::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("team-testing: interrupted; stopping the running roles (Ctrl-C again to exit at once)");
                crate::proc::kill_all_groups();
                System::current().stop();
                // A second Ctrl-C while blocking work winds down: leave now.
                std::thread::spawn(|| {
                    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
                    if let Ok(rt) = rt {
                        rt.block_on(async {
                            let _ = tokio::signal::ctrl_c().await;
                        });
                        std::process::exit(EXIT_INTERRUPTED);
                    }
                });
            }
        });
    });
    sys.run()
        .map_err(|e| Error::Environment(format!("actor system failed: {e}")))?;
    writer.close();
    let finished = end.lock().ok().and_then(|mut e| e.take());
    match finished {
        Some(end) => Ok(end),
        None => {
            // Interrupted: mark the session paused so `resume` picks it up.
            if let Ok(mut state) = session_dir.load_state() {
                state.status = SessionStatus::Paused;
                state.active_workers.clear();
                state.updated_at = crate::util::now_ts();
                let _ = session_dir.save_state(&state);
            }
            mark_meta_paused(&session_dir.meta_json());
            Ok(RunEnd {
                status: SessionStatus::Paused,
                exit_code: EXIT_INTERRUPTED,
                warnings: vec![format!(
                    "interrupted: session {} is paused; continue with {}",
                    session_dir.id,
                    crate::hint::quoted(&session_dir, "resume", &[])
                )],
            })
        }
    }
}

/// How the run ended, as one JSON object (`--json`).
pub fn summary_json(
    session: &crate::session::SessionDir,
    end: &RunEnd,
) -> Result<serde_json::Value> {
    let graph = session.load_tasks()?;
    let state = session.load_state()?;
    Ok(serde_json::json!({
        "session_id": session.id,
        "session_dir": session.root,
        "status": end.status.as_str(),
        "pipeline_mode": state.pipeline_mode,
        "tasks_total": graph.len(),
        "tasks_completed": graph.count(crate::tasks::TaskStatus::Completed),
        "tasks_not_applicable": graph.count(crate::tasks::TaskStatus::NotApplicable),
        "gc_rounds": state.gc_rounds,
        "layers": final_layer_results(&graph, &state),
        "quality_score": quality_score(session)
            .filter(|(_, band)| band != crate::report::NOT_SCORED)
            .map(|(score, _)| score),
        "deliverables": deliverables(session),
        "warnings": end.warnings,
    }))
}

/// The summary a person reads: tasks, each layer's result and GC rounds, the quality score, the
/// deliverables, and what went wrong.
pub fn print_summary(session: &crate::session::SessionDir, end: &RunEnd) -> Result<()> {
    let graph = session.load_tasks()?;
    let state = session.load_state()?;
    let layers = final_layer_results(&graph, &state);
    let na = graph.count(crate::tasks::TaskStatus::NotApplicable);
    println!(
        "Pipeline {} ({}): {}/{} tasks completed{}",
        end.status.as_str(),
        state.pipeline_mode,
        graph.count(crate::tasks::TaskStatus::Completed),
        graph.len(),
        if na > 0 {
            format!(", {na} not applicable")
        } else {
            String::new()
        }
    );
    if let Ok(scope) = crate::testing::session_scope::load_scope(session) {
        if let (true, Some(why)) = (scope.whole_project, &scope.whole_project_reason) {
            println!("  scope: the whole project, because {why}");
        }
    }
    for (layer, v) in layers.as_object().into_iter().flatten() {
        if let Some(why) = v["not_applicable"].as_str() {
            println!("  {layer}: not applicable: {why}");
            continue;
        }
        println!(
            "  {layer}: pass {} cov {} (GC rounds {})",
            v["pass_rate"]
                .as_f64()
                .map(|p| format!("{:.1}%", p * 100.0))
                .unwrap_or("-".into()),
            v["coverage"]
                .as_f64()
                .map(|c| format!("{c:.1}%"))
                .unwrap_or("n/a".into()),
            v["gc_rounds"]
        );
    }
    match quality_score(session) {
        Some((_, band)) if band == crate::report::NOT_SCORED => {
            println!("  quality score: not scored (no layer had anything to test)")
        }
        Some((score, band)) => println!("  quality score: {score:.1} ({band})"),
        None => {}
    }
    for t in graph.tasks.iter().filter(|t| t.status.is_dead()) {
        println!(
            "  {} {}: {}",
            t.id,
            t.status.as_str(),
            t.reason.as_deref().unwrap_or("")
        );
    }
    let files = deliverables(session);
    if !files.is_empty() {
        println!("  deliverables: {}", files.join(", "));
    }
    for w in &end.warnings {
        eprintln!("team-testing: warning: {w}");
    }
    println!("Session: {}", session.root.display());
    if end.status == SessionStatus::Completed {
        let report = session.root.join("analysis/quality-report.md");
        if report.is_file() {
            println!("Report: {}", report.display());
        }
        let next = super::extend::next_steps(session);
        if !next.is_empty() {
            println!("Next: {}", next.join("; "));
        }
    }
    Ok(())
}

/// The analyst's score and band, when a report was written.
fn quality_score(session: &crate::session::SessionDir) -> Option<(f64, String)> {
    let report: serde_json::Value =
        crate::util::read_json(&session.root.join("analysis/report.json")).ok()?;
    let score = report["quality_score"].as_f64()?;
    Some((score, report["band"].as_str().unwrap_or("").to_string()))
}

/// What the session produced, relative to its folder: the strategy, the tests per layer, the
/// report, and the files of dynamic roles.
fn deliverables(session: &crate::session::SessionDir) -> Vec<String> {
    let mut out = Vec::new();
    for f in ["strategy/test-strategy.md", "analysis/quality-report.md"] {
        if session.root.join(f).is_file() {
            out.push(f.to_string());
        }
    }
    for layer in crate::session::LAYER_DIRS {
        let n = std::fs::read_dir(session.root.join("tests").join(layer))
            .map(|rd| rd.flatten().filter(|e| e.path().is_file()).count())
            .unwrap_or(0);
        if n > 0 {
            out.push(format!("tests/{layer}/ ({n} files)"));
        }
    }
    out
}

/// The last completed TESTRUN result of each layer.
fn final_layer_results(graph: &TaskGraph, state: &SessionState) -> serde_json::Value {
    let mut layers = serde_json::Map::new();
    for t in &graph.tasks {
        let Some(layer) = &t.layer else {
            continue;
        };
        // The generator's verdict stands for the layer: its run never happened.
        if t.status == crate::tasks::TaskStatus::NotApplicable && t.outcome.is_some() {
            layers.insert(
                layer.clone(),
                serde_json::json!({"task_id": t.id, "status": "not_applicable",
                                   "not_applicable": t.reason, "gc_rounds": 0}),
            );
            continue;
        }
        let Some(o) = &t.outcome else {
            continue;
        };
        if o.pass_rate.is_none() || t.status != crate::tasks::TaskStatus::Completed {
            continue;
        }
        let code = crate::tasks::layer_code(layer).to_string();
        layers.insert(
            layer.clone(),
            serde_json::json!({
                "task_id": t.id,
                "pass_rate": o.pass_rate,
                "coverage": o.coverage,
                "gc_rounds": state.gc_rounds.get(&code).copied().unwrap_or(0),
            }),
        );
    }
    serde_json::Value::Object(layers)
}

/// meta.json's top-level status follows the session's (the bus writer is closed by now).
fn mark_meta_paused(path: &std::path::Path) {
    let Ok(mut meta) = crate::util::read_json::<serde_json::Value>(path) else {
        return;
    };
    if let Some(obj) = meta.as_object_mut() {
        obj.insert("status".into(), serde_json::json!("paused"));
        obj.insert(
            "updated_at".into(),
            serde_json::json!(crate::util::now_ts()),
        );
        let _ = crate::util::atomic_write_json(path, &meta);
    }
}
