//! The generator role's side of the cache of generated tests (`gen::cache`): which modules of a
//! round's request have tests already, the request that searches only the others, and the
//! entries a round leaves pending until the executor has run their tests. `promote` keeps the
//! pending entries whose tests passed (and forgets the reused ones whose tests no longer do);
//! it runs once the session's tasks stop, so a killed run leaves nothing a later run trusts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::artifacts::{runs, RecordedStatus, RunRecord};
use crate::family::generator::Generator;
use crate::gen::cache::{self, Cache, Entry, KeyInput};
use crate::gen::{GenRequest, GenResult, ModuleRef};
use crate::session::SessionDir;
use crate::testing::classify::Classification;
use crate::testing::framework::Framework;

/// The folder of a session where a round's entries wait for the executor.
const PENDING_DIR: &str = "gen-cache";

/// A round's request, split by the cache.
pub struct Lookup {
    cache: Option<Cache>,
    framework: Option<Framework>,
    /// Module name -> its key (every module of the request, when the cache is on).
    keys: BTreeMap<String, String>,
    /// What the cache had, in the request's order.
    hits: Vec<Entry>,
    /// What the search still has to do.
    pub misses: Vec<ModuleRef>,
}

impl Lookup {
    /// The cache is off: every module is searched.
    pub fn off(req: &GenRequest) -> Self {
        Lookup {
            cache: None,
            framework: None,
            keys: BTreeMap::new(),
            hits: Vec::new(),
            misses: req.modules.clone(),
        }
    }

    /// Each module of `req` looked up in the cache under `sessions_root`.
    pub fn of(
        sessions_root: &Path,
        repo: &Path,
        framework: Framework,
        generator: &dyn Generator,
        req: &GenRequest,
    ) -> Self {
        let cache = Cache::under(sessions_root);
        let mut sources = crate::testing::project_files::of_repo(repo, Some(framework)).sources;
        // Sessions kept inside the repository are not its source (their tests change each run).
        if let Ok(inside) = sessions_root.strip_prefix(repo) {
            sources.retain(|f| !Path::new(f).starts_with(inside));
        }
        let version = cache::generator_version();
        let mut lookup = Lookup {
            keys: BTreeMap::new(),
            hits: Vec::new(),
            misses: Vec::new(),
            cache: None,
            framework: Some(framework),
        };
        for module in &req.modules {
            let read = generator.search_reads(repo, &module.file, &sources);
            let files: BTreeMap<String, String> = read
                .into_iter()
                .map(|f| {
                    let hash = cache::file_hash(&repo.join(&f)).unwrap_or_else(|| "absent".into());
                    (f, hash)
                })
                .collect();
            let key = cache::key(&KeyInput {
                framework: framework.as_str(),
                generator: &version,
                req,
                module,
                files: &files,
            });
            match cache.get::<Entry>(&key) {
                Some(entry) if entry.module.module == module.module => lookup.hits.push(entry),
                _ => lookup.misses.push(module.clone()),
            }
            lookup.keys.insert(module.module.clone(), key);
        }
        lookup.cache = Some(cache);
        lookup
    }

    /// The request that searches the modules the cache lacks, with what they would have had of
    /// the whole round's budget, shared by size as the helpers share it: a module searched alone
    /// gets the time it had among the others, so its tests are what they would have been.
    pub fn rest(&self, req: &GenRequest, repo: &Path) -> GenRequest {
        let mut rest = req.clone();
        rest.modules = self.misses.clone();
        if rest.modules.len() < req.modules.len() {
            let share = size_weight(repo, &rest.modules) / size_weight(repo, &req.modules);
            rest.budget_s = (req.budget_s * share).max(1.0);
        }
        rest
    }

    /// The round's result: the cached modules and the searched ones, in `order`.
    pub fn merge(&self, searched: Option<GenResult>, order: &[ModuleRef]) -> GenResult {
        if self.hits.is_empty() {
            if let Some(searched) = searched {
                return searched;
            }
        }
        let cached = GenResult {
            modules: self.hits.iter().map(|e| e.module.clone()).collect(),
            findings: self.hits.iter().flat_map(|e| e.findings.clone()).collect(),
            stats: serde_json::json!({"cached_modules": self.hits.len()}),
        };
        match searched {
            Some(s) => GenResult::merge(vec![cached, s], order),
            None => cached,
        }
    }

    /// "2 of 3 module(s) reused from the cache; searched: calc.ops"; None with the cache off
    /// or nothing reused.
    pub fn said(&self) -> Option<String> {
        if self.cache.is_none() || self.hits.is_empty() {
            return None;
        }
        let total = self.hits.len() + self.misses.len();
        let mut said = format!(
            "{} of {total} module(s) reused from the cache",
            self.hits.len()
        );
        if !self.misses.is_empty() {
            let names: Vec<&str> = self.misses.iter().map(|m| m.module.as_str()).collect();
            said.push_str(&format!("; searched: {}", names.join(", ")));
        }
        Some(said)
    }

    /// Leaves the round's entries in the session until its tests have run: the searched modules
    /// to keep, the reused ones to check. Written after the round's test files.
    pub fn leave_pending(
        &self,
        session: &Path,
        (layer, round): (&str, u64),
        result: &GenResult,
    ) -> Result<(), crate::util::FileError> {
        if self.cache.is_none() {
            return Ok(());
        }
        let mut pending = Pending {
            layer: layer.to_string(),
            framework: self.framework,
            after_run: last_run_number(session),
            entries: Vec::new(),
        };
        // A module that did not load is searched again next time (its environment may change).
        for module in result.modules.iter().filter(|m| m.import_error.is_none()) {
            let Some(key) = self.keys.get(&module.module) else {
                continue;
            };
            let hit = self.hits.iter().any(|e| &e.key == key);
            let findings = result
                .findings
                .iter()
                .filter(|f| f.module == module.module)
                .cloned()
                .collect();
            pending.entries.push(PendingEntry {
                test_file: module.test_file.clone(),
                reused: hit,
                entry: Entry::new(key.clone(), module.clone(), findings),
            });
        }
        let path = pending_path(session, layer, round);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|cause| crate::util::FileError::Write {
                path: dir.to_path_buf(),
                cause,
            })?;
        }
        crate::util::atomic_write_json(&path, &pending)
    }
}

/// A round's entries waiting for the executor.
#[derive(Debug, Serialize, Deserialize)]
struct Pending {
    layer: String,
    /// Whose generator wrote the tests: a test file is trimmed by its family.
    #[serde(default)]
    framework: Option<Framework>,
    /// The last run record when the round wrote its tests: only a later run judges them.
    after_run: usize,
    entries: Vec<PendingEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
struct PendingEntry {
    test_file: String,
    /// It came from the cache (it is forgotten if its tests fail).
    reused: bool,
    entry: Entry,
}

/// How much of a budget `modules` get, as the helpers weigh a module: its lines of code, at
/// least 60 and at most 1,500.
pub fn size_weight(repo: &Path, modules: &[ModuleRef]) -> f64 {
    modules
        .iter()
        .map(|m| {
            let lines = std::fs::read_to_string(repo.join(&m.file)).map_or(100, |text| {
                text.lines()
                    .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                    .count()
            });
            lines.clamp(60, 1500) as f64
        })
        .sum::<f64>()
        .max(1.0)
}

fn pending_path(session: &Path, layer: &str, round: u64) -> PathBuf {
    session
        .join(PENDING_DIR)
        .join(format!("{layer}-{round}.json"))
}

/// The number of the session's last run record (0 with none).
fn last_run_number(session: &Path) -> usize {
    std::fs::read_dir(session.join("results"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| run_number(&e.file_name().to_string_lossy()))
        .max()
        .unwrap_or(0)
}

fn run_number(name: &str) -> Option<usize> {
    name.strip_prefix("run-")?
        .strip_suffix(".json")?
        .parse()
        .ok()
}

/// What `promote` did.
#[derive(Debug, Default, PartialEq)]
pub struct Promoted {
    pub kept: usize,
    pub forgotten: usize,
}

/// Keeps in the cache the pending entries whose tests passed in the first run of their layer
/// after they were written (the run that judged exactly them), and forgets the reused entries
/// whose tests failed there. An entry whose tests have not run yet stays pending.
pub fn promote(session: &SessionDir) -> Promoted {
    let mut done = Promoted::default();
    let dir = session.root.join(PENDING_DIR);
    let Ok(files) = std::fs::read_dir(&dir) else {
        return done;
    };
    let cache = Cache::under(&session.sessions_root());
    let results = runs(&session.root);
    for file in files.flatten() {
        let path = file.path();
        let Ok(pending) = crate::util::read_json::<Pending>(&path) else {
            continue;
        };
        let judged = results.runs.iter().find(|(name, r)| {
            r.layer == pending.layer && r.has_tests() && run_number(name) > Some(pending.after_run)
        });
        let Some((_, run)) = judged else { continue };
        let generator = pending
            .framework
            .and_then(|f| crate::family::of(f.family()).generator());
        for p in &pending.entries {
            // A search that wrote no test has nothing to fail: its run is enough.
            let verdict = match p.entry.module.source.is_empty() {
                true => Verdict::Passed,
                false => judge(run, &p.test_file),
            };
            let keep = match &verdict {
                _ if p.reused => None,
                Verdict::Passed => Some(p.entry.clone()),
                // The tests that passed are what a search of the same code gives next time,
                // once the run has taken the others out.
                Verdict::PassedBut { bad, earlier } => without(&p.entry, (bad, earlier), generator),
                Verdict::Failed => None,
            };
            match keep {
                Some(entry) if cache.put(&entry).is_ok() => done.kept += 1,
                _ if p.reused && verdict != Verdict::Passed => {
                    cache.remove(&p.entry.key);
                    done.forgotten += 1;
                }
                _ => {}
            }
        }
        let _ = std::fs::remove_file(&path);
    }
    done
}

/// How the tests of one file fared in the run that judged them.
#[derive(Debug, PartialEq)]
enum Verdict {
    Passed,
    /// `bad` (by name, as the run's ids end) failed, were flaky or were taken out by this run;
    /// the rest passed. `earlier` are tests an earlier run of the layer took out, which the
    /// layer's file still carries: they count only where the entry has them.
    PassedBut {
        bad: BTreeSet<String>,
        earlier: BTreeSet<String>,
    },
    Failed,
}

/// How the tests of `test_file` fared in `run`: passed when at least one ran, none was taken
/// out or was flaky, and none failed but for a code defect it found (a sound test, kept as the
/// framework's expected failure); passed but for some when others passed. A run whose records
/// name no file (node's test runner) is judged whole, and never in part.
fn judge(run: &RunRecord, test_file: &str) -> Verdict {
    let tests = run.tests.as_deref().unwrap_or_default();
    let stem = test_file.split('.').next().unwrap_or(test_file);
    // Where the runner ran it: the file itself, or a copy staged as `tt_<layer>_<file>` (cargo
    // and go build the layer's files where their tools look for tests).
    let same_file = |f: &str| {
        let name = f.rsplit('/').next().unwrap_or(f);
        name == test_file || (name.starts_with("tt_") && name.ends_with(&format!("_{test_file}")))
    };
    let belongs = |file: Option<&str>, id: &str| {
        file.is_some_and(same_file)
            || id.starts_with(&format!("{test_file}::"))
            || id.starts_with(&format!("{stem}::"))
    };
    let attributed = tests.iter().any(|t| t.file.is_some());
    let mine: Vec<_> = if attributed {
        tests
            .iter()
            .filter(|t| belongs(t.file.as_deref(), &t.id))
            .collect()
    } else {
        tests.iter().collect()
    };
    if mine.is_empty() {
        return Verdict::Failed;
    }
    let name = |id: &str| id.rsplit("::").next().unwrap_or(id).to_string();
    let quarantined = run.quarantined.as_deref().unwrap_or_default();
    let (this_run, earlier): (Vec<_>, Vec<_>) = quarantined
        .iter()
        .filter(|q| !attributed || belongs(Some(&q.id), &q.id) || q.id.contains(stem))
        .partition(|q| q.task_id.is_empty() || q.task_id == run.task_id);
    let mut bad: BTreeSet<String> = this_run.iter().map(|q| name(&q.id)).collect();
    let earlier: BTreeSet<String> = earlier.iter().map(|q| name(&q.id)).collect();
    bad.extend(
        mine.iter()
            .filter(|t| match t.status {
                // A flaky test is one the next round avoids (`feedback`).
                RecordedStatus::Unknown | RecordedStatus::Flaky => true,
                s if s.is_failing() => t.classification != Some(Classification::CodeDefect),
                _ => false,
            })
            .map(|t| name(&t.id)),
    );
    match bad.len() {
        0 if earlier.is_empty() => Verdict::Passed,
        n if attributed && n < mine.len() => Verdict::PassedBut { bad, earlier },
        _ => Verdict::Failed,
    }
}

/// `entry` without the tests named in `bad` (run ids' last parts, as the feedback names them),
/// through the family's own editing of its files; None when a name in `bad` is not one of its
/// tests (nothing is cached on a guess) or nothing would be left. A name in `earlier` (a test an
/// earlier run took out, still in the layer's file) goes only if the entry has that test: most
/// are an earlier round's tests and say nothing about this search's.
fn without(
    entry: &Entry,
    (bad, earlier): (&BTreeSet<String>, &BTreeSet<String>),
    generator: Option<&dyn Generator>,
) -> Option<Entry> {
    let generator = generator?;
    let tests = &entry.module.tests;
    let mut out: BTreeSet<String> = bad.iter().map(|b| generator.test_key(b)).collect();
    if !out.iter().all(|b| tests.contains(b)) {
        return None;
    }
    out.extend(
        earlier
            .iter()
            .map(|e| generator.test_key(e))
            .filter(|e| tests.contains(e)),
    );
    if out.is_empty() {
        return Some(entry.clone());
    }
    let keep: BTreeSet<String> = tests
        .iter()
        .filter(|t| !out.contains(*t))
        .cloned()
        .collect();
    let source = generator.keep_only(&entry.module.source, &keep)?;
    let mut trimmed = entry.clone();
    trimmed.module.source = source;
    trimmed.module.tests.retain(|t| keep.contains(t));
    Some(trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::TestRecord;
    use crate::gen::GeneratedModule;

    fn module(test_file: &str) -> GeneratedModule {
        GeneratedModule {
            module: "calc".into(),
            file: "calc.py".into(),
            test_file: test_file.into(),
            source: "def test_a():\n    pass\n".into(),
            tests: vec!["test_a".into()],
            lines_total: 4,
            lines_covered: 4,
            import_error: None,
            import_error_kind: None,
            calls: Vec::new(),
        }
    }

    fn record(id: &str, file: Option<&str>, status: RecordedStatus) -> TestRecord {
        TestRecord {
            id: id.into(),
            file: file.map(str::to_string),
            status,
            ..Default::default()
        }
    }

    fn run(tests: Vec<TestRecord>) -> RunRecord {
        RunRecord {
            layer: "L1-unit".into(),
            total: tests.len(),
            pass_rate: Some(1.0),
            tests: Some(tests),
            ..Default::default()
        }
    }

    #[test]
    fn a_file_passes_when_its_own_tests_do() {
        let r = run(vec![
            record(
                "test_calc::test_a",
                Some("test_calc.py"),
                RecordedStatus::Passed,
            ),
            record(
                "test_other::test_b",
                Some("test_other.py"),
                RecordedStatus::Failed,
            ),
        ]);
        let passed = |r: &RunRecord, file: &str| judge(r, file) == Verdict::Passed;
        assert!(passed(&r, "test_calc.py"));
        assert_eq!(judge(&r, "test_other.py"), Verdict::Failed);
        let defect = TestRecord {
            classification: Some(Classification::CodeDefect),
            ..record(
                "test_other::test_b",
                Some("test_other.py"),
                RecordedStatus::Failed,
            )
        };
        assert!(
            passed(&run(vec![defect]), "test_other.py"),
            "it found a defect"
        );
        assert!(!passed(&r, "test_absent.py"), "a file that did not run");
        let rust = run(vec![record(
            "clamp_1",
            Some("tests/tt_L1_pricing.rs"),
            RecordedStatus::Passed,
        )]);
        assert!(passed(&rust, "pricing.rs"), "a staged copy is the file");
        assert!(!passed(&rust, "other.rs"));
        let node = run(vec![record("test::a", None, RecordedStatus::Passed)]);
        assert!(passed(&node, "a.test.js"), "judged whole");
    }

    #[test]
    fn a_file_with_a_test_taken_out_is_kept_without_it() {
        let r = run(vec![
            record(
                "test_calc.py::test_a",
                Some("test_calc.py"),
                RecordedStatus::Passed,
            ),
            record(
                "test_calc.py::test_b",
                Some("test_calc.py"),
                RecordedStatus::Flaky,
            ),
        ]);
        let bad = BTreeSet::from(["test_b".to_string()]);
        let none = BTreeSet::new();
        let verdict = Verdict::PassedBut {
            bad: bad.clone(),
            earlier: none.clone(),
        };
        assert_eq!(judge(&r, "test_calc.py"), verdict);
        let python = crate::family::of(crate::testing::framework::Family::Python).generator();
        let mut entry = Entry::new("cd34".into(), module("test_calc.py"), Vec::new());
        entry.module.source =
            "def test_a():\n    assert 1 == 1\n\n\ndef test_b():\n    assert 2 == 2\n".into();
        entry.module.tests = vec!["test_a".into(), "test_b".into()];
        let trimmed = without(&entry, (&bad, &none), python).expect("test_a is left");
        assert_eq!(trimmed.module.tests, ["test_a"]);
        assert!(
            !trimmed.module.source.contains("test_b"),
            "{}",
            trimmed.module.source
        );
        assert!(trimmed.module.source.contains("def test_a"));
        // A test an earlier run took out, which the layer's file still carries: an entry
        // without it stays whole; one that has it (written again) is kept without it.
        let mut carried = run(vec![record(
            "test_calc.py::test_a",
            Some("test_calc.py"),
            RecordedStatus::Passed,
        )]);
        carried.task_id = "TESTRUN-L1-fix-1".into();
        carried.quarantined = Some(vec![crate::artifacts::Quarantined {
            id: "test_calc.py::test_z".into(),
            file: false,
            reason: "test_defect".into(),
            task_id: "TESTRUN-001".into(),
            unsafe_effect: None,
        }]);
        let earlier = BTreeSet::from(["test_z".to_string()]);
        let verdict = Verdict::PassedBut {
            bad: none.clone(),
            earlier: earlier.clone(),
        };
        assert_eq!(judge(&carried, "test_calc.py"), verdict);
        let whole = without(&entry, (&none, &earlier), python).expect("kept whole");
        assert_eq!(whole.module.tests, ["test_a", "test_b"]);
        let again = without(&entry, (&none, &bad), python).expect("test_a is left");
        assert_eq!(again.module.tests, ["test_a"]);
        // A name this run took out that is not one of its tests: nothing kept on a guess.
        let unknown = BTreeSet::from(["test_z".to_string()]);
        assert!(
            without(&entry, (&unknown, &none), python).is_none(),
            "not one of its tests"
        );
        assert!(
            without(&entry, (&bad, &none), None).is_none(),
            "no family to edit it"
        );
        let all = run(vec![record(
            "test_calc.py::test_b",
            Some("test_calc.py"),
            RecordedStatus::Failed,
        )]);
        assert_eq!(judge(&all, "test_calc.py"), Verdict::Failed, "none passed");
    }

    #[test]
    fn only_a_run_after_the_round_promotes_its_entries_and_a_failing_reuse_is_forgotten() {
        let root = tempfile::tempdir().unwrap();
        let session = SessionDir {
            root: root.path().join("TST-x"),
            id: "TST-x".into(),
        };
        std::fs::create_dir_all(session.root.join("results")).unwrap();
        let write_run = |n: usize, status| {
            let r = run(vec![record(
                "test_calc::test_a",
                Some("test_calc.py"),
                status,
            )]);
            crate::util::atomic_write_json(
                &session.root.join(format!("results/run-{n:03}.json")),
                &r,
            )
            .unwrap();
        };
        write_run(1, RecordedStatus::Passed);
        let pending = |reused| Pending {
            layer: "L1-unit".into(),
            framework: None,
            after_run: 1,
            entries: vec![PendingEntry {
                test_file: "test_calc.py".into(),
                reused,
                entry: Entry::new("ab12".into(), module("test_calc.py"), Vec::new()),
            }],
        };
        let path = pending_path(&session.root, "L1-unit", 0);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        crate::util::atomic_write_json(&path, &pending(false)).unwrap();
        assert_eq!(promote(&session), Promoted::default(), "run 1 came before");
        assert!(path.exists(), "still pending");
        write_run(2, RecordedStatus::Passed);
        assert_eq!(promote(&session).kept, 1);
        let cache = Cache::under(root.path());
        assert!(cache.get::<Entry>("ab12").is_some());
        crate::util::atomic_write_json(
            &path,
            &Pending {
                after_run: 2,
                ..pending(true)
            },
        )
        .unwrap();
        write_run(3, RecordedStatus::Failed);
        assert_eq!(promote(&session).forgotten, 1);
        assert!(cache.get::<Entry>("ab12").is_none());
    }
}
