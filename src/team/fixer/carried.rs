//! The session's own generated tests (a standard run's, continued with `team-testing fix`).
//! Those that found code defects join the fixer's suite, so fixing the code makes them pass
//! too; the others are run once at the end against the fixed code, which tells which of them
//! pinned the old behaviour. All are copied under a folder of ours in the mirror.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::suite::CARRIED_DIR;
use crate::family::suites::SuiteTrace;
use crate::session::LAYER_DIRS;
use crate::testing::classify::Classification;

#[derive(Debug, Default)]
pub struct Carried {
    /// Mirror-relative file -> bytes.
    pub files: BTreeMap<PathBuf, Vec<u8>>,
    /// Node ids of the tests that found code defects.
    pub defect_ids: Vec<String>,
    /// Every carried test file, mirror-relative.
    pub test_files: Vec<String>,
}

pub fn tests(session: &Path, analysis: &dyn SuiteTrace) -> Carried {
    let results = crate::artifacts::runs(session);
    let mut out = Carried::default();
    for layer in LAYER_DIRS {
        let dir = session.join("tests").join(layer);
        let layer_files = analysis.test_files(&dir);
        if layer_files.is_empty() {
            continue;
        }
        if let Some(run) = results.of_layer(layer).last() {
            out.defect_ids.extend(
                run.tests()
                    .iter()
                    .filter(|t| t.classification == Some(Classification::CodeDefect))
                    .filter_map(|t| node_id(layer, &t.id)),
            );
        }
        let _ = crate::workspace::list_files(&dir, Path::new(""), None, &mut |rel, abs| {
            if let Ok(bytes) = crate::util::read_regular(&abs) {
                out.files
                    .insert(Path::new(CARRIED_DIR).join(layer).join(rel), bytes);
            }
        });
        out.test_files.extend(layer_files.iter().filter_map(|f| {
            let rel = f.strip_prefix(&dir).ok()?;
            Some(format!("{CARRIED_DIR}/{layer}/{}", rel.display()))
        }));
    }
    out
}

/// A run record's test id (`pkg.test_mod::TestA::test_b`) as a node id of its carried copy.
fn node_id(layer: &str, id: &str) -> Option<String> {
    let (module, rest) = id.split_once("::")?;
    Some(format!(
        "{CARRIED_DIR}/{layer}/{}.py::{rest}",
        module.replace('.', "/")
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn record_ids_become_node_ids_of_the_copies() {
        assert_eq!(
            super::node_id("L1-unit", "sub.test_ops::TestA::test_b").unwrap(),
            ".team-testing-fix/L1-unit/sub/test_ops.py::TestA::test_b"
        );
        assert!(super::node_id("L1-unit", "plain").is_none());
    }
}
