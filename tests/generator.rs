//! The built-in search-based generator on real Python projects (no LLM).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::common::*;

/// Every generated Python test file of a layer, by name.
fn generated_py_files(p: &Project, id: &str, layer: &str) -> BTreeMap<String, String> {
    generated_files(p, id, layer)
        .into_iter()
        .filter(|(name, _)| name.ends_with(".py"))
        .collect()
}

/// The bodies of the test functions of a file.
fn test_bodies(source: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in source.lines() {
        if let Some(rest) = line.strip_prefix("def test_") {
            out.push((
                format!("test_{}", rest.split('(').next().unwrap()),
                String::new(),
            ));
        } else if let Some(last) = out.last_mut() {
            if line.starts_with(' ') || line.is_empty() {
                last.1.push_str(line);
                last.1.push('\n');
            }
        }
    }
    out
}

fn last_run(p: &Project, id: &str, layer: &str) -> Value {
    let tasks = p.tasks(id);
    let run = tasks
        .iter()
        .rfind(|t| t["owner"] == "executor" && t["layer"] == layer && t["status"] == "completed")
        .unwrap_or_else(|| panic!("no completed {layer} run"));
    run["outcome"].clone()
}

#[test]
fn standard_pipeline_on_the_python_fixture_reaches_the_l1_gate() {
    let p = Project::fixture("python-calc");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "standard",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let l1 = last_run(&p, &id, "L1-unit");
    assert!(
        l1["coverage"].as_f64().unwrap() >= 80.0,
        "L1 coverage: {l1}"
    );
    assert!(
        l1["pass_rate"].as_f64().unwrap() >= 0.95,
        "L1 pass rate: {l1}"
    );
    for layer in ["L1-unit", "L2-integration"] {
        let files = generated_py_files(&p, &id, layer);
        assert!(!files.is_empty(), "{layer} has tests");
        for (file, source) in &files {
            for (name, body) in test_bodies(source) {
                assert!(
                    body.contains("assert") || body.contains("pytest.raises"),
                    "{layer}/{file}::{name} asserts nothing:\n{body}"
                );
            }
        }
    }
    // Files no run judged stay in the session: one written after the layer's last run (as a
    // resumed round not run yet leaves it), one edited since.
    let session = p.session_dir(&id);
    std::fs::write(
        session.join("tests/L1-unit/test_unrun.py"),
        "def test_unrun():\n    assert False\n",
    )
    .unwrap();
    let (edited, _) = generated_py_files(&p, &id, "L2-integration")
        .into_iter()
        .next()
        .unwrap();
    let edited_path = session.join("tests/L2-integration").join(&edited);
    let mut text = std::fs::read_to_string(&edited_path).unwrap();
    text.push_str("\n\ndef test_edited():\n    assert False\n");
    std::fs::write(&edited_path, text).unwrap();
    // After `apply`, plain pytest from the repository runs them and they pass.
    let applied = p.cmd(&["apply", &id]).run();
    applied.assert_code(0);
    for (file, why) in [
        (
            "L1-unit/test_unrun.py",
            "written after the last run of L1-unit",
        ),
        (
            &format!("L2-integration/{edited}"),
            "changed since the last run of L2-integration",
        ),
    ] {
        assert!(
            applied.stdout.contains(&format!("left out: {file}: {why}")),
            "{}",
            applied.stdout
        );
    }
    assert!(!p
        .repo
        .join("tests/team_testing/l1_unit/test_unrun.py")
        .exists());
    assert!(
        p.repo
            .join("tests/team_testing/l1_unit/test_calc_ops.py")
            .is_file(),
        "{}",
        applied.stdout
    );
    let pytest = std::process::Command::new("pytest")
        .args(["-q", "-p", "no:cacheprovider", "tests/team_testing"])
        .current_dir(&p.repo)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("pytest is installed");
    assert!(
        pytest.status.success(),
        "{}{}",
        String::from_utf8_lossy(&pytest.stdout),
        String::from_utf8_lossy(&pytest.stderr)
    );
    // A second apply of the same files is a no-op; nothing else in the repository changed.
    p.cmd(&["apply", &id]).run().assert_code(0);
    assert_eq!(git_status(&p.repo, false), "?? tests/team_testing/");
}

#[test]
fn the_same_seed_gives_the_same_tests_and_another_seed_others() {
    let p = Project::fixture("python-calc");
    // Each run searches (--no-cache): the search itself is what a seed decides.
    let run = |seed: &str| {
        let out = p
            .cmd(&[
                "run",
                "--max-mutants",
                QUICK_MUTANTS,
                "test it",
                "--pipeline",
                "targeted",
                "--no-cache",
                "--seed",
                seed,
            ])
            .run();
        out.assert_code(0);
        generated_py_files(&p, &out.session_id(), "L1-unit")
    };
    let a = run("7");
    let b = run("7");
    let c = run("8");
    assert_eq!(a, b, "same seed, same files");
    assert_ne!(a, c, "another seed, other files");
}

/// The SARIF 2.1.0 schema as Microsoft publishes it (npm @microsoft/sarif-multitool-linux 5.7.0,
/// MIT; see tests/fixtures/sarif/README.md), validated by Python's jsonschema.
fn assert_valid_sarif(p: &Project, id: &str) -> Value {
    let out = p.cmd(&["report", id, "--format", "sarif"]).run();
    out.assert_code(0);
    let file = p.tmp.path().join(format!("{id}.sarif"));
    std::fs::write(&file, &out.stdout).unwrap();
    let schema = fixtures().join("sarif/sarif-2.1.0.json");
    let check = std::process::Command::new("python3")
        .args([
            "-c",
            "import json, sys, jsonschema\n\
             schema, log = (json.load(open(a)) for a in sys.argv[1:3])\n\
             jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)",
        ])
        .arg(&schema)
        .arg(&file)
        .output()
        .expect("python3 with jsonschema");
    assert!(
        check.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&check.stderr),
        out.stdout
    );
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn broken_contracts_are_findings_and_never_asserted() {
    let p = Project::fixture("python-contracts");
    // A module that writes beside itself: a side effect, never a test.
    p.write(
        "shapes/journal.py",
        "import os\n\n\ndef remember(name: str) -> int:\n    \"\"\"Appends name to journal.txt beside this module.\"\"\"\n    with open(os.path.join(os.path.dirname(__file__), 'journal.txt'), 'a') as f:\n        f.write(name + '\\n')\n    return len(name)\n",
    );
    git(&p.repo, &["add", "."]);
    git(&p.repo, &["commit", "-q", "-m", "a journal"]);
    // The journal's lines are never reached, so its search ends on its budget: a short one, and
    // no GC round for the coverage it costs.
    let mut spec =
        read_json(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/team-config.json"));
    spec["generator_budget_s"] = serde_json::json!(8);
    let spec_file = p.tmp.path().join("team-config.json");
    std::fs::write(&spec_file, spec.to_string()).unwrap();
    let run_once = |fresh: bool| {
        let mut args = vec![
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the geometry",
            "--pipeline",
            "targeted",
            "--spec",
            spec_file.to_str().unwrap(),
            "--max-rounds",
            "0",
            "--fail-on",
            "code-defect",
        ];
        if fresh {
            args.push("--no-cache");
        }
        p.cmd(&args).run()
    };
    let out = run_once(false);
    // Each broken contract fails the CI job by name.
    out.assert_code(4);
    for broken in ["shapes.geometry.perimeter: ", "shapes.geometry.last_side: "] {
        assert!(
            out.stderr
                .contains(&format!("--fail-on code-defect: {broken}")),
            "{}",
            out.stderr
        );
    }
    let id = out.session_id();
    let gen = p
        .tasks(&id)
        .into_iter()
        .find(|t| t["id"] == "TESTGEN-001")
        .unwrap();
    let findings = gen["outcome"]["data"]["findings"]
        .as_array()
        .unwrap()
        .clone();
    let kinds: Vec<(String, String)> = findings
        .iter()
        .map(|f| {
            (
                f["function"].as_str().unwrap().to_string(),
                f["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        kinds
            .iter()
            .any(|(f, k)| f.ends_with("perimeter") && k == "doctest"),
        "{findings:?}"
    );
    assert!(
        kinds
            .iter()
            .any(|(f, k)| f.ends_with("last_side") && k == "builtin_exception"),
        "{findings:?}"
    );
    // A private helper's annotations are no contract: its callers decide what it gets.
    assert!(
        !kinds
            .iter()
            .any(|(f, _)| f.ends_with("_side") && !f.ends_with("last_side")),
        "{findings:?}"
    );
    let files = generated_py_files(&p, &id, "L1-unit");
    let all: String = files.values().cloned().collect();
    // The buggy perimeter value (2 + 3 * 2 = 8) is never asserted; the documented 10 is, as
    // doctest compares it (the example and its printed output).
    assert!(!all.contains("perimeter(2, 3) == 8"), "{all}");
    assert!(
        all.contains("'>>> perimeter(2, 3)\\n'\n        '10\\n'"),
        "{all}"
    );
    // time.time() gets no equality assertion.
    for (name, body) in files.values().flat_map(|s| test_bodies(s)) {
        if body.contains("stamp(") {
            assert!(!body.contains("=="), "{name} asserts a timestamp:\n{body}");
        }
    }
    // The infinite loop on negative turns did not hang the run (it finished), and the executor
    // classifies the contract tests as code defects.
    let run = read_json(&p.session_dir(&id).join("results/run-001.json"));
    let defects: Vec<&Value> = run["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["classification"] == "code_defect")
        .collect();
    assert!(defects.len() >= 2, "{run}");

    // Code scanning: the defects, the broken contracts and the side effect as SARIF that
    // validates, each at a file of the repository, relative to it, and the same fingerprints
    // from a second run that searches again.
    let fingerprints = |sarif: &Value| -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = sarif["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap();
                assert!(p.repo.join(uri).is_file() && !uri.starts_with('/'), "{r}");
                let print = r["partialFingerprints"]["teamTesting/v1"].as_str().unwrap();
                (r["ruleId"].as_str().unwrap().to_string(), print.to_string())
            })
            .collect();
        out.sort();
        out
    };
    let sarif = assert_valid_sarif(&p, &id);
    // Each defect's message carries its input: the failing test's statements.
    let messages: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == "code-defect")
        .map(|r| r["message"]["text"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("`") && m.contains("last_side(")),
        "{messages:?}"
    );
    let first = fingerprints(&sarif);
    for rule in ["code-defect", "broken-contract", "side-effect"] {
        assert!(first.iter().any(|(r, _)| r == rule), "no {rule}: {first:?}");
    }
    let again = run_once(true);
    again.assert_code(4);
    assert_eq!(
        fingerprints(&assert_valid_sarif(&p, &again.session_id())),
        first
    );
}

#[test]
fn apply_replaces_its_own_files_but_never_one_it_did_not_write_or_one_edited_since() {
    let p = Project::fixture("python-calc");
    let session = |seed: &str| {
        let out = p
            .cmd(&[
                "run",
                "--max-mutants",
                QUICK_MUTANTS,
                "test it",
                "--pipeline",
                "standard",
                "-y",
                "--seed",
                seed,
            ])
            .run();
        out.assert_code(0);
        out.session_id()
    };
    let (a, b) = (session("7"), session("8"));
    let l1 = p.repo.join("tests/team_testing/l1_unit/test_calc_ops.py");
    let l2 = p.repo.join("tests/team_testing/l2_integration");

    // One layer only.
    p.cmd(&["apply", &a, "--layer", "L1"]).run().assert_code(0);
    assert!(l1.is_file());
    assert!(!l2.exists(), "--layer L1 applied L2 too");
    // A newer session's tests replace the ones apply wrote itself.
    p.cmd(&["apply", &b, "--layer", "L1"]).run().assert_code(0);
    assert_eq!(
        std::fs::read_to_string(&l1).unwrap(),
        std::fs::read_to_string(p.session_dir(&b).join("tests/L1-unit/test_calc_ops.py")).unwrap()
    );
    // Once the user edits it, it is theirs: refused without --force, and the edit stays.
    std::fs::write(&l1, "def test_mine():\n    assert True\n").unwrap();
    let out = p.cmd(&["apply", &a, "--layer", "L1"]).run();
    out.assert_code(2);
    assert!(out.stderr.contains("test_calc_ops.py"), "{}", out.stderr);
    assert!(std::fs::read_to_string(&l1).unwrap().contains("test_mine"));
    let bad = p.cmd(&["apply", &a, "--layer", "L7"]).run();
    bad.assert_code(2);
    assert!(
        bad.stderr.contains("--layer L7: no such layer"),
        "{}",
        bad.stderr
    );
}

/// What the generator said of the cache in a session's L1 round (None: nothing reused).
fn cache_said(p: &Project, id: &str) -> Option<String> {
    generator_outcome(p, id, "L1-unit")["data"]["cache"]
        .as_str()
        .map(str::to_string)
}

#[test]
fn a_second_run_reuses_the_tests_of_unchanged_modules_and_searches_only_what_changed() {
    let p = Project::fixture("python-calc");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "test the calculator", "--layer", "L1", "-y"];
        args.extend_from_slice(&["--max-mutants", QUICK_MUTANTS]);
        args.extend_from_slice(extra);
        let out = p.cmd(&args).run();
        out.assert_code(0);
        // The summary says how long the user waited for the first tests.
        assert!(
            out.stdout.contains("  first tests: written "),
            "{}",
            out.stdout
        );
        out.session_id()
    };
    let first = run(&[]);
    assert_eq!(cache_said(&p, &first), None);
    // Nothing changed: no search at all, the same tests, the same coverage.
    let second = run(&[]);
    assert_eq!(
        cache_said(&p, &second).as_deref(),
        Some("3 of 3 module(s) reused from the cache")
    );
    assert_eq!(
        generator_output(&p, &first, "L1-unit"),
        generator_output(&p, &second, "L1-unit")
    );
    let files = ["calc/ops.py", "calc/tokenizer.py"];
    assert_eq!(
        first_run_coverage(&p, &first, &files),
        first_run_coverage(&p, &second, &files)
    );
    // Nor are the same tests run again on the same code: the first run's results are taken,
    // raw reports included, and the record says whose they are.
    let reused = read_json(&p.session_dir(&second).join("results/run-001.json"));
    assert_eq!(
        reused["reused_from"].as_str(),
        Some(format!("{first} run 001").as_str()),
        "{reused:#}"
    );
    for report in reused["reports"].as_array().unwrap() {
        let path = p.session_dir(&second).join(report.as_str().unwrap());
        assert!(path.is_file(), "{} is missing", path.display());
    }
    // One module changed: it and the package that imports it are searched, the other reused.
    let tokenizer = std::fs::read_to_string(p.repo.join("calc/tokenizer.py")).unwrap();
    p.write(
        "calc/tokenizer.py",
        &format!("{tokenizer}\n\ndef count(text):\n    return len(tokenize(text))\n"),
    );
    git(&p.repo, &["commit", "-qam", "count tokens"]);
    let third = run(&[]);
    assert_eq!(
        cache_said(&p, &third).as_deref(),
        Some("1 of 3 module(s) reused from the cache; searched: calc, calc.tokenizer")
    );
    // The code changed: its tests run for real.
    let ran = read_json(&p.session_dir(&third).join("results/run-001.json"));
    assert!(ran["reused_from"].is_null(), "{ran:#}");
    // --no-cache searches everything; `sessions gc --days 0` empties the cache.
    let fourth = run(&["--no-cache"]);
    assert_eq!(cache_said(&p, &fourth), None);
    let gc = p.cmd(&["sessions", "gc", "--days", "0"]).run();
    gc.assert_code(0);
    // Three of the first run, two of the third (--no-cache keeps nothing).
    assert!(gc.stdout.starts_with("removed 5 cached"), "{}", gc.stdout);
    let fifth = run(&[]);
    assert_eq!(
        cache_said(&p, &fifth),
        None,
        "an empty cache reuses nothing"
    );
}
