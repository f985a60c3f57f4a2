//! `team-testing doctor`: what works for the repository at hand, per family, from the same
//! answers the roles use; what is missing names its reason.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::common::*;

/// capability -> (state, detail) from `doctor --json`.
fn states(doc: &Value) -> BTreeMap<String, (String, String)> {
    doc["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["capability"].as_str().unwrap().to_string(),
                (
                    c["state"].as_str().unwrap().to_string(),
                    c["detail"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

fn doctor_json(p: &Project, path: &str) -> Value {
    let out = p.cmd(&["doctor", "--json"]).env("PATH", path).run();
    out.assert_code(0);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

#[test]
fn doctor_says_per_family_what_works_here_and_why_the_rest_does_not() {
    let system_path = std::env::var("PATH").unwrap();
    // An agent CLI on PATH: a program named claude (doctor only looks for it).
    let bin = tempfile::tempdir().unwrap();
    let claude = bin.path().join("claude");
    std::fs::write(&claude, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&claude, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let with_agent = format!("{}:{system_path}", bin.path().display());

    let py = Project::fixture("python-calc");
    let doc = doctor_json(&py, &with_agent);
    assert_eq!(doc["framework"], "pytest", "{doc}");
    assert_eq!(doc["family"], "Python");
    let s = states(&doc);
    for cap in [
        "own_suite",
        "generator",
        "agent_generation",
        "mutation",
        "test_fix",
        "effects_check",
    ] {
        assert_eq!(s[cap].0, "ready", "{cap}: {doc}");
    }
    assert!(
        s["agent_generation"].1.contains("generator=claude"),
        "{doc}"
    );
    let agents = doc["agents"].as_array().unwrap();
    let found = |name: &str| agents.iter().find(|a| a["name"] == name).unwrap()["usable"].clone();
    assert_eq!(found("claude"), true);
    // Without any agent CLI on PATH, agent generation is missing and says why.
    let doc = doctor_json(&py, &system_path);
    let s = states(&doc);
    if doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["usable"] == false)
    {
        assert_eq!(s["agent_generation"].0, "missing", "{doc}");
        assert!(
            s["agent_generation"].1.contains("no agent CLI on PATH"),
            "{doc}"
        );
    }

    // JavaScript: the whole pipeline, mutation included.
    let js = Project::fixture("js-esm");
    let s = states(&doctor_json(&js, &with_agent));
    assert_eq!(s["own_suite"].0, "ready");
    assert_eq!(s["generator"].0, "ready");
    assert!(s["generator"].1.contains("ttgen.mjs"), "{s:?}");
    assert_eq!(s["agent_generation"].0, "ready", "{s:?}");
    assert_eq!(s["test_fix"].0, "ready", "{s:?}");
    assert_eq!(s["mutation"].0, "ready", "{s:?}");
    assert!(
        s["mutation"].1.contains("test files that reach it"),
        "{s:?}"
    );

    // Rust and Go: their own suites, and their built-in generators (syn; a Go program on
    // go/types).
    for (fixture, how) in [("rust-crate", "syn"), ("go-calc", "go/types")] {
        let p = Project::fixture(fixture);
        let s = states(&doctor_json(&p, &with_agent));
        assert_eq!(s["own_suite"].0, "ready", "{fixture}: {s:?}");
        assert_eq!(s["generator"].0, "ready", "{fixture}: {s:?}");
        assert!(s["generator"].1.contains(how), "{fixture}: {s:?}");
        // An agent writes their tests; the test-fix cycle traces them one by one.
        assert_eq!(s["agent_generation"].0, "ready", "{fixture}: {s:?}");
        assert_eq!(s["test_fix"].0, "ready", "{fixture}: {s:?}");
        assert_eq!(
            s["effects_check"].0,
            s_effects(&doctor_json(&py, &with_agent))
        );
    }

    // No project: nothing is claimed, and the text says why.
    let empty = Project::plain();
    std::fs::remove_file(empty.repo.join("main.py")).unwrap();
    let out = empty.cmd(&["doctor"]).run();
    out.assert_code(0);
    assert!(out.stdout.contains("framework:   none: "), "{}", out.stdout);
    let doc = doctor_json(&empty, &with_agent);
    assert!(doc["framework"].is_null(), "{doc}");
    assert!(
        states(&doc).values().all(|(state, _)| state == "missing"),
        "{doc}"
    );
}

/// The effects check's state for a family with the watch: the same for every family.
fn s_effects(doc: &Value) -> String {
    states(doc)["effects_check"].0.clone()
}

#[test]
fn doctor_on_a_folder_that_does_not_exist_names_it() {
    let p = Project::plain();
    let out = p.cmd(&["doctor", "--repo", "no/such/folder"]).run();
    out.assert_code(2);
    assert!(out.stderr.contains("no/such/folder"), "{}", out.stderr);
}

/// Each capability `doctor` reports as built for a family (ready, or missing a tool here) is
/// exercised for that family by a named integration test; a capability that becomes built
/// without one, or a row left behind when one is taken back, fails here.
#[test]
fn every_capability_doctor_reports_as_built_is_exercised_by_an_integration_test() {
    const EXERCISED: &[(&str, &str, &str, &str)] = &[
        ("python-calc", "own_suite", "executor.rs", "the_projects_own_suite_is_the_baseline_and_its_failures_are_reported_not_removed"),
        ("python-calc", "generator", "generator.rs", "standard_pipeline_on_the_python_fixture_reaches_the_l1_gate"),
        ("python-calc", "agent_generation", "agents.rs", "a_cli_agent_writes_tests_and_only_candidates_that_load_pass_and_add_coverage_are_kept"),
        ("python-calc", "mutation", "mutation.rs", "the_report_has_mutation_scores_and_minimization_keeps_the_combined_score_with_fewer_tests"),
        ("python-calc", "test_fix", "fix_cycle.rs", "an_agent_fixes_both_bugs_a_regression_is_rolled_back_and_only_apply_fixes_changes_the_tree"),
        ("python-calc", "effects_check", "executor.rs", "executor_classifies_failures_detects_flaky_tests_and_measures_coverage"),
        ("js-esm", "own_suite", "executor.rs", "node_package_runs_with_junit_and_coverage"),
        ("js-esm", "generator", "js_generator.rs", "an_esm_package_gets_node_test_files_that_pass_after_apply"),
        ("js-esm", "effects_check", "executor.rs", "node_package_runs_with_junit_and_coverage"),
        ("js-esm", "agent_generation", "agent_families.rs", "an_agent_writes_node_test_tests_that_pass_after_apply"),
        ("js-esm", "test_fix", "fix_families.rs", "js_the_cycle_localises_both_bugs_and_a_scripted_fixer_reaches_100_percent"),
        ("js-esm", "mutation", "mutation_families.rs", "js_mutation_scores_minimization_and_pruned_assertions"),
        ("rust-crate", "own_suite", "executor.rs", "rust_crate_runs_in_a_workspace_copy_with_libtest_counts"),
        ("rust-crate", "effects_check", "executor.rs", "rust_crate_runs_in_a_workspace_copy_with_libtest_counts"),
        ("rust-crate", "generator", "rust_generator.rs", "a_crate_gets_integration_tests_that_pass_under_cargo_test_after_apply"),
        ("rust-crate", "agent_generation", "agent_families.rs", "an_agent_writes_rust_tests_that_pass_after_apply"),
        ("rust-crate", "test_fix", "fix_families.rs", "rust_the_cycle_localises_the_bug_and_a_scripted_fixer_fixes_it"),
        ("rust-crate", "mutation", "mutation_families.rs", "rust_mutation_scores_minimization_and_pruned_assertions"),
        ("go-calc", "own_suite", "executor.rs", "go_module_runs_with_test_events_a_compile_gate_and_profile_coverage"),
        ("go-calc", "effects_check", "executor.rs", "go_module_runs_with_test_events_a_compile_gate_and_profile_coverage"),
        ("go-calc", "generator", "go_generator.rs", "a_module_gets_table_driven_tests_that_pass_under_go_test_after_apply"),
        ("go-calc", "agent_generation", "agent_families.rs", "an_agent_writes_go_tests_that_pass_after_apply"),
        ("go-calc", "test_fix", "fix_families.rs", "go_the_cycle_localises_both_bugs_and_a_scripted_fixer_reaches_100_percent"),
        ("go-calc", "mutation", "mutation_families.rs", "go_mutation_scores_minimization_and_pruned_checks"),
    ];
    let path = std::env::var("PATH").unwrap();
    for fixture in ["python-calc", "js-esm", "rust-crate", "go-calc"] {
        let doc = doctor_json(&Project::fixture(fixture), &path);
        let built: Vec<String> = states(&doc)
            .into_iter()
            .filter(|(_, (state, _))| state != "not_yet")
            .map(|(capability, _)| capability)
            .collect();
        let mut named: Vec<String> = EXERCISED
            .iter()
            .filter(|(f, ..)| *f == fixture)
            .map(|(_, capability, ..)| capability.to_string())
            .collect();
        named.sort();
        assert_eq!(
            built, named,
            "{fixture}: doctor's built capabilities and the tests named"
        );
    }
    for (fixture, capability, file, test) in EXERCISED {
        let source = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests")
                .join(file),
        )
        .unwrap();
        assert!(
            source.contains(&format!("#[test]\nfn {test}(")),
            "{fixture} {capability}: no test {test} in tests/{file}"
        );
    }
}
