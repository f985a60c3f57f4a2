//! The JSONL mirror's writer: a thread that owns the writing of `.msg/messages.jsonl` and
//! `.msg/meta.json` ([`super::log_file`]). Publishers serialize their message on their own thread
//! into a queue the writer takes whole (no allocation and no channel send per message; a
//! crossbeam channel wakes the writer when a message finds no wake on its way, and carries the
//! syncs). Each batch is written under the file's exclusive lock, then fsynced once (group
//! commit).
//!
//! A beat need not fsync the log: `take_tail` writes what is queued and hands it the lines
//! written since the log was last durable, and the beat's journal line carries them in its one
//! durable write (the journal restores them into the log on the next open,
//! `session::journal::restore_log`, should the disk lose them). It does so on the caller's own
//! thread, under the lock the writer holds while it writes: a beat waits for no thread hand-off.

use std::cell::RefCell;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use serde_json::{Map, Value};

pub use super::log_file::{LogError, Tail};
use super::log_file::{LogState, MetaUpdate};
use super::message::{Body, Message, Payload};

type Result<T, E = LogError> = std::result::Result<T, E>;

enum Command {
    /// The queue holds a message, and no wake was on its way.
    Wake,
    Sync(Sender<Result<(), LogError>>),
    Stop,
}

/// Messages published and not yet written, in publish order: each one's line without id and
/// time ([`Body::write`], one `\n`-ended line each), and the state updates for meta.json with
/// the index of their message.
#[derive(Default)]
struct Queued {
    lines: Vec<u8>,
    count: usize,
    states: Vec<(usize, String, Map<String, Value>)>,
    /// The writer has stopped: what is appended now goes nowhere (and is not kept).
    closed: bool,
    /// A wake is on its way to the writer, which takes the queue after it: no other is needed
    /// (a beat taking the queue meanwhile leaves it so; a wake crosses cores, which is dear).
    wake_sent: bool,
}

impl Queued {
    fn clear(&mut self) {
        self.lines.clear();
        self.count = 0;
        self.states.clear();
    }
}

type Queue = Arc<Mutex<Queued>>;

thread_local! {
    /// A publisher thread's line being serialized, outside the queue's lock.
    static LINE: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(1024));
}

/// The log as the writer thread and a beat's caller both write it: whoever holds the lock takes
/// the queue and writes it whole, so a message is written once, in publish order.
struct Shared {
    log: LogState,
    /// The queue's buffers, swapped with the publishers' (they keep their capacity).
    batch: Queued,
    /// Sticky: once a batch is lost, every later sync says so, so the coordinator stops rather
    /// than go on with a gap in the log.
    lost: Option<LogError>,
    /// Written (readers see it) but not yet fsynced, since when.
    unsynced: Option<Instant>,
    /// State updates not yet merged into meta.json (a view: merged lazily, in one write).
    meta: Vec<MetaUpdate>,
    meta_since: Option<Instant>,
}

type SharedLog = Arc<Mutex<Shared>>;

/// Who takes the queue: the writer thread (its wake answered) or a beat on its own thread.
#[derive(PartialEq)]
enum Taker {
    Writer,
    Beat,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Writes what the publishers queued (nothing more once a batch was lost).
    fn write_queued(&mut self, queue: &Mutex<Queued>, by: Taker) {
        {
            let mut queued = lock(queue);
            std::mem::swap(&mut self.batch.lines, &mut queued.lines);
            std::mem::swap(&mut self.batch.states, &mut queued.states);
            self.batch.count = std::mem::take(&mut queued.count);
            if by == Taker::Writer {
                queued.wake_sent = false;
            }
        }
        let batch = &mut self.batch;
        if batch.count > 0 && self.lost.is_none() {
            match self
                .log
                .write_batch(&batch.lines, batch.count, &mut batch.states)
            {
                Ok(updates) => {
                    self.unsynced.get_or_insert_with(Instant::now);
                    if !updates.is_empty() {
                        self.meta.extend(updates);
                        self.meta_since.get_or_insert_with(Instant::now);
                    }
                }
                Err(e) => {
                    let problem = LogError::Write {
                        path: self.log.path.clone(),
                        unwritten: batch.count,
                        cause: Arc::new(e),
                    };
                    eprintln!("team-testing: {problem}");
                    self.lost = Some(problem);
                }
            }
        }
        batch.clear();
    }

    /// fsyncs what was written; the sticky error when a batch was lost.
    fn sync(&mut self) -> Result<()> {
        if self.unsynced.take().is_some() && self.lost.is_none() {
            if let Err(e) = self.log.sync() {
                self.fsync_failed(e);
            }
        }
        self.status()
    }

    fn status(&self) -> Result<()> {
        match &self.lost {
            Some(problem) => Err(problem.clone()),
            None => Ok(()),
        }
    }

    fn fsync_failed(&mut self, e: std::io::Error) {
        let problem = LogError::Fsync {
            path: self.log.path.clone(),
            cause: Arc::new(e),
        };
        eprintln!("team-testing: {problem}");
        self.lost = Some(problem);
    }

    /// The tail for a beat; the log itself is still fsynced within LAZY_SYNC, off its path.
    fn take_tail(&mut self) -> Result<Tail> {
        self.status()?;
        match self.log.take_tail() {
            Ok(tail) => Ok(tail),
            Err(e) => {
                self.fsync_failed(e);
                self.status().map(|()| Tail::default())
            }
        }
    }

    fn merge_meta(&mut self) {
        if let Err(e) = self.log.merge_meta(&self.meta) {
            eprintln!(
                "team-testing: cannot update {}: {e}",
                self.log.meta_path.display()
            );
        }
        self.meta.clear();
        self.meta_since = None;
    }
}

/// A cloneable handle to the writer thread. The thread ends when every handle is dropped.
#[derive(Clone)]
pub struct WriterHandle {
    tx: Sender<Command>,
    queue: Queue,
    shared: SharedLog,
}

pub struct Writer {
    handle: WriterHandle,
    thread: Option<JoinHandle<()>>,
    /// What opening the log found and repaired (a torn last line), for the user to see.
    pub repairs: Vec<String>,
}

impl Writer {
    pub fn open(messages: &Path, meta: &Path) -> Result<Self> {
        let (log, repairs) = LogState::open(messages, meta)?;
        let (tx, rx) = crossbeam_channel::unbounded();
        let queue = Queue::default();
        let shared = Arc::new(Mutex::new(Shared {
            log,
            batch: Queued::default(),
            lost: None,
            unsynced: None,
            meta: Vec::new(),
            meta_since: None,
        }));
        let thread = std::thread::Builder::new()
            .name("bus-writer".into())
            .spawn({
                let (queue, shared) = (queue.clone(), shared.clone());
                move || run(shared, rx, queue)
            })
            .map_err(|cause| LogError::Io {
                what: "starting the writer thread for",
                path: messages.to_path_buf(),
                cause: Arc::new(cause),
            })?;
        Ok(Writer {
            handle: WriterHandle { tx, queue, shared },
            thread: Some(thread),
            repairs,
        })
    }

    pub fn handle(&self) -> WriterHandle {
        self.handle.clone()
    }

    /// Writes everything queued, then stops the thread (other handles then append to nothing).
    pub fn close(self) {
        // Drop does it.
    }
}

impl Drop for Writer {
    /// Also on an error path: what was queued is written and fsynced before the writer goes.
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = self.handle.tx.send(Command::Stop);
            let _ = t.join();
        }
    }
}

impl WriterHandle {
    /// Queues the message (serialized here, on the caller's thread) for the next batch.
    pub fn append(&self, msg: &Message) {
        let state = match &msg.payload {
            Payload::StateUpdate(data) => Some((msg.from.clone(), data.clone())),
            _ => None,
        };
        let woken = LINE.with_borrow_mut(|line| {
            line.clear();
            Body::write(msg, line);
            let mut queued = lock(&self.queue);
            if queued.closed {
                return false;
            }
            if let Some((from, data)) = state {
                let at = queued.count;
                queued.states.push((at, from, data));
            }
            queued.lines.extend_from_slice(line);
            queued.count += 1;
            !std::mem::replace(&mut queued.wake_sent, true)
        });
        // Only a message that finds no wake on its way sends one: the writer takes the queue
        // whole.
        if woken {
            let _ = self.tx.send(Command::Wake);
        }
    }

    /// Blocks until every message appended before this call is on disk (fsynced); an error says
    /// why a batch could not be written.
    pub fn sync(&self) -> Result<(), LogError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.tx
            .send(Command::Sync(tx))
            .map_err(|_| LogError::Stopped)?;
        rx.recv().map_err(|_| LogError::Stopped)?
    }

    /// Writes every message appended before this call, on this thread, and takes the lines not
    /// yet durable: the caller makes them durable elsewhere (a beat's journal line) before it
    /// acts on them. When another process wrote between them, the log is fsynced instead and
    /// the tail is empty. The writer thread learns of the unsynced lines at its next wake (a
    /// beat publishes what it dispatches), or when it stops.
    pub fn take_tail(&self) -> Result<Tail, LogError> {
        let mut shared = lock(&self.shared);
        if lock(&self.queue).closed {
            return Err(LogError::Stopped);
        }
        shared.write_queued(&self.queue, Taker::Beat);
        shared.take_tail()
    }
}

/// Longest a written message waits for its fsync when nobody asks for one: a sync request fsyncs
/// at once, and a beat carries the lines not yet durable in its journal line, so messages that
/// led to a dispatch are never among these.
const LAZY_SYNC: Duration = Duration::from_millis(50);

/// Longest a batch nobody waits on gathers more messages before it is written.
const LINGER: Duration = Duration::from_micros(500);

fn run(shared: SharedLog, rx: Receiver<Command>, queue: Queue) {
    // A message was queued since the last batch was taken.
    let mut woken = false;
    let mut waiters = Vec::new();
    let mut stop = false;
    // Since when the batch being gathered has waited for more messages.
    let mut lingering: Option<Instant> = None;
    loop {
        let deadline = {
            let s = lock(&shared);
            [s.unsynced, s.meta_since].into_iter().flatten().min()
        };
        let first = match deadline {
            None => rx.recv().ok(),
            Some(since) => match rx.recv_timeout(LAZY_SYNC.saturating_sub(since.elapsed())) {
                Ok(cmd) => Some(cmd),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => {
                    stop = true;
                    None
                }
            },
        };
        if first.is_none() && deadline.is_none() {
            break; // every handle dropped, nothing left to do
        }
        let mut next = first;
        while let Some(cmd) = next.take() {
            match cmd {
                Command::Wake => woken = true,
                Command::Sync(w) => waiters.push(w),
                Command::Stop => stop = true,
            }
            if stop {
                break;
            }
            next = rx.try_recv().ok().or_else(|| {
                // Nobody waits on this batch: let it grow a little rather than pay a write, a
                // lock and a stat for a handful of lines (readers see it LINGER later).
                let idle = waiters.is_empty() && woken;
                let left =
                    LINGER.saturating_sub(lingering.get_or_insert_with(Instant::now).elapsed());
                (idle && !left.is_zero())
                    .then(|| rx.recv_timeout(left).ok())
                    .flatten()
            });
        }
        lingering = None;
        woken = false;
        let mut s = lock(&shared);
        s.write_queued(&queue, Taker::Writer);
        let waited = |since: Option<Instant>| since.is_some_and(|t| t.elapsed() >= LAZY_SYNC);
        // Group commit: one fsync for everything written, when someone waits on it, when the
        // writer stops, or when the oldest unsynced message has waited LAZY_SYNC.
        let result = if !waiters.is_empty() || stop || waited(s.unsynced) {
            s.sync()
        } else {
            s.status()
        };
        for w in waiters.drain(..) {
            let _ = w.send(result.clone());
        }
        // meta.json is never on a beat's path: its file replacement would join the beat's
        // fsyncs in the filesystem's journal.
        if stop || waited(s.meta_since) {
            s.merge_meta();
        }
        drop(s);
        if stop {
            break;
        }
    }
    lock(&queue).closed = true;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::log_file::MERGED_THROUGH;
    use crate::bus::message::Record;
    use serde_json::{json, Map, Value};
    use std::fs::OpenOptions;
    use std::io::Write;

    fn update(key: &str) -> Message {
        let mut data = Map::new();
        data.insert(key.into(), json!(true));
        Message::new(
            "executor",
            "coordinator",
            "state",
            Payload::StateUpdate(data),
        )
    }

    #[test]
    fn meta_json_catches_up_with_updates_a_killed_writer_never_merged() {
        let dir = tempfile::tempdir().unwrap();
        let (log, meta) = (
            dir.path().join("messages.jsonl"),
            dir.path().join("meta.json"),
        );
        let w = Writer::open(&log, &meta).unwrap();
        w.handle().append(&update("first"));
        w.close();
        let merged: Value = crate::util::read_json(&meta).unwrap();
        assert_eq!(merged["role_state"]["executor"]["first"], true);
        assert_eq!(merged[MERGED_THROUGH], 1);

        // A writer killed after writing its line, before its lazy merge.
        let record = Record::from_message(
            crate::bus::message::format_id(2),
            crate::util::now_ts(),
            &update("second"),
        );
        let mut line = serde_json::to_vec(&record).unwrap();
        line.push(b'\n');
        OpenOptions::new()
            .append(true)
            .open(&log)
            .unwrap()
            .write_all(&line)
            .unwrap();

        let w = Writer::open(&log, &meta).unwrap();
        assert!(w.repairs.is_empty(), "{:?}", w.repairs);
        w.close();
        let merged: Value = crate::util::read_json(&meta).unwrap();
        assert_eq!(merged["role_state"]["executor"]["first"], true);
        assert_eq!(merged["role_state"]["executor"]["second"], true);
        assert_eq!(merged[MERGED_THROUGH], 2);
    }

    #[test]
    fn a_beat_takes_the_lines_not_yet_durable_and_an_fsync_leaves_none() {
        let dir = tempfile::tempdir().unwrap();
        let (log, meta) = (
            dir.path().join("messages.jsonl"),
            dir.path().join("meta.json"),
        );
        let w = Writer::open(&log, &meta).unwrap();
        let h = w.handle();
        h.append(&update("a"));
        h.append(&update("b"));
        let tail = h.take_tail().unwrap();
        let text = std::fs::read(&log).unwrap();
        assert_eq!((tail.at, tail.bytes.as_slice()), (0, text.as_slice()));
        h.append(&update("c"));
        let next = h.take_tail().unwrap();
        assert_eq!(next.at, text.len() as u64, "the next tail follows on");
        assert!(String::from_utf8(next.bytes).unwrap().contains("MSG-003"));
        h.append(&update("d"));
        h.sync().unwrap();
        assert_eq!(
            h.take_tail().unwrap(),
            Tail::default(),
            "durable: nothing to carry"
        );
        w.close();
    }
}
