//! Where the NATS server is and how to log in. Credentials live in memory only: the URL kept and
//! printed is the redacted one, and nothing here is serialised into a session.

use std::path::PathBuf;
use std::time::Duration;

use super::{RemoteError, Result};

/// How to reach the cluster, from `--nats` and its options.
#[derive(Clone, Default)]
pub struct ClusterSettings {
    /// The server URL without user information (`nats://host:4222`).
    pub url: String,
    pub user: Option<String>,
    pub password: Option<String>,
    /// A token (`nats://TOKEN@host`).
    pub token: Option<String>,
    /// A `.creds` file (JWT and NKey seed), read when connecting.
    pub creds: Option<PathBuf>,
    /// TLS: a CA bundle to trust, and a client certificate and key.
    pub tls_ca: Option<PathBuf>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// Split each executor layer run by test file across this many remote executors (1: no).
    pub shards: usize,
    /// How long the coordinator waits for a lost server before it pauses the session.
    pub wait: Duration,
}

// Never print the password, even in a debug dump.
impl std::fmt::Debug for ClusterSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterSettings")
            .field("url", &self.url)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("creds", &self.creds)
            .field("shards", &self.shards)
            .finish()
    }
}

impl ClusterSettings {
    /// From `--nats URL`: user information in the URL (`nats://user:pass@host`) is taken out of
    /// it, so the URL itself can be shown.
    pub fn new(url: &str) -> Result<Self> {
        let url = url.trim();
        if url.is_empty() {
            return Err(RemoteError::Refused("--nats needs a server URL".into()));
        }
        let (scheme, rest) = match url.split_once("://") {
            Some((s, r)) => (s.to_string(), r),
            None => ("nats".to_string(), url),
        };
        let (userinfo, host) = match rest.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, rest),
        };
        // `user:password@`, or a token alone (`TOKEN@`), as NATS URLs have them.
        let (user, password, token) = match userinfo.map(|u| u.split_once(':')) {
            Some(Some((u, p))) => (Some(u.to_string()), Some(p.to_string()), None),
            Some(None) => (None, None, userinfo.map(str::to_string)),
            None => (None, None, None),
        };
        Ok(ClusterSettings {
            url: format!("{scheme}://{host}"),
            user,
            password,
            token,
            shards: 1,
            wait: Duration::from_secs(60),
            ..Default::default()
        })
    }

    /// Connects, failing fast when the server is not there at the start; once connected the
    /// client reconnects on its own (callers bound how long they wait for it).
    pub async fn connect(&self, name: &str) -> Result<async_nats::Client> {
        let mut options = match &self.creds {
            Some(path) => async_nats::ConnectOptions::with_credentials_file(path)
                .await
                .map_err(|source| RemoteError::Credentials {
                    path: path.clone(),
                    source,
                })?,
            None => async_nats::ConnectOptions::new(),
        };
        if let (Some(user), Some(password)) = (&self.user, &self.password) {
            options = options.user_and_password(user.clone(), password.clone());
        }
        if let Some(token) = &self.token {
            options = options.token(token.clone());
        }
        if let Some(ca) = &self.tls_ca {
            check_readable(ca)?;
            options = options.add_root_certificates(ca.clone()).require_tls(true);
        }
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            check_readable(cert)?;
            check_readable(key)?;
            options = options
                .add_client_certificate(cert.clone(), key.clone())
                .require_tls(true);
        }
        options
            .name(name)
            .connection_timeout(Duration::from_secs(5))
            .request_timeout(Some(Duration::from_secs(10)))
            // A quick, capped backoff: a server back after a restart is found within seconds.
            .reconnect_delay_callback(|attempts| {
                Duration::from_millis((attempts as u64 * 250).min(2000))
            })
            .connect(self.url.as_str())
            .await
            .map_err(|e| RemoteError::Connect {
                url: self.url.clone(),
                problem: e.to_string(),
            })
    }
}

fn check_readable(path: &std::path::Path) -> Result<()> {
    std::fs::metadata(path)
        .map(|_| ())
        .map_err(|source| RemoteError::Credentials {
            path: path.to_path_buf(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_information_leaves_the_url() {
        let s = ClusterSettings::new("nats://tt:s3cret@127.0.0.1:4222").unwrap();
        assert_eq!(s.url, "nats://127.0.0.1:4222");
        assert_eq!(s.user.as_deref(), Some("tt"));
        assert_eq!(s.password.as_deref(), Some("s3cret"));
        assert!(!format!("{s:?}").contains("s3cret"));
        let token = ClusterSettings::new("nats://s3cret-token@host:4222").unwrap();
        assert_eq!(token.url, "nats://host:4222");
        assert_eq!(token.token.as_deref(), Some("s3cret-token"));
        assert!(token.user.is_none() && !format!("{token:?}").contains("s3cret"));
        let plain = ClusterSettings::new("127.0.0.1:4222").unwrap();
        assert_eq!(plain.url, "nats://127.0.0.1:4222");
        assert!(plain.user.is_none());
    }
}
