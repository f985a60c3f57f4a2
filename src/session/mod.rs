//! The session directory: layout, session.json, tasks.json, the lock, and finding sessions.

pub mod inbox;
pub mod journal;
mod lock;
mod state;

pub use lock::SessionLock;
pub use state::{ActiveWorker, SessionState, SessionStatus};

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::tasks::TaskGraph;
use crate::util::{atomic_write_json, mkdirs, read_json, slugify};

pub const SLUG_MAX: usize = 40;
/// Where `--completion archive` moves finished sessions, under the sessions root.
pub const ARCHIVE_DIR: &str = "archive";
pub const LAYER_DIRS: [&str; 3] = ["L1-unit", "L2-integration", "L3-e2e"];

/// Paths of one session folder.
#[derive(Debug, Clone)]
pub struct SessionDir {
    pub root: PathBuf,
    pub id: String,
}

impl SessionDir {
    pub fn open(root: PathBuf) -> Result<Self> {
        // Absolute and resolved: archive/ is found from where the session really is.
        let root = root.canonicalize().unwrap_or(root);
        if !root.join("session.json").is_file() {
            return Err(Error::Session(format!(
                "{} is not a session (no session.json)",
                root.display()
            )));
        }
        let id = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(SessionDir { root, id })
    }

    /// Makes `<sessions_root>/<PREFIX>-<slug>-<date>[-N]` with every folder of the layout.
    pub fn create(sessions_root: &Path, prefix: &str, task_text: &str, date: &str) -> Result<Self> {
        mkdirs(sessions_root)?;
        let base = format!("{prefix}-{}-{date}", slugify(task_text, SLUG_MAX));
        let mut n = 1;
        let root = loop {
            let name = if n == 1 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            let candidate = sessions_root.join(&name);
            // An archived session keeps its name too.
            if sessions_root.join(ARCHIVE_DIR).join(&name).exists() {
                n += 1;
                continue;
            }
            // create_dir (not _all) is the atomic claim of the name.
            match std::fs::create_dir(&candidate) {
                Ok(()) => break candidate,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => {
                    return Err(Error::io(
                        format!("creating session {}", candidate.display()),
                        e,
                    ))
                }
            }
        };
        let dir = SessionDir {
            id: root.file_name().unwrap().to_string_lossy().into_owned(),
            root,
        };
        for sub in [
            ".msg",
            "wisdom",
            "strategy",
            "results",
            "analysis",
            "role-specs",
            "workspace",
            ".outcomes",
        ] {
            mkdirs(&dir.root.join(sub))?;
        }
        for layer in LAYER_DIRS {
            mkdirs(&dir.root.join("tests").join(layer))?;
        }
        for (file, title) in [
            ("learnings.md", "Learnings"),
            ("decisions.md", "Decisions"),
            ("conventions.md", "Conventions"),
            ("issues.md", "Issues"),
        ] {
            crate::util::atomic_write(
                &dir.root.join("wisdom").join(file),
                format!("# {title}\n").as_bytes(),
            )?;
        }
        Ok(dir)
    }

    pub fn session_json(&self) -> PathBuf {
        self.root.join("session.json")
    }
    pub fn tasks_json(&self) -> PathBuf {
        self.root.join("tasks.json")
    }
    pub fn analysis_json(&self) -> PathBuf {
        self.root.join("task-analysis.json")
    }
    pub fn messages(&self) -> PathBuf {
        self.root.join(".msg").join("messages.jsonl")
    }
    pub fn meta_json(&self) -> PathBuf {
        self.root.join(".msg").join("meta.json")
    }
    pub fn lock_file(&self) -> PathBuf {
        self.root.join(".lock")
    }
    /// Where a worker records a finished task's outcome before reporting it, so a resume after a
    /// crash does not run it again.
    pub fn outcome_file(&self, task_id: &str) -> PathBuf {
        self.root.join(".outcomes").join(format!("{task_id}.json"))
    }

    /// The coordinator's beat journal (`session::journal`).
    pub fn journal(&self) -> PathBuf {
        self.root.join(journal::FILE)
    }

    /// session.json with the journal's later beats applied.
    pub fn load_state(&self) -> Result<SessionState> {
        let mut state = read_json(&self.session_json())?;
        journal::replay_state(&self.journal(), &mut state)?;
        Ok(state)
    }

    pub fn save_state(&self, state: &SessionState) -> Result<()> {
        atomic_write_json(&self.session_json(), state)
    }

    pub fn load_tasks(&self) -> Result<TaskGraph> {
        // A running coordinator may replace tasks.json and empty the journal between our two
        // reads; the replay sees the gap, and we read again.
        for _ in 0..20 {
            let mut graph: TaskGraph = read_json(&self.tasks_json())?;
            graph.reindex();
            if journal::replay_tasks(&self.journal(), &mut graph)? == journal::Replay::Done {
                return Ok(graph);
            }
        }
        Err(Error::Session(format!(
            "{}: tasks.json and {} kept changing while being read",
            self.root.display(),
            journal::FILE
        )))
    }

    pub fn save_tasks(&self, graph: &TaskGraph) -> Result<()> {
        atomic_write_json(&self.tasks_json(), graph)
    }
}

/// The sessions root: `--sessions-dir`, else `TEAM_TESTING_SESSIONS`, else `<repo>/.workflow/.team`.
pub fn sessions_root(explicit: Option<&Path>, repo: &Path) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_path_buf();
    }
    if let Some(p) = std::env::var_os("TEAM_TESTING_SESSIONS").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    repo.join(".workflow").join(".team")
}

/// Every session folder under `root`, sorted by name.
pub fn list(root: &Path) -> Vec<SessionDir> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out: Vec<SessionDir> = entries
        .flatten()
        .filter(|e| e.path().join("session.json").is_file())
        .filter_map(|e| SessionDir::open(e.path()).ok())
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

impl SessionDir {
    /// Moves the session to `<root>/archive/<id>` and returns its new place. The caller holds the
    /// session's lock; a rename keeps every file (and the lock) as it was.
    pub fn archive(&self) -> Result<SessionDir> {
        let dir = self.sessions_root().join(ARCHIVE_DIR);
        mkdirs(&dir)?;
        self.move_to(dir.join(&self.id), &format!("archive {}", self.id))
    }

    /// An archived session back under the sessions root (deepen, revise and rerun run in place).
    pub fn unarchive(&self) -> Result<SessionDir> {
        if !self.is_archived() {
            return Ok(self.clone());
        }
        self.move_to(
            self.sessions_root().join(&self.id),
            &format!("restore {} from the archive", self.id),
        )
    }

    /// Renames the whole folder (every file and the lock go along); never over an existing one.
    fn move_to(&self, target: PathBuf, what: &str) -> Result<SessionDir> {
        if target.exists() {
            return Err(Error::Session(format!(
                "cannot {what}: {} already exists",
                target.display()
            )));
        }
        std::fs::rename(&self.root, &target).map_err(|e| {
            Error::io(
                format!("moving {} to {}", self.root.display(), target.display()),
                e,
            )
        })?;
        Ok(SessionDir {
            root: target,
            id: self.id.clone(),
        })
    }

    /// The sessions root this session lives under (archived or not).
    pub fn sessions_root(&self) -> PathBuf {
        let parent = self.root.parent().unwrap_or(Path::new("."));
        if self.is_archived() {
            parent.parent().unwrap_or(parent).to_path_buf()
        } else {
            parent.to_path_buf()
        }
    }

    pub fn is_archived(&self) -> bool {
        self.root
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == ARCHIVE_DIR)
    }
}

impl SessionDir {
    /// Removes the temp files (`.<name>.tmp-<pid>`) that an atomic write of a dead process left
    /// in the session's state folders. Call with the lock held. Returns what it removed.
    pub fn sweep_stale_temps(&self) -> Vec<PathBuf> {
        let mut removed = Vec::new();
        for dir in [
            self.root.clone(),
            self.root.join(".msg"),
            self.root.join(".outcomes"),
        ] {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some(pid) = name
                    .strip_prefix('.')
                    .and_then(|n| n.rsplit_once(".tmp-"))
                    .and_then(|(_, pid)| pid.parse::<i32>().ok())
                else {
                    continue;
                };
                // SAFETY: signal 0 only checks that the process exists.
                let alive = pid > 0 && unsafe { libc::kill(pid, 0) } == 0;
                if !alive && std::fs::remove_file(e.path()).is_ok() {
                    removed.push(e.path());
                }
            }
        }
        removed
    }
}

/// Every session under `root/archive/`, sorted by name.
pub fn list_archived(root: &Path) -> Vec<SessionDir> {
    list(&root.join(ARCHIVE_DIR))
}

/// SESSION as given on the command line: a path, an id under the root, or (None) the one
/// active or paused session.
pub fn resolve(root: &Path, arg: Option<&str>) -> Result<SessionDir> {
    match arg {
        Some(a) => {
            let as_path = Path::new(a);
            if as_path.join("session.json").is_file() {
                return SessionDir::open(as_path.to_path_buf());
            }
            let under = root.join(a);
            if under.join("session.json").is_file() {
                return SessionDir::open(under);
            }
            // Archived sessions stay readable (status, log, report, apply) under archive/.
            let archived = root.join(ARCHIVE_DIR).join(a);
            if !a.contains('/') && archived.join("session.json").is_file() {
                return SessionDir::open(archived);
            }
            let known: Vec<String> = list(root).into_iter().map(|s| s.id).collect();
            Err(Error::Session(format!(
                "no session '{a}' under {} (sessions: {})",
                root.display(),
                if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                }
            )))
        }
        None => {
            let mut all = list(root);
            if all.is_empty() {
                // Only archived sessions: the one there, if there is one.
                all = list_archived(root);
            }
            let open: Vec<&SessionDir> = all
                .iter()
                .filter(|s| {
                    s.load_state().is_ok_and(|st| {
                        matches!(st.status, SessionStatus::Active | SessionStatus::Paused)
                    })
                })
                .collect();
            match open.as_slice() {
                [one] => Ok((*one).clone()),
                [] if all.len() == 1 => Ok(all[0].clone()),
                [] => Err(Error::Session(format!(
                    "no active or paused session under {}{}; name one of: {}",
                    root.display(),
                    "",
                    if all.is_empty() {
                        "none".into()
                    } else {
                        all.iter()
                            .map(|s| s.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ))),
                many => Err(Error::Session(format!(
                    "several sessions are active or paused under {}; name one of: {}",
                    root.display(),
                    many.iter()
                        .map(|s| s.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))),
            }
        }
    }
}
