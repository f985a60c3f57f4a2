//! The session's own tests that found code defects (a standard run's, continued with
//! `team-testing fix`): they join the fixer's suite, copied under a folder of ours in the
//! mirror, so that fixing the code makes them pass too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::suite::CARRIED_DIR;
use crate::session::LAYER_DIRS;
use crate::testing::classify::Classification;

/// (mirror-relative file -> bytes, the node ids of the defect tests).
pub fn tests(session: &Path) -> (BTreeMap<PathBuf, Vec<u8>>, Vec<String>) {
    let results = crate::artifacts::runs(session);
    let mut files = BTreeMap::new();
    let mut ids = Vec::new();
    for layer in LAYER_DIRS {
        let Some(run) = results.of_layer(layer).last() else {
            continue;
        };
        let defects: Vec<String> = run
            .tests()
            .iter()
            .filter(|t| t.classification == Some(Classification::CodeDefect))
            .filter_map(|t| node_id(layer, &t.id))
            .collect();
        if defects.is_empty() {
            continue;
        }
        let dir = session.join("tests").join(layer);
        let _ =
            crate::testing::workspace::list_files(&dir, Path::new(""), None, &mut |rel, abs| {
                if let Ok(bytes) = crate::util::read_regular(&abs) {
                    files.insert(Path::new(CARRIED_DIR).join(layer).join(rel), bytes);
                }
            });
        ids.extend(defects);
    }
    (files, ids)
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
