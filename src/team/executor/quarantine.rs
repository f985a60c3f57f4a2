//! Tests and files taken out of a layer (quarantined), and why: the record under
//! `tests/quarantine/<layer>/`, which later rounds and `apply` read.

use std::path::Path;

use crate::artifacts::{Quarantined, Repair, RepairAction};
use crate::team::error::{Result, RoleError};
use crate::testing::effects::{self, Effect};
use crate::util::{atomic_write_json, mkdirs};

/// Takes a test (or a whole file) out of the layer and logs the repair; false when it was out
/// already.
pub(super) fn take_out(
    q: Quarantined,
    iteration: usize,
    quarantined: &mut Vec<Quarantined>,
    repairs: &mut Vec<Repair>,
) -> bool {
    if quarantined.iter().any(|k| k.id == q.id) {
        return false;
    }
    let action = if q.file {
        RepairAction::QuarantinedFile
    } else {
        RepairAction::QuarantinedTest
    };
    repairs.push(Repair {
        iteration,
        action,
        test: Some(q.id.clone()),
        file: None,
        reason: Some(q.reason.clone()),
        backend: None,
    });
    quarantined.push(q);
    true
}

/// The tests (or, for what importing a file did, the files) with effects outside their own
/// temporary folders: (selector, whole file, what they did).
pub(super) fn unsafe_tests(found: &[Effect], test_dir: &Path) -> Vec<(String, bool, String)> {
    let mut out: Vec<(String, bool, String)> = Vec::new();
    for e in found {
        let file = !e.test.contains("::");
        if file && !test_dir.join(effects::file_of(&e.test)).is_file() {
            continue; // the session itself, not a file of the layer
        }
        match out.iter_mut().find(|(id, _, _)| id == &e.test) {
            Some(entry) => {
                if entry.2.matches("; ").count() < 2 {
                    entry.2.push_str("; ");
                    entry.2.push_str(&e.effect);
                }
            }
            None => out.push((e.test.clone(), file, e.effect.clone())),
        }
    }
    out
}

/// Moves a test file out of the layer into the quarantine folder.
pub(super) fn move_out(test_dir: &Path, quarantine: &Path, file: &str) -> Result<()> {
    let from = test_dir.join(file);
    let to = quarantine.join(file);
    if let Some(parent) = to.parent() {
        mkdirs(parent)?;
    }
    std::fs::rename(&from, &to).map_err(RoleError::io("quarantine", &from))
}

pub(super) fn load_quarantine(dir: &Path) -> Vec<Quarantined> {
    crate::util::read_json(&dir.join("quarantine.json")).unwrap_or_default()
}

pub(super) fn save_quarantine(dir: &Path, items: &[Quarantined]) -> Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    mkdirs(dir)?;
    Ok(atomic_write_json(&dir.join("quarantine.json"), items)?)
}
