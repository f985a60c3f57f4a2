//! The scenario plan against the real binary: python-spec has two requirement files with five
//! acceptance criteria (REQ-002 AC-1, `take(3, 3)` returns 0, is violated by a seeded bug: the
//! stock check is `>` where it should be `>=`), and a function whose branch no search reaches
//! (the gap an earlier session leaves).

use std::collections::BTreeMap;

use crate::common::{read_json, Output, Project, QUICK_MUTANTS};

/// scenarios.csv as (id -> column -> value).
fn scenarios(p: &Project, id: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(p.session_dir(id).join("scenarios.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            let row: BTreeMap<String, String> = headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect();
            (row["id"].clone(), row)
        })
        .collect()
}

/// `run TASK --pipeline PIPELINE --dry-run -y`: the plan only.
fn plan_only(p: &Project, task: &str, pipeline: &str) -> Output {
    p.cmd(&[
        "run",
        "--max-mutants",
        QUICK_MUTANTS,
        task,
        "--pipeline",
        pipeline,
        "--dry-run",
        "-y",
    ])
    .run()
}

fn set_priority(p: &Project, id: &str, scenario: &str, priority: &str) {
    let path = p.session_dir(id).join("scenarios.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let edited: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with(&format!("{scenario},")) {
                l.replacen(",high,", &format!(",{priority},"), 1)
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(&path, edited.join("\n") + "\n").unwrap();
}

#[test]
fn the_spec_route_plans_a_scenario_per_criterion_and_the_run_honours_an_edited_plan() {
    let p = Project::fixture("python-spec");
    let out = plan_only(&p, "test the shop", "standard");
    out.assert_code(0);
    assert!(
        out.stdout
            .contains("route: spec (2 requirement file(s) with 5 acceptance criteria"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("scenarios: 5 (L1 5)"), "{}", out.stdout);
    let id = out.session_id();
    let plan = scenarios(&p, &id);
    assert_eq!(plan.len(), 5);
    assert_eq!(plan["AT-004"]["req_ref"], "REQ-002:AC-1");
    assert_eq!(plan["AT-004"]["target_file"], "shop/inventory.py");
    assert_eq!(plan["AT-004"]["test_cases"], "take(3, 3) returns 0");
    let strategy =
        std::fs::read_to_string(p.session_dir(&id).join("strategy/test-strategy.md")).unwrap();
    assert!(
        strategy.contains("## Scenario Plan") && strategy.contains("route: spec"),
        "{strategy}"
    );
    // The user raises one scenario's priority before running the plan.
    set_priority(&p, &id, "AT-003", "critical");
    let status = p.cmd(&["status", &id]).run();
    assert!(
        status.stdout.contains("Scenario plan: route: spec"),
        "{}",
        status.stdout
    );
    p.cmd(&["resume", &id, "-y"]).run().assert_code(0);
    let plan = scenarios(&p, &id);
    assert_eq!(plan["AT-003"]["priority"], "critical", "the edit is kept");
    for (at, row) in &plan {
        assert!(
            row["test_file"].starts_with("tests/L1-unit/test_at_"),
            "{at} has its own test file: {row:?}"
        );
        assert!(
            p.session_dir(&id).join(&row["test_file"]).is_file(),
            "{at}: {} exists",
            row["test_file"]
        );
    }
    // The violated criterion's scenario failed on the code; the others pass.
    let violated = &plan["AT-004"];
    assert_eq!(violated["status"], "failed");
    assert_eq!(violated["classification"], "code_defect");
    assert_eq!(violated["red_result"], "expected_fail");
    assert!(
        violated["evidence"].starts_with("shop/inventory.py:"),
        "{violated:?}"
    );
    for at in ["AT-001", "AT-002", "AT-003", "AT-005"] {
        assert_eq!(plan[at]["status"], "passed", "{at}: {:?}", plan[at]);
        assert_eq!(plan[at]["red_result"], "pass");
    }
    // `rerun` takes the rerun route, for the failed scenario.
    p.cmd(&["rerun", &id, "-y"]).run();
    let status = p.cmd(&["status", &id]).run();
    assert!(
        status.stdout.contains("Scenario plan: route: rerun (a rerun with 1 failed or blocked scenario(s) of the last run: AT-004"),
        "{}",
        status.stdout
    );
    // The traceability matrix: every criterion has a test, the violated one shows the defect.
    let trace =
        std::fs::read_to_string(p.session_dir(&id).join("analysis/traceability.md")).unwrap();
    let report = read_json(&p.session_dir(&id).join("analysis/report.json"));
    let criteria = report["traceability"]["criteria"].as_array().unwrap();
    assert_eq!(criteria.len(), 5, "{trace}");
    for c in criteria {
        assert!(!c["scenarios"].as_array().unwrap().is_empty(), "{c}");
    }
    assert_eq!(criteria[0]["criterion"], "AC-1");
    assert_eq!(criteria[0]["requirement"], "REQ-002");
    assert_eq!(criteria[0]["verdict"], "violated", "listed first: {trace}");
    assert!(
        criteria[1..].iter().all(|c| c["verdict"] == "covered"),
        "{trace}"
    );
    let edited = criteria
        .iter()
        .flat_map(|c| c["scenarios"].as_array().unwrap())
        .find(|s| s["id"] == "AT-003")
        .unwrap();
    assert_eq!(edited["priority"], "critical", "the edited priority shows");
    assert!(trace.contains("failed (code_defect)"), "{trace}");
    // The shared board: the project's conventions, one pattern per scenario file, read by the
    // generator.
    let board = std::fs::read_to_string(p.session_dir(&id).join("discoveries.ndjson")).unwrap();
    let kinds: Vec<String> = board
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| *k == "convention").count(),
        1,
        "{board}"
    );
    assert_eq!(
        kinds.iter().filter(|k| *k == "test_pattern").count(),
        5,
        "{board}"
    );
    let gen = crate::common::generator_task(&p, &id);
    assert!(
        gen["outcome"]["data"]["discoveries_read"].as_u64().unwrap() >= 6,
        "{gen}"
    );
    // Each test names its scenario.
    let test = std::fs::read_to_string(p.session_dir(&id).join(&violated["test_file"])).unwrap();
    assert!(
        test.contains("def test_at_004_case_1():") && test.contains("assert (take(3, 3)) == (0)"),
        "{test}"
    );
}

#[test]
fn a_failed_critical_scenario_stops_the_next_layer_with_the_reason() {
    let p = Project::fixture("python-spec");
    let out = plan_only(&p, "test the shop", "standard");
    out.assert_code(0);
    let id = out.session_id();
    set_priority(&p, &id, "AT-004", "critical");
    let run = p.cmd(&["resume", &id, "-y"]).run();
    run.assert_code(0);
    let tasks = p.tasks(&id);
    let l2: Vec<&serde_json::Value> = tasks
        .iter()
        .filter(|t| t["layer"] == "L2-integration")
        .collect();
    assert!(!l2.is_empty());
    for t in &l2 {
        assert_eq!(t["status"], "not_applicable", "{t}");
        assert!(
            t["reason"]
                .as_str()
                .unwrap()
                .starts_with("fail-fast: critical scenario AT-004 (REQ-002:AC-1) failed in L1"),
            "{t}"
        );
    }
    let status = p.cmd(&["status", &id]).run();
    assert!(
        status
            .stdout
            .contains("fail-fast: critical scenario AT-004"),
        "{}",
        status.stdout
    );
    let report =
        std::fs::read_to_string(p.session_dir(&id).join("analysis/quality-report.md")).unwrap();
    assert!(
        report.contains("fail-fast: critical scenario AT-004"),
        "the report says why L2 did not run"
    );
}

#[test]
fn a_malformed_requirement_file_or_a_broken_plan_is_an_error_naming_the_file_and_line() {
    let p = Project::fixture("python-spec");
    p.write(
        "REQ-003.md",
        "# REQ-003: Refunds\n\n## Acceptance Criteria\n\n### AC-1\nGiven a paid order\nWhen it is refunded\n",
    );
    let out = plan_only(&p, "test the shop", "targeted");
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("REQ-003.md: line 6: AC-1: Given without Then"),
        "{}",
        out.stderr
    );
    assert!(
        !p.sessions.exists() || std::fs::read_dir(&p.sessions).unwrap().next().is_none(),
        "no session made"
    );
    std::fs::remove_file(p.repo.join("REQ-003.md")).unwrap();

    let out = plan_only(&p, "test the shop", "targeted");
    out.assert_code(0);
    let id = out.session_id();
    let path = p.session_dir(&id).join("scenarios.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let broken = text.replacen("AT-002,", "AT-001,", 1).replacen(
        ",L1,high,business_rule,shop/pricing.py",
        ",L7,high,business_rule,shop/pricing.py",
        1,
    );
    std::fs::write(&path, &broken).unwrap();
    let tasks_before = std::fs::read(p.session_dir(&id).join("tasks.json")).unwrap();
    let out = p.cmd(&["resume", &id, "-y"]).run();
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("scenarios.csv:2 (AT-001): unknown layer 'L7'")
            && out
                .stderr
                .contains("scenarios.csv:3 (AT-001): duplicate id (first at line 2)"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        broken,
        "the plan is kept as written"
    );
    assert_eq!(
        std::fs::read(p.session_dir(&id).join("tasks.json")).unwrap(),
        tasks_before
    );
}

#[test]
fn a_second_run_after_one_that_left_gaps_takes_the_gap_route_aimed_at_those_lines() {
    let p = Project::fixture("python-spec");
    for f in ["REQ-001.md", "REQ-002.md"] {
        std::fs::remove_file(p.repo.join(f)).unwrap();
    }
    crate::common::git(&p.repo, &["add", "-A"]);
    crate::common::git(&p.repo, &["commit", "-q", "-m", "no requirements"]);
    let first = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the shop",
            "--pipeline",
            "targeted",
            "-y",
        ])
        .run();
    first.assert_code(0);
    let first_id = first.session_id();
    let analysis = read_json(&p.session_dir(&first_id).join("task-analysis.json"));
    assert_eq!(analysis["scenario_plan"]["route"], "code");
    let second = plan_only(&p, "test the shop again", "targeted");
    second.assert_code(0);
    assert!(
        second.stdout.contains("route: gap") && second.stdout.contains(&first_id),
        "{}",
        second.stdout
    );
    let plan = scenarios(&p, &second.session_id());
    let gap = plan
        .values()
        .find(|r| r["source"] == "gap")
        .expect("a gap scenario");
    assert_eq!(gap["req_ref"], "gap:shop/audit.py:lucky");
    assert_eq!(gap["target_file"], "shop/audit.py");
    assert_eq!(gap["test_cases"], "lines 9-10;branch line 8", "{gap:?}");
}

#[test]
fn the_reflective_strategy_reflects_each_iteration_and_stops_when_only_code_defects_fail() {
    // Only a code defect fails, coverage is short of a 100 % target: reflective stops at once.
    let p = Project::fixture("python-spec");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the shop",
            "--pipeline",
            "targeted",
            "-y",
            "--strategy",
            "reflective",
            "--target",
            "L1=100",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert_eq!(
        state["gc_rounds"]["L1"].as_u64().unwrap_or(0),
        0,
        "no round spent"
    );
    let log = std::fs::read_to_string(p.session_dir(&id).join("reflection-log.md")).unwrap();
    assert_eq!(log.matches("## Iteration").count(), 1, "{log}");
    assert!(
        log.contains("every remaining failure (1) is a code defect"),
        "{log}"
    );
    assert!(
        p.messages(&id).iter().any(|m| m["summary"]
            .as_str()
            .is_some_and(|s| s.contains("converged: every remaining failure is a code defect"))),
        "the gate says why it stopped"
    );

    // No failure, coverage short: a revision round runs, and each iteration has its reflection.
    let p = Project::fixture("python-spec");
    for f in ["REQ-001.md", "REQ-002.md"] {
        std::fs::remove_file(p.repo.join(f)).unwrap();
    }
    crate::common::git(&p.repo, &["add", "-A"]);
    crate::common::git(&p.repo, &["commit", "-q", "-m", "no requirements"]);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the shop",
            "--pipeline",
            "targeted",
            "-y",
            "--strategy",
            "reflective",
            "--target",
            "L1=100",
            "--max-rounds",
            "1",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let log = std::fs::read_to_string(p.session_dir(&id).join("reflection-log.md")).unwrap();
    assert_eq!(log.matches("## Iteration").count(), 2, "{log}");
    assert!(
        log.contains("## Iteration 0 of L1-unit") && log.contains("## Iteration 1 of L1-unit"),
        "{log}"
    );
    assert!(
        log.contains("the missing lines need inputs the search has not tried"),
        "{log}"
    );
}

#[test]
fn an_agent_backend_writes_each_scenario_in_its_own_call() {
    let p = Project::fixture("python-spec");
    let cfg = crate::common::config(
        &p,
        &format!(
            "[backends.fake]\nkind = \"cli\"\ncommand = [\"python3\", {:?}, \"{{prompt_file}}\"]\n",
            crate::common::fake_agent()
        ),
    );
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the shop",
            "--pipeline",
            "targeted",
            "-y",
            "-c",
            "2",
            "--config",
            cfg.to_str().unwrap(),
            "--backend",
            "generator=fake",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let gen = crate::common::generator_task(&p, &id);
    let data = &gen["outcome"]["data"];
    assert_eq!(data["backend"], "fake", "{gen}");
    assert_eq!(data["scenarios"], 5);
    assert_eq!(data["wave"], 2);
    assert_eq!(data["test_files"].as_array().unwrap().len(), 5, "{gen}");
    // One recorded call per scenario, each carrying its row and the project's style.
    let calls: Vec<serde_json::Value> = std::fs::read_dir(p.session_dir(&id).join("agents"))
        .unwrap()
        .flatten()
        .map(|e| read_json(&e.path()))
        .filter(|c| c["role"] == "generator")
        .filter(|c| {
            c["prompt"]
                .as_str()
                .is_some_and(|p| p.contains("SCENARIO:"))
        })
        .collect();
    assert_eq!(calls.len(), 5);
    for c in &calls {
        let prompt = c["prompt"].as_str().unwrap();
        assert!(
            prompt.contains("SCENARIO:") && prompt.contains("req_ref: REQ-00"),
            "{prompt}"
        );
        assert!(
            prompt.contains("Style example `tests/test_pricing.py`"),
            "{prompt}"
        );
    }
    // The violated criterion's agent-written test fails on the code, as the plan records.
    let plan = scenarios(&p, &id);
    assert_eq!(
        plan["AT-004"]["classification"], "code_defect",
        "{:?}",
        plan["AT-004"]
    );
    assert_eq!(plan["AT-001"]["status"], "passed");
}

/// Rewrites one cell of scenarios.csv (the csv crate quotes what needs quoting).
fn set_cell(p: &Project, id: &str, scenario: &str, column: &str, value: &str) {
    let path = p.session_dir(id).join("scenarios.csv");
    let mut reader = csv::Reader::from_path(&path).unwrap();
    let headers = reader.headers().unwrap().clone();
    let at = headers.iter().position(|h| h == column).unwrap();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&headers).unwrap();
    for r in reader.records() {
        let mut row: Vec<String> = r.unwrap().iter().map(str::to_string).collect();
        if row[0] == scenario {
            row[at] = value.to_string();
        }
        w.write_record(&row).unwrap();
    }
    std::fs::write(&path, w.into_inner().unwrap()).unwrap();
}

#[test]
fn issue31_a_test_file_naming_the_generators_own_file_is_refused_on_resume() {
    let p = Project::fixture("python-spec");
    let out = plan_only(&p, "test the shop", "standard");
    out.assert_code(0);
    let id = out.session_id();
    assert_eq!(
        scenarios(&p, &id)["AT-001"]["target_file"],
        "shop/pricing.py"
    );
    // The search writes tests/L1-unit/test_shop_pricing.py for shop/pricing.py: the scenario's
    // stated checks would be written over it.
    set_cell(
        &p,
        &id,
        "AT-001",
        "test_file",
        "tests/L1-unit/test_shop_pricing.py",
    );
    let tasks_before = std::fs::read(p.session_dir(&id).join("tasks.json")).unwrap();
    let out = p.cmd(&["resume", &id, "-y"]).run();
    out.assert_code(2);
    assert!(
        out.stderr.contains(
            "scenarios.csv:2 (AT-001): test_file 'tests/L1-unit/test_shop_pricing.py' is the file the generator writes for module shop.pricing"
        ) && out.stderr.contains("tests/L1-unit/test_at_001_"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read(p.session_dir(&id).join("tasks.json")).unwrap(),
        tasks_before,
        "nothing ran"
    );
    // A file of the scenario's own is fine.
    set_cell(
        &p,
        &id,
        "AT-001",
        "test_file",
        "tests/L1-unit/test_my_discounts.py",
    );
    p.cmd(&["resume", &id, "-y"]).run().assert_code(0);
    let plan = scenarios(&p, &id);
    assert_eq!(
        plan["AT-001"]["test_file"],
        "tests/L1-unit/test_my_discounts.py"
    );
    let dir = p.session_dir(&id).join("tests/L1-unit");
    let mine = std::fs::read_to_string(dir.join("test_my_discounts.py")).unwrap();
    assert!(mine.contains("def test_at_001_case_1"), "{mine}");
    let searched = std::fs::read_to_string(dir.join("test_shop_pricing.py")).unwrap();
    assert!(!searched.contains("def test_at_001_"), "{searched}");
}

#[test]
fn issue31_a_plan_that_is_not_a_regular_file_is_an_error_naming_it() {
    let p = Project::fixture("python-spec");
    let out = plan_only(&p, "test the shop", "targeted");
    out.assert_code(0);
    let id = out.session_id();
    let path = p.session_dir(&id).join("scenarios.csv");
    let tasks_before = std::fs::read(p.session_dir(&id).join("tasks.json")).unwrap();

    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let out = p.cmd(&["resume", &id, "-y"]).run();
    out.assert_code(2);
    assert!(
        out.stderr.contains(&format!(
            "{}: is a folder, not a regular file",
            path.display()
        )),
        "{}",
        out.stderr
    );
    std::fs::remove_dir(&path).unwrap();

    // A FIFO is named too, never opened (nobody writes into it: a read would wait forever).
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    let out = p.cmd(&["resume", &id, "-y"]).run();
    out.assert_code(2);
    assert!(
        out.stderr.contains(&format!(
            "{}: is a FIFO, not a regular file",
            path.display()
        )),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read(p.session_dir(&id).join("tasks.json")).unwrap(),
        tasks_before,
        "nothing ran"
    );
}

/// A requirement whose title carries HTML and whose criterion reads as a spreadsheet formula;
/// its one check passes (`total([(2, 3)])` is 6).
const HOSTILE_REQ: &str = "# REQ-003: Totals <script>alert(1)</script> & more\n\n## Acceptance Criteria\n\n- AC-1: =HYPERLINK(\"http://example.invalid\",\"x\") <b>sums</b>: `total([(2, 3)])` returns `6`\n";

/// Every cell of a CSV text, as read.
fn csv_cells(text: &str) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// No cell a spreadsheet would run as a formula.
fn assert_no_formula(what: &str, text: &str) {
    for row in csv_cells(text) {
        for cell in row {
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "{what}: {cell:?}"
            );
        }
    }
}

#[test]
fn issue31_formula_like_scenario_names_are_neutralised_in_every_csv_and_kept_on_reading() {
    let p = Project::fixture("python-spec");
    p.write("REQ-003.md", HOSTILE_REQ);
    // Standard: the analyst writes results.csv and the Markdown reports.
    let out = plan_only(&p, "test the shop", "standard");
    out.assert_code(0);
    let id = out.session_id();
    let at = scenarios(&p, &id)
        .into_iter()
        .find(|(_, row)| row["req_ref"] == "REQ-003:AC-1")
        .map(|(at, _)| at)
        .unwrap();
    let csv_path = p.session_dir(&id).join("scenarios.csv");
    let planned = std::fs::read_to_string(&csv_path).unwrap();
    assert_no_formula("scenarios.csv", &planned);
    assert!(
        scenarios(&p, &id)[&at]["name"].starts_with("'=HYPERLINK(\"http://example.invalid\""),
        "{planned}"
    );

    p.cmd(&["resume", &id, "-y"]).run().assert_code(0);
    // Read back (and rewritten by every layer) the name is the criterion's, with one quote in
    // the file.
    let row = &scenarios(&p, &id)[&at];
    assert_eq!(row["status"], "passed", "{row:?}");
    assert!(row["name"].starts_with("'=HYPERLINK("), "{row:?}");
    let report = read_json(&p.session_dir(&id).join("analysis/report.json"));
    let traced = report["traceability"]["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["scenarios"].as_array().unwrap())
        .find(|s| s["id"] == at.as_str())
        .unwrap()
        .clone();
    let name = traced["name"].as_str().unwrap();
    assert!(
        name.starts_with("=HYPERLINK(\"http://example.invalid\""),
        "{traced}"
    );
    assert_eq!(format!("'{name}"), row["name"]);

    let results = std::fs::read_to_string(p.session_dir(&id).join("analysis/results.csv")).unwrap();
    assert_no_formula("analysis/results.csv", &results);
    let rows = csv_cells(&results);
    let name_at = rows[0].iter().position(|h| h == "name").unwrap();
    assert!(
        rows.iter().any(|r| r[name_at] == format!("'{name}")),
        "{results}"
    );
    let printed = p.cmd(&["report", &id, "--format", "csv"]).run();
    printed.assert_code(0);
    assert_no_formula("report --format csv", &printed.stdout);
    assert!(
        csv_cells(&printed.stdout)
            .iter()
            .any(|r| r[name_at] == format!("'{name}")),
        "{}",
        printed.stdout
    );

    // The Markdown reports show the title's HTML as text.
    for file in ["analysis/traceability.md", "analysis/quality-report.md"] {
        let md = std::fs::read_to_string(p.session_dir(&id).join(file)).unwrap();
        assert!(
            md.contains("Totals &lt;script&gt;alert(1)&lt;/script&gt; &amp; more")
                && md.contains("&lt;b&gt;sums&lt;/b&gt;"),
            "{file}:\n{md}"
        );
        assert!(
            !md.contains("<script>") && !md.contains("<b>"),
            "{file}:\n{md}"
        );
    }
}

#[test]
fn issue31_the_markdown_report_escapes_html_from_requirement_files() {
    let p = Project::fixture("python-spec");
    p.write("REQ-003.md", HOSTILE_REQ);
    let out = plan_only(&p, "test the shop", "targeted");
    out.assert_code(0);
    let id = out.session_id();
    let md = p.cmd(&["report", &id, "--format", "md"]).run();
    md.assert_code(0);
    assert!(
        md.stdout
            .contains("REQ-003: Totals &lt;script&gt;alert(1)&lt;/script&gt; &amp; more")
            && md.stdout.contains("&lt;b&gt;sums&lt;/b&gt;"),
        "{}",
        md.stdout
    );
    assert!(!md.stdout.contains("<script>"), "{}", md.stdout);
}

#[test]
fn issue31_a_requirement_file_that_is_a_symbolic_link_is_refused_naming_it() {
    let p = Project::fixture("python-spec");
    let outside = p.tmp.path().join("elsewhere.md");
    std::fs::write(&outside, "# Not the repository's\n\n- AC-1: secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, p.repo.join("REQ-009.md")).unwrap();
    let out = plan_only(&p, "test the shop", "targeted");
    out.assert_code(2);
    assert!(
        out.stderr.contains(
            "REQ-009.md: is a symbolic link; requirement files are read only as regular files"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("secret") && !out.stdout.contains("secret"));
    assert!(
        !p.sessions.exists() || std::fs::read_dir(&p.sessions).unwrap().next().is_none(),
        "no session made"
    );
}
