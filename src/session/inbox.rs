//! Requests to the coordinator of a running session from another process (`roles add`): the
//! coordinator owns tasks.json, so a request is a file in `<session>/.inbox/` that it picks up on
//! its next beat (woken by a file watcher) and answers with a reply file.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::util::{atomic_write_json, mkdirs};

pub const INBOX_DIR: &str = ".inbox";
const REQUEST_SUFFIX: &str = ".request.json";
const REPLY_SUFFIX: &str = ".reply.json";

/// `roles add NAME --spec FILE [--after X] [--before Y]`, as the coordinator receives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleRequest {
    pub id: String,
    /// The role file (absolute); a `role.md` brings its folder along.
    pub spec: PathBuf,
    #[serde(default)]
    pub after: Option<String>,
    #[serde(default)]
    pub before: Vec<String>,
    /// `--max-roles N` given with the request.
    #[serde(default)]
    pub max_roles: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub id: String,
    pub ok: bool,
    pub message: String,
    #[serde(default)]
    pub task_id: Option<String>,
}

pub fn dir(session: &Path) -> PathBuf {
    session.join(INBOX_DIR)
}

/// A request id unique among the processes that may post at once.
pub fn new_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("req-{nanos}-{}", std::process::id())
}

/// Writes the request where the coordinator looks (atomically: it never sees half a request).
pub fn post(session: &Path, request: &RoleRequest) -> Result<()> {
    let inbox = dir(session);
    mkdirs(&inbox)?;
    atomic_write_json(
        &inbox.join(format!("{}{REQUEST_SUFFIX}", request.id)),
        request,
    )
}

/// Every request waiting, oldest first. A request that cannot be read is answered with the
/// reason and taken out, so it cannot block the ones behind it.
pub fn pending(session: &Path) -> Vec<RoleRequest> {
    let Ok(entries) = std::fs::read_dir(dir(session)) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(REQUEST_SUFFIX))
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        match crate::util::read_json::<RoleRequest>(&file) {
            Ok(r) => out.push(r),
            Err(e) => {
                let name = file.file_name().unwrap_or_default().to_string_lossy();
                let id = name.trim_end_matches(REQUEST_SUFFIX).to_string();
                let _ = answer(
                    session,
                    &Reply {
                        id,
                        ok: false,
                        message: e.to_string(),
                        task_id: None,
                    },
                );
            }
        }
    }
    out
}

/// Writes the reply, then removes the request: a request is answered exactly once.
pub fn answer(session: &Path, reply: &Reply) -> Result<()> {
    let inbox = dir(session);
    atomic_write_json(&inbox.join(format!("{}{REPLY_SUFFIX}", reply.id)), reply)?;
    let request = inbox.join(format!("{}{REQUEST_SUFFIX}", reply.id));
    match std::fs::remove_file(&request) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(format!("removing {}", request.display()), e)),
    }
}

/// The reply to `id` once it is there (and taken out of the inbox), polling every 50 ms until
/// `limit` or until `gave_up()` says nobody will answer.
pub fn wait_reply(
    session: &Path,
    id: &str,
    limit: Duration,
    mut gave_up: impl FnMut() -> bool,
) -> Option<Reply> {
    let path = dir(session).join(format!("{id}{REPLY_SUFFIX}"));
    let deadline = Instant::now() + limit;
    loop {
        if let Some(reply) = take_reply(&path) {
            return Some(reply);
        }
        if Instant::now() >= deadline || gave_up() {
            // One last look: the answer may have landed just now.
            return take_reply(&path);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn take_reply(path: &Path) -> Option<Reply> {
    let reply = crate::util::read_json::<Reply>(path).ok()?;
    let _ = std::fs::remove_file(path);
    Some(reply)
}

/// Takes a request out of the inbox without an answer (its poster handles it itself).
pub fn withdraw(session: &Path, id: &str) -> bool {
    std::fs::remove_file(dir(session).join(format!("{id}{REQUEST_SUFFIX}"))).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_answered_once_and_a_bad_one_does_not_block_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let s = tmp.path();
        let req = RoleRequest {
            id: new_id(),
            spec: "/x/role.md".into(),
            after: Some("TESTRUN-001".into()),
            before: vec![],
            max_roles: None,
        };
        post(s, &req).unwrap();
        std::fs::write(dir(s).join("req-0-bad.request.json"), "{not json").unwrap();
        let waiting = pending(s);
        assert_eq!(waiting, vec![req.clone()]);
        // The bad one was answered with its problem.
        let bad = wait_reply(s, "req-0-bad", Duration::ZERO, || true).unwrap();
        assert!(
            !bad.ok && bad.message.contains("req-0-bad.request.json"),
            "{bad:?}"
        );
        let reply = Reply {
            id: req.id.clone(),
            ok: true,
            message: "added".into(),
            task_id: Some("LINT-001".into()),
        };
        answer(s, &reply).unwrap();
        assert!(pending(s).is_empty());
        assert_eq!(wait_reply(s, &req.id, Duration::ZERO, || true), Some(reply));
        assert_eq!(wait_reply(s, &req.id, Duration::ZERO, || true), None);
    }
}
