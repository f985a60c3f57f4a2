//! The built-in Rust generator on a real crate with the real cargo and llvm tools:
//! `textkit` has plain modules (`words`, `stack`, the re-exported `geometry`), `stats`, whose
//! `spread` breaks its doc example and whose `median` indexes an empty slice, and `memory`, whose
//! `remember` writes a file through a private helper.

use std::collections::BTreeMap;
use std::process::Command;

use crate::common::*;

/// (name, attributes and body) of every test of a generated file.
fn tests_of(source: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut pending = String::new();
    let mut open = false;
    for line in source.lines() {
        if line.starts_with("#[") {
            pending.push_str(line);
            pending.push('\n');
        } else if let Some(name) = line.strip_prefix("fn ") {
            out.push((name.to_string(), std::mem::take(&mut pending)));
            open = true;
        } else if line == "}" {
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

#[test]
fn a_crate_gets_integration_tests_that_pass_under_cargo_test_after_apply() {
    if !has_llvm_cov() {
        eprintln!("cargo-llvm-cov (and llvm-tools) is not installed: the Rust generator test needs its coverage");
        return;
    }
    let p = Project::fixture("rust-gen");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the crate",
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
    let percent = first_run_coverage(
        &p,
        &id,
        &["src/words.rs", "src/stack.rs", "src/geometry.rs"],
    );
    assert!(
        percent >= 85.0,
        "L1 line coverage of the plain modules {percent:.1}%"
    );

    // Both seeded bugs are code-defect findings, with the shortest input.
    let findings = generator_outcome(&p, &id, "L1-unit")["data"]["findings"]
        .as_array()
        .unwrap()
        .clone();
    let found = |function: &str, kind: &str| {
        findings
            .iter()
            .find(|f| f["function"] == function && f["kind"] == kind)
            .cloned()
    };
    let example = found("textkit::stats::spread", "doc_example")
        .unwrap_or_else(|| panic!("the broken doc example is not a finding: {findings:#?}"));
    assert!(
        example["actual"].as_str().unwrap().contains("left"),
        "{example}"
    );
    let panic = found("textkit::stats::median", "panic")
        .unwrap_or_else(|| panic!("the index panic is not a finding: {findings:#?}"));
    assert_eq!(panic["call"], "median(&[])", "{panic}");
    assert!(
        panic["actual"]
            .as_str()
            .unwrap()
            .contains("index out of bounds"),
        "{panic}"
    );

    // The call that writes a file (through a private helper) is a side effect, never a test.
    let effect = found("textkit::memory::remember", "side_effect")
        .unwrap_or_else(|| panic!("the file write is not a side-effect finding: {findings:#?}"));
    assert!(
        effect["actual"]
            .as_str()
            .unwrap()
            .contains("textkit-memory.txt"),
        "{effect}"
    );

    // Every test asserts something (or expects a panic); the defects are ignored tests.
    let mut l1 = BTreeMap::new();
    for layer in ["L1-unit", "L2-integration"] {
        let files = generated_files(&p, &id, layer);
        assert!(!files.is_empty(), "{layer} has tests");
        for (file, source) in &files {
            assert!(file.starts_with("team_testing_"), "{file}");
            assert!(
                !source.contains("remember("),
                "{layer}/{file} calls remember:\n{source}"
            );
            for (name, body) in tests_of(source) {
                assert!(
                    body.contains("assert")
                        || body.contains("#[should_panic")
                        || body.contains("#[ignore = \"code_defect"),
                    "{layer}/{file}: {name} asserts nothing:\n{body}"
                );
            }
        }
        if layer == "L1-unit" {
            l1 = files;
        }
    }
    let stats = &l1["team_testing_stats.rs"];
    assert!(
        stats.contains("#[ignore = \"code_defect") && stats.contains("median(&[])"),
        "{stats}"
    );

    // The same seed gives byte-identical files (the first session's as the generator wrote
    // them: its analyst minimized them since).
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
        generator_output(&p, &id, "L1-unit"),
        "same seed, same files"
    );

    // After `apply`, cargo finds them as integration tests and they pass; the defect tests run
    // with --ignored and fail. (`cargo test --tests`: the crate's own broken doc example is
    // the seeded bug, not the delivered tests.)
    p.cmd(&["apply", &id]).run().assert_code(0);
    for file in ["team_testing_stats.rs", "team_testing_stack_integration.rs"] {
        assert!(
            p.repo.join("tests").join(file).is_file(),
            "{file} was not applied"
        );
    }
    // The user's `cargo test` runs with a home of its own (cargo and rustup keep theirs), so
    // anything a delivered test wrote there shows; and the file the effectful function writes
    // must not appear in the temporary folder.
    let target = p.tmp.path().join("user-target");
    let user_home = p.tmp.path().join("user-home");
    std::fs::create_dir_all(&user_home).unwrap();
    let real_home = std::path::PathBuf::from(std::env::var_os("HOME").unwrap());
    let tool_home = |var: &str, default: &str| {
        std::env::var_os(var)
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| real_home.join(default))
    };
    let (cargo_home, rustup_home) = (
        tool_home("CARGO_HOME", ".cargo"),
        tool_home("RUSTUP_HOME", ".rustup"),
    );
    let memory = std::env::temp_dir().join("textkit-memory.txt");
    let _ = std::fs::remove_file(&memory);
    let cargo = |args: &[&str]| {
        Command::new("cargo")
            .args(args)
            .current_dir(&p.repo)
            .env("CARGO_TARGET_DIR", &target)
            .env("HOME", &user_home)
            .env("CARGO_HOME", &cargo_home)
            .env("RUSTUP_HOME", &rustup_home)
            .output()
            .expect("cargo starts")
    };
    let ran = cargo(&["test", "--tests", "--offline"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(ran.status.success(), "cargo test failed:\n{text}");
    assert!(text.contains("team_testing_"), "{text}");
    let ignored = cargo(&["test", "--tests", "--offline", "--", "--ignored"]);
    assert!(
        !ignored.status.success(),
        "the defect tests pass:\n{}",
        String::from_utf8_lossy(&ignored.stdout)
    );
    // Nothing but the applied files changed, and nothing in $HOME or the temporary folder.
    let status = git_status(&p.repo, false);
    assert!(
        status
            .lines()
            .all(|l| l.starts_with("?? tests/") || l.starts_with("?? Cargo.lock")),
        "{status}"
    );
    let written: Vec<_> = std::fs::read_dir(&user_home)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        written.is_empty(),
        "the delivered tests wrote into HOME: {written:?}"
    );
    assert!(
        !memory.exists(),
        "a delivered test called the function that writes a file"
    );
}
