//! The built-in executor on real projects: real pytest, real coverage.py, real failures.

use crate::common::*;

/// The run record of the test whose id contains `needle`.
fn find_test<'a>(run: &'a serde_json::Value, needle: &str) -> &'a serde_json::Value {
    run["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"].as_str().unwrap().contains(needle))
        .unwrap_or_else(|| panic!("no test {needle} in {run}"))
}

/// Nothing in the target repository changed, not even an ignored file (bytecode, build output).
fn assert_repo_untouched(p: &Project) {
    assert_eq!(git_status(&p.repo, true), "", "the repository changed");
}

/// `N failed, N passed, …` from pytest's own last line.
fn pytest_summary(text: &str) -> (u64, u64) {
    let line = text
        .lines()
        .rev()
        .find(|l| l.contains(" in ") && (l.contains("passed") || l.contains("failed")))
        .unwrap();
    let count = |word: &str| -> u64 {
        let words: Vec<&str> = line.split([' ', ',']).filter(|w| !w.is_empty()).collect();
        words
            .windows(2)
            .find(|w| w[1] == word)
            .map(|w| w[0].parse().unwrap())
            .unwrap_or(0)
    };
    (count("passed"), count("failed"))
}

#[test]
fn executor_classifies_failures_detects_flaky_tests_and_measures_coverage() {
    let p = Project::fixture("python-buggy");
    let roles = copy_roles(&p);
    let out = p
        .run_with_roles(&roles, "test pricing", "targeted")
        .env("TT_FIXTURE_TESTS", &generated("python-buggy"))
        .run();
    out.assert_code(0);
    let dir = p.session_dir(&out.session_id());
    let run = read_json(&dir.join("results/run-001.json"));
    assert_watched(&run);
    let by_id = |needle: &str| find_test(&run, needle);

    // A failing assertion against buggy code.
    let bug = by_id("test_two_items_cost_twice_the_unit_price");
    assert_eq!(bug["status"], "failed");
    assert_eq!(bug["classification"], "code_defect");
    assert_eq!(bug["criticality"], "high");
    assert!(
        bug["evidence"]["location"]
            .as_str()
            .unwrap()
            .ends_with("test_total.py:5"),
        "{bug}"
    );
    // A test that passes on a re-run is flaky, not a failure.
    assert_eq!(by_id("test_fails_only_the_first_time")["status"], "flaky");
    // The unloadable file and the wrongly-called function were quarantined with the reason.
    let quarantined = run["quarantined"].as_array().unwrap();
    assert!(
        quarantined
            .iter()
            .any(|q| q["id"] == "test_broken_import.py"
                && q["reason"]
                    .as_str()
                    .unwrap()
                    .contains("does not load (test_defect)")),
        "{run}"
    );
    assert!(
        quarantined.iter().any(|q| q["id"]
            .as_str()
            .unwrap()
            .ends_with("test_wrong_call.py::test_describe_called_wrongly")
            && q["reason"].as_str().unwrap().starts_with("test_defect")),
        "{run}"
    );
    assert_eq!(run["load_errors"][0]["file"], "test_broken_import.py");
    assert!(dir
        .join("tests/quarantine/L1-unit/test_broken_import.py")
        .is_file());

    // Counts equal pytest's own summary of the same (final) run.
    let raw = std::fs::read_to_string(dir.join("results/pytest-001.txt")).unwrap();
    let (passed, failed) = pytest_summary(&raw);
    // The flaky test failed in that run (it passes only when re-run on its own); our counts keep
    // it apart from passes and failures.
    let flaky = run["flaky"].as_array().unwrap().len() as u64;
    assert_eq!(flaky, 1);
    assert_eq!(
        (
            run["passed"].as_u64().unwrap(),
            run["failed"].as_u64().unwrap() + flaky
        ),
        (passed, failed),
        "{raw}"
    );
    // The quarantined test that no repair fixed stays in the denominator: not repaired, not
    // forgotten.
    assert_eq!(
        run["pass_rate"].as_f64().unwrap(),
        passed as f64 / (passed + failed - flaky + 1) as f64
    );

    // Line coverage equals coverage.py's own total for the same files.
    let data = dir.join("results/.coverage-001");
    // The tests import the session's mirror of the repository, so that is what coverage.py saw.
    let include = format!(
        "{0}/inventory/__init__.py,{0}/inventory/pricing.py",
        dir.join("workspace/python-L1-unit").display()
    );
    let own = dir.join("own.json");
    let status = std::process::Command::new("python3")
        .args(["-m", "coverage", "json", "-q", "-o"])
        .arg(&own)
        .arg(format!("--include={include}"))
        .env("COVERAGE_FILE", &data)
        .status()
        .unwrap();
    assert!(status.success());
    let own = read_json(&own);
    let expected = 100.0 * own["totals"]["covered_lines"].as_f64().unwrap()
        / own["totals"]["num_statements"].as_f64().unwrap();
    // The project's own suite ran first (the baseline): `coverage` is both together, and the
    // layer's tests alone are `tests_coverage`.
    let ours = run["tests_coverage"].as_f64().unwrap();
    assert!(
        (ours - expected).abs() < 0.1,
        "ours {ours} vs coverage.py {expected}"
    );
    let both = run["coverage"].as_f64().unwrap();
    let baseline = run["baseline_coverage"].as_f64().unwrap();
    assert!(both >= ours && both >= baseline, "{run}");
    let detail = read_json(&dir.join("results/coverage-001.json"));
    let pricing = detail["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "inventory/pricing.py")
        .unwrap();
    assert!(!pricing["missing_lines"].as_array().unwrap().is_empty());
    for raw in [
        "results/junit-001.xml",
        "results/coveragepy-001.json",
        "results/collect-001.xml",
    ] {
        assert!(dir.join(raw).is_file(), "{raw} kept");
    }
    // The CI's test tab: the run as JUnit XML, read back by the strict parser the executor
    // reads runners' reports with, with the record's counts; the code defect is skipped.
    let junit = dir.join("results/junit-L1-unit.xml");
    let cases = team_testing::testing::junit::parse_junit(&junit).unwrap();
    let quarantined_out = quarantined
        .iter()
        .filter(|q| {
            !run["tests"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["id"] == q["id"])
        })
        .count();
    assert_eq!(
        cases.len(),
        run["tests"].as_array().unwrap().len() + quarantined_out
    );
    let bug_case = cases
        .iter()
        .find(|c| c.id.ends_with("test_two_items_cost_twice_the_unit_price"))
        .unwrap();
    assert_eq!(format!("{:?}", bug_case.status), "Skipped", "{bug_case:?}");
    assert!(bug_case
        .message
        .as_deref()
        .unwrap()
        .starts_with("code_defect: "));
    // CI's exit policy: without --fail-on the run exited 0 (above); with it, the same session
    // exits 4 and names the defect.
    let id = out.session_id();
    let judged = p
        .cmd(&["report", &id, "--fail-on", "code-defect,gate"])
        .run();
    judged.assert_code(4);
    assert!(
        judged.stderr.contains(
            "--fail-on code-defect: test_total::test_two_items_cost_twice_the_unit_price (L1-unit)"
        ),
        "{}",
        judged.stderr
    );
    p.cmd(&["report", &id, "--fail-on", "none"])
        .run()
        .assert_code(0);
    // The repository is untouched (no bytecode, no files).
    assert_repo_untouched(&p);
}

#[test]
fn missing_pytest_is_an_env_issue_blocker_with_the_install_command() {
    let p = Project::fixture("python-buggy");
    let venv = std::process::Command::new("python3")
        .args(["-m", "venv", ".venv"])
        .current_dir(&p.repo)
        .status()
        .unwrap();
    assert!(venv.success());
    let roles = copy_roles(&p);
    let out = p
        .run_with_roles(&roles, "test pricing", "targeted")
        .env("TT_FIXTURE_TESTS", &generated("python-buggy"))
        .run();
    out.assert_code(1);
    let id = out.session_id();
    let blockers: Vec<serde_json::Value> = p
        .messages(&id)
        .into_iter()
        .filter(|m| m["type"] == "blocker")
        .collect();
    assert!(!blockers.is_empty(), "a blocker is posted");
    let reason = blockers[0]["data"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("env_issue: pytest is not available"),
        "{reason}"
    );
    assert!(
        reason.contains(".venv/bin/python -m pip install pytest"),
        "{reason}"
    );
    // The project's own suite could not run either: said, and the pipeline went on without it.
    let strategy = p
        .tasks(&id)
        .into_iter()
        .find(|t| t["id"] == "STRATEGY-001")
        .unwrap();
    assert_eq!(strategy["status"], "completed");
    let summary = strategy["outcome"]["summary"].as_str().unwrap();
    assert!(
        summary.contains("env_issue: the project's own tests could not run, going on without a baseline: pytest is not available"),
        "{summary}"
    );
}

#[test]
fn a_test_that_sleeps_forever_is_killed_at_the_timeout() {
    let p = Project::fixture("python-buggy");
    let tests = p.tmp.path().join("gen/L1-unit");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(
        tests.join("test_sleep_forever_marker.py"),
        "import time\n\ndef test_sleeps():\n    time.sleep(100000)\n",
    )
    .unwrap();
    let roles = copy_roles(&p);
    std::fs::create_dir_all(roles.join("executor")).unwrap();
    std::fs::write(
        roles.join("executor/role.md"),
        "---\nrole: executor\nprefix: TESTRUN\ninner_loop: dynamic\nmessage_types: [progress]\nbackend: builtin\ntimeout_s: 8\n---\nThe built-in executor with a short timeout.\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = p
        .run_with_roles(&roles, "test pricing", "targeted")
        .env(
            "TT_FIXTURE_TESTS",
            tests.parent().unwrap().to_str().unwrap(),
        )
        .run();
    out.assert_code(1);
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    let t = p.tasks(&out.session_id());
    let run = t.iter().find(|t| t["id"] == "TESTRUN-001").unwrap();
    assert!(
        run["reason"].as_str().unwrap().contains("timed out"),
        "{run}"
    );
    let left = std::process::Command::new("pgrep")
        .args(["-f", "test_sleep_forever_marker"])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty(), "a test process was left behind");
}

/// The baseline record of the one session a [`run_prepared`] run made.
fn baseline_of(p: &Project) -> serde_json::Value {
    let sessions: Vec<_> = std::fs::read_dir(&p.sessions)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("session.json").is_file())
        .collect();
    assert_eq!(sessions.len(), 1);
    read_json(&sessions[0].path().join("results/baseline.json"))
}

/// Runs the built-in strategist and executor on a fixture with prepared tests.
fn run_prepared(fixture: &str) -> (Project, serde_json::Value) {
    run_prepared_with(fixture, |_| {})
}

/// [`run_prepared`] after `change` edits the fixture's working tree.
fn run_prepared_with(fixture: &str, change: impl Fn(&Project)) -> (Project, serde_json::Value) {
    let p = Project::fixture(fixture);
    change(&p);
    let roles = copy_roles(&p);
    // One run is what these tests look at: no GC rounds.
    let spec = one_round_spec(&p);
    let out = p
        .run_with_roles(&roles, "test it", "targeted")
        .arg("--spec")
        .arg(&spec)
        .env("TT_FIXTURE_TESTS", &generated(fixture))
        .run();
    out.assert_code(0);
    let run = read_json(
        &p.session_dir(&out.session_id())
            .join("results/run-001.json"),
    );
    // Every family's kept tests ran once more under the file-system watch.
    assert_watched(&run);
    (p, run)
}

#[test]
fn rust_crate_runs_in_a_workspace_copy_with_libtest_counts() {
    let (p, run) = run_prepared("rust-crate");
    assert_eq!(run["framework"], "cargo");
    // Its tests ran once more under the file-system watch before they were kept.
    assert_watched(&run);
    // shapes_unit: 2 pass, 1 fails on the bug; the crate's own unit test passes too.
    assert_eq!(
        (run["passed"].as_u64(), run["failed"].as_u64()),
        (Some(3), Some(1)),
        "{run}"
    );
    let bug = find_test(&run, "triangle_angles_sum_to_180");
    assert_eq!(bug["classification"], "code_defect", "{bug}");
    assert_eq!(
        run["load_errors"][0]["file"], "does_not_compile.rs",
        "{run}"
    );
    // Coverage comes from cargo-llvm-cov where it is installed (.ci/run installs it).
    let llvm_cov = std::process::Command::new("cargo")
        .args(["llvm-cov", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if llvm_cov {
        let cov = run["coverage"]
            .as_f64()
            .unwrap_or_else(|| panic!("llvm-cov coverage: {run}"));
        assert!(cov > 50.0 && cov <= 100.0, "{run}");
        assert_eq!(run["coverage_scope"], serde_json::json!(["src/lib.rs"]));
    } else {
        let problem = run["coverage_problem"].as_str().unwrap_or_default();
        assert!(problem.contains("cargo-llvm-cov"), "{run}");
    }
    // The crate's own unit test ran first, alone, as the baseline.
    let baseline = baseline_of(&p);
    assert_eq!(
        (baseline["total"].as_u64(), baseline["passed"].as_u64()),
        (Some(1), Some(1)),
        "{baseline}"
    );
    assert_eq!(
        find_test(&baseline, "rectangle_area_multiplies_the_sides")["status"],
        "passed"
    );
    if llvm_cov {
        let before = baseline["coverage"].as_f64().unwrap();
        assert!(before > 0.0 && before < run["coverage"].as_f64().unwrap());
        assert_eq!(run["baseline_coverage"].as_f64(), Some(before), "{run}");
    }
    assert_repo_untouched(&p);
}

#[test]
fn node_package_runs_with_junit_and_coverage() {
    let (p, run) = run_prepared("node-pkg");
    assert_eq!(run["framework"], "node");
    // Its tests ran once more under the file-system watch before they were kept.
    assert_watched(&run);
    assert_eq!(
        (run["passed"].as_u64(), run["failed"].as_u64()),
        (Some(2), Some(1)),
        "{run}"
    );
    let bug = find_test(&run, "exactly max");
    assert_eq!(bug["classification"], "code_defect", "{bug}");
    assert_eq!(
        run["load_errors"][0]["file"], "syntax_error.test.js",
        "{run}"
    );
    assert!(
        run["coverage"].as_f64().is_some(),
        "node measures coverage: {run}"
    );
    // The package's own test/strings.test.js ran first as the baseline; the layer's figure
    // is the two suites together.
    let baseline = baseline_of(&p);
    assert_eq!(
        (baseline["total"].as_u64(), baseline["passed"].as_u64()),
        (Some(2), Some(2)),
        "{baseline}"
    );
    let own = find_test(&baseline, "capitalize upper-cases the first letter");
    assert_eq!(own["file"], "test/strings.test.js", "{own}");
    let before = baseline["coverage"].as_f64().unwrap();
    assert_eq!(run["baseline_coverage"].as_f64(), Some(before), "{run}");
    assert!(run["coverage"].as_f64().unwrap() >= before, "{run}");
    assert_repo_untouched(&p);
}

#[test]
fn go_module_runs_with_test_events_a_compile_gate_and_profile_coverage() {
    let (p, run) = run_prepared_with("go-calc", |p| {
        p.write(
            "own_test.go",
            "package calc\n\nimport \"testing\"\n\nfunc TestAddOwn(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"2+3\")\n\t}\n}\n",
        );
        git(&p.repo, &["add", "."]);
        git(&p.repo, &["commit", "-q", "-m", "own test"]);
    });
    // The module's own test ran first, alone, as the baseline.
    let baseline = baseline_of(&p);
    assert_eq!(
        (baseline["total"].as_u64(), baseline["passed"].as_u64()),
        (Some(1), Some(1)),
        "{baseline}"
    );
    assert_eq!(
        find_test(&baseline, "TestAddOwn")["file"],
        "own_test.go",
        "{baseline}"
    );
    assert!(baseline["coverage"].as_f64().unwrap() > 0.0, "{baseline}");
    assert_eq!(run["framework"], "go");
    // Its tests ran once more under the file-system watch before they were kept.
    assert_watched(&run);
    // calc_test.go: 2 pass; average_test.go: 1 passes, 1 finds the bug. The layer runs its
    // own tests only (`-run`): the module's own test is the baseline's, not the layer's.
    assert_eq!(
        (run["passed"].as_u64(), run["failed"].as_u64()),
        (Some(3), Some(1)),
        "{run}"
    );
    assert!(
        run["tests"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["id"] != "own_test.go::TestAddOwn"),
        "{run}"
    );
    assert_eq!(
        run["baseline_coverage"].as_f64(),
        baseline["coverage"].as_f64()
    );
    let pass = find_test(&run, "TestClampKeepsValuesInRange");
    assert_eq!(
        (&pass["status"], &pass["file"]),
        (&"passed".into(), &"calc_test.go".into()),
        "{pass}"
    );
    let bug = find_test(&run, "TestAverageOfThreeValues");
    assert_eq!(bug["id"], "average_test.go::TestAverageOfThreeValues");
    assert_eq!(bug["classification"], "code_defect", "{bug}");
    assert_eq!(bug["evidence"]["location"], "average_test.go:11", "{bug}");
    assert!(
        bug["message"].as_str().unwrap().ends_with("want 4"),
        "{bug}"
    );
    // The file that does not compile left the layer, classified, and the others still ran.
    let broken = &run["load_errors"][0];
    assert_eq!(broken["file"], "does_not_compile_test.go", "{run}");
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .starts_with("does_not_compile_test.go:6:"),
        "{broken}"
    );
    assert_eq!(
        broken["verdict"]["classification"], "test_defect",
        "{broken}"
    );
    assert!(
        run["quarantined"]
            .as_array()
            .unwrap()
            .iter()
            .any(|q| q["id"] == "does_not_compile_test.go" && q["file"] == true),
        "{run}"
    );
    // Coverage measured from go's profile, kept with the run.
    let cov = run["coverage"]
        .as_f64()
        .unwrap_or_else(|| panic!("go coverage: {run}"));
    assert!(cov > 50.0 && cov <= 100.0, "{run}");
    let reports: Vec<&str> = run["reports"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r.as_str())
        .collect();
    assert!(reports.contains(&"results/go-cover-001.out"), "{run}");
    assert_repo_untouched(&p);

    // `apply` puts the kept tests next to their package, where plain `go test` runs them.
    let id = only_session(&p);
    p.cmd(&["apply", &id]).run().assert_code(0);
    assert!(p.repo.join("tt_L1_calc_test.go").is_file());
    assert!(p.repo.join("tt_L1_average_test.go").is_file());
    assert!(!p.repo.join("tt_L1_does_not_compile_test.go").exists());
    assert!(p.repo.join("testdata/.team-testing-applied.json").is_file());
    let go = std::process::Command::new("go")
        .args(["test", "-count=1", "./..."])
        .current_dir(&p.repo)
        .env("GOCACHE", p.tmp.path().join("go-cache"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&go.stdout);
    assert_eq!(go.status.code(), Some(1), "{text}");
    assert!(
        text.contains("--- FAIL: TestAverageOfThreeValues"),
        "{text}"
    );
}

/// The id of the one session under the project's sessions root.
fn only_session(p: &Project) -> String {
    let ids: Vec<String> = std::fs::read_dir(&p.sessions)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("results").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids[0].clone()
}

#[test]
fn a_changed_file_no_test_loads_counts_as_uncovered() {
    // extras/ is no package: coverage.py never sees the file unless something imports it.
    let (_p, run) = run_prepared_with("python-buggy", |p| {
        p.write(
            "extras/promo.py",
            "def promo(code):\n    return code.upper()\n",
        );
    });
    assert_eq!(
        run["coverage_scope"],
        serde_json::json!(["extras/promo.py"])
    );
    assert_eq!(
        run["unmeasured_files"],
        serde_json::json!(["extras/promo.py"])
    );
    assert_eq!(run["coverage"], 0.0, "{run}");
}

#[test]
fn a_layer_whose_only_failures_are_real_bugs_meets_its_gate_without_a_gc_round() {
    let p = Project::fixture("python-buggy");
    // A second real bug beside total_price's.
    let pricing = std::fs::read_to_string(p.repo.join("inventory/pricing.py")).unwrap();
    p.write(
        "inventory/pricing.py",
        &format!("{pricing}\n\ndef item_count(items):\n    # Deliberate bug: one short.\n    return len(items) - 1\n"),
    );
    let tests = p.tmp.path().join("gen/L1-unit");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(
        tests.join("test_bugs_only.py"),
        "import pytest\n\
         from inventory.pricing import apply_discount, describe, item_count, total_price\n\n\
         def test_half_off():\n    assert apply_discount(100, 50) == 50\n\n\
         def test_no_discount():\n    assert apply_discount(80, 0) == 80\n\n\
         def test_percent_out_of_range():\n    with pytest.raises(ValueError):\n        apply_discount(1, 101)\n\n\
         def test_describe_every_quantity():\n    assert [describe(n) for n in (0, 1, 2)] == ['none', 'one', 'many']\n\n\
         def test_two_items_cost_twice_the_unit_price():\n    assert total_price(2, 10) == 20\n\n\
         def test_three_items_are_counted():\n    assert item_count(['a', 'b', 'c']) == 3\n",
    )
    .unwrap();
    let roles = copy_roles(&p);
    let out = p
        .run_with_roles(&roles, "test pricing", "targeted")
        .env(
            "TT_FIXTURE_TESTS",
            p.tmp.path().join("gen").to_str().unwrap(),
        )
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let run = read_json(&p.session_dir(&id).join("results/run-001.json"));
    for bug in ["test_two_items_cost_twice", "test_three_items_are_counted"] {
        assert_eq!(
            find_test(&run, bug)["classification"],
            "code_defect",
            "{run}"
        );
    }
    // 4 of 6 pass: below 95 %, yet both failures are the code's, so the gate is met at once.
    assert_eq!(run["passed"], 4, "{run}");
    let messages = p.messages(&id);
    let gate = messages
        .iter()
        .find(|m| m["type"] == "quality_gate")
        .expect("a quality gate");
    assert_eq!(gate["data"]["verdict"], "pass", "{gate}");
    assert!(
        gate["summary"]
            .as_str()
            .unwrap()
            .contains("2 code defect(s) reported, not held against the tests"),
        "{gate}"
    );
    assert!(
        !messages.iter().any(|m| m["type"] == "gc_loop_trigger"),
        "no GC round is spent on real bugs"
    );
    assert!(
        !p.tasks(&id)
            .iter()
            .any(|t| t["id"].as_str().unwrap().contains("-fix-")),
        "no fix tasks"
    );
}

#[test]
fn an_l1_gate_leaves_entry_points_out_of_coverage_and_says_so() {
    let p = Project::fixture("python-contracts");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the geometry",
            "--pipeline",
            "targeted",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let run = read_json(&p.session_dir(&id).join("results/run-001.json"));
    assert_eq!(run["layer"], "L1-unit");
    assert_eq!(
        run["left_out_of_gate"],
        serde_json::json!(["shapes/__main__.py"]),
        "{run}"
    );
    let task = p
        .tasks(&id)
        .into_iter()
        .find(|t| t["id"] == "TESTRUN-001")
        .unwrap();
    assert!(
        task["outcome"]["summary"].as_str().unwrap().contains(
            "coverage leaves out shapes/__main__.py (entry points: only L3 reaches them)"
        ),
        "{task}"
    );
}

#[test]
fn the_projects_own_suite_is_the_baseline_and_its_failures_are_reported_not_removed() {
    let p = Project::fixture("python-buggy");
    // An existing test that fails on the fixture's bug.
    p.write(
        "tests/test_total_own.py",
        "from inventory.pricing import total_price\n\n\ndef test_three_cost_three_times():\n    assert total_price(3, 2) == 6\n",
    );
    let status_before = git_status(&p.repo, true);
    let roles = copy_roles(&p);
    let out = p
        .run_with_roles(&roles, "test pricing", "targeted")
        .env("TT_FIXTURE_TESTS", &generated("python-buggy"))
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let dir = p.session_dir(&id);
    let baseline = read_json(&dir.join("results/baseline.json"));
    assert_eq!(baseline["layer"], "baseline", "{baseline}");
    assert_eq!(
        (baseline["total"].as_u64(), baseline["passed"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        find_test(&baseline, "test_three_cost_three_times")["status"],
        "failed"
    );
    assert!(baseline["coverage"].as_f64().is_some(), "{baseline}");
    let strategy = p
        .tasks(&id)
        .into_iter()
        .find(|t| t["id"] == "STRATEGY-001")
        .unwrap();
    let summary = strategy["outcome"]["summary"].as_str().unwrap();
    assert!(
        summary.contains("baseline: the project's own 2 tests, 1 passed, 1 failing"),
        "{summary}"
    );
    // The layer's gate judges the two suites together, and says so.
    let run = read_json(&dir.join("results/run-001.json"));
    let before = run["baseline_coverage"].as_f64().unwrap();
    let after = run["coverage"].as_f64().unwrap();
    assert!(after >= before, "{run}");
    let testrun = p
        .tasks(&id)
        .into_iter()
        .find(|t| t["id"] == "TESTRUN-001")
        .unwrap();
    assert!(
        testrun["outcome"]["summary"]
            .as_str()
            .unwrap()
            .contains(&format!(
                "cov {before:.1}% -> {after:.1}% with the project's own tests"
            )),
        "{testrun}"
    );
    // The report shows the baseline, the existing failure, and the layer before and after.
    let report = p.cmd(&["report", &id, "--format", "json"]).run();
    report.assert_code(0);
    let report: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    let base = &report["baseline"];
    assert_eq!(
        (base["tests"].as_u64(), base["passed"].as_u64()),
        (Some(2), Some(1)),
        "{base}"
    );
    assert!(
        base["failing_tests"][0]
            .as_str()
            .unwrap()
            .contains("test_three_cost_three_times"),
        "{base}"
    );
    assert_eq!(base["layers"][0]["layer"], "L1-unit", "{base}");
    assert_eq!(base["layers"][0]["before"].as_f64(), Some(before), "{base}");
    let md = p.cmd(&["report", &id]).run();
    assert!(
        md.stdout.contains("## Baseline: the Project's Own Tests"),
        "{}",
        md.stdout
    );
    // Per file, before and after: in the report, in status, and in the run's summary.
    let file = base["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "inventory/pricing.py")
        .unwrap_or_else(|| panic!("{base}"));
    assert!(
        file["after"].as_f64().unwrap() >= file["before"].as_f64().unwrap(),
        "{file}"
    );
    let status = p.cmd(&["status", &id]).run();
    assert!(
        status
            .stdout
            .contains("Coverage (the project's own tests -> with the generated ones):")
            && status.stdout.contains("    inventory/pricing.py: "),
        "{}",
        status.stdout
    );
    assert!(
        out.stdout
            .contains("coverage per file (the project's own tests -> with the generated ones): ")
            && out.stdout.contains("inventory/pricing.py "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("L1-unit: pass ")
            && out.stdout.contains("with the project's own tests"),
        "{}",
        out.stdout
    );
    // The failing existing test is still there, as it was.
    assert!(p.repo.join("tests/test_total_own.py").is_file());
    assert_eq!(
        git_status(&p.repo, true),
        status_before,
        "the repository changed"
    );
}
