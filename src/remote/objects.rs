//! The object store, content-addressed: an object's name is the sha256 of its bytes, so the same
//! file (a repository bundle, a strategy, a test) is sent once however many tasks use it, and a
//! worker keeps what it fetched in a cache folder, checked against the name on the way in.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_nats::jetstream::object_store::{Config, ObjectStore};
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;

use super::names::OBJECT_BUCKET;
use super::{RemoteError, Result};

/// The bucket, and the names this process already knows are in it.
pub struct Objects {
    store: ObjectStore,
    known: Mutex<HashSet<String>>,
}

/// The name of bytes: `sha256-<hex>`.
pub fn name_of(bytes: &[u8]) -> String {
    format!("sha256-{:x}", Sha256::digest(bytes))
}

impl Objects {
    pub async fn open(js: &async_nats::jetstream::Context) -> Result<Self> {
        let store = match js.get_object_store(OBJECT_BUCKET).await {
            Ok(s) => s,
            Err(_) => js
                .create_object_store(Config {
                    bucket: OBJECT_BUCKET.into(),
                    description: Some("team-testing: bundles and session files by hash".into()),
                    // Re-sent when needed after that (a `put` checks first).
                    max_age: std::time::Duration::from_secs(7 * 24 * 3600),
                    ..Default::default()
                })
                .await
                .map_err(|e| RemoteError::nats("creating the object store", e))?,
        };
        Ok(Objects {
            store,
            known: Mutex::new(HashSet::new()),
        })
    }

    /// Stores `bytes` unless an object of that content is there already; returns its name.
    pub async fn put(&self, bytes: &[u8]) -> Result<String> {
        let name = name_of(bytes);
        if self.known.lock().is_ok_and(|k| k.contains(&name)) {
            return Ok(name);
        }
        if self.store.info(&name).await.is_err() {
            let mut reader = bytes;
            self.store
                .put(name.as_str(), &mut reader)
                .await
                .map_err(|e| RemoteError::nats(format!("storing {name}"), e))?;
        }
        if let Ok(mut known) = self.known.lock() {
            known.insert(name.clone());
        }
        Ok(name)
    }

    pub async fn put_file(&self, path: &Path) -> Result<String> {
        let bytes = tokio::fs::read(path)
            .await
            .map_err(|e| RemoteError::file(path, e))?;
        self.put(&bytes).await
    }

    /// The object's bytes, from `cache` when fetched before; a fetched object whose content does
    /// not match its name is refused.
    pub async fn get(&self, name: &str, cache: &Path) -> Result<Vec<u8>> {
        let path = cached_path(cache, name)?;
        if let Ok(bytes) = tokio::fs::read(&path).await {
            return Ok(bytes);
        }
        let mut object = self
            .store
            .get(name)
            .await
            .map_err(|e| RemoteError::nats(format!("fetching {name}"), e))?;
        let mut bytes = Vec::new();
        object
            .read_to_end(&mut bytes)
            .await
            .map_err(|e| RemoteError::nats(format!("reading {name}"), e))?;
        if name_of(&bytes) != name {
            return Err(RemoteError::Refused(format!(
                "object {name} does not hold what its name says"
            )));
        }
        let tmp = path.with_extension("part");
        let _ = tokio::fs::create_dir_all(cache).await;
        if tokio::fs::write(&tmp, &bytes).await.is_ok() {
            let _ = tokio::fs::rename(&tmp, &path).await;
        }
        Ok(bytes)
    }
}

/// Where `name` is cached; a name that is not a hash is refused (it becomes a file name).
fn cached_path(cache: &Path, name: &str) -> Result<PathBuf> {
    let hex = name.strip_prefix("sha256-").unwrap_or("");
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(RemoteError::Refused(format!(
            "{name:?} is not an object name"
        )));
    }
    Ok(cache.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hash_names_become_cache_files() {
        let cache = Path::new("/cache");
        let good = name_of(b"abc");
        assert_eq!(cached_path(cache, &good).unwrap(), cache.join(&good));
        assert!(cached_path(cache, "../../etc/passwd").is_err());
        assert!(cached_path(cache, "sha256-../x").is_err());
    }
}
