//! What a test changed outside its own temporary folders, as the effects plugin (`-p tt_effects`,
//! shipped in src/gen) recorded it while the executor or the accept filter ran the tests, and
//! what the sandbox refused a test. Either makes the test unsafe: it is quarantined, never kept
//! by a revision round, and refused by `apply`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One effect of one test: `test` is the pytest node id relative to the run's root (or the test
/// file, when importing it did this).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    pub test: String,
    /// In words: "deletes the current folder", "writes '.notes.txt' in the home folder".
    pub effect: String,
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub event: String,
}

/// Reads an effects file (at most 4 MiB of it: a test cannot flood the record).
pub fn read_effects(path: &Path) -> Vec<Effect> {
    let Ok(bytes) = crate::util::read_regular(path) else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4 << 20)]);
    let mut out: Vec<Effect> = Vec::new();
    for line in text.lines() {
        if let Ok(e) = serde_json::from_str::<Effect>(line) {
            if !out.contains(&e) {
                out.push(e);
            }
        }
    }
    out
}

/// The tests of a layer the session recorded as unsafe (quarantined for an effect outside their
/// tmp_path or a sandbox denial): (node id relative to the layer's folder, what it did).
pub fn recorded_unsafe(session: &Path, layer: &str) -> Vec<(String, String)> {
    let path = session
        .join("tests")
        .join("quarantine")
        .join(layer)
        .join("quarantine.json");
    let Ok(list) = crate::util::read_json::<Vec<serde_json::Value>>(&path) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|q| {
            let what = q["unsafe_effect"].as_str()?;
            Some((q["id"].as_str()?.to_string(), what.to_string()))
        })
        .collect()
}

/// The test file a node id belongs to (`pkg/test_x.py::test_y` -> `pkg/test_x.py`).
pub fn file_of(test: &str) -> &str {
    test.split("::").next().unwrap_or(test)
}

/// What the sandbox refused a test, when its failure shows it: a read-only file system, a
/// permission denied outside the run's writable folders, the network while it is off, or the
/// process or memory limit. Such a failure is never the code's fault nor the test's: the test
/// reached outside its sandbox. None when the failure is something else.
pub fn sandbox_denial(text: &str, writable: &[PathBuf], network_off: bool) -> Option<String> {
    const READ_ONLY: [&str; 3] = ["Read-only file system", "[Errno 30]", "EROFS"];
    if let Some(m) = READ_ONLY.iter().find(|m| text.contains(*m)) {
        return Some(format!(
            "a write outside the sandbox was blocked ({m}): {}",
            denied_path(text).unwrap_or_else(|| "a read-only folder".into())
        ));
    }
    const DENIED: [&str; 6] = [
        "PermissionError",
        "[Errno 13]",
        "[Errno 1] Operation not permitted",
        "EACCES",
        "EPERM",
        "Permission denied (os error 13)",
    ];
    if DENIED.iter().any(|m| text.contains(m)) {
        let path = denied_path(text);
        let outside = path
            .as_deref()
            .is_none_or(|p| !writable.iter().any(|w| Path::new(p).starts_with(w)));
        if outside {
            return Some(format!(
                "access outside the sandbox was blocked: {}",
                path.unwrap_or_else(|| "permission denied".into())
            ));
        }
    }
    const NETWORK: [&str; 6] = [
        "ConnectionRefusedError",
        "Connection refused",
        "ECONNREFUSED",
        "Network is unreachable",
        "Temporary failure in name resolution",
        "gaierror",
    ];
    if network_off {
        if let Some(m) = NETWORK.iter().find(|m| text.contains(*m)) {
            return Some(format!(
                "network access was blocked by the sandbox ({m}); pass --allow-network for tests that need a server"
            ));
        }
    }
    if text.contains("MemoryError") || text.contains("Cannot allocate memory") {
        return Some("the sandbox's memory limit stopped it".into());
    }
    if text.contains("BlockingIOError") && text.contains("[Errno 11]") {
        return Some("the sandbox's process limit stopped it".into());
    }
    None
}

/// The path an error message names in quotes: `…: '/home/u/x'`.
fn denied_path(text: &str) -> Option<String> {
    for line in text.lines() {
        for quote in ['\'', '"'] {
            let mut parts = line.split(quote);
            parts.next();
            if let Some(p) = parts.next() {
                if p.starts_with('/') || p.starts_with('.') || p.starts_with('~') {
                    return Some(p.to_string());
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_denials_are_recognised_and_other_failures_are_not() {
        let w = vec![PathBuf::from("/s/results")];
        let rofs = "E   OSError: [Errno 30] Read-only file system: '/proj/tests'";
        assert!(sandbox_denial(rofs, &w, true)
            .unwrap()
            .contains("/proj/tests"));
        let perm = "E   PermissionError: [Errno 13] Permission denied: '/etc/passwd'";
        assert!(sandbox_denial(perm, &w, true).is_some());
        let own = "E   PermissionError: [Errno 13] Permission denied: '/s/results/x'";
        assert_eq!(sandbox_denial(own, &w, true), None);
        let net = "E   ConnectionRefusedError: [Errno 111] Connection refused";
        assert!(sandbox_denial(net, &w, true).is_some());
        assert_eq!(sandbox_denial(net, &w, false), None);
        assert_eq!(
            sandbox_denial("E   assert 3 == 4", &w, true),
            None,
            "an assertion is not a denial"
        );
    }

    #[test]
    fn effects_files_are_read_tolerantly() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("effects.jsonl");
        std::fs::write(
            &f,
            "{\"test\":\"test_a.py::test_x\",\"effect\":\"deletes the current folder\",\"path\":\"/t/cwd\",\"event\":\"shutil.rmtree\"}\nnot json\n{\"test\":\"test_a.py::test_x\",\"effect\":\"deletes the current folder\",\"path\":\"/t/cwd\",\"event\":\"shutil.rmtree\"}\n",
        )
        .unwrap();
        let effects = read_effects(&f);
        assert_eq!(effects.len(), 1);
        assert_eq!(file_of(&effects[0].test), "test_a.py");
    }
}
