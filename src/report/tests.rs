use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::*;
use crate::session::{SessionState, SessionStatus};
use crate::tasks::{Outcome, Task, TaskGraph, TaskStatus};
use crate::util::atomic_write_json;

fn config() -> TeamConfig {
    TeamConfig::builtin().unwrap()
}

fn task(
    id: &str,
    owner: &str,
    layer: Option<&str>,
    round: Option<u32>,
    outcome: Option<Outcome>,
) -> Task {
    let mut meta = Map::new();
    if let Some(r) = round {
        meta.insert("gc_round".into(), json!(r));
    }
    Task {
        status: if outcome.is_some() {
            TaskStatus::Completed
        } else {
            TaskStatus::Pending
        },
        layer: layer.map(str::to_string),
        meta,
        attempts: 1,
        outcome,
        ..Task::new(id, id, owner, vec![])
    }
}

fn done(pass: Option<f64>, cov: Option<f64>, data: Value) -> Option<Outcome> {
    let mut o = Outcome::completed("done");
    o.pass_rate = pass;
    o.coverage = cov;
    if let Value::Object(m) = data {
        o.data = m;
    }
    Some(o)
}

fn state(id: &str, repo: &str, created_at: &str, l1_rounds: u32) -> SessionState {
    SessionState {
        sandbox: Default::default(),
        protections: None,
        agents: Default::default(),
        controls: Default::default(),
        version: 1,
        session_id: id.into(),
        status: SessionStatus::Completed,
        task_description: "synthetic".into(),
        pipeline_mode: "targeted".into(),
        team_name: "testing".into(),
        repo: repo.into(),
        base_commit: None,
        completion_action: crate::session::CompletionAction::AutoArchive,
        gc_rounds: BTreeMap::from([("L1".to_string(), l1_rounds)]),
        max_gc_rounds: 3,
        seed: 1,
        active_workers: vec![],
        roles: vec![],
        spec_file: None,
        roles_dir: None,
        tasks_total: 0,
        warnings: vec![],
        pending_gaps: Vec::new(),
        created_at: created_at.into(),
        updated_at: created_at.into(),
        pid: None,
        beat: 0,
    }
}

fn t(id: &str, status: &str, class: Option<&str>, error: Option<&str>) -> Value {
    json!({"id": id, "file": "test_a.py", "status": status, "duration_s": 0.5,
        "message": if status == "passed" { Value::Null } else { json!(format!("{id} failed")) },
        "classification": class, "criticality": class.map(|_| "high"),
        "evidence": class.map(|_| json!({"location": "calc/a.py:12", "error": error, "excerpt": "1/0", "reason": "the code raised"}))})
}

fn run(
    task_id: &str,
    pass: f64,
    cov: f64,
    cov_file: Option<&str>,
    tests: Vec<Value>,
    flaky: Vec<&str>,
    quarantined: Value,
) -> Value {
    json!({"task_id": task_id, "layer": "L1-unit", "framework": "pytest", "total": tests.len(),
        "passed": tests.iter().filter(|t| t["status"] == "passed").count(), "failed": 0, "errors": 0, "skipped": 0,
        "flaky": flaky, "pass_rate": pass, "coverage": cov, "branch_coverage": null,
        "coverage_scope": ["calc/a.py", "calc/b.py"], "coverage_file": cov_file, "tests": tests,
        "quarantined": quarantined, "repairs": [], "defect_patterns": {}})
}

/// A session with a code defect (3 occurrences), a test defect, an unclassified error, a flaky
/// test, a quarantined test, two GC rounds and a generator contract finding.
fn synthetic(root: &Path, created_at: &str) -> SessionDir {
    let s = SessionDir::create(root, "TST", "synthetic", "2026-12-03").unwrap();
    s.save_state(&state(&s.id, "/repo", created_at, 2)).unwrap();
    let finding = json!({"module": "calc.a", "function": "div", "kind": "exception", "call": "div(1, 0)",
        "expected": "ValueError", "actual": "ZeroDivisionError", "test": "t2"});
    let graph = TaskGraph::new(vec![
        task(
            "STRATEGY-001",
            "strategist",
            None,
            None,
            done(
                None,
                None,
                json!({"priority_files": ["calc/a.py", "calc/b.py"]}),
            ),
        ),
        task(
            "TESTGEN-001",
            "generator",
            Some("L1-unit"),
            None,
            done(None, None, json!({"findings": [finding]})),
        ),
        task(
            "TESTRUN-001",
            "executor",
            Some("L1-unit"),
            None,
            done(Some(0.25), Some(40.0), json!({})),
        ),
        task(
            "TESTGEN-L1-fix-1",
            "generator",
            Some("L1-unit"),
            Some(1),
            done(None, None, json!({"findings": []})),
        ),
        task(
            "TESTRUN-L1-fix-1",
            "executor",
            Some("L1-unit"),
            Some(1),
            done(Some(2.0 / 3.0), Some(50.0), json!({})),
        ),
        task(
            "TESTGEN-L1-fix-2",
            "generator",
            Some("L1-unit"),
            Some(2),
            done(None, None, json!({})),
        ),
        task(
            "TESTRUN-L1-fix-2",
            "executor",
            Some("L1-unit"),
            Some(2),
            done(Some(0.75), Some(60.0), json!({})),
        ),
        task("TESTANA-001", "analyst", None, None, None),
    ]);
    s.save_tasks(&graph).unwrap();
    let res = s.root.join("results");
    let cd = || {
        t(
            "t2",
            "failed",
            Some("code_defect"),
            Some("ZeroDivisionError"),
        )
    };
    let runs = [
        run(
            "TESTRUN-001",
            0.25,
            40.0,
            None,
            vec![
                t("t1", "passed", None, None),
                cd(),
                t("t3", "failed", Some("test_defect"), Some("ImportError")),
                t("t6", "error", None, None),
            ],
            vec![],
            json!([]),
        ),
        run(
            "TESTRUN-L1-fix-1",
            2.0 / 3.0,
            50.0,
            None,
            vec![
                t("t1", "passed", None, None),
                cd(),
                t("t3", "passed", None, None),
                t("t4", "flaky", None, None),
            ],
            vec!["t4"],
            json!([]),
        ),
        run(
            "TESTRUN-L1-fix-2",
            0.75,
            60.0,
            Some("results/coverage-003.json"),
            vec![
                t("t1", "passed", None, None),
                cd(),
                t("t3", "passed", None, None),
                t("t4", "passed", None, None),
            ],
            vec![],
            json!([{"id": "t5", "file": false, "reason": "fails at import: no module named x", "task_id": "TESTRUN-L1-fix-2"}]),
        ),
    ];
    for (i, r) in runs.iter().enumerate() {
        atomic_write_json(&res.join(format!("run-{:03}.json", i + 1)), r).unwrap();
    }
    atomic_write_json(&res.join("coverage-003.json"), &json!({"format": "coveragepy-json", "files": [
        {"path": "calc/a.py", "lines_total": 25, "lines_covered": 20, "line_percent": 80.0, "missing_lines": [12, 13, 14, 15, 20]},
        {"path": "calc/b.py", "lines_total": 10, "lines_covered": 0, "line_percent": 0.0, "missing_lines": [1,2,3,4,5,6,7,8,9,10]}
    ]})).unwrap();
    s
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn figures_come_from_the_session_files() {
    let tmp = tempfile::tempdir().unwrap();
    let s = synthetic(tmp.path(), "2026-12-03T10:00:00.000+00:00");
    let r = build(&s, &config());
    assert!(r.missing.is_empty(), "{:?}", r.missing);
    // Layer figures equal the last run file's figures; history in task order with rounds.
    let last: Value = read_json(&s.root.join("results/run-003.json")).unwrap();
    let l = &r.layers[0];
    assert_eq!(
        (l.layer.as_str(), l.gate.as_str(), l.gc_rounds_used),
        ("L1-unit", "Below", 2)
    );
    assert_eq!(l.final_coverage, last["coverage"].as_f64());
    assert_eq!(l.final_pass_rate, last["pass_rate"].as_f64());
    let hist: Vec<(&str, u32, Option<f64>)> = l
        .history
        .iter()
        .map(|p| (p.task_id.as_str(), p.round, p.coverage))
        .collect();
    assert_eq!(
        hist,
        vec![
            ("TESTRUN-001", 0, Some(40.0)),
            ("TESTRUN-L1-fix-1", 1, Some(50.0)),
            ("TESTRUN-L1-fix-2", 2, Some(60.0))
        ]
    );
    // Defect patterns: 3 × code_defect (HIGH), 1 test_defect, 1 unclassified.
    let p: Vec<(&str, usize, &str)> = r
        .defect_patterns
        .iter()
        .map(|d| (d.kind.as_str(), d.count, d.severity.as_str()))
        .collect();
    assert_eq!(
        p,
        vec![
            ("code_defect:ZeroDivisionError", 3, "HIGH"),
            ("test_defect:ImportError", 1, "LOW"),
            ("unclassified", 1, "LOW")
        ]
    );
    assert_eq!(r.defect_patterns[0].tests, vec!["t2"]);
    assert_eq!(r.defect_patterns[0].files, vec!["test_a.py"]);
    // GC effectiveness: 40 → 60 over 2 rounds = 10/round, not > 10: MEDIUM.
    let g = &r.gc_effectiveness[0];
    assert_eq!(
        (
            g.rounds_used,
            g.coverage_gained,
            g.gain_per_round,
            g.rating.as_str()
        ),
        (2, Some(20.0), Some(10.0), "MEDIUM")
    );
    assert_eq!(g.per_round, vec![Some(10.0), Some(10.0)]);
    // Coverage gaps from coverage-003.json.
    let gaps: Vec<(&str, f64, f64, &str)> = r
        .coverage_gaps
        .iter()
        .map(|g| {
            (
                g.module.as_str(),
                g.line_percent,
                g.gap,
                g.uncovered.as_str(),
            )
        })
        .collect();
    assert_eq!(
        gaps,
        vec![
            ("calc/b.py", 0.0, 80.0, "1-10"),
            ("calc/a.py", 80.0, 0.0, "12-15, 20")
        ]
    );
    // Findings, flaky, quarantined.
    assert_eq!(r.findings.code_defects.len(), 1);
    assert_eq!(
        r.findings.code_defects[0].evidence["location"],
        "calc/a.py:12"
    );
    assert_eq!(r.findings.code_defects[0].round, 2);
    assert_eq!(r.findings.contract_findings.len(), 1);
    assert_eq!(r.findings.contract_findings[0]["task_id"], "TESTGEN-001");
    assert_eq!(
        r.flaky_tests
            .iter()
            .map(|f| f.test.as_str())
            .collect::<Vec<_>>(),
        vec!["t4"]
    );
    assert_eq!(r.quarantined.len(), 1);
    assert!(r.quarantined[0].reason.contains("fails at import"));
    // No mutation analysis: detection's 25 points go to the others in proportion (×100/75):
    // 40×0.75 + 33.3×0.75 + 26.7×(1 − 2/3) = 63.9.
    assert_eq!(
        (r.score.failing_tests, r.score.classified_failing_tests),
        (5, 4)
    );
    assert_eq!((r.score.gc_rounds_used, r.score.gc_budget), (2, 3));
    assert_eq!(r.quality_score, 63.9);
    assert!(!r.score.detection_measured);
    assert_eq!(r.band, "needs improvement");
    // Confidence: scope {a,b}, a exercised; 6 tests, t4 flaky + t5 quarantined; 4/5 diagnosed.
    let c = &r.confidence;
    assert_eq!(
        (c.scenario_coverage, c.test_quality, c.diagnostic_accuracy),
        (0.5, 0.6667, 0.8)
    );
    assert_eq!(
        (c.strategy_effectiveness, c.infrastructure_fitness),
        (0.0, 1.0)
    );
    let md = markdown(&r);
    for needle in [
        "63.9 / 100",
        "Defect detection: not measured",
        "| L1-unit | 80.0% | 60.0% | 75.0% | Below | 2 of 3 |",
        "12-15, 20",
        "code_defect:ZeroDivisionError | 3 | HIGH",
        "## Flaky Tests\n\n- t4",
        "t5 (TESTRUN-L1-fix-2): fails at import",
        "| 40% |",
        "| 33% |",
        "| 27% |",
        "div(1, 0)",
    ] {
        assert!(md.contains(needle), "{needle} not in\n{md}");
    }
    assert!(!md.contains("## Missing"));
}

#[test]
fn score_formula_on_known_numbers() {
    let l = |p: f64, c: Option<f64>, t: f64| LayerFinal {
        pass_rate: p,
        coverage: c,
        target: Some(t),
    };
    let m = Detection::Mutation;
    // Everything perfect, every seeded bug noticed: 100.
    assert_eq!(
        quality_score(&[l(1.0, Some(90.0), 80.0)], m(1.0), 0, 3).0,
        100.0
    );
    // cov mean(0.5, 1.0)=0.75, eff mean(0.5,1)=0.75, det 0.5, gc 1 − 3/6: 22.5+18.75+12.5+10 = 63.75 → 63.8.
    let (s, terms) = quality_score(
        &[l(0.5, Some(40.0), 80.0), l(1.0, Some(60.0), 60.0)],
        m(0.5),
        3,
        3,
    );
    assert_eq!(terms, [0.75, 0.75, 0.5, 0.5]);
    assert_eq!(s, 63.8);
    // Unknown coverage uses the pass rate: 30×0.4 + 25×0.4 + 25×1 + 20×1 = 67.
    let (s, terms) = quality_score(&[l(0.4, None, 80.0)], m(1.0), 0, 3);
    assert!(close(terms[0], 0.4));
    assert_eq!(s, 67.0);
    assert_eq!(quality_score(&[], m(1.0), 0, 3).0, 0.0);
    // A suite that passes and covers everything but notices no seeded bug is not good.
    let (s, _) = quality_score(&[l(1.0, Some(90.0), 80.0)], m(0.0), 0, 3);
    assert_eq!((s, band_of(s, m(0.0))), (75.0, "needs improvement"));
    // Unmeasured detection: the other weights scale to 100, and 100 is only "unverified".
    let (s, _) = quality_score(&[l(1.0, Some(90.0), 80.0)], Detection::Unmeasured, 0, 3);
    assert_eq!(
        (s, band_of(s, Detection::Unmeasured)),
        (100.0, "unverified")
    );
    assert_eq!(band_of(50.0, Detection::Unmeasured), "concerning");
    assert_eq!(
        (band(80.0), band(79.9), band(60.0), band(59.9)),
        (
            "good",
            "needs improvement",
            "needs improvement",
            "concerning"
        )
    );
    assert_eq!(
        (
            pattern_severity(3),
            pattern_severity(2),
            pattern_severity(1)
        ),
        ("HIGH", "MEDIUM", "LOW")
    );
    assert_eq!(
        (
            gc_rating(Some(10.1)),
            gc_rating(Some(5.1)),
            gc_rating(Some(5.0)),
            gc_rating(None)
        ),
        ("HIGH", "MEDIUM", "LOW", "n/a")
    );
    assert_eq!(
        (round_of("TESTRUN-001"), round_of("TESTRUN-L1-fix-2")),
        (0, 2)
    );
    assert_eq!(line_ranges(&[20, 12, 13, 14, 15]), "12-15, 20");
}

#[test]
fn same_session_same_report() {
    let tmp = tempfile::tempdir().unwrap();
    let s = synthetic(tmp.path(), "2026-12-03T10:00:00.000+00:00");
    let (a, b) = (build(&s, &config()), build(&s, &config()));
    assert_eq!(a.quality_score, b.quality_score);
    assert_eq!(a.to_json(), b.to_json());
    assert_eq!(markdown(&a), markdown(&b));
}

#[test]
fn exports_validate_and_match_the_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let s = synthetic(tmp.path(), "2026-12-03T10:00:00.000+00:00");
    let r = build(&s, &config());
    let files = write(&s, &r).unwrap();
    assert_eq!(files, ARTIFACTS.to_vec());
    // report.json validates against the schema written next to it; a broken one does not.
    let schema: Value = read_json(&s.root.join("analysis/report.schema.json")).unwrap();
    let mut doc: Value = read_json(&s.root.join("analysis/report.json")).unwrap();
    assert_eq!(validate(&schema, &doc), Vec::<String>::new());
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["quality_score"], 63.9);
    doc.as_object_mut().unwrap().remove("confidence");
    doc["band"] = json!("excellent");
    doc["layers"][0]["final_coverage"] = json!("60");
    let errs = validate(&schema, &doc);
    assert_eq!(errs.len(), 3, "{errs:?}");
    // results.csv: one row per test of every run, with its round.
    let mut rd = csv::Reader::from_path(s.root.join("analysis/results.csv")).unwrap();
    let headers: Vec<String> = rd.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(headers, CSV_HEADER);
    let rows: Vec<CsvRow> = rd.deserialize().map(|r| r.unwrap()).collect();
    let mut expected = 0;
    for n in 1..=3 {
        let v: Value = read_json(&s.root.join(format!("results/run-{n:03}.json"))).unwrap();
        expected += v["tests"].as_array().unwrap().len();
    }
    assert_eq!(rows.len(), expected);
    assert_eq!(rows.iter().filter(|r| r.round == 2).count(), 4);
    assert_eq!(
        rows.iter()
            .filter(|r| r.classification == "code_defect")
            .count(),
        3
    );
    assert_eq!(rows[1].status, "failed");
    assert_eq!(rows[1].duration, Some(0.5));
    // issues.jsonl: one line per code_defect test.
    let issues = std::fs::read_to_string(s.root.join("analysis/issues.jsonl")).unwrap();
    let lines: Vec<Value> = issues
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), r.findings.code_defects.len());
    assert_eq!(lines.len(), 1);
    for key in [
        "title",
        "test",
        "file",
        "location",
        "evidence",
        "layer",
        "criticality",
    ] {
        assert!(lines[0].get(key).is_some(), "{key}");
    }
    assert_eq!(lines[0]["location"], "calc/a.py:12");
    // render serves the written files.
    let md = std::fs::read_to_string(s.root.join("analysis/quality-report.md")).unwrap();
    assert_eq!(render(&s, &config(), "md").unwrap(), md);
    assert!(render(&s, &config(), "json")
        .unwrap()
        .contains("\"schema_version\": 1"));
    let html = std::fs::read_to_string(s.root.join("analysis/report.html")).unwrap();
    assert_eq!(render(&s, &config(), "html").unwrap(), html);
    assert!(html.contains("<svg id=\"coverage-chart\""), "{html}");
    assert!(render(&s, &config(), "pdf").is_err());
}

#[test]
fn render_builds_fresh_without_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let s = synthetic(tmp.path(), "2026-12-03T10:00:00.000+00:00");
    let csv_text = render(&s, &config(), "csv").unwrap();
    assert_eq!(csv_text.lines().count(), 13, "header + 12 tests");
    let json_text = render(&s, &config(), "json").unwrap();
    let doc: Value = serde_json::from_str(&json_text).unwrap();
    assert_eq!(
        validate(&serde_json::from_str(REPORT_SCHEMA).unwrap(), &doc),
        Vec::<String>::new()
    );
    assert!(!s.root.join("analysis/report.json").exists());
}

#[test]
fn session_without_results_gets_a_missing_section() {
    let tmp = tempfile::tempdir().unwrap();
    let s = SessionDir::create(tmp.path(), "TST", "empty", "2026-12-03").unwrap();
    s.save_state(&state(&s.id, "/repo", "2026-12-03T10:00:00.000+00:00", 0))
        .unwrap();
    s.save_tasks(&TaskGraph::new(vec![task(
        "TESTRUN-001",
        "executor",
        Some("L1-unit"),
        None,
        None,
    )]))
    .unwrap();
    let r = build(&s, &config());
    assert_eq!(r.quality_score, 0.0);
    assert_eq!(r.layers[0].gate, "Below");
    let md = markdown(&r);
    assert!(md.contains("## Missing"), "{md}");
    assert!(md.contains("no run records"), "{md}");
    assert!(md.contains("TESTRUN-001 (pending): no run record"), "{md}");
    write(&s, &r).unwrap();
    let doc: Value = read_json(&s.root.join("analysis/report.json")).unwrap();
    assert_eq!(
        validate(&serde_json::from_str(REPORT_SCHEMA).unwrap(), &doc),
        Vec::<String>::new()
    );
    assert_eq!(
        std::fs::read_to_string(s.root.join("analysis/issues.jsonl")).unwrap(),
        ""
    );
    let mut rd = csv::Reader::from_path(s.root.join("analysis/results.csv")).unwrap();
    assert_eq!(rd.headers().unwrap().len(), CSV_HEADER.len());
    assert_eq!(rd.records().count(), 0);
}

#[test]
fn trends_compare_with_earlier_sessions_of_the_same_repo() {
    let tmp = tempfile::tempdir().unwrap();
    // An earlier session of the same repo: coverage 50 on L1, saved score 60, 1 defect occurrence.
    let old = SessionDir::create(tmp.path(), "TST", "old", "2026-12-01").unwrap();
    old.save_state(&state(&old.id, "/repo", "2026-12-01T10:00:00.000+00:00", 0))
        .unwrap();
    old.save_tasks(&TaskGraph::new(vec![task(
        "TESTRUN-001",
        "executor",
        Some("L1-unit"),
        None,
        done(Some(0.5), Some(50.0), json!({})),
    )]))
    .unwrap();
    atomic_write_json(
        &old.root.join("results/run-001.json"),
        &run(
            "TESTRUN-001",
            0.5,
            50.0,
            None,
            vec![
                t("t1", "passed", None, None),
                t("t2", "failed", Some("code_defect"), Some("E")),
            ],
            vec![],
            json!([]),
        ),
    )
    .unwrap();
    atomic_write_json(
        &old.root.join("analysis/report.json"),
        &json!({"quality_score": 60.0}),
    )
    .unwrap();
    // Another repo and a later session: ignored.
    let other = SessionDir::create(tmp.path(), "TST", "other", "2026-12-01").unwrap();
    other
        .save_state(&state(
            &other.id,
            "/elsewhere",
            "2026-12-01T09:00:00.000+00:00",
            0,
        ))
        .unwrap();
    let later = SessionDir::create(tmp.path(), "TST", "later", "2026-12-09").unwrap();
    later
        .save_state(&state(
            &later.id,
            "/repo",
            "2026-12-09T09:00:00.000+00:00",
            0,
        ))
        .unwrap();
    let s = synthetic(tmp.path(), "2026-12-03T10:00:00.000+00:00");
    let r = build(&s, &config());
    assert_eq!(r.trends.previous.len(), 1, "{:?}", r.trends.previous);
    assert_eq!(r.trends.previous[0].session_id, old.id);
    assert_eq!(r.trends.previous[0].quality_score, Some(60.0));
    let cov = &r.trends.coverage[0];
    assert_eq!(
        (cov.previous, cov.current, cov.direction.as_str()),
        (50.0, 60.0, "improving")
    );
    let score = r.trends.score.as_ref().unwrap();
    assert_eq!((score.delta, score.direction.as_str()), (3.9, "improving"));
    // 1 → 5 failing occurrences: declining.
    assert_eq!(
        r.trends.defect_patterns.as_ref().unwrap().direction,
        "declining"
    );
    assert!(markdown(&r).contains("L1-unit: 50.0 → 60.0 (+10.0) improving"));
    assert_eq!(
        (
            direction(2.0, 2.0, true),
            direction(-2.1, 2.0, true),
            direction(3.1, 3.0, true)
        ),
        ("stable", "declining", "improving")
    );
}

#[test]
fn checked_in_example_sessions_report_their_own_figures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
    let done = SessionDir::open(root.join("TST-test-the-new-tokenizer-2026-12-03")).unwrap();
    let r = build(&done, &config());
    let run: Value = read_json(&done.root.join("results/run-001.json")).unwrap();
    assert_eq!(r.layers[0].final_coverage, run["coverage"].as_f64());
    assert_eq!(r.layers[0].final_pass_rate, run["pass_rate"].as_f64());
    assert_eq!(r.rows.len(), run["tests"].as_array().unwrap().len());
    let detection = match &r.mutation {
        Some(m) => Detection::Mutation(m.combined.score / 100.0),
        None => Detection::Unmeasured,
    };
    assert_eq!(r.band, band_of(r.quality_score, detection));
    // The paused example has no results: a report of what exists, with its Missing section.
    let paused =
        SessionDir::open(root.join("TST-test-the-tokenizer-edge-cases-2026-12-03")).unwrap();
    let md = markdown(&build(&paused, &config()));
    assert!(md.contains("## Missing"), "{md}");
}

/// Each section on its own, on a small constructed input.
mod agreement;
mod example_sessions;
mod html_sections;
mod sections;
mod traceability;
