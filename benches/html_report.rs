//! Cost of analysis/report.html for a large session: 10,000 test results in two layers and
//! 1,000 source files (120 lines each, committed in a git repository that is the session's
//! base), with every file's coverage detail. Measures building the report from the session's
//! files and rendering and writing the page (sources read from the repository included), and
//! prints the page's size.
//!
//! `cargo bench --bench html_report` (figures in BENCHMARKS.md).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use team_testing::pipeline::config::TeamConfig;
use team_testing::session::{SessionDir, SessionState};
use team_testing::tasks::{Outcome, Task, TaskGraph, TaskStatus};

const TESTS: usize = 10_000;
const FILES: usize = 1_000;
const LINES: usize = 120;
const LAYERS: [(&str, f64); 2] = [("L1-unit", 80.0), ("L2-integration", 60.0)];

fn git(repo: &Path, args: &[&str]) {
    let mut argv = vec![
        "git",
        "-c",
        "user.name=bench",
        "-c",
        "user.email=bench@example.invalid",
    ];
    argv.extend_from_slice(args);
    let out = team_testing::proc::run_captured(&argv, repo, Duration::from_secs(120)).unwrap();
    assert!(out.success(), "git {args:?}: {}", out.stderr);
}

/// A repository of FILES Python modules, committed; returns its commit.
fn repository(repo: &Path) -> String {
    for f in 0..FILES {
        let dir = repo.join(format!("pkg{}", f / 100));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = String::new();
        for l in 0..LINES {
            let _ = writeln!(
                text,
                "def f_{f}_{l}(x):  # line {l} of a synthetic module <&>"
            );
        }
        std::fs::write(dir.join(format!("m{f}.py")), text).unwrap();
    }
    git(repo, &["init", "-q"]);
    git(repo, &["add", "."]);
    git(repo, &["commit", "-q", "-m", "synthetic"]);
    let out = team_testing::proc::run_captured(
        &["git", "rev-parse", "HEAD"],
        repo,
        Duration::from_secs(30),
    )
    .unwrap();
    out.stdout.trim().to_string()
}

fn ts(s: u32) -> String {
    format!("2026-12-03T10:{:02}:{:02}.000+00:00", s / 60, s % 60)
}

/// The session: tasks.json, session.json, a run and a coverage record per layer, the log.
fn session(root: &Path, repo: &Path, base: &str) -> SessionDir {
    let session = SessionDir::create(root, "TST", "synthetic html", "2026-12-03").unwrap();
    let mut tasks = vec![Task {
        status: TaskStatus::Completed,
        outcome: Some(Outcome::completed("strategy")),
        started_at: Some(ts(0)),
        completed_at: Some(ts(5)),
        ..Task::new("STRATEGY-001", "strategy", "strategist", vec![])
    }];
    let mut log = String::new();
    let mut seq = 0;
    let mut record = |log: &mut String, t: u32, from: &str, kind: &str, data: serde_json::Value| {
        seq += 1;
        let r = json!({"id": format!("MSG-{seq:03}"), "ts": ts(t), "from": from,
            "to": "coordinator", "type": kind, "summary": kind, "data": data});
        log.push_str(&r.to_string());
        log.push('\n');
    };
    record(
        &mut log,
        0,
        "coordinator",
        "task_unblocked",
        json!({"task_id": "STRATEGY-001", "worker": "strategist", "attempt": 1, "queued": false}),
    );
    record(
        &mut log,
        5,
        "strategist",
        "task_complete",
        json!({"task_id": "STRATEGY-001", "outcome": {"status": "completed"}}),
    );
    let results = session.root.join("results");
    std::fs::create_dir_all(&results).unwrap();
    for (i, (layer, target)) in LAYERS.iter().enumerate() {
        let n = i + 1;
        let gen = format!("TESTGEN-{n:03}");
        let run = format!("TESTRUN-{n:03}");
        let start = 5 + 20 * i as u32;
        tasks.push(Task {
            status: TaskStatus::Completed,
            layer: Some(layer.to_string()),
            outcome: Some(Outcome::completed("generated")),
            ..Task::new(&gen, "generate", "generator", vec!["STRATEGY-001".into()])
        });
        tasks.push(Task {
            status: TaskStatus::Completed,
            layer: Some(layer.to_string()),
            outcome: Some(Outcome {
                pass_rate: Some(0.98),
                coverage: Some(target + 5.0),
                ..Outcome::completed("ran")
            }),
            ..Task::new(&run, "run", "executor", vec![gen.clone()])
        });
        for (task, worker, from, to) in [
            (&gen, "generator-1", start, start + 8),
            (&run, "executor-1", start + 8, start + 30),
        ] {
            record(
                &mut log,
                from,
                "coordinator",
                "task_unblocked",
                json!({"task_id": task, "worker": worker, "attempt": 1, "queued": false}),
            );
            record(
                &mut log,
                to,
                worker,
                "task_complete",
                json!({"task_id": task, "outcome": {"status": "completed"}}),
            );
        }
        let per_layer = TESTS / LAYERS.len();
        let tests: Vec<serde_json::Value> = (0..per_layer)
            .map(|t| {
                let failed = t.is_multiple_of(50);
                json!({"id": format!("tests/{layer}/test_m{}.py::test_case_{t}", t % FILES),
                    "file": format!("tests/{layer}/test_m{}.py", t % FILES),
                    "status": if failed { "failed" } else { "passed" },
                    "duration_s": 0.004,
                    "message": failed.then(|| format!("AssertionError: expected {t} <got {}>", t + 1)),
                    "classification": failed.then_some(if t.is_multiple_of(100) { "code_defect" } else { "test_defect" }),
                    "evidence": failed.then(|| json!({"location": format!("pkg{}/m{}.py:{}", (t % FILES) / 100, t % FILES, t % LINES + 1),
                        "error": "AssertionError", "reason": "wrong result", "excerpt": "assert f(x) == 2"})),
                })
            })
            .collect();
        let passed = tests.iter().filter(|t| t["status"] == "passed").count();
        let files: Vec<serde_json::Value> = (0..FILES)
            .map(|f| {
                let missing: Vec<u32> = (1..=LINES as u32).filter(|l| (l + f as u32 + i as u32).is_multiple_of(7)).collect();
                let executed: Vec<u32> = (1..=LINES as u32).filter(|l| !missing.contains(l)).collect();
                let partial: Vec<u32> = executed.iter().copied().filter(|l| l.is_multiple_of(11)).collect();
                json!({"path": format!("pkg{}/m{f}.py", f / 100), "lines_total": LINES,
                    "lines_covered": executed.len(), "line_percent": 100.0 * executed.len() as f64 / LINES as f64,
                    "missing_lines": missing, "executed_lines": executed, "partial_lines": partial,
                    "branches_total": 20, "branches_covered": 15})
            })
            .collect();
        let cov = format!("results/coverage-{n:03}.json");
        std::fs::write(
            session.root.join(&cov),
            json!({"format": "coveragepy-json", "scope": [], "files": files}).to_string(),
        )
        .unwrap();
        let record = json!({"task_id": run, "layer": layer, "framework": "pytest", "total": per_layer,
            "passed": passed, "failed": per_layer - passed, "errors": 0, "skipped": 0,
            "pass_rate": passed as f64 / per_layer as f64, "coverage": target + 5.0,
            "coverage_file": cov, "tests": tests});
        std::fs::write(results.join(format!("run-{n:03}.json")), record.to_string()).unwrap();
    }
    tasks.push(Task {
        status: TaskStatus::InProgress,
        ..Task::new(
            "ANALYSIS-001",
            "analyse",
            "analyst",
            vec!["TESTRUN-002".into()],
        )
    });
    record(
        &mut log,
        50,
        "coordinator",
        "task_unblocked",
        json!({"task_id": "ANALYSIS-001", "worker": "analyst", "attempt": 1, "queued": false}),
    );
    session.save_tasks(&TaskGraph::new(tasks)).unwrap();
    let state: SessionState = serde_json::from_value(json!({
        "session_id": session.id, "status": "active", "task_description": "synthetic html",
        "pipeline_mode": "standard", "team_name": "testing", "repo": repo, "base_commit": base,
        "completion_action": "keep", "created_at": ts(0), "updated_at": ts(50), "tasks_total": 6
    }))
    .unwrap();
    session.save_state(&state).unwrap();
    std::fs::create_dir_all(session.messages().parent().unwrap()).unwrap();
    std::fs::write(session.messages(), log).unwrap();
    session
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let base = repository(&repo);
    let session = session(&tmp.path().join("sessions"), &repo, &base);
    let config = TeamConfig::builtin().unwrap();
    let report = team_testing::report::build(&session, &config);
    assert_eq!(report.rows.len(), TESTS);
    let page = team_testing::report::html::html(&session, &report);
    let sources = page.matches("<pre class=\"src\">").count();
    eprintln!(
        "report.html: {} bytes ({:.2} MB) for {} test results and {} files ({sources} sources shown)",
        page.len(),
        page.len() as f64 / 1e6,
        report.rows.len(),
        FILES
    );
    assert!(page.len() < 10_000_000, "{} bytes", page.len());
    let out = tmp.path().join("report.html");
    let mut g = c.benchmark_group("html_report");
    g.sample_size(10).measurement_time(Duration::from_secs(15));
    g.bench_function("render_and_write_10k_tests_1k_files", |b| {
        b.iter(|| {
            let page = team_testing::report::html::html(&session, &report);
            std::fs::write(&out, page).unwrap();
        })
    });
    g.bench_function("build_render_and_write_10k_tests_1k_files", |b| {
        b.iter(|| {
            let report = team_testing::report::build(&session, &config);
            let page = team_testing::report::html::html(&session, &report);
            std::fs::write(&out, page).unwrap();
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
