//! The coordinator's beat journal, `.journal.jsonl`: one line per beat with the session state and
//! the tasks that changed in it, made durable with one write. Writing tasks.json and
//! session.json whole every beat would cost the size of the graph per beat (quadratic over a
//! run) and four fsyncs; the journal costs what changed and one.
//!
//! A line is `{"beat":N,"state":{…},"tasks":[…],"log":{"at":…,"lines":"…"}}`. tasks.json and
//! session.json carry the beat they include (`beat`); loading one applies the journal lines after
//! it. When the journal outgrows the last snapshot, the coordinator writes both files whole
//! (atomically) and empties it, so the journal stays within the size of the graph and replaying
//! it is bounded.
//!
//! `log` is the message log's tail the beat made durable in the same write (the lines written
//! since the log's own last fsync, and their offset): the one durable write of a beat covers
//! both the messages and the state they led to. `restore_log` puts them back should the disk
//! have lost them from the log (a power cut; a killed process loses nothing the kernel has).
//! Before the journal is emptied, the log is fsynced.
//!
//! The file is kept longer than its lines, zero-filled beyond them (`GROW` at a time): a line
//! written over blocks already allocated leaves the file's size alone, so making it durable
//! writes the data and nothing else (no metadata commit), which on ext4 is about a third cheaper
//! than appending ([`super::journal_file`] writes it). Readers take the lines before the first
//! NUL byte (a JSON line never holds one).

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::journal_file::JournalFile;
use super::SessionState;
use crate::error::{Error, Result};
use crate::tasks::{Task, TaskGraph};

pub const FILE: &str = ".journal.jsonl";

/// A journal never waits for a snapshot below this size (small graphs snapshot rarely).
const MIN_COMPACT_BYTES: u64 = 1 << 20;

/// How much zero-filled room the journal gains when a line does not fit (one slower beat).
const GROW: u64 = 256 << 10;

#[derive(Serialize)]
struct LineOut<'a> {
    beat: u64,
    state: &'a SessionState,
    tasks: Vec<&'a Task>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log: Option<LogOut<'a>>,
}

/// The message log's tail a beat carries.
#[derive(Serialize)]
struct LogOut<'a> {
    at: u64,
    lines: &'a str,
}

#[derive(Deserialize)]
struct LineIn {
    beat: u64,
    state: SessionState,
    #[serde(default)]
    tasks: Vec<Task>,
    #[serde(default)]
    log: Option<LogIn>,
}

#[derive(Deserialize)]
struct LogIn {
    at: u64,
    lines: String,
}

/// The coordinator's open journal.
pub struct Journal {
    path: PathBuf,
    file: JournalFile,
    /// Where the lines end (the next line goes here); zeros follow up to `room`.
    bytes: u64,
    /// The file's length.
    room: u64,
    /// Size of tasks.json at the last snapshot: the journal is emptied once it outgrows it.
    snapshot_bytes: u64,
    buf: Vec<u8>,
}

impl Journal {
    /// Opens the journal where its lines end: a torn last line (a kill mid-write) is zeroed, so
    /// the next line starts on its own.
    pub fn open(path: &Path) -> Result<Journal> {
        let io = |e| Error::io(format!("opening {}", path.display()), e);
        let (mut file, text) = JournalFile::open(path).map_err(io)?;
        let bytes = complete_end(written(&text));
        // Whatever follows the complete lines is zeroed: a torn line, and the remains of an
        // emptying or a multi-block write cut short (a kill, a power cut), which the next lines
        // would otherwise run into.
        if let Some(last) = text[bytes..].iter().rposition(|&b| b != 0) {
            file.zero(bytes as u64, (bytes + last + 1) as u64)
                .map_err(io)?;
        }
        file.resume_at(&text[..bytes]);
        Ok(Journal {
            path: path.to_path_buf(),
            file,
            bytes: bytes as u64,
            room: text.len() as u64,
            snapshot_bytes: 0,
            buf: Vec::new(),
        })
    }

    /// True when the next beat should write whole snapshots instead of a line.
    pub fn wants_snapshot(&self) -> bool {
        self.bytes > self.snapshot_bytes.max(MIN_COMPACT_BYTES)
    }

    /// Appends one beat, with the message log's tail not yet durable, and makes it durable.
    pub fn append<'a>(
        &mut self,
        beat: u64,
        state: &SessionState,
        tasks: impl Iterator<Item = &'a Task>,
        log: &crate::bus::Tail,
    ) -> Result<()> {
        self.buf.clear();
        let lines = std::str::from_utf8(&log.bytes).map_err(|e| {
            Error::bad_file(&self.path, format!("beat {beat}: the log's tail: {e}"))
        })?;
        let line = LineOut {
            beat,
            state,
            tasks: tasks.collect(),
            log: (!lines.is_empty()).then_some(LogOut { at: log.at, lines }),
        };
        serde_json::to_writer(&mut self.buf, &line)
            .map_err(|e| Error::bad_file(&self.path, format!("cannot encode beat {beat}: {e}")))?;
        self.buf.push(b'\n');
        let io = |e| Error::io(format!("writing {}", self.path.display()), e);
        let end = self.bytes + self.buf.len() as u64;
        if JournalFile::room_for(end) > self.room {
            // Rare: room for this line and the next GROW bytes' worth.
            let room = end.div_ceil(GROW) * GROW + GROW;
            self.file.zero(self.room, room).map_err(io)?;
            self.room = room;
        }
        crate::failpoint::hit("journal.append");
        if crate::failpoint::due("journal.torn") {
            let half = &self.buf[..self.buf.len() / 2];
            self.file.write_torn(half, self.bytes);
            crate::failpoint::crash();
        }
        crate::failpoint::write("journal.fsync").map_err(io)?;
        self.file.append(&self.buf, self.bytes).map_err(io)?;
        self.bytes = end;
        Ok(())
    }

    /// After whole snapshots were written (they hold every beat so far): starts empty, its room
    /// kept. Lines at or below the snapshots' beat are ignored, but zeros made durable spare a
    /// reader after a power cut the old lines' remains behind the new ones.
    pub fn reset(&mut self, snapshot_bytes: u64) -> Result<()> {
        self.file
            .zero(0, self.bytes)
            .map_err(|e| Error::io(format!("emptying {}", self.path.display()), e))?;
        self.file.restart();
        self.bytes = 0;
        self.snapshot_bytes = snapshot_bytes;
        Ok(())
    }
}

impl Drop for Journal {
    /// The run is over (or stopped): the room beyond the lines goes, so a kept session holds no
    /// zeros; the next run's first line makes room again. A kill leaves the room, which is
    /// harmless.
    fn drop(&mut self) {
        self.file.trim(self.bytes);
    }
}

/// What was written of the journal: its bytes before the zeros that follow its lines (what a
/// reader elsewhere, such as a cluster worker, is sent of it).
pub fn written(bytes: &[u8]) -> &[u8] {
    &bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())]
}

/// The length of the complete lines of `written` (a torn last line left out).
fn complete_end(written: &[u8]) -> usize {
    written
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1)
}

/// Puts back into the message log (`log`) the lines the journal's beats carry and the log no
/// longer has: after a power cut, the log may have lost what only the journal's fsync covered.
/// Returns what it restored, for the user to see. Run before the log is opened for writing.
pub fn restore_log(journal: &Path, log: &Path) -> Result<Vec<String>> {
    let Some(bytes) = read(journal)? else {
        return Ok(Vec::new());
    };
    let io = |e| Error::io(format!("restoring {}", log.display()), e);
    let mut restored = Vec::new();
    for (n, line) in complete_lines(&bytes).enumerate() {
        let Some(line) = parse(journal, n, line) else {
            break;
        };
        let Some(part) = line.log else { continue };
        let end = part.at + part.lines.len() as u64;
        let len = std::fs::metadata(log).map_or(0, |m| m.len());
        if len >= end {
            continue;
        }
        if len < part.at {
            restored.push(format!(
                "{}: {} bytes of messages before beat {} are lost (the journal does not hold them)",
                log.display(),
                part.at - len,
                line.beat
            ));
            break;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(log)
            .map_err(io)?;
        file.set_len(part.at).map_err(io)?;
        file.seek(SeekFrom::Start(part.at)).map_err(io)?;
        file.write_all(part.lines.as_bytes()).map_err(io)?;
        file.sync_data().map_err(io)?;
        restored.push(format!(
            "{}: restored {} bytes of messages of beat {} from {}",
            log.display(),
            end - len,
            line.beat,
            journal.display()
        ));
    }
    Ok(restored)
}

/// What replaying the journal over a tasks.json found.
#[derive(Debug, PartialEq)]
pub enum Replay {
    Done,
    /// The journal starts after the snapshot's next beat: the snapshot was replaced (and the
    /// journal emptied) while it was being read. Read both again.
    Gap,
}

/// Applies the journal's beats after `graph.beat` to it.
pub fn replay_tasks(path: &Path, graph: &mut TaskGraph) -> Result<Replay> {
    let Some(bytes) = read(path)? else {
        return Ok(Replay::Done);
    };
    let mut any = false;
    for (n, line) in complete_lines(&bytes).enumerate() {
        let Some(line) = parse(path, n, line) else {
            break;
        };
        if line.beat <= graph.beat {
            continue;
        }
        if line.beat > graph.beat + 1 {
            return Ok(Replay::Gap);
        }
        for task in line.tasks {
            graph.upsert(task);
        }
        graph.beat = line.beat;
        any = true;
    }
    if any {
        graph.reindex();
    }
    Ok(Replay::Done)
}

/// The state of the journal's last beat, when it is newer than `state`.
pub fn replay_state(path: &Path, state: &mut SessionState) -> Result<()> {
    let Some(last) = last_line(path)? else {
        return Ok(());
    };
    if let Some(line) = parse(path, 0, &last) {
        if line.beat > state.beat {
            *state = line.state;
            state.beat = line.beat;
        }
    }
    Ok(())
}

/// A complete line that does not parse is damage (the journal is only ever appended whole
/// lines): replay stops before it, and says so.
fn parse(path: &Path, n: usize, line: &[u8]) -> Option<LineIn> {
    match serde_json::from_slice(line) {
        Ok(l) => Some(l),
        Err(e) => {
            eprintln!(
                "team-testing: warning: {}: beat line {} is unreadable ({e}); the beats from it on are ignored",
                path.display(),
                n + 1
            );
            None
        }
    }
}

fn read(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
    }
}

/// Lines ended by '\n', as bytes (a torn line may end inside a UTF-8 character): a torn last
/// line (a kill mid-write) was never durable, so it never counted (nothing was dispatched on it).
fn complete_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let written = written(bytes);
    written[..complete_end(written)]
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
}

/// The last complete line (the journal stays within the size of a snapshot: read whole).
fn last_line(path: &Path) -> Result<Option<Vec<u8>>> {
    let Some(bytes) = read(path)? else {
        return Ok(None);
    };
    Ok(complete_lines(&bytes).last().map(<[u8]>::to_vec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::Tail;
    use crate::tasks::TaskStatus;

    fn state() -> SessionState {
        serde_json::from_value(serde_json::json!({
            "session_id": "S", "status": "active", "task_description": "t",
            "pipeline_mode": "targeted", "team_name": "x", "repo": "/r",
            "completion_action": "keep", "created_at": "c", "updated_at": "u"
        }))
        .unwrap()
    }

    #[test]
    fn beats_after_the_snapshot_are_replayed_and_a_torn_line_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let mut graph = TaskGraph::new(vec![
            Task::new("A", "a", "r", vec![]),
            Task::new("B", "b", "r", vec!["A".into()]),
        ]);
        let mut j = Journal::open(&path).unwrap();
        let mut st = state();
        graph.claim("A", "r", "t").unwrap();
        j.append(1, &st, graph.get("A").into_iter(), &Tail::default())
            .unwrap();
        graph
            .complete("A", crate::tasks::Outcome::completed("ok"), "t")
            .unwrap();
        st.warnings.push("w".into());
        j.append(2, &st, graph.get("A").into_iter(), &Tail::default())
            .unwrap();
        // A kill in the middle of beat 3, inside a multi-byte character, written where the
        // lines end (the zeros of the journal's room follow).
        let torn = &"{\"beat\":3,\"state\":{\"task_description\":\"тест".as_bytes()[..40];
        let end = complete_end(written(&std::fs::read(&path).unwrap()));
        j.file.write_torn(torn, end as u64);
        assert!(std::fs::metadata(&path).unwrap().len() > (end + torn.len()) as u64);

        let mut loaded = TaskGraph::new(vec![
            Task::new("A", "a", "r", vec![]),
            Task::new("B", "b", "r", vec!["A".into()]),
        ]);
        assert_eq!(replay_tasks(&path, &mut loaded).unwrap(), Replay::Done);
        assert_eq!(loaded.beat, 2);
        assert_eq!(loaded.get("A").unwrap().status, TaskStatus::Completed);
        assert_eq!(loaded.ready()[0].id, "B");
        // Reopened (a resume), the journal writes its next beat over the torn one.
        let mut j = Journal::open(&path).unwrap();
        graph.claim("B", "r", "t").unwrap();
        j.append(3, &st, graph.get("B").into_iter(), &Tail::default())
            .unwrap();
        assert_eq!(replay_tasks(&path, &mut loaded).unwrap(), Replay::Done);
        assert_eq!(loaded.beat, 3);
        assert_eq!(loaded.get("B").unwrap().status, TaskStatus::InProgress);

        let mut s = state();
        replay_state(&path, &mut s).unwrap();
        assert_eq!((s.beat, s.warnings.clone()), (3, vec!["w".to_string()]));
        // A snapshot at beat 3 makes the journal's lines moot.
        let mut newer = state();
        newer.beat = 3;
        replay_state(&path, &mut newer).unwrap();
        assert!(newer.warnings.is_empty());

        // A snapshot read before it was replaced (at beat 5, the journal emptied and beat 6
        // appended): the journal does not follow on from it, so the reader must read again.
        let gapped = dir.path().join("gapped.jsonl");
        let mut j = Journal::open(&gapped).unwrap();
        j.append(6, &state(), std::iter::empty(), &Tail::default())
            .unwrap();
        let mut old = TaskGraph::new(vec![Task::new("A", "a", "r", vec![])]);
        old.beat = 2;
        assert_eq!(replay_tasks(&gapped, &mut old).unwrap(), Replay::Gap);
    }

    #[test]
    fn an_emptied_journal_keeps_its_room_and_starts_over_at_the_top() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let mut j = Journal::open(&path).unwrap();
        for beat in 1..=3 {
            j.append(beat, &state(), std::iter::empty(), &Tail::default())
                .unwrap();
        }
        let room = std::fs::metadata(&path).unwrap().len();
        assert_eq!(room, 2 * GROW, "one line's room and GROW more");
        j.reset(0).unwrap();
        j.append(4, &state(), std::iter::empty(), &Tail::default())
            .unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), room);
        let bytes = std::fs::read(&path).unwrap();
        let beats: Vec<u64> = complete_lines(&bytes)
            .map(|l| serde_json::from_slice::<LineIn>(l).unwrap().beat)
            .collect();
        assert_eq!(beats, [4]);
        assert_eq!(Journal::open(&path).unwrap().bytes, j.bytes);

        // An emptying cut short (a kill between its zero writes): zeros first, old lines after.
        // The journal reopens empty and the old lines never show behind the new ones.
        let mut j = Journal::open(&path).unwrap();
        for beat in 5..=40 {
            j.append(beat, &state(), std::iter::empty(), &Tail::default())
                .unwrap();
        }
        let cut = j.bytes / 3;
        j.file.zero(0, cut).unwrap();
        let mut j = Journal::open(&path).unwrap();
        assert_eq!(j.bytes, 0);
        j.append(41, &state(), std::iter::empty(), &Tail::default())
            .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let beats: Vec<u64> = complete_lines(&bytes)
            .map(|l| serde_json::from_slice::<LineIn>(l).unwrap().beat)
            .collect();
        assert_eq!(beats, [41]);
        assert!(bytes[j.bytes as usize..].iter().all(|&b| b == 0));
        // Closed, the journal keeps its lines and no room.
        let lines = j.bytes;
        drop(j);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), lines);
    }

    #[test]
    fn the_log_lines_a_beat_carried_are_restored_when_the_log_lost_them() {
        let dir = tempfile::tempdir().unwrap();
        let (journal, log) = (dir.path().join(FILE), dir.path().join("messages.jsonl"));
        let first = "{\"id\":\"MSG-001\"}\n";
        let second = "{\"id\":\"MSG-002\"}\n{\"id\":\"MSG-003\"}\n";
        std::fs::write(&log, format!("{first}{second}")).unwrap();
        let mut j = Journal::open(&journal).unwrap();
        let tail = |at: usize, text: &str| Tail {
            at: at as u64,
            bytes: text.as_bytes().to_vec(),
        };
        j.append(1, &state(), std::iter::empty(), &tail(0, first))
            .unwrap();
        j.append(2, &state(), std::iter::empty(), &tail(first.len(), second))
            .unwrap();
        // Nothing lost: nothing to do.
        assert!(restore_log(&journal, &log).unwrap().is_empty());
        // The disk kept the first beat's lines and half a line of the second's.
        std::fs::write(&log, format!("{first}{{\"id\":\"MS")).unwrap();
        let said = restore_log(&journal, &log).unwrap();
        assert_eq!(said.len(), 1, "{said:?}");
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            format!("{first}{second}")
        );
        // A log that lost lines before what the journal holds is said, not patched.
        std::fs::write(&log, "").unwrap();
        let mut later = Journal::open(&dir.path().join("later.jsonl")).unwrap();
        later
            .append(3, &state(), std::iter::empty(), &tail(first.len(), second))
            .unwrap();
        let said = restore_log(&dir.path().join("later.jsonl"), &log).unwrap();
        assert!(said[0].contains("are lost"), "{said:?}");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "");
    }
}
