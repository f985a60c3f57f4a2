//! `team-testing worker`: a long-running process on any host. It pulls tasks of its roles from
//! the work queue, rebuilds the repository and the session's inputs in a folder of its own, runs
//! the same role code in the same sandbox as a local worker, and sends back progress, the files
//! the task wrote and the outcome. The task is acknowledged only once that outcome is stored in
//! the event stream; while it runs, the worker tells NATS it is still at it, so only a worker that
//! died (or hangs past the ack wait) has its task handed to another.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, AckKind};
use futures_util::StreamExt;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

use super::files::{self, Manifest};
use super::names::{self, token};
use super::objects::Objects;
use super::registry;
use super::settings::ClusterSettings;
use super::streams;
use super::wire::{
    EventKind, Finished, ReturnedFiles, RunningTask, ShardDone, TaskEnvelope, WorkerEvent,
    WorkerId, WorkerInfo,
};
use super::{RemoteError, Result};
use crate::session::SessionDir;
use crate::tasks::Outcome;
use crate::team::{run_builtin, RoleContext};

/// How long a finished task's outcome may take to reach the stream (the server may be restarting)
/// before the worker gives up on it and lets the task be redelivered.
const OUTCOME_PATIENCE: Duration = Duration::from_secs(600);

/// Fetching the objects and checking the repository out, on top of the role's own budget.
const SETUP_LIMIT: Duration = Duration::from_secs(600);

/// Roles a worker can run: the built-in ones whose work is the session's files.
pub const REMOTE_ROLES: [&str; 2] = ["generator", "executor"];

pub struct WorkerOptions {
    pub settings: ClusterSettings,
    pub roles: Vec<String>,
    pub slots: usize,
    /// The worker's own folder: caches, repository checkouts, one folder per running task.
    pub dir: PathBuf,
    pub name: String,
    pub ack_wait: Duration,
}

struct Shared {
    me: WorkerId,
    roles: Vec<String>,
    dir: PathBuf,
    js: jetstream::Context,
    objects: Objects,
    ack_wait: Duration,
    running: Mutex<Vec<RunningTask>>,
    /// One checkout per repository snapshot, made once.
    checkouts: tokio::sync::Mutex<HashMap<String, PathBuf>>,
}

/// Runs the worker until SIGINT or SIGTERM. `ready` is called once it is connected and pulling.
pub fn serve(opts: WorkerOptions, ready: impl FnOnce(&WorkerId)) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| RemoteError::nats("starting the worker runtime", e))?;
    rt.block_on(serve_async(opts, ready))
}

async fn serve_async(opts: WorkerOptions, ready: impl FnOnce(&WorkerId)) -> Result<()> {
    for role in &opts.roles {
        if !REMOTE_ROLES.contains(&role.as_str()) {
            return Err(RemoteError::Refused(format!(
                "a worker runs the roles {}, not {role:?}",
                REMOTE_ROLES.join(", ")
            )));
        }
    }
    std::fs::create_dir_all(&opts.dir).map_err(|e| RemoteError::file(&opts.dir, e))?;
    let host = host_name();
    let me = WorkerId {
        id: format!(
            "{}-{}-{}",
            token(&opts.name),
            std::process::id(),
            &super::objects::name_of(format!("{:?}", Instant::now()).as_bytes())[7..13]
        ),
        name: opts.name.clone(),
        host,
    };
    let client = opts
        .settings
        .connect(&format!("team-testing worker {}", opts.name))
        .await?;
    let js = jetstream::new(client);
    let tasks = streams::tasks(&js).await?;
    streams::events(&js).await?;
    let objects = Objects::open(&js).await?;
    let workers = registry::bucket(&js).await?;
    let mut consumers = Vec::new();
    for role in &opts.roles {
        consumers.push(streams::role_pull(&tasks, role, opts.ack_wait).await?);
    }
    // The queue's consumer keeps the ack wait of whoever made it first: heartbeats follow that.
    let ack_wait = consumers
        .iter_mut()
        .map(|c| c.cached_info().config.ack_wait)
        .min()
        .unwrap_or(opts.ack_wait);
    if ack_wait != opts.ack_wait {
        eprintln!(
            "team-testing worker {}: the queue's ack wait is {}s (set when it was made), not {}s",
            opts.name,
            ack_wait.as_secs(),
            opts.ack_wait.as_secs()
        );
    }
    let shared = Arc::new(Shared {
        me: me.clone(),
        roles: opts.roles.clone(),
        dir: opts.dir.clone(),
        js,
        objects,
        ack_wait,
        running: Mutex::new(Vec::new()),
        checkouts: tokio::sync::Mutex::new(HashMap::new()),
    });
    let started = crate::util::now_ts();
    let slots_n = opts.slots;
    let info = move |shared: &Shared| WorkerInfo {
        id: shared.me.id.clone(),
        name: shared.me.name.clone(),
        host: shared.me.host.clone(),
        roles: shared.roles.clone(),
        slots: slots_n,
        tasks: shared.running.lock().map(|r| r.clone()).unwrap_or_default(),
        seen: crate::util::now_ts(),
        started: started.clone(),
    };
    registry::heartbeat(&workers, &info(&shared)).await?;
    let beat = {
        let shared = shared.clone();
        let workers = workers.clone();
        let info = info.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(registry::HEARTBEAT).await;
                let _ = registry::heartbeat(&workers, &info(&shared)).await;
            }
        })
    };
    ready(&me);
    let slots = Arc::new(Semaphore::new(opts.slots.max(1)));
    let stop = stop_signal();
    tokio::pin!(stop);
    'pull: loop {
        let permit = tokio::select! {
            _ = &mut stop => break 'pull,
            p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break 'pull },
        };
        let mut taken = None;
        while taken.is_none() {
            for consumer in &consumers {
                let fetched = tokio::select! {
                    _ = &mut stop => break 'pull,
                    f = consumer.fetch().max_messages(1).expires(Duration::from_millis(500)).messages() => f,
                };
                let Ok(mut batch) = fetched else {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    continue;
                };
                if let Some(Ok(msg)) = batch.next().await {
                    taken = Some(msg);
                    break;
                }
            }
        }
        if let Some(msg) = taken {
            tokio::spawn(handle(shared.clone(), msg, permit));
        }
    }
    beat.abort();
    registry::leave(&workers, &me.id).await;
    Ok(())
}

async fn stop_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(t) => t,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

/// This machine's host name.
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into the buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Sends a task's events, in order, on its session's subject.
#[derive(Clone)]
struct Events {
    js: jetstream::Context,
    subject: String,
    base: WorkerEvent,
}

impl Events {
    fn event(&self, kind: EventKind) -> WorkerEvent {
        WorkerEvent {
            kind,
            ..self.base.clone()
        }
    }

    /// Best effort: a lost progress line loses nothing.
    async fn send(&self, kind: EventKind) {
        if let Ok(payload) = serde_json::to_vec(&self.event(kind)) {
            if let Ok(ack) = self.js.publish(self.subject.clone(), payload.into()).await {
                let _ = ack.await;
            }
        }
    }

    /// Until stored: the outcome is what the task's acknowledgement waits for.
    async fn send_durable(&self, kind: EventKind) -> Result<()> {
        let payload = serde_json::to_vec(&self.event(kind))
            .map_err(|e| RemoteError::nats("the outcome", e))?;
        streams::publish_durable(
            &self.js,
            &self.subject,
            &format!("done.{}", self.base.work),
            payload,
            OUTCOME_PATIENCE,
        )
        .await
        .map(|_| ())
    }
}

async fn handle(shared: Arc<Shared>, msg: jetstream::Message, _slot: OwnedSemaphorePermit) {
    let envelope: TaskEnvelope = match serde_json::from_slice(&msg.payload) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("team-testing worker: dropping an unreadable task: {e}");
            let _ = msg.ack_with(AckKind::Term).await;
            return;
        }
    };
    if !shared.roles.contains(&envelope.role) {
        // Not ours (a worker runs only the roles it was started with): back to the queue.
        let _ = msg
            .ack_with(AckKind::Nak(Some(Duration::from_secs(1))))
            .await;
        return;
    }
    let msg = Arc::new(msg);
    let heartbeat = {
        let msg = msg.clone();
        let every = (shared.ack_wait / 3).max(Duration::from_millis(500));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let _ = msg.ack_with(AckKind::Progress).await;
            }
        })
    };
    let running = RunningTask {
        session: envelope.session_id.clone(),
        task_id: envelope.task.id.clone(),
        attempt: envelope.task.attempts,
        shard: envelope.shard.as_ref().map(|s| s.index),
    };
    if let Ok(mut r) = shared.running.lock() {
        r.push(running.clone());
    }
    let events = Events {
        js: shared.js.clone(),
        subject: names::event_subject(&envelope.session_id),
        base: WorkerEvent {
            session_id: envelope.session_id.clone(),
            task_id: envelope.task.id.clone(),
            attempt: envelope.task.attempts,
            work: envelope.work_id(),
            worker: shared.me.clone(),
            kind: EventKind::Claimed,
        },
    };
    events.send(EventKind::Claimed).await;
    eprintln!(
        "team-testing worker {}: {} {} attempt {}{}",
        shared.me.name,
        envelope.session_id,
        envelope.task.id,
        envelope.task.attempts,
        envelope
            .shard
            .as_ref()
            .map(|s| format!(" shard {}/{}", s.index + 1, s.count))
            .unwrap_or_default()
    );
    let setup = Duration::from_secs(envelope.timeout_s.min(7 * 24 * 3600)) + SETUP_LIMIT;
    let ran = tokio::time::timeout(setup, run_envelope(&shared, &envelope, &events)).await;
    let kind = match ran {
        Ok(Ok(kind)) => kind,
        // The worker could not do the work (a refused task, a missing object, a full disk, a
        // role that crashed or timed out): a failed outcome, which the coordinator retries like
        // any failed attempt, or a failed shard, which makes the run a local one.
        failed => {
            let why = match failed {
                Ok(Err(e)) => e.to_string(),
                _ => format!("no result within {}s", setup.as_secs()),
            };
            let why = format!("worker {}: {why}", shared.me.name);
            match &envelope.shard {
                Some(shard) => EventKind::ShardDone(Box::new(ShardDone {
                    index: shard.index,
                    error: Some(why),
                    output: String::new(),
                    files: ReturnedFiles::default(),
                })),
                None => EventKind::Finished(Box::new(Finished {
                    outcome: Outcome::failed(why),
                    files: ReturnedFiles::default(),
                })),
            }
        }
    };
    match events.send_durable(kind).await {
        Ok(()) => {
            for _ in 0..5 {
                if msg.double_ack().await.is_ok() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
        Err(e) => eprintln!(
            "team-testing worker {}: the outcome of {} could not be stored ({e}); it will be redelivered",
            shared.me.name, envelope.task.id
        ),
    }
    heartbeat.abort();
    if let Ok(mut r) = shared.running.lock() {
        r.retain(|t| t != &running);
    }
}

/// What a worker refuses in a task before doing anything with it: every name that becomes a
/// path must be one of the session's layers, a run number, or a plain path inside the checkout.
fn check_envelope(envelope: &TaskEnvelope) -> Result<()> {
    let refuse = |what: String| Err(RemoteError::Refused(what));
    let layer_ok = |l: &str| crate::session::LAYER_DIRS.contains(&l);
    if let Some(layer) = &envelope.task.layer {
        if !layer_ok(layer) {
            return refuse(format!("the task's layer {layer:?} is not a layer"));
        }
    }
    if let Some(shard) = &envelope.shard {
        if !layer_ok(&shard.layer) {
            return refuse(format!(
                "the shard's layer {:?} is not a layer",
                shard.layer
            ));
        }
        let run_ok = shard.run_no == "gen"
            || (!shard.run_no.is_empty()
                && shard.run_no.len() <= 6
                && shard.run_no.bytes().all(|b| b.is_ascii_digit()));
        if !run_ok {
            return refuse(format!("{:?} is not a run number", shard.run_no));
        }
        if shard.files.iter().any(|f| !files::is_plain(f)) {
            return refuse("a shard names a test file outside its layer".into());
        }
    }
    let subdir = envelope.repo.subdir.trim_end_matches('/');
    if !subdir.is_empty() && !files::is_plain(subdir) {
        return refuse(format!("{subdir:?} is not a folder inside the repository"));
    }
    if envelope.timeout_s == 0 || envelope.timeout_s > 7 * 24 * 3600 {
        return refuse(format!("a timeout of {}s", envelope.timeout_s));
    }
    Ok(())
}

/// The sandbox a task runs in here: the session's, never looser than a local run's default.
/// Whatever the task says, the project's code is sandboxed, the network is off, and no
/// variable that looks like a credential passes.
fn worker_sandbox(asked: &crate::sandbox::SandboxSettings) -> crate::sandbox::SandboxSettings {
    crate::sandbox::SandboxSettings {
        enabled: true,
        allow_network: false,
        allow_env: Vec::new(),
        ..asked.clone()
    }
}

async fn run_envelope(
    shared: &Arc<Shared>,
    envelope: &TaskEnvelope,
    events: &Events,
) -> Result<EventKind> {
    check_envelope(envelope)?;
    let cache = shared.dir.join("objects");
    let repo_top = shared.checkout(&envelope.repo, &cache).await?;
    let repo = repo_top.join(envelope.repo.subdir.trim_end_matches('/'));
    let run_dir = shared.dir.join("runs").join(token(&envelope.work_id()));
    let _ = tokio::fs::remove_dir_all(&run_dir).await;
    let mut in_use = false;
    let ran = in_run_dir(shared, envelope, events, &repo, &run_dir, &mut in_use).await;
    // Done, failed or refused, the task's folder goes; only a role still running in it (timed
    // out on its blocking thread) keeps it, until the next task of the same work replaces it.
    if !in_use {
        let _ = tokio::fs::remove_dir_all(&run_dir).await;
    }
    ran
}

/// Why a shard's search gave no result.
#[derive(Debug, thiserror::Error)]
enum SearchNotRun {
    /// This worker cannot contain what the search runs.
    #[error("{0}")]
    Unsandboxed(String),
    #[error(transparent)]
    Failed(crate::team::error::RoleError),
}

/// The task in its folder `run_dir`: the session's inputs, the role, what goes back. `in_use`
/// is set when the role's thread may still be writing there.
async fn in_run_dir(
    shared: &Arc<Shared>,
    envelope: &TaskEnvelope,
    events: &Events,
    repo: &Path,
    run_dir: &Path,
    in_use: &mut bool,
) -> Result<EventKind> {
    let cache = shared.dir.join("objects");
    let session_root = run_dir.join(token(&envelope.session_id));
    let manifest = materialize(&shared.objects, &envelope.inputs, &session_root, &cache).await?;
    let session =
        SessionDir::open(session_root.clone()).map_err(|e| RemoteError::file(&session_root, e))?;
    if let Some(shard) = envelope.shard.as_ref().filter(|s| s.generate.is_none()) {
        let test_dir = session.root.join("tests").join(&shard.layer);
        for rel in crate::team::shard_files(&test_dir) {
            if !shard.files.contains(&rel) {
                let _ = std::fs::remove_file(test_dir.join(&rel));
            }
        }
    }
    let (progress_tx, mut progress_rx) = mpsc::unbounded_channel::<EventKind>();
    let forward = {
        let events = events.clone();
        tokio::spawn(async move {
            while let Some(kind) = progress_rx.recv().await {
                events.send(kind).await;
            }
        })
    };
    let env = envelope.clone();
    let session2 = session.clone();
    let repo2 = repo.to_path_buf();
    let name = shared.me.name.clone();
    let work =
        tokio::task::spawn_blocking(move || run_role(&env, &session2, &repo2, &name, progress_tx));
    let limit = Duration::from_secs(envelope.timeout_s) + Duration::from_secs(5);
    let ran = tokio::time::timeout(limit, work).await;
    if ran.is_ok() {
        // The role is done, its progress sender gone: the last lines go out before the outcome.
        let _ = forward.await;
    } else {
        forward.abort();
    }
    let ran = match ran {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            return Err(RemoteError::nats(
                "the role",
                format!(
                    "built-in role {} crashed on {}: {e}",
                    envelope.role, shared.me.name
                ),
            ))
        }
        // The role's thread may still be writing in the task's folder: nothing of it is sent
        // back, and the folder stays until the next task of the same work replaces it.
        Err(_) => {
            *in_use = true;
            return Err(RemoteError::nats(
                "the role",
                format!(
                    "built-in role {} timed out after {}s on {}",
                    envelope.role, envelope.timeout_s, shared.me.name
                ),
            ));
        }
    };
    let kind = match ran {
        Ran::Task(outcome) => {
            let files = send_back(shared, &session.root, repo, &manifest).await?;
            EventKind::Finished(Box::new(Finished { outcome, files }))
        }
        Ran::Search(found) => {
            let (output, error) = match found {
                Ok(result) => {
                    let bytes = serde_json::to_vec(&result)
                        .map_err(|e| RemoteError::nats("a shard's search", e))?;
                    (shared.objects.put(&bytes).await?, None)
                }
                Err(e) => (String::new(), Some(e.to_string())),
            };
            EventKind::ShardDone(Box::new(ShardDone {
                index: envelope.shard.as_ref().map(|s| s.index).unwrap_or(0),
                error,
                output,
                files: ReturnedFiles::default(),
            }))
        }
        Ran::Shard(mut output) => {
            let shard = envelope.shard.as_ref().map(|s| (s.run_no.clone(), s.index));
            if let Some((run_no, index)) = shard {
                keep_reports_apart(&session.root, &mut output, &manifest, &run_no, index);
            }
            // A shard sends back its raw reports only: its folder held only its share of the
            // layer's tests, and the executor that split the run writes the run's record.
            let mut files = send_back(shared, &session.root, repo, &manifest).await?;
            files.removed.clear();
            files
                .written
                .retain(|rel, _| rel.starts_with("results/shards/"));
            let bytes =
                serde_json::to_vec(&output).map_err(|e| RemoteError::nats("a shard's run", e))?;
            let output = shared.objects.put(&bytes).await?;
            EventKind::ShardDone(Box::new(ShardDone {
                index: envelope.shard.as_ref().map(|s| s.index).unwrap_or(0),
                error: None,
                output,
                files,
            }))
        }
    };
    Ok(kind)
}

enum Ran {
    Task(Outcome),
    Shard(crate::testing::runner::RunOutput),
    Search(std::result::Result<crate::gen::GenResult, SearchNotRun>),
}

/// The role's work, on a blocking thread, exactly as a local worker runs it.
fn run_role(
    envelope: &TaskEnvelope,
    session: &SessionDir,
    repo: &Path,
    worker_name: &str,
    progress: mpsc::UnboundedSender<EventKind>,
) -> Ran {
    let report = |phase: &str, pct: Option<f64>, detail: Option<String>| {
        let _ = progress.send(EventKind::Progress {
            phase: phase.to_string(),
            pct,
            detail,
        });
    };
    report(
        "started",
        Some(0.0),
        Some(format!(
            "attempt {} on {worker_name}",
            envelope.task.attempts
        )),
    );
    if envelope.role == "generator"
        && !worker_sandbox(&envelope.sandbox)
            .protections()
            .filesystem_contained
    {
        let why = format!(
            "worker {worker_name} offers no filesystem sandbox, and the built-in generator calls the project's functions with made-up arguments; run the worker in a container or VM"
        );
        return match &envelope.shard {
            Some(_) => Ran::Search(Err(SearchNotRun::Unsandboxed(why))),
            None => Ran::Task(Outcome::failed(why)),
        };
    }
    // Agent backends are the worker host's business, not the task's: a task names no program
    // to run or URL to call here. A worker runs the built-in roles.
    let agents = crate::agents::backends::AgentSettings::default();
    let sandbox = worker_sandbox(&envelope.sandbox);
    let ctx = RoleContext {
        session,
        repo,
        task: &envelope.task,
        instance: &envelope.instance,
        config: &envelope.config,
        deadline: Instant::now() + Duration::from_secs(envelope.timeout_s),
        progress: &report,
        sandbox: &sandbox,
        agents: &agents,
        role_body: &envelope.role_body,
        plan_only: false,
        shards: None,
    };
    let Some(job) = &envelope.shard else {
        return Ran::Task(run_builtin(&envelope.role, &ctx));
    };
    match &job.generate {
        Some(req) => Ran::Search(
            crate::session::framework::session_framework(session, repo)
                .map_err(crate::team::error::RoleError::from)
                .and_then(|framework| crate::team::search_here(&ctx, framework, &job.layer, req))
                .map_err(SearchNotRun::Failed),
        ),
        None => Ran::Shard(crate::team::run_shard(
            &ctx,
            &crate::team::project::session_project(session, repo),
            &job.layer,
            &job.run_no,
            &job.deselect,
        )),
    }
}

/// What a shard's run wrote under results/, moved to `results/shards/<run>-<index>/`, so the
/// shards' files of one run do not overwrite each other (or the merged run's) in the session.
fn keep_reports_apart(
    session: &Path,
    output: &mut crate::testing::runner::RunOutput,
    manifest: &Manifest,
    run_no: &str,
    index: usize,
) {
    let dir = format!("results/shards/{run_no}-{}", index + 1);
    let _ = std::fs::create_dir_all(session.join(&dir));
    let Ok(entries) = std::fs::read_dir(session.join("results")) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = format!("results/{name}");
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        if manifest.get(&rel) == Some(&super::objects::name_of(&bytes)) {
            continue;
        }
        let moved = format!("{dir}/{name}");
        if std::fs::rename(entry.path(), session.join(&moved)).is_ok() {
            for report in output.reports.iter_mut().filter(|r| **r == rel) {
                *report = moved.clone();
            }
        }
    }
}

/// The session's files as the manifest names them, under `root`.
async fn materialize(
    objects: &Objects,
    manifest_name: &str,
    root: &Path,
    cache: &Path,
) -> Result<Manifest> {
    let bytes = objects.get(manifest_name, cache).await?;
    let manifest: Manifest =
        serde_json::from_slice(&bytes).map_err(|e| RemoteError::nats("the input manifest", e))?;
    tokio::fs::create_dir_all(root)
        .await
        .map_err(|e| RemoteError::file(root, e))?;
    for (rel, name) in &manifest {
        if !files::is_input(rel) {
            return Err(RemoteError::Refused(format!(
                "the task names {rel:?}, which is not a session input"
            )));
        }
        let bytes = objects.get(name, cache).await?;
        files::write(root, rel, &bytes)?;
    }
    Ok(manifest)
}

/// What the task wrote or removed, stored; named by session-relative path.
async fn send_back(
    shared: &Shared,
    root: &Path,
    repo: &Path,
    manifest: &Manifest,
) -> Result<ReturnedFiles> {
    let root2 = root.to_path_buf();
    let now = tokio::task::spawn_blocking(move || {
        files::list(&root2, files::is_returnable)
            .into_iter()
            .filter_map(|rel| std::fs::read(root2.join(&rel)).ok().map(|b| (rel, b)))
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|e| RemoteError::nats("collecting the task's files", e))?;
    let mut returned = ReturnedFiles {
        session_root: root.display().to_string(),
        repo_root: repo.display().to_string(),
        ..Default::default()
    };
    for (rel, bytes) in &now {
        let name = super::objects::name_of(bytes);
        if manifest.get(rel) != Some(&name) {
            shared.objects.put(bytes).await?;
            returned.written.insert(rel.clone(), name);
        }
    }
    for rel in manifest.keys() {
        if files::is_returnable(rel) && !now.iter().any(|(r, _)| r == rel) {
            returned.removed.push(rel.clone());
        }
    }
    Ok(returned)
}

impl Shared {
    /// The repository at the snapshot's commit, checked out once per worker.
    async fn checkout(&self, repo: &super::wire::RepoRef, cache: &Path) -> Result<PathBuf> {
        let mut checkouts = self.checkouts.lock().await;
        if let Some(path) = checkouts.get(&repo.commit) {
            return Ok(path.clone());
        }
        let bytes = self.objects.get(&repo.object, cache).await?;
        let bundle = cache.join(format!("{}.bundle", token(&repo.commit)));
        tokio::fs::write(&bundle, &bytes)
            .await
            .map_err(|e| RemoteError::file(&bundle, e))?;
        let dest = self.dir.join("repos").join(token(&repo.commit));
        let (b, c, d) = (bundle.clone(), repo.commit.clone(), dest.clone());
        tokio::task::spawn_blocking(move || super::snapshot::checkout(&b, &c, &d))
            .await
            .map_err(|e| RemoteError::nats("checkout", e))??;
        let _ = tokio::fs::remove_file(&bundle).await;
        let dest = dest.canonicalize().unwrap_or(dest);
        checkouts.insert(repo.commit.clone(), dest.clone());
        Ok(dest)
    }
}

/// The live workers, for `team-testing workers`.
pub fn list_workers(settings: &ClusterSettings) -> Result<Vec<WorkerInfo>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RemoteError::nats("starting the client runtime", e))?;
    rt.block_on(async {
        let client = settings.connect("team-testing workers").await?;
        let js = jetstream::new(client);
        let store = registry::bucket(&js).await?;
        registry::list(&store).await
    })
}
