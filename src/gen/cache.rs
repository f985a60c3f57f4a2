//! Generated tests kept between the sessions of one repository, so that nothing is searched
//! twice: a module whose files, dependencies, generator and request have not changed reuses the
//! tests (and the coverage) its last search gave. An entry is keyed by a sha256 of all of that,
//! is written atomically (temp file, fsync, rename) and only once its tests passed, and lives
//! under the sessions root in `cache/generated/`. A hit refreshes the entry's time; `prune`
//! removes the ones unused for a while.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Finding, GenRequest, GeneratedModule, ModuleRef};

/// The entry format; an entry of another format is a miss.
const FORMAT: u32 = 1;

/// The cache's folder under a sessions root.
pub fn dir_under(sessions_root: &Path) -> PathBuf {
    sessions_root.join("cache").join("generated")
}

/// The folder of the layer runs kept for reuse under a sessions root.
pub fn runs_dir_under(sessions_root: &Path) -> PathBuf {
    sessions_root.join("cache").join("runs")
}

/// What a cache keeps: an entry that knows its key and whether this build reads its format.
pub trait Keyed: Serialize + DeserializeOwned {
    fn key(&self) -> &str;
    fn current(&self) -> bool;
}

impl Keyed for Entry {
    fn key(&self) -> &str {
        &self.key
    }
    fn current(&self) -> bool {
        self.format == FORMAT
    }
}

/// One module's search, as a later run reuses it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub format: u32,
    pub key: String,
    /// The test file, the tests, what the search reached and the calls it ran.
    pub module: GeneratedModule,
    /// The findings the search made in this module.
    pub findings: Vec<Finding>,
}

impl Entry {
    pub fn new(key: String, module: GeneratedModule, findings: Vec<Finding>) -> Self {
        Entry {
            format: FORMAT,
            key,
            module,
            findings,
        }
    }
}

/// The cache of one sessions root: generated tests (`under`) or layer runs (`of_runs`).
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

/// What `prune` removed.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Pruned {
    pub entries: usize,
    pub bytes: u64,
    pub kept: usize,
}

impl Cache {
    pub fn under(sessions_root: &Path) -> Self {
        Cache {
            dir: dir_under(sessions_root),
        }
    }

    pub fn of_runs(sessions_root: &Path) -> Self {
        Cache {
            dir: runs_dir_under(sessions_root),
        }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir
            .join(&key[..2.min(key.len())])
            .join(format!("{key}.json"))
    }

    /// The entry for `key`; None when there is none or it cannot be read as one (an unreadable
    /// entry is removed: it would only ever miss).
    pub fn get<T: Keyed>(&self, key: &str) -> Option<T> {
        let path = self.path(key);
        let bytes = std::fs::read(&path).ok()?;
        match serde_json::from_slice::<T>(&bytes) {
            Ok(entry) if entry.current() && entry.key() == key => {
                // Its last use, for `prune`.
                if let Ok(f) = std::fs::File::options().write(true).open(&path) {
                    let _ = f.set_modified(SystemTime::now());
                }
                Some(entry)
            }
            _ => {
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Keeps `entry` under its key, atomically: a reader sees the whole entry or none.
    pub fn put<T: Keyed>(&self, entry: &T) -> Result<(), crate::util::FileError> {
        let path = self.path(entry.key());
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|cause| crate::util::FileError::Write {
                path: parent.to_path_buf(),
                cause,
            })?;
        }
        crate::util::atomic_write_json(&path, entry)
    }

    /// Forgets `key` (its tests no longer pass).
    pub fn remove(&self, key: &str) {
        let _ = std::fs::remove_file(self.path(key));
    }

    /// Removes the entries not used for `unused_for` (all of them with `Duration::ZERO`), and any
    /// temp file a killed write left.
    pub fn prune(&self, unused_for: Duration) -> Pruned {
        let mut pruned = Pruned::default();
        let now = SystemTime::now();
        for shard in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            for file in std::fs::read_dir(shard.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let Ok(meta) = file.metadata() else { continue };
                let used = meta.modified().unwrap_or(now);
                let age = now.duration_since(used).unwrap_or_default();
                let leftover = file.file_name().to_string_lossy().starts_with('.');
                if leftover || age >= unused_for {
                    if std::fs::remove_file(file.path()).is_ok() {
                        pruned.entries += usize::from(!leftover);
                        pruned.bytes += meta.len();
                    }
                } else {
                    pruned.kept += 1;
                }
            }
            let _ = std::fs::remove_dir(shard.path());
        }
        pruned
    }
}

/// The generator as a key sees it: this build's version and the binary's identity, so that a
/// rebuilt generator never reuses an older one's tests.
pub fn generator_version() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::metadata(p).ok())
        .map(|m| {
            let at = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}:{at}", m.len())
        })
        .unwrap_or_default();
    format!("{}+{exe}", env!("CARGO_PKG_VERSION"))
}

/// Everything a module's search depends on.
pub struct KeyInput<'a> {
    /// The test framework the tests are written for (`pytest`, `jest`, `cargo`, `go`).
    pub framework: &'a str,
    pub generator: &'a str,
    pub req: &'a GenRequest,
    pub module: &'a ModuleRef,
    /// The files the search of the module reads (its own, its dependencies), relative to the
    /// repository, with their contents' sha256.
    pub files: &'a BTreeMap<String, String>,
}

/// The cache key of a module's search.
pub fn key(input: &KeyInput) -> String {
    let req = input.req;
    let file = &input.module.file;
    let canonical = serde_json::json!({
        "format": FORMAT,
        "framework": input.framework,
        "generator": input.generator,
        "layer": req.layer,
        "seed": req.seed,
        "call_timeout_s": req.call_timeout_s,
        "target_percent": req.target_percent,
        "module": input.module,
        "files": input.files,
        "missing": req.missing.get(file),
        "changed": req.changed.get(file),
        "avoid": req.avoid,
    });
    hex(&Sha256::digest(canonical.to_string().as_bytes()))
}

/// sha256 of a file's content, hex; None when it cannot be read.
pub fn file_hash(path: &Path) -> Option<String> {
    std::fs::read(path).ok().map(|b| hex(&Sha256::digest(&b)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every source file of the project and its `manifests`, `file` among them: what a search reads
/// in a family whose unit of compilation is the whole crate or module.
pub fn whole_project(file: &str, sources: &[String], manifests: &[&str]) -> BTreeSet<String> {
    let others = manifests.iter().map(|m| m.to_string());
    sources
        .iter()
        .cloned()
        .chain(others)
        .chain([file.to_string()])
        .collect()
}

/// The files `file`'s search depends on, to a fixed point: `direct` gives one file's own
/// (relative paths); the module's file is in the result.
pub fn closure(file: &str, mut direct: impl FnMut(&str) -> Vec<String>) -> BTreeSet<String> {
    let mut seen = BTreeSet::from([file.to_string()]);
    let mut todo = vec![file.to_string()];
    while let Some(next) = todo.pop() {
        for dep in direct(&next) {
            if seen.insert(dep.clone()) {
                todo.push(dep);
            }
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(name: &str) -> GeneratedModule {
        GeneratedModule {
            module: name.into(),
            file: format!("{name}.py"),
            test_file: format!("test_{name}.py"),
            source: "def test_a():\n    assert 1\n".into(),
            tests: vec!["test_a".into()],
            lines_total: 10,
            lines_covered: 8,
            import_error: None,
            import_error_kind: None,
            calls: Vec::new(),
        }
    }

    fn req(seed: u64) -> GenRequest {
        GenRequest {
            modules: Vec::new(),
            layer: "L1-unit".into(),
            seed,
            budget_s: 10.0,
            call_timeout_s: 2.0,
            target_percent: 80.0,
            missing: BTreeMap::new(),
            avoid: Vec::new(),
            changed: BTreeMap::new(),
        }
    }

    #[test]
    fn a_key_changes_with_what_the_search_depends_on_and_only_with_that() {
        let m = ModuleRef {
            module: "calc".into(),
            file: "calc.py".into(),
        };
        let files = BTreeMap::from([("calc.py".to_string(), "aa".to_string())]);
        let base = |seed, files: &BTreeMap<String, String>, budget| {
            let mut r = req(seed);
            r.budget_s = budget;
            key(&KeyInput {
                framework: "pytest",
                generator: "1",
                req: &r,
                module: &m,
                files,
            })
        };
        let k = base(1, &files, 10.0);
        assert_eq!(k, base(1, &files, 99.0), "the budget is not a dependency");
        assert_ne!(k, base(2, &files, 10.0), "the seed is");
        let edited = BTreeMap::from([("calc.py".to_string(), "ab".to_string())]);
        assert_ne!(k, base(1, &edited, 10.0), "the content is");
        let mut other_missing = req(1);
        other_missing.missing.insert("other.py".into(), vec![3]);
        let same = key(&KeyInput {
            framework: "pytest",
            generator: "1",
            req: &other_missing,
            module: &m,
            files: &files,
        });
        assert_eq!(k, same, "another module's missing lines are not");
    }

    #[test]
    fn an_entry_is_read_back_whole_and_a_damaged_one_is_a_miss() {
        let root = tempfile::tempdir().unwrap();
        let cache = Cache::under(root.path());
        let entry = Entry::new("ab12".into(), module("calc"), Vec::new());
        cache.put(&entry).unwrap();
        let back = cache.get::<Entry>("ab12").unwrap();
        assert_eq!(back.module.source, entry.module.source);
        std::fs::create_dir_all(cache.path("cd34").parent().unwrap()).unwrap();
        std::fs::write(cache.path("cd34"), b"{\"format\": 1, \"key\"").unwrap();
        assert!(cache.get::<Entry>("cd34").is_none());
        assert!(!cache.path("cd34").exists(), "a damaged entry is removed");
    }

    #[test]
    fn prune_removes_unused_entries_and_killed_writes() {
        let root = tempfile::tempdir().unwrap();
        let cache = Cache::under(root.path());
        cache
            .put(&Entry::new("ab12".into(), module("a"), Vec::new()))
            .unwrap();
        let leftover = cache.path("ab99").with_file_name(".ab99.json.tmp-7");
        std::fs::write(&leftover, b"{").unwrap();
        let p = cache.prune(Duration::from_secs(3600));
        assert_eq!((p.entries, p.kept), (0, 1));
        assert!(!leftover.exists());
        let p = cache.prune(Duration::ZERO);
        assert_eq!((p.entries, p.kept), (1, 0));
        assert!(cache.get::<Entry>("ab12").is_none());
    }

    #[test]
    fn the_closure_follows_dependencies_to_a_fixed_point() {
        let deps = BTreeMap::from([
            ("a", vec!["b".to_string()]),
            ("b", vec!["c".to_string(), "a".to_string()]),
        ]);
        let got = closure("a", |f| deps.get(f).cloned().unwrap_or_default());
        assert_eq!(got.into_iter().collect::<Vec<_>>(), ["a", "b", "c"]);
    }
}
