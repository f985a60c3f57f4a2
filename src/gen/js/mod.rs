//! The built-in offline test generator for JavaScript and TypeScript: `ttgen.mjs` and the modules
//! of its stages, shipped inside the binary and run with the project's own `node` in a mirror of
//! the repository, the counterpart of `ttgen.py`. This side picks the modules, prepares the
//! request, runs the helper with a timeout, and edits the files it wrote between rounds (expected
//! failures for the tests that found code defects, carried over from round to round).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::{GenError, GenRequest, GenResult, ModuleRef};
use crate::sandbox::Sandbox;
use crate::testing::framework::Framework;
use crate::util::tail_lines;

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
    super::write_modules(scratch, HELPER_FILES)?;
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
    super::run_helper(sandbox, &[node, &helper_arg], mirror, &env, input, timeout)
}

/// The entry points L3 would run in `repo` (package.json `bin`, a `main` that reads its
/// arguments), found by the helper's own rule. It reads files only.
pub fn entry_points(node: &str, repo: &Path, scratch: &Path) -> Result<Vec<String>, GenError> {
    let helper = write_helper(scratch)?.display().to_string();
    let root = repo.display().to_string();
    let out = crate::proc::run_captured(
        &[node, &helper, "--entry-points", &root],
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

/// Links the repository's node_modules into the mirror (the mirror copies no dependencies):
/// TypeScript and the module's own imports resolve as in the repository.
pub fn link_node_modules(repo: &Path, mirror: &Path) -> std::io::Result<()> {
    let Ok(real) = repo.join("node_modules").canonicalize() else {
        return Ok(());
    };
    let link = mirror.join("node_modules");
    if link.symlink_metadata().is_ok() {
        if std::fs::read_link(&link).ok().as_deref() == Some(real.as_path()) {
            return Ok(());
        }
        std::fs::remove_file(&link)?;
    }
    std::os::unix::fs::symlink(real, link)
}

/// The line that opens a test of a generated file, and the test's name: `  test("name", ...`.
fn opening(line: &str) -> Option<String> {
    let rest = line
        .strip_prefix("  test(")
        .or_else(|| line.strip_prefix("  it("))?;
    let name_end = json_string_end(rest)?;
    serde_json::from_str(&rest[..name_end]).ok()
}

/// The end of the JSON string literal `text` starts with.
fn json_string_end(text: &str) -> Option<usize> {
    let mut chars = text.char_indices();
    if chars.next()?.1 != '"' {
        return None;
    }
    let mut escaped = false;
    for (i, c) in chars {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// Whether a defect map names this test: by its id's last part (`suite > name`) or its name.
fn defect_reason<'a>(defects: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    defects
        .iter()
        .find(|(k, _)| {
            let k = unescape_xml(k);
            k == name || k.rsplit(" > ").next() == Some(name)
        })
        .map(|(_, v)| v.as_str())
}

/// A test name as a JUnit report may still carry it (`initials(&quot;&quot;)`).
pub fn unescape_xml(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The framework whose expected-failure form fits the project's installed runner: jest before
/// 28 has no `test.failing`, so its defect tests take the skip-with-evidence form (mocha's).
/// `node_modules` is the project's (None: unknown, the framework's own form).
pub fn expected_failure_form(framework: Framework, node_modules: Option<&Path>) -> Framework {
    if framework != Framework::Jest {
        return framework;
    }
    let major = node_modules
        .and_then(|nm| {
            crate::util::read_json::<serde_json::Value>(&nm.join("jest/package.json")).ok()
        })
        .and_then(|v| {
            v["version"]
                .as_str()
                .and_then(|s| s.split('.').next())
                .and_then(|m| m.parse::<u64>().ok())
        });
    match major {
        Some(m) if m < 28 => Framework::Mocha,
        _ => framework,
    }
}

/// Marks the tests that found code defects as the framework's expected failure, with the
/// evidence: node's `{ todo }`, jest's `test.failing`, vitest's `test.fails`, a skip with the
/// evidence for mocha (which has none). A test already marked stays as it is.
pub fn mark_expected_failures(
    source: &str,
    defects: &BTreeMap<String, String>,
    framework: Framework,
) -> String {
    let mut out = String::with_capacity(source.len() + 200);
    for line in source.lines() {
        let Some(name) = opening(line) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let Some(reason) = defect_reason(defects, &name) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let quoted = serde_json::to_string(&name).unwrap_or_default();
        let reason_text = reason.replace('\n', " ");
        let reason_json = serde_json::to_string(&reason_text).unwrap_or_default();
        let call = if line.starts_with("  it(") {
            "it"
        } else {
            "test"
        };
        let after = &line[format!("  {call}(").len() + quoted.len()..];
        out.push_str(&format!("  // {}\n", reason_text.replace("*/", "* /")));
        let marked = match framework {
            Framework::Jest => format!("  {call}.failing({quoted}{after}"),
            Framework::Vitest => format!("  {call}.fails({quoted}{after}"),
            Framework::Mocha => format!("  {call}.skip({quoted}{after}"),
            _ => format!("  {call}({quoted}, {{ todo: {reason_json} }}{after}"),
        };
        out.push_str(&marked);
        out.push('\n');
    }
    out
}

/// The test blocks of a generated file: (name, text from the opening line to its `  });`).
fn test_blocks(source: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, String)> = None;
    let mut comment = String::new();
    for line in source.lines() {
        let opened = line
            .strip_prefix("  test")
            .or_else(|| line.strip_prefix("  it"))
            .filter(|r| r.starts_with('(') || r.starts_with('.'))
            .and_then(|r| r.split_once('('))
            .and_then(|(_, r)| json_string_end(r).map(|e| r[..e].to_string()))
            .and_then(|q| serde_json::from_str::<String>(&q).ok());
        if current.is_none() {
            if let Some(name) = opened {
                current = Some((name, std::mem::take(&mut comment) + line + "\n"));
                continue;
            }
            if line.starts_with("  //") {
                comment.push_str(line);
                comment.push('\n');
            } else {
                comment.clear();
            }
            continue;
        }
        if let Some((_, text)) = current.as_mut() {
            text.push_str(line);
            text.push('\n');
        }
        if line == "  });" {
            blocks.extend(current.take());
        }
    }
    blocks
}

/// `source` without the test blocks named (by their titles), and the names not found.
pub fn remove_tests(
    source: &str,
    names: &std::collections::BTreeSet<String>,
) -> (String, Vec<String>) {
    let mut out = source.to_string();
    let mut found = std::collections::BTreeSet::new();
    for (name, block) in test_blocks(source) {
        if names.contains(&name) {
            out = out.replacen(&block, "", 1);
            found.insert(name);
        }
    }
    let missing = names.difference(&found).cloned().collect();
    (out, missing)
}

/// How many test blocks a generated file holds.
pub fn test_count(source: &str) -> usize {
    test_blocks(source).len()
}

/// Tests of the previous round that must survive a regeneration (they found code defects) and
/// that the new file lacks, added at the end of its suite; nothing in `drop` is carried.
pub fn carry_over(
    old: &str,
    new: &str,
    keep: &BTreeMap<String, String>,
    drop: &BTreeSet<String>,
) -> String {
    let new_names: BTreeSet<String> = test_blocks(new).into_iter().map(|(n, _)| n).collect();
    let carried: Vec<String> = test_blocks(old)
        .into_iter()
        .filter(|(name, _)| {
            defect_reason(keep, name).is_some()
                && !new_names.contains(name)
                && !drop
                    .iter()
                    .map(|d| unescape_xml(d))
                    .any(|d| d == *name || d.ends_with(&format!(" > {name}")))
        })
        .map(|(_, text)| text)
        .collect();
    let Some(end) = new.rfind("\n});") else {
        return new.to_string();
    };
    if carried.is_empty() {
        return new.to_string();
    }
    let mut out = new[..end].to_string();
    for block in carried {
        out.push_str("\n\n");
        out.push_str(block.trim_end());
    }
    out.push_str(&new[end..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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

    const FILE: &str = "import { f } from '../../src/m.js';\n\ndescribe(\"m\", () => {\n  test(\"f(1) [aaaaaa]\", () => {\n    assert.equal(f(1), 2);\n  });\n\n  test(\"f(\\\"\\\") does not throw [bbbbbb]\", () => {\n    assert.equal(typeof (f(\"\")), \"string\");\n  });\n});\n";

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

    #[test]
    fn defect_tests_take_each_frameworks_expected_failure_form() {
        let mut defects = BTreeMap::new();
        defects.insert(
            "m > f(\"\") does not throw [bbbbbb]".to_string(),
            "code_defect found by team-testing at src/m.js:3: TypeError".to_string(),
        );
        let node = mark_expected_failures(FILE, &defects, Framework::NodeTest);
        assert!(
            node.contains("  test(\"f(\\\"\\\") does not throw [bbbbbb]\", { todo: \"code_defect found by team-testing at src/m.js:3: TypeError\" }, () => {"),
            "{node}"
        );
        assert!(
            node.contains("  // code_defect found by team-testing"),
            "{node}"
        );
        assert!(node.contains("  test(\"f(1) [aaaaaa]\", () => {"), "{node}");
        let jest = mark_expected_failures(FILE, &defects, Framework::Jest);
        assert!(
            jest.contains("  test.failing(\"f(\\\"\\\") does not throw"),
            "{jest}"
        );
        let vitest = mark_expected_failures(FILE, &defects, Framework::Vitest);
        assert!(
            vitest.contains("  test.fails(\"f(\\\"\\\") does not throw"),
            "{vitest}"
        );
        // Marking twice changes nothing more.
        assert_eq!(
            mark_expected_failures(&jest, &defects, Framework::Jest),
            jest
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

    #[test]
    fn defect_tests_of_the_last_round_are_carried_over() {
        let new = "import { f } from '../../src/m.js';\n\ndescribe(\"m\", () => {\n  test(\"f(2) [cccccc]\", () => {\n    assert.equal(f(2), 3);\n  });\n});\n";
        let mut keep = BTreeMap::new();
        keep.insert(
            "m > f(\"\") does not throw [bbbbbb]".to_string(),
            "why".to_string(),
        );
        let out = carry_over(FILE, new, &keep, &BTreeSet::new());
        assert!(out.contains("f(2) [cccccc]"), "{out}");
        assert!(out.contains("does not throw [bbbbbb]"), "{out}");
        assert!(!out.contains("f(1) [aaaaaa]"), "{out}");
        assert!(out.ends_with("  });\n});\n"), "{out}");
    }
}
