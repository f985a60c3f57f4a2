//! The one reader of a session's run records.

use std::path::{Path, PathBuf};

use super::RunRecord;
use crate::util::read_json;

/// Why a session file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// Unreadable or not a record (the message names the file).
    #[error("{0}")]
    Unreadable(#[from] crate::util::FileError),
}

/// The run records of a session, in file-name order (run-001 first), and the files that are
/// not records.
#[derive(Debug, Default)]
pub struct SessionResults {
    /// (file name such as `run-001.json`, record).
    pub runs: Vec<(String, RunRecord)>,
    pub unreadable: Vec<(String, ArtifactError)>,
}

impl SessionResults {
    /// The records of `layer` that list their tests (an env_issue record lists none), in order.
    pub fn of_layer<'a>(&'a self, layer: &'a str) -> impl Iterator<Item = &'a RunRecord> + 'a {
        self.runs
            .iter()
            .map(|(_, r)| r)
            .filter(move |r| r.layer == layer && r.has_tests())
    }
}

/// `run-NNN.json` (what the executor writes under `results/`).
pub fn is_run_file(name: &str) -> bool {
    name.starts_with("run-") && name.ends_with(".json")
}

/// Reads every `results/run-*.json` of the session folder. A missing results folder has no runs.
pub fn runs(session_dir: &Path) -> SessionResults {
    let dir = results_dir(session_dir);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| is_run_file(n))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out = SessionResults::default();
    for name in names {
        match read_run(&dir.join(&name)) {
            Ok(r) => out.runs.push((name, r)),
            Err(e) => out.unreadable.push((name, e)),
        }
    }
    out
}

/// Reads one run record.
pub fn read_run(path: &Path) -> Result<RunRecord, ArtifactError> {
    Ok(read_json(path)?)
}

fn results_dir(session_dir: &Path) -> PathBuf {
    session_dir.join("results")
}
