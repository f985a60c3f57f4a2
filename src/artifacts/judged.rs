//! Which test files a layer's run judged, by content. The executor records each file of the
//! layer as its last run ran it (`RunRecord::judged_files`, sha256 of the bytes); the minimizer
//! records what it rewrote from those contents (`LayerMutation::rewritten`). `apply` delivers a
//! file only with one of these contents, so a test written after the layer's last run (a session
//! paused between its generator and its executor, a resumed round not run yet) or edited by hand
//! in the session folder never reaches the user without a run and the file-system watch behind it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{LayerMutation, MutationRecord, RunRecord, MUTATION_FILE};

/// File name in the layer's folder -> sha256 of its content.
pub type FileDigests = BTreeMap<String, String>;

/// What the minimizer made of a judged file: the content it read and the one it wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rewrite {
    pub from: String,
    pub to: String,
}

/// sha256 of `bytes` in hex, as every other digest the session records.
pub fn digest(bytes: &[u8]) -> String {
    crate::agents::record::sha256_hex(bytes)
}

/// A file at the top of a layer's folder, read once, and why it is not to be delivered.
pub struct LayerFile {
    pub name: String,
    pub path: PathBuf,
    /// The bytes judged: the ones to deliver, never a second read.
    pub content: Vec<u8>,
    /// None: its layer's last run judged this content (or the minimizer wrote it from that).
    pub unjudged: Option<String>,
}

/// Every file at the top of `layer`'s folder of the session, in name order, judged: what
/// `apply` delivers and the pull-request summary lists.
pub fn layer_files(session: &Path, layer: &str) -> Vec<LayerFile> {
    let Ok(entries) = std::fs::read_dir(session.join("tests").join(layer)) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    let judgement = LayerJudgement::of(session, layer);
    paths
        .into_iter()
        .map(|path| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (content, unjudged) = match crate::util::read_regular(&path) {
                Ok(bytes) => {
                    let why = judgement.unjudged(&name, &path, &bytes);
                    (bytes, why)
                }
                Err(e) => (Vec::new(), Some(format!("cannot be read: {e}"))),
            };
            LayerFile {
                name,
                path,
                content,
                unjudged,
            }
        })
        .collect()
}

/// The regular files at the top of a layer's folder (the ones `apply` delivers) with the digest
/// of their content; an unreadable file is left out, so it counts as not judged.
pub fn snapshot(dir: &Path) -> FileDigests {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return FileDigests::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let bytes = crate::util::read_regular(&e.path()).ok()?;
            Some((e.file_name().to_string_lossy().into_owned(), digest(&bytes)))
        })
        .collect()
}

/// The files the minimizer changed between two snapshots of a layer's folder (removed files are
/// not listed: nothing is left to deliver).
pub fn rewrites(before: &FileDigests, after: &FileDigests) -> BTreeMap<String, Rewrite> {
    after
        .iter()
        .filter_map(|(name, to)| {
            let from = before.get(name)?;
            (from != to).then(|| {
                let rewrite = Rewrite {
                    from: from.clone(),
                    to: to.clone(),
                };
                (name.clone(), rewrite)
            })
        })
        .collect()
}

/// What a session's records say a layer's files may contain to be delivered.
pub struct LayerJudgement {
    layer: String,
    /// The layer's last run that listed its tests, if any.
    last_run: Option<RunRecord>,
    /// The minimizer's rewrites of the layer's files.
    rewritten: BTreeMap<String, Rewrite>,
}

impl LayerJudgement {
    /// Reads the session's run records and mutation record for `layer`.
    pub fn of(session: &Path, layer: &str) -> Self {
        let last_run = super::runs(session).of_layer(layer).last().cloned();
        let rewritten = crate::util::read_json::<MutationRecord>(&session.join(MUTATION_FILE))
            .ok()
            .and_then(|m| m.layers.into_iter().find(|l| l.layer == layer))
            .map(|l: LayerMutation| l.rewritten)
            .unwrap_or_default();
        LayerJudgement {
            layer: layer.to_string(),
            last_run,
            rewritten,
        }
    }

    /// None when the file `name` of the layer's folder, with `content`, is what the layer's last
    /// run judged (or the minimizer made of that); else why it is not to be delivered.
    pub fn unjudged(&self, name: &str, path: &Path, content: &[u8]) -> Option<String> {
        let layer = &self.layer;
        let Some(run) = &self.last_run else {
            return Some(format!(
                "no run of {layer} judged it (the session stopped before its executor ran); resume the session to run it"
            ));
        };
        let Some(judged) = &run.judged_files else {
            return written_after(run, path).then(|| {
                format!(
                    "written after the last run of {layer} ({}); resume the session to run it",
                    run.task_id
                )
            });
        };
        let sha = digest(content);
        let ran = judged.get(name);
        let minimized = self
            .rewritten
            .get(name)
            .is_some_and(|r| r.to == sha && ran == Some(&r.from));
        if ran == Some(&sha) || minimized {
            return None;
        }
        Some(match ran {
            None => format!(
                "written after the last run of {layer} ({}); resume the session to run it",
                run.task_id
            ),
            Some(_) => format!(
                "changed since the last run of {layer} ({}) ran it; resume the session to run it",
                run.task_id
            ),
        })
    }
}

/// A record from before runs listed their files: whether the file was modified after the run
/// finished (an unreadable time counts as after).
fn written_after(run: &RunRecord, path: &Path) -> bool {
    let finished = run.finished_at.as_deref().and_then(crate::util::parse_ts);
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    match (finished, modified) {
        (Some(finished), Some(modified)) => {
            chrono::DateTime::<chrono::Utc>::from(modified) > finished
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_run(session: &Path, judged: Option<FileDigests>) {
        let run = RunRecord {
            task_id: "TESTRUN-001".into(),
            layer: "L1-unit".into(),
            tests: Some(Vec::new()),
            finished_at: Some(crate::util::now_ts()),
            judged_files: judged,
            ..RunRecord::default()
        };
        std::fs::create_dir_all(session.join("results")).unwrap();
        crate::util::atomic_write_json(&session.join("results/run-001.json"), &run).unwrap();
    }

    /// Only the content the last run judged, or what the minimizer made of it, is delivered.
    #[test]
    fn a_file_is_judged_only_with_the_content_the_last_run_ran_or_the_minimizer_wrote() {
        let tmp = tempfile::tempdir().unwrap();
        let session = tmp.path();
        let layer = session.join("tests/L1-unit");
        std::fs::create_dir_all(&layer).unwrap();
        let path = layer.join("test_a.py");
        std::fs::write(&path, "def test_a():\n    assert True\n").unwrap();
        let why = |content: &[u8]| {
            LayerJudgement::of(session, "L1-unit").unjudged("test_a.py", &path, content)
        };
        // No run yet: the session stopped before its executor.
        assert!(why(b"def test_a():\n    assert True\n")
            .unwrap()
            .starts_with("no run of L1-unit judged it"));
        write_run(session, Some(snapshot(&layer)));
        assert_eq!(why(b"def test_a():\n    assert True\n"), None);
        let edited = b"def test_a():\n    assert False\n";
        assert!(why(edited)
            .unwrap()
            .starts_with("changed since the last run of L1-unit (TESTRUN-001)"));
        assert!(LayerJudgement::of(session, "L1-unit")
            .unjudged("test_b.py", &layer.join("test_b.py"), b"")
            .unwrap()
            .starts_with("written after the last run of L1-unit"));
        // The minimizer rewrote the judged content: its output is delivered, nothing else.
        let before = snapshot(&layer);
        std::fs::write(&path, "def test_a():\n    pass\n").unwrap();
        let rewritten = rewrites(&before, &snapshot(&layer));
        assert_eq!(rewritten.len(), 1);
        let record = MutationRecord {
            layers: vec![LayerMutation {
                layer: "L1-unit".into(),
                rewritten,
                ..LayerMutation::default()
            }],
            ..MutationRecord::default()
        };
        crate::util::atomic_write_json(&session.join(MUTATION_FILE), &record).unwrap();
        assert_eq!(why(b"def test_a():\n    pass\n"), None);
        assert!(why(edited).is_some());
    }

    /// A record from before runs listed their files judges by time: a file modified after the run
    /// finished is left out.
    #[test]
    fn an_older_record_judges_by_modification_time() {
        let tmp = tempfile::tempdir().unwrap();
        let session = tmp.path();
        let layer = session.join("tests/L1-unit");
        std::fs::create_dir_all(&layer).unwrap();
        let path = layer.join("test_a.py");
        std::fs::write(&path, "x").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        write_run(session, None);
        let judgement = LayerJudgement::of(session, "L1-unit");
        assert_eq!(judgement.unjudged("test_a.py", &path, b"x"), None);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, "y").unwrap();
        assert!(judgement.unjudged("test_a.py", &path, b"y").is_some());
    }
}
