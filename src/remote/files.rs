//! The session's files on their way to a worker and back.
//!
//! Out: a manifest (session-relative path -> object name) of everything a role may read, the
//! coordinator's state and the workspace copies left out. Back: the files the task wrote or
//! removed in its copy. On both sides a path must be a plain relative path inside the session
//! (no `..`, no root, no symlink on the way), and the coordinator's own files (`session.json`,
//! `tasks.json`, the journal, the log, the outcome records, the workspace) are never written from
//! a worker's answer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{RemoteError, Result};

/// Session-relative path -> object name.
pub type Manifest = BTreeMap<String, String>;

/// Top-level entries of a session no worker gets or writes: the coordinator's state and the
/// rebuildable copies.
const COORDINATOR_OWNED: [&str; 12] = [
    "workspace",
    ".inbox",
    "fixes",
    "agents",
    ".msg",
    ".lock",
    ".outcomes",
    ".remote",
    "session.json",
    "tasks.json",
    "task-analysis.json",
    "role-specs",
];

/// Files the journal replays: a worker reads them (its roles load the graph) but never writes them.
const READ_ONLY: [&str; 4] = [
    crate::session::journal::FILE,
    "session.json",
    "tasks.json",
    "task-analysis.json",
];

/// Whether `rel` is a plain relative path a worker may be sent: `/`-separated names, none of
/// them empty, `.` or `..`.
pub fn is_plain(rel: &str) -> bool {
    !rel.is_empty()
        && !rel.contains('\0')
        && !rel.contains('\\')
        && rel
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

fn top(rel: &str) -> &str {
    rel.split('/').next().unwrap_or(rel)
}

/// Whether the coordinator sends `rel` to a worker.
pub fn is_input(rel: &str) -> bool {
    is_plain(rel)
        && (READ_ONLY.contains(&rel) || !COORDINATOR_OWNED.contains(&top(rel)))
        && !rel.ends_with(".lock")
}

/// Folders a worker's answer may write in: what the generator and the executor make.
const RETURNABLE_TOPS: [&str; 3] = ["tests", "results", "wisdom"];
/// Files of the session's root a worker's answer may write: the shared board and the scenario
/// plan (a generator writes its scenarios' tests into it). The reflective strategy's log is the
/// orchestrator's own (`team::merge`).
const RETURNABLE_FILES: [&str; 2] = ["discoveries.ndjson", "scenarios.csv"];

/// Whether a worker's answer may write or remove `rel` in the session: an allow-list (the
/// deliverables of the roles a worker runs), with no hidden folder or file on the way but
/// `tests/.history`, so neither the coordinator's state, nor the inbox, nor fixes, agent
/// recordings or role files can come from a worker.
pub fn is_returnable(rel: &str) -> bool {
    if !is_plain(rel) || rel.ends_with(".lock") {
        return false;
    }
    if RETURNABLE_FILES.contains(&rel) {
        return true;
    }
    let parts: Vec<&str> = rel.split('/').collect();
    parts.len() >= 2
        && RETURNABLE_TOPS.contains(&parts[0])
        && parts[1..].iter().enumerate().all(|(i, p)| {
            !p.starts_with('.') || (i == 0 && parts[0] == "tests" && *p == ".history")
        })
}

/// Every file under `root` that `keep` accepts, session-relative, sorted; symlinks are skipped.
pub fn list(root: &Path, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let Some(rel) = path
                .strip_prefix(root)
                .ok()
                .and_then(|r| r.to_str())
                .map(str::to_string)
            else {
                continue;
            };
            if kind.is_dir() {
                if !COORDINATOR_OWNED.contains(&top(&rel)) || READ_ONLY.contains(&rel.as_str()) {
                    stack.push(path);
                }
            } else if kind.is_file() && keep(&rel) {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// `root.join(rel)` for a path from the other side: refused unless plain, and unless every
/// folder on the way inside `root` is a real folder (or does not exist yet).
pub fn resolve(root: &Path, rel: &str) -> Result<PathBuf> {
    if !is_plain(rel) {
        return Err(RemoteError::Refused(format!(
            "{rel:?} is not a path inside the session"
        )));
    }
    let mut at = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for part in &parts[..parts.len() - 1] {
        at.push(part);
        if let Ok(meta) = std::fs::symlink_metadata(&at) {
            if !meta.is_dir() {
                return Err(RemoteError::Refused(format!(
                    "{rel:?} goes through {}, which is not a folder",
                    at.display()
                )));
            }
        }
    }
    let path = root.join(rel);
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(RemoteError::Refused(format!("{rel:?} is a symbolic link")));
    }
    Ok(path)
}

/// Writes `bytes` at `rel` under `root`, through a temporary file.
pub fn write(root: &Path, rel: &str, bytes: &[u8]) -> Result<()> {
    let path = resolve(root, rel)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| RemoteError::file(parent, e))?;
    }
    let tmp = path.with_file_name(format!(
        ".{}.tt-part",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file")
    ));
    std::fs::write(&tmp, bytes).map_err(|e| RemoteError::file(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| RemoteError::file(&path, e))
}

/// The text of a returned file with the worker's folders replaced by the coordinator's, so the
/// records name paths that exist here; bytes that are not text (a coverage database) pass as
/// they are.
pub fn relocate(bytes: Vec<u8>, pairs: &[(&str, &str)]) -> Vec<u8> {
    if bytes.starts_with(b"SQLite format 3") {
        return bytes;
    }
    let mut text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => return e.into_bytes(),
    };
    for (from, to) in pairs {
        if !from.is_empty() && from != to {
            text = text.replace(from, to);
        }
    }
    text.into_bytes()
}

/// Merges a returned append-only log (`*.ndjson`, `*.jsonl`) into what is there: the lines here
/// first, then the returned lines not already present, so two tasks' additions both stay.
pub fn merge_lines(here: &[u8], returned: &[u8]) -> Vec<u8> {
    let here_text = String::from_utf8_lossy(here);
    let returned_text = String::from_utf8_lossy(returned);
    let mut seen: std::collections::HashSet<&str> = here_text.lines().collect();
    let mut out: Vec<&str> = here_text.lines().collect();
    for line in returned_text.lines() {
        if seen.insert(line) {
            out.push(line);
        }
    }
    let mut text = out.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    text.into_bytes()
}

pub fn is_append_only(rel: &str) -> bool {
    rel.ends_with(".ndjson") || rel.ends_with(".jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_escape_or_touch_state_are_refused() {
        for bad in [
            "../x",
            "/etc/passwd",
            "tests/../../x",
            "",
            "a/./b",
            "a//b",
            "a\\..\\b",
        ] {
            assert!(!is_returnable(bad), "{bad}");
            assert!(resolve(Path::new("/s"), bad).is_err(), "{bad}");
        }
        for state in [
            "session.json",
            "tasks.json",
            ".journal.jsonl",
            ".msg/messages.jsonl",
            ".outcomes/T.json",
            "workspace/python-L1/x.py",
            "scenarios.csv.lock",
        ] {
            assert!(!is_returnable(state), "{state}");
        }
        for outside in [
            ".inbox/req-1.request.json",
            "fixes/combined.patch",
            "agents/001.json",
            "role-specs/x/role.md",
            "strategy/test-strategy.md",
            "TESTS/L1-unit/x.py",
            "tests/.hidden/x.py",
            "results",
        ] {
            assert!(!is_returnable(outside), "{outside}");
        }
        assert!(is_returnable("tests/L1-unit/test_a.py"));
        assert!(is_returnable("tests/.history/L1-unit/0/test_a.py"));
        assert!(is_returnable("results/run-001.json"));
        assert!(is_returnable("discoveries.ndjson"));
        assert!(is_input("tasks.json") && is_input(".journal.jsonl"));
        assert!(!is_input(".msg/messages.jsonl") && !is_input("workspace/a"));
    }

    #[test]
    fn a_symlink_on_the_way_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let root = tmp.path().join("session");
        std::fs::create_dir_all(&root).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("tests")).unwrap();
        assert!(write(&root, "tests/evil.py", b"x").is_err());
        assert!(!outside.join("evil.py").exists());
        write(&root, "results/run-001.json", b"{}").unwrap();
        assert_eq!(
            std::fs::read(root.join("results/run-001.json")).unwrap(),
            b"{}"
        );
    }

    #[test]
    fn records_are_relocated_and_logs_merged() {
        let text = b"{\"cmd\": \"/w/s/results/junit.xml\"}".to_vec();
        assert_eq!(
            relocate(text, &[("/w/s", "/home/u/s")]),
            b"{\"cmd\": \"/home/u/s/results/junit.xml\"}".to_vec()
        );
        let db = b"SQLite format 3\0/w/s".to_vec();
        assert_eq!(relocate(db.clone(), &[("/w/s", "/x")]), db);
        assert_eq!(merge_lines(b"a\nb\n", b"b\nc\n"), b"a\nb\nc\n".to_vec());
    }
}
