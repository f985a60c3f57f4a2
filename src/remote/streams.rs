//! The two streams and how both sides use them: the work queue of tasks and the log of events.
//! Either side may be first on a fresh server, so both make sure the streams exist.

use std::time::{Duration, Instant};

use async_nats::jetstream::consumer::{pull, AckPolicy, DeliverPolicy};
use async_nats::jetstream::stream::{Config, RetentionPolicy, Stream};
use async_nats::jetstream::Context;

use super::names::{self, DUPLICATE_WINDOW_S, EVENT_STREAM, TASK_STREAM};
use super::{RemoteError, Result};

/// Events are kept a week: a coordinator resumed within it still finds what workers sent.
const EVENTS_KEPT: Duration = Duration::from_secs(7 * 24 * 3600);
/// How many times a task is handed out before NATS gives up on it (the coordinator's own
/// timeout then fails the attempt, and the scheduler retries it as a new one).
pub const MAX_DELIVER: i64 = 5;

pub async fn tasks(js: &Context) -> Result<Stream> {
    let config = Config {
        name: TASK_STREAM.into(),
        subjects: vec!["tt.tasks.>".into()],
        retention: RetentionPolicy::WorkQueue,
        // A task nobody took within a day belongs to a run that has moved on.
        max_age: Duration::from_secs(24 * 3600),
        duplicate_window: Duration::from_secs(DUPLICATE_WINDOW_S),
        ..Default::default()
    };
    stream(js, config, "creating the task queue").await
}

pub async fn events(js: &Context) -> Result<Stream> {
    let config = Config {
        name: EVENT_STREAM.into(),
        subjects: vec!["tt.events.>".into()],
        max_age: EVENTS_KEPT,
        duplicate_window: Duration::from_secs(DUPLICATE_WINDOW_S),
        ..Default::default()
    };
    stream(js, config, "creating the event stream").await
}

/// Tries to create a stream again when the server did not answer in time: a busy server at
/// start (JetStream recovering its store) is no reason to give up.
async fn stream(js: &Context, config: Config, what: &str) -> Result<Stream> {
    let mut tries = 0;
    loop {
        tries += 1;
        match js.get_or_create_stream(config.clone()).await {
            Ok(stream) => return Ok(stream),
            Err(e) if tries < 3 && e.to_string().contains("timed out") => {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => return Err(RemoteError::nats(what, e)),
        }
    }
}

/// The work queue's consumer for `role`: every worker of the role pulls from it, so each task
/// goes to one of them; one not acknowledged within `ack_wait` goes to another.
pub async fn role_pull(
    stream: &Stream,
    role: &str,
    ack_wait: Duration,
) -> Result<async_nats::jetstream::consumer::Consumer<pull::Config>> {
    let name = names::role_consumer(role);
    stream
        .get_or_create_consumer(
            &name,
            pull::Config {
                durable_name: Some(name.clone()),
                filter_subject: names::task_subject(role),
                ack_policy: AckPolicy::Explicit,
                ack_wait,
                max_deliver: MAX_DELIVER,
                ..Default::default()
            },
        )
        .await
        .map_err(|e| RemoteError::nats(format!("the {role} queue's consumer"), e))
}

/// The coordinator's durable consumer of one session's events.
pub async fn session_pull(
    stream: &Stream,
    session: &str,
) -> Result<async_nats::jetstream::consumer::Consumer<pull::Config>> {
    let name = names::session_consumer(session);
    stream
        .get_or_create_consumer(
            &name,
            pull::Config {
                durable_name: Some(name.clone()),
                filter_subject: names::event_subject(session),
                ack_policy: AckPolicy::Explicit,
                deliver_policy: DeliverPolicy::All,
                ack_wait: Duration::from_secs(60),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| RemoteError::nats("the session's event consumer", e))
}

/// Publishes `payload` and waits until the stream has stored it, retrying through a lost
/// connection until `within` has passed. `id` makes a second publish of the same thing (a retry,
/// a redelivered task's second outcome) a no-op in the stream. Returns the stream sequence.
pub async fn publish_durable(
    js: &Context,
    subject: &str,
    id: &str,
    payload: Vec<u8>,
    within: Duration,
) -> Result<u64> {
    let deadline = Instant::now() + within;
    loop {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(async_nats::header::NATS_MESSAGE_ID, id);
        let problem = match js
            .publish_with_headers(subject.to_string(), headers, payload.clone().into())
            .await
        {
            Ok(ack) => match ack.await {
                Ok(ack) => return Ok(ack.sequence),
                Err(e) => e.to_string(),
            },
            Err(e) => e.to_string(),
        };
        if Instant::now() >= deadline {
            return Err(RemoteError::nats(
                format!("publishing to {subject}"),
                problem,
            ));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
