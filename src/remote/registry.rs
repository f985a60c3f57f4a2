//! Live workers, as a key-value bucket: each worker puts its entry every [`HEARTBEAT`]; an entry
//! not refreshed for [`EXPIRES`] is gone, so the list is of workers alive now.

use std::time::Duration;

use async_nats::jetstream::kv::Store;
use async_nats::jetstream::stream;
use futures_util::StreamExt;

use super::names::WORKERS_BUCKET;
use super::wire::WorkerInfo;
use super::{RemoteError, Result};

pub const HEARTBEAT: Duration = Duration::from_secs(2);
pub const EXPIRES: Duration = Duration::from_secs(10);

pub async fn bucket(js: &async_nats::jetstream::Context) -> Result<Store> {
    if let Ok(store) = js.get_key_value(WORKERS_BUCKET).await {
        return Ok(store);
    }
    // The bucket's stream made by hand, as the client would: its own `create_key_value` first
    // reads the account's limits, a reply Debian's 2.9 server words differently.
    js.get_or_create_stream(stream::Config {
        name: format!("KV_{WORKERS_BUCKET}"),
        description: Some("team-testing: live workers".into()),
        subjects: vec![format!("$KV.{WORKERS_BUCKET}.>")],
        max_messages_per_subject: 1,
        max_age: EXPIRES,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        discard: stream::DiscardPolicy::New,
        ..Default::default()
    })
    .await
    .map_err(|e| RemoteError::nats("creating the workers bucket", e))?;
    js.get_key_value(WORKERS_BUCKET)
        .await
        .map_err(|e| RemoteError::nats("opening the workers bucket", e))
}

pub async fn heartbeat(store: &Store, info: &WorkerInfo) -> Result<()> {
    let bytes = serde_json::to_vec(info).map_err(|e| RemoteError::nats("heartbeat", e))?;
    store
        .put(super::names::token(&info.id), bytes.into())
        .await
        .map(|_| ())
        .map_err(|e| RemoteError::nats("heartbeat", e))
}

pub async fn leave(store: &Store, id: &str) {
    let _ = store.delete(super::names::token(id)).await;
}

/// Every live worker, by name then id.
pub async fn list(store: &Store) -> Result<Vec<WorkerInfo>> {
    let mut keys = store
        .keys()
        .await
        .map_err(|e| RemoteError::nats("listing workers", e))?;
    let mut names = Vec::new();
    while let Some(key) = keys.next().await {
        if let Ok(key) = key {
            names.push(key);
        }
    }
    let mut out = Vec::new();
    for key in names {
        if let Ok(Some(bytes)) = store.get(key).await {
            if let Ok(info) = serde_json::from_slice::<WorkerInfo>(&bytes) {
                out.push(info);
            }
        }
    }
    out.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    Ok(out)
}
