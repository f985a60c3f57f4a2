//! What the built-in generators share: the request a generator helper reads, the result it
//! prints (test files per module, findings, what they reached), its errors, and how a helper is
//! written out and run in the sandbox. Each family's generator is in its folder
//! (`family::python::gen`, `family::node::gen`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub mod behaviour;
pub mod cache;

use crate::proc::run_sandboxed;
use crate::sandbox::Sandbox;
use crate::util::tail_lines;

/// The generator's findings are a session artifact: the report reads them too.
pub use crate::artifacts::Finding;

/// Why the generator helper could not run or gave nothing usable.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error("cannot create {}: {cause}", path.display())]
    CreateDir {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("cannot write {}: {cause}", path.display())]
    WriteFile {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("{0}")]
    Request(serde_json::Error),
    /// It could not start, or ran past its time.
    #[error("the test generator did not finish: {0}")]
    DidNotFinish(crate::proc::ProcError),
    #[error("the test generator exited with {code:?}: {stderr_tail}")]
    Exited {
        code: Option<i32>,
        stderr_tail: String,
    },
    #[error("the test generator printed no result ({cause}): {output_tail}")]
    NoResult {
        cause: serde_json::Error,
        output_tail: String,
    },
    /// The entry-point scan could not start or ran past its time.
    #[error("{0}")]
    ScanNotRun(crate::proc::ProcError),
    /// The entry-point scan failed; its stderr is the message.
    #[error("{stderr_tail}")]
    ScanFailed { stderr_tail: String },
    #[error("{0}")]
    ScanUnreadable(serde_json::Error),
}

/// Writes the modules a helper or a plugin imports from its own folder.
pub(crate) fn write_modules(dir: &Path, files: &[(&str, &str)]) -> Result<(), GenError> {
    std::fs::create_dir_all(dir).map_err(|cause| GenError::CreateDir {
        path: dir.to_path_buf(),
        cause,
    })?;
    // Helpers searching side by side write the same files: one writer at a time, and a file
    // that already says the same is left alone (a helper may be reading it).
    static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    for (name, text) in files {
        let path = dir.join(name);
        if crate::util::read_regular_nofollow(&path).is_ok_and(|now| now == text.as_bytes()) {
            continue;
        }
        crate::util::write_nofollow(&path, text.as_bytes())
            .map_err(|cause| GenError::WriteFile { path, cause })?;
    }
    Ok(())
}

/// One module to test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModuleRef {
    /// Dotted import name: `calc.ops`.
    pub module: String,
    /// Path relative to the repository: `calc/ops.py`.
    pub file: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GenRequest {
    pub modules: Vec<ModuleRef>,
    pub layer: String,
    pub seed: u64,
    pub budget_s: f64,
    pub call_timeout_s: f64,
    pub target_percent: f64,
    /// Revision rounds: lines still uncovered per file, to aim the search at.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub missing: BTreeMap<String, Vec<u32>>,
    /// Test names the executor found broken or flaky: not to be emitted again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub avoid: Vec<String>,
    /// A change-scoped first round: the lines the change added or modified, per file, which
    /// the search aims at first (and tries boundary inputs on).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub changed: BTreeMap<String, Vec<u32>>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct GeneratedModule {
    pub module: String,
    pub file: String,
    pub test_file: String,
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub tests: Vec<String>,
    #[serde(default)]
    pub lines_total: usize,
    #[serde(default)]
    pub lines_covered: usize,
    #[serde(default)]
    pub import_error: Option<String>,
    #[serde(default)]
    pub import_error_kind: Option<String>,
    /// The calls the search ran, for a comparison with the base (`behaviour`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<behaviour::Call>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct GenResult {
    pub modules: Vec<GeneratedModule>,
    #[serde(default)]
    pub findings: Vec<Finding>,
    #[serde(default)]
    pub stats: serde_json::Value,
}

impl GenResult {
    /// Line coverage the search reached over every module (None when no module had lines).
    pub fn reached_percent(&self) -> Option<f64> {
        let (total, covered) = self
            .modules
            .iter()
            .fold((0, 0), |(t, c), m| (t + m.lines_total, c + m.lines_covered));
        (total > 0).then(|| 100.0 * covered as f64 / total as f64)
    }

    /// Shards' results of one search as one: modules in `order`, findings side by side, the
    /// statistics' counts added up.
    pub fn merge(parts: Vec<GenResult>, order: &[ModuleRef]) -> GenResult {
        let mut modules = Vec::new();
        let mut findings = Vec::new();
        let mut stats = serde_json::Map::new();
        for part in parts {
            modules.extend(part.modules);
            findings.extend(part.findings);
            if let serde_json::Value::Object(s) = part.stats {
                for (k, v) in s {
                    let sum = match (stats.get(&k), &v) {
                        (Some(serde_json::Value::Number(a)), serde_json::Value::Number(b)) => {
                            match (a.as_u64(), b.as_u64()) {
                                (Some(a), Some(b)) => serde_json::json!(a + b),
                                _ => serde_json::json!(
                                    a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0)
                                ),
                            }
                        }
                        (Some(a), _) => a.clone(),
                        (None, _) => v,
                    };
                    stats.insert(k, sum);
                }
            }
        }
        let rank = |m: &GeneratedModule| {
            order
                .iter()
                .position(|r| r.module == m.module)
                .unwrap_or(usize::MAX)
        };
        modules.sort_by_key(rank);
        GenResult {
            modules,
            findings,
            stats: serde_json::Value::Object(stats),
        }
    }

    /// The modules that could not be imported, as the generator's outcome data lists them.
    pub fn import_errors(&self) -> Vec<serde_json::Value> {
        self.modules
            .iter()
            .filter_map(|m| {
                m.import_error.as_ref().map(|e| {
                    serde_json::json!({"module": m.module, "error": e, "kind": m.import_error_kind})
                })
            })
            .collect()
    }
}

/// Runs a generator helper (`argv`) in `mirror` with the request on stdin; its result is the
/// JSON it prints. Shared by the Python and the JavaScript helper.
pub(crate) fn run_helper<T: serde::de::DeserializeOwned>(
    sandbox: Option<&Sandbox>,
    argv: &[&str],
    mirror: &Path,
    env: &[(&str, &str)],
    input: Vec<u8>,
    timeout: Duration,
) -> Result<T, GenError> {
    let out = run_sandboxed(sandbox, argv, mirror, env, Some(input), timeout)
        .map_err(GenError::DidNotFinish)?;
    if !out.success() {
        return Err(GenError::Exited {
            code: out.status,
            stderr_tail: tail_lines(&out.stderr, 15),
        });
    }
    serde_json::from_str(out.stdout.trim()).map_err(|cause| GenError::NoResult {
        cause,
        output_tail: tail_lines(&format!("{}{}", out.stdout, out.stderr), 10),
    })
}

/// The entry points a helper (`program helper --entry-points ROOT`) finds in `repo` by reading
/// its files: no project code runs, so a plan can ask before anything is sandboxed.
pub(crate) fn scan_entry_points(
    program: &str,
    helper: &str,
    repo: &Path,
    scratch: &Path,
) -> Result<Vec<String>, GenError> {
    let root = repo.display().to_string();
    let out = crate::proc::run_captured(
        &[program, helper, "--entry-points", &root],
        scratch,
        Duration::from_secs(60),
    )
    .map_err(GenError::ScanNotRun)?;
    if !out.success() {
        return Err(GenError::ScanFailed {
            stderr_tail: tail_lines(&out.stderr, 5),
        });
    }
    serde_json::from_str(out.stdout.trim()).map_err(GenError::ScanUnreadable)
}

/// Where the helper and its mirror live for a layer.
pub fn scratch_dirs(session: &Path, layer: &str) -> (PathBuf, PathBuf) {
    let ws = session.join("workspace");
    (ws.join(format!("gen-{layer}")), ws.join("ttgen"))
}
