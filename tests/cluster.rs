//! Remote workers through NATS JetStream (`--nats`), end to end with a real `nats-server`.
//!
//! What is tested:
//! - a standard run with the generator on one worker and the executor on another ends as a local
//!   run does (tasks, pass rates, coverage, generated tests), and says where each task ran
//!   (`meta.host`, the `started` progress, `status`, `workers`);
//! - a worker killed with -9 mid-task: its task is redelivered to the other worker after the
//!   ack wait, and completes once;
//! - a coordinator killed with -9: `resume --nats` finishes the session without running a
//!   completed task again;
//! - `--shards 2`: a layer run split across two executors merges to the unsharded numbers;
//! - the NATS server killed and restarted mid-run: the session still completes (directly, or
//!   paused with exit 3 and then `resume --nats`);
//! - credentials (user/password in the URL or as options) never reach the session folder or the
//!   output; a missing `--nats-creds` file is an error naming it.
//!
//! Every test starts its own server (fresh port, its own JetStream store), its own workers (each
//! with its own `--dir` "host" folder) and its own project. The tests of this file run one at a
//! time (a lock): each starts several processes, and the machine is small. When a test fails, the
//! coordinator's output, every worker's log and the server's log are printed.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::sync::{mpsc, Arc, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

// ---------------------------------------------------------------------------------------------
// Harness: the server, the workers, commands with a time limit, the log.
// ---------------------------------------------------------------------------------------------

/// The most a whole run (coordinator) may take.
const RUN_LIMIT: Duration = Duration::from_secs(200);
/// The most a `resume` may take.
const RESUME_LIMIT: Duration = Duration::from_secs(150);
/// The most a short command (`workers`, `status`, a refused `worker`) may take.
const SHORT_LIMIT: Duration = Duration::from_secs(30);
/// How long the started workers have to appear in `workers --json`.
const WORKERS_LIMIT: Duration = Duration::from_secs(30);

const RUN: [&str; 7] = [
    "run",
    "--max-mutants",
    QUICK_MUTANTS,
    "test calc",
    "--pipeline",
    "standard",
    "--yes",
];

/// One cluster test at a time (a poisoned lock is taken anyway: a failed test must not fail the
/// others).
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// `nats-server` on PATH (or where Debian puts it, /usr/sbin, often not on a user's PATH).
fn nats_server_bin() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/bin")])
        .map(|d| d.join("nats-server"))
        .find(|p| p.is_file())
}

/// A port nobody listens on right now.
fn free_port() -> u16 {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    l.local_addr().unwrap().port()
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    let from = all.len().saturating_sub(lines);
    all[from..].join("\n")
}

/// A `nats-server -js` on 127.0.0.1, killed (and waited) when dropped.
struct NatsServer {
    bin: PathBuf,
    port: u16,
    store: PathBuf,
    log: PathBuf,
    extra: Vec<String>,
    child: Option<Child>,
}

impl NatsServer {
    fn start(bin: PathBuf, dir: &Path, extra: &[&str]) -> Self {
        let mut server = NatsServer {
            bin,
            port: 0,
            store: dir.join("js"),
            log: dir.join("nats-server.log"),
            extra: extra.iter().map(|s| s.to_string()).collect(),
            child: None,
        };
        // Another process may take the free port before the server binds it: try a few.
        for _ in 0..5 {
            server.port = free_port();
            server.spawn();
            if server.wait_listening(Duration::from_secs(10)) {
                return server;
            }
            server.stop();
        }
        panic!(
            "nats-server did not start; its log:\n{}",
            tail(
                &std::fs::read_to_string(&server.log).unwrap_or_default(),
                40
            )
        );
    }

    fn spawn(&mut self) {
        assert!(self.child.is_none(), "the server is already running");
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let port = self.port.to_string();
        let child = Command::new(&self.bin)
            .args(["-js", "-a", "127.0.0.1", "-p", &port, "-sd"])
            .arg(&self.store)
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("nats-server starts");
        self.child = Some(child);
    }

    /// Until a TCP connect to the port works; false when the server exits or time is up.
    fn wait_listening(&mut self, limit: Duration) -> bool {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            match self.child.as_mut().map(|c| c.try_wait()) {
                Some(Ok(None)) => {}
                _ => return false,
            }
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// kill -9 and wait.
    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// The same port and the same JetStream store.
    fn start_again(&mut self) {
        self.spawn();
        assert!(
            self.wait_listening(Duration::from_secs(10)),
            "nats-server did not start again on port {}; its log:\n{}",
            self.port,
            tail(&std::fs::read_to_string(&self.log).unwrap_or_default(), 40)
        );
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One `team-testing worker`, its stdout and stderr in a log file.
struct Worker {
    name: String,
    log: PathBuf,
    child: Option<Child>,
}

/// What a failed test prints: command outputs and events, in order.
type Notes = Rc<RefCell<Vec<String>>>;

/// A server, its workers and a temp folder for both. Dropping it kills every worker (-9, waited)
/// and then the server; while a test panics it first prints everything it saw.
struct Cluster {
    notes: Notes,
    workers: Vec<Worker>,
    server: NatsServer,
    started: Instant,
    tmp: tempfile::TempDir,
}

impl Cluster {
    /// None (and a note) when nats-server is not installed.
    fn start(server_args: &[&str]) -> Option<Cluster> {
        let Some(bin) = nats_server_bin() else {
            eprintln!("skipped: nats-server is not installed (apt-get install nats-server)");
            return None;
        };
        let tmp = tempfile::tempdir().unwrap();
        let server = NatsServer::start(bin, tmp.path(), server_args);
        Some(Cluster {
            notes: Rc::default(),
            workers: Vec::new(),
            server,
            started: Instant::now(),
            tmp,
        })
    }

    fn url(&self) -> String {
        self.server.url()
    }

    fn event(&self, what: &str) {
        let t = self.started.elapsed().as_secs_f64();
        self.notes.borrow_mut().push(format!("[{t:7.2}s] {what}"));
    }

    fn note(&self, label: &str, out: &Output) {
        self.event(&format!(
            "{label}: exit {}\n--- stdout\n{}\n--- stderr\n{}",
            out.code, out.stdout, out.stderr
        ));
    }

    /// `team-testing worker --nats URL --roles ROLES --slots 1 --dir <own folder> --name NAME`,
    /// then `extra`.
    fn worker(&mut self, name: &str, roles: &str, extra: &[&str]) {
        let host = self.tmp.path().join("hosts").join(name);
        std::fs::create_dir_all(&host).unwrap();
        let log_path = self.tmp.path().join(format!("worker-{name}.log"));
        let log = File::create(&log_path).unwrap();
        let child = Command::new(BIN)
            .args([
                "worker",
                "--nats",
                &self.url(),
                "--roles",
                roles,
                "--slots",
                "1",
            ])
            .arg("--dir")
            .arg(&host)
            .args(["--name", name])
            .args(extra)
            .current_dir(self.tmp.path())
            // Nothing of a worker's may land in a real sessions folder.
            .env(
                "TEAM_TESTING_SESSIONS",
                self.tmp.path().join("stray-sessions"),
            )
            .env_remove("TEAM_TESTING_LOG")
            // A group of its own: killing the "host" kills what the worker started too.
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("worker starts");
        self.event(&format!(
            "worker {name} ({roles}) started, pid {}",
            child.id()
        ));
        self.workers.push(Worker {
            name: name.to_string(),
            log: log_path,
            child: Some(child),
        });
    }

    /// kill -9 one worker and wait for it.
    fn kill_worker(&mut self, name: &str) {
        let w = self
            .workers
            .iter_mut()
            .find(|w| w.name == name)
            .unwrap_or_else(|| panic!("no worker {name}"));
        if let Some(mut c) = w.child.take() {
            kill_group(&c);
            let _ = c.wait();
        }
        self.event(&format!("worker {name} killed (-9)"));
    }

    fn worker_log(&self, name: &str) -> String {
        let w = self.workers.iter().find(|w| w.name == name).unwrap();
        std::fs::read_to_string(&w.log).unwrap_or_default()
    }

    /// The team-testing binary, outside any project (its output noted).
    fn tt(&self, args: &[&str], limit: Duration) -> Output {
        let out = self.tt_quiet(args, limit);
        self.note(&format!("team-testing {}", args.join(" ")), &out);
        out
    }

    fn tt_quiet(&self, args: &[&str], limit: Duration) -> Output {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(self.tmp.path())
            .env(
                "TEAM_TESTING_SESSIONS",
                self.tmp.path().join("stray-sessions"),
            )
            .env_remove("TEAM_TESTING_LOG");
        finish(Cmd { c }.spawn(), limit)
    }

    /// Runs a command to its end (killed after `limit`), noting its output.
    fn run(&self, label: &str, cmd: Cmd, limit: Duration) -> Output {
        let out = finish(cmd.spawn(), limit);
        self.note(label, &out);
        out
    }

    /// Starts a command in the background; its output is noted when it ends.
    fn background(&self, label: &str, cmd: Cmd, limit: Duration) -> Background {
        let child = cmd.spawn();
        let pid = child.id();
        self.event(&format!("{label} started, pid {pid}"));
        Background {
            label: label.to_string(),
            pid,
            handle: Some(std::thread::spawn(move || finish(child, limit))),
            notes: self.notes.clone(),
            started: self.started,
        }
    }

    /// Polls `workers --nats URL --json` until every name in `names` is listed; the list.
    fn wait_for_workers(&mut self, url: &str, names: &[&str]) -> Vec<Value> {
        let args = ["workers", "--nats", url, "--json"];
        let deadline = Instant::now() + WORKERS_LIMIT;
        loop {
            for w in &mut self.workers {
                if let Some(Ok(Some(status))) = w.child.as_mut().map(|c| c.try_wait()) {
                    let name = w.name.clone();
                    self.event(&format!("worker {name} exited by itself: {status}"));
                    panic!("worker {name} exited by itself ({status}) before it was listed");
                }
            }
            let out = self.tt_quiet(&args, SHORT_LIMIT);
            if out.code == 0 {
                if let Ok(Value::Array(list)) = serde_json::from_str::<Value>(&out.stdout) {
                    let listed: BTreeSet<&str> =
                        list.iter().filter_map(|w| w["name"].as_str()).collect();
                    if names.iter().all(|n| listed.contains(n)) {
                        self.note("team-testing workers --json (all listed)", &out);
                        return list;
                    }
                }
            }
            if Instant::now() >= deadline {
                self.note("team-testing workers --json (the last try)", &out);
                panic!(
                    "workers {names:?} were not all listed by `workers --json` within {WORKERS_LIMIT:?}"
                );
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    fn dump(&self) {
        eprintln!("===== cluster test failed; what it saw, in order =====");
        for n in self.notes.borrow().iter() {
            eprintln!("{n}");
        }
        for w in &self.workers {
            let text = std::fs::read_to_string(&w.log).unwrap_or_default();
            eprintln!("===== worker {} log (last 300 lines) =====", w.name);
            eprintln!("{}", tail(&text, 300));
        }
        let text = std::fs::read_to_string(&self.server.log).unwrap_or_default();
        eprintln!("===== nats-server log (last 60 lines) =====");
        eprintln!("{}", tail(&text, 60));
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.dump();
        }
        for w in &self.workers {
            if let Some(c) = &w.child {
                kill_group(c);
            }
        }
        for w in &mut self.workers {
            if let Some(mut c) = w.child.take() {
                let _ = c.wait();
            }
        }
        // Then the server (its own Drop), then the temp folder.
    }
}

/// kill -9 a worker and its process group (it leads one), before it is waited for.
fn kill_group(c: &Child) {
    // SAFETY: kill(2) on the process group of our own child, not reaped yet.
    unsafe {
        libc::kill(-(c.id() as libc::pid_t), libc::SIGKILL);
    }
}

/// A command running in a thread of its own (its pipes drained as it goes). Dropped before it
/// ends: killed with -9.
struct Background {
    label: String,
    pid: u32,
    handle: Option<JoinHandle<Output>>,
    notes: Notes,
    started: Instant,
}

impl Background {
    fn is_running(&self) -> bool {
        self.handle.as_ref().is_some_and(|h| !h.is_finished())
    }

    fn kill9(&self) {
        if self.is_running() {
            // SAFETY: kill(2) on our own child, which has not been reaped yet.
            unsafe {
                libc::kill(self.pid as libc::pid_t, libc::SIGKILL);
            }
            let t = self.started.elapsed().as_secs_f64();
            let label = &self.label;
            self.notes
                .borrow_mut()
                .push(format!("[{t:7.2}s] {label} killed (-9)"));
        }
    }

    /// Waits for the end; the output (noted too).
    fn finish(&mut self) -> Output {
        let out = self
            .handle
            .take()
            .expect("finished once")
            .join()
            .expect("the waiting thread");
        let t = self.started.elapsed().as_secs_f64();
        self.notes.borrow_mut().push(format!(
            "[{t:7.2}s] {}: exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.label, out.code, out.stdout, out.stderr
        ));
        out
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if self.handle.is_some() {
            self.kill9();
            let _ = self.finish();
        }
    }
}

/// A pipe read to its end in a thread of its own; what it gave so far is kept.
struct Drain {
    text: Arc<Mutex<Vec<u8>>>,
    closed: mpsc::Receiver<()>,
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> Drain {
    let text = Arc::new(Mutex::new(Vec::new()));
    let (tx, closed) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        let text = text.clone();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            while let Ok(n @ 1..) = pipe.read(&mut chunk) {
                text.lock().unwrap().extend_from_slice(&chunk[..n]);
            }
            let _ = tx.send(());
        });
    }
    Drain { text, closed }
}

impl Drain {
    /// The text, once the pipe is closed or `until` has passed.
    fn text(self, until: Instant) -> String {
        let _ = self
            .closed
            .recv_timeout(until.saturating_duration_since(Instant::now()));
        let bytes = self.text.lock().unwrap();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Waits for a child spawned with piped output (killing it after `limit`: exit code -2). A pipe
/// still held open by an orphaned grandchild does not block: what came is taken after 5 s.
fn finish(mut child: Child, limit: Duration) -> Output {
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let deadline = Instant::now() + limit;
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            timed_out = true;
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let grace = Instant::now() + Duration::from_secs(5);
    let stdout = out.text(grace);
    let mut stderr = err.text(grace);
    if timed_out {
        stderr.push_str(&format!("\n[test harness: killed after {limit:?}]"));
    }
    Output {
        code: if timed_out {
            -2
        } else {
            status.code().unwrap_or(-1)
        },
        stdout,
        stderr,
    }
}

/// The one session of a project (once it has a message log), or a panic when the run ends or
/// 60 s pass first.
fn wait_session(p: &Project, run: &mut Background) -> String {
    let mut id = None;
    let found = wait_for(Duration::from_secs(60), || {
        id = std::fs::read_dir(&p.sessions).ok().and_then(|dir| {
            dir.flatten()
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .filter(|e| e.path().join(".msg/messages.jsonl").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .max()
        });
        id.is_some() || !run.is_running()
    });
    match id {
        Some(id) if found => id,
        _ => {
            let out = run.finish();
            panic!("no session appeared (exit {})", out.code);
        }
    }
}

/// The message log as it is now: a line being written (or torn by a kill) is left out.
fn log_now(p: &Project, id: &str) -> Vec<Value> {
    std::fs::read_to_string(p.session_dir(id).join(".msg/messages.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Polls the log until `cond` holds on it; a panic when the run ends or `limit` passes first.
fn wait_log(
    p: &Project,
    id: &str,
    run: &mut Background,
    limit: Duration,
    what: &str,
    mut cond: impl FnMut(&[Value]) -> bool,
) -> Vec<Value> {
    let mut msgs = Vec::new();
    let ok = wait_for(limit, || {
        msgs = log_now(p, id);
        cond(&msgs) || !run.is_running()
    });
    if ok && cond(&msgs) {
        return msgs;
    }
    let out = run.finish();
    panic!(
        "{what}: not seen in the log before the run ended or {limit:?} passed (exit {})",
        out.code
    );
}

/// One worker (host-a, both roles) and a `--nats` run of `p` in the background with `extra`
/// arguments, followed until its log shows `what` (`until`); the run and its session id.
fn run_on_one_worker(
    cl: &mut Cluster,
    p: &Project,
    extra: &[&str],
    what: &str,
    until: impl FnMut(&[Value]) -> bool,
) -> (Background, String) {
    let url = cl.url();
    cl.worker("host-a", "generator,executor", &[]);
    cl.wait_for_workers(&url, &["host-a"]);
    let mut args = run_args(&url);
    args.extend(extra);
    let mut run = cl.background("remote run", p.cmd(&args), RUN_LIMIT);
    let id = wait_session(p, &mut run);
    wait_log(p, &id, &mut run, Duration::from_secs(150), what, until);
    (run, id)
}

/// `(position in the log, detail)` of every `started` progress of a task.
fn starts(msgs: &[Value], task: &str) -> Vec<(usize, String)> {
    msgs.iter()
        .enumerate()
        .filter(|(_, m)| {
            m["type"] == "progress"
                && m["data"]["phase"] == "started"
                && m["data"]["task_id"] == task
        })
        .map(|(i, m)| (i, m["data"]["detail"].as_str().unwrap_or("").to_string()))
        .collect()
}

fn completes(msgs: &[Value], task: &str) -> usize {
    msgs.iter()
        .filter(|m| m["type"] == "task_complete" && m["data"]["task_id"] == task)
        .count()
}

fn task_ids(p: &Project, id: &str) -> Vec<String> {
    p.tasks(id)
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

/// Every task completed, each with exactly one `task_complete` in the log (which parses whole).
fn assert_completed_once(p: &Project, id: &str) {
    let tasks = p.tasks(id);
    assert!(!tasks.is_empty());
    for t in &tasks {
        assert_eq!(t["status"], "completed", "{t}");
    }
    let msgs = p.messages(id);
    for task in task_ids(p, id) {
        assert_eq!(completes(&msgs, &task), 1, "task_complete lines for {task}");
    }
}

/// A number compared to 1e-6 (the same run merged or not must give the same figures).
fn fixed(v: &Value) -> Option<i64> {
    v.as_f64().map(|f| (f * 1e6).round() as i64)
}

/// What a layer run record says.
#[derive(Debug, PartialEq, Eq)]
struct RunTotals {
    total: Option<i64>,
    passed: Option<i64>,
    failed: Option<i64>,
    errors: Option<i64>,
    skipped: Option<i64>,
    pass_rate: Option<i64>,
    coverage: Option<i64>,
    /// (test id, status) of every test.
    tests: BTreeSet<(String, String)>,
}

/// What must be the same at the end of a run, wherever its tasks ran.
#[derive(Debug)]
struct Finished {
    /// (id, status) in the order of tasks.json.
    tasks: Vec<(String, String)>,
    /// Per TESTRUN task: outcome pass rate and coverage.
    measured: BTreeMap<String, (Option<i64>, Option<i64>)>,
    /// Per TESTRUN task: its run record (the one its outcome names, results/run-NNN.json).
    runs: BTreeMap<String, RunTotals>,
    /// `L1-unit/test_x.py` -> the `def test_` names in it.
    tests: BTreeMap<String, BTreeSet<String>>,
}

fn run_record(dir: &Path, task: &Value) -> Value {
    let id = task["id"].as_str().unwrap();
    if let Some(rel) = task["outcome"]["data"]["run"].as_str() {
        return read_json(&dir.join(rel));
    }
    // No pointer in the outcome: the last results/run-NNN.json of this task.
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("run-") && n.ends_with(".json")
        })
        .collect();
    names.sort();
    names
        .iter()
        .rev()
        .map(|p| read_json(p))
        .find(|r| r["task_id"] == id)
        .unwrap_or_else(|| panic!("no run record for {id} in {}", dir.display()))
}

fn run_totals(record: &Value) -> RunTotals {
    RunTotals {
        total: record["total"].as_i64(),
        passed: record["passed"].as_i64(),
        failed: record["failed"].as_i64(),
        errors: record["errors"].as_i64(),
        skipped: record["skipped"].as_i64(),
        pass_rate: fixed(&record["pass_rate"]),
        coverage: fixed(&record["coverage"]),
        tests: record["tests"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                (
                    t["id"].as_str().unwrap_or("").to_string(),
                    t["status"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect(),
    }
}

fn test_names(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("async ").unwrap_or(l);
            l.strip_prefix("def test_")
                .map(|rest| format!("test_{}", rest.split('(').next().unwrap()))
        })
        .collect()
}

fn finished(p: &Project, id: &str) -> Finished {
    let dir = p.session_dir(id);
    let tasks = p.tasks(id);
    let mut measured = BTreeMap::new();
    let mut runs = BTreeMap::new();
    for t in tasks.iter().filter(|t| t["owner"] == "executor") {
        let tid = t["id"].as_str().unwrap().to_string();
        measured.insert(
            tid.clone(),
            (
                fixed(&t["outcome"]["pass_rate"]),
                fixed(&t["outcome"]["coverage"]),
            ),
        );
        runs.insert(tid, run_totals(&run_record(&dir, t)));
    }
    let mut tests = BTreeMap::new();
    for layer in ["L1-unit", "L2-integration"] {
        for e in std::fs::read_dir(dir.join("tests").join(layer))
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".py") {
                let text = std::fs::read_to_string(e.path()).unwrap();
                tests.insert(format!("{layer}/{name}"), test_names(&text));
            }
        }
    }
    Finished {
        tasks: tasks
            .iter()
            .map(|t| {
                (
                    t["id"].as_str().unwrap().to_string(),
                    t["status"].as_str().unwrap().to_string(),
                )
            })
            .collect(),
        measured,
        runs,
        tests,
    }
}

/// The local standard run everything remote is compared with (run once, shared by the tests).
fn local_reference() -> &'static Finished {
    static REFERENCE: OnceLock<Finished> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        let p = Project::fixture("python-calc");
        let out = finish(p.cmd(&RUN).spawn(), RUN_LIMIT);
        out.assert_code(0);
        let f = finished(&p, &out.session_id());
        assert!(
            f.tasks.iter().all(|(_, s)| s == "completed"),
            "local run: {:?}",
            f.tasks
        );
        assert!(
            !f.runs.is_empty() && !f.tests.is_empty(),
            "local run: {f:?}"
        );
        f
    })
}

/// Same tasks and statuses, the same measures per executor task, the same run records.
fn assert_same_results(local: &Finished, remote: &Finished) {
    assert_eq!(local.tasks, remote.tasks, "task ids and statuses");
    assert_eq!(
        local.measured, remote.measured,
        "per executor task: (pass rate, coverage) x 1e6"
    );
    for (task, l) in &local.runs {
        assert_eq!(Some(l), remote.runs.get(task), "the run record of {task}");
    }
}

fn run_args(url: &str) -> Vec<&str> {
    let mut a = RUN.to_vec();
    a.extend(["--nats", url]);
    a
}

// ---------------------------------------------------------------------------------------------
// The tests.
// ---------------------------------------------------------------------------------------------

#[test]
fn remote_standard_run_matches_local() {
    let _serial = serial();
    let Some(mut cl) = Cluster::start(&[]) else {
        return;
    };
    let local = local_reference();

    let url = cl.url();
    cl.worker("host-a", "generator", &[]);
    cl.worker("host-b", "executor", &[]);
    let listed = cl.wait_for_workers(&url, &["host-a", "host-b"]);
    let mut ids = BTreeMap::new();
    for w in &listed {
        let name = w["name"].as_str().unwrap();
        let roles: Vec<&str> = w["roles"]
            .as_array()
            .unwrap_or_else(|| panic!("roles of {w}"))
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        let want = match name {
            "host-a" => vec!["generator"],
            "host-b" => vec!["executor"],
            _ => continue,
        };
        assert_eq!(roles, want, "{w}");
        assert_eq!(w["slots"], 1, "{w}");
        assert!(w["tasks"].is_array(), "{w}");
        ids.insert(name.to_string(), w["id"].clone());
    }

    let p = Project::fixture("python-calc");
    let out = cl.run("remote run", p.cmd(&run_args(&url)), RUN_LIMIT);
    out.assert_code(0);
    let id = out.session_id();
    let remote = finished(&p, &id);
    assert_same_results(local, &remote);
    assert_eq!(
        local.tests, remote.tests,
        "generated test files and their tests"
    );

    // Where each task ran.
    let msgs = p.messages(&id);
    for t in p.tasks(&id) {
        let tid = t["id"].as_str().unwrap();
        let host = if tid.starts_with("TESTGEN-") {
            "host-a"
        } else if tid.starts_with("TESTRUN-") {
            "host-b"
        } else {
            assert!(t["meta"]["host"].is_null(), "{tid} ran locally: {t}");
            continue;
        };
        assert_eq!(t["meta"]["host"], host, "{tid}: {t}");
        assert!(
            t["meta"]["remote_worker"]
                .as_str()
                .is_some_and(|w| !w.is_empty()),
            "{tid}: {t}"
        );
        assert_eq!(
            t["meta"]["remote_worker"], ids[host],
            "{tid}: the id `workers` lists"
        );
        let s = starts(&msgs, tid);
        assert!(!s.is_empty(), "no started progress for {tid}");
        for (_, detail) in &s {
            assert!(detail.contains(host), "{tid} started: {detail:?}");
        }
    }

    let status = cl.run("status", p.cmd(&["status", &id]), SHORT_LIMIT);
    status.assert_code(0);
    for host in ["host-a", "host-b"] {
        assert!(status.stdout.contains(host), "status names {host}");
    }

    let table = cl.tt(&["workers", "--nats", &url], SHORT_LIMIT);
    table.assert_code(0);
    let line = |name: &str| {
        table
            .stdout
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("`workers` lists no {name}:\n{}", table.stdout))
            .to_string()
    };
    assert!(line("host-a").contains("generator"), "{}", table.stdout);
    let b = line("host-b");
    assert!(
        b.contains("executor") && !b.contains("generator"),
        "{}",
        table.stdout
    );
}

#[test]
fn killed_worker_task_is_redelivered() {
    let _serial = serial();
    let Some(mut cl) = Cluster::start(&[]) else {
        return;
    };
    let url = cl.url();
    for name in ["host-a", "host-b"] {
        cl.worker(name, "generator,executor", &["--ack-wait", "5"]);
    }
    cl.wait_for_workers(&url, &["host-a", "host-b"]);

    let p = Project::fixture("python-calc");
    let mut run = cl.background("remote run", p.cmd(&run_args(&url)), RUN_LIMIT);
    let id = wait_session(&p, &mut run);
    let mut victim = String::new();
    wait_log(
        &p,
        &id,
        &mut run,
        Duration::from_secs(120),
        "TESTGEN-001 started on a host",
        |m| {
            starts(m, "TESTGEN-001").iter().any(|(_, d)| {
                victim = ["host-a", "host-b"]
                    .into_iter()
                    .find(|h| d.contains(h))
                    .unwrap_or("")
                    .to_string();
                !victim.is_empty()
            })
        },
    );
    cl.kill_worker(&victim);
    let other = if victim == "host-a" {
        "host-b"
    } else {
        "host-a"
    };
    let at_kill = log_now(&p, &id);
    assert_eq!(
        completes(&at_kill, "TESTGEN-001"),
        0,
        "TESTGEN-001 was done before {victim} was killed: nothing to redeliver"
    );

    let out = run.finish();
    out.assert_code(0);
    assert_completed_once(&p, &id);
    let msgs = p.messages(&id);
    let s = starts(&msgs, "TESTGEN-001");
    let first_on_victim = s
        .iter()
        .find(|(_, d)| d.contains(victim.as_str()))
        .map(|(i, _)| *i)
        .unwrap();
    assert!(
        s.iter()
            .any(|(i, d)| *i > first_on_victim && d.contains(other)),
        "TESTGEN-001 was not started again on {other} after {victim} died: {s:?}"
    );
    let gen = p
        .tasks(&id)
        .into_iter()
        .find(|t| t["id"] == "TESTGEN-001")
        .unwrap();
    assert_eq!(gen["meta"]["host"], other, "{gen}");
}

#[test]
fn killed_coordinator_resumes_without_rerunning() {
    let _serial = serial();
    let Some(mut cl) = Cluster::start(&[]) else {
        return;
    };
    let url = cl.url();
    let p = Project::fixture("python-calc");
    let (mut run, id) = run_on_one_worker(&mut cl, &p, &[], "TESTGEN-001 complete", |m| {
        completes(m, "TESTGEN-001") > 0
    });
    run.kill9();
    let out = run.finish();
    assert_ne!(out.code, 0, "the run ended before it was killed");
    let at_kill = log_now(&p, &id);
    let done_before: BTreeSet<String> = at_kill
        .iter()
        .filter(|m| m["type"] == "task_complete")
        .filter_map(|m| m["data"]["task_id"].as_str().map(str::to_string))
        .collect();
    assert!(done_before.contains("TESTGEN-001"), "{done_before:?}");
    assert!(
        !done_before.contains("TESTANA-001"),
        "killed too late: {done_before:?}"
    );

    let out = cl.run(
        "resume",
        p.cmd(&["resume", &id, "-y", "--nats", &url]),
        RESUME_LIMIT,
    );
    out.assert_code(0);
    assert_completed_once(&p, &id);
    let msgs = p.messages(&id);
    for task in &done_before {
        let s = starts(&msgs, task);
        assert_eq!(
            s.len(),
            1,
            "{task}, completed before the kill, started again: {s:?}"
        );
    }
}

#[test]
fn sharded_layer_matches_unsharded() {
    let _serial = serial();
    let Some(mut cl) = Cluster::start(&[]) else {
        return;
    };
    let local = local_reference();

    let url = cl.url();
    cl.worker("host-a", "generator", &[]);
    cl.worker("host-b", "executor", &[]);
    cl.worker("host-c", "executor", &[]);
    cl.wait_for_workers(&url, &["host-a", "host-b", "host-c"]);

    let p = Project::fixture("python-calc");
    let mut args = run_args(&url);
    args.extend(["--shards", "2"]);
    let out = cl.run("sharded run", p.cmd(&args), RUN_LIMIT);
    out.assert_code(0);
    let id = out.session_id();
    // Per executor task: the outcome's pass rate and coverage, and its run record's counts,
    // pass rate, coverage and tests, merged from the shards, as the unsharded run has them.
    let sharded = finished(&p, &id);
    assert_same_results(local, &sharded);
    // The generator's search split by module gives the same tests: each module's search is
    // seeded from the seed and the module, not from what ran before it.
    assert_eq!(
        local.tests, sharded.tests,
        "generated test files and their tests"
    );

    let msgs = p.messages(&id);
    let details: Vec<String> = msgs
        .iter()
        .filter(|m| m["type"] == "progress" && m["data"]["phase"] == "shard_started")
        .map(|m| m["data"]["detail"].as_str().unwrap_or("").to_string())
        .collect();
    for host in ["host-a", "host-b", "host-c"] {
        assert!(
            details.iter().any(|d| d.contains(host)),
            "no shard started on {host}: {details:?}"
        );
    }
}

#[test]
fn nats_server_stop_mid_run_is_survived() {
    let _serial = serial();
    let Some(mut cl) = Cluster::start(&[]) else {
        return;
    };
    let url = cl.url();
    let p = Project::fixture("python-calc");
    let (mut run, id) = run_on_one_worker(&mut cl, &p, &[], "TESTGEN-001 started", |m| {
        !starts(m, "TESTGEN-001").is_empty()
    });
    cl.server.stop();
    cl.event("nats-server stopped (-9)");
    std::thread::sleep(Duration::from_secs(3));
    cl.server.start_again();
    cl.event("nats-server started again");

    let out = run.finish();
    match out.code {
        0 => {}
        3 => {
            assert!(
                format!("{}{}", out.stdout, out.stderr).contains("NATS"),
                "a pause for a lost server names NATS"
            );
            cl.run(
                "resume",
                p.cmd(&["resume", &id, "-y", "--nats", &url]),
                RESUME_LIMIT,
            )
            .assert_code(0);
        }
        code => panic!("the run ended with exit {code}, not 0 or 3 (paused)"),
    }
    let dir = p.session_dir(&id);
    read_json(&dir.join("tasks.json"));
    let state = read_json(&dir.join("session.json"));
    assert_eq!(state["status"], "archived", "{state}");
    assert_completed_once(&p, &id);
}

#[test]
fn a_server_gone_too_long_pauses_the_session_and_resume_continues_it() {
    let _serial = serial();
    let Some(mut cl) = Cluster::start(&[]) else {
        return;
    };
    let url = cl.url();
    let p = Project::fixture("python-calc");
    let extra = ["--nats-wait", "4"];
    let (mut run, id) = run_on_one_worker(&mut cl, &p, &extra, "TESTGEN-001 started", |m| {
        !starts(m, "TESTGEN-001").is_empty()
    });
    cl.server.stop();
    cl.event("nats-server stopped (-9), not restarted");
    let out = run.finish();
    assert_eq!(out.code, 3, "paused, not failed");
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(said.contains("NATS server"), "{said}");
    assert!(said.contains("resume"), "the way on is printed: {said}");
    let dir = p.session_dir(&id);
    assert_eq!(read_json(&dir.join("session.json"))["status"], "paused");
    read_json(&dir.join("tasks.json"));

    cl.server.start_again();
    cl.event("nats-server started again");
    cl.run(
        "resume",
        p.cmd(&["resume", &id, "-y", "--nats", &url]),
        RESUME_LIMIT,
    )
    .assert_code(0);
    assert_completed_once(&p, &id);
}

#[test]
fn parallel_layers_on_two_executors_keep_their_own_runs() {
    let _serial = serial();
    let Some(mut cl) = Cluster::start(&[]) else {
        return;
    };
    let url = cl.url();
    cl.worker("host-a", "generator", &[]);
    cl.worker("host-b", "executor", &[]);
    cl.worker("host-c", "executor", &[]);
    cl.wait_for_workers(&url, &["host-a", "host-b", "host-c"]);

    // The comprehensive pipeline runs TESTRUN-001 and TESTRUN-002 at once: on two hosts, each
    // must still get its own run number (each host sees only its own copy of the session).
    let p = Project::fixture("python-calc");
    let args = [
        "run",
        "--max-mutants",
        QUICK_MUTANTS,
        "test calc",
        "--pipeline",
        "comprehensive",
        "--yes",
        "--nats",
        &url,
    ];
    let out = cl.run("comprehensive run", p.cmd(&args), RUN_LIMIT);
    out.assert_code(0);
    let id = out.session_id();
    let dir = p.session_dir(&id);
    let msgs = p.messages(&id);
    let mut runs = BTreeSet::new();
    for t in p.tasks(&id) {
        let tid = t["id"].as_str().unwrap();
        // L3 has nothing to run on a package with no entry point.
        if t["status"] == "not_applicable" {
            continue;
        }
        assert_eq!(t["status"], "completed", "{t}");
        assert_eq!(completes(&msgs, tid), 1, "task_complete lines for {tid}");
        if !tid.starts_with("TESTRUN-") {
            continue;
        }
        let rel = t["outcome"]["data"]["run"]
            .as_str()
            .unwrap_or_else(|| panic!("no run in {t}"))
            .to_string();
        let record = read_json(&dir.join(&rel));
        assert_eq!(record["task_id"], t["id"], "{rel} belongs to its task");
        assert_eq!(record["layer"], t["layer"], "{rel}");
        assert!(runs.insert(rel.clone()), "{rel} used twice");
    }
    assert_eq!(runs.len(), 2, "{runs:?}");
}

#[test]
fn the_default_sessions_folder_inside_the_repository_works() {
    let _serial = serial();
    let Some(mut cl) = Cluster::start(&[]) else {
        return;
    };
    let url = cl.url();
    cl.worker("host-a", "generator,executor", &[]);
    cl.wait_for_workers(&url, &["host-a"]);
    // No TEAM_TESTING_SESSIONS: the sessions go to <repo>/.workflow/.team, which the run adds
    // to .git/info/exclude before it snapshots the repository for the worker.
    let mut p = Project::fixture("python-calc");
    p.sessions = p.repo.join(".workflow/.team");
    let mut cmd = p.cmd(&run_args(&url));
    cmd.c.env_remove("TEAM_TESTING_SESSIONS");
    let out = cl.run("remote run, default sessions folder", cmd, RUN_LIMIT);
    out.assert_code(0);
    let id = out.session_id();
    assert!(p.session_dir(&id).join("session.json").is_file());
    assert_completed_once(&p, &id);
    let exclude = std::fs::read_to_string(p.repo.join(".git/info/exclude")).unwrap();
    assert!(exclude.contains("/.workflow/"), "{exclude}");
    for t in p.tasks(&id) {
        let tid = t["id"].as_str().unwrap();
        if tid.starts_with("TESTGEN-") || tid.starts_with("TESTRUN-") {
            assert_eq!(t["meta"]["host"], "host-a", "{tid} ran on the worker: {t}");
        }
    }
    // The worker's copy had no sessions in it.
    let host = cl.tmp.path().join("hosts/host-a/repos");
    for e in std::fs::read_dir(&host).unwrap().flatten() {
        assert!(
            !e.path().join(".workflow").exists(),
            "{}",
            e.path().display()
        );
    }
    assert_eq!(
        git_status(&p.repo, false),
        "",
        "the user's repository is untouched"
    );
}

#[test]
fn credentials_stay_out_of_the_session() {
    const PASSWORD: &str = "s3cr3t-pw";
    let _serial = serial();
    let Some(mut cl) = Cluster::start(&["--user", "tt", "--pass", PASSWORD]) else {
        return;
    };
    let port = cl.server.port;
    let with_login = format!("nats://tt:{PASSWORD}@127.0.0.1:{port}");
    cl.worker(
        "host-a",
        "generator,executor",
        &["--nats-user", "tt", "--nats-password", PASSWORD],
    );
    let listed = cl.wait_for_workers(&with_login, &["host-a"]);
    assert!(!Value::Array(listed).to_string().contains(PASSWORD));

    let p = Project::fixture("python-calc");
    let out = cl.run("remote run", p.cmd(&run_args(&with_login)), RUN_LIMIT);
    out.assert_code(0);
    let id = out.session_id();
    assert_completed_once(&p, &id);
    assert!(!out.stdout.contains(PASSWORD), "the password in stdout");
    assert!(!out.stderr.contains(PASSWORD), "the password in stderr");
    assert!(
        !cl.worker_log("host-a").contains(PASSWORD),
        "the password in the worker's output"
    );
    let mut files = Vec::new();
    let mut dirs = vec![p.session_dir(&id)];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            if e.file_type().unwrap().is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 10, "{files:?}");
    for f in &files {
        let bytes = std::fs::read(f).unwrap_or_default();
        assert!(
            !bytes
                .windows(PASSWORD.len())
                .any(|w| w == PASSWORD.as_bytes()),
            "the password is in {}",
            f.display()
        );
    }

    // A credentials file that is not there: refused, naming it.
    let missing = cl.tmp.path().join("missing.creds");
    let host = cl.tmp.path().join("hosts/host-z");
    let out = cl.tt(
        &[
            "worker",
            "--nats",
            &cl.url(),
            "--nats-creds",
            missing.to_str().unwrap(),
            "--roles",
            "generator",
            "--slots",
            "1",
            "--dir",
            host.to_str().unwrap(),
            "--name",
            "host-z",
        ],
        SHORT_LIMIT,
    );
    out.assert_code(2);
    assert!(out.stderr.contains("missing.creds"), "{}", out.stderr);
}

#[test]
fn issue31_a_task_the_worker_refuses_leaves_no_run_folder() {
    use team_testing::pipeline::config::TeamConfig;
    use team_testing::remote::objects::Objects;
    use team_testing::remote::wire::{EventKind, RepoRef, TaskEnvelope, WorkerEvent};
    use team_testing::remote::{names, snapshot, streams, ClusterSettings};
    use team_testing::tasks::Task;

    let _serial = serial();
    let Some(mut cl) = Cluster::start(&[]) else {
        return;
    };
    let url = cl.url();
    cl.worker("host-a", "executor", &[]);
    cl.wait_for_workers(&url, &["host-a"]);
    // A task as anyone who can publish on the server may send one: a real repository bundle,
    // and an input manifest naming a file no coordinator sends, which the worker refuses once
    // it has made the task's folder.
    let p = Project::fixture("python-calc");
    let snap = snapshot::make(&p.repo, &cl.tmp.path().join("forge"), &[]).unwrap();
    let session_id = "TST-refused-2026-12-05";
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let outcome = rt.block_on(async {
        let client = ClusterSettings::new(&url)
            .unwrap()
            .connect("a forger")
            .await
            .unwrap();
        let js = async_nats::jetstream::new(client);
        streams::tasks(&js).await.unwrap();
        let events = streams::events(&js).await.unwrap();
        let objects = Objects::open(&js).await.unwrap();
        let bundle = objects.put_file(&snap.bundle).await.unwrap();
        let some = objects.put(b"x").await.unwrap();
        let manifest = serde_json::json!({ "tasks.json.lock": some });
        let inputs = objects.put(manifest.to_string().as_bytes()).await.unwrap();
        let mut task = Task::new("TESTRUN-001", "run the tests", "executor", Vec::new());
        task.layer = Some("L1-unit".into());
        task.attempts = 1;
        let envelope = TaskEnvelope {
            session_id: session_id.into(),
            task,
            instance: "executor".into(),
            role: "executor".into(),
            role_body: String::new(),
            timeout_s: 60,
            config: TeamConfig::builtin().unwrap(),
            sandbox: Default::default(),
            agents: Default::default(),
            repo: RepoRef {
                commit: snap.commit.clone(),
                object: bundle,
                subdir: snap.subdir.clone(),
            },
            inputs,
            shard: None,
        };
        let payload = serde_json::to_vec(&envelope).unwrap();
        let subject = names::task_subject("executor");
        streams::publish_durable(&js, &subject, &envelope.work_id(), payload, SHORT_LIMIT)
            .await
            .unwrap();
        let subject = names::event_subject(session_id);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(msg) = events.get_last_raw_message_by_subject(&subject).await {
                let event: WorkerEvent = serde_json::from_slice(&msg.payload).unwrap();
                if let EventKind::Finished(f) = event.kind {
                    return f.outcome;
                }
            }
            assert!(Instant::now() < deadline, "no outcome of the forged task");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    cl.event(&format!("the forged task's outcome: {}", outcome.summary));
    assert!(
        outcome.summary.contains("not a session input"),
        "{}",
        outcome.summary
    );
    let runs = cl.tmp.path().join("hosts/host-a/runs");
    let left: Vec<PathBuf> = std::fs::read_dir(&runs)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
