//! The built-in offline test generator for JavaScript and TypeScript: `ttgen.mjs` and the modules
//! of its stages, shipped inside the binary and run with the project's own `node` in a mirror of
//! the repository, the counterpart of `ttgen.py`. This side picks the modules, prepares the
//! request, runs the helper with a timeout, and edits the files it wrote between rounds (expected
//! failures for the tests that found code defects, carried over from round to round).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

pub mod imports;

use crate::gen::{GenError, GenRequest, GenResult, ModuleRef};
use crate::sandbox::Sandbox;
use crate::testing::framework::Framework;

// Editing generated test files is the runner's (apply uses it too); the generator's rounds reach
// it here.
pub use super::edit::{
    carry_over, expected_failure_form, mark_expected_failures, remove_tests, test_count,
    unescape_xml,
};

/// The helper's entry point: the generator, and the file its workers and L3's preload load.
const ENTRY: &str = "ttgen.mjs";

/// The helper's files, written side by side into the session when used: the entry point and the
/// modules of its stages, which it imports from its own folder.
const HELPER_FILES: &[(&str, &str)] = &[
    (ENTRY, include_str!("ttgen.mjs")),
    ("tt_values.mjs", include_str!("tt_values.mjs")),
    ("tt_tokens.mjs", include_str!("tt_tokens.mjs")),
    ("tt_analysis.mjs", include_str!("tt_analysis.mjs")),
    ("tt_usage.mjs", include_str!("tt_usage.mjs")),
    ("tt_shapes.mjs", include_str!("tt_shapes.mjs")),
    ("tt_execution.mjs", include_str!("tt_execution.mjs")),
    ("tt_inputs.mjs", include_str!("tt_inputs.mjs")),
    ("tt_assertions.mjs", include_str!("tt_assertions.mjs")),
    ("tt_search.mjs", include_str!("tt_search.mjs")),
    ("tt_render.mjs", include_str!("tt_render.mjs")),
    // The search's calls listed, and boundary inputs for the functions a change touched.
    ("tt_calls.mjs", include_str!("tt_calls.mjs")),
    // Those calls run again in another version of the package (what a change altered).
    ("tt_replay.mjs", include_str!("tt_replay.mjs")),
];

/// Extensions of modules the generator tests.
const MODULE_EXTS: [&str; 5] = [".js", ".mjs", ".cjs", ".ts", ".mts"];

/// Files that configure tools rather than hold code under test.
const CONFIG_PREFIXES: [&str; 10] = [
    "jest.config.",
    "vitest.config.",
    "vite.config.",
    "babel.config.",
    "webpack.config.",
    "rollup.config.",
    "eslint.config.",
    ".eslintrc",
    ".mocharc",
    "tsconfig",
];

/// The request the helper reads: the Python generator's, plus the framework to write for.
#[derive(Debug, Clone, Serialize)]
pub struct JsGenRequest {
    #[serde(flatten)]
    pub base: GenRequest,
    /// `node`, `jest`, `vitest` or `mocha`.
    pub framework: String,
}

/// Whether `path` (repository-relative) is a JavaScript or TypeScript module under test: not a
/// test, a declaration file, a tool's config, or anything in a test or dependency folder.
pub fn is_module(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let dirs: Vec<&str> = path.split('/').collect();
    let in_tests = dirs[..dirs.len() - 1].iter().any(|d| {
        matches!(
            *d,
            "test"
                | "tests"
                | "__tests__"
                | "node_modules"
                | "tt-tests"
                | "dist"
                | "build"
                | "coverage"
        ) || d.starts_with('.')
    });
    MODULE_EXTS.iter().any(|x| name.ends_with(x))
        && !name.ends_with(".d.ts")
        && !name.contains(".test.")
        && !name.contains(".spec.")
        && !CONFIG_PREFIXES.iter().any(|p| name.starts_with(p))
        && !in_tests
}

/// `src/strings.js` -> `strings`; `lib/a/b.ts` -> `a/b`: the name a test file and its suite carry.
pub fn module_name(path: &str) -> String {
    let stem = MODULE_EXTS
        .iter()
        .find_map(|x| path.strip_suffix(x))
        .unwrap_or(path);
    let stem = stem
        .strip_prefix("src/")
        .or_else(|| stem.strip_prefix("lib/"))
        .unwrap_or(stem);
    stem.to_string()
}

/// The modules among `files` (repository-relative paths), one per path, sorted.
pub fn modules(files: &[String]) -> Vec<ModuleRef> {
    let mut out: Vec<ModuleRef> = files
        .iter()
        .filter(|f| is_module(f))
        .map(|f| ModuleRef {
            module: module_name(f),
            file: f.clone(),
        })
        .collect();
    out.sort_by(|a, b| a.file.cmp(&b.file));
    out.dedup_by(|a, b| a.module == b.module);
    out
}

/// The files package.json names as `bin` (repository-relative).
pub fn bin_files(repo: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(repo.join("package.json")).unwrap_or_default();
    let pkg: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let clean = |s: &str| s.trim_start_matches("./").to_string();
    match &pkg["bin"] {
        serde_json::Value::String(s) => vec![clean(s)],
        serde_json::Value::Object(map) => {
            map.values().filter_map(|v| v.as_str()).map(clean).collect()
        }
        _ => Vec::new(),
    }
}

/// Writes the helper's files into `scratch`; returns the entry point's path.
fn write_helper(scratch: &Path) -> Result<PathBuf, GenError> {
    crate::gen::write_modules(scratch, HELPER_FILES)?;
    Ok(scratch.join(ENTRY))
}

/// Runs the helper with `node` in `mirror`; `scratch` holds the helper's files. The whole run is
/// bounded by `timeout`.
pub fn generate(
    node: &str,
    mirror: &Path,
    scratch: &Path,
    req: &JsGenRequest,
    timeout: Duration,
    sandbox: Option<&Sandbox>,
) -> Result<GenResult, GenError> {
    let helper = write_helper(scratch)?;
    let input = serde_json::to_vec(req).map_err(GenError::Request)?;
    let helper_arg = helper.display().to_string();
    // The project's NODE_OPTIONS (loaders, inspectors) are not the generator's.
    let env = [("NODE_OPTIONS", ""), ("NO_COLOR", "1")];
    crate::gen::run_helper(sandbox, &[node, &helper_arg], mirror, &env, input, timeout)
}

/// The search's calls run again in `job.mirror` (another version of the package).
fn replay(
    node: &str,
    job: &crate::family::generator::ReplayJob,
) -> Result<crate::gen::behaviour::ReplayResult, GenError> {
    let helper = write_helper(job.scratch)?;
    let input = serde_json::to_vec(job.req).map_err(GenError::Request)?;
    let helper_arg = helper.display().to_string();
    let env = [("NODE_OPTIONS", ""), ("NO_COLOR", "1")];
    crate::gen::run_helper(
        job.sandbox,
        &[node, &helper_arg],
        job.mirror,
        &env,
        input,
        job.timeout,
    )
}

/// The entry points L3 would run in `repo` (package.json `bin`, a `main` that reads its
/// arguments), found by the helper's own rule. It reads files only.
pub fn entry_points(node: &str, repo: &Path, scratch: &Path) -> Result<Vec<String>, GenError> {
    let helper = write_helper(scratch)?.display().to_string();
    crate::gen::scan_entry_points(node, &helper, repo, scratch)
}

/// Folders the helper reads outside the repository: node's own installation, and the real
/// place of a node_modules that is a link.
pub fn read_roots(node: &str, repo: &Path) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    let found = if node.contains('/') {
        Some(PathBuf::from(node))
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join(node))
                .find(|p| p.is_file())
        })
    };
    if let Some(prefix) = found
        .and_then(|p| p.canonicalize().ok())
        .and_then(|p| p.parent().and_then(Path::parent).map(Path::to_path_buf))
    {
        roots.push(prefix);
    }
    if let Ok(real) = repo.join("node_modules").canonicalize() {
        roots.push(real);
    }
    roots
}

/// Links the node_modules the package runs with (`real`: its own, or the one fetched into the
/// session) into the mirror, which copies no dependencies: TypeScript and the module's own
/// imports resolve as in the repository.
fn link_node_modules(real: &Path, mirror: &Path) -> std::io::Result<()> {
    let real = real.to_path_buf();
    let link = mirror.join("node_modules");
    if link.symlink_metadata().is_ok() {
        if std::fs::read_link(&link).ok().as_deref() == Some(real.as_path()) {
            return Ok(());
        }
        std::fs::remove_file(&link)?;
    }
    std::os::unix::fs::symlink(real, link)
}

/// The node binary the project runs with.
const NODE: &str = "node";

/// The JavaScript/TypeScript generator as the generator role uses it.
pub struct NodeGenerator;

impl crate::family::generator::Generator for NodeGenerator {
    fn module_words(&self) -> &'static str {
        "JavaScript or TypeScript module"
    }

    fn no_entry_points(&self) -> &'static str {
        "no entry points (no package.json bin, no main that reads process.argv): L3 skipped"
    }

    /// The project's source only (its own tests, examples and scripts are not modules under
    /// test), and never a program (package.json `bin`): those run when loaded, so L3 runs them.
    fn modules(
        &self,
        repo: &Path,
        framework: Option<Framework>,
        files: &[String],
    ) -> Vec<ModuleRef> {
        let project = crate::testing::project_files::of_repo(repo, framework);
        let sources: Vec<String> = files
            .iter()
            .filter(|f| project.sources.contains(*f))
            .cloned()
            .collect();
        let bins = bin_files(repo);
        modules(&sources)
            .into_iter()
            .filter(|m| !bins.contains(&m.file))
            .collect()
    }

    fn entry_points(&self, repo: &Path, scratch: &Path) -> Result<Vec<String>, GenError> {
        entry_points(NODE, repo, scratch)
    }

    fn read_roots(&self, repo: &Path) -> Vec<PathBuf> {
        read_roots(NODE, repo)
    }

    fn prepare_mirror(&self, repo: &Path, session: &Path, mirror: &Path) -> std::io::Result<()> {
        match crate::testing::deps::node_modules(repo, session) {
            Some(real) => link_node_modules(&real, mirror),
            None => Ok(()),
        }
    }

    fn generate(&self, job: &crate::family::generator::GenJob) -> Result<GenResult, GenError> {
        let req = JsGenRequest {
            base: job.req.clone(),
            framework: job.framework.as_str().to_string(),
        };
        generate(
            NODE,
            job.mirror,
            job.scratch,
            &req,
            job.timeout,
            job.sandbox,
        )
    }

    /// A search's temporary folders are made with unique names.
    fn searches_side_by_side(&self) -> bool {
        true
    }

    /// Its helper gives each module an equal share of the budget.
    fn shares_budget_by_size(&self) -> bool {
        false
    }

    fn test_key(&self, id: &str) -> String {
        unescape_xml(id)
    }

    fn replay(
        &self,
        job: &crate::family::generator::ReplayJob,
    ) -> Option<Result<crate::gen::behaviour::ReplayResult, GenError>> {
        Some(replay(NODE, job))
    }

    /// Its search ends on counts in about half a second a module, most of it the module's own
    /// start-up: a short search costs what the deep one does (semver's 47 modules: 21 s each).
    fn quick_first_pass(&self) -> bool {
        false
    }

    /// `keep` holds ids (`<module> > <title>`); the file's blocks go by their titles, which may
    /// hold a ` > ` of their own (`a > b`).
    fn search_reads(&self, repo: &Path, file: &str, sources: &[String]) -> BTreeSet<String> {
        crate::gen::cache::closure(file, |f| imports::imports(repo, f, sources))
    }

    fn keep_only(&self, source: &str, keep: &BTreeSet<String>) -> Option<String> {
        let titles: BTreeSet<&str> = keep
            .iter()
            .map(|k| k.split_once(" > ").map_or(k.as_str(), |(_, title)| title))
            .collect();
        let others = crate::family::node::edit::test_titles(source)
            .into_iter()
            .filter(|t| !titles.contains(t.as_str()))
            .collect();
        let (left, _) = crate::family::node::edit::remove_tests(source, &others);
        (crate::family::node::edit::test_count(&left) > 0).then_some(left)
    }

    /// Defect tests the new file lacks are carried over in the framework's expected-failure
    /// form; a revision round keeps nothing else of the last one.
    fn revise(&self, r: &crate::family::generator::Revision) -> String {
        let form = expected_failure_form(r.framework, r.node_modules);
        let combined = carry_over(r.previous, r.new, r.defects, r.avoid);
        mark_expected_failures(&combined, r.defects, form)
    }

    fn is_test_file(&self, name: &str) -> bool {
        [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"]
            .iter()
            .any(|ext| name.ends_with(ext))
    }

    fn tests_noun(&self, framework: Framework) -> String {
        format!("{} tests", framework.as_str())
    }

    fn defects_kept_as(&self) -> &'static str {
        "expected failures"
    }

    fn unloadable(&self) -> &'static str {
        "could not be loaded"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// Every module the helper's files import from their own folder is among the files written.
    #[test]
    fn every_module_the_helper_imports_is_written_beside_it() {
        let names: BTreeSet<&str> = HELPER_FILES.iter().map(|(name, _)| *name).collect();
        for (name, text) in HELPER_FILES {
            for import in text.split("from './").skip(1) {
                let file = import.split('\'').next().unwrap_or_default();
                assert!(
                    names.contains(file),
                    "{name} imports {file}, which is not written"
                );
            }
        }
    }

    #[test]
    fn modules_are_code_files_outside_test_and_dependency_folders() {
        let files: Vec<String> = [
            "src/strings.js",
            "src/strings.test.js",
            "test/helper.js",
            "jest.config.js",
            "types.d.ts",
            "lib/a/b.ts",
            "bin/cli.mjs",
            "node_modules/x/index.js",
            "README.md",
        ]
        .map(String::from)
        .to_vec();
        let names: Vec<(String, String)> = modules(&files)
            .into_iter()
            .map(|m| (m.module, m.file))
            .collect();
        assert_eq!(
            names,
            vec![
                ("bin/cli".to_string(), "bin/cli.mjs".to_string()),
                ("a/b".into(), "lib/a/b.ts".into()),
                ("strings".into(), "src/strings.js".into()),
            ]
        );
    }

    /// A hang, a crash and a promise that never settles each cost one call; every value asserted
    /// is the value of its own call (the generated file passes under node --test).
    #[test]
    fn hangs_and_crashes_cost_one_call_and_never_mix_up_results() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join("src")).unwrap();
        std::fs::write(repo.path().join("package.json"), "{\"type\":\"module\"}\n").unwrap();
        std::fs::write(
            repo.path().join("src/h.js"),
            "/** @param {number} n */\nexport function spin(n) { while (n > 0) {} return 1; }\n\
             export function crash(x) { if (x === 0) process.abort(); return x; }\n\
             export async function never(x) { if (x === 1) await new Promise(() => {}); return 2; }\n\
             export function ok(a, b) { return a + b; }\n",
        )
        .unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let req = JsGenRequest {
            base: GenRequest {
                modules: vec![ModuleRef {
                    module: "h".into(),
                    file: "src/h.js".into(),
                }],
                layer: "L1-unit".into(),
                seed: 1,
                budget_s: 60.0,
                call_timeout_s: 0.5,
                target_percent: 100.0,
                missing: BTreeMap::new(),
                avoid: vec![],
                changed: BTreeMap::new(),
            },
            framework: "node".into(),
        };
        let out = generate(
            "node",
            repo.path(),
            scratch.path(),
            &req,
            Duration::from_secs(120),
            None,
        )
        .unwrap();
        let m = &out.modules[0];
        assert!(m.source.contains("ok("), "{}", m.source);
        assert!(out.stats["modules"]["h"]["worker_restarts"].as_u64() >= Some(1));
        let dir = repo.path().join("tt-tests/L1-unit");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(&m.test_file), &m.source).unwrap();
        let run = std::process::Command::new("node")
            .args(["--test", "tt-tests/L1-unit/"])
            .current_dir(repo.path())
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}\n{}",
            m.source,
            String::from_utf8_lossy(&run.stdout)
        );
    }

    /// One L1 request for `modules` of the repository at `root`, and the files it writes.
    fn generate_l1(root: &Path, modules: &[(&str, &str)]) -> GenResult {
        let scratch = tempfile::tempdir().unwrap();
        let req = JsGenRequest {
            base: GenRequest {
                modules: modules
                    .iter()
                    .map(|(module, file)| ModuleRef {
                        module: module.to_string(),
                        file: file.to_string(),
                    })
                    .collect(),
                layer: "L1-unit".into(),
                seed: 3,
                budget_s: 60.0,
                call_timeout_s: 2.0,
                target_percent: 100.0,
                missing: BTreeMap::new(),
                avoid: vec![],
                changed: BTreeMap::new(),
            },
            framework: "node".into(),
        };
        generate(
            "node",
            root,
            scratch.path(),
            &req,
            Duration::from_secs(120),
            None,
        )
        .unwrap()
    }

    /// A contract finding needs input the function is known to take: a parameter typed by a
    /// name the module does not define (an imported type) takes nothing known, so what the
    /// search passes it is not well typed, while a broken promise on a `string` still is one.
    #[test]
    fn an_imported_parameter_type_is_no_contract_and_a_string_still_is() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("package.json"), "{\"type\":\"module\"}\n").unwrap();
        std::fs::write(
            root.join("src/opts.js"),
            "/**\n * @param {import('./types.js').Options} options\n * @returns {number}\n */\n\
             export function modeLength(options) {\n  return options.mode.length;\n}\n\n\
             /**\n * @param {string} name\n * @returns {string}\n */\n\
             export function initial(name) {\n  return name.trim()[0].toUpperCase();\n}\n",
        )
        .unwrap();
        let out = generate_l1(root, &[("opts", "src/opts.js")]);
        let about = |name: &str| {
            out.findings
                .iter()
                .filter(|f| f.function == format!("opts.{name}"))
                .map(|f| f.kind.clone())
                .collect::<Vec<_>>()
        };
        assert!(about("modeLength").is_empty(), "{:#?}", out.findings);
        assert!(
            about("initial").contains(&"builtin_exception".to_string()),
            "{:#?}",
            out.findings
        );
    }

    /// Issue 32, finding 11: inputs follow the project's own usage and types. A table only the
    /// project's own test fills so that a route matches; a JSDoc record type and a TypeScript
    /// interface whose string-literal unions are the only place the values a lookup needs are
    /// spelled. None of it is evaluated by the helper itself: the test file's other call would
    /// write a file.
    #[test]
    fn inputs_follow_the_projects_own_calls_and_types() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        let deps =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/js-deps/node_modules");
        assert!(
            deps.join("typescript").is_dir(),
            "the JS fixtures' packages are missing: run `npm ci` in tests/fixtures/js-deps"
        );
        std::os::unix::fs::symlink(&deps, root.join("node_modules")).unwrap();
        for dir in ["src", "test"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        let write = |rel: &str, text: &str| std::fs::write(root.join(rel), text).unwrap();
        write("package.json", "{\"type\":\"module\"}\n");
        write(
            "src/route.js",
            "export function route(table, path) {\n  for (const pattern of Object.keys(table)) {\n    \
             const want = pattern.split('/');\n    const have = String(path).split('/');\n    \
             if (want.length !== have.length) continue;\n    \
             if (want.every((w, i) => w.startsWith(':') || w === have[i])) {\n      return table[pattern];\n    }\n  }\n  \
             return null;\n}\n",
        );
        write(
            "test/route.test.js",
            "import { writeFileSync } from 'node:fs';\nimport { route } from '../src/route.js';\n\n\
             const routes = { '/users/:id': 'user', '/': 'home' };\nroute(routes, '/users/42');\n\
             route(writeFileSync('written-by-the-helper', 'x'), '/');\n",
        );
        write(
            "src/size.js",
            "const FACTOR = { cm: 1, inch: 2.54 };\n\n/**\n * @param {{value: number, unit: 'cm'|'inch'}} size\n \
             * @returns {number}\n */\nexport function centimetres(size) {\n  const f = FACTOR[size.unit];\n  \
             if (f === undefined) {\n    throw new RangeError('unknown unit');\n  }\n  return size.value * f;\n}\n",
        );
        write(
            "src/speed.ts",
            "const SPEED = { fast: 10, safe: 1 };\n\ninterface Options {\n  mode: 'fast' | 'safe';\n}\n\n\
             export function speed(opts: Options): number {\n  const s = SPEED[opts.mode];\n  \
             if (s === undefined) {\n    throw new RangeError('unknown mode');\n  }\n  return s;\n}\n",
        );
        let out = generate_l1(
            root,
            &[
                ("route", "src/route.js"),
                ("size", "src/size.js"),
                ("speed", "src/speed.ts"),
            ],
        );
        let source = |name: &str| {
            out.modules
                .iter()
                .find(|m| m.module == name)
                .map(|m| m.source.clone())
                .unwrap_or_default()
        };
        let route = source("route");
        assert!(
            route.contains("route({ \"/users/:id\": \"user\", \"/\": \"home\" }, \"/users/42\")"),
            "{route}"
        );
        assert!(route.contains("\"user\""), "{route}");
        let size = source("size");
        assert!(
            size.contains("unit: \"cm\"") || size.contains("unit: \"inch\""),
            "{size}"
        );
        let speed = source("speed");
        assert!(
            speed.contains("mode: \"fast\"") || speed.contains("mode: \"safe\""),
            "{speed}"
        );
        assert!(!root.join("written-by-the-helper").exists());
    }
}
