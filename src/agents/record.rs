//! Every agent call is recorded in the session (`agents/NNN.json`), and a session can be replayed:
//! a call whose prompt hash matches a recorded one gets that answer, with no backend involved.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One call, as recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    pub role: String,
    pub task_id: String,
    pub backend: String,
    pub prompt_hash: String,
    pub prompt: String,
    /// The answer text (stdout for a cli backend), when there was one.
    pub answer: Option<String>,
    /// The files the answer gave (relative to the layer's folder) and their content.
    pub files: Vec<RecordedFile>,
    pub duration_s: f64,
    pub tokens_in: Option<u64>,
    pub tokens_out: Option<u64>,
    /// Why the call gave nothing usable, when it did not.
    pub error: Option<String>,
    /// The answer came from a recording, not from the backend.
    pub replayed: bool,
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedFile {
    pub path: String,
    pub content: String,
}

/// sha256 of the prompt, hex.
pub fn prompt_hash(prompt: &str) -> String {
    sha256_hex(prompt.as_bytes())
}

/// sha256 of `bytes`, hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes `record` as the next free `agents/NNN.json` of `session` (safe with several workers:
/// each number is taken with create_new).
pub fn save(session: &Path, record: &CallRecord) -> std::io::Result<PathBuf> {
    let dir = session.join("agents");
    std::fs::create_dir_all(&dir)?;
    let bytes = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
    let start = std::fs::read_dir(&dir)?.flatten().count() + 1;
    for n in start..start + 10_000 {
        let path = dir.join(format!("{n:03}.json"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut f) => {
                f.write_all(&bytes)?;
                f.sync_all()?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free record number"))
}

/// Every record of a session's `agents/` folder, in number order.
pub fn load_all(agents_dir: &Path) -> Vec<CallRecord> {
    let mut paths: Vec<(u64, PathBuf)> = std::fs::read_dir(agents_dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter_map(|p| {
                    let n = p.file_stem()?.to_str()?.parse::<u64>().ok()?;
                    Some((n, p))
                })
                .collect()
        })
        .unwrap_or_default();
    // By number: 1000.json comes after 999.json.
    paths.sort();
    let paths: Vec<PathBuf> = paths.into_iter().map(|(_, p)| p).collect();
    paths
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .filter_map(|b| serde_json::from_slice(&b).ok())
        .collect()
}

/// The recorded answer to `hash` (the first that gave files, else the first with an answer).
pub fn find(agents_dir: &Path, hash: &str) -> Option<CallRecord> {
    let all: Vec<CallRecord> = load_all(agents_dir)
        .into_iter()
        .filter(|r| r.prompt_hash == hash && (r.answer.is_some() || !r.files.is_empty()))
        .collect();
    all.iter()
        .find(|r| !r.files.is_empty())
        .or(all.first())
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_numbered_and_found_by_prompt_hash() {
        let dir = tempfile::tempdir().unwrap();
        let hash = prompt_hash("write tests");
        assert_eq!(hash.len(), 64);
        let failed = CallRecord {
            prompt_hash: hash.clone(),
            error: Some("timeout".into()),
            ..Default::default()
        };
        let good = CallRecord {
            prompt_hash: hash.clone(),
            files: vec![RecordedFile {
                path: "test_a.py".into(),
                content: "x".into(),
            }],
            ..Default::default()
        };
        assert!(save(dir.path(), &failed)
            .unwrap()
            .ends_with("agents/001.json"));
        assert!(save(dir.path(), &good)
            .unwrap()
            .ends_with("agents/002.json"));
        let found = find(&dir.path().join("agents"), &hash).unwrap();
        assert_eq!(found.files.len(), 1);
        assert!(find(&dir.path().join("agents"), "other").is_none());
    }
}
