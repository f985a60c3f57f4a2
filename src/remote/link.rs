//! The coordinator's side of the cluster: it puts a claimed task on the work queue with what a
//! worker needs (the repository bundle, the session's inputs), routes the workers' events back
//! to whoever waits for them, and brings returned files into the session.
//!
//! The link runs its own small tokio runtime, so NATS traffic never waits on the actors' thread
//! and a role running on a blocking thread (the executor splitting a layer into shards) can wait
//! on it too.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use async_nats::jetstream::consumer::{pull, Consumer};
use async_nats::jetstream::{self, kv};
use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::files::{self, Manifest};
use super::objects::Objects;
use super::routes::{Fate, Orphan, Route, Routes};
use super::settings::ClusterSettings;
use super::wire::{
    EventKind, RepoRef, ReturnedFiles, ShardDone, ShardJob, TaskEnvelope, WorkerEvent,
};
use super::{names, registry, snapshot, streams, RemoteError, Result};
use crate::agents::backends::AgentSettings;
use crate::pipeline::config::TeamConfig;
use crate::sandbox::SandboxSettings;
use crate::session::SessionDir;
use crate::tasks::Task;

pub use super::routes::{Acker, Routed};

/// What the session's team is, for the envelopes (a worker has no session of its own).
#[derive(Clone)]
pub struct Team {
    pub config: TeamConfig,
    pub sandbox: SandboxSettings,
    pub agents: AgentSettings,
}

/// Called with a line for the message log (an ignored or adopted outcome, a lost server).
pub type Notify = Arc<dyn Fn(Note) + Send + Sync>;

#[derive(Debug, Clone)]
pub enum Note {
    /// An event the coordinator did not take, and why.
    Ignored(String),
    /// The server has been unreachable for longer than the settings allow.
    Lost(String),
}

struct Inner {
    settings: ClusterSettings,
    client: async_nats::Client,
    js: jetstream::Context,
    objects: Objects,
    workers: kv::Store,
    session: SessionDir,
    repo: PathBuf,
    team: Team,
    /// Role -> slots of the live workers that serve it.
    served: Mutex<BTreeMap<String, usize>>,
    snapshot: tokio::sync::OnceCell<RepoRef>,
    routes: Mutex<Routes>,
    /// Session-relative path -> (modified, length, object name): files unchanged since the last
    /// dispatch are not read again.
    inputs: Mutex<HashMap<String, (SystemTime, u64, String)>>,
    notify: Mutex<Option<Notify>>,
}

pub struct Link {
    rt: tokio::runtime::Runtime,
    inner: Arc<Inner>,
}

/// A claimed task to run remotely.
pub struct TaskRequest {
    pub task: Task,
    pub instance: String,
    pub role: String,
    pub role_body: String,
    pub timeout_s: u64,
}

impl Link {
    /// Connects, makes sure the streams and buckets exist, takes in the session's events still
    /// in the stream (outcomes sent while no coordinator ran), and starts routing.
    pub fn connect(
        settings: ClusterSettings,
        session: &SessionDir,
        repo: &Path,
        team: Team,
    ) -> Result<Link> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("tt-nats")
            .enable_all()
            .build()
            .map_err(|e| RemoteError::nats("starting the client runtime", e))?;
        let inner = rt.block_on(async {
            let client = settings
                .connect(&format!("team-testing coordinator {}", session.id))
                .await?;
            let js = jetstream::new(client.clone());
            streams::tasks(&js).await?;
            let events = streams::events(&js).await?;
            let objects = Objects::open(&js).await?;
            let workers = registry::bucket(&js).await?;
            let consumer = streams::session_pull(&events, &session.id).await?;
            let inner = Arc::new(Inner {
                settings,
                client,
                js,
                objects,
                workers,
                session: session.clone(),
                repo: repo.to_path_buf(),
                team,
                served: Mutex::new(BTreeMap::new()),
                snapshot: tokio::sync::OnceCell::new(),
                routes: Mutex::new(Routes::default()),
                inputs: Mutex::new(HashMap::new()),
                notify: Mutex::new(None),
            });
            inner.refresh_served().await;
            // The bundle now: a repository that cannot be sent is said before anything runs.
            inner.repo().await?;
            inner.drain(&consumer).await;
            tokio::spawn(route_events(inner.clone(), consumer));
            tokio::spawn(watch_workers(inner.clone()));
            tokio::spawn(watch_connection(inner.clone()));
            Ok::<_, RemoteError>(inner)
        })?;
        Ok(Link { rt, inner })
    }

    /// Where notes go (the coordinator publishes them).
    pub fn on_note(&self, notify: Notify) {
        if let Ok(mut n) = self.inner.notify.lock() {
            *n = Some(notify);
        }
    }

    /// The server URL, without credentials.
    pub fn url(&self) -> &str {
        &self.inner.settings.url
    }

    /// Whether a live worker serves `role` now.
    pub fn serves(&self, role: &str) -> bool {
        self.inner
            .served
            .lock()
            .is_ok_and(|s| s.get(role).is_some_and(|&n| n > 0))
    }

    /// How many shards an executor layer run is split into (1: not split).
    pub fn shards(&self) -> usize {
        self.inner.settings.shards.max(1)
    }

    /// Puts `req` on the work queue (unless an outcome of the task is already at hand) and
    /// returns the stream of its events.
    pub fn start_task(
        &self,
        req: TaskRequest,
    ) -> tokio::task::JoinHandle<Result<mpsc::UnboundedReceiver<Routed>>> {
        let inner = self.inner.clone();
        self.rt.spawn(async move { inner.start_task(req).await })
    }

    /// Brings a task's returned files into the session; returns the paths written.
    pub fn bring_in(&self, files: ReturnedFiles) -> tokio::task::JoinHandle<Result<Vec<String>>> {
        let inner = self.inner.clone();
        self.rt.spawn(async move { inner.bring_in(&files).await })
    }

    /// Stops waiting for `task_id` (its outcome came, or the wait timed out).
    pub fn forget(&self, task_id: &str) {
        if let Ok(mut routes) = self.inner.routes.lock() {
            routes.tasks.remove(task_id);
        }
    }

    /// Runs `groups` of a layer's test files as shards on the executors, one envelope each, and
    /// returns what each shard's run found, in shard order.
    pub fn run_shards(
        &self,
        req: crate::team::ShardRequest<'_>,
        progress: crate::team::ProgressFn<'_>,
    ) -> Result<Vec<crate::testing::runner::RunOutput>> {
        let count = req.groups.len();
        let jobs = req
            .groups
            .into_iter()
            .enumerate()
            .map(|(index, files)| ShardJob {
                index,
                count,
                layer: req.layer.to_string(),
                run_no: req.run_no.to_string(),
                files,
                deselect: req.deselect.to_vec(),
                generate: None,
            })
            .collect();
        self.shards_of(req.task, jobs, req.timeout, progress)
    }

    /// Runs each of a generator search's `groups` as one shard on the generators.
    pub fn generate_shards(
        &self,
        req: crate::team::GenShardRequest<'_>,
        progress: crate::team::ProgressFn<'_>,
    ) -> Result<Vec<crate::gen::GenResult>> {
        let count = req.groups.len();
        let jobs = req
            .groups
            .into_iter()
            .enumerate()
            .map(|(index, group)| ShardJob {
                index,
                count,
                layer: req.layer.to_string(),
                run_no: "gen".into(),
                files: Vec::new(),
                deselect: Vec::new(),
                generate: Some(group),
            })
            .collect();
        self.shards_of(req.task, jobs, req.timeout, progress)
    }

    /// The shards' outputs, each read as `T`, in shard order.
    fn shards_of<T: serde::de::DeserializeOwned>(
        &self,
        task: &Task,
        jobs: Vec<ShardJob>,
        timeout: Duration,
        progress: crate::team::ProgressFn<'_>,
    ) -> Result<Vec<T>> {
        let inner = self.inner.clone();
        let plan = ShardPlan {
            task: task.clone(),
            jobs,
            timeout,
        };
        let outputs = self
            .rt
            .block_on(async move { inner.run_shards(plan, progress).await })?;
        outputs
            .iter()
            .map(|bytes| {
                serde_json::from_slice(bytes).map_err(|e| RemoteError::nats("a shard's output", e))
            })
            .collect()
    }
}

struct ShardPlan {
    task: Task,
    jobs: Vec<ShardJob>,
    timeout: Duration,
}

impl Inner {
    fn note(&self, note: Note) {
        match &note {
            Note::Ignored(line) => tracing::warn!("{line}"),
            Note::Lost(line) => tracing::error!("{line}"),
        }
        let notify = self.notify.lock().ok().and_then(|n| n.clone());
        if let Some(notify) = notify {
            notify(note);
        }
    }

    async fn refresh_served(&self) {
        let Ok(list) = registry::list(&self.workers).await else {
            return;
        };
        let mut served = BTreeMap::new();
        for w in list {
            for role in &w.roles {
                *served.entry(role.clone()).or_insert(0) += w.slots;
            }
        }
        if let Ok(mut s) = self.served.lock() {
            *s = served;
        }
    }

    /// The repository bundle, made and stored once per coordinator process.
    async fn repo(&self) -> Result<RepoRef> {
        self.snapshot
            .get_or_try_init(|| async {
                let repo = self.repo.clone();
                let scratch = self.session.root.join(".remote/snapshot");
                let sessions = vec![self.session.sessions_root()];
                let snap =
                    tokio::task::spawn_blocking(move || snapshot::make(&repo, &scratch, &sessions))
                        .await
                        .map_err(|e| RemoteError::nats("snapshot", e))??;
                let object = self.objects.put_file(&snap.bundle).await?;
                let _ = tokio::fs::remove_dir_all(self.session.root.join(".remote/snapshot")).await;
                Ok(RepoRef {
                    commit: snap.commit,
                    object,
                    subdir: snap.subdir,
                })
            })
            .await
            .cloned()
    }

    /// The manifest of the session's inputs as they are now, stored; returns its object name.
    async fn inputs(&self) -> Result<String> {
        let root = self.session.root.clone();
        let known = self.inputs.lock().map(|k| k.clone()).unwrap_or_default();
        let (manifest_plan, fresh) = tokio::task::spawn_blocking(move || {
            let mut plan: Vec<(String, Option<String>, SystemTime, u64)> = Vec::new();
            let mut fresh: Vec<(String, Vec<u8>, SystemTime, u64)> = Vec::new();
            for rel in files::list(&root, files::is_input) {
                let Ok(meta) = std::fs::metadata(root.join(&rel)) else {
                    continue;
                };
                let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                match known.get(&rel) {
                    // The journal is written in place (its length does not move with its
                    // lines): read again each time.
                    Some((m, len, name))
                        if *m == modified
                            && *len == meta.len()
                            && rel != crate::session::journal::FILE =>
                    {
                        plan.push((rel, Some(name.clone()), modified, meta.len()))
                    }
                    _ => {
                        if let Ok(mut bytes) = std::fs::read(root.join(&rel)) {
                            if rel == crate::session::journal::FILE {
                                // Its lines, not the zeros kept beyond them.
                                let len = crate::session::journal::written(&bytes).len();
                                bytes.truncate(len);
                            }
                            fresh.push((rel, bytes, modified, meta.len()));
                        }
                    }
                }
            }
            (plan, fresh)
        })
        .await
        .map_err(|e| RemoteError::nats("listing the session", e))?;
        let mut manifest = Manifest::new();
        for (rel, name, _, _) in manifest_plan {
            if let Some(name) = name {
                manifest.insert(rel, name);
            }
        }
        for (rel, bytes, modified, len) in fresh {
            let name = self.objects.put(&bytes).await?;
            if let Ok(mut k) = self.inputs.lock() {
                k.insert(rel.clone(), (modified, len, name.clone()));
            }
            manifest.insert(rel, name);
        }
        let bytes =
            serde_json::to_vec(&manifest).map_err(|e| RemoteError::nats("the manifest", e))?;
        self.objects.put(&bytes).await
    }

    async fn envelope(&self, req: &TaskRequest, shard: Option<ShardJob>) -> Result<TaskEnvelope> {
        Ok(TaskEnvelope {
            session_id: self.session.id.clone(),
            task: req.task.clone(),
            instance: req.instance.clone(),
            role: req.role.clone(),
            role_body: req.role_body.clone(),
            timeout_s: req.timeout_s,
            config: self.team.config.clone(),
            sandbox: self.team.sandbox.clone(),
            agents: self.team.agents.clone(),
            repo: self.repo().await?,
            inputs: self.inputs().await?,
            shard,
        })
    }

    async fn publish(&self, envelope: &TaskEnvelope) -> Result<()> {
        let payload =
            serde_json::to_vec(envelope).map_err(|e| RemoteError::nats("the envelope", e))?;
        streams::publish_durable(
            &self.js,
            &names::task_subject(&envelope.role),
            &envelope.work_id(),
            payload,
            self.settings.wait,
        )
        .await
        .map(|_| ())
    }

    async fn start_task(&self, req: TaskRequest) -> Result<mpsc::UnboundedReceiver<Routed>> {
        let (tx, rx) = mpsc::unbounded_channel();
        let orphan = {
            let mut routes = self
                .routes
                .lock()
                .map_err(|_| RemoteError::nats("routes", "poisoned"))?;
            // The attempt a dead coordinator had handed out is the one before a resume's.
            let adoptable = routes.orphans.get(&req.task.id).is_some_and(|o| {
                o.attempt == req.task.attempts || o.attempt + 1 == req.task.attempts
            });
            let orphan = if adoptable {
                routes.orphans.remove(&req.task.id)
            } else {
                None
            };
            if let Some(o) = &orphan {
                routes.taken.insert((req.task.id.clone(), o.attempt));
            }
            if orphan.is_none() {
                routes.tasks.insert(
                    req.task.id.clone(),
                    Route {
                        attempt: req.task.attempts,
                        tx: tx.clone(),
                    },
                );
            }
            orphan
        };
        if let Some(o) = orphan {
            // Done by a worker while no coordinator was there to take it: taken now, not redone.
            self.note(Note::Ignored(format!(
                "[coordinator] {} attempt {} finished on {} while the coordinator was down: its outcome is taken, the task does not run again",
                req.task.id, o.attempt, o.worker.name
            )));
            let _ = tx.send(Routed::Finished {
                worker: o.worker,
                attempt: o.attempt,
                finished: o.finished,
                ack: Box::new(o.ack),
            });
            return Ok(rx);
        }
        let mut req = req;
        if req.role == self.team.config.gc.critic {
            // Its run number, claimed here where every executor's runs are.
            let results = self.session.root.join("results");
            let _ = std::fs::create_dir_all(&results);
            let (n, _) =
                crate::team::reserve_run(&results).map_err(|e| RemoteError::file(&results, e))?;
            req.task.meta.insert(
                crate::tasks::data::RESERVED_RUN.into(),
                serde_json::json!(n),
            );
        }
        // Through a server that is restarting: the same bound as every other wait for it.
        let deadline = Instant::now() + self.settings.wait;
        loop {
            let sent = async {
                let envelope = self.envelope(&req, None).await?;
                self.publish(&envelope).await
            }
            .await;
            match sent {
                Ok(()) => return Ok(rx),
                Err(e) if Instant::now() >= deadline => {
                    if let Ok(mut r) = self.routes.lock() {
                        r.tasks.remove(&req.task.id);
                    }
                    return Err(e);
                }
                Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
            }
        }
    }

    async fn bring_in(&self, returned: &ReturnedFiles) -> Result<Vec<String>> {
        let root = self.session.root.clone();
        let repo = self.repo.display().to_string();
        let here = root.display().to_string();
        let mut written = Vec::new();
        let cache = root.join(".remote/objects");
        for (rel, name) in &returned.written {
            if !files::is_returnable(rel) {
                self.note(Note::Ignored(format!(
                    "[coordinator] refused a returned file outside the session's deliverables: {rel:?}"
                )));
                continue;
            }
            let bytes = self.objects.get(name, &cache).await?;
            let bytes = files::relocate(
                bytes,
                &[
                    (returned.session_root.as_str(), here.as_str()),
                    (returned.repo_root.as_str(), repo.as_str()),
                ],
            );
            let root2 = root.clone();
            let rel2 = rel.clone();
            tokio::task::spawn_blocking(move || {
                let bytes = if files::is_append_only(&rel2) {
                    let now = std::fs::read(root2.join(&rel2)).unwrap_or_default();
                    files::merge_lines(&now, &bytes)
                } else {
                    bytes
                };
                files::write(&root2, &rel2, &bytes)
            })
            .await
            .map_err(|e| RemoteError::nats("writing returned files", e))??;
            written.push(rel.clone());
        }
        for rel in &returned.removed {
            if files::is_returnable(rel) {
                if let Ok(path) = files::resolve(&root, rel) {
                    let _ = std::fs::remove_file(path);
                }
            }
        }
        let _ = tokio::fs::remove_dir_all(&cache).await;
        Ok(written)
    }

    /// Outcomes already in the stream when the coordinator starts: kept as orphans for the
    /// tasks a resume runs again.
    async fn drain(&self, consumer: &Consumer<pull::Config>) {
        loop {
            let Ok(mut batch) = consumer
                .fetch()
                .max_messages(256)
                .expires(Duration::from_millis(300))
                .messages()
                .await
            else {
                return;
            };
            let mut seen = 0;
            while let Some(Ok(msg)) = batch.next().await {
                seen += 1;
                self.route(msg).await;
            }
            if seen == 0 {
                return;
            }
        }
    }

    async fn route(&self, msg: jetstream::Message) {
        let event: WorkerEvent = match serde_json::from_slice(&msg.payload) {
            Ok(e) => e,
            Err(e) => {
                self.note(Note::Ignored(format!(
                    "[coordinator] ignored an unreadable worker event: {e}"
                )));
                let _ = msg.ack().await;
                return;
            }
        };
        if event.session_id != self.session.id {
            let _ = msg.ack().await;
            return;
        }
        if shard_index(&event.work).is_some() {
            // A shard's claim, progress or run: for the executor that split the layer.
            let key = shard_key(&event.work);
            let tx = self
                .routes
                .lock()
                .ok()
                .and_then(|r| r.shards.get(&key).cloned());
            match tx {
                Some(tx) => {
                    let _ = tx.send((event, Acker(Some(msg))));
                }
                None => {
                    let _ = msg.ack().await;
                }
            }
            return;
        }
        match event.kind {
            EventKind::ShardDone(_) => {
                let _ = msg.ack().await;
            }
            EventKind::Finished(finished) => {
                let outcome_file = self.session.outcome_file(&event.task_id);
                let recorded = || {
                    crate::util::read_json::<serde_json::Value>(&outcome_file)
                        .ok()
                        .and_then(|r| r.get("attempt").and_then(|a| a.as_u64()))
                };
                let fate = match self.routes.lock() {
                    Ok(mut routes) => routes.finished(&event.task_id, event.attempt, recorded),
                    Err(_) => return,
                };
                match fate {
                    Fate::Deliver(route) => {
                        let _ = route.tx.send(Routed::Finished {
                            worker: event.worker,
                            attempt: event.attempt,
                            finished,
                            ack: Box::new(Acker(Some(msg))),
                        });
                    }
                    Fate::Keep => {
                        // Kept, not acknowledged: until a resumed attempt takes it (and
                        // records it), the stream still has it.
                        if let Ok(mut routes) = self.routes.lock() {
                            routes.orphans.insert(
                                event.task_id.clone(),
                                Orphan {
                                    attempt: event.attempt,
                                    worker: event.worker,
                                    finished,
                                    ack: Acker(Some(msg)),
                                },
                            );
                        }
                    }
                    fate @ (Fate::Done | Fate::Duplicate) => {
                        let why = match fate {
                            Fate::Duplicate => {
                                "a second outcome of an attempt whose outcome was already taken"
                            }
                            _ => "the task is done",
                        };
                        self.note(Note::Ignored(format!(
                            "[coordinator] ignored: {} reported {} attempt {}, which it no longer holds ({why})",
                            event.worker.name, event.task_id, event.attempt
                        )));
                        let _ = msg.ack().await;
                    }
                }
            }
            EventKind::Claimed | EventKind::Progress { .. } => {
                let tx = self.routes.lock().ok().and_then(|r| {
                    r.tasks
                        .get(&event.task_id)
                        .filter(|route| route.attempt == event.attempt)
                        .map(|route| route.tx.clone())
                });
                if let Some(tx) = tx {
                    let routed = match event.kind {
                        EventKind::Progress { phase, pct, detail } => Routed::Progress {
                            worker: event.worker,
                            phase,
                            pct,
                            detail,
                        },
                        _ => Routed::Claimed(event.worker),
                    };
                    let _ = tx.send(routed);
                }
                let _ = msg.ack().await;
            }
        }
    }

    async fn run_shards(
        &self,
        plan: ShardPlan,
        progress: crate::team::ProgressFn<'_>,
    ) -> Result<Vec<Vec<u8>>> {
        let count = plan.jobs.len();
        let req = TaskRequest {
            task: plan.task.clone(),
            instance: plan.task.owner.clone(),
            role: plan.task.owner.clone(),
            role_body: String::new(),
            timeout_s: plan.timeout.as_secs().max(1),
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut envelopes = Vec::new();
        for job in plan.jobs {
            envelopes.push(self.envelope(&req, Some(job)).await?);
        }
        let Some(first) = envelopes.first() else {
            return Ok(Vec::new());
        };
        let key = shard_key(&first.work_id());
        if let Ok(mut r) = self.routes.lock() {
            r.shards.insert(key.clone(), tx);
        }
        let result = async {
            for envelope in &envelopes {
                self.publish(envelope).await?;
            }
            let mut outputs: Vec<Option<Vec<u8>>> = (0..count).map(|_| None).collect();
            // Within the run's own budget: the executor's deadline is the shards' too.
            let wait = plan.timeout;
            let deadline = Instant::now() + wait;
            while outputs.iter().any(Option::is_none) {
                let left = deadline.saturating_duration_since(Instant::now());
                let Ok(Some((event, ack))) = tokio::time::timeout(left, rx.recv()).await else {
                    return Err(RemoteError::nats(
                        "sharded run",
                        format!(
                            "{} of {count} shard(s) did not finish within {}s",
                            outputs.iter().filter(|o| o.is_none()).count(),
                            wait.as_secs()
                        ),
                    ));
                };
                let done = match event.kind {
                    EventKind::ShardDone(done) => done,
                    EventKind::Finished(f) => {
                        ack.ack().await;
                        return Err(RemoteError::nats(
                            "sharded run",
                            format!("{} on {}", f.outcome.summary, event.worker.name),
                        ));
                    }
                    EventKind::Claimed => {
                        progress(
                            "shard_started",
                            None,
                            Some(format!(
                                "shard {} of {count} on {}",
                                shard_index(&event.work).map_or(0, |i| i + 1),
                                event.worker.name
                            )),
                        );
                        ack.ack().await;
                        continue;
                    }
                    _ => {
                        ack.ack().await;
                        continue;
                    }
                };
                let ShardDone {
                    index,
                    error,
                    output,
                    files,
                } = *done;
                if index >= count || outputs[index].is_some() {
                    ack.ack().await;
                    continue;
                }
                if let Some(error) = error {
                    ack.ack().await;
                    return Err(RemoteError::nats(
                        "sharded run",
                        format!("shard {} on {}: {error}", index + 1, event.worker.name),
                    ));
                }
                let here = self.session.root.display().to_string();
                let repo = self.repo.display().to_string();
                let bytes = self
                    .objects
                    .get(&output, &self.session.root.join(".remote/objects"))
                    .await?;
                let bytes = files::relocate(
                    bytes,
                    &[
                        (files.session_root.as_str(), here.as_str()),
                        (files.repo_root.as_str(), repo.as_str()),
                    ],
                );
                self.bring_in(&files).await?;
                outputs[index] = Some(bytes);
                ack.ack().await;
            }
            Ok(outputs.into_iter().flatten().collect())
        }
        .await;
        if let Ok(mut r) = self.routes.lock() {
            r.shards.remove(&key);
        }
        result
    }
}

/// The shard a work id names (`….shard1of2` is 1), None for a whole task.
fn shard_index(work: &str) -> Option<usize> {
    let (_, rest) = work.rsplit_once(".shard")?;
    rest.split_once("of")?.0.parse().ok()
}

/// The part of a shard's work id all shards of one run share.
fn shard_key(work: &str) -> String {
    work.rsplit_once(".shard")
        .map(|(k, _)| k.to_string())
        .unwrap_or_else(|| work.to_string())
}

async fn route_events(inner: Arc<Inner>, consumer: Consumer<pull::Config>) {
    loop {
        match consumer.messages().await {
            Ok(mut messages) => {
                while let Some(next) = messages.next().await {
                    match next {
                        Ok(msg) => inner.route(msg).await,
                        Err(e) => {
                            tracing::debug!("event stream: {e}");
                            break;
                        }
                    }
                }
            }
            Err(e) => tracing::debug!("event stream: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn watch_workers(inner: Arc<Inner>) {
    loop {
        tokio::time::sleep(registry::HEARTBEAT).await;
        inner.refresh_served().await;
    }
}

/// Says the server is lost once it has been unreachable for longer than the settings allow.
async fn watch_connection(inner: Arc<Inner>) {
    let mut down_since: Option<Instant> = None;
    let mut said = false;
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let connected = inner.client.connection_state() == async_nats::connection::State::Connected;
        if connected {
            down_since = None;
            said = false;
            continue;
        }
        let since = *down_since.get_or_insert_with(Instant::now);
        if !said && since.elapsed() >= inner.settings.wait {
            said = true;
            inner.note(Note::Lost(format!(
                "the NATS server at {} has been unreachable for {}s",
                inner.settings.url,
                inner.settings.wait.as_secs()
            )));
        }
    }
}
