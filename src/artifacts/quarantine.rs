//! A test (or test file) taken out of its layer: in the run record's `quarantined` list and in
//! `tests/quarantine/<layer>/quarantine.json`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::nullable::null_as_default;

/// A test taken out of the layer, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quarantined {
    /// The runner's selector for it (pytest node id, test name, or the file for load errors).
    #[serde(default, deserialize_with = "null_as_default")]
    pub id: String,
    /// A whole file moved out of the layer (it did not load), rather than one deselected test.
    #[serde(default)]
    pub file: bool,
    /// Empty in hand-written records that give none.
    #[serde(default, deserialize_with = "null_as_default")]
    pub reason: String,
    /// Empty in hand-written records that give none (the run's task is meant).
    #[serde(default, deserialize_with = "null_as_default")]
    pub task_id: String,
    /// Set when the test is unsafe (an effect outside its tmp_path, or a sandbox denial): what it
    /// did. Such a test is never kept by a revision round, and `apply` refuses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsafe_effect: Option<String>,
}

/// Every test a layer's runs took out (quarantine.json): (id, why, unsafe). A test taken out
/// was deselected in the session's runs, so it never goes to the user either.
pub fn recorded_quarantine(session: &Path, layer: &str) -> Vec<(String, String, bool)> {
    let path = session
        .join("tests")
        .join("quarantine")
        .join(layer)
        .join("quarantine.json");
    let Ok(list) = crate::util::read_json::<Vec<Quarantined>>(&path) else {
        return Vec::new();
    };
    list.into_iter()
        .filter(|q| !q.id.is_empty())
        .map(|q| match q.unsafe_effect {
            Some(what) => (q.id, what, true),
            None => (q.id, q.reason, false),
        })
        .collect()
}
