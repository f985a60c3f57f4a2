//! The file-system watch: the second line of defence behind the language's own hooks (Python's
//! audit events), which native code, C extensions and child processes escape.
//!
//! A watched child runs in a world where every write succeeds, into a throwaway layer: each
//! folder of the machine is an overlay whose upper half is a scratch tmpfs, in a mount namespace
//! of its own. Once it ends, the upper halves list exactly what it created, wrote, removed or
//! changed the mode of, wherever that was and whoever did it (Python, a C extension, `rm` in a
//! subprocess), and nothing of it reached the machine. Only the run's own writable folders (its
//! reports and caches, the sandbox's HOME and TMPDIR) are real.
//!
//! Since writes succeed there, a test behaves as it would when run for real, and the executor
//! compares its outcome with the sandboxed run's: a test whose result comes from a denied
//! effect shows up twice.

mod changes;
pub mod layout;
pub mod run;
mod world;

use std::path::PathBuf;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

pub use changes::{Change, Kind, What};

/// The name of the hidden command the wrapper runs as.
pub const WRAPPER_COMMAND: &str = "__watch";

/// What the wrapper needs to build the world, written by the parent for each sandbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WatchConfig {
    /// Folders whose writes are real (the run's reports and caches, the sandbox's own HOME and
    /// TMPDIR): bound into the world as they are, and not watched.
    pub writable: Vec<PathBuf>,
    /// The sandbox's own folder, bound over /dev/shm.
    pub shm: PathBuf,
    /// An empty folder the wrapper mounts its scratch tmpfs on (in its own namespace).
    pub stage: PathBuf,
    /// What the diverted writes may take, MiB.
    pub scratch_mb: u64,
    /// The user's ids on the host, kept inside.
    pub uid: u32,
    pub gid: u32,
}

/// What one watched child changed, as its wrapper wrote it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchReport {
    pub changes: Vec<Change>,
    /// Changes beyond those listed.
    #[serde(default)]
    pub more: usize,
    /// Places that are not watched, and why (bound read-only instead).
    #[serde(default)]
    pub unwatched: Vec<String>,
    /// Why the world could not be built: the command did not run.
    #[serde(default)]
    pub error: Option<String>,
}

/// Why the watch does not work on this machine.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Unavailable(pub String);

/// Whether the watch works on this machine (tried once per process, with this very binary):
/// Ok, or why not.
pub fn support() -> &'static Result<(), Unavailable> {
    static SUPPORT: OnceLock<Result<(), Unavailable>> = OnceLock::new();
    SUPPORT.get_or_init(trial)
}

fn trial() -> Result<(), Unavailable> {
    let no = |why: String| Unavailable(why);
    if std::env::var(super::probe::DISABLE_VAR)
        .unwrap_or_default()
        .split(',')
        .any(|m| m.trim().eq_ignore_ascii_case("watch"))
    {
        return Err(no(format!("switched off by {}", super::probe::DISABLE_VAR)));
    }
    let caps = super::capabilities();
    if !(caps.netns && caps.mountns) {
        return Err(no(
            "it needs the user and mount namespaces this machine does not grant".into(),
        ));
    }
    let exe =
        std::env::current_exe().map_err(|e| no(format!("finding team-testing's binary: {e}")))?;
    let base =
        std::env::temp_dir().join(format!("team-testing-watch-probe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let result = (|| {
        let sandbox = super::Sandbox::watching(
            &super::SandboxSettings::default(),
            &base.join("sandbox"),
            &[],
            &[],
        )
        .map_err(|e| no(e.to_string()))?;
        let exe = exe.to_string_lossy().into_owned();
        let ran = crate::proc::run_sandboxed(
            Some(&sandbox),
            &[&exe, "--version"],
            &base,
            &[],
            None,
            std::time::Duration::from_secs(20),
        )
        .map_err(|e| no(e.to_string()))?;
        let reports = sandbox.take_watch_reports();
        match reports.first() {
            Some(WatchReport { error: Some(e), .. }) => Err(no(e.clone())),
            Some(_) if ran.success() => Ok(()),
            Some(_) => Err(no(format!(
                "the trial run failed: {}",
                crate::util::tail_lines(&ran.stderr, 3)
            ))),
            None => Err(no(format!(
                "the trial run left no report: {}",
                crate::util::tail_lines(&ran.stderr, 3)
            ))),
        }
    })();
    let _ = std::fs::remove_dir_all(&base);
    result
}
