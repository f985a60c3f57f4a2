//! The Python modules a generation round tests: the files in the session's scope that are
//! importable modules and not tests. Shared by the built-in and the agent-backed generator.

use std::path::Path;

use crate::gen::ModuleRef;
use crate::pipeline::scope::ChangeKind;
use crate::session::scope::load_scope;
use crate::session::SessionDir;
use crate::team::error::RoleError;

/// The modules in scope of `session`, whose repository is `repo`: the changed (or, with no
/// change, all) Python files that are importable modules and not tests.
pub(crate) fn modules_of(session: &SessionDir, repo: &Path) -> Result<Vec<ModuleRef>, RoleError> {
    let scope = load_scope(session)?;
    let files: Vec<String> = scope
        .files
        .iter()
        .filter(|f| f.kind != ChangeKind::Deleted)
        .map(|f| f.path.clone())
        .collect();
    Ok(crate::family::python::gen::modules::of(repo, &files))
}

/// The file the built-in generator's search writes for `module` in a layer's folder (what
/// `tt_render.py`'s `test_file_name` gives): `calc.ops` -> `test_calc_ops.py`.
pub(crate) fn search_file(module: &str) -> String {
    format!("test_{}.py", module.replace('.', "_"))
}

/// The search's entry-point tests (L3), beside the modules' files.
pub(crate) const ENTRY_POINTS_FILE: &str = "test_entry_points.py";

/// Every file name the search may write in a layer's folder for `session`, with what it tests.
pub(crate) fn search_files(
    session: &SessionDir,
    repo: &Path,
) -> std::collections::BTreeMap<String, String> {
    let mut files: std::collections::BTreeMap<String, String> = modules_of(session, repo)
        .unwrap_or_default()
        .into_iter()
        .map(|m| (search_file(&m.module), format!("module {}", m.module)))
        .collect();
    files.insert(ENTRY_POINTS_FILE.to_string(), "the entry points".into());
    files
}
