//! Each section on its own, on a small input built here rather than a whole session.

use std::collections::BTreeSet;

use super::*;
use crate::report::findings::{findings, FailureCounts, FindingsSection};
use crate::report::gaps::{coverage_gaps, Gaps};
use crate::report::layers::layers;
use crate::report::load::{load, Run};
use crate::report::recommendations::recommendations;
use crate::report::roles::added_roles;
use crate::report::score::{confidence, score};
use crate::report::trends::{trends, Current};

/// A run record of `layer` for `task_id`, as load() would have read it from `file`.
fn record(file: &str, task_id: &str, layer: &str, round: u32, v: Value) -> Run {
    Run {
        file: file.into(),
        task_id: task_id.into(),
        layer: layer.into(),
        round,
        record: serde_json::from_value(v).expect("a run record"),
    }
}

fn layer_report(name: &str, gate: &str, pass: Option<f64>, cov: Option<f64>) -> LayerReport {
    LayerReport {
        layer: name.into(),
        target: Some(80.0),
        gate: gate.into(),
        not_applicable: (gate == "NotApplicable").then(|| "nothing to test".into()),
        loop_stopped: None,
        final_pass_rate: pass,
        final_coverage: cov,
        gc_rounds_used: 0,
        history: Vec::new(),
    }
}

fn no_findings() -> FindingsSection {
    FindingsSection {
        defect_patterns: Vec::new(),
        failures: FailureCounts::default(),
        findings: Findings::default(),
        flaky_tests: Vec::new(),
        quarantined: Vec::new(),
        blocked: Vec::new(),
        test_ids: BTreeSet::new(),
        rows: Vec::new(),
    }
}

#[test]
fn load_reads_runs_in_order_and_lists_what_it_could_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let s = synthetic(tmp.path(), "2026-12-03T10:00:00.000+00:00");
    std::fs::write(s.root.join("results/run-004.json"), "{").unwrap();
    let loaded = load(&s);
    assert!(loaded.state.is_some());
    let runs: Vec<(&str, &str, u32)> = loaded
        .runs
        .iter()
        .map(|r| (r.file.as_str(), r.layer.as_str(), r.round))
        .collect();
    assert_eq!(
        runs,
        vec![
            ("results/run-001.json", "L1-unit", 0),
            ("results/run-002.json", "L1-unit", 1),
            ("results/run-003.json", "L1-unit", 2)
        ]
    );
    assert_eq!(loaded.missing.len(), 1, "{:?}", loaded.missing);
    assert!(loaded.missing[0].starts_with("results/run-004.json is unreadable"));
    // Nothing at all: both files and the runs are missing, nothing fails.
    let bare = SessionDir::create(tmp.path(), "TST", "bare", "2026-12-03").unwrap();
    let loaded = load(&bare);
    assert!(loaded.state.is_none() && loaded.runs.is_empty());
    assert!(loaded.missing[0].starts_with("session.json"));
    assert!(loaded.missing.last().unwrap().contains("no run records"));
}

#[test]
fn layers_take_the_last_run_and_keep_unknown_and_not_applicable_layers() {
    let mut na = task(
        "TESTRUN-002",
        "executor",
        Some("L2-integration"),
        None,
        None,
    );
    na.status = TaskStatus::NotApplicable;
    na.reason = Some("nothing to integrate".into());
    let graph = TaskGraph::new(vec![
        task(
            "TESTRUN-001",
            "executor",
            Some("L1-unit"),
            None,
            done(Some(0.5), Some(40.0), json!({})),
        ),
        task(
            "TESTRUN-L1-fix-1",
            "executor",
            Some("L1-unit"),
            Some(1),
            None,
        ),
        na,
    ]);
    let runs = [
        record(
            "results/run-001.json",
            "TESTRUN-001",
            "L1-unit",
            0,
            run("TESTRUN-001", 0.96, 85.0, None, vec![], vec![], json!([])),
        ),
        // A run whose task is not in tasks.json: its layer still counts.
        record(
            "results/run-002.json",
            "TESTRUN-X",
            "L4-perf",
            0,
            run("TESTRUN-X", 0.5, 30.0, None, vec![], vec![], json!([])),
        ),
    ];
    let l = layers(&runs, &graph, None, &config());
    let summary: Vec<(&str, &str, Option<f64>, Option<f64>)> = l
        .layers
        .iter()
        .map(|l| {
            (
                l.layer.as_str(),
                l.gate.as_str(),
                l.final_pass_rate,
                l.final_coverage,
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            // The run's figures, not the outcome's.
            ("L1-unit", "Met", Some(0.96), Some(85.0)),
            ("L2-integration", "NotApplicable", None, None),
            ("L4-perf", "Below", Some(0.5), Some(30.0)),
        ]
    );
    assert_eq!(
        l.layers[1].not_applicable.as_deref(),
        Some("nothing to integrate")
    );
    assert_eq!(l.layers[2].history[0].status, "unknown");
    assert_eq!(l.layers[0].gc_rounds_used, 1);
    let finals: Vec<&str> = l.final_runs.iter().map(|r| r.file.as_str()).collect();
    assert_eq!(finals, vec!["results/run-001.json", "results/run-002.json"]);
    assert_eq!(
        l.missing,
        vec!["TESTRUN-L1-fix-1 (pending): no run record in results/"]
    );
    // No GC effectiveness for a layer with nothing to do; one round that gained nothing: LOW.
    let g: Vec<(&str, Option<f64>, &str)> = l
        .gc_effectiveness
        .iter()
        .map(|g| (g.layer.as_str(), g.gain_per_round, g.rating.as_str()))
        .collect();
    assert_eq!(
        g,
        vec![("L1-unit", Some(0.0), "LOW"), ("L4-perf", None, "n/a")]
    );
}

#[test]
fn findings_keep_load_errors_still_quarantined_and_each_generator_finding_once() {
    let load_error = |file: &str, class: &str| {
        json!({"file": file, "error": "Traceback\nSyntaxError: bad",
               "verdict": {"classification": class, "reason": format!("{class} reason"),
                           "location": "pkg/x.py:3", "error": "SyntaxError"}})
    };
    let mut first = run(
        "TESTRUN-001",
        0.5,
        50.0,
        None,
        vec![
            t("t1", "failed", Some("code_defect"), Some("E")),
            t("t2", "error", Some("env_issue"), None),
            t("t3", "failed", None, None),
        ],
        vec!["t9"],
        json!([{"id": "test_bad.py", "file": true}]),
    );
    first["load_errors"] = json!([
        load_error("test_bad.py", "code_defect"),
        load_error("test_fixed.py", "test_defect")
    ]);
    // The final run holds test_bad.py in quarantine still; test_fixed.py loads again.
    let last = run(
        "TESTRUN-L1-fix-1",
        1.0,
        60.0,
        None,
        vec![t("t1", "passed", None, None)],
        vec![],
        json!([{"id": "test_bad.py", "file": true}]),
    );
    let runs = [
        record("results/run-001.json", "TESTRUN-001", "L1-unit", 0, first),
        record(
            "results/run-002.json",
            "TESTRUN-L1-fix-1",
            "L1-unit",
            1,
            last,
        ),
    ];
    let finding = |kind: &str| json!({"module": "m", "function": "f", "kind": kind, "call": "f()"});
    let graph = TaskGraph::new(vec![task(
        "TESTGEN-001",
        "generator",
        Some("L1-unit"),
        None,
        done(
            None,
            None,
            json!({"findings": [finding("exception"), finding("exception"),
                                finding("side_effect"), finding("sandbox_denied")]}),
        ),
    )]);
    let f = findings(&runs, &graph, "generator", &[&runs[1]]);
    assert_eq!(
        f.failures,
        FailureCounts {
            failing: 3,
            classified: 2,
            diagnosed: 2,
            env_failures: 1
        }
    );
    let loads: Vec<&str> = f
        .findings
        .load_errors
        .iter()
        .map(|l| l.file.as_str())
        .collect();
    assert_eq!(loads, vec!["test_bad.py"]);
    // The test's code defect and the file that does not load because of the project's code.
    let mut defects: Vec<&str> = f
        .findings
        .code_defects
        .iter()
        .map(|d| d.test.as_str())
        .collect();
    defects.sort();
    assert_eq!(defects, vec!["t1", "test_bad.py"]);
    // The two calls that raised the same exception in the same function are one finding.
    assert_eq!(f.findings.contract_findings[0]["hits"], 2);
    assert_eq!(
        (
            f.findings.contract_findings.len(),
            f.findings.side_effects.len(),
            f.blocked.len()
        ),
        (1, 1, 1)
    );
    assert_eq!(f.findings.contract_findings[0]["task_id"], "TESTGEN-001");
    assert_eq!(f.flaky_tests[0].test, "t9");
    assert_eq!(f.quarantined[0].reason, "no reason recorded");
    assert_eq!(f.rows.len(), 4);
    assert_eq!(f.test_ids.len(), 3);
}

#[test]
fn gaps_come_from_the_final_run_and_scope_falls_back_to_the_strategy() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("results")).unwrap();
    atomic_write_json(
        &tmp.path().join("results/coverage-001.json"),
        &json!({"files": [
            {"path": "a.py", "lines_total": 10, "lines_covered": 5, "missing_lines": [6, 7, 8, 9, 10]},
            {"path": "b.py", "lines_total": 4, "lines_covered": 4, "missing_lines": []}
        ]}),
    )
    .unwrap();
    let with_cov = |file: &str, cov_file: &str| {
        let mut v = run(
            "TESTRUN-001",
            1.0,
            50.0,
            Some(cov_file),
            vec![],
            vec![],
            json!([]),
        );
        v["coverage_scope"] = json!([]);
        record(file, "TESTRUN-001", "L1-unit", 0, v)
    };
    let runs = [
        with_cov("results/run-001.json", "results/coverage-001.json"),
        with_cov("results/run-002.json", "results/coverage-404.json"),
    ];
    let graph = TaskGraph::new(vec![task(
        "STRATEGY-001",
        "strategist",
        None,
        None,
        done(None, None, json!({"priority_files": ["a.py", "c.py"]})),
    )]);
    let layer = [layer_report("L1-unit", "Below", Some(1.0), Some(50.0))];
    let g = coverage_gaps(tmp.path(), &runs, &graph, &layer, &[&runs[0]]);
    assert_eq!(g.coverage_gaps.len(), 1, "b.py is complete");
    let gap = &g.coverage_gaps[0];
    assert_eq!(
        (gap.module.as_str(), gap.gap, gap.uncovered.as_str()),
        ("a.py", 30.0, "6-10")
    );
    assert_eq!(g.scope, BTreeSet::from(["a.py".into(), "c.py".into()]));
    assert_eq!(g.exercised, BTreeSet::from(["a.py".into(), "b.py".into()]));
    assert_eq!(g.missing.len(), 1);
    assert!(g.missing[0].starts_with("results/coverage-404.json (named by results/run-002.json)"));
    // Not the final run: its files are exercised, but no gap of it is reported.
    let g = coverage_gaps(tmp.path(), &runs[..1], &graph, &layer, &[]);
    assert!(g.coverage_gaps.is_empty());
    assert_eq!(g.exercised.len(), 2);
}

#[test]
fn score_leaves_out_layers_with_nothing_to_do_and_confidence_weighs_the_sections() {
    let mut found = no_findings();
    found.failures = FailureCounts {
        failing: 4,
        classified: 2,
        diagnosed: 1,
        env_failures: 1,
    };
    let na = layer_report("L2-integration", "NotApplicable", None, None);
    let layers = [
        layer_report("L1-unit", "Met", Some(1.0), Some(80.0)),
        na.clone(),
    ];
    let mutation = crate::artifacts::MutationRecord {
        mutants: 10,
        combined: crate::artifacts::SuiteScore {
            tests: 3,
            killed: 5,
            score: 50.0,
        },
        ..Default::default()
    };
    let s = score(&layers, &found, Some(&mutation), 3);
    // 30×1 + 25×1 + 25×0.5 (half the mutants killed) + 20×1 = 87.5 over the one applicable layer.
    assert_eq!(
        (s.quality_score, s.band.as_str(), s.scored),
        (87.5, "good", true)
    );
    // Without mutation analysis the same suite is only unverified.
    let s = score(&layers, &found, None, 3);
    assert_eq!((s.quality_score, s.band.as_str()), (100.0, "unverified"));
    assert!(!s.breakdown.detection_measured);
    assert_eq!((s.breakdown.gc_budget, s.breakdown.failing_tests), (3, 4));
    let s = score(&[na], &found, None, 3);
    assert_eq!(
        (s.quality_score, s.band.as_str(), s.scored),
        (0.0, NOT_SCORED, false)
    );

    found.test_ids = ["t1", "t2", "t3", "t4"].map(String::from).into();
    found.flaky_tests = vec![FlakyTest {
        test: "t1".into(),
        layer: "L1-unit".into(),
        task_id: "TESTRUN-001".into(),
    }];
    let gaps = Gaps {
        coverage_gaps: Vec::new(),
        scope: ["a.py", "b.py"].map(String::from).into(),
        exercised: ["a.py"].map(String::from).into(),
        missing: Vec::new(),
    };
    // t1 flaky of 4 tests; 1 of 4 failing records diagnosed, 1 an env_issue; the one layer
    // with something to do met its gate.
    let c = confidence(&layers, &found, &gaps, false);
    assert_eq!(
        (
            c.scenario_coverage,
            c.test_quality,
            c.diagnostic_accuracy,
            c.strategy_effectiveness,
            c.infrastructure_fitness
        ),
        (0.5, 0.75, 0.25, 1.0, 0.75)
    );
    // A run stopped by its environment: no fitness at all.
    assert_eq!(
        confidence(&layers, &found, &gaps, true).infrastructure_fitness,
        0.0
    );
}

#[test]
fn trends_compare_the_current_figures_with_the_latest_earlier_session() {
    let tmp = tempfile::tempdir().unwrap();
    let old = SessionDir::create(tmp.path(), "TST", "old", "2026-12-01").unwrap();
    old.save_state(&state(&old.id, "/repo", "2026-12-01T10:00:00.000+00:00", 0))
        .unwrap();
    atomic_write_json(
        &old.root.join("analysis/report.json"),
        &json!({"quality_score": 70.0}),
    )
    .unwrap();
    let cur = SessionDir::create(tmp.path(), "TST", "cur", "2026-12-03").unwrap();
    let cur_state = state(&cur.id, "/repo", "2026-12-03T10:00:00.000+00:00", 0);
    let layers = [layer_report("L1-unit", "Met", Some(1.0), Some(80.0))];
    let current = Current {
        layers: &layers,
        quality_score: 72.0,
        defect_occurrences: 0,
    };
    let t = trends(&cur, &cur_state, &config(), &current);
    assert_eq!(t.previous.len(), 1);
    assert_eq!(t.thresholds["score_points"], TREND_SCORE_POINTS);
    // The old session has no layer: no coverage trend; +2 points is within the threshold.
    assert!(t.coverage.is_empty());
    let score = t.score.unwrap();
    assert_eq!((score.previous, score.direction.as_str()), (70.0, "stable"));
    assert_eq!(t.defect_patterns.unwrap().direction, "stable");
}

#[test]
fn recommendations_follow_what_the_sections_found() {
    let tmp = tempfile::tempdir().unwrap();
    let s = synthetic(tmp.path(), "2026-12-03T10:00:00.000+00:00");
    let mut r = build(&s, &config());
    let all = recommendations(&r);
    assert!(all[0].starts_with("L1-unit: below its gate"), "{all:?}");
    assert!(all[0].ends_with("focus on calc/b.py"), "{all:?}");
    // Nothing found, nothing missing: nothing to recommend.
    r.layers.clear();
    r.findings = Findings::default();
    r.flaky_tests.clear();
    r.quarantined.clear();
    r.gc_effectiveness.clear();
    r.missing.clear();
    assert_eq!(recommendations(&r), Vec::<String>::new());
    r.missing.push("tasks.json: unreadable".into());
    assert_eq!(recommendations(&r).len(), 1);
}

#[test]
fn added_roles_list_dynamic_tasks_with_artifacts_relative_to_the_session() {
    let tmp = tempfile::tempdir().unwrap();
    let s = SessionDir::create(tmp.path(), "TST", "roles", "2026-12-03").unwrap();
    let mut added = task(
        "ROLE-001",
        "auditor",
        None,
        None,
        done(None, None, json!({})),
    );
    added.meta.insert("dynamic".into(), json!(true));
    added
        .meta
        .insert("added_because".into(), json!("added with roles add"));
    added.artifacts = vec![
        format!("{}/audit/report.md", s.root.display()),
        "/elsewhere/notes.md".into(),
    ];
    let graph = TaskGraph::new(vec![
        added,
        task("TESTRUN-001", "executor", Some("L1-unit"), None, None),
    ]);
    let roles = added_roles(&graph, &s);
    assert_eq!(roles.len(), 1);
    assert_eq!(
        (roles[0].role.as_str(), roles[0].reason.as_str()),
        ("auditor", "added with roles add")
    );
    assert_eq!(
        roles[0].artifacts,
        vec!["audit/report.md", "/elsewhere/notes.md"]
    );
}

#[test]
fn code_defects_with_one_location_and_exception_are_one_shown_by_the_shortest_test() {
    let failing = |id: &str, location: &str, error: &str| {
        json!({"id": id, "file": "test_x.py", "status": "failed", "classification": "code_defect",
               "criticality": "high",
               "evidence": {"location": location, "error": error, "excerpt": "",
                            "reason": format!("the code under test raised {error}")}})
    };
    let one = run(
        "TESTRUN-001",
        0.25,
        60.0,
        None,
        vec![
            failing(
                "test_x.py::test_last_word_of_long_text",
                "pkg/text.py:3",
                "IndexError",
            ),
            failing("test_x.py::test_last_word_0", "pkg/text.py:3", "IndexError"),
            failing(
                "test_x.py::test_last_word_of_spaces",
                "pkg/text.py:3",
                "IndexError",
            ),
            failing(
                "test_x.py::test_ratio",
                "pkg/text.py:9",
                "ZeroDivisionError",
            ),
        ],
        vec![],
        json!([]),
    );
    let runs = [record(
        "results/run-001.json",
        "TESTRUN-001",
        "L1-unit",
        0,
        one,
    )];
    let f = findings(&runs, &TaskGraph::new(vec![]), "generator", &[&runs[0]]);
    let defects = &f.findings.code_defects;
    assert_eq!(defects.len(), 2);
    let index = defects
        .iter()
        .find(|d| d.evidence["error"] == "IndexError")
        .unwrap();
    assert_eq!(index.test, "test_x.py::test_last_word_0");
    assert_eq!(index.hits, 3);
    assert_eq!(index.same_cause.len(), 2);
    assert_eq!(
        index.criticality_rule.as_deref(),
        Some("high: the code crashes on input its tests call its public API with")
    );
}
