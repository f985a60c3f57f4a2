//! The completion action of a pipeline whose every task is done: archive it in place, or keep
//! it paused. Each is a state change logged like any other.

use crate::bus::{Message, Payload, Writer};
use crate::error::{Error, Result};
use crate::roles::{RoleSource, RoleSpec};
use crate::session::{CompletionAction, SessionDir, SessionStatus};

/// What the user (or `-y`, or `--completion`) chose once every task was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Archive,
    Keep,
    /// Add the next layer (or raise a target) and run it in the same session.
    Deepen,
}

/// What the completion action did.
#[derive(Debug, Clone, PartialEq)]
pub enum Done {
    /// Archived in place; the bytes the rebuildable copies took.
    Archived {
        freed: u64,
    },
    Kept,
    /// A new layer was added; the driver runs it (the string says what was added).
    Deepened(String),
}

impl Done {
    pub fn label(&self) -> &'static str {
        match self {
            Done::Archived { .. } => "archived",
            Done::Kept => "kept",
            Done::Deepened(_) => "deepened",
        }
    }
}

/// Archives the session where it is: status `archived` (session.json and, through the logged
/// message, meta.json), pending `roles add` requests answered, rebuildable copies removed.
pub fn archive(session: &SessionDir) -> Result<Done> {
    let mut state = session.load_state()?;
    state.status = SessionStatus::Archived;
    state.completion_action = CompletionAction::Archive;
    state.pid = None;
    // The message first: meta.json (CCW's `team_msg` reads its status) follows it.
    log_completion(session, "archived", "archived")?;
    session.save_state(&state)?;
    refuse_pending_requests(session);
    Ok(Done::Archived {
        freed: session.clean_rebuildable(),
    })
}

/// Keeps the session paused and resumable.
pub fn keep(session: &SessionDir) -> Result<Done> {
    let mut state = session.load_state()?;
    state.status = SessionStatus::Paused;
    state.completion_action = CompletionAction::Keep;
    state.pid = None;
    // The message first: a `log --follow` ends once the status is no longer active.
    log_completion(session, "paused", "kept")?;
    session.save_state(&state)?;
    Ok(Done::Kept)
}

/// `roles add` requests that came after the last beat: the session is archived, so they are
/// answered (refused) rather than applied some day later by a run nobody asked for.
fn refuse_pending_requests(session: &SessionDir) {
    for request in crate::session::inbox::pending(&session.root) {
        // The same request again, offline: it adds the role to the archived session.
        let name = std::fs::read_to_string(&request.spec)
            .ok()
            .and_then(|text| RoleSpec::parse(&text, &request.spec, RoleSource::Builtin).ok())
            .map(|spec| spec.name)
            .unwrap_or_else(|| "ROLE".into());
        let spec = request.spec.to_string_lossy().into_owned();
        let again =
            crate::hint::with_session_option(session, &["roles", "add", &name, "--spec", &spec]);
        let _ = crate::session::inbox::answer(
            &session.root,
            &crate::session::inbox::Reply {
                id: request.id,
                ok: false,
                message: format!(
                    "session {} finished and was archived before the request was applied; \
                     {again} adds the role to it now",
                    session.id
                ),
                task_id: None,
            },
        );
    }
}

/// The completion action is a state change like any other: one message in the log, and the
/// session status in meta.json follows.
fn log_completion(session: &SessionDir, status: &str, action: &str) -> Result<()> {
    let mut data = serde_json::Map::new();
    data.insert("status".into(), serde_json::json!(status));
    data.insert("completion_action".into(), serde_json::json!(action));
    log_message(
        session,
        Message::new(
            "coordinator",
            "coordinator",
            format!("[coordinator] session {action}"),
            Payload::StateUpdate(data),
        ),
    )
}

/// Appends one message to the session's log (durably) outside a run: the caller holds the
/// session's lock and acts as its coordinator.
pub fn log_message(session: &SessionDir, message: Message) -> Result<()> {
    session.restore_log()?;
    let writer = Writer::open(&session.messages(), &session.meta_json())?;
    let handle = writer.handle();
    handle.append(&message);
    handle.sync().map_err(Error::MessageLog)?;
    writer.close();
    Ok(())
}
