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

use crate::artifacts::{digest, WatchRecord};
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

/// A repository of more files than this is not hashed on every run: its runs are not kept.
const MAX_REPO_FILES: usize = 50_000;

/// A kept run older than this is run again: code that reads the clock or the calendar may
/// answer otherwise by now.
const MAX_AGE_S: u64 = 7 * 24 * 3600;

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
    /// When the run was kept, in seconds since the epoch.
    made_at: u64,
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
    /// None with `--no-cache`; when the repository is too big to be hashed on every run; when
    /// what the project depends on is not pinned where the key can see it; or when the cache
    /// could have come with the repository (see `trusted`).
    pub fn open(ctx: &RoleContext, tools: &Toolchain, layer: &str) -> Option<RunCache> {
        if ctx.session.load_state().ok()?.controls.no_cache {
            return None;
        }
        let root = ctx.session.sessions_root();
        if !trusted(ctx.repo, &root) {
            return None;
        }
        let installed = installed_stamps(ctx.repo, tools)?;
        let repo = repo_digest(ctx.repo, &root)?;
        let canonical = serde_json::json!({
            "format": FORMAT,
            "team_testing": generator_version(),
            "layer": layer,
            "toolchain": tools,
            "installed": installed,
            "sandbox": ctx.sandbox,
            "environment": environment_digest(ctx),
            "repo": repo,
        });
        Some(RunCache {
            cache: Cache::of_runs(&root),
            repo,
            context: digest(canonical.to_string().as_bytes()),
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
        digest(canonical.to_string().as_bytes())
    }

    /// The run an earlier session made under `key`, if one is kept and recent enough.
    pub fn get(&self, key: &str) -> Option<RunEntry> {
        let entry: RunEntry = self.cache.get(key)?;
        (now_s().saturating_sub(entry.made_at) <= MAX_AGE_S).then_some(entry)
    }

    /// Keeps a run under the key of the files it ran; its raw reports are read from `results`.
    pub fn put(&self, key: String, kept: Kept, results: &Path) {
        let mut reports = BTreeMap::new();
        for rel in &kept.out.reports {
            let Some(name) = Path::new(rel).file_name().and_then(|n| n.to_str()) else {
                return;
            };
            // A report that cannot be kept as it is: the run is not kept either.
            let Ok(text) = std::fs::read_to_string(results.join(name)) else {
                return;
            };
            reports.insert(name.to_string(), text);
        }
        let entry = RunEntry {
            format: FORMAT,
            key,
            from: kept.from,
            run_no: kept.run_no,
            out: kept.out,
            reports,
            watched: kept.watched,
            made_at: now_s(),
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

/// Whether a run may be kept: it ran to its end, nothing in it was flaky or timed out, every
/// file loaded, its coverage was measured when the toolchain measures it, and the file-system
/// watch checked it (unless the session's sandbox is off, which the key holds): a reused run
/// never stands for a watch that did not happen.
pub(super) fn keepable(
    out: &RunOutput,
    flaky: &[String],
    watched: &WatchRecord,
    tools: &Toolchain,
    sandboxed: bool,
) -> bool {
    out.env_problem.is_none()
        && !out.timed_out
        && out.exit_code.is_some()
        && flaky.is_empty()
        && out.load_errors.is_empty()
        && (out.coverage.is_some() || tools.coverage_tool.is_none())
        && (watched.checked || !sandboxed)
}

/// sha256 over the files the runs' copies of the repository are made of (`workspace::list_files`,
/// as the mirror lists them: paths and contents, a symlink inside it by its target's content, a
/// file over `HASHED_UP_TO` by size and time), sessions kept inside it left out. None when there
/// are too many files to hash on every run, or they cannot be listed.
fn repo_digest(repo: &Path, sessions_root: &Path) -> Option<String> {
    let exclude = std::fs::canonicalize(sessions_root).ok();
    let mut files = Vec::new();
    crate::workspace::list_files(repo, Path::new(""), exclude.as_deref(), &mut |rel, abs| {
        files.push((rel, abs))
    })
    .ok()?;
    if files.len() > MAX_REPO_FILES {
        return None;
    }
    files.sort();
    let mut listing = String::new();
    for (rel, abs) in files {
        listing.push_str(&format!(
            "{}\0{}\0",
            rel.to_string_lossy(),
            file_digest(&abs)
        ));
    }
    Some(digest(listing.as_bytes()))
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
    // Through a symlink: the copy holds what it points at.
    let Ok(meta) = std::fs::metadata(path) else {
        return "absent".into();
    };
    if !meta.is_file() {
        return "other".into();
    }
    if meta.len() > HASHED_UP_TO {
        return format!("big:{}:{}", meta.len(), mtime_ns(&meta));
    }
    match std::fs::read(path) {
        Ok(bytes) => digest(&bytes),
        Err(_) => "unreadable".into(),
    }
}

/// What is installed beside the code, which the repository's files do not show: the Python
/// interpreter's package folders, node's installed modules, by modification time (installing or
/// removing a package changes its folder). None when the dependencies are resolved afresh for
/// each session, so their versions may differ from run to run: node without its `node_modules`,
/// a crate without its `Cargo.lock`, a Python whose package folders cannot be asked for.
fn installed_stamps(repo: &Path, tools: &Toolchain) -> Option<Vec<String>> {
    let mut folders: Vec<PathBuf> = Vec::new();
    match tools.known_framework().map(Framework::family) {
        Some(Family::Python) => {
            // Not the user's site: the sandbox gives each run a HOME of its own.
            let code = "import os, site; print(os.pathsep.join(site.getsitepackages()))";
            let line = probe(&[&tools.interpreter, "-c", code], repo)?;
            folders.extend(std::env::split_paths(&line));
        }
        Some(Family::Node) => {
            let modules = repo.join("node_modules");
            if !modules.is_dir() && declares_dependencies(&repo.join("package.json")) {
                return None;
            }
            folders.push(modules.join(".package-lock.json"));
            folders.push(modules);
        }
        Some(Family::Cargo) if !repo.join("Cargo.lock").is_file() => return None,
        _ => {}
    }
    let stamps = folders
        .iter()
        .map(|f| {
            let stamp = std::fs::metadata(f).map_or(0, |m| mtime_ns(&m));
            format!("{}:{stamp}", f.display())
        })
        .collect();
    Some(stamps)
}

/// Whether a package.json names packages to install (an unreadable one is taken to).
fn declares_dependencies(package_json: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(package_json) else {
        return true;
    };
    let Ok(manifest) = serde_json::from_str::<serde_json::Value>(&text) else {
        return true;
    };
    [
        "dependencies",
        "devDependencies",
        "optionalDependencies",
        "peerDependencies",
    ]
    .iter()
    .any(|k| manifest[k].as_object().is_some_and(|deps| !deps.is_empty()))
}

/// The variables a run's children see (credentials are never passed, hence never in here), so
/// that a run under another `TZ`, locale or tool flag is not taken for this one.
fn environment_digest(ctx: &RoleContext) -> String {
    let (kept, _) = crate::sandbox::env::child_env(
        std::env::vars_os(),
        Path::new(""),
        &ctx.sandbox.allow_env,
        &ctx.sandbox.secret_env,
    );
    let mut pairs: Vec<String> = kept
        .iter()
        .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
        .collect();
    pairs.sort();
    digest(pairs.join("\0").as_bytes())
}

/// Whether the cache under `sessions_root` is this machine's own. Under the repository (the
/// default sessions root), a cache could have arrived with the project itself, a forged "ran,
/// passed, watched" among it; it is trusted only in a git repository that tracks nothing there
/// (a clone brings only what git tracks).
fn trusted(repo: &Path, sessions_root: &Path) -> bool {
    let (Ok(repo), Ok(root)) = (
        std::fs::canonicalize(repo),
        std::fs::canonicalize(sessions_root),
    ) else {
        return false;
    };
    let Ok(inside) = root.strip_prefix(&repo) else {
        return true;
    };
    let inside = inside.to_string_lossy();
    let spec = if inside.is_empty() {
        "."
    } else {
        inside.as_ref()
    };
    matches!(
        crate::git::git(&repo, &["ls-files", "--", spec], None),
        Ok(listed) if listed.trim().is_empty()
    )
}

fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn mtime_ns(meta: &std::fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
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
    fn node_packages_to_install_are_declared_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("package.json");
        assert!(declares_dependencies(&manifest), "no manifest: assume so");
        std::fs::write(&manifest, r#"{"name": "x", "devDependencies": {}}"#).unwrap();
        assert!(!declares_dependencies(&manifest));
        std::fs::write(&manifest, r#"{"devDependencies": {"jest": "^29"}}"#).unwrap();
        assert!(declares_dependencies(&manifest));
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
