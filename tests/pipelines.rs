//! The three pipelines, the GC loop, retries and parallel windows, with scripted command roles.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::common::*;

fn ids_and_deps(tasks: &[Value]) -> Vec<(String, Vec<String>)> {
    tasks
        .iter()
        .map(|t| {
            let deps = t["blockedBy"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_str().unwrap().to_string())
                .collect();
            (t["id"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

fn pairs(list: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    list.iter()
        .map(|(id, deps)| (id.to_string(), deps.iter().map(|d| d.to_string()).collect()))
        .collect()
}

fn by_id(tasks: &[Value]) -> BTreeMap<String, Value> {
    tasks
        .iter()
        .map(|t| (t["id"].as_str().unwrap().to_string(), t.clone()))
        .collect()
}

fn ts(t: &Value, field: &str) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339(
        t[field]
            .as_str()
            .unwrap_or_else(|| panic!("{field} in {t}")),
    )
    .unwrap()
}

#[test]
fn targeted_pipeline_has_the_seed_tasks() {
    let p = Project::fixture("python-calc");
    let out = p.scripted_run("test the ops", "targeted").arg("-y").run();
    out.assert_code(0);
    let id = out.session_id();
    let tasks = p.tasks(&id);
    assert_eq!(
        ids_and_deps(&tasks),
        pairs(&[
            ("STRATEGY-001", &[]),
            ("TESTGEN-001", &["STRATEGY-001"]),
            ("TESTRUN-001", &["TESTGEN-001"])
        ])
    );
    assert!(
        tasks.iter().all(|t| t["status"] == "completed"),
        "{tasks:?}"
    );
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert_eq!(state["status"], "archived");
    assert_eq!(state["pipeline_mode"], "targeted");
}

#[test]
fn standard_pipeline_has_the_seed_tasks() {
    let p = Project::fixture("python-calc");
    let out = p.scripted_run("test the ops", "standard").run();
    out.assert_code(0);
    let tasks = p.tasks(&out.session_id());
    assert_eq!(
        ids_and_deps(&tasks),
        pairs(&[
            ("STRATEGY-001", &[]),
            ("TESTGEN-001", &["STRATEGY-001"]),
            ("TESTRUN-001", &["TESTGEN-001"]),
            ("TESTGEN-002", &["TESTRUN-001"]),
            ("TESTRUN-002", &["TESTGEN-002"]),
            ("TESTANA-001", &["TESTRUN-002"]),
        ])
    );
    // inner_loop as the seed sets it: generator always, executor true in serial pipelines.
    let t = by_id(&tasks);
    assert_eq!(t["TESTGEN-001"]["inner_loop"], true);
    assert_eq!(t["TESTRUN-001"]["inner_loop"], true);
    assert_eq!(t["STRATEGY-001"]["inner_loop"], false);
    assert!(t["TESTRUN-002"]["description"]
        .as_str()
        .unwrap()
        .contains("PURPOSE:"));
}

#[test]
fn comprehensive_pipeline_runs_its_windows_in_parallel() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test everything", "comprehensive")
        .arg("-y")
        .env("TT_FIXTURE_SLEEP", "0.8")
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let tasks = p.tasks(&id);
    assert_eq!(
        ids_and_deps(&tasks),
        pairs(&[
            ("STRATEGY-001", &[]),
            ("TESTGEN-001", &["STRATEGY-001"]),
            ("TESTGEN-002", &["STRATEGY-001"]),
            ("TESTRUN-001", &["TESTGEN-001"]),
            ("TESTRUN-002", &["TESTGEN-002"]),
            ("TESTGEN-003", &["TESTRUN-001", "TESTRUN-002"]),
            ("TESTRUN-003", &["TESTGEN-003"]),
            ("TESTANA-001", &["TESTRUN-003"]),
        ])
    );
    let t = by_id(&tasks);
    for (a, b) in [
        ("TESTGEN-001", "TESTGEN-002"),
        ("TESTRUN-001", "TESTRUN-002"),
    ] {
        let (a, b) = (&t[a], &t[b]);
        assert!(
            ts(a, "started_at") < ts(b, "completed_at")
                && ts(b, "started_at") < ts(a, "completed_at"),
            "{} and {} must overlap: {a} {b}",
            a["id"],
            b["id"]
        );
    }
    assert_eq!(t["TESTGEN-001"]["worker"], "generator-1");
    assert_eq!(t["TESTGEN-002"]["worker"], "generator-2");
    assert_eq!(t["TESTRUN-001"]["worker"], "executor-1");
    assert_eq!(t["TESTRUN-002"]["worker"], "executor-2");
    assert_eq!(t["TESTRUN-001"]["inner_loop"], false);

    // meta.json keeps one namespace per worker instance.
    let meta = read_json(&p.session_dir(&id).join(".msg/meta.json"));
    let ns = meta["role_state"].as_object().unwrap();
    for name in [
        "generator-1",
        "generator-2",
        "executor-1",
        "executor-2",
        "strategist",
        "analyst",
        "coordinator",
    ] {
        assert!(
            ns.contains_key(name),
            "meta.json role_state lacks {name}: {meta}"
        );
    }
    assert_eq!(ns["executor-1"]["layer"], "L1-unit");
    assert_eq!(ns["executor-2"]["layer"], "L2-integration");
    assert_eq!(meta["pipeline_mode"], "comprehensive");
    assert_eq!(meta["status"], "archived");
}

#[test]
fn gc_loop_opens_exactly_the_rounds_needed() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test the ops", "standard")
        .env("TT_FIXTURE_PASS_RATES_L1", "0.5,0.8,0.97")
        .env("TT_FIXTURE_PASS_RATES_L2", "1.0")
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let tasks = p.tasks(&id);
    let ids: Vec<&str> = tasks.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "STRATEGY-001",
            "TESTGEN-001",
            "TESTRUN-001",
            "TESTGEN-002",
            "TESTRUN-002",
            "TESTANA-001",
            "TESTGEN-L1-fix-1",
            "TESTRUN-L1-fix-1",
            "TESTGEN-L1-fix-2",
            "TESTRUN-L1-fix-2",
        ]
    );
    let t = by_id(&tasks);
    assert_eq!(
        t["TESTGEN-L1-fix-1"]["blockedBy"],
        serde_json::json!(["TESTRUN-001"])
    );
    assert_eq!(
        t["TESTRUN-L1-fix-1"]["blockedBy"],
        serde_json::json!(["TESTGEN-L1-fix-1"])
    );
    assert_eq!(
        t["TESTGEN-L1-fix-2"]["blockedBy"],
        serde_json::json!(["TESTRUN-L1-fix-1"])
    );
    // The next layer waited on the newest fix run, and started only after it.
    assert_eq!(
        t["TESTGEN-002"]["blockedBy"],
        serde_json::json!(["TESTRUN-L1-fix-2"])
    );
    assert!(ts(&t["TESTGEN-002"], "started_at") >= ts(&t["TESTRUN-L1-fix-2"], "completed_at"));
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert_eq!(state["gc_rounds"], serde_json::json!({"L1": 2}));
    let triggers: Vec<Value> = p
        .messages(&id)
        .into_iter()
        .filter(|m| m["type"] == "gc_loop_trigger")
        .collect();
    assert_eq!(triggers.len(), 2);
    assert_eq!(triggers[1]["data"]["round"], 2);
}

#[test]
fn gc_loop_gives_up_after_three_rounds_with_a_warning() {
    let p = Project::fixture("python-calc");
    // Each round gains a little: never a plateau.
    let out = p
        .scripted_run("test the ops", "targeted")
        .arg("-y")
        .env("TT_FIXTURE_PASS_RATES", "0.4,0.5,0.6,0.7")
        .run();
    out.assert_code(0);
    assert!(
        out.stderr.contains("warning: L1-unit still below its gate"),
        "{}",
        out.stderr
    );
    let id = out.session_id();
    let tasks = p.tasks(&id);
    assert_eq!(tasks.len(), 3 + 2 * 3);
    assert_eq!(tasks.last().unwrap()["id"], "TESTRUN-L1-fix-3");
    assert!(tasks.iter().all(|t| t["status"] == "completed"));
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert_eq!(state["gc_rounds"]["L1"], 3);
    assert_eq!(state["status"], "archived");
    let gates: Vec<Value> = p
        .messages(&id)
        .into_iter()
        .filter(|m| m["type"] == "quality_gate")
        .collect();
    assert_eq!(
        gates.last().unwrap()["data"]["verdict"],
        "accepted_below_gate"
    );
}

#[test]
fn coverage_below_target_opens_a_round() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test the ops", "targeted")
        .env("TT_FIXTURE_PASS_RATES", "1.0")
        .env("TT_FIXTURE_COVERAGE", "50,55,60,65")
        .run();
    out.assert_code(0);
    let state = read_json(&p.session_dir(&out.session_id()).join("session.json"));
    assert_eq!(
        state["gc_rounds"]["L1"], 3,
        "coverage 50 < 80 never meets the L1 gate"
    );
}

/// A round that buys under a point of coverage ends the loop: the warning says what it gained,
/// in the run's output, in status and in the report.
#[test]
fn a_round_that_stops_paying_ends_the_gc_loop_with_what_it_gained() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test the ops", "targeted")
        .args(&["-y", "--completion", "keep"])
        .env("TT_FIXTURE_PASS_RATES", "1.0")
        .env("TT_FIXTURE_COVERAGE", "50,55,55.4")
        .run();
    out.assert_code(0);
    let said = "L1-unit below its gate, GC loop stopped: coverage 55.4% < 80%; plateau: +0.4 points of line coverage in round 2";
    assert!(out.stderr.contains(said), "{}", out.stderr);
    let id = out.session_id();
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert_eq!(state["gc_rounds"]["L1"], 2, "{state:#}");
    let status = p.cmd(&["status", &id]).run();
    assert!(status.stdout.contains(said), "{}", status.stdout);
    let report = p.cmd(&["report", &id]).run();
    assert!(
        report.stdout.contains("plateau: +0.4 points"),
        "{}",
        report.stdout
    );
}

#[test]
fn a_failed_task_is_retried_once() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test the ops", "targeted")
        .env("TT_FIXTURE_FAIL", "TESTGEN-001")
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let t = by_id(&p.tasks(&id));
    assert_eq!(t["TESTGEN-001"]["status"], "completed");
    assert_eq!(t["TESTGEN-001"]["attempts"], 2);
    let errors: Vec<Value> = p
        .messages(&id)
        .into_iter()
        .filter(|m| m["type"] == "error")
        .collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["data"]["retry"], true);
}

#[test]
fn a_task_failing_twice_fails_the_pipeline_and_skips_its_successors() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test the ops", "standard")
        .env("TT_FIXTURE_FAIL", "TESTRUN-001:always")
        .run();
    out.assert_code(1);
    let id = out.session_id();
    let t = by_id(&p.tasks(&id));
    assert_eq!(t["TESTRUN-001"]["status"], "failed");
    assert_eq!(t["TESTRUN-001"]["attempts"], 2);
    assert_eq!(t["TESTGEN-002"]["status"], "skipped");
    assert_eq!(t["TESTGEN-002"]["reason"], "dependency TESTRUN-001 failed");
    assert_eq!(t["TESTANA-001"]["reason"], "dependency TESTRUN-002 skipped");
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert_eq!(state["status"], "failed");
}

#[test]
fn a_role_printing_garbage_fails_with_the_reason() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test the ops", "targeted")
        .env("TT_FIXTURE_BAD_OUTPUT", "STRATEGY-001")
        .run();
    out.assert_code(1);
    let t = by_id(&p.tasks(&out.session_id()));
    let reason = t["STRATEGY-001"]["reason"].as_str().unwrap();
    assert!(reason.contains("not a JSON outcome"), "{reason}");
}

#[test]
fn message_ids_are_unique_and_increasing_and_progress_is_logged() {
    let p = Project::fixture("python-calc");
    let out = p.scripted_run("test the ops", "standard").run();
    out.assert_code(0);
    let msgs = p.messages(&out.session_id());
    let seqs: Vec<u64> = msgs
        .iter()
        .map(|m| {
            m["id"]
                .as_str()
                .unwrap()
                .strip_prefix("MSG-")
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
    for m in &msgs {
        for field in ["id", "ts", "from", "to", "type", "summary", "data"] {
            assert!(m.get(field).is_some(), "{field} missing in {m}");
        }
    }
    let kinds: Vec<&str> = msgs.iter().map(|m| m["type"].as_str().unwrap()).collect();
    for k in [
        "state_update",
        "pipeline_selected",
        "task_unblocked",
        "progress",
        "task_complete",
        "quality_gate",
        "shutdown",
    ] {
        assert!(kinds.contains(&k), "no {k} message");
    }
    // The scripted roles' own progress lines reach the log under the worker's name.
    assert!(msgs.iter().any(|m| m["type"] == "progress"
        && m["data"]["phase"] == "core_work_done"
        && m["from"] == "executor"));
    assert_eq!(
        msgs.iter().filter(|m| m["type"] == "task_complete").count(),
        6
    );
}

#[test]
fn a_role_that_times_out_is_killed_retried_and_fails_the_pipeline() {
    let p = Project::fixture("python-calc");
    let roles = p.write_role(
        "strategist",
        "---\nrole: strategist\nprefix: STRATEGY\ninner_loop: false\nmessage_types: [progress]\nbackend: command\ncommand: [\"sleep\", \"30\"]\ntimeout_s: 1\n---\nSleeps past its timeout.\n",
    );
    let started = std::time::Instant::now();
    let out = p.run_with_roles(&roles, "test it", "targeted").run();
    out.assert_code(1);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the sleeps were killed"
    );
    let t = by_id(&p.tasks(&out.session_id()));
    assert_eq!(t["STRATEGY-001"]["status"], "failed");
    assert_eq!(t["STRATEGY-001"]["attempts"], 2);
    assert_eq!(
        t["STRATEGY-001"]["reason"],
        "sleep timed out after 1s and was killed"
    );
    assert!(
        out.stdout.contains("STRATEGY-001 failed: sleep timed out"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_role_with_odd_output_and_a_lingering_child_still_reports_its_outcome() {
    let p = Project::fixture("python-calc");
    // Prints a byte that is not UTF-8, leaves a grandchild holding stderr, then reports.
    let script = "import subprocess, sys; subprocess.Popen(['sleep', '30'], stdout=subprocess.DEVNULL); sys.stdout.buffer.write(b'caf\\\\xe9\\\\n'); print('{\\\"status\\\":\\\"completed\\\",\\\"summary\\\":\\\"odd but fine\\\"}')";
    let role = format!(
        "---\nrole: strategist\nprefix: STRATEGY\ninner_loop: false\nmessage_types: [progress]\nbackend: command\ncommand: [\"python3\", \"-c\", \"{script}\"]\ntimeout_s: 20\n---\nOdd.\n"
    );
    let roles = p.write_role("strategist", &role);
    for r in ["generator", "executor"] {
        let text = std::fs::read_to_string(scripted_roles().join(r).join("role.md")).unwrap();
        let dir = scripted_roles().join(r);
        p.write_role(r, &text.replace("{role_dir}", dir.to_str().unwrap()));
    }
    let started = std::time::Instant::now();
    let out = p.run_with_roles(&roles, "test it", "targeted").run();
    out.assert_code(0);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "the lingering child was ended with its role, not waited for"
    );
    let t = by_id(&p.tasks(&out.session_id()));
    assert_eq!(t["STRATEGY-001"]["outcome"]["summary"], "odd but fine");
}

#[test]
fn a_relative_roles_dir_works() {
    let p = Project::fixture("python-calc");
    let copy = p.tmp.path().join("my-roles");
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(scripted_roles())
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    // The command runs from the repo; the roles sit beside it.
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test it",
            "--pipeline",
            "targeted",
            "--roles-dir",
            "../my-roles",
        ])
        .run();
    out.assert_code(0);
}

#[test]
fn run_controls_set_the_targets_and_rounds_kept_in_the_session() {
    let p = Project::fixture("python-calc");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "targeted",
            "-y",
            "--coverage-preset",
            "strict",
            "--target",
            "L1=95",
            "--max-rounds",
            "0",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let tasks = p.tasks(&id);
    let run = tasks.iter().find(|t| t["id"] == "TESTRUN-001").unwrap();
    assert_eq!(run["meta"]["coverage_target"], 95.0, "{run}");
    // No GC round: the gate is judged once.
    assert!(!tasks
        .iter()
        .any(|t| t["id"].as_str().unwrap().contains("fix")));
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert_eq!(state["max_gc_rounds"], 0);
    assert_eq!(state["controls"]["coverage_preset"], "strict");
    assert_eq!(state["controls"]["targets"]["L1-unit"], 95.0);

    for (flag, value, problem) in [
        ("--target", "L9=50", "no layer \"L9\""),
        ("--target", "L1=101", "not a percentage"),
        (
            "--coverage-preset",
            "lax",
            "expected standard, strict or minimum",
        ),
    ] {
        let out = p
            .cmd(&[
                "run",
                "--max-mutants",
                QUICK_MUTANTS,
                "test it",
                "-y",
                flag,
                value,
            ])
            .run();
        out.assert_code(2);
        assert!(out.stderr.contains(problem), "{}", out.stderr);
    }
}

#[test]
fn layer_restricts_the_pipeline_to_one_layer_and_keeps_it_connected() {
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
            "--layer",
            "L2",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let tasks = p.tasks(&id);
    assert!(
        tasks
            .iter()
            .all(|t| t["layer"].is_null() || t["layer"] == "L2-integration"),
        "{tasks:?}"
    );
    let gen = tasks.iter().find(|t| t["owner"] == "generator").unwrap();
    assert_eq!(gen["blockedBy"], json!(["STRATEGY-001"]), "{gen}");
    assert!(tasks.iter().all(|t| t["status"] == "completed"));
    let run = read_json(&p.session_dir(&id).join("results/run-001.json"));
    assert_eq!(run["layer"], "L2-integration");
}

#[test]
fn concurrency_one_runs_the_parallel_windows_one_task_at_a_time() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("test everything", "comprehensive")
        .arg("-c")
        .arg("1")
        .env("TT_FIXTURE_SLEEP", "0.3")
        .run();
    out.assert_code(0);
    let tasks = p.tasks(&out.session_id());
    let mut spans: Vec<_> = tasks
        .iter()
        .map(|t| (ts(t, "started_at"), ts(t, "completed_at"), t["id"].clone()))
        .collect();
    spans.sort_by_key(|s| s.0);
    for w in spans.windows(2) {
        assert!(
            w[0].1 <= w[1].0,
            "{} and {} overlap with -c 1",
            w[0].2,
            w[1].2
        );
    }
    let state = read_json(&p.session_dir(&out.session_id()).join("session.json"));
    assert_eq!(state["controls"]["concurrency"], 1);
}

#[test]
fn dry_run_plans_writes_the_strategy_runs_nothing_and_resume_runs_it() {
    let p = Project::fixture("python-calc");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "standard",
            "--dry-run",
        ])
        .run();
    out.assert_code(0);
    assert!(
        out.stdout
            .contains("Plan (dry run): standard pipeline, 6 tasks"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("L1-unit: 2 task(s), coverage target 80%"),
        "{}",
        out.stdout
    );
    let id = out.session_id();
    let dir = p.session_dir(&id);
    assert!(dir.join("strategy/test-strategy.md").is_file());
    assert!(dir.join("task-analysis.json").is_file());
    assert!(p.tasks(&id).iter().all(|t| t["status"] == "pending"));
    let no_runs = std::fs::read_dir(dir.join("results"))
        .map(|rd| rd.count() == 0)
        .unwrap_or(true);
    assert!(
        no_runs,
        "a dry run ran tests (not even the project's own suite may run)"
    );
    assert_eq!(read_json(&dir.join("session.json"))["status"], "paused");

    let out = p.cmd(&["resume", &id]).run();
    out.assert_code(0);
    assert!(p.tasks(&id).iter().all(|t| t["status"] == "completed"));
    // The real run does what the dry run left out: the baseline of the project's own tests.
    assert!(dir.join("results/baseline.json").is_file());
}
