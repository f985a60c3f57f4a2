//! What applied Python tests need beside them: a conftest that makes them importable under plain
//! `pytest` and isolates each one, and the `__init__.py` files of their packages.

use std::path::Path;

use crate::error::{Error, Result};
use crate::tasks::LAYER_DIRS;

/// `L1-unit` -> `l1_unit`: a package name, so files of the same name in two layers do not clash.
pub(super) fn package(layer: &str) -> String {
    layer.to_lowercase().replace('-', "_")
}

/// Where the applied tests go: `team_testing/` under the project's first pytest `testpaths`
/// folder when it names some (a plain `pytest` looks only there), else `tests/team_testing`.
pub(crate) fn apply_dir(repo: &Path) -> String {
    let first = crate::testing::project_files::pytest_testpaths(repo)
        .into_iter()
        .map(|p| p.trim_start_matches("./").trim_end_matches('/').to_string())
        .find(|p| {
            !p.is_empty()
                && !p.contains(['*', '?', '['])
                && !p.starts_with('/')
                && !p.contains("..")
        });
    match first {
        Some(dir) if dir.ends_with(".py") => "tests/team_testing".into(),
        Some(dir) => format!("{dir}/team_testing"),
        None => "tests/team_testing".into(),
    }
}

/// What a plain `pytest` would not collect of the applied tests, and the line to add: their
/// files are named `test_*.py`, which a project's own `python_files` may leave out.
pub(crate) fn unreached(repo: &Path) -> Option<String> {
    let (patterns, file) = crate::testing::project_files::pytest_python_files(repo)?;
    let collected = patterns
        .iter()
        .any(|p| globset::Glob::new(p).is_ok_and(|g| g.compile_matcher().is_match("test_x.py")));
    (!collected).then(|| {
        format!(
            "pytest's python_files ({}) in {file} leaves the applied test_*.py files out: add              test_*.py to it to run them with the project's own pytest",
            patterns.join(" ")
        )
    })
}

/// Makes the applied Python tests importable under plain `pytest` from the repository root
/// (the repository and its src/ go on sys.path, not through the current folder), whatever the
/// project's own configuration, and runs every one of them isolated: cwd, HOME, the XDG folders
/// and TMPDIR in temporary folders of its own. `depth` is how many folders the conftest is
/// below the repository root.
fn conftest(depth: usize) -> String {
    let isolation = super::isolation::ISOLATION;
    let fixture = &isolation[isolation.find("@pytest.fixture").unwrap_or(0)..];
    format!(
        "\"\"\"Written by `team-testing apply`: puts the repository (and its src/) on sys.path, and runs\n\
         every test here in temporary folders of its own (cwd, HOME, XDG, TMPDIR).\"\"\"\n\
         import pathlib\nimport sys\nimport tempfile\n\nimport pytest\n\n\
         ROOT = pathlib.Path(__file__).resolve().parents[{depth}]\n\
         for path in (ROOT / \"src\", ROOT):\n    if path.is_dir() and str(path) not in sys.path:\n        sys.path.insert(0, str(path))\n\n\n{fixture}"
    )
}

/// Writes the conftest and the packages' `__init__.py` into `base` (`tests/team_testing`, or
/// the folder [`apply_dir`] chose), `depth` folders below the repository root: missing ones,
/// and a conftest an earlier apply wrote (brought up to date).
pub(super) fn write_support(base: &Path, depth: usize) -> Result<()> {
    let mut files = vec![
        (base.join("conftest.py"), conftest(depth)),
        (base.join("__init__.py"), String::new()),
    ];
    for layer in LAYER_DIRS {
        let pkg = base.join(package(layer));
        if pkg.is_dir() {
            files.push((pkg.join("__init__.py"), String::new()));
        }
    }
    for (path, text) in files {
        // Ours (an earlier apply wrote it): brought up to date, so it isolates every test.
        let ours = std::fs::read_to_string(&path)
            .is_ok_and(|t| t.starts_with("\"\"\"Written by `team-testing apply`"));
        if !path.exists() || (ours && text.starts_with("\"\"\"Written")) {
            std::fs::write(&path, text)
                .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
        }
    }
    Ok(())
}
