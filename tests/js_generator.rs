//! The built-in JavaScript/TypeScript generator (src/gen/js) on real Node packages, with the
//! real node, jest and vitest: ESM, CommonJS, TypeScript, a jest project and a vitest project.
//! Each fixture has plain modules and `buggy`, whose `formatPrice` breaks its @example and whose
//! `initials` crashes on an empty string.
//!
//! jest, vitest, mocha, c8, @vitest/coverage-v8 and typescript come from one shared install,
//! tests/fixtures/js-deps (`npm ci` there; .ci/run does it), linked into each copy.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// The shared node_modules, or a panic saying how to install it.
fn shared_deps() -> PathBuf {
    let deps = fixtures().join("js-deps/node_modules");
    assert!(
        deps.join(".bin/jest").exists() && deps.join("typescript").is_dir(),
        "the JS fixtures' packages are missing: run `npm ci` in tests/fixtures/js-deps (.ci/run does)"
    );
    deps
}

/// A fixture copy; packages with dependencies get the shared node_modules linked in (each
/// fixture's .gitignore leaves it out of git).
fn project(name: &str, with_deps: bool) -> Project {
    let p = Project::fixture(name);
    if with_deps {
        std::os::unix::fs::symlink(shared_deps(), p.repo.join("node_modules")).unwrap();
    }
    p
}

/// (name, body) of every test of a generated file.
fn test_bodies(source: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut open = false;
    for line in source.lines() {
        if line.starts_with("  test") || line.starts_with("  it") {
            out.push((line.to_string(), String::new()));
            open = true;
        } else if line == "  });" {
            open = false;
        } else if open {
            if let Some(last) = out.last_mut() {
                last.1.push_str(line);
                last.1.push('\n');
            }
        }
    }
    out
}

/// What must hold for every fixture. `plain` are the plain modules' files, `runner` the
/// project's own command run on the applied folder.
fn must_hold(p: &Project, plain: &[&str], applied: &str, runner: &[&str]) {
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the package",
            "--pipeline",
            "standard",
            "-y",
            "--seed",
            "7",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();

    // L1 line coverage of the plain modules, as the executor measured it.
    let percent = first_run_coverage(p, &id, plain);
    assert!(
        percent >= 90.0,
        "L1 line coverage of the plain modules {percent:.1}%"
    );

    // Both seeded bugs are code-defect findings with evidence: the generator's contracts, and
    // the executor's classification of the tests that show them.
    let findings = generator_outcome(p, &id, "L1-unit")["data"]["findings"]
        .as_array()
        .unwrap()
        .clone();
    let found = |function: &str, kind: &str| {
        findings.iter().any(|f| {
            f["function"] == format!("buggy.{function}")
                && f["kind"] == kind
                && f["actual"].as_str().is_some_and(|a| !a.is_empty())
        })
    };
    assert!(found("formatPrice", "example"), "{findings:#?}");
    assert!(found("initials", "builtin_exception"), "{findings:#?}");
    let run = read_json(&p.session_dir(&id).join("results/run-001.json"));
    let defects: Vec<String> = run["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["classification"] == "code_defect")
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    for bug in ["formatPrice(1999)", "initials("] {
        assert!(
            defects.iter().any(|d| d.contains(bug)),
            "{bug} is not a code defect: {defects:?}\n{run}"
        );
    }

    // No test is assertion-free.
    for layer in ["L1-unit", "L2-integration"] {
        let files = generated_files(p, &id, layer);
        assert!(!files.is_empty(), "{layer} has tests");
        for (file, source) in &files {
            for (name, body) in test_bodies(source) {
                assert!(
                    body.contains("assert.") || body.contains("expect("),
                    "{layer}/{file}: {name} asserts nothing:\n{body}"
                );
            }
        }
    }

    // The same seed gives byte-identical files (before `apply`: the applied tests would be part
    // of the project's own suite the next search builds on).
    let again = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test it again",
            "--pipeline",
            "targeted",
            // The search again, not the tests it kept.
            "--no-cache",
            "--seed",
            "7",
        ])
        .run();
    again.assert_code(0);
    // The generator's output, before each session's analyst minimized it (the two pipelines
    // minimize against different layers).
    assert_eq!(
        generator_output(p, &again.session_id(), "L1-unit"),
        generator_output(p, &id, "L1-unit"),
        "same seed, same files"
    );

    // After `apply`, the project's own runner finds them and they pass; the defect tests are
    // its expected failures.
    p.cmd(&["apply", &id]).run().assert_code(0);
    assert!(p.repo.join(applied).is_dir(), "nothing in {applied}");
    let ran = Command::new(runner[0])
        .args(&runner[1..])
        .current_dir(&p.repo)
        .env("CI", "1")
        .env("NO_COLOR", "1")
        .output()
        .expect("the runner starts");
    assert!(
        ran.status.success(),
        "{runner:?} failed:\n{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
}

fn node_test(dir: &str) -> Vec<String> {
    vec!["node".into(), "--test".into(), dir.into()]
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn an_esm_package_gets_node_test_files_that_pass_after_apply() {
    let p = project("js-esm", false);
    must_hold(
        &p,
        &["src/strings.js", "src/stack.js"],
        "test/team_testing",
        &strs(&node_test("test/team_testing/")),
    );
    let applied =
        std::fs::read_to_string(p.repo.join("test/team_testing/buggy.l1.test.js")).unwrap();
    assert!(applied.contains("import { formatPrice, initials } from \"../../src/buggy.js\";"));
    assert!(applied.contains("{ todo: \"code_defect"), "{applied}");
}

#[test]
fn a_commonjs_package_gets_require_based_tests_and_its_bin_is_run_under_l3() {
    let p = project("js-cjs", false);
    must_hold(
        &p,
        &["lib/strings.js", "lib/money.js", "lib/index.js"],
        "test/team_testing",
        &strs(&node_test("test/team_testing/")),
    );
    let applied =
        std::fs::read_to_string(p.repo.join("test/team_testing/money.l1.test.js")).unwrap();
    assert!(
        applied.contains("require(\"../../lib/money.js\")"),
        "{applied}"
    );
    // L3: the package's bin, run as a user would.
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the cli",
            "--pipeline",
            "comprehensive",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let e2e = generated_files(&p, &out.session_id(), "L3-e2e");
    let source = e2e
        .get("entry_points.test.js")
        .unwrap_or_else(|| panic!("{e2e:?}"));
    assert!(
        source.contains("run(\"bin/cli.js\", [\"--help\"])"),
        "{source}"
    );
    assert!(
        source.contains("assert.equal(result.status, 2);"),
        "{source}"
    );
}

#[test]
fn a_typescript_package_is_tested_through_its_own_typescript() {
    let p = project("js-ts", true);
    must_hold(
        &p,
        &["src/strings.ts", "src/counter.ts"],
        "test/team_testing",
        &strs(&node_test("test/team_testing/")),
    );
}

#[test]
fn a_typescript_package_without_typescript_is_an_env_issue_naming_the_install() {
    let p = project("js-ts", false);
    // A package that declares no typescript: the dependency fetch cannot bring it either.
    let manifest = p.repo.join("package.json");
    let mut pkg: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    pkg.as_object_mut().unwrap().remove("devDependencies");
    std::fs::write(&manifest, serde_json::to_string_pretty(&pkg).unwrap()).unwrap();
    git(&p.repo, &["commit", "-qam", "no typescript"]);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test it",
            "--pipeline",
            "targeted",
            "--seed",
            "7",
        ])
        .run();
    let id = out.session_id();
    let gen = generator_outcome(&p, &id, "L1-unit");
    let errors = gen["data"]["import_errors"].to_string();
    assert!(
        errors.contains("npm install --save-dev typescript") && errors.contains("env_issue"),
        "{gen}"
    );
}

#[test]
fn a_jest_project_gets_jest_tests_that_pass_after_apply() {
    let p = project("js-jest", true);
    let jest = p.repo.join("node_modules/.bin/jest");
    let jest = jest.to_str().unwrap();
    must_hold(
        &p,
        &["src/strings.js", "src/money.js"],
        "__tests__/team_testing",
        &[jest, "--ci", "__tests__/team_testing"],
    );
    let applied =
        std::fs::read_to_string(p.repo.join("__tests__/team_testing/buggy.l1.test.js")).unwrap();
    assert!(applied.contains("test.failing("), "{applied}");
}

#[test]
fn a_vitest_project_gets_vitest_tests_that_pass_after_apply() {
    let p = project("js-vitest", true);
    let vitest = p.repo.join("node_modules/.bin/vitest");
    let vitest = vitest.to_str().unwrap();
    must_hold(
        &p,
        &["src/strings.js", "src/stack.js"],
        "__tests__/team_testing",
        &[vitest, "run", "__tests__/team_testing"],
    );
    let applied =
        std::fs::read_to_string(p.repo.join("__tests__/team_testing/buggy.l1.test.js")).unwrap();
    assert!(applied.contains("from 'vitest'"), "{applied}");
    assert!(applied.contains("test.fails("), "{applied}");
}

/// The helper alone: a call that writes outside its temporary folder is blocked, reported,
/// and never written as a test.
#[test]
fn a_call_with_side_effects_is_blocked_reported_and_never_a_test() {
    let p = Project::fixture("js-esm");
    p.write(
        "src/effects.js",
        "import { writeFileSync } from 'node:fs';\n\n/**\n * @param {string} name\n * @returns {string}\n */\nexport function save(name) {\n  writeFileSync(name, 'x');\n  return name;\n}\n\nexport function pure(n) {\n  return n + 1;\n}\n",
    );
    git(&p.repo, &["add", "."]);
    git(&p.repo, &["commit", "-q", "-m", "effects"]);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test it",
            "--pipeline",
            "targeted",
            "--seed",
            "3",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let findings = generator_outcome(&p, &id, "L1-unit")["data"]["findings"].clone();
    assert!(
        findings
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["function"] == "effects.save" && f["kind"] == "side_effect"),
        "{findings}"
    );
    let files = generated_files(&p, &id, "L1-unit");
    let effects = files.get("effects.test.js").cloned().unwrap_or_default();
    assert!(!effects.contains("save("), "{effects}");
    assert!(effects.contains("pure("), "{effects}");
    // Nothing was written in the repository.
    assert_eq!(git_status(&p.repo, false), "");
}

/// A GC round aims at the lines the run missed and keeps the defect-finding tests as node's
/// expected failures (`{ todo }`) with the evidence; the round's run then has no failure left.
#[test]
fn a_gc_round_keeps_the_defect_tests_as_expected_failures() {
    let p = project("js-esm", false);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test it",
            "--pipeline",
            "targeted",
            "--seed",
            "7",
            "--target",
            "L1=100",
            "--max-rounds",
            "1",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let round = p
        .tasks(&id)
        .into_iter()
        .find(|t| t["id"] == "TESTGEN-L1-fix-1")
        .expect("a GC round");
    assert!(
        round["outcome"]["summary"]
            .as_str()
            .unwrap()
            .contains("2 code-defect test(s) kept as expected failures"),
        "{round}"
    );
    let buggy = &generated_files(&p, &id, "L1-unit")["buggy.test.js"];
    // Both defect tests kept; the thrown error names its line in the project (an example's
    // failed assertion is in the test, so it names none).
    assert_eq!(
        buggy
            .matches("{ todo: \"code_defect found by team-testing")
            .count(),
        2,
        "{buggy}"
    );
    assert!(
        buggy.contains("{ todo: \"code_defect found by team-testing at src/buggy.js:"),
        "{buggy}"
    );
    let run = read_json(&p.session_dir(&id).join("results/run-002.json"));
    assert_eq!(run["failed"], 0, "{run}");
    assert_eq!(run["skipped"], 2, "{run}");
}

/// A jest project whose config puts its tests elsewhere: `apply` follows `roots` and
/// `testMatch`, and jest, run with no path, finds the tests and they pass.
#[test]
fn apply_follows_the_projects_jest_config() {
    let p = project("js-jest", true);
    let mut pkg: Value =
        serde_json::from_str(&std::fs::read_to_string(p.repo.join("package.json")).unwrap())
            .unwrap();
    pkg["jest"] = serde_json::json!({"roots": ["<rootDir>/src"], "testMatch": ["**/*.spec.js"]});
    std::fs::write(p.repo.join("package.json"), pkg.to_string()).unwrap();
    git(&p.repo, &["commit", "-qam", "jest config"]);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the package",
            "--pipeline",
            "targeted",
            "-y",
            "--seed",
            "7",
        ])
        .run();
    out.assert_code(0);
    p.cmd(&["apply", &out.session_id()]).run().assert_code(0);
    let applied = p.repo.join("src/team_testing/strings.l1.spec.js");
    assert!(applied.is_file(), "not applied where jest looks");
    assert!(!p.repo.join("__tests__").exists());
    let text = plain_jest_passes(&p);
    assert!(
        text.contains("src/team_testing/strings.l1.spec.js"),
        "{text}"
    );
}

/// A vitest project whose config includes only `spec/**/*.spec.js`: the executor still runs the
/// generated tests (a config of its own widens `include` in the copy), `apply` puts them where
/// the project's config looks, and `vitest run` with no filter finds them and they pass.
#[test]
fn apply_and_the_executor_follow_the_projects_vitest_include() {
    let p = project("js-vitest", true);
    p.write(
        "vitest.config.mjs",
        "import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { include: ['spec/**/*.spec.js'] } });\n",
    );
    git(&p.repo, &["add", "vitest.config.mjs"]);
    git(&p.repo, &["commit", "-qm", "vitest config"]);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the package",
            "--pipeline",
            "targeted",
            "-y",
            "--seed",
            "7",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let run = read_json(&p.session_dir(&id).join("results/run-001.json"));
    assert!(run["passed"].as_u64().unwrap() > 0, "{run}");
    p.cmd(&["apply", &id]).run().assert_code(0);
    assert!(p
        .repo
        .join("spec/team_testing/strings.l1.spec.js")
        .is_file());
    let vitest = p.repo.join("node_modules/.bin/vitest");
    let ran = Command::new(vitest)
        .arg("run")
        .current_dir(&p.repo)
        .env("CI", "1")
        .env("NO_COLOR", "1")
        .output()
        .expect("vitest starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(ran.status.success(), "{text}");
    assert!(
        text.contains("spec/team_testing/strings.l1.spec.js"),
        "{text}"
    );
}

/// The L1 line coverage of one file, as the executor measured it in a session's first run.
fn l1_coverage_of(p: &Project, id: &str, file: &str) -> f64 {
    let coverage = read_json(&p.session_dir(id).join("results/coverage-001.json"));
    let f = coverage["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == file)
        .unwrap_or_else(|| panic!("no coverage of {file}: {coverage}"))
        .clone();
    let total = f["lines_total"].as_u64().unwrap();
    assert!(total > 0, "{coverage}");
    100.0 * f["lines_covered"].as_u64().unwrap() as f64 / total as f64
}

/// Issue 32, finding 11 (negotiator): a constructor that keeps a request, whose methods read
/// `this.request.headers[...]`, is called with what the module reads on it and what the
/// project's own tests pass, an object with `headers` holding real header values. Then its
/// methods run: L1 reaches the module's lines, and the tests pass under the project's own
/// runner after `apply`. The same seed writes the same files.
#[test]
fn issue32_a_request_constructor_gets_a_request_with_headers_and_its_methods_run() {
    let p = project("js-negotiate", false);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the package",
            "--pipeline",
            "standard",
            "-y",
            "--seed",
            "7",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let l1 = generated_files(&p, &id, "L1-unit");
    let source = l1
        .get("negotiator.test.js")
        .unwrap_or_else(|| panic!("{l1:?}"));
    assert!(
        source.contains("new Negotiator({ headers: { "),
        "no request with headers:\n{source}"
    );
    // The values are header values (the project's own, or well-known ones), not junk.
    assert!(
        source.contains("\"accept-language\": \"") && source.contains("accept: \""),
        "{source}"
    );
    // Every method runs on such a request.
    for method in [
        "mediaType(",
        "mediaTypes(",
        "language(",
        "languages(",
        "encodings(",
    ] {
        assert!(
            source.contains(&format!("obj.{method}")),
            "{method} never called:\n{source}"
        );
    }
    let percent = l1_coverage_of(&p, &id, "lib/negotiator.js");
    assert!(
        percent >= 85.0,
        "L1 line coverage of lib/negotiator.js {percent:.1}%:\n{source}"
    );

    p.cmd(&["apply", &id]).run().assert_code(0);
    let ran = Command::new("node")
        .args(["--test", "test/"])
        .current_dir(&p.repo)
        .env("NO_COLOR", "1")
        .output()
        .expect("node starts");
    assert!(
        ran.status.success(),
        "node --test test/ failed:\n{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );

    // The applied tests are no usage of the project's own: the same seed, the same files.
    let again = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test it again",
            "--pipeline",
            "targeted",
            // The search again, not the tests it kept.
            "--no-cache",
            "--seed",
            "7",
        ])
        .run();
    again.assert_code(0);
    assert_eq!(
        generated_files(&p, &again.session_id(), "L1-unit"),
        l1,
        "same seed, same files"
    );
}

/// A TypeScript package tested with jest through ts-jest (css-what's layout: `preset: ts-jest`,
/// `roots: [src]`, specs beside the code): its own specs are the baseline, the generator writes
/// TypeScript tests that ts-jest compiles, and after apply the project's plain `jest` runs them
/// with its own and passes.
#[test]
fn a_ts_jest_package_gets_typescript_tests_its_own_jest_runs() {
    let p = project("js-ts-jest", true);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the selectors",
            "--pipeline",
            "targeted",
            "-y",
            "--seed",
            "7",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let baseline = read_json(&p.session_dir(&id).join("results/baseline.json"));
    assert_eq!(baseline["passed"], 2, "{baseline}");
    let files = generated_files(&p, &id, "L1-unit");
    let (name, text) = files.iter().next().expect("a generated file");
    assert!(name.ends_with(".test.ts"), "{name}");
    assert!(text.lines().nth(1) == Some("// @ts-nocheck"), "{text}");
    let run = read_json(&p.session_dir(&id).join("results/run-001.json"));
    assert!(run["passed"].as_u64().unwrap() > 3, "{run}");
    assert_eq!(run["failed"], 0, "{run}");

    p.cmd(&["apply", &id]).run().assert_code(0);
    let text = plain_jest_passes(&p);
    assert!(
        text.contains("team_testing"),
        "jest did not run the applied tests:\n{text}"
    );
}

/// The project's own `jest --ci`, run plainly from its root: it must pass; its output.
fn plain_jest_passes(p: &Project) -> String {
    let ran = Command::new(p.repo.join("node_modules/.bin/jest"))
        .arg("--ci")
        .current_dir(&p.repo)
        .env("CI", "1")
        .output()
        .expect("jest starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(ran.status.success(), "{text}");
    text
}
