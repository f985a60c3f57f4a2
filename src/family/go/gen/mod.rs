//! The built-in offline test generator for Go modules. The search is `helper/*.go`, a program
//! shipped inside the binary, built with the project's own go and run in the sandbox in a
//! mirror of the module, request on stdin and result on stdout like the Python and JavaScript
//! helpers: it type-checks the packages with go/types, runs candidate calls one process each
//! under `go test -cover`, keeps those that reach new coverage blocks, and delivers
//! table-driven `<file>_tt_test.go` files that go built, ran twice and vetted. This side picks
//! the source files, builds and runs the helper, and edits its files between rounds (`edit`).

mod edit;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

pub(super) use edit::remove_tests;

use crate::family::generator::{GenJob, Generator, ReplayJob, Revision};
use crate::family::mutants::prune::Checks;
use crate::family::mutants::Points;
use crate::gen::behaviour::ReplayResult;
use crate::gen::{GenError, GenResult, ModuleRef};
use crate::testing::framework::Framework;

/// The helper's sources, built together as one program.
const HELPER_FILES: &[(&str, &str)] = &[
    ("main.go", include_str!("helper/main.go")),
    ("load.go", include_str!("helper/load.go")),
    ("effects.go", include_str!("helper/effects.go")),
    ("values.go", include_str!("helper/values.go")),
    ("probe.go", include_str!("helper/probe.go")),
    ("search.go", include_str!("helper/search.go")),
    ("examples.go", include_str!("helper/examples.go")),
    ("render.go", include_str!("helper/render.go")),
    ("deliver.go", include_str!("helper/deliver.go")),
    ("mutants.go", include_str!("helper/mutants.go")),
    ("defects.go", include_str!("helper/defects.go")),
    ("calls.go", include_str!("helper/calls.go")),
    ("replay.go", include_str!("helper/replay.go")),
    ("replay_render.go", include_str!("helper/replay_render.go")),
    // A module of its own: the user's go.mod above the session never applies to it.
    ("go.mod", "module ttgen\n\ngo 1.19\n"),
];

/// How long building the helper may take (the standard library may be compiled first).
const BUILD_TIMEOUT: Duration = Duration::from_secs(300);

/// What `doctor` says of the generator.
pub fn readiness() -> String {
    "built in: a Go program built with the project's go reads the exported API with go/types \
     and keeps the candidate calls that reach new coverage blocks (go test -cover)"
        .into()
}

/// The request the helper reads: the shared one (a search's or a replay's), plus go, the
/// module path and its own folder.
#[derive(Serialize)]
struct GoRequest<'a, T: Serialize> {
    #[serde(flatten)]
    base: &'a T,
    go: &'a str,
    module_path: String,
    work: String,
}

/// `L1-unit` -> `L1`.
fn layer_code(layer: &str) -> &str {
    layer.split('-').next().unwrap_or(layer)
}

/// The helper's folders for a layer under the workspace: its sources and binary, and the
/// folder it writes (test binaries, profiles, the homes candidates run with).
fn helper_dirs(workspace: &Path, layer: &str) -> (PathBuf, PathBuf) {
    let root = workspace.join(format!("go-gen-{}", layer_code(layer)));
    (root.join("helper"), root.join("work"))
}

/// The Go generator as the generator role uses it.
pub struct GoGenerator;

/// The go program the project runs with.
const GO: &str = "go";

impl Generator for GoGenerator {
    fn module_words(&self) -> &'static str {
        "Go library source file"
    }

    /// The replay calls a package's functions, whichever of its files holds them: a new file of
    /// a package the base has is compared.
    fn on_base(&self, base: &Path, module: &ModuleRef) -> bool {
        let Some(dir) = base.join(&module.file).parent().map(Path::to_path_buf) else {
            return false;
        };
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.ends_with(".go") && !name.ends_with("_test.go")
            })
        })
    }

    fn no_entry_points(&self) -> &'static str {
        "the built-in Go generator writes L1 and L2 tests of the packages' exported API; it does \
         not run the module's commands: L3 skipped"
    }

    /// The module's own Go sources among `files`: no tests, commands (package main), generated
    /// code, or files of vendored and nested modules.
    fn modules(&self, repo: &Path, _: Option<Framework>, files: &[String]) -> Vec<ModuleRef> {
        let mut out: Vec<ModuleRef> = files
            .iter()
            .filter(|f| is_source(repo, f))
            .map(|f| ModuleRef {
                module: f.trim_end_matches(".go").to_string(),
                file: f.clone(),
            })
            .collect();
        out.sort_by(|a, b| a.file.cmp(&b.file));
        out.dedup_by(|a, b| a.file == b.file);
        out
    }

    fn entry_points(&self, _repo: &Path, _scratch: &Path) -> Result<Vec<String>, GenError> {
        Ok(Vec::new())
    }

    /// Go's own installation and module cache are read by every sandboxed child already.
    fn read_roots(&self, _repo: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// The mirror (the probe's harness goes into its packages), go's build cache and the
    /// helper's own folder.
    fn write_dirs(&self, session: &Path, layer: &str) -> Vec<PathBuf> {
        let workspace = session.join("workspace");
        let (mirror, _) = crate::gen::scratch_dirs(session, layer);
        let (_, work) = helper_dirs(&workspace, layer);
        vec![mirror, workspace.join(super::ctx::CACHE_DIR), work]
    }

    fn prepare_mirror(&self, _repo: &Path, _session: &Path, _mirror: &Path) -> std::io::Result<()> {
        Ok(())
    }

    fn generate(&self, job: &GenJob) -> Result<GenResult, GenError> {
        let run = HelperRun {
            module_root: job.repo,
            mirror: job.mirror,
            layer: &job.req.layer,
            part: None,
            sandbox: job.sandbox,
            timeout: job.timeout,
        };
        run.request(job.req)
    }

    /// The replay writes its harness in the mirror, and its folder and the build cache.
    fn replay_writes(&self, session: &Path, layer: &str) -> Option<Vec<PathBuf>> {
        Some(self.write_dirs(session, layer))
    }

    fn replay(&self, job: &ReplayJob) -> Option<Result<ReplayResult, GenError>> {
        Some(replay(job))
    }

    /// Every search builds the module's probes first: a short one costs what the deep one does.
    fn quick_first_pass(&self) -> bool {
        false
    }

    /// A package builds with its module's other packages and the module's requirements: the
    /// whole module, to be safe.
    fn search_reads(
        &self,
        _: &Path,
        file: &str,
        sources: &[String],
    ) -> std::collections::BTreeSet<String> {
        crate::gen::cache::whole_project(file, sources, &["go.mod", "go.sum"])
    }

    fn keep_only(&self, source: &str, keep: &std::collections::BTreeSet<String>) -> Option<String> {
        edit::keep_only(source, keep)
    }

    /// Tests the executor found broken or flaky go; defect tests the new file lacks are carried
    /// over with the imports they use, and every defect the executor found is skipped with its
    /// evidence.
    fn revise(&self, r: &Revision) -> String {
        let fresh = edit::remove_tests(r.new, r.avoid);
        let combined = edit::carry_over(r.previous, &fresh, r.defects, r.avoid);
        edit::mark_defects(&combined, r.defects)
    }

    fn is_test_file(&self, name: &str) -> bool {
        name.ends_with("_test.go")
    }

    fn tests_noun(&self, _framework: Framework) -> String {
        "go tests".into()
    }

    fn defects_kept_as(&self) -> &'static str {
        "skipped tests (t.Skip with the evidence: go test -run <name> -v shows them)"
    }

    fn unloadable(&self) -> &'static str {
        "did not type-check"
    }
}

/// A replay of the search's calls in `job.mirror`, by the helper the search built, in a part
/// of the helper's folder of its own (the search's files stay for its later rounds).
fn replay(job: &ReplayJob) -> Result<ReplayResult, GenError> {
    let run = HelperRun {
        module_root: job.mirror,
        mirror: job.mirror,
        layer: &job.req.replay.layer,
        part: Some(if job.base {
            "replay-base"
        } else {
            "replay-head"
        }),
        sandbox: job.sandbox,
        timeout: job.timeout,
    };
    run.request(job.req)
}

/// One run of the layer's helper in a mirror, sandboxed.
struct HelperRun<'a> {
    /// Where go.mod names the module (the project for a search, the mirror for a replay).
    module_root: &'a Path,
    mirror: &'a Path,
    layer: &'a str,
    /// A folder of its own inside the helper's folder, if any.
    part: Option<&'a str>,
    sandbox: Option<&'a crate::sandbox::Sandbox>,
    timeout: Duration,
}

impl HelperRun<'_> {
    /// The helper built (our own code: no project code runs), its folder emptied, and `base`
    /// asked of it with go, the module path and that folder.
    fn request<T: Serialize, R: serde::de::DeserializeOwned>(
        &self,
        base: &T,
    ) -> Result<R, GenError> {
        let Some(module_path) = super::package::module_path(self.module_root) else {
            return Err(GenError::Exited {
                code: None,
                stderr_tail: format!(
                    "{} declares no module: the Go generator needs a module",
                    self.module_root.join("go.mod").display()
                ),
            });
        };
        let mirror = std::path::absolute(self.mirror).unwrap_or_else(|_| self.mirror.into());
        let workspace = mirror.parent().unwrap_or(&mirror).to_path_buf();
        let (helper_dir, work) = helper_dirs(&workspace, self.layer);
        let work = self.part.map_or(work.clone(), |p| work.join(p));
        let env = go_env(&workspace.join(super::ctx::CACHE_DIR));
        let env_refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let bin = build_helper(&helper_dir, &env_refs)?;
        empty(&work)?;
        let req = GoRequest {
            base,
            go: GO,
            module_path,
            work: work.display().to_string(),
        };
        let input = serde_json::to_vec(&req).map_err(GenError::Request)?;
        let bin = bin.display().to_string();
        crate::gen::run_helper(
            self.sandbox,
            &[&bin],
            &mirror,
            &env_refs,
            input,
            self.timeout,
        )
    }
}

/// `dir` made and emptied, not replaced: the sandbox was made with this very folder.
fn empty(dir: &Path) -> Result<(), GenError> {
    std::fs::create_dir_all(dir).map_err(|cause| GenError::CreateDir {
        path: dir.to_path_buf(),
        cause,
    })?;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let _ = match entry.file_type() {
            Ok(t) if t.is_dir() => std::fs::remove_dir_all(entry.path()),
            _ => std::fs::remove_file(entry.path()),
        };
    }
    Ok(())
}

/// The environment go runs with for the generator: the session's build cache, the module on
/// its own (no go.work, no toolchain download) and nothing fetched (dependencies were
/// downloaded before the sandbox).
fn go_env(cache: &Path) -> Vec<(&'static str, String)> {
    let flags = std::env::var("GOFLAGS").unwrap_or_default();
    vec![
        ("GOCACHE", cache.display().to_string()),
        ("GOWORK", "off".into()),
        ("GOTOOLCHAIN", "local".into()),
        ("GOPROXY", "off".into()),
        ("GOFLAGS", format!("{flags} -modcacherw").trim().to_string()),
    ]
}

/// Writes the helper's sources and builds them with go (our own code: no project code runs).
fn build_helper(dir: &Path, env: &[(&str, &str)]) -> Result<PathBuf, GenError> {
    crate::gen::write_modules(dir, HELPER_FILES)?;
    let bin = dir.join("ttgen");
    // The user's GOFLAGS (-mod=vendor, tags) are the module's, not the helper's.
    let mut env: Vec<(&str, &str)> = env
        .iter()
        .filter(|(k, _)| *k != "GOFLAGS")
        .copied()
        .collect();
    env.push(("GOFLAGS", ""));
    let out =
        crate::proc::run_captured_env(&[GO, "build", "-o", "ttgen", "."], dir, &env, BUILD_TIMEOUT)
            .map_err(GenError::DidNotFinish)?;
    if !out.success() {
        return Err(GenError::Exited {
            code: out.status,
            stderr_tail: format!(
                "go build of the generator failed: {}",
                crate::util::tail_lines(&out.stderr, 10)
            ),
        });
    }
    Ok(bin)
}

/// How long the helper may take to list the mutation points (it only parses).
const POINTS_TIMEOUT: Duration = Duration::from_secs(120);

/// What the helper's `mutants` mode prints.
#[derive(serde::Deserialize)]
struct PointsResult {
    #[serde(default)]
    points: Points,
    #[serde(default)]
    problems: Vec<String>,
}

/// The mutation points of each of `files` (absolute paths), read with go/ast by the helper
/// built in `dir`: our own program, which only parses them.
pub(super) fn mutation_points(
    dir: &Path,
    cache: &Path,
    files: &[PathBuf],
) -> Result<(Points, Vec<String>), GenError> {
    let env = go_env(cache);
    let env_refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let bin = build_helper(dir, &env_refs)?;
    let input = serde_json::json!({ "mode": "mutants", "files": files }).to_string();
    let bin = bin.display().to_string();
    let out = crate::proc::run_captured_input(
        &[&bin],
        dir,
        &env_refs,
        Some(input.into_bytes()),
        POINTS_TIMEOUT,
    )
    .map_err(GenError::DidNotFinish)?;
    if !out.success() {
        return Err(GenError::Exited {
            code: out.status,
            stderr_tail: crate::util::tail_lines(&out.stderr, 10),
        });
    }
    let found: PointsResult = serde_json::from_str(&out.stdout).map_err(|e| GenError::Exited {
        code: out.status,
        stderr_tail: format!("unreadable mutation points: {e}"),
    })?;
    Ok((found.points, found.problems))
}

/// The checks the generator writes: `if <cond> {` / `t.Errorf(…)` / `}`, gofmt'ed.
pub(super) const GO_CHECKS: Checks = Checks {
    opens: |line, name| {
        line.strip_prefix("func ")
            .and_then(|rest| rest.strip_prefix(name))
            .is_some_and(|rest| rest.starts_with('('))
    },
    check_at: |lines, i| {
        let reports = |l: &str| {
            ["t.Errorf(", "t.Error(", "t.Fatalf(", "t.Fatal("]
                .iter()
                .any(|p| l.starts_with(p))
        };
        (lines[i].starts_with("if ")
            && lines[i].ends_with('{')
            && reports(lines.get(i + 1)?)
            && *lines.get(i + 2)? == "}")
            .then_some(i + 2)
    },
};

/// Whether `rel` is one of the module's own Go sources to test.
fn is_source(repo: &Path, rel: &str) -> bool {
    let path = Path::new(rel);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if !name.ends_with(".go") || name.ends_with("_test.go") || name.starts_with(['.', '_']) {
        return false;
    }
    let dirs: Vec<String> = path
        .parent()
        .into_iter()
        .flat_map(|p| p.components())
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if dirs
        .iter()
        .any(|d| d == "vendor" || d == "testdata" || d.starts_with('.') || d.starts_with('_'))
    {
        return false;
    }
    // A folder below the root with a go.mod of its own is another module.
    let mut dir = path.parent();
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
        if repo.join(d).join("go.mod").is_file() {
            return false;
        }
        dir = d.parent();
    }
    let Ok(text) = std::fs::read_to_string(repo.join(rel)) else {
        return false;
    };
    let generated = text
        .lines()
        .take_while(|l| !l.starts_with("package "))
        .any(|l| l.starts_with("// Code generated ") && l.contains("DO NOT EDIT"));
    !generated && super::package::package_clause(&text).is_some_and(|p| p != "main")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_the_modules_own_non_test_non_command_files() {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("go.mod", "module example.com/m\n");
        write("calc.go", "// Package calc.\npackage calc\n");
        write("calc_test.go", "package calc\n");
        write("cmd/tool/main.go", "package main\n");
        write(
            "gen.go",
            "// Code generated by stringer. DO NOT EDIT.\n\npackage calc\n",
        );
        write("vendor/x/y.go", "package y\n");
        write("nested/go.mod", "module example.com/nested\n");
        write("nested/n.go", "package nested\n");
        write("stats/mean.go", "package stats\n");
        let files: Vec<String> = [
            "calc.go",
            "calc_test.go",
            "cmd/tool/main.go",
            "gen.go",
            "vendor/x/y.go",
            "nested/n.go",
            "stats/mean.go",
            "README.md",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let found: Vec<(String, String)> = GoGenerator
            .modules(dir.path(), None, &files)
            .into_iter()
            .map(|m| (m.module, m.file))
            .collect();
        assert_eq!(
            found,
            [
                ("calc".to_string(), "calc.go".to_string()),
                ("stats/mean".to_string(), "stats/mean.go".to_string())
            ]
        );
    }

    /// The sources written are the ones the program is built from: every `.go` file beside
    /// this module's helper folder is shipped.
    #[test]
    fn every_helper_source_is_shipped() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/family/go/gen/helper");
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".go") && !name.ends_with("_test.go") {
                assert!(
                    HELPER_FILES.iter().any(|(n, _)| *n == name),
                    "{name} is not in HELPER_FILES"
                );
            }
        }
    }

    /// The helper's own Go tests (its mutation points) pass with this machine's go.
    #[test]
    fn the_helpers_go_tests_pass() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/family/go/gen/helper");
        let dir = tempfile::tempdir().unwrap();
        for entry in std::fs::read_dir(&src).unwrap().flatten() {
            std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
        }
        std::fs::write(dir.path().join("go.mod"), "module ttgen\n\ngo 1.19\n").unwrap();
        let out = crate::proc::run_captured_env(
            &[GO, "test", "-count=1", "./..."],
            dir.path(),
            &[("GOFLAGS", "")],
            Duration::from_secs(300),
        )
        .expect("go runs");
        assert!(out.success(), "{}{}", out.stdout, out.stderr);
    }
}
