//! The session directory: layout, session.json, tasks.json, the lock, and finding sessions.

pub mod dynamic;
pub mod framework;
pub mod git_exclude;
pub mod inbox;
pub mod journal;
mod journal_file;
mod lock;
pub mod scope;
mod state;

pub use lock::SessionLock;
pub use state::{ActiveWorker, CompletionAction, SessionState, SessionStatus};

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::tasks::TaskGraph;
use crate::util::{atomic_write_json, mkdirs, read_json, slugify};

pub const SLUG_MAX: usize = 40;
/// Where earlier versions moved archived sessions, under the sessions root; still read.
pub const ARCHIVE_DIR: &str = "archive";
/// The layers' folders under `tests/` (the layers are the task graph's).
pub use crate::tasks::LAYER_DIRS;

/// Paths of one session folder.
#[derive(Debug, Clone)]
pub struct SessionDir {
    pub root: PathBuf,
    pub id: String,
}

impl SessionDir {
    pub fn open(root: PathBuf) -> Result<Self> {
        // Absolute and resolved: hints and the sessions root are found from where it really is.
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

    /// The message log's lines that only the journal kept, put back before the log is written
    /// again (`journal::restore_log`); what it did, for the user.
    pub fn restore_log(&self) -> Result<Vec<String>> {
        journal::restore_log(&self.journal(), &self.messages())
    }

    /// session.json with the journal's later beats applied.
    pub fn load_state(&self) -> Result<SessionState> {
        let mut state = read_json(&self.session_json())?;
        journal::replay_state(&self.journal(), &mut state)?;
        Ok(state)
    }

    pub fn save_state(&self, state: &SessionState) -> Result<()> {
        Ok(atomic_write_json(&self.session_json(), state)?)
    }

    /// The session is paused (the run stopped short): `resume` picks it up. meta.json's
    /// top-level status follows (the bus writer is closed by then). Best effort: a session
    /// that cannot be written stays as it was.
    pub fn mark_paused(&self) {
        if let Ok(mut state) = self.load_state() {
            state.status = SessionStatus::Paused;
            state.active_workers.clear();
            state.updated_at = crate::util::now_ts();
            let _ = self.save_state(&state);
        }
        let path = self.meta_json();
        let Ok(mut meta) = read_json::<serde_json::Value>(&path) else {
            return;
        };
        if let Some(obj) = meta.as_object_mut() {
            obj.insert("status".into(), serde_json::json!("paused"));
            obj.insert(
                "updated_at".into(),
                serde_json::json!(crate::util::now_ts()),
            );
            let _ = atomic_write_json(&path, &meta);
        }
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
        Ok(atomic_write_json(&self.tasks_json(), graph)?)
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

/// The workspace folder that keeps each layer's generated tests as they were before the
/// analyst's minimization (`workspace/unminimized/<layer>/`).
pub const UNMINIMIZED_DIR: &str = "unminimized";

impl SessionDir {
    /// Archives the session where it is: everything that can be rebuilt (the workspace's copies
    /// of the repository, scratch folders) goes; the deliverables, the log and the state stay
    /// under the same path, so whatever remembered it still finds it. The caller sets the status.
    /// Returns the bytes freed.
    pub fn clean_rebuildable(&self) -> u64 {
        let workspace = self.root.join("workspace");
        let mut freed = 0;
        let Ok(entries) = std::fs::read_dir(&workspace) else {
            return 0;
        };
        // The generated tests as they were before minimization cannot be made again.
        let kept = |e: &std::fs::DirEntry| e.file_name() == UNMINIMIZED_DIR;
        for e in entries.flatten().filter(|e| !kept(e)) {
            let size = tree_size(&e.path());
            let gone = if e.file_type().is_ok_and(|t| t.is_dir()) {
                std::fs::remove_dir_all(e.path())
            } else {
                std::fs::remove_file(e.path())
            };
            if gone.is_ok() {
                freed += size;
            }
        }
        freed
    }

    /// The sessions root this session lives under (also for one an earlier version moved into
    /// `<root>/archive/`).
    pub fn sessions_root(&self) -> PathBuf {
        let parent = self.root.parent().unwrap_or(Path::new("."));
        if self.in_legacy_archive() {
            parent.parent().unwrap_or(parent).to_path_buf()
        } else {
            parent.to_path_buf()
        }
    }

    /// Earlier versions archived by moving the folder to `<root>/archive/<id>`.
    pub fn in_legacy_archive(&self) -> bool {
        self.root
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == ARCHIVE_DIR)
    }

    /// Archived: by status (in place), or moved into archive/ by an earlier version and not
    /// run since (a deepened one that was kept is paused, and counts as live).
    pub fn is_archived(&self) -> bool {
        self.load_state().is_ok_and(|s| match s.status {
            SessionStatus::Archived => true,
            SessionStatus::Completed => self.in_legacy_archive(),
            _ => false,
        })
    }
}

/// Bytes of the files under `path` (symlinks count as themselves, never followed).
fn tree_size(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|rd| rd.flatten().map(|e| tree_size(&e.path())).sum())
        .unwrap_or(0)
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

/// Every session under `root`, then those earlier versions moved into `root/archive/`.
pub fn list_all(root: &Path) -> Vec<SessionDir> {
    let mut all = list(root);
    all.extend(list(&root.join(ARCHIVE_DIR)));
    all
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
            // Sessions an earlier version moved into archive/ are still found by their id.
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
                all = list(&root.join(ARCHIVE_DIR));
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
                [] if all.is_empty() => Err(Error::Session(format!(
                    "no session under {}: start one with `team-testing run \"TASK\"`, or name \
                     another sessions folder with --sessions-dir",
                    root.display()
                ))),
                [] => Err(Error::Session(format!(
                    "no active or paused session under {}; name one of: {}",
                    root.display(),
                    all.iter()
                        .map(|s| s.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
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
