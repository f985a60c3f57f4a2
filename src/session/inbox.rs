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
/// A request the coordinator took (renamed atomically): its poster can no longer withdraw it.
const CLAIMED_SUFFIX: &str = ".claimed.json";
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
    Ok(atomic_write_json(
        &inbox.join(format!("{}{REQUEST_SUFFIX}", request.id)),
        request,
    )?)
}

/// Claims every request waiting, oldest first: each is renamed to `.claimed.json` before it is
/// read, so its poster cannot withdraw it while it is applied. Requests a dead holder of the lock
/// claimed and never answered are taken too. A request that cannot be read is answered with the
/// reason, so it cannot block the ones behind it.
pub fn pending(session: &Path) -> Vec<RoleRequest> {
    let Ok(entries) = std::fs::read_dir(dir(session)) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            name.strip_suffix(REQUEST_SUFFIX)
                .or_else(|| name.strip_suffix(CLAIMED_SUFFIX))
                .map(str::to_string)
        })
        .collect();
    ids.sort();
    ids.dedup();
    let inbox = dir(session);
    let mut out = Vec::new();
    for id in ids {
        let claimed = inbox.join(format!("{id}{CLAIMED_SUFFIX}"));
        let posted = inbox.join(format!("{id}{REQUEST_SUFFIX}"));
        // Withdrawn between the listing and now: not ours to answer.
        if posted.exists() && std::fs::rename(&posted, &claimed).is_err() {
            continue;
        }
        match crate::util::read_json::<RoleRequest>(&claimed) {
            Ok(r) => out.push(r),
            Err(e) => {
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
    for suffix in [CLAIMED_SUFFIX, REQUEST_SUFFIX] {
        let request = inbox.join(format!("{}{suffix}", reply.id));
        match std::fs::remove_file(&request) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(format!("removing {}", request.display()), e)),
        }
    }
    Ok(())
}

/// The reply to `id` once it is there (and taken out of the inbox), polling every 10 ms until
/// `limit` or until `gave_up()` says nobody will answer. `sessions` are the places the session
/// may be by then.
pub fn wait_reply(
    sessions: &[PathBuf],
    id: &str,
    limit: Duration,
    mut gave_up: impl FnMut() -> bool,
) -> Option<Reply> {
    let paths: Vec<PathBuf> = sessions
        .iter()
        .map(|s| dir(s).join(format!("{id}{REPLY_SUFFIX}")))
        .collect();
    let look = || paths.iter().find_map(|p| take_reply(p));
    let deadline = Instant::now() + limit;
    loop {
        if let Some(reply) = look() {
            return Some(reply);
        }
        if Instant::now() >= deadline || gave_up() {
            // One last look: the answer may have landed just now.
            return look();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn take_reply(path: &Path) -> Option<Reply> {
    let reply = crate::util::read_json::<Reply>(path).ok()?;
    let _ = std::fs::remove_file(path);
    Some(reply)
}

/// Takes a request out of the inbox without an answer (its poster handles it itself). False
/// when the coordinator has claimed it already: its answer is coming.
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
        let here = [s.to_path_buf()];
        let bad = wait_reply(&here, "req-0-bad", Duration::ZERO, || true).unwrap();
        assert!(
            !bad.ok && bad.message.contains("req-0-bad.claimed.json"),
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
        assert_eq!(
            wait_reply(&here, &req.id, Duration::ZERO, || true),
            Some(reply)
        );
        assert_eq!(wait_reply(&here, &req.id, Duration::ZERO, || true), None);
        // A claimed request cannot be withdrawn; an unclaimed one can.
        let late = RoleRequest {
            id: new_id(),
            ..req
        };
        post(s, &late).unwrap();
        assert!(withdraw(s, &late.id));
        post(s, &late).unwrap();
        assert_eq!(pending(s).len(), 1);
        assert!(!withdraw(s, &late.id));
    }
}
