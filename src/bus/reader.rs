//! Reading messages.jsonl: tolerant of garbage lines (reported, not fatal), and following the file
//! as it grows.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use super::message::Record;

/// Why the log could not be read or followed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("reading {}: {cause}", path.display())]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("cannot watch {}: {cause}", path.display())]
    Watch { path: PathBuf, cause: notify::Error },
}

type Result<T, E = ReadError> = std::result::Result<T, E>;

/// A line that did not parse, with its 1-based line number.
#[derive(Debug, Clone)]
pub struct BadLine {
    pub line: usize,
    pub problem: String,
}

/// Every record in the file; a missing file is an empty log.
pub fn read_all(path: &Path) -> Result<(Vec<Record>, Vec<BadLine>)> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => {
            return Err(ReadError::Read {
                path: path.to_path_buf(),
                cause: e,
            })
        }
    };
    let mut records = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in BufReader::new(file).split(b'\n').enumerate() {
        let line = line.map_err(|e| ReadError::Read {
            path: path.to_path_buf(),
            cause: e,
        })?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Record>(&line) {
            Ok(r) => records.push(r),
            Err(e) => bad.push(BadLine {
                line: i + 1,
                problem: e.to_string(),
            }),
        }
    }
    Ok((records, bad))
}

/// Bytes read from the log at a time.
const CHUNK: usize = 1 << 20;
/// The longest line a reader keeps (a message is a few KiB; this is garbage).
pub const MAX_LINE: usize = 16 << 20;

/// Follows a growing log: yields each complete new line's record once, in order.
pub struct Follower {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
    /// The line being read is longer than [`MAX_LINE`]: its bytes are dropped.
    overlong: bool,
    line_no: usize,
    events: mpsc::Receiver<()>,
    /// None for a one-off read of the tail.
    _watcher: Option<notify::RecommendedWatcher>,
}

/// First and last non-blank bytes are braces: a record, or at worst a damaged one worth decoding.
fn looks_like_object(line: &[u8]) -> bool {
    let mut bytes = line.iter().filter(|b| !b.is_ascii_whitespace());
    bytes.next() == Some(&b'{') && bytes.next_back() == Some(&b'}')
}

impl Follower {
    /// Starts at byte `offset` (0 = the beginning) and line number `line_no`; also wakes on changes
    /// in the folders `also_watch` (the session folder, to see it end).
    pub fn new(path: &Path, offset: u64, line_no: usize, also_watch: &[&Path]) -> Result<Self> {
        let (tx, rx) = mpsc::channel();
        let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            // Not on reads (our own included): only a change is worth a look.
            if !res.as_ref().is_ok_and(|e| e.kind.is_access()) {
                let _ = tx.send(());
            }
        })
        .map_err(|e| ReadError::Watch {
            path: path.to_path_buf(),
            cause: e,
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        watcher
            .watch(dir, RecursiveMode::NonRecursive)
            .map_err(|e| ReadError::Watch {
                path: dir.to_path_buf(),
                cause: e,
            })?;
        for extra in also_watch {
            watcher
                .watch(extra, RecursiveMode::NonRecursive)
                .map_err(|e| ReadError::Watch {
                    path: extra.to_path_buf(),
                    cause: e,
                })?;
        }
        Ok(Follower {
            path: path.to_path_buf(),
            offset,
            partial: Vec::new(),
            overlong: false,
            line_no,
            events: rx,
            _watcher: Some(watcher),
        })
    }

    /// New complete records since the last call (garbage lines are reported and skipped).
    pub fn poll_new(&mut self) -> Result<(Vec<Record>, Vec<BadLine>)> {
        let mut records = Vec::new();
        let mut bad = Vec::new();
        self.poll_each(|line| match line {
            Ok(r) => records.push(r),
            Err(b) => bad.push(b),
        })?;
        Ok((records, bad))
    }

    /// Hands each complete new line to `each`, in order, reading the file in chunks: memory stays
    /// bounded by one chunk and one line however large the log (a line longer than
    /// [`MAX_LINE`] is reported as bad and skipped). Returns how many lines it handed over.
    pub fn poll_each(&mut self, each: impl FnMut(Result<Record, BadLine>)) -> Result<usize> {
        self.poll_each_where(|_| true, each)
    }

    /// [`Follower::poll_each`] for the lines `wanted` accepts from their raw bytes; the others are
    /// not decoded (a query reads a large log at the speed of a byte scan). A skipped line that
    /// is not even shaped like a JSON object is still reported as bad.
    pub fn poll_each_where(
        &mut self,
        wanted: impl Fn(&[u8]) -> bool,
        mut each: impl FnMut(Result<Record, BadLine>),
    ) -> Result<usize> {
        let io = |e| ReadError::Read {
            path: self.path.to_path_buf(),
            cause: e,
        };
        let mut file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(io(e)),
        };
        let len = file.metadata().map_err(io)?.len();
        if len < self.offset {
            // Truncated (a torn line repaired): re-read from where the file now ends.
            self.offset = len;
            self.partial.clear();
            self.overlong = false;
        }
        file.seek(SeekFrom::Start(self.offset)).map_err(io)?;
        let mut chunk = vec![0u8; CHUNK];
        let mut handed = 0;
        loop {
            let n = file.read(&mut chunk).map_err(io)?;
            if n == 0 {
                break;
            }
            self.offset += n as u64;
            let mut start = 0;
            while let Some(i) = memchr::memchr(b'\n', &chunk[start..n]) {
                let end = start + i;
                self.line_no += 1;
                let line: &[u8] = if self.partial.is_empty() {
                    &chunk[start..end]
                } else {
                    self.partial.extend_from_slice(&chunk[start..end]);
                    &self.partial
                };
                let parsed = if std::mem::take(&mut self.overlong) {
                    Some(Err(BadLine {
                        line: self.line_no,
                        problem: format!("a line over {MAX_LINE} bytes"),
                    }))
                } else if line.iter().all(u8::is_ascii_whitespace) {
                    None
                } else if !wanted(line) {
                    (!looks_like_object(line)).then(|| {
                        Err(BadLine {
                            line: self.line_no,
                            problem: "not a JSON object".into(),
                        })
                    })
                } else {
                    Some(serde_json::from_slice::<Record>(line).map_err(|e| BadLine {
                        line: self.line_no,
                        problem: e.to_string(),
                    }))
                };
                self.partial.clear();
                if let Some(p) = parsed {
                    each(p);
                    handed += 1;
                }
                start = end + 1;
            }
            // The rest of the chunk begins a line that ends in a later one.
            let rest = &chunk[start..n];
            if self.partial.len() + rest.len() > MAX_LINE {
                self.overlong = true;
                self.partial.clear();
            } else if !self.overlong {
                self.partial.extend_from_slice(rest);
            }
        }
        Ok(handed)
    }

    /// The last `max_bytes` of the log at most, from its first complete line: what is recent,
    /// read in time independent of the log's size.
    pub fn read_tail(path: &Path, max_bytes: u64) -> Result<(Vec<Record>, Vec<BadLine>)> {
        let io = |e| ReadError::Read {
            path: path.to_path_buf(),
            cause: e,
        };
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Vec::new(), Vec::new()))
            }
            Err(e) => return Err(io(e)),
        };
        let len = file.metadata().map_err(io)?.len();
        let start = len.saturating_sub(max_bytes);
        let mut skip = 0;
        if start > 0 {
            // Begin after the line the window cuts into.
            file.seek(SeekFrom::Start(start - 1)).map_err(io)?;
            let mut head = Vec::new();
            BufReader::new((&mut file).take(MAX_LINE as u64))
                .read_until(b'\n', &mut head)
                .map_err(io)?;
            skip = head.len() as u64;
        }
        let mut tail = Follower {
            path: path.to_path_buf(),
            offset: start.saturating_sub(1) + skip,
            partial: Vec::new(),
            overlong: false,
            line_no: 0,
            events: mpsc::channel().1,
            _watcher: None,
        };
        tail.poll_new()
    }

    /// Waits for a change to the folder, at most `timeout`. Returns false on timeout.
    pub fn wait(&self, timeout: Duration) -> bool {
        let got = self.events.recv_timeout(timeout).is_ok();
        while self.events.try_recv().is_ok() {}
        got
    }
}
