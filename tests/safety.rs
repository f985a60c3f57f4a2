//! What team-testing delivers is safe outside the sandbox: a test it writes, keeps, accepts from an
//! agent or applies never changes anything outside a temporary folder of its own. The fixture's
//! functions delete paths relative to the current folder, empty folders, chmod, create files and
//! write into `~`; after `apply`, plain pytest runs the tests unsandboxed from the project root.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// The functions of the fixture that change paths, and the two that do not.
const DESTRUCTIVE: [&str; 5] = [
    "remove_path",
    "clean_dir",
    "make_private",
    "touch",
    "save_note",
];

fn report_json(p: &Project, id: &str) -> Value {
    let out = p.cmd(&["report", id, "--format", "json"]).run();
    out.assert_code(0);
    serde_json::from_str(&out.stdout).unwrap()
}

/// Every file under `dir`, with its text.
fn texts(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((path.display().to_string(), text));
            }
        }
    }
    out
}

#[test]
fn applied_tests_run_by_plain_pytest_from_the_project_root_change_nothing_outside_their_tmp() {
    let p = Project::fixture("python-housekeeping");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the housekeeping helpers",
            "--pipeline",
            "standard",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let session = p.session_dir(&id);

    let applied = p.cmd(&["apply", &id]).run();
    applied.assert_code(0);
    assert!(applied.stdout.contains(" -> "), "{}", applied.stdout);

    // Plain pytest, unsandboxed, as the user, from the project root, with an empty HOME.
    let home = p.tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let run = Command::new("python3")
        .args(["-m", "pytest", "-rA", "-p", "no:cacheprovider"])
        .current_dir(&p.repo)
        .env("HOME", &home)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(run.status.success(), "{stdout}");

    // Only the applied tests folder is new; nothing tracked was deleted or changed mode.
    assert_eq!(git_status(&p.repo, false), "?? tests/", "{stdout}");
    assert_eq!(
        std::fs::read_dir(&home).unwrap().count(),
        0,
        "HOME was written"
    );

    // The harmless functions have passing tests.
    for f in ["slugify", "clamp"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("PASSED") && l.contains(&format!("test_{f}"))),
            "no passing test of {f}:\n{stdout}"
        );
    }

    // Each destructive function is tested through tmp_path only, or reported as a side effect.
    let delivered = texts(&p.repo.join("tests/team_testing"));
    let report = report_json(&p, &id);
    let side_effects = report["findings"]["side_effects"].as_array().unwrap();
    for f in DESTRUCTIVE {
        // Each test that calls it gives it a tmp_path to work in, or expects it to raise.
        let calling: Vec<&str> = delivered
            .iter()
            .flat_map(|(_, t)| t.split("\ndef "))
            .filter(|block| block.starts_with("test_") && block.contains(&format!("{f}(")))
            .collect();
        for block in &calling {
            assert!(
                block.contains("tmp_path") || block.contains("pytest.raises"),
                "{f} called without a tmp_path:\n{block}"
            );
        }
        let reported = side_effects
            .iter()
            .any(|s| s["function"] == format!("housekeeping.files.{f}"));
        assert!(
            !calling.is_empty() || reported,
            "{f} neither tested through tmp_path nor reported: {side_effects:?}"
        );
    }
    // save_note writes into ~ whatever it is given: it can only be reported.
    let note = side_effects
        .iter()
        .find(|s| s["function"] == "housekeeping.files.save_note")
        .expect("save_note reported");
    assert!(
        note["actual"].as_str().unwrap().contains("home folder"),
        "{note}"
    );

    // No sandbox denial passes for a code defect, and no delivered test carries one.
    for (path, text) in texts(&session.join("results")) {
        if !path.ends_with(".json") {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        for t in v["tests"].as_array().into_iter().flatten() {
            if t["classification"] == "code_defect" {
                let excerpt = t["evidence"]["excerpt"].as_str().unwrap_or("");
                for denial in [
                    "Read-only file system",
                    "Permission denied",
                    "not permitted",
                ] {
                    assert!(!excerpt.contains(denial), "{path}: {t}");
                }
            }
        }
    }
    for (path, text) in &delivered {
        assert!(!text.contains("Read-only file system"), "{path}");
    }

    // The author's-machine doctest is skipped with a note, never a defect.
    let skipped = report["findings"]["skipped_examples"].as_array().unwrap();
    assert!(
        skipped
            .iter()
            .any(|s| s["function"] == "housekeeping.files.config_path"),
        "{skipped:?}"
    );
    assert!(
        report["findings"]["code_defects"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{}",
        report["findings"]
    );
    assert!(
        !report["findings"]["contract_findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["function"] == "housekeeping.files.config_path"),
        "{}",
        report["findings"]
    );
}

#[test]
fn an_agent_test_that_deletes_the_current_folder_is_rejected_by_the_accept_filter() {
    let p = Project::fixture("python-housekeeping");
    let cfg = cli_config(&p, 60);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the housekeeping helpers",
            "--pipeline",
            "targeted",
            "-y",
            "--config",
            cfg.to_str().unwrap(),
            "--backend",
            "generator=fake",
        ])
        .env("FAKE_AGENT_MODE", "destructive")
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let gen = generator_task(&p, &id);
    let data = &gen["outcome"]["data"];
    let rejected = data["rejected"].as_array().unwrap();
    let cleanup = rejected
        .iter()
        .find(|r| r["file"] == "test_agent_cleanup.py")
        .unwrap_or_else(|| panic!("the destructive candidate was accepted: {data}"));
    let reason = cleanup["reason"].as_str().unwrap();
    assert!(reason.starts_with("unsafe:"), "{reason}");
    assert!(reason.contains("deletes the current folder"), "{reason}");
    assert_eq!(
        data["test_files"],
        serde_json::json!(["tests/L1-unit/test_agent_slug.py"]),
        "{data}"
    );
    assert_eq!(git_status(&p.repo, true), "");
}
