//! The test-fix cycle against the real binary: python-fixcycle has two seeded bugs (a discount
//! divided by 10 instead of 100, a stock check `>` instead of `>=`) and its own tests that catch
//! them. The fake agent fixes the pricing bug right, and the stock bug wrong first (a regression
//! the loop must roll back), then right once the strategy is surgical.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{config, fake_agent, read_json, Output, Project, QUICK_MUTANTS};

const TASK: &str = "fix the failing shop tests";

/// The subjects of the worktree's commits, in order.
const COMMITS: [&str; 4] = [
    "test-cycle: iteration 1 - conservative strategy (pass: 69.2% → 84.6%)",
    "test-cycle: iteration 2 - conservative strategy (pass: 84.6% → 69.2%)",
    "test-cycle: rollback iteration 2 - regression detected (pass: 69.2% < 84.6%)",
    "test-cycle: iteration 3 - surgical strategy (pass: 84.6% → 100.0%)",
];

fn agent_config(p: &Project) -> String {
    config(
        p,
        &format!(
            "[backends.fake]\nkind = \"cli\"\ncommand = [\"python3\", {:?}, \"{{prompt_file}}\"]\n",
            fake_agent()
        ),
    )
    .display()
    .to_string()
}

fn run_fix(p: &Project, cfg: &str) -> crate::common::Cmd {
    p.cmd(&[
        "run",
        "--max-mutants",
        QUICK_MUTANTS,
        TASK,
        "--pipeline",
        "test-fix",
        "-y",
        "--config",
        cfg,
        "--backend",
        "fixer=fake",
    ])
}

/// Every file of the user's tree (not .git) with its bytes.
fn tree(repo: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![repo.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = e.path();
            if e.file_name() == ".git" {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(repo).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
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

fn state(p: &Project, id: &str) -> Value {
    read_json(&p.session_dir(id).join("iteration-state.json"))
}

fn subjects(p: &Project, state: &Value) -> Vec<String> {
    let branch = state["branch"].as_str().unwrap();
    let base = state["base_commit"].as_str().unwrap();
    git_out(
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
    .collect()
}

fn outcomes(state: &Value) -> Vec<(u64, String)> {
    state["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["iteration"].as_u64().unwrap(),
                i["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The project's own tests, run in its folder (a temp copy) by plain pytest.
fn project_pytest(p: &Project) -> std::process::Output {
    Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .current_dir(&p.repo)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap()
}

#[test]
fn an_agent_fixes_both_bugs_a_regression_is_rolled_back_and_only_apply_fixes_changes_the_tree() {
    let p = Project::fixture("python-fixcycle");
    let before = tree(&p.repo);
    let cfg = agent_config(&p);
    let out = run_fix(&p, &cfg).run();
    out.assert_code(0);
    let id = out.session_id();
    let st = state(&p, &id);
    assert_eq!(st["status"], "success", "{st}");
    // 100 % in at most 3 iterations, one of them regressed and rolled back.
    assert_eq!(
        outcomes(&st),
        vec![
            (0, "initial".into()),
            (1, "improved".into()),
            (2, "regressed".into()),
            (3, "improved".into())
        ]
    );
    let its = st["iterations"].as_array().unwrap();
    assert_eq!(its[2]["strategy"], "conservative");
    assert_eq!(its[3]["strategy"], "surgical", "after a regression");
    assert!(its[2]["rollback_commit"].is_string());
    assert_eq!(st["final_validation"]["passed"], 13);
    assert_eq!(st["final_validation"]["total"], 13);
    // The commits are in the worktree, on its branch.
    assert_eq!(subjects(&p, &st), COMMITS);
    assert!(
        git_out(&p.repo, &["worktree", "list"]).contains(st["branch"].as_str().unwrap()),
        "the worktree is listed"
    );
    // Progressive testing: the iterations ran only the affected tests; the last run, everything.
    let details: Vec<String> = p
        .messages(&id)
        .iter()
        .filter_map(|m| m["data"]["detail"].as_str().map(str::to_string))
        .collect();
    assert!(
        details
            .iter()
            .any(|d| d == "iteration 1: running 6 of 13 tests, those affected by shop/pricing.py"),
        "{details:#?}"
    );
    assert!(details
        .iter()
        .any(|d| d == "final validation: running the whole suite (13 tests)"));
    assert_eq!(its[1]["selected_tests"].as_array().unwrap().len(), 6);
    assert!(st["tests_run"].as_u64().unwrap() < st["tests_full"].as_u64().unwrap());
    let status = p.cmd(&["status", &id]).run();
    assert!(
        status
            .stdout
            .contains("Test-Fix Cycle: success (after 3 iteration(s)); pass rate 69.2% -> 84.6% -> 69.2% -> 100.0%"),
        "{}",
        status.stdout
    );
    // The report has the cycle.
    let report =
        std::fs::read_to_string(p.session_dir(&id).join("analysis/quality-report.md")).unwrap();
    assert!(report.contains("## Test-Fix Cycle"), "{report}");
    // The user's tree is byte for byte what it was, until apply --fixes.
    assert_eq!(tree(&p.repo), before, "the run changed the user's tree");
    assert_eq!(git_out(&p.repo, &["status", "--porcelain"]), "");
    assert!(
        !project_pytest(&p).status.success(),
        "the bugs are still in the tree"
    );
    let applied = p.cmd(&["apply", "--fixes", &id]).run();
    applied.assert_code(0);
    assert!(
        applied.stdout.contains("2 files changed"),
        "{}",
        applied.stdout
    );
    let pytest = project_pytest(&p);
    assert!(
        pytest.status.success(),
        "{}",
        String::from_utf8_lossy(&pytest.stdout)
    );
    assert!(String::from_utf8_lossy(&pytest.stdout).contains("13 passed"));
}

#[test]
fn with_the_builtin_backend_only_each_bug_is_in_the_top_three_and_the_run_says_an_agent_is_needed()
{
    let p = Project::fixture("python-fixcycle");
    let before = tree(&p.repo);
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
    // A test-fix run that fixed nothing is not a success a script may take as one.
    out.assert_code(1);
    assert!(
        out.stdout.contains("fixing needs an agent backend"),
        "{}",
        out.stdout
    );
    let id = out.session_id();
    let st = state(&p, &id);
    assert_eq!(st["status"], "needs_agent");
    let plan = read_json(&p.session_dir(&id).join("analysis/fix-plan.json"));
    for bug in ["shop/pricing.py:8", "shop/inventory.py:8"] {
        let group = plan["fixes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| bug.starts_with(f["file"].as_str().unwrap()))
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
            "{bug} not in the top 3: {top:?}"
        );
    }
    let md =
        std::fs::read_to_string(p.session_dir(&id).join("analysis/fault-localisation.md")).unwrap();
    assert!(md.contains("shop/pricing.py:8 | apply_discount"), "{md}");
    // Nothing was to change: no worktree, no branch, the tree as it was.
    assert_eq!(
        git_out(&p.repo, &["branch", "--list", "team-testing/*"]),
        ""
    );
    assert_eq!(tree(&p.repo), before);
}

#[test]
fn a_kill_in_the_middle_of_an_iteration_then_resume_gives_the_same_commits_once() {
    let p = Project::fixture("python-fixcycle");
    let cfg = agent_config(&p);
    // Killed right after iteration 2's commit, before the state records it.
    let out: Output = run_fix(&p, &cfg)
        .env("TEAM_TESTING_CRASH_AT", "fix.committed:2")
        .run();
    assert_ne!(out.code, 0, "the run was killed");
    let id = out.session_id();
    let st = state(&p, &id);
    assert_eq!(outcomes(&st).len(), 2, "iterations 0 and 1 recorded: {st}");
    p.cmd(&["resume", &id, "-y"]).run().assert_code(0);
    let st = state(&p, &id);
    assert_eq!(st["status"], "success");
    assert_eq!(
        outcomes(&st).iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        vec![0, 1, 2, 3],
        "no iteration twice"
    );
    assert_eq!(subjects(&p, &st), COMMITS, "the same commits, none twice");
}

#[test]
fn fix_continues_an_earlier_session_on_its_failing_tests() {
    let p = Project::fixture("python-fixcycle");
    let out = p
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
    out.assert_code(0);
    let id = out.session_id();
    // A generated test that pinned the buggy value, as a generator asserting what it saw does.
    std::fs::write(
        p.session_dir(&id).join("tests/L1-unit/test_pinned.py"),
        "from shop.pricing import apply_discount\n\n\ndef test_ten_percent_as_seen():\n    assert apply_discount(100, 10) == 0.0\n",
    )
    .unwrap();
    let cfg = agent_config(&p);
    let fixed = p
        .cmd(&[
            "fix",
            &id,
            "-y",
            "--max-iterations",
            "5",
            "--config",
            &cfg,
            "--backend",
            "fixer=fake",
        ])
        .run();
    fixed.assert_code(0);
    let owners: Vec<(String, String)> = p
        .tasks(&id)
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["status"].as_str().unwrap().to_string(),
            )
        })
        .filter(|(id, _)| id.starts_with("FIX-"))
        .collect();
    assert_eq!(
        owners,
        vec![
            ("FIX-001".to_string(), "completed".to_string()),
            ("FIX-002".to_string(), "completed".to_string())
        ]
    );
    let st = state(&p, &id);
    assert_eq!(st["status"], "success");
    assert_eq!(st["max_iterations"], 5);
    assert_eq!(
        st["pinned_tests"],
        serde_json::json!([".team-testing-fix/L1-unit/test_pinned.py::test_ten_percent_as_seen"]),
        "the session's tests that asserted the old behaviour are named"
    );
    assert!(
        fixed.stdout.contains("asserted the old behaviour"),
        "{}",
        fixed.stdout
    );
    assert!(fixed.stdout.contains("apply") && fixed.stdout.contains("--fixes"));
}

#[test]
fn critical_issues_in_the_code_block_the_loop_and_an_agent_change_with_a_placeholder_is_rejected() {
    // The user's change imports a module that exists nowhere and leaves a stub: FIX-001 blocks.
    let p = Project::fixture("python-fixcycle");
    p.write(
        "shop/extra.py",
        "import shop_helpers_that_do_not_exist\n\n\ndef cheapest(prices):\n    pass\n",
    );
    let cfg = agent_config(&p);
    let out = run_fix(&p, &cfg).run();
    out.assert_code(1);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("L0 code validation found 2 critical issue(s)")
            && all.contains("shop/extra.py:1")
            && all.contains("placeholder"),
        "{all}"
    );
    let id = out.session_id();
    assert!(
        !p.session_dir(&id).join("iteration-state.json").exists(),
        "the loop never ran"
    );

    // An agent whose fix adds a stub: each such change is rejected, nothing is committed.
    let p = Project::fixture("python-fixcycle");
    let cfg = agent_config(&p);
    let out = run_fix(&p, &cfg)
        .args(&["--max-iterations", "1"])
        .env("FAKE_AGENT_FIX", "placeholder")
        .run();
    out.assert_code(1);
    let id = out.session_id();
    let st = state(&p, &id);
    assert_eq!(st["status"], "failure");
    let it = &st["iterations"][1];
    assert_eq!(it["outcome"], "rejected", "{st}");
    assert!(
        it["note"].as_str().unwrap().contains("refund"),
        "the note names the stub: {it}"
    );
    assert!(subjects(&p, &st).is_empty(), "nothing committed");
    assert!(!p.session_dir(&id).join("fixes/combined.patch").exists());
}

#[test]
fn files_that_would_make_git_run_programs_are_refused_and_a_project_in_a_subfolder_is_fixed() {
    // The fixture one folder down in its git repository, as in a monorepo.
    let p = Project::fixture("python-fixcycle");
    let sub = p.repo.join("shop-app");
    std::fs::create_dir_all(&sub).unwrap();
    for name in ["shop", "tests", "pytest.ini"] {
        std::fs::rename(p.repo.join(name), sub.join(name)).unwrap();
    }
    crate::common::git(&p.repo, &["add", "-A"]);
    crate::common::git(&p.repo, &["commit", "-q", "-m", "move into a subfolder"]);
    let cfg = agent_config(&p);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            TASK,
            "--pipeline",
            "test-fix",
            "-y",
            "--repo",
            sub.to_str().unwrap(),
            "--config",
            &cfg,
            "--backend",
            "fixer=fake",
        ])
        .env("FAKE_AGENT_FIX", "hostile")
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let st = state(&p, &id);
    assert_eq!(st["status"], "success", "{st}");
    assert_eq!(st["prefix"], "shop-app/");
    let note = st["iterations"][1]["note"].as_str().unwrap().to_string();
    assert!(
        note.contains(".GIT: git's data (not taken)")
            && note.contains(".gitattributes: not a path inside the repository (refused)")
            && !note.contains("git refused"),
        "the hostile files were refused before git saw them: {note}"
    );
    let manifest = read_json(&p.session_dir(&id).join("fixes/manifest.json"));
    let paths: Vec<&str> = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        vec!["shop-app/shop/inventory.py", "shop-app/shop/pricing.py"]
    );
    p.cmd(&["apply", "--fixes", &id, "--repo", sub.to_str().unwrap()])
        .run()
        .assert_code(0);
    assert!(!p.repo.join(".gitattributes").exists() && !sub.join(".gitattributes").exists());
    let pytest = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .current_dir(&sub)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(
        pytest.status.success(),
        "{}",
        String::from_utf8_lossy(&pytest.stdout)
    );
}
