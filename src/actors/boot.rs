//! Boots the actor system for a session (new or resumed) and waits for the pipeline to end.

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
    let total = graph.len();
    let done = graph.tasks.iter().filter(|t| t.status.is_done()).count();
    let mut repairs = env.session.restore_log()?;
    let writer = Writer::open(&env.session.messages(), &env.session.meta_json())?;
    repairs.extend(writer.repairs.iter().cloned());
    for repair in &repairs {
        eprintln!("team-testing: warning: {repair}");
    }
    let end: Arc<Mutex<Option<RunEnd>>> = Arc::new(Mutex::new(None));
    let session_dir = env.session.clone();
    let sys = System::new();
    let view = ProgressView::new(quiet_stdout, total, done);
    let lines = view.line_sink();
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
        bus.subscribe(view.start().recipient());
        if let Some(observer) = observer {
            bus.subscribe(Watch(observer).start().recipient());
        }
        let link = env.remote.clone();
        let coordinator = Coordinator::new(Arc::new(env), bus.clone(), graph, state, end2).start();
        if let Some(link) = link {
            let addr = coordinator.clone();
            link.on_note(Arc::new(move |note| {
                addr.do_send(crate::actors::coordinator::RemoteNote(note))
            }));
        }
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
                        crate::actors::progress::write_pending_lines();
                        std::process::exit(EXIT_INTERRUPTED);
                    }
                });
            }
        });
    });
    let ran = sys.run();
    // The run's progress lines come before whatever the caller prints next.
    if let Some(lines) = lines {
        lines.finish();
    }
    ran.map_err(|e| Error::Environment(format!("actor system failed: {e}")))?;
    writer.close();
    let finished = end.lock().ok().and_then(|mut e| e.take());
    match finished {
        Some(end) => Ok(end),
        None => {
            // Interrupted: mark the session paused so `resume` picks it up.
            session_dir.mark_paused();
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
