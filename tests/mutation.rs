//! Mutation analysis and minimization: the analyst runs the project's own tests and each layer's
//! generated tests against the same mutants, drops generated tests that add nothing, and the
//! report carries the scores.

use crate::common::*;

#[test]
fn the_report_has_mutation_scores_and_minimization_keeps_the_combined_score_with_fewer_tests() {
    let p = Project::fixture("python-calc");
    let out = p
        .cmd(&["run", "test the calculator", "--pipeline", "standard"])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let dir = p.session_dir(&id);
    let analyst = p
        .tasks(&id)
        .into_iter()
        .find(|t| t["id"] == "TESTANA-001")
        .unwrap();
    let summary = analyst["outcome"]["summary"].as_str().unwrap();
    assert!(summary.contains("mutation score "), "{summary}");

    let report = p.cmd(&["report", &id, "--format", "json"]).run();
    report.assert_code(0);
    let report: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    let m = &report["mutation"];
    let mutants = m["mutants"].as_u64().unwrap();
    assert!(mutants >= 5, "{m}");
    assert!(
        m["modules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "calc/ops.py"),
        "{m}"
    );
    // The project's own tests/test_ops.py has a score of its own, below the combined one.
    let own = m["baseline"]["score"].as_f64().unwrap();
    let combined = m["combined"]["score"].as_f64().unwrap();
    assert!(own > 0.0 && own < combined, "{m}");
    assert!(m["generated"]["score"].as_f64().unwrap() > 0.0, "{m}");

    let mut dropped_somewhere = false;
    for layer in m["layers"].as_array().unwrap() {
        let name = layer["layer"].as_str().unwrap();
        let (before, after) = (
            layer["before"]["tests"].as_u64().unwrap(),
            layer["after"]["tests"].as_u64().unwrap(),
        );
        let dropped = layer["dropped"].as_array().unwrap();
        assert_eq!(before - after, dropped.len() as u64, "{layer}");
        // Minimization keeps every kill and line of the combined suite.
        let (cb, ca) = (
            layer["combined_before"].as_f64().unwrap(),
            layer["combined_after"].as_f64().unwrap(),
        );
        assert!(ca >= cb - 2.0, "{layer}");
        for id in dropped {
            dropped_somewhere = true;
            let (file, test) = id.as_str().unwrap().split_once("::").unwrap();
            let kept = dir.join("tests").join(name).join(file);
            if let Ok(text) = std::fs::read_to_string(&kept) {
                assert!(
                    !text.contains(&format!("def {test}(")),
                    "{test} still in {file}"
                );
            }
            let original = dir.join("workspace/unminimized").join(name).join(file);
            let text = std::fs::read_to_string(&original).unwrap();
            assert!(
                text.contains(&format!("def {test}(")),
                "{test} not kept aside"
            );
        }
    }
    assert!(
        dropped_somewhere,
        "the fixture's two layers overlap, so some test adds nothing: {m}"
    );
    // Assertions that noticed no mutant went only where another of the test's did: every test
    // left still asserts something.
    for layer in m["layers"].as_array().unwrap() {
        assert!(layer["assertions_dropped"].is_array(), "{layer}");
        let folder = dir.join("tests").join(layer["layer"].as_str().unwrap());
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            for body in text.split("\ndef test").skip(1) {
                let body = body.split("\ndef ").next().unwrap();
                assert!(
                    body.contains("assert") || body.contains("pytest.raises"),
                    "a test without an assertion in {}: {body}",
                    entry.path().display()
                );
            }
        }
    }
    let md = std::fs::read_to_string(dir.join("analysis/quality-report.md")).unwrap();
    assert!(md.contains("## Mutation Analysis"), "{md}");

    // The minimized suites still pass under plain pytest after apply, and the project's own
    // tests are untouched.
    p.cmd(&["apply", &id]).run().assert_code(0);
    let pytest = std::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
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
    assert_eq!(git_status(&p.repo, false), "?? tests/team_testing/");
}

#[test]
fn without_the_sandbox_no_mutant_runs_and_the_summary_says_why() {
    let p = Project::fixture("python-calc");
    let out = p
        .cmd(&[
            "run",
            "test the calculator",
            "--pipeline",
            "standard",
            "--unsafe-no-sandbox",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let analyst = p
        .tasks(&id)
        .into_iter()
        .find(|t| t["id"] == "TESTANA-001")
        .unwrap();
    let summary = analyst["outcome"]["summary"].as_str().unwrap();
    assert!(
        summary.contains("mutation analysis not run: mutation analysis needs the sandbox"),
        "{summary}"
    );
    assert!(!p.session_dir(&id).join("results/mutation.json").exists());
}

#[test]
fn on_a_project_with_its_own_suite_every_kept_generated_test_adds_what_that_suite_misses() {
    let p = Project::fixture("python-partial");
    let own_before = std::fs::read(p.repo.join("tests/test_cart.py")).unwrap();
    let out = p
        .cmd(&["run", "test the cart", "--pipeline", "standard"])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let report = p.cmd(&["report", &id, "--format", "json"]).run();
    report.assert_code(0);
    let report: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    // The baseline: the project's 3 tests cover a little more than half of the cart.
    let base = &report["baseline"];
    assert_eq!(base["tests"], 3, "{base}");
    let cart = base["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "shop/cart.py")
        .unwrap_or_else(|| panic!("{base}"));
    let (before, after) = (
        cart["before"].as_f64().unwrap(),
        cart["after"].as_f64().unwrap(),
    );
    assert!((50.0..=65.0).contains(&before), "{cart}");
    assert!(after > before, "{cart}");
    // Every generated test kept adds a line, an arc or a killed mutant the project's suite
    // (and the tests kept before it) miss; the others were dropped.
    let layers = report["mutation"]["layers"].as_array().unwrap();
    assert!(!layers.is_empty());
    for layer in layers {
        let kept = layer["kept"].as_array().unwrap();
        assert!(!kept.is_empty(), "{layer}");
        for k in kept {
            let adds = ["new_lines", "new_arcs", "new_kills"]
                .iter()
                .map(|f| k[f].as_u64().unwrap())
                .sum::<u64>();
            assert!(adds > 0, "{k}");
        }
    }
    // The project's own tests are untouched.
    assert_eq!(
        std::fs::read(p.repo.join("tests/test_cart.py")).unwrap(),
        own_before
    );
    assert_eq!(git_status(&p.repo, false), "");
}

#[test]
fn a_code_defect_points_at_its_likely_line_by_fault_localisation() {
    let p = Project::fixture("python-buggy");
    let roles = copy_roles(&p);
    // One run is what these tests look at: no GC rounds.
    let spec = one_round_spec(&p);
    let out = p
        .run_with_roles(&roles, "test pricing", "standard")
        .arg("--spec")
        .arg(&spec)
        .env("TT_FIXTURE_TESTS", &generated("python-buggy"))
        .run();
    let id = out.session_id();
    let dir = p.session_dir(&id);
    let md = std::fs::read_to_string(dir.join("analysis/fault-localisation.md"))
        .unwrap_or_else(|e| panic!("{e}: {}{}", out.stdout, out.stderr));
    assert!(
        md.contains("test_two_items_cost_twice_the_unit_price"),
        "{md}"
    );
    // total_price ignores the quantity on its one line: the failing test's top suspect.
    let found = read_json(&dir.join("results/fault-localisation.json"));
    let total = found["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| {
            t["test"]
                .as_str()
                .unwrap()
                .ends_with("test_two_items_cost_twice_the_unit_price")
        })
        .unwrap_or_else(|| panic!("{found}"));
    assert_eq!(
        total["suspects"][0]["location"], "inventory/pricing.py:7",
        "{total}"
    );
    assert_eq!(total["suspects"][0]["code"], "return unit_price", "{total}");
    // The report's code defect says where.
    let report = p.cmd(&["report", &id, "--format", "json"]).run();
    let report: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    let defect = report["findings"]["code_defects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| {
            d["test"]
                .as_str()
                .unwrap()
                .contains("test_two_items_cost_twice_the_unit_price")
        })
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        defect["suspects"][0]
            .as_str()
            .unwrap()
            .starts_with("inventory/pricing.py:7 "),
        "{defect}"
    );
}

#[test]
fn an_assertion_that_notices_no_mutant_goes_when_another_of_its_test_does() {
    let p = Project::fixture("python-calc");
    let prepared = p.tmp.path().join("prepared");
    let test = "from calc.ops import mean\n\n\ndef test_mean_twice():\n    assert mean([2.0, 4.0]) == 3.0\n    assert isinstance(mean([2.0, 4.0]), float)\n";
    for layer in ["L1-unit", "L2-integration"] {
        std::fs::create_dir_all(prepared.join(layer)).unwrap();
        std::fs::write(prepared.join(layer).join("test_mean.py"), test).unwrap();
    }
    let roles = copy_roles(&p);
    // One run is what these tests look at: no GC rounds.
    let spec = one_round_spec(&p);
    let out = p
        .run_with_roles(&roles, "test mean", "standard")
        .arg("--spec")
        .arg(&spec)
        .env("TT_FIXTURE_TESTS", prepared.to_str().unwrap())
        .run();
    let dir = p.session_dir(&out.session_id());
    let m = read_json(&dir.join("results/mutation.json"));
    let l1 = &m["layers"][0];
    assert_eq!(l1["layer"], "L1-unit", "{m}");
    // Every mutant of mean the test notices, the equality notices first (a float still comes
    // back from `sum * len`): the isinstance check notices none and goes.
    assert_eq!(
        l1["assertions_dropped"],
        serde_json::json!(["test_mean.py::test_mean_twice:6"]),
        "{m}"
    );
    let now = std::fs::read_to_string(dir.join("tests/L1-unit/test_mean.py")).unwrap();
    assert!(!now.contains("isinstance"), "{now}");
    assert!(now.contains("assert mean([2.0, 4.0]) == 3.0"), "{now}");
    let before =
        std::fs::read_to_string(dir.join("workspace/unminimized/L1-unit/test_mean.py")).unwrap();
    assert_eq!(before, test);
}
