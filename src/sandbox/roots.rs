//! The folders a sandboxed child may read besides the repository and the session: system files
//! and the toolchains the user's PATH points at.

use std::path::{Path, PathBuf};
use std::sync::{LazyLock, OnceLock};
use std::time::Duration;

use dashmap::DashMap;

/// System folders every program needs (libraries, certificates, locale, /proc for itself).
const SYSTEM: &[&str] = &[
    "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt", "/proc", "/sys",
];

/// Inside /etc: files that hold secrets or credentials; everything else there is readable.
pub const ETC_DENIED: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/security/opasswd",
];

/// Toolchain homes, from their variables or their default place in the user's home.
const TOOL_HOMES: &[(&str, &str)] = &[
    ("CARGO_HOME", ".cargo"),
    ("RUSTUP_HOME", ".rustup"),
    ("PYENV_ROOT", ".pyenv"),
    ("NVM_DIR", ".nvm"),
    ("GOPATH", "go"),
];

/// The toolchain homes that exist, as variables set to their real place: a sandboxed child's
/// HOME moves, and rustup, cargo and pyenv would otherwise look for them there.
pub fn toolchain_env() -> &'static [(String, String)] {
    static ENV: OnceLock<Vec<(String, String)>> = OnceLock::new();
    ENV.get_or_init(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        TOOL_HOMES
            .iter()
            .filter_map(|(var, default)| {
                let dir = std::env::var_os(var)
                    .map(PathBuf::from)
                    .or_else(|| home.as_ref().map(|h| h.join(default)))?;
                dir.is_dir()
                    .then(|| (var.to_string(), dir.display().to_string()))
            })
            .collect()
    })
}

/// Files a toolchain rewrites on every run of its own accord, whatever the code it runs does:
/// cargo's package-cache locks and its cache-usage tracker (a SQLite file it updates when a
/// build uses the registry). A watched run that writes them has changed nothing of the user's
/// (the writes were thrown away, and cargo makes them again on the next build); a test that
/// wrote them itself would need file-system calls the Rust static check refuses.
pub fn tool_bookkeeping() -> &'static [PathBuf] {
    static FILES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    FILES.get_or_init(|| {
        let Some((_, cargo)) = toolchain_env().iter().find(|(var, _)| var == "CARGO_HOME") else {
            return Vec::new();
        };
        [
            ".global-cache",
            ".global-cache-journal",
            ".global-cache-wal",
            ".global-cache-shm",
            ".package-cache",
            ".package-cache-mutate",
        ]
        .iter()
        .map(|f| Path::new(cargo).join(f))
        .collect()
    })
}

/// System folders, readable /etc, and [`program_roots`].
pub fn toolchain_roots() -> &'static [PathBuf] {
    static ROOTS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots: Vec<PathBuf> = SYSTEM.iter().map(PathBuf::from).collect();
        roots.extend(etc_entries());
        roots.extend(program_roots().iter().cloned());
        dedup_existing(roots)
    })
}

/// Where programs live: each PATH entry (and the prefix above a `bin` entry), the toolchain
/// homes without their credentials, and the user's site-packages.
pub fn program_roots() -> &'static [PathBuf] {
    static ROOTS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let homes: Vec<PathBuf> = toolchain_env()
            .iter()
            .map(|(_, d)| PathBuf::from(d))
            .collect();
        let mut roots: Vec<PathBuf> = Vec::new();
        for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
            // A relative entry, the root or the home folder itself would open far too much.
            if !dir.is_absolute() || dir == Path::new("/") || Some(&dir) == home.as_ref() {
                continue;
            }
            if dir.ends_with("bin") {
                if let Some(prefix) = dir.parent() {
                    // ~/.local holds far more than programs (keyrings, shell history); a
                    // toolchain home (~/.cargo) is opened below, without its credentials.
                    let personal = home
                        .as_ref()
                        .is_some_and(|h| prefix == h || prefix == h.join(".local"));
                    let holds_home = homes.iter().any(|h| h.starts_with(prefix));
                    if prefix != Path::new("/") && !personal && !holds_home {
                        roots.push(prefix.to_path_buf());
                    }
                }
            }
            roots.push(dir);
        }
        for dir in &homes {
            // Registry credentials stay out: the scrubbed token variable would be moot otherwise.
            roots.extend(entries_except(dir, TOOL_HOME_DENIED));
        }
        if let Some(home) = &home {
            roots.push(home.join(".local/lib"));
        }
        dedup_existing(roots)
    })
}

/// Names inside a toolchain home that hold credentials.
const TOOL_HOME_DENIED: &[&str] = &["credentials", "credentials.toml", ".credentials.toml"];

/// `/etc`'s entries but the denied ones.
fn etc_entries() -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk_except(Path::new("/etc"), ETC_DENIED, &mut out);
    out
}

/// The entries of `dir` but those named in `denied`.
fn entries_except(dir: &Path, denied: &[&str]) -> Vec<PathBuf> {
    let denied: Vec<String> = denied
        .iter()
        .map(|d| dir.join(d).display().to_string())
        .collect();
    let denied: Vec<&str> = denied.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    walk_except(dir, &denied, &mut out);
    out
}

/// The entries under `dir` but the `denied` paths; a folder that holds a denied path is opened
/// up one level at a time.
fn walk_except(dir: &Path, denied: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if denied.iter().any(|d| Path::new(d) == path) {
            continue;
        }
        if denied.iter().any(|d| Path::new(d).starts_with(&path)) {
            walk_except(&path, denied, out);
        } else {
            out.push(path);
        }
    }
}

/// Where `interpreter` keeps its standard library and packages (sys.prefix, site-packages and
/// every sys.path folder), asked once per interpreter, in a sandbox that reads `repo` (the
/// interpreter may be the repository's own .venv).
pub fn python_roots(interpreter: &str, repo: &Path) -> Vec<PathBuf> {
    static CACHE: LazyLock<DashMap<String, Vec<PathBuf>>> = LazyLock::new(DashMap::new);
    if let Some(found) = CACHE.get(interpreter) {
        return found.clone();
    }
    let script = "import json, site, sys\n\
                  paths = [sys.prefix, sys.base_prefix, sys.exec_prefix] + list(sys.path)\n\
                  try:\n    paths += site.getsitepackages() + [site.getusersitepackages()]\n\
                  except Exception:\n    pass\n\
                  print(json.dumps([p for p in paths if p]))";
    let out = super::run_probe(&[interpreter, "-c", script], repo, Duration::from_secs(30));
    let mut roots: Vec<PathBuf> = out
        .ok()
        .filter(|o| o.success())
        .and_then(|o| serde_json::from_str::<Vec<String>>(o.stdout.trim()).ok())
        .unwrap_or_default()
        .into_iter()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .collect();
    // A virtualenv's interpreter is a symlink into the real prefix.
    if let Ok(real) = Path::new(interpreter).canonicalize() {
        if let Some(prefix) = real.parent().and_then(Path::parent) {
            roots.push(prefix.to_path_buf());
        }
    }
    let roots = dedup_existing(roots);
    CACHE.insert(interpreter.to_string(), roots.clone());
    roots
}

fn dedup_existing(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths {
        let Ok(real) = p.canonicalize() else {
            continue;
        };
        if !out.contains(&real) {
            out.push(real);
        }
    }
    out
}
