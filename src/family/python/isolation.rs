//! What isolates and audits the Python tests team-testing runs and delivers: the audit hook
//! (`ttaudit.py`), the autouse fixture every delivered test carries (`tt_isolation.py`), and the
//! pytest plugin the executor loads for every run (`tt_effects.py`). The generator's helper
//! ships the first two beside itself.

use std::path::{Path, PathBuf};

/// The effect audit the generator's helper and the pytest plugin share.
pub const AUDIT: &str = include_str!("ttaudit.py");
/// The autouse fixture every delivered test runs under (cwd, HOME, XDG, TMPDIR in tmp).
pub const ISOLATION: &str = include_str!("tt_isolation.py");
/// The pytest plugin (`-p tt_effects`) that isolates and audits every test the executor runs.
pub const EFFECTS_PLUGIN: &str = include_str!("tt_effects.py");

/// The plugin could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {cause}", path.display())]
pub struct PluginError {
    pub path: PathBuf,
    pub cause: std::io::Error,
}

/// Writes the effects plugin and what it imports into `dir` (which goes on PYTHONPATH, with
/// `-p tt_effects`).
pub fn write_effects_plugin(dir: &Path) -> Result<(), PluginError> {
    std::fs::create_dir_all(dir).map_err(|cause| PluginError {
        path: dir.to_path_buf(),
        cause,
    })?;
    for (name, text) in [
        ("tt_effects.py", EFFECTS_PLUGIN),
        ("ttaudit.py", AUDIT),
        ("tt_isolation.py", ISOLATION),
    ] {
        let path = dir.join(name);
        crate::util::write_nofollow(&path, text.as_bytes())
            .map_err(|cause| PluginError { path, cause })?;
    }
    Ok(())
}

/// Why the plugin could not be installed, or its record started or cleared.
#[derive(Debug, thiserror::Error)]
pub enum EffectsError {
    #[error(transparent)]
    Plugin(#[from] PluginError),
    #[error("cannot write {}: {cause}", path.display())]
    Record {
        path: PathBuf,
        cause: std::io::Error,
    },
}

fn empty_record(file: &Path) -> Result<(), EffectsError> {
    crate::util::write_nofollow(file, b"").map_err(|cause| EffectsError::Record {
        path: file.to_path_buf(),
        cause,
    })
}

/// Where the plugin is installed for one run, and where it writes.
#[derive(Debug, Clone)]
pub struct EffectsAudit {
    /// Goes on PYTHONPATH (holds tt_effects.py and what it imports).
    pub plugin_dir: PathBuf,
    /// The JSON-lines file the plugin appends to.
    pub file: PathBuf,
    /// pytest's `--basetemp`: every test's tmp_path and isolated folders live under it.
    pub basetemp: PathBuf,
}

impl EffectsAudit {
    /// Writes the plugin into `plugin_dir` and starts an empty record at `file`.
    pub fn prepare(plugin_dir: &Path, file: &Path, basetemp: &Path) -> Result<Self, EffectsError> {
        write_effects_plugin(plugin_dir)?;
        empty_record(file)?;
        Ok(EffectsAudit {
            plugin_dir: plugin_dir.to_path_buf(),
            file: file.to_path_buf(),
            basetemp: basetemp.to_path_buf(),
        })
    }

    /// pytest's arguments for it (after `-m pytest`).
    pub fn pytest_args(&self) -> Vec<String> {
        vec![
            "-p".into(),
            "tt_effects".into(),
            format!("--basetemp={}", self.basetemp.display()),
        ]
    }

    /// The environment the plugin reads.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![("TT_EFFECTS_FILE".into(), self.file.display().to_string())]
    }

    /// What the plugin recorded; lines that do not parse are skipped (a test killed mid-write).
    pub fn read(&self) -> Vec<crate::testing::effects::Effect> {
        crate::testing::effects::read_effects(&self.file)
    }

    /// Forgets what was recorded (before the next candidate is judged).
    pub fn clear(&self) -> Result<(), EffectsError> {
        empty_record(&self.file)
    }
}
