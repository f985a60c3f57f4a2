//! The names the cluster shares: streams, subjects, consumers, buckets. One place, so a worker and
//! a coordinator of the same version always agree.

/// The work queue: one subject per role, each message taken by exactly one worker.
pub const TASK_STREAM: &str = "TT_TASKS";
/// What workers send back: per session, progress, claims and outcomes, in order.
pub const EVENT_STREAM: &str = "TT_EVENTS";
/// Live workers: each heartbeats its entry; an entry not refreshed expires.
pub const WORKERS_BUCKET: &str = "tt_workers";
/// Repository bundles and session files, named by their content's hash.
pub const OBJECT_BUCKET: &str = "tt_objects";

/// How long a published id is remembered: a task or an outcome sent twice within it is stored
/// once (a coordinator re-publishing after a crash, a redelivered worker's second outcome).
pub const DUPLICATE_WINDOW_S: u64 = 600;

pub fn task_subject(role: &str) -> String {
    format!("tt.tasks.{}", token(role))
}

pub fn event_subject(session: &str) -> String {
    format!("tt.events.{}", token(session))
}

/// The work queue's consumer for a role, shared by every worker of the role.
pub fn role_consumer(role: &str) -> String {
    format!("role-{}", token(role))
}

/// The coordinator's durable consumer of a session's events: a resumed coordinator continues it.
pub fn session_consumer(session: &str) -> String {
    format!("coord-{}", token(session))
}

/// A subject or consumer name token: NATS reserves `.`, `*`, `>` and whitespace.
pub fn token(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_single_tokens() {
        assert_eq!(task_subject("generator"), "tt.tasks.generator");
        assert_eq!(event_subject("TST-a.b c>*"), "tt.events.TST-a_b_c__");
        assert_eq!(session_consumer("TST-x"), "coord-TST-x");
    }
}
