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
