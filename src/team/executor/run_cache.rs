//! A layer's run kept between the sessions of one repository, so that a run of the very same
//! tests on the very same code is not made twice: when the repository's files, the layer's test
//! files, the toolchain, its installed packages and the sandbox are what an earlier session ran,
//! the executor takes that run's output (its raw reports too) and the file-system watch's verdict
//! instead of running the tests again. An entry is written atomically and only for a run that
//! ended cleanly: no timeout, no flaky test, no environment problem, the repository unchanged
//! while it ran. It lives under the sessions root in `cache/runs/` (`gen::cache::Cache`), is
//! turned off with `--no-cache` and pruned with `sessions gc`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::artifacts::WatchRecord;
use crate::gen::cache::{generator_version, Cache, Keyed};
use crate::team::RoleContext;
use crate::testing::framework::{Family, Framework};
use crate::testing::runner::RunOutput;
use crate::testing::toolchain::{probe, Toolchain};

/// The entry format; an entry of another format is a miss.
const FORMAT: u32 = 1;

/// A file bigger than this counts by its size and modification time, not its content (a data
/// file of gigabytes is not read on every run).
const HASHED_UP_TO: u64 = 8 << 20;

/// One layer run, as a later session reuses it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct RunEntry {
    format: u32,
    key: String,
    /// The run it was: `<session id> run 003`.
    pub from: String,
    /// The run's number as its raw reports are named (`pytest-003.txt`).
    run_no: String,
    out: RunOutput,
    /// The raw reports under `results/`, by file name.
    reports: BTreeMap<String, String>,
    pub watched: WatchRecord,
}

impl Keyed for RunEntry {
    fn key(&self) -> &str {
        &self.key
    }
    fn current(&self) -> bool {
        self.format == FORMAT
    }
}

impl RunEntry {
    /// The kept output as this session's run `run_no`: its raw reports written again under
    /// `results/` with this run's number, and listed by those names.
    pub fn restore(&self, results: &Path, run_no: &str) -> RunOutput {
        let mut out = self.out.clone();
        out.reports = self
            .out
            .reports
            .iter()
            .filter_map(|rel| {
                let name = Path::new(rel).file_name()?.to_str()?;
                let text = self.reports.get(name)?;
                let renamed = renamed(name, &self.run_no, run_no)?;
                crate::util::write_nofollow(&results.join(&renamed), text.as_bytes()).ok()?;
                Some(format!("results/{renamed}"))
            })
            .collect();
        out
    }
}

/// `pytest-003.txt` as run `007` names it; None for a name without the run's number.
fn renamed(name: &str, from: &str, to: &str) -> Option<String> {
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    let base = stem.strip_suffix(&format!("-{from}"))?;
    Some(if ext.is_empty() {
        format!("{base}-{to}")
    } else {
        format!("{base}-{to}.{ext}")
    })
}

/// The cache as one layer's executor sees it: everything a run depends on but its test files.
pub(super) struct RunCache {
    cache: Cache,
    /// The repository's files, hashed.
    repo: String,
    /// The repository, toolchain, environment and sandbox, hashed.
    context: String,
}

impl RunCache {
    /// None with `--no-cache`, or when the repository is too big to be hashed on every run.
    pub fn open(ctx: &RoleContext, tools: &Toolchain, layer: &str) -> Option<RunCache> {
        if ctx.session.load_state().ok()?.controls.no_cache {
            return None;
        }
        let root = ctx.session.sessions_root();
        let repo = repo_digest(ctx.repo, &root)?;
        let canonical = serde_json::json!({
            "format": FORMAT,
            "team_testing": generator_version(),
            "layer": layer,
            "toolchain": tools,
            "installed": installed_stamps(ctx.repo, tools),
            "sandbox": ctx.sandbox,
            "repo": repo,
        });
        Some(RunCache {
            cache: Cache::of_runs(&root),
            repo,
            context: hex(&Sha256::digest(canonical.to_string().as_bytes())),
        })
    }

    /// Whether the repository's files are still what `open` found (a run that saw them change
    /// is not kept).
    pub fn repo_unchanged(&self, ctx: &RoleContext) -> bool {
        repo_digest(ctx.repo, &ctx.session.sessions_root()).as_ref() == Some(&self.repo)
    }

    /// The key of a run of `test_dir`'s files as they are now, without the tests `deselect`
    /// names: taken before a run, so a file changed while it runs is not what it ran.
    pub fn key(&self, test_dir: &Path, deselect: &[String]) -> String {
        let canonical = serde_json::json!({
            "context": self.context,
            "tests": tree_digest(test_dir),
            "deselect": deselect,
        });
        hex(&Sha256::digest(canonical.to_string().as_bytes()))
    }

    /// The run an earlier session made under `key`, if one is kept.
    pub fn get(&self, key: &str) -> Option<RunEntry> {
        self.cache.get(key)
    }

    /// Keeps a run under the key of the files it ran; its raw reports are read from `results`.
    pub fn put(&self, key: String, kept: Kept, results: &Path) {
        let reports = kept
            .out
            .reports
            .iter()
            .filter_map(|rel| {
                let name = Path::new(rel).file_name()?.to_str()?.to_string();
                let text = std::fs::read_to_string(results.join(&name)).ok()?;
                Some((name, text))
            })
            .collect();
        let entry = RunEntry {
            format: FORMAT,
            key,
            from: kept.from,
            run_no: kept.run_no,
            out: kept.out,
            reports,
            watched: kept.watched,
        };
        // A cache that cannot be written costs the next run its time, never its result.
        let _ = self.cache.put(&entry);
    }
}

/// What `put` keeps of a finished run.
pub(super) struct Kept {
    pub from: String,
    pub run_no: String,
    pub out: RunOutput,
    pub watched: WatchRecord,
}

/// Whether a run may be kept: it ran to its end, nothing in it was flaky or timed out, and its
/// coverage (or the reason there is none) is known.
pub(super) fn keepable(out: &RunOutput, flaky: &[String]) -> bool {
    out.env_problem.is_none()
        && !out.timed_out
        && out.exit_code.is_some()
        && flaky.is_empty()
        && out.load_errors.is_empty()
}

/// sha256 over the repository's files (paths and contents; a file over `HASHED_UP_TO` by size
/// and time), sessions kept inside it left out. None when the walk hit its limit.
fn repo_digest(repo: &Path, sessions_root: &Path) -> Option<String> {
    let files = crate::testing::detect::walk(repo);
    if files.len() >= crate::testing::detect::WALK_LIMIT {
        return None;
    }
    let inside = sessions_root.strip_prefix(repo).ok();
    let mut hasher = Sha256::new();
    for rel in files {
        if inside.is_some_and(|i| Path::new(&rel).starts_with(i)) {
            continue;
        }
        hasher.update(rel.as_bytes());
        hasher.update([0]);
        hasher.update(file_digest(&repo.join(&rel)).as_bytes());
        hasher.update([0]);
    }
    Some(hex(&hasher.finalize()))
}

/// Every file under a layer's folder, recursively (caches left out), with its content's digest.
fn tree_digest(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !matches!(
                    name.as_str(),
                    "__pycache__" | ".pytest_cache" | "node_modules"
                ) {
                    stack.push(path);
                }
            } else if let Ok(rel) = path.strip_prefix(dir) {
                out.insert(rel.to_string_lossy().into_owned(), file_digest(&path));
            }
        }
    }
    out
}

fn file_digest(path: &Path) -> String {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return "absent".into();
    };
    if !meta.is_file() {
        return match std::fs::read_link(path) {
            Ok(target) => format!("link:{}", target.display()),
            Err(_) => "other".into(),
        };
    }
    if meta.len() > HASHED_UP_TO {
        return format!("big:{}:{}", meta.len(), mtime_ns(&meta));
    }
    match crate::util::read_regular(path) {
        Ok(bytes) => hex(&Sha256::digest(&bytes)),
        Err(_) => "unreadable".into(),
    }
}

/// What is installed beside the code, which the repository's files do not show: the Python
/// interpreter's package folders, node's installed modules, by modification time (installing or
/// removing a package changes its folder).
fn installed_stamps(repo: &Path, tools: &Toolchain) -> Vec<String> {
    let mut folders: Vec<PathBuf> = Vec::new();
    match tools.known_framework().map(Framework::family) {
        Some(Family::Python) => {
            // Not the user's site: the sandbox gives each run a HOME of its own.
            let code = "import os, site; print(os.pathsep.join(site.getsitepackages()))";
            if let Some(line) = probe(&[&tools.interpreter, "-c", code], repo) {
                folders.extend(std::env::split_paths(&line));
            }
        }
        Some(Family::Node) => {
            folders.push(repo.join("node_modules"));
            folders.push(repo.join("node_modules").join(".package-lock.json"));
        }
        _ => {}
    }
    folders
        .iter()
        .map(|f| {
            let stamp = std::fs::metadata(f).map_or(0, |m| mtime_ns(&m));
            format!("{}:{stamp}", f.display())
        })
        .collect()
}

fn mtime_ns(meta: &std::fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_takes_the_new_run_number() {
        assert_eq!(
            renamed("pytest-003.txt", "003", "007").as_deref(),
            Some("pytest-007.txt")
        );
        assert_eq!(
            renamed("coveragepy-003.json", "003", "012").as_deref(),
            Some("coveragepy-012.json")
        );
        assert_eq!(renamed("baseline.json", "003", "007"), None);
    }

    #[test]
    fn the_layer_key_follows_every_file_of_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("test_a.py"), "a").unwrap();
        std::fs::write(dir.path().join("sub/test_b.py"), "b").unwrap();
        let before = tree_digest(dir.path());
        assert_eq!(before.len(), 2);
        std::fs::write(dir.path().join("sub/test_b.py"), "b2").unwrap();
        assert_ne!(before, tree_digest(dir.path()));
    }
}
