//! The built-in offline test generator for Rust crates, on the stable toolchain: the public API
//! read with `syn` (`api`), inputs by type (`inputs`), candidate calls (`candidates`) built in
//! batches into a generated test target of a copy of the crate and run one by one under
//! coverage instrumentation (`probe`, `coverage`), kept by the counters they reach or the
//! defects they show (`search`), and delivered as `tests/team_testing_<module>.rs` files whose
//! every test was built and run once more (`render`, `deliver`).

mod api;
mod candidates;
pub(super) mod coverage;
mod deliver;
mod docs;
mod edit;
mod focus;
mod harness;
mod inputs;
mod literal;
mod model;
mod probe;
mod render;
mod replay;
mod search;
mod ty;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub(super) use edit::remove_tests;

use crate::family::generator::{GenJob, Generator, ReplayJob, Revision};
use crate::gen::behaviour::{Call, ReplayResult};
use crate::gen::{GenError, GenResult, GeneratedModule, ModuleRef};
use crate::testing::framework::Framework;

/// What `doctor` says of the generator: built in, guided by coverage when the toolchain has
/// llvm-profdata and llvm-cov.
pub fn readiness() -> String {
    match coverage::LlvmTools::find(Path::new(".")) {
        Some(_) => "built in: the public API read with syn, candidates kept by the coverage \
                    counters they reach (llvm-tools)"
            .into(),
        None => format!("built in, with no coverage guidance: {}", coverage::MISSING),
    }
}

/// The Rust generator as the generator role uses it.
pub struct RustGenerator;

/// Where a layer's search keeps its raw profiles and merged coverage
/// (`<workspace>/rust-gen-L1`), and the target folder every layer builds into (the crate's
/// dependencies are built once).
fn work_dirs(workspace: &Path, layer: &str) -> (PathBuf, PathBuf) {
    let code = layer.split('-').next().unwrap_or(layer);
    (
        workspace.join(format!("rust-gen-{code}")),
        workspace.join("rust-gen-target"),
    )
}

/// The layer's test targets in the copy: `tt_probe_L1`, `tt_check_L1`.
fn targets(layer: &str) -> (String, String) {
    let code = layer.split('-').next().unwrap_or(layer);
    (format!("tt_probe_{code}"), format!("tt_check_{code}"))
}

impl Generator for RustGenerator {
    fn module_words(&self) -> &'static str {
        "Rust library module"
    }

    /// A module is `foo.rs` or `foo/mod.rs`: either on the base is the same module.
    fn on_base(&self, base: &Path, module: &ModuleRef) -> bool {
        let file = base.join(&module.file);
        let other = match module.file.strip_suffix("/mod.rs") {
            Some(dir) => base.join(format!("{dir}.rs")),
            None => file.with_extension("").join("mod.rs"),
        };
        file.is_file() || other.is_file()
    }

    fn no_entry_points(&self) -> &'static str {
        "the built-in Rust generator writes L1 and L2 tests of the library's public API; it does \
         not run the crate's binaries: L3 skipped"
    }

    /// The library's modules whose files are among `files` (a binary-only crate has none).
    fn modules(&self, repo: &Path, _: Option<Framework>, files: &[String]) -> Vec<ModuleRef> {
        let Ok(api) = api::discover(repo) else {
            return Vec::new();
        };
        let mut out: Vec<ModuleRef> = Vec::new();
        for m in &api.modules {
            if files.contains(&m.file) && !out.iter().any(|r| r.file == m.file) {
                out.push(ModuleRef {
                    module: deliver::module_name(&m.path),
                    file: m.file.clone(),
                });
            }
        }
        out
    }

    fn entry_points(&self, _repo: &Path, _scratch: &Path) -> Result<Vec<String>, GenError> {
        Ok(Vec::new())
    }

    /// Cargo's and rustup's homes are read by every sandboxed child already.
    fn read_roots(&self, _repo: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    fn write_dirs(&self, session: &Path, layer: &str) -> Vec<PathBuf> {
        let (work, target) = work_dirs(&session.join("workspace"), layer);
        vec![work.join("profiles"), target]
    }

    fn prepare_mirror(&self, _repo: &Path, _session: &Path, _mirror: &Path) -> std::io::Result<()> {
        Ok(())
    }

    fn generate(&self, job: &GenJob) -> Result<GenResult, GenError> {
        generate(job)
    }

    fn test_key(&self, id: &str) -> String {
        id.rsplit("::").next().unwrap_or(id).to_string()
    }

    /// Tests the executor found broken or flaky go; defect tests the new file lacks are carried
    /// over and every defect the executor found is marked ignored with its reason; a revision
    /// keeps nothing else of the last round.
    fn revise(&self, r: &Revision) -> String {
        let fresh = edit::remove_tests(r.new, r.avoid);
        let combined = edit::carry_over(r.previous, &fresh, r.defects, r.avoid);
        edit::mark_defects(&combined, r.defects)
    }

    fn is_test_file(&self, name: &str) -> bool {
        name.ends_with(".rs")
    }

    /// The replay builds in the mirror and in the target folder and profiles of the search.
    fn replay_writes(&self, session: &Path, layer: &str) -> Option<Vec<PathBuf>> {
        Some(self.write_dirs(session, layer))
    }

    fn replay(&self, job: &ReplayJob) -> Option<Result<ReplayResult, GenError>> {
        Some(replay::replay(job).map_err(|e| GenError::Exited {
            code: None,
            stderr_tail: e.to_string(),
        }))
    }

    /// Every search builds the crate's probes first: a short one costs what the deep one does.
    fn quick_first_pass(&self) -> bool {
        false
    }

    /// The crate is one unit of compilation (a macro or a trait impl anywhere may change any
    /// module's behaviour): all of it, its manifest, lock file and build script.
    fn search_reads(
        &self,
        _: &Path,
        file: &str,
        sources: &[String],
    ) -> std::collections::BTreeSet<String> {
        crate::gen::cache::whole_project(file, sources, &["Cargo.toml", "Cargo.lock", "build.rs"])
    }

    fn keep_only(&self, source: &str, keep: &std::collections::BTreeSet<String>) -> Option<String> {
        let others: std::collections::BTreeSet<String> = edit::test_names(source)
            .into_iter()
            .filter(|n| !keep.contains(n))
            .collect();
        let kept = edit::test_names(source).len() - others.len();
        (kept > 0).then(|| edit::remove_tests(source, &others))
    }

    fn tests_noun(&self, _framework: Framework) -> String {
        "cargo tests".into()
    }

    fn defects_kept_as(&self) -> &'static str {
        "ignored tests (cargo test -- --ignored)"
    }

    fn unloadable(&self) -> &'static str {
        "could not be read"
    }
}

/// Why the generator stopped before writing anything.
#[derive(Debug, thiserror::Error)]
enum RustGenError {
    #[error(transparent)]
    Api(#[from] api::ApiError),
    #[error(transparent)]
    Probe(#[from] probe::ProbeError),
    #[error("cannot copy the crate into {}: {cause}", path.display())]
    Copy {
        path: PathBuf,
        cause: std::io::Error,
    },
}

fn generate(job: &GenJob) -> Result<GenResult, GenError> {
    run(job).map_err(|e| GenError::Exited {
        code: None,
        stderr_tail: e.to_string(),
    })
}

fn run(job: &GenJob) -> Result<GenResult, RustGenError> {
    let started = Instant::now();
    let api = api::discover(job.repo)?;
    // The role's mirror of the repository (one per layer) is the copy the probe builds in.
    let copy = std::path::absolute(job.mirror).unwrap_or_else(|_| job.mirror.into());
    let workspace = copy.parent().unwrap_or(&copy).to_path_buf();
    let (scratch, target_dir) = work_dirs(&workspace, &job.req.layer);
    let (probe_target, check_target) = targets(&job.req.layer);
    prepare_copy(job.repo, &copy, &[&probe_target, &check_target])?;
    for dir in [
        scratch.join("profiles"),
        target_dir.clone(),
        copy.join("tests"),
    ] {
        std::fs::create_dir_all(&dir).map_err(|cause| RustGenError::Copy {
            path: dir.clone(),
            cause,
        })?;
    }
    let tools = coverage::LlvmTools::find(&copy);
    let deadline = Instant::now() + job.timeout;
    let probe = probe::Probe {
        copy: copy.clone(),
        target: probe_target,
        target_dir,
        cargo: "cargo".into(),
        sandbox: job.sandbox,
        deadline,
        binary: None,
    };
    let mut search = search::Search {
        api: &api,
        req: job.req,
        scratch: scratch.clone(),
        probe,
        tools,
        call_timeout: Duration::from_secs_f64(job.req.call_timeout_s.clamp(0.5, 60.0)),
    };
    let found = search.run()?;
    if job.req.layer.starts_with("L2") && found.stats["candidates"] == 0 {
        let mut stats = found.stats;
        stats.insert(
            "not_applicable".into(),
            "no type with methods, no function whose result another takes and no two functions \
             that take the same arguments: the API is single calls"
                .into(),
        );
        return Ok(GenResult {
            modules: Vec::new(),
            findings: Vec::new(),
            stats: serde_json::Value::Object(stats),
        });
    }
    let files = deliver::files(&api, &found.kept);
    let delivered = deliver::check(
        &mut search.probe,
        &api,
        files,
        &job.req.layer,
        job.req.seed,
        search.tools.as_ref(),
        &scratch,
    )?;
    let texts = deliver::texts(&api, &delivered.files, &job.req.layer, job.req.seed);
    let modules = job
        .req
        .modules
        .iter()
        .map(|m| {
            let lines = delivered
                .coverage
                .as_ref()
                .and_then(|c| c.files.iter().find(|f| f.path == m.file));
            GeneratedModule {
                module: m.module.clone(),
                file: m.file.clone(),
                test_file: render::file_name(&m.module, &job.req.layer),
                source: texts.get(&m.module).cloned().unwrap_or_default(),
                tests: delivered
                    .files
                    .get(&m.module)
                    .map(|ts| ts.iter().map(|t| t.name.clone()).collect())
                    .unwrap_or_default(),
                lines_total: lines.map_or(0, |l| l.lines_total),
                lines_covered: lines.map_or(0, |l| l.lines_covered),
                import_error: None,
                import_error_kind: None,
                calls: calls(&api, &found, &delivered.files, m),
            }
        })
        .collect();
    let mut stats = found.stats;
    stats.insert(
        "coverage_tool".into(),
        match &search.tools {
            Some(_) => "llvm-cov".into(),
            None => coverage::MISSING.into(),
        },
    );
    stats.insert("dropped_by_check".into(), delivered.dropped.into());
    // The items the generator does not call, with why: from reading the API (unsafe, async)
    // and from making its calls (no simple type meets a bound).
    let mut left_out: Vec<String> = api
        .left_out
        .iter()
        .map(|l| format!("{}: {}", l.item, l.why))
        .collect();
    if let Some(serde_json::Value::Array(here)) = stats.remove("left_out_here") {
        left_out.extend(here.iter().filter_map(|v| v.as_str().map(String::from)));
    }
    stats.insert("left_out".into(), left_out.into());
    stats.insert("seconds".into(), started.elapsed().as_secs_f64().into());
    // A defect whose test did not survive the check (it passed, or did not build) is no
    // finding; side effects have no test and stay.
    let delivered_reasons: Vec<&String> = delivered
        .files
        .values()
        .flatten()
        .flat_map(|t| &t.attrs)
        .collect();
    let findings = found
        .findings
        .into_iter()
        .filter(|f| match &f.test {
            Some(reason) => delivered_reasons
                .iter()
                .any(|a| a.contains(&render::cut(reason, 200).replace('"', "\\\""))),
            None => true,
        })
        .collect();
    Ok(GenResult {
        modules,
        findings,
        stats: serde_json::Value::Object(stats),
    })
}

/// The calls of module `m` for a comparison with the base: its delivered tests' and those of
/// the functions the change touched in its file.
fn calls(
    api: &model::Api,
    found: &search::Found,
    files: &deliver::Files,
    m: &ModuleRef,
) -> Vec<Call> {
    let kept: std::collections::BTreeMap<&str, &probe::Candidate> = found
        .kept
        .iter()
        .map(|k| (k.candidate.id.as_str(), &k.candidate))
        .collect();
    let mut out: Vec<Call> = files
        .get(&m.module)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let c = kept.get(t.candidate.as_str())?;
            Some(replay::call(api, c, Some(t.name.clone())))
        })
        .collect();
    for c in &found.focus {
        let probe::Source::Callable(i) = c.source else {
            continue;
        };
        if api.callables[i].file == m.file && !out.iter().any(|o| o.expr == c.call) {
            out.push(replay::call(api, c, None));
        }
    }
    out
}

/// Makes the copy buildable in the sandbox: a lock file (made offline when the crate has none:
/// cargo would write one where the sandbox lets it write nothing) and, for a crate with
/// `autotests = false`, the entries of the generator's targets.
fn prepare_copy(repo: &Path, copy: &Path, targets: &[&str]) -> Result<(), RustGenError> {
    let io = |cause| RustGenError::Copy {
        path: copy.to_path_buf(),
        cause,
    };
    let manifest = std::fs::read_to_string(repo.join("Cargo.toml")).map_err(io)?;
    if let Some(m) = crate::family::rust::stage::with_test_targets(&manifest, targets) {
        crate::util::write_nofollow(&copy.join("Cargo.toml"), m.as_bytes()).map_err(io)?;
    }
    if !copy.join("Cargo.lock").exists() {
        // The lock the session's dependency fetch made (the executor's copies use it too),
        // else one resolved from the local index; neither runs anything of the crate.
        let kept = copy.with_file_name("cargo-generated.lock");
        match crate::util::read_regular(&kept) {
            Ok(lock) => crate::util::write_nofollow(&copy.join("Cargo.lock"), &lock).map_err(io)?,
            Err(_) => {
                let _ = crate::proc::run_captured_env(
                    &["cargo", "generate-lockfile", "--offline"],
                    copy,
                    &[("RUSTUP_AUTO_INSTALL", "0"), ("RUSTC_WRAPPER", "")],
                    Duration::from_secs(120),
                );
            }
        }
    }
    Ok(())
}
