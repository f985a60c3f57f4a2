//! Mutation analysis beyond Python: for a JavaScript, a Rust and a Go project with a weak suite
//! of their own, the analyst runs the project's tests and the prepared generated layers against
//! the same mutants, drops the generated test that adds nothing beyond the project's suite and
//! the check that noticed no mutant, reports three scores, and leaves the project's tree as it
//! was, byte for byte.

use crate::common::*;

/// What one family's fixture must show.
struct Expect<'a> {
    fixture: &'a str,
    /// The L2 test that only repeats the project's own test (`file::name`).
    redundant: &'a str,
    /// The L1 check that noticed no mutant (`file::test:line`), and a text only it holds.
    pruned: &'a str,
    pruned_text: &'a str,
    /// The project's own test command, run after apply.
    test_cmd: &'a [&'a str],
}

fn mutation_of_a_weak_suite(e: Expect) {
    let p = Project::fixture(e.fixture);
    let roles = copy_roles(&p);
    let spec = one_round_spec(&p);
    let out = p
        .run_with_roles(&roles, "test the shop", "standard")
        .arg("--spec")
        .arg(&spec)
        .env("TT_FIXTURE_TESTS", &generated(e.fixture))
        .run();
    let id = out.session_id();
    let dir = p.session_dir(&id);
    let m = read_json(&dir.join("results/mutation.json"));
    assert!(m["mutants"].as_u64().unwrap() >= 8, "{m:#}");
    // Three scores: the project's weak suite, the generated one, and both, above either.
    let own = m["baseline"]["score"].as_f64().unwrap();
    let generated = m["generated"]["score"].as_f64().unwrap();
    let combined = m["combined"]["score"].as_f64().unwrap();
    assert!(own > 0.0 && own < combined, "{m:#}");
    assert!(generated > own && combined >= generated, "{m:#}");
    // Minimization: the L2 test that repeats the project's test goes, the score stays.
    let l2 = m["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["layer"] == "L2-integration")
        .unwrap();
    assert_eq!(l2["dropped"], serde_json::json!([e.redundant]), "{l2:#}");
    assert_eq!(l2["combined_after"], l2["combined_before"], "{l2:#}");
    assert!(
        l2["after"]["tests"].as_u64() < l2["before"]["tests"].as_u64(),
        "{l2:#}"
    );
    // The check that noticed nothing, while the other check of its test did, goes.
    let l1 = &m["layers"][0];
    assert_eq!(l1["layer"], "L1-unit", "{m:#}");
    assert_eq!(
        l1["assertions_dropped"],
        serde_json::json!([e.pruned]),
        "{l1:#}"
    );
    let file = e.pruned.split("::").next().unwrap();
    let now = std::fs::read_to_string(dir.join("tests/L1-unit").join(file)).unwrap();
    assert!(!now.contains(e.pruned_text), "{now}");
    let kept = std::fs::read_to_string(dir.join("workspace/unminimized/L1-unit").join(file));
    assert!(kept.unwrap().contains(e.pruned_text));
    // The report carries the scores, and the score's detection term is the combined one.
    let report = read_json(&dir.join("analysis/report.json"));
    assert_eq!(report["mutation"]["combined"], m["combined"]);
    assert_eq!(report["score"]["detection_measured"], true, "{report:#}");
    assert_eq!(
        report["score"]["defect_detection"].as_f64().unwrap(),
        (combined / 100.0 * 10000.0).round() / 10000.0
    );
    let md = std::fs::read_to_string(dir.join("analysis/quality-report.md")).unwrap();
    assert!(md.contains("## Mutation Analysis"), "{md}");
    // Not a byte of the project changed, and nothing was added to it.
    assert_eq!(git_status(&p.repo, true), "");
    // What apply delivers passes under the project's own test command.
    p.cmd(&["apply", &id]).run().assert_code(0);
    let test = std::process::Command::new(e.test_cmd[0])
        .args(&e.test_cmd[1..])
        .current_dir(&p.repo)
        .output()
        .expect("the project's test command runs");
    assert!(
        test.status.success(),
        "{}{}",
        String::from_utf8_lossy(&test.stdout),
        String::from_utf8_lossy(&test.stderr)
    );
}

#[test]
fn go_mutation_scores_minimization_and_pruned_checks() {
    mutation_of_a_weak_suite(Expect {
        fixture: "go-mutation",
        redundant: "basket_test.go::TestClampInsideAgain",
        pruned: "price_test.go::TestTotal:9",
        pruned_text: "want a price",
        test_cmd: &["go", "test", "./..."],
    });
}

#[test]
fn rust_mutation_scores_minimization_and_pruned_assertions() {
    mutation_of_a_weak_suite(Expect {
        fixture: "rust-mutation",
        redundant: "basket.rs::clamp_inside_again",
        pruned: "price.rs::total_of_a_bulk_basket:6",
        pruned_text: ">= 0",
        test_cmd: &["cargo", "test", "--quiet"],
    });
}

#[test]
fn js_mutation_scores_minimization_and_pruned_assertions() {
    mutation_of_a_weak_suite(Expect {
        fixture: "js-mutation",
        redundant: "basket.test.js::basket > clamp inside again",
        pruned: "price.test.js::price > total of a bulk basket:9",
        pruned_text: ">= 0",
        test_cmd: &["node", "--test"],
    });
}

/// `mutate` scores the project's own suite alone: the weak suite of the Go fixture kills few of
/// its mutants, the survivors are named by file and line, and the tree is left as it was.
#[test]
fn mutate_scores_the_projects_own_suite_and_names_the_survivors() {
    let p = Project::fixture("go-mutation");
    let repo = p.repo.to_str().unwrap();
    let out = p.cmd(&["mutate", "--repo", repo, "--json"]).run();
    out.assert_code(0);
    let s: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let (mutants, killed) = (
        s["mutants"].as_u64().unwrap(),
        s["killed"].as_u64().unwrap(),
    );
    assert!(mutants >= 8 && killed >= 1 && killed * 2 < mutants, "{s:#}");
    assert_eq!(s["tests"], 1, "{s:#}");
    let survivors = s["survivors"].as_array().unwrap();
    assert_eq!(survivors.len() as u64, mutants - killed, "{s:#}");
    assert!(
        survivors
            .iter()
            .any(|v| v.as_str().unwrap().starts_with("price.go:")),
        "{s:#}"
    );
    assert_eq!(git_status(&p.repo, true), "");
    // A folder with no tests of its own is named, and nothing runs.
    std::fs::remove_file(p.repo.join("price_test.go")).unwrap();
    let out = p.cmd(&["mutate", "--repo", repo]).run();
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("has no test files of its own"),
        "{}",
        out.stderr
    );
}

/// On a CommonJS mocha project, the mutants run in one resident mocha (loaded once, the
/// project's modules reloaded for each mutant) and come to the very verdicts that one mocha
/// per run gives; the tree is left as it was.
#[test]
fn mocha_mutants_run_in_a_resident_mocha_with_the_verdicts_of_one_mocha_per_run() {
    let p = Project::fixture("js-mocha");
    let deps = fixtures().join("js-deps/node_modules");
    assert!(deps.join(".bin/mocha").exists(), "run `npm ci` in js-deps");
    std::os::unix::fs::symlink(deps, p.repo.join("node_modules")).unwrap();
    let repo = p.repo.to_str().unwrap();
    let mutate = |resident: bool| {
        let log = p.tmp.path().join(format!("children-{resident}.jsonl"));
        let mut cmd = p
            .cmd(&["mutate", "--repo", repo, "--json", "--max-mutants", "25"])
            .env("TEAM_TESTING_CHILD_LOG", log.to_str().unwrap());
        if !resident {
            cmd = cmd.env("TEAM_TESTING_NO_RESIDENT", "1");
        }
        let out = cmd.run();
        out.assert_code(0);
        let summary: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let children = std::fs::read_to_string(&log).unwrap();
        let answered = children.matches("(resident)").count();
        (summary, answered)
    };
    let (warm, answered) = mutate(true);
    let (cold, cold_answered) = mutate(false);
    let mutants = warm["mutants"].as_u64().unwrap();
    assert!(mutants >= 10, "{warm:#}");
    // Every mutant that some test reaches ran there (and the unmutated code once more).
    let reached = mutants - warm["no_coverage"].as_u64().unwrap();
    assert!(
        answered as u64 > reached,
        "{answered} resident runs: {warm:#}"
    );
    assert_eq!(cold_answered, 0);
    for key in [
        "mutants",
        "killed",
        "survived",
        "no_coverage",
        "unviable",
        "survivors",
    ] {
        assert_eq!(warm[key], cold[key], "{key}: {warm:#} vs {cold:#}");
    }
    assert!(warm["killed"].as_u64().unwrap() >= 1, "{warm:#}");
    assert_eq!(git_status(&p.repo, false), "?? node_modules");
}
