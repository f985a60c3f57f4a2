//! The test-fix cycle beyond Python, against the real binary with real go, node and cargo:
//! go-fixcycle and js-fixcycle each have two seeded bugs in two files (a discount divided by 10
//! instead of 100, an exact stock refused) and their own tests that catch them; rust-fixcycle has
//! one (an angle sum off by 180). With the built-in backend only, each bug's line is in the top
//! three of its group; with a scripted fixer the loop reaches 100 %, rolling back the regression
//! the wrong stock fix makes, with the commits the Python cycle makes, and only `apply --fixes`
//! changes the user's tree, after which the project's own test command passes.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{config, fixtures, read_json, Project, QUICK_MUTANTS};

const TASK: &str = "fix the failing tests";

fn fixer_config(p: &Project) -> String {
    let agent = fixtures().join("agents/family_agent.py");
    config(
        p,
        &format!(
            "[backends.fake]\nkind = \"cli\"\ncommand = [\"python3\", {:?}]\ntimeout_s = 120\n",
            agent.display().to_string()
        ),
    )
    .display()
    .to_string()
}

fn git_out(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// With the built-in backend only: the run says an agent is needed, and each `bug` line
/// (`file:line`) is among the top three modification points of its group.
fn localisation_ranks_each_bug_in_its_top_three(p: &Project, bugs: &[&str]) {
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            TASK,
            "--pipeline",
            "test-fix",
            "-y",
        ])
        .run();
    out.assert_code(1);
    let id = out.session_id();
    let st = read_json(&p.session_dir(&id).join("iteration-state.json"));
    assert_eq!(st["status"], "needs_agent", "{st}");
    let plan = read_json(&p.session_dir(&id).join("analysis/fix-plan.json"));
    for bug in bugs {
        let file = bug.rsplit_once(':').unwrap().0;
        let group = plan["fixes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["file"] == file)
            .unwrap_or_else(|| panic!("no group for {bug}: {plan}"));
        let top: Vec<String> = group["modification_points"]
            .as_array()
            .unwrap()
            .iter()
            .take(3)
            .map(|m| format!("{}:{}", m["file"].as_str().unwrap(), m["line"]))
            .collect();
        assert!(
            top.contains(&bug.to_string()),
            "{bug} not in the top 3: {top:?}\n{plan}"
        );
    }
    assert_eq!(
        git_out(&p.repo, &["branch", "--list", "team-testing/*"]),
        ""
    );
}

/// With the scripted fixer: success through a rolled-back regression, the Python cycle's
/// commits, the tree untouched until `apply --fixes`, then `command` passes.
fn the_agent_fixes_both_bugs(p: &Project, commits: &[&str], command: &[&str]) {
    let (id, st) = fixed_by_the_scripted_fixer(p);
    let outcomes: Vec<String> = st["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["outcome"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        outcomes,
        ["initial", "improved", "regressed", "improved"],
        "{st}"
    );
    let its = st["iterations"].as_array().unwrap();
    assert_eq!(its[3]["strategy"], "surgical", "after a regression");
    assert!(its[2]["rollback_commit"].is_string());
    assert_eq!(
        st["final_validation"]["passed"], st["final_validation"]["total"],
        "{st}"
    );
    let branch = st["branch"].as_str().unwrap();
    let base = st["base_commit"].as_str().unwrap();
    let subjects: Vec<String> = git_out(
        &p.repo,
        &[
            "log",
            "--reverse",
            "--format=%s",
            &format!("{base}..{branch}"),
        ],
    )
    .lines()
    .map(str::to_string)
    .collect();
    assert_eq!(subjects, commits);
    assert_eq!(git_out(&p.repo, &["status", "--porcelain"]), "");
    assert!(
        !run_in(&p.repo, command).status.success(),
        "the bugs are still in the tree"
    );
    p.cmd(&["apply", "--fixes", &id]).run().assert_code(0);
    let after = run_in(&p.repo, command);
    assert!(
        after.status.success(),
        "{command:?} after apply --fixes:\n{}\n{}",
        String::from_utf8_lossy(&after.stdout),
        String::from_utf8_lossy(&after.stderr)
    );
}

/// A test-fix run with the scripted fixer that succeeds: its session id and iteration state.
fn fixed_by_the_scripted_fixer(p: &Project) -> (String, Value) {
    let cfg = fixer_config(p);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            TASK,
            "--pipeline",
            "test-fix",
            "-y",
            "--config",
            &cfg,
            "--backend",
            "fixer=fake",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let st: Value = read_json(&p.session_dir(&id).join("iteration-state.json"));
    assert_eq!(st["status"], "success", "{st}");
    (id, st)
}

fn run_in(repo: &Path, command: &[&str]) -> std::process::Output {
    Command::new("timeout")
        .arg("300")
        .args(command)
        .current_dir(repo)
        .output()
        .unwrap()
}

#[test]
fn go_the_cycle_localises_both_bugs_and_a_scripted_fixer_reaches_100_percent() {
    let p = Project::fixture("go-fixcycle");
    localisation_ranks_each_bug_in_its_top_three(&p, &["pricing.go:8", "inventory.go:5"]);
    let p = Project::fixture("go-fixcycle");
    the_agent_fixes_both_bugs(
        &p,
        &[
            "test-cycle: iteration 1 - conservative strategy (pass: 66.7% → 83.3%)",
            "test-cycle: iteration 2 - conservative strategy (pass: 83.3% → 66.7%)",
            "test-cycle: rollback iteration 2 - regression detected (pass: 66.7% < 83.3%)",
            "test-cycle: iteration 3 - surgical strategy (pass: 83.3% → 100.0%)",
        ],
        &["go", "test", "./..."],
    );
}

#[test]
fn js_the_cycle_localises_both_bugs_and_a_scripted_fixer_reaches_100_percent() {
    let p = Project::fixture("js-fixcycle");
    localisation_ranks_each_bug_in_its_top_three(&p, &["src/pricing.js:5", "src/inventory.js:5"]);
    let p = Project::fixture("js-fixcycle");
    the_agent_fixes_both_bugs(
        &p,
        &[
            "test-cycle: iteration 1 - conservative strategy (pass: 66.7% → 83.3%)",
            "test-cycle: iteration 2 - conservative strategy (pass: 83.3% → 66.7%)",
            "test-cycle: rollback iteration 2 - regression detected (pass: 66.7% < 83.3%)",
            "test-cycle: iteration 3 - surgical strategy (pass: 83.3% → 100.0%)",
        ],
        &["node", "--test"],
    );
}

#[test]
fn rust_the_cycle_localises_the_bug_and_a_scripted_fixer_fixes_it() {
    let p = Project::fixture("rust-fixcycle");
    if !crate::common::has_llvm_cov() {
        // Without per-test coverage the cycle cannot localise, and says what to install.
        let out = p
            .cmd(&[
                "run",
                "--max-mutants",
                QUICK_MUTANTS,
                TASK,
                "--pipeline",
                "test-fix",
                "-y",
            ])
            .run();
        assert_ne!(out.code, 0);
        assert!(
            format!("{}{}", out.stdout, out.stderr).contains("cargo-llvm-cov"),
            "{}",
            out.stdout
        );
        return;
    }
    localisation_ranks_each_bug_in_its_top_three(&p, &["src/lib.rs:16"]);
    let p = Project::fixture("rust-fixcycle");
    let (id, st) = fixed_by_the_scripted_fixer(&p);
    assert_eq!(st["iterations"][0]["pass_rate"], 50.0, "{st}");
    assert_eq!(st["final_validation"]["pass_rate"], 100.0, "{st}");
    p.cmd(&["apply", "--fixes", &id]).run().assert_code(0);
    let after = run_in(&p.repo, &["cargo", "test", "--offline"]);
    assert!(
        after.status.success(),
        "{}",
        String::from_utf8_lossy(&after.stderr)
    );
}
