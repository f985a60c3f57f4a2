//! The message log's file, `.msg/messages.jsonl`, and its view `.msg/meta.json`: writing a batch
//! of lines under the file's lock (ids stay unique and increasing across processes), the tail not
//! yet durable, repairs on open (a torn last line, an unreadable meta.json) and the lazy merge of
//! state updates into meta.json. Which thread writes, and when it fsyncs, is the writer's
//! ([`super::writer`]).

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::message::{self, parse_seq, Record};

/// The log's lines written since it was last durable, and where they start in it: what a beat's
/// journal line carries instead of an fsync of the log. Empty when the log is durable already.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Tail {
    pub at: u64,
    pub bytes: Vec<u8>,
}

/// Why the message log is not durable. Cloned to every waiter (hence the shared io errors); once
/// a batch is lost every later sync returns the same error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LogError {
    #[error("the message log writer has stopped")]
    Stopped,
    #[error("cannot write {} ({unwritten} message(s) not written): {cause}", path.display())]
    Write {
        path: PathBuf,
        unwritten: usize,
        cause: Arc<std::io::Error>,
    },
    #[error("cannot fsync {}: {cause}", path.display())]
    Fsync {
        path: PathBuf,
        cause: Arc<std::io::Error>,
    },
    /// Opening the log, reading it back or setting a file aside failed.
    #[error("{what} {}: {cause}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        cause: Arc<std::io::Error>,
    },
    /// meta.json, the view merged from the log's state updates, could not be written.
    #[error(transparent)]
    Meta(Arc<crate::util::FileError>),
}

type Result<T, E = LogError> = std::result::Result<T, E>;

impl LogError {
    fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> LogError {
        let path = path.to_path_buf();
        move |cause| LogError::Io {
            what,
            path,
            cause: Arc::new(cause),
        }
    }
}

pub(super) struct LogState {
    file: File,
    pub(super) path: PathBuf,
    pub(super) meta_path: PathBuf,
    /// File length after our last write; a different length means another process appended.
    known_len: u64,
    next_seq: u64,
    /// Written since the log was last durable (fsynced, or taken by a beat).
    tail: Tail,
    /// Another process appended among the tail's lines: it cannot be restored as one piece.
    tail_broken: bool,
    clock: Clock,
}

/// The messages' timestamp, formatted once per millisecond (a batch writes thousands of
/// messages in one; formatting each costs more than writing it).
#[derive(Default)]
struct Clock {
    millis: i64,
    text: String,
}

impl Clock {
    fn now(&mut self) -> &str {
        let now = chrono::Utc::now();
        if now.timestamp_millis() != self.millis || self.text.is_empty() {
            self.millis = now.timestamp_millis();
            self.text = now.to_rfc3339_opts(chrono::SecondsFormat::Millis, false);
        }
        &self.text
    }
}

impl LogState {
    /// Re-reads the last id when the file changed behind our back.
    fn refresh_seq(&mut self) -> Result<()> {
        let len = self
            .file
            .metadata()
            .map_err(LogError::io("reading", &self.path))?
            .len();
        if len != self.known_len {
            self.next_seq = last_seq(&mut self.file).unwrap_or(0) + 1;
            self.known_len = len;
        }
        Ok(())
    }

    /// Appends the batch (not yet fsynced); returns its state updates for meta.json.
    pub(super) fn write_batch(
        &mut self,
        lines: &[u8],
        count: usize,
        states: &mut Vec<(usize, String, Map<String, Value>)>,
    ) -> std::io::Result<Vec<MetaUpdate>> {
        self.file.lock()?;
        let result = (|| {
            let ours = self.known_len;
            self.refresh_seq().map_err(std::io::Error::other)?;
            self.tail_broken |= !self.tail.bytes.is_empty() && self.known_len != ours;
            // The batch is built where it waits to be durable, the tail, and written from there.
            let start = self.tail.bytes.len();
            if start == 0 {
                self.tail.at = self.known_len;
            }
            let buf = &mut self.tail.bytes;
            buf.reserve(lines.len() + count * 48);
            let mut updates = Vec::new();
            let mut states = states.drain(..).peekable();
            let mut id = String::new();
            for (i, body) in lines.split_inclusive(|b| *b == b'\n').enumerate() {
                let ts = self.clock.now();
                id.clear();
                let _ = write!(id, "MSG-{:03}", self.next_seq);
                self.next_seq += 1;
                message::frame(body, &id, ts, buf);
                while let Some((_, from, data)) = states.next_if(|(at, _, _)| *at == i) {
                    updates.push((from, data, ts.to_string()));
                }
            }
            let lines = &self.tail.bytes[start..];
            crate::failpoint::hit("log.append");
            if crate::failpoint::due("log.torn") {
                // A kill in the middle of the write: half a line on disk.
                let _ = self.file.write_all(&lines[..lines.len() / 2]);
                crate::failpoint::crash();
            }
            if let Err(e) = self.file.write_all(lines) {
                // Never leave a partial line for later appends to join onto.
                let _ = self.file.set_len(self.known_len);
                let _ = self.file.sync_data();
                self.tail.bytes.truncate(start);
                return Err(e);
            }
            self.known_len += lines.len() as u64;
            Ok(updates)
        })();
        let _ = self.file.unlock();
        result
    }

    /// Merges state updates into meta.json, under the log's lock (other processes merge too),
    /// noting the last message they cover.
    pub(super) fn merge_meta(&mut self, updates: &[MetaUpdate]) -> std::io::Result<()> {
        if updates.is_empty() {
            return Ok(());
        }
        self.file.lock()?;
        let through = self.next_seq.saturating_sub(1);
        let merged = merge_meta(&self.meta_path, updates, through).map_err(std::io::Error::other);
        let _ = self.file.unlock();
        merged
    }

    /// meta.json is merged lazily, so a kill can leave it behind the log: merges the state
    /// updates it has not seen (reading the log's tail back to the last message it covers).
    fn catch_up_meta(&mut self) -> Result<()> {
        let Ok(meta) = crate::util::read_json::<Value>(&self.meta_path) else {
            return Ok(());
        };
        let Some(through) = meta.get(MERGED_THROUGH).and_then(Value::as_u64) else {
            return Ok(());
        };
        let last = self.next_seq.saturating_sub(1);
        if last <= through {
            return Ok(());
        }
        let updates = state_updates_after(&mut self.file, through)
            .map_err(LogError::io("reading", &self.path))?;
        self.merge_meta(&updates)
            .map_err(LogError::io("writing", &self.meta_path))
    }

    pub(super) fn sync(&mut self) -> std::io::Result<()> {
        crate::failpoint::write("log.fsync")?;
        self.file.sync_data()?;
        self.tail = Tail::default();
        self.tail_broken = false;
        Ok(())
    }

    /// The tail for a beat's journal line; an fsync instead when it cannot be restored whole.
    pub(super) fn take_tail(&mut self) -> std::io::Result<Tail> {
        if self.tail_broken {
            self.sync()?;
        }
        Ok(std::mem::take(&mut self.tail))
    }
}

impl LogState {
    /// Opens the log (cutting a torn last line) and brings meta.json up to date; returns what it
    /// repaired, for the user to see.
    pub(super) fn open(messages: &Path, meta: &Path) -> Result<(LogState, Vec<String>)> {
        let (file, mut repairs) = open_log(messages)?;
        repairs.extend(set_aside_unreadable_meta(meta)?);
        let mut state = LogState {
            file,
            path: messages.to_path_buf(),
            meta_path: meta.to_path_buf(),
            known_len: 0,
            next_seq: 1,
            tail: Tail::default(),
            tail_broken: false,
            clock: Clock::default(),
        };
        state.refresh_seq()?;
        if let Err(e) = state.catch_up_meta() {
            repairs.push(format!("{}: not brought up to date: {e}", meta.display()));
        }
        Ok((state, repairs))
    }
}

/// Opens the log for appending; a torn last line (a crash mid-write) is cut off and reported.
fn open_log(path: &Path) -> Result<(File, Vec<String>)> {
    let io = |e| LogError::io("opening", path)(e);
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(io)?;
    let mut repairs = Vec::new();
    let len = file.metadata().map_err(io)?.len();
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1)).map_err(io)?;
        file.read_exact(&mut last).map_err(io)?;
        if last[0] != b'\n' {
            let keep = last_newline_before(&mut file, len).map_err(io)?;
            file.set_len(keep).map_err(io)?;
            file.sync_data().map_err(io)?;
            repairs.push(format!(
                "{}: removed a torn last line of {} bytes left by an interrupted write",
                path.display(),
                len - keep
            ));
        }
    }
    Ok((file, repairs))
}

/// Offset just after the last '\n' before `end` (0 when there is none).
fn last_newline_before(file: &mut File, end: u64) -> std::io::Result<u64> {
    let mut pos = end;
    let mut buf = vec![0u8; 64 * 1024];
    while pos > 0 {
        let start = pos.saturating_sub(buf.len() as u64);
        let n = (pos - start) as usize;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        pos = start;
    }
    Ok(0)
}

/// The highest `MSG-N` among the last lines of the log (reads the tail only).
fn last_seq(file: &mut File) -> Option<u64> {
    let len = file.metadata().ok()?.len();
    let mut window = 64 * 1024u64;
    loop {
        let start = len.saturating_sub(window);
        file.seek(SeekFrom::Start(start)).ok()?;
        let mut buf = Vec::new();
        file.read_to_end(&mut buf).ok()?;
        let text = String::from_utf8_lossy(&buf);
        let found = text
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v.get("id").and_then(Value::as_str).and_then(parse_seq));
        if found.is_some() || start == 0 {
            return found;
        }
        window *= 4;
    }
}

/// `state_update` merges `data` into meta.json `role_state[<from>]` (shallow, plus `_updated_at`);
/// the coordinator's session-level keys also land at the top level.
/// meta.json is rebuilt from the state updates; one that cannot be read is kept aside (never
/// overwritten) as `meta.json.corrupt-N`, and the repair is reported.
fn set_aside_unreadable_meta(path: &Path) -> Result<Option<String>> {
    if !path.is_file() {
        return Ok(None);
    }
    let problem = match crate::util::read_json::<Value>(path) {
        Ok(v) if v.is_object() => return Ok(None),
        Ok(_) => "not a JSON object".to_string(),
        Err(e) => e.to_string(),
    };
    let aside = (1..)
        .map(|n| path.with_file_name(format!("meta.json.corrupt-{n}")))
        .find(|p| !p.exists())
        .expect("a free name");
    std::fs::rename(path, &aside).map_err(LogError::io("moving aside", path))?;
    Ok(Some(format!(
        "{problem}; kept as {} and rebuilt from the next state updates",
        aside.display()
    )))
}

/// A state update for meta.json: sender, data, timestamp.
pub(super) type MetaUpdate = (String, Map<String, Value>, String);

/// meta.json's note of the last message whose state update it holds.
pub(super) const MERGED_THROUGH: &str = "_merged_through";

/// The state updates of the log's messages after `seq`, in order (read from the end back).
fn state_updates_after(file: &mut File, seq: u64) -> std::io::Result<Vec<MetaUpdate>> {
    let len = file.metadata()?.len();
    let mut window = 64 * 1024u64;
    loop {
        let start = len.saturating_sub(window);
        file.seek(SeekFrom::Start(start))?;
        let mut buf = Vec::new();
        file.read_to_end(&mut buf)?;
        // The first line of a window that does not start the file may be cut: skip it.
        let body = match (start, buf.iter().position(|&b| b == b'\n')) {
            (0, _) => &buf[..],
            (_, Some(i)) => &buf[i + 1..],
            (_, None) => &buf[..0],
        };
        let records: Vec<Record> = body
            .split(|&b| b == b'\n')
            .filter_map(|l| serde_json::from_slice(l).ok())
            .collect();
        let reached = records
            .first()
            .and_then(|r| parse_seq(&r.id))
            .is_some_and(|first| first <= seq + 1);
        if reached || start == 0 {
            return Ok(records
                .into_iter()
                .filter(|r| r.kind == "state_update" && parse_seq(&r.id).is_some_and(|n| n > seq))
                .filter_map(|r| match r.data {
                    Value::Object(data) => Some((r.from, data, r.ts)),
                    _ => None,
                })
                .collect());
        }
        window *= 4;
    }
}

fn merge_meta(path: &Path, updates: &[MetaUpdate], through: u64) -> Result<()> {
    let mut meta: Value = if path.is_file() {
        crate::util::read_json(path).unwrap_or_else(|_| json!({}))
    } else {
        json!({})
    };
    if !meta.is_object() {
        meta = json!({});
    }
    let obj = meta.as_object_mut().expect("object");
    for (from, data, ts) in updates {
        if from == "coordinator" {
            for key in [
                "status",
                "pipeline_mode",
                "pipeline_stages",
                "team_name",
                "created_at",
            ] {
                if let Some(v) = data.get(key) {
                    obj.insert(key.to_string(), v.clone());
                }
            }
        }
        let role_state = obj
            .entry("role_state")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        if let Some(role_state) = role_state {
            let ns = role_state.entry(from.clone()).or_insert_with(|| json!({}));
            if !ns.is_object() {
                *ns = json!({});
            }
            let ns = ns.as_object_mut().expect("object");
            for (k, v) in data {
                ns.insert(k.clone(), v.clone());
            }
            ns.insert("_updated_at".into(), json!(ts));
        }
        obj.insert("updated_at".into(), json!(ts));
    }
    let before = obj.get(MERGED_THROUGH).and_then(Value::as_u64).unwrap_or(0);
    obj.insert(MERGED_THROUGH.into(), json!(before.max(through)));
    // A view rebuilt from the log's state updates: no fsync on the beat's path.
    crate::util::replace_json(path, &meta).map_err(|e| LogError::Meta(Arc::new(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timestamp_keeps_the_logs_format() {
        let mut clock = Clock::default();
        let ts = clock.now().to_string();
        assert_eq!(ts.len(), "2026-12-06T13:20:00.123+00:00".len(), "{ts}");
        assert!(ts.ends_with("+00:00") && ts.as_bytes()[19] == b'.', "{ts}");
        assert!(crate::util::parse_ts(&ts).is_some());
    }
}
