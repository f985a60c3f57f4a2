//! `discoveries.ndjson`: the board roles share across layers and iterations. One JSON line per
//! discovery, `{"type": "...", "data": {...}, "by": role, "at": ts}`, append-only, deduplicated
//! by the seed's keys: a test pattern by its name, a mock setup by its target, a fixture by its
//! name, a blocker by its issue; the convention is a singleton.
//!
//! Agents may write the file themselves, so reading is tolerant: a torn last line, a line that
//! is not a record and a record of an unknown type are skipped, and missing fields are empty.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The board's file name in the session.
pub const FILE: &str = "discoveries.ndjson";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Discovery {
    TestPattern {
        #[serde(default)]
        name: String,
        #[serde(default)]
        file: String,
        #[serde(default)]
        description: String,
    },
    MockSetup {
        #[serde(default)]
        target: String,
        #[serde(default)]
        setup_code: String,
        #[serde(default)]
        file: String,
    },
    Fixture {
        #[serde(default)]
        name: String,
        #[serde(default)]
        schema: String,
        #[serde(default)]
        file: String,
    },
    Convention {
        #[serde(default)]
        describe_style: String,
        #[serde(default)]
        assertion_lib: String,
        #[serde(default)]
        import_pattern: String,
    },
    Blocker {
        #[serde(default)]
        issue: String,
        #[serde(default)]
        severity: String,
        #[serde(default)]
        layer: String,
    },
}

impl Discovery {
    /// The record's `type`.
    pub fn kind(&self) -> &'static str {
        match self {
            Discovery::TestPattern { .. } => "test_pattern",
            Discovery::MockSetup { .. } => "mock_setup",
            Discovery::Fixture { .. } => "fixture",
            Discovery::Convention { .. } => "convention",
            Discovery::Blocker { .. } => "blocker",
        }
    }

    /// The dedup key: the type and `data.name` / `data.target` / `data.name` / nothing (the
    /// convention is a singleton) / `data.issue`, trimmed.
    pub fn key(&self) -> (&'static str, String) {
        let key = match self {
            Discovery::TestPattern { name, .. } | Discovery::Fixture { name, .. } => name,
            Discovery::MockSetup { target, .. } => target,
            Discovery::Blocker { issue, .. } => issue,
            Discovery::Convention { .. } => "",
        };
        (self.kind(), key.trim().to_string())
    }
}

/// One line of the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub discovery: Discovery,
    /// The role (or agent) that wrote it.
    pub by: String,
    /// When, as `util::now_ts` writes it.
    pub at: String,
}

#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    #[error("reading {}: {cause}", path.display())]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("writing {}: {cause}", path.display())]
    Write {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("{}: cannot encode a {kind} discovery: {cause}", path.display())]
    Encode {
        path: PathBuf,
        kind: &'static str,
        cause: serde_json::Error,
    },
}

/// The records in `bytes`, skipping what is not one.
fn parse(bytes: &[u8]) -> Vec<Record> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| {
            let v: Value = serde_json::from_slice(line).ok()?;
            let kind = v.get("type")?.as_str()?;
            let data = v
                .get("data")
                .cloned()
                .unwrap_or_else(|| Value::Object(Default::default()));
            let discovery =
                serde_json::from_value(serde_json::json!({ "type": kind, "data": data })).ok()?;
            let text = |k: &str| {
                v.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            Some(Record {
                discovery,
                by: text("by"),
                at: text("at"),
            })
        })
        .collect()
}

fn encode(path: &Path, by: &str, d: &Discovery) -> Result<Vec<u8>, BoardError> {
    let encode_err = |cause| BoardError::Encode {
        path: path.to_path_buf(),
        kind: d.kind(),
        cause,
    };
    let mut v = serde_json::to_value(d).map_err(encode_err)?;
    if let Value::Object(map) = &mut v {
        map.insert("by".into(), Value::String(by.to_string()));
        map.insert("at".into(), Value::String(crate::util::now_ts()));
    }
    let mut line = serde_json::to_vec(&v).map_err(encode_err)?;
    line.push(b'\n');
    Ok(line)
}

/// Holds an exclusive `flock` on the board while it lives (released when the file closes).
struct Locked(File);

impl Locked {
    fn new(file: File) -> std::io::Result<Locked> {
        loop {
            // SAFETY: flock on a descriptor this struct owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Locked(file));
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// Appends `d` as one line written by `by`, unless a record with its key is on the board
/// already: then nothing is written and the answer is false. The check and the write happen
/// under a lock on the file, so concurrent writers of this process or others do not both add
/// one key. A torn last line left by a crash is ended first, so the new line stands alone.
pub fn append(path: &Path, by: &str, d: &Discovery) -> Result<bool, BoardError> {
    let read_err = |cause| BoardError::Read {
        path: path.to_path_buf(),
        cause,
    };
    let write_err = |cause| BoardError::Write {
        path: path.to_path_buf(),
        cause,
    };
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(write_err)?;
    if !file.metadata().map_err(read_err)?.file_type().is_file() {
        return Err(write_err(std::io::Error::other("not a regular file")));
    }
    let Locked(mut file) = Locked::new(file).map_err(write_err)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(read_err)?;
    let key = d.key();
    if parse(&bytes).iter().any(|r| r.discovery.key() == key) {
        return Ok(false);
    }
    let mut out = Vec::new();
    if bytes.last().is_some_and(|&b| b != b'\n') {
        out.push(b'\n');
    }
    out.extend(encode(path, by, d)?);
    file.write_all(&out).map_err(write_err)?;
    file.sync_data().map_err(write_err)?;
    Ok(true)
}

/// Every record on the board, in the order written; a missing board is an empty one.
pub fn read(path: &Path) -> Result<Vec<Record>, BoardError> {
    match crate::util::read_regular(path) {
        Ok(bytes) => Ok(parse(&bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(cause) => Err(BoardError::Read {
            path: path.to_path_buf(),
            cause,
        }),
    }
}

/// One record per key, the latest written, in the order the keys first appeared (for a board
/// that agents appended to without deduplicating).
pub fn merged(path: &Path) -> Result<Vec<Record>, BoardError> {
    let mut out: Vec<Record> = Vec::new();
    for r in read(path)? {
        let key = r.discovery.key();
        match out.iter_mut().find(|x| x.discovery.key() == key) {
            Some(slot) => *slot = r,
            None => out.push(r),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(name: &str, description: &str) -> Discovery {
        Discovery::TestPattern {
            name: name.into(),
            file: "tests/test_a.py".into(),
            description: description.into(),
        }
    }

    fn convention(lib: &str) -> Discovery {
        Discovery::Convention {
            describe_style: "class TestX".into(),
            assertion_lib: lib.into(),
            import_pattern: "from shop import *".into(),
        }
    }

    #[test]
    fn append_writes_one_line_per_key_and_merges_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        assert!(read(&path).unwrap().is_empty());
        assert!(append(&path, "generator", &pattern("parametrize", "one")).unwrap());
        assert!(!append(&path, "executor", &pattern(" parametrize ", "other")).unwrap());
        assert!(append(&path, "generator", &convention("pytest")).unwrap());
        assert!(!append(&path, "generator", &convention("unittest")).unwrap());
        let mock = Discovery::MockSetup {
            target: "requests.get".into(),
            setup_code: "monkeypatch.setattr(...)".into(),
            file: "tests/conftest.py".into(),
        };
        assert!(append(&path, "generator", &mock).unwrap());
        assert!(!append(&path, "analyst", &mock).unwrap());
        let fixture = Discovery::Fixture {
            name: "parametrize".into(),
            schema: "{}".into(),
            file: String::new(),
        };
        assert!(
            append(&path, "generator", &fixture).unwrap(),
            "keys are per type"
        );
        let blocker = Discovery::Blocker {
            issue: "no network".into(),
            severity: "high".into(),
            layer: "L2".into(),
        };
        assert!(append(&path, "executor", &blocker).unwrap());
        assert!(!append(&path, "executor", &blocker).unwrap());

        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 5);
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(first["type"], "test_pattern");
        assert_eq!(first["data"]["name"], "parametrize");
        assert_eq!(first["data"]["description"], "one");
        assert_eq!(first["by"], "generator");
        assert!(crate::util::parse_ts(first["at"].as_str().unwrap()).is_some());
        let records = read(&path).unwrap();
        assert_eq!(records.len(), 5);
        assert_eq!(records[1].discovery, convention("pytest"));
        assert_eq!(records[4].by, "executor");
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_ended_by_the_next_append() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        append(&path, "generator", &pattern("a", "")).unwrap();
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"type\":\"test_pattern\",\"data\":{\"name\":\"b\"")
            .unwrap();
        drop(f);
        let records = read(&path).unwrap();
        assert_eq!(records.len(), 1);
        // The torn line does not hold key b, and the new line does not join it.
        assert!(append(&path, "generator", &pattern("b", "")).unwrap());
        let names: Vec<String> = read(&path)
            .unwrap()
            .into_iter()
            .map(|r| r.discovery.key().1)
            .collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn merged_keeps_the_latest_per_key_from_a_hand_written_board() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(
            &path,
            concat!(
                "{\"type\":\"convention\",\"data\":{\"assertion_lib\":\"unittest\"},\"by\":\"agent\"}\n",
                "not json\n",
                "{\"type\":\"test_pattern\",\"data\":{\"name\":\"p\",\"description\":\"old\"}}\n",
                "{\"type\":\"wish\",\"data\":{\"name\":\"p\"}}\n",
                "\n",
                "{\"type\":\"test_pattern\",\"data\":{\"name\":\"p\",\"description\":\"new\"},\"by\":\"x\",\"at\":\"t\"}\n",
                "{\"type\":\"convention\",\"data\":{\"assertion_lib\":\"pytest\"}}\n",
            ),
        )
        .unwrap();
        assert_eq!(read(&path).unwrap().len(), 4);
        let m = merged(&path).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(
            m[0].discovery,
            Discovery::Convention {
                describe_style: String::new(),
                assertion_lib: "pytest".into(),
                import_pattern: String::new(),
            }
        );
        assert_eq!(
            m[1].discovery,
            Discovery::TestPattern {
                name: "p".into(),
                file: String::new(),
                description: "new".into(),
            }
        );
        assert_eq!((m[1].by.as_str(), m[1].at.as_str()), ("x", "t"));
        // A duplicate of a hand-written key is not appended.
        assert!(!append(&path, "generator", &convention("nose")).unwrap());
    }
}
