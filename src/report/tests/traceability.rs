//! The traceability section: a session planned with scenarios, two requirement files with five
//! criteria in a spec folder, scenarios in every state; and the same session without its plan.

use std::path::PathBuf;

use super::*;
use crate::report::traceability::number_in;
use crate::scenario::plan::{write_csv, Priority, Scenario};

fn scenario(id: &str, name: &str, layer: &str, req_ref: &str, status: &str) -> Scenario {
    let slug = name.replace(' ', "_");
    let dir = crate::scenario::build::layer_dir(layer);
    Scenario {
        id: id.into(),
        name: name.into(),
        layer: layer.into(),
        priority: Priority::High,
        category: "business_rule".into(),
        target_file: "src/shop.py".into(),
        test_file: format!(
            "tests/{dir}/test_{}_{slug}.py",
            id.to_lowercase().replace('-', "_")
        ),
        req_ref: req_ref.into(),
        status: status.into(),
        ..Scenario::default()
    }
}

fn test(id: &str, file: &str, status: &str, class: Option<&str>) -> Value {
    json!({"id": id, "file": file, "status": status, "duration_s": 0.1,
        "classification": class,
        "evidence": class.map(|_| json!({"location": "src/shop.py:3", "error": "AssertionError"}))})
}

fn write_file(path: PathBuf, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The repository (`<root>/repo`: REQ-001 with three criteria and REQ-002 with two in `specs/`,
/// and a REQ file outside it) and a session of it whose session.json names `specs` as its spec
/// folder, with scenarios.csv and two L1 runs.
fn traced_session(root: &Path) -> SessionDir {
    let repo = root.join("repo");
    write_file(
        repo.join("specs/REQ-001-discounts.md"),
        "# REQ-001: Discounts\n\n## Acceptance Criteria\n\
         - AC-1: `apply_discount(100, 10)` returns `90`\n\
         - AC-2: A discount above 100% is refused\n\
         - AC-3: The discount applies | only when the cart is not empty\n",
    );
    write_file(
        repo.join("specs/REQ-002-stock.md"),
        "# REQ-002: Stock\n\n- AC-1: Stock never goes negative\n- AC-2: Taking the last unit empties the shelf\n",
    );
    write_file(
        repo.join("old/REQ-009.md"),
        "# REQ-009: Outside the spec folder\n\n- AC-1: never read\n",
    );

    let s = SessionDir::create(root, "TST", "trace", "2026-12-03").unwrap();
    s.save_state(&state(
        &s.id,
        repo.to_str().unwrap(),
        "2026-12-03T10:00:00.000+00:00",
        1,
    ))
    .unwrap();
    // The spec folder, as a session.json written with `controls.spec_dir` holds it.
    let mut raw: Value = read_json(&s.session_json()).unwrap();
    raw["controls"]["spec_dir"] = json!("specs");
    atomic_write_json(&s.session_json(), &raw).unwrap();

    s.save_tasks(&TaskGraph::new(vec![
        task(
            "TESTRUN-001",
            "executor",
            Some("L1-unit"),
            None,
            done(Some(0.25), Some(50.0), json!({})),
        ),
        task(
            "TESTRUN-L1-fix-1",
            "executor",
            Some("L1-unit"),
            Some(1),
            done(Some(0.75), Some(60.0), json!({})),
        ),
    ]))
    .unwrap();

    let mut at1 = scenario("AT-001", "ten percent off", "L1", "REQ-001:AC-1", "passed");
    at1.red_result = "expected_fail".into();
    let mut at2 = scenario("AT-002", "refuse over 100", "L1", "REQ-001:AC-2", "failed");
    at2.priority = Priority::Critical;
    at2.classification = "code_defect".into();
    at2.red_result = "unexpected_fail".into();
    at2.findings = "apply_discount accepts 150%".into();
    let mut at3 = scenario("AT-003", "empty cart", "L2", "REQ-001:AC-3", "failed");
    at3.classification = "test_defect".into();
    let at4 = scenario(
        "AT-004",
        "stock never negative",
        "L1",
        "REQ-002:AC-1",
        "written",
    );
    let mut at5 = scenario("AT-005", "mean of empty", "L1", "gap:src/shop.py:mean", "");
    at5.test_file = String::new();
    at5.priority = Priority::Low;
    let mut at6 = scenario("AT-006", "big cart", "L3", "REQ-001:AC-1", "blocked");
    at6.error = "no browser".into();
    let at7 = scenario(
        "AT-007",
        "negative total",
        "L1",
        "defect:test_calc::test_total",
        "pending",
    );
    write_csv(
        &s.root.join("scenarios.csv"),
        &[at1, at2, at3, at4, at5, at6, at7],
    )
    .unwrap();

    let run = |task_id: &str, tests: Vec<Value>| {
        json!({"task_id": task_id, "layer": "L1-unit", "framework": "pytest", "total": tests.len(),
            "passed": tests.iter().filter(|t| t["status"] == "passed").count(),
            "failed": tests.iter().filter(|t| t["status"] == "failed").count(),
            "errors": 0, "skipped": 0, "flaky": [], "pass_rate": 0.5, "coverage": 50.0,
            "coverage_file": null, "tests": tests, "quarantined": [], "repairs": []})
    };
    let at1_test = |status, class| {
        test(
            "test_at_001_ten_percent_off::test_ninety",
            "test_at_001_ten_percent_off.py",
            status,
            class,
        )
    };
    let at2_test = || {
        test(
            "test_at_002_refuse_over_100::test_refused",
            "test_at_002_refuse_over_100.py",
            "failed",
            Some("code_defect"),
        )
    };
    let other = || test("test_other::test_x", "test_other.py", "passed", None);
    let res = s.root.join("results");
    atomic_write_json(
        &res.join("run-001.json"),
        &run(
            "TESTRUN-001",
            vec![at1_test("failed", Some("test_defect")), at2_test(), other()],
        ),
    )
    .unwrap();
    atomic_write_json(
        &res.join("run-002.json"),
        &run(
            "TESTRUN-L1-fix-1",
            vec![
                at1_test("passed", None),
                at2_test(),
                // Its plan names no test file: its number in the test's name finds it.
                test(
                    "test_gaps::test_at_005_mean_empty",
                    "test_gaps.py",
                    "passed",
                    None,
                ),
                other(),
            ],
        ),
    )
    .unwrap();
    s
}

#[test]
fn traceability_matrix_orders_criteria_with_no_passing_test_first() {
    let tmp = tempfile::tempdir().unwrap();
    let s = traced_session(tmp.path());
    let r = build(&s, &config());
    assert!(r.missing.is_empty(), "{:?}", r.missing);
    let t = r.traceability.as_ref().expect("a traceability section");
    assert_eq!(t.criteria_from, CriteriaFrom::Requirements);
    assert!(t.notes.is_empty(), "{:?}", t.notes);
    assert_eq!(
        t.summary,
        TraceSummary {
            requirements: 2,
            criteria: 5,
            covered: 1,
            violated: 1,
            failing: 1,
            not_run: 1,
            no_scenario: 1,
        }
    );
    let order: Vec<(&str, &str, Verdict)> = t
        .criteria
        .iter()
        .map(|c| (c.requirement.as_str(), c.criterion.as_str(), c.verdict))
        .collect();
    assert_eq!(
        order,
        vec![
            ("REQ-001", "AC-2", Verdict::Violated),
            ("REQ-001", "AC-3", Verdict::Failing),
            ("REQ-002", "AC-2", Verdict::NoScenario),
            ("REQ-002", "AC-1", Verdict::NotRun),
            ("REQ-001", "AC-1", Verdict::Covered),
        ]
    );
    // The violated criterion: its title and text from the file, its scenario's last run.
    let v = &t.criteria[0];
    assert_eq!(v.requirement_title.as_deref(), Some("Discounts"));
    assert_eq!(v.text.as_deref(), Some("A discount above 100% is refused"));
    let at2 = &v.scenarios[0];
    assert_eq!(
        (
            at2.id.as_str(),
            at2.status,
            at2.classification.as_deref(),
            at2.status_from.as_deref(),
            at2.priority
        ),
        (
            "AT-002",
            ScenarioStatus::Failed,
            Some("code_defect"),
            Some("results/run-002.json"),
            Priority::Critical
        )
    );
    assert_eq!(at2.red_result.as_deref(), Some("unexpected_fail"));
    // Without a run record, the lifecycle columns of scenarios.csv.
    let at3 = &t.criteria[1].scenarios[0];
    assert_eq!(
        (
            at3.status,
            at3.classification.as_deref(),
            at3.status_from.as_deref()
        ),
        (
            ScenarioStatus::Failed,
            Some("test_defect"),
            Some("scenarios.csv")
        )
    );
    assert!(t.criteria[2].scenarios.is_empty());
    assert_eq!(t.criteria[3].scenarios[0].note.as_deref(), Some("written"));
    // Covered: AT-001 failed in run-001 and passed in run-002, the last; AT-006 was blocked.
    let covered: Vec<(&str, ScenarioStatus, Option<&str>, Option<&str>)> = t.criteria[4]
        .scenarios
        .iter()
        .map(|s| {
            (
                s.id.as_str(),
                s.status,
                s.status_from.as_deref(),
                s.note.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        covered,
        vec![
            (
                "AT-001",
                ScenarioStatus::Passed,
                Some("results/run-002.json"),
                None
            ),
            (
                "AT-006",
                ScenarioStatus::NotRun,
                Some("scenarios.csv"),
                Some("blocked: no browser")
            ),
        ]
    );
    // The other routes, by reference; AT-005 found by the number in its test's name.
    let other: Vec<(&str, &str, ScenarioStatus)> = t
        .other_scenarios
        .iter()
        .map(|s| (s.req_ref.as_str(), s.id.as_str(), s.status))
        .collect();
    assert_eq!(
        other,
        vec![
            (
                "defect:test_calc::test_total",
                "AT-007",
                ScenarioStatus::NotRun
            ),
            ("gap:src/shop.py:mean", "AT-005", ScenarioStatus::Passed),
        ]
    );
    assert_eq!(
        r.outcome_data()["traceability"]["violated"],
        json!(1),
        "the analyst's outcome carries the summary"
    );
}

#[test]
fn traceability_markdown_table_and_its_own_file() {
    let tmp = tempfile::tempdir().unwrap();
    let s = traced_session(tmp.path());
    let r = build(&s, &config());
    let md = markdown(&r);
    let section = md
        .find("## Requirements Traceability")
        .expect("the section in quality-report.md");
    assert!(section < md.find("## Coverage by Layer").unwrap());
    let table: Vec<&str> = md[section..]
        .lines()
        .filter(|l| l.starts_with("| REQ-"))
        .collect();
    assert_eq!(
        table,
        vec![
            "| REQ-001: Discounts | AC-2: A discount above 100% is refused | violated | AT-002 refuse over 100 | L1 | critical | `tests/L1-unit/test_at_002_refuse_over_100.py` | failed (code_defect) |",
            "| REQ-001: Discounts | AC-3: The discount applies \\| only when the cart is not empty | failing | AT-003 empty cart | L2 | high | `tests/L2-integration/test_at_003_empty_cart.py` | failed (test_defect) |",
            "| REQ-002: Stock | AC-2: Taking the last unit empties the shelf | no scenario | - | - | - | - | - |",
            "| REQ-002: Stock | AC-1: Stock never goes negative | not run | AT-004 stock never negative | L1 | high | `tests/L1-unit/test_at_004_stock_never_negative.py` | not run (written) |",
            "| REQ-001: Discounts | AC-1: `apply_discount(100, 10)` returns `90` | covered | AT-001 ten percent off | L1 | high | `tests/L1-unit/test_at_001_ten_percent_off.py` | passed |",
            "| REQ-001: Discounts | AC-1: `apply_discount(100, 10)` returns `90` | covered | AT-006 big cart | L3 | high | `tests/L3-e2e/test_at_006_big_cart.py` | not run (blocked: no browser) |",
        ]
    );
    for needle in [
        "5 criteria of 2 requirement(s), from the requirement files",
        "Verdicts: 1 covered, 1 violated, 1 failing, 1 not run, 1 with no scenario.",
        "### Scenarios of Other Routes",
        "| gap:src/shop.py:mean | AT-005 mean of empty | L1 | low | - | passed |",
        "| defect:test_calc::test_total | AT-007 negative total | L1 | high | `tests/L1-unit/test_at_007_negative_total.py` | not run (pending) |",
    ] {
        assert!(md.contains(needle), "{needle} not in\n{md}");
    }
    // analysis/traceability.md: the same section on its own, written with the report.
    let files = write(&s, &r).unwrap();
    assert_eq!(files.last().map(String::as_str), Some(TRACEABILITY_FILE));
    let own = std::fs::read_to_string(s.root.join(TRACEABILITY_FILE)).unwrap();
    assert!(own.starts_with(&format!("# Requirements Traceability — {}\n\n", s.id)));
    let body = &md[section + "## Requirements Traceability\n\n".len()..];
    let own_body = own.split_once("\n\n").unwrap().1;
    assert!(own_body.ends_with("| passed |\n"), "{own}");
    assert!(body.starts_with(own_body), "{own_body}\n---\n{body}");
}

#[test]
fn traceability_json_validates_against_the_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let s = traced_session(tmp.path());
    let r = build(&s, &config());
    write(&s, &r).unwrap();
    let schema: Value = read_json(&s.root.join("analysis/report.schema.json")).unwrap();
    let mut doc: Value = read_json(&s.root.join("analysis/report.json")).unwrap();
    assert_eq!(validate(&schema, &doc), Vec::<String>::new());
    assert_eq!(doc["traceability"]["criteria"][0]["verdict"], "violated");
    assert_eq!(
        doc["traceability"]["criteria"][2]["scenarios"],
        json!([]),
        "no scenario"
    );
    doc["traceability"]["criteria"][0]["verdict"] = json!("fine");
    doc["traceability"]["other_scenarios"][0]
        .as_object_mut()
        .unwrap()
        .remove("status");
    assert_eq!(validate(&schema, &doc).len(), 2);
}

#[test]
fn results_csv_carries_each_tests_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let s = traced_session(tmp.path());
    write(&s, &build(&s, &config())).unwrap();
    let mut rd = csv::Reader::from_path(s.root.join("analysis/results.csv")).unwrap();
    let headers: Vec<String> = rd.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(headers, CSV_HEADER);
    assert_eq!(
        &headers[..8],
        [
            "id",
            "layer",
            "file",
            "status",
            "classification",
            "criticality",
            "duration",
            "round"
        ]
    );
    let rows: Vec<CsvRow> = rd.deserialize().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 7);
    let at2 = rows
        .iter()
        .find(|r| r.id == "test_at_002_refuse_over_100::test_refused")
        .unwrap();
    assert_eq!(
        (
            at2.name.as_str(),
            at2.priority.as_str(),
            at2.category.as_str(),
            at2.target_file.as_str(),
            at2.red_result.as_str(),
            at2.findings.as_str()
        ),
        (
            "refuse over 100",
            "critical",
            "business_rule",
            "src/shop.py",
            "unexpected_fail",
            "apply_discount accepts 150%"
        )
    );
    let by_name = rows
        .iter()
        .find(|r| r.id == "test_gaps::test_at_005_mean_empty")
        .unwrap();
    assert_eq!(
        (by_name.name.as_str(), by_name.priority.as_str()),
        ("mean of empty", "low")
    );
    for other in rows.iter().filter(|r| r.id == "test_other::test_x") {
        assert_eq!(
            [
                &other.name,
                &other.priority,
                &other.category,
                &other.target_file,
                &other.red_result,
                &other.findings
            ],
            [""; 6]
        );
    }
}

#[test]
fn traceability_falls_back_to_req_ref_when_the_requirement_files_cannot_be_read() {
    let tmp = tempfile::tempdir().unwrap();
    let s = traced_session(tmp.path());
    std::fs::remove_dir_all(tmp.path().join("repo/specs")).unwrap();
    let r = build(&s, &config());
    let t = r.traceability.as_ref().unwrap();
    assert_eq!(t.criteria_from, CriteriaFrom::Scenarios);
    assert_eq!(t.notes.len(), 1);
    assert!(
        t.notes[0].starts_with("the requirement files cannot be used (specs:0: cannot read"),
        "{:?}",
        t.notes
    );
    let order: Vec<(&str, &str, Verdict, Option<&str>)> = t
        .criteria
        .iter()
        .map(|c| {
            (
                c.requirement.as_str(),
                c.criterion.as_str(),
                c.verdict,
                c.text.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        order,
        vec![
            ("REQ-001", "AC-2", Verdict::Violated, None),
            ("REQ-001", "AC-3", Verdict::Failing, None),
            ("REQ-002", "AC-1", Verdict::NotRun, None),
            ("REQ-001", "AC-1", Verdict::Covered, None),
        ]
    );
    assert_eq!((t.summary.requirements, t.summary.no_scenario), (2, 0));
    let md = markdown(&r);
    assert!(
        md.contains("| REQ-001 | AC-2 | violated | AT-002 refuse over 100 |"),
        "{md}"
    );
    assert!(md.contains("from the scenarios' req_ref"), "{md}");
}

#[test]
fn a_session_without_scenarios_has_no_traceability_and_nothing_else_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let s = traced_session(tmp.path());
    let with = build(&s, &config());
    write(&s, &with).unwrap();
    assert!(s.root.join(TRACEABILITY_FILE).is_file());

    std::fs::remove_file(s.root.join("scenarios.csv")).unwrap();
    let without = build(&s, &config());
    assert!(without.traceability.is_none());
    assert!(without.missing.is_empty(), "{:?}", without.missing);
    // report.json: the same but for the key.
    let mut json_with = with.to_json();
    json_with.as_object_mut().unwrap().remove("traceability");
    let json_without = without.to_json();
    assert!(json_without.get("traceability").is_none());
    assert_eq!(json_with, json_without);
    assert!(without.outcome_data().get("traceability").is_none());
    // quality-report.md: the same but for the section.
    let (md_with, md_without) = (markdown(&with), markdown(&without));
    let start = md_with.find("## Requirements Traceability").unwrap();
    let end = md_with.find("## Coverage by Layer").unwrap();
    assert_eq!(
        format!("{}{}", &md_with[..start], &md_with[end..]),
        md_without
    );
    assert!(!md_without.contains("Traceability"));
    // results.csv: the same rows, the scenario columns empty.
    let blank = |r: &CsvRow| CsvRow {
        name: String::new(),
        priority: String::new(),
        category: String::new(),
        target_file: String::new(),
        red_result: String::new(),
        findings: String::new(),
        ..r.clone()
    };
    assert_eq!(
        with.rows.iter().map(blank).collect::<Vec<_>>(),
        without.rows
    );
    // The files: the six of every report, and a stale traceability.md removed.
    let files = write(&s, &without).unwrap();
    assert_eq!(files, ARTIFACTS.to_vec());
    assert!(!s.root.join(TRACEABILITY_FILE).exists());
    let doc: Value = read_json(&s.root.join("analysis/report.json")).unwrap();
    assert_eq!(
        validate(&serde_json::from_str(REPORT_SCHEMA).unwrap(), &doc),
        Vec::<String>::new()
    );
}

#[test]
fn a_scenario_number_in_a_test_name_or_file() {
    assert_eq!(
        number_in("test_at_001_ten_percent_off::test_ninety"),
        Some(1)
    );
    assert_eq!(number_in("AT-12 refuses a discount"), Some(12));
    assert_eq!(number_in("tests/L1-unit/at-004-stock.test.js"), Some(4));
    assert_eq!(number_in("test_format_2"), None);
    assert_eq!(number_in("test_that_3"), None);
    assert_eq!(number_in("test_at_x"), None);
}

#[test]
fn an_unreadable_plan_is_a_missing_line() {
    let tmp = tempfile::tempdir().unwrap();
    let s = traced_session(tmp.path());
    std::fs::write(
        s.root.join("scenarios.csv"),
        "id,name,layer,priority\nAT-001,x,L1,urgent\n",
    )
    .unwrap();
    let r = build(&s, &config());
    assert!(r.traceability.is_none());
    assert_eq!(r.missing.len(), 1, "{:?}", r.missing);
    assert!(
        r.missing[0]
            .starts_with("scenarios.csv cannot be read, so there is no traceability section: "),
        "{:?}",
        r.missing
    );
    assert!(r.missing[0].contains("unknown priority 'urgent'"));
}
