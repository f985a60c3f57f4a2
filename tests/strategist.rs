//! The built-in strategist on real git repositories.

use crate::common::*;

/// Scripted generator and executor, built-in strategist.
fn roles_without_strategist(p: &Project) -> std::path::PathBuf {
    let mut roles = std::path::PathBuf::new();
    for r in ["generator", "executor", "analyst"] {
        let dir = scripted_roles().join(r);
        let text = std::fs::read_to_string(dir.join("role.md")).unwrap();
        roles = p.write_role(r, &text.replace("{role_dir}", dir.to_str().unwrap()));
    }
    roles
}

#[test]
fn strategy_names_the_touched_functions_toolchain_and_test_layout() {
    let p = Project::fixture("python-calc");
    let ops = std::fs::read_to_string(p.repo.join("calc/ops.py")).unwrap();
    p.write(
        "calc/ops.py",
        &ops.replace("return a / b", "return float(a) / b"),
    );
    p.write(
        "calc/stats.py",
        "def median(xs):\n    return sorted(xs)[len(xs) // 2]\n\n\nclass Summary:\n    pass\n",
    );
    let roles = roles_without_strategist(&p);
    let out = p
        .run_with_roles(&roles, "test the change", "targeted")
        .run();
    out.assert_code(0);
    let dir = p.session_dir(&out.session_id());
    let md = std::fs::read_to_string(dir.join("strategy/test-strategy.md")).unwrap();
    assert!(
        md.contains("| calc/ops.py | modified | +1/-1 | divide |"),
        "{md}"
    );
    assert!(
        md.contains("| calc/stats.py | added (untracked) | +6/-0 | median, Summary |"),
        "{md}"
    );
    assert!(
        md.contains("Framework: **pytest** (detected by pyproject.toml has [tool.pytest…])"),
        "{md}"
    );
    assert!(
        md.contains("## Toolchain") && md.contains("- Coverage: coverage.py"),
        "{md}"
    );
    assert!(
        md.contains("- Folders: tests (1)") && md.contains("- Naming: test_*.py (1)"),
        "{md}"
    );
    let meta = read_json(&dir.join(".msg/meta.json"));
    let s = &meta["role_state"]["strategist"];
    assert_eq!(s["framework"], "pytest");
    assert_eq!(
        s["priority_files"],
        serde_json::json!(["calc/stats.py", "calc/ops.py"])
    );
    assert_eq!(s["toolchain"]["coverage_tool"], "coverage.py");
    assert_eq!(s["touched"]["calc/ops.py"], serde_json::json!(["divide"]));
    let conventions = std::fs::read_to_string(dir.join("wisdom/conventions.md")).unwrap();
    assert!(conventions.contains("Framework: pytest"), "{conventions}");
}

#[test]
fn base_rev_measures_a_branch_whole_change() {
    let p = Project::fixture("python-calc");
    git(&p.repo, &["checkout", "-q", "-b", "feature"]);
    p.write("calc/power.py", "def power(a, b):\n    return a ** b\n");
    git(&p.repo, &["add", "."]);
    git(&p.repo, &["commit", "-q", "-m", "power"]);
    let roles = roles_without_strategist(&p);
    let out = p
        .run_with_roles(&roles, "test the branch", "targeted")
        .arg("--base")
        .arg("main")
        .run();
    out.assert_code(0);
    let dir = p.session_dir(&out.session_id());
    let analysis = read_json(&dir.join("task-analysis.json"));
    assert_eq!(
        analysis["scope"]["files"],
        serde_json::json!([{"path": "calc/power.py", "kind": "added"}])
    );
    assert_eq!(analysis["scope"]["base_ref"], "main");
    let md = std::fs::read_to_string(dir.join("strategy/test-strategy.md")).unwrap();
    assert!(md.contains("merge base of main and HEAD"), "{md}");
    assert!(
        md.contains("| calc/power.py | added | +2/-0 | power |"),
        "{md}"
    );

    let bad = p
        .run_with_roles(&roles, "x", "targeted")
        .arg("--base")
        .arg("nope")
        .run();
    bad.assert_code(2);
    assert!(
        bad.stderr.contains("--base nope: no such commit or branch"),
        "{}",
        bad.stderr
    );
}

#[test]
fn no_change_puts_the_whole_project_in_scope() {
    let p = Project::fixture("python-calc");
    let roles = roles_without_strategist(&p);
    let out = p.run_with_roles(&roles, "test it all", "targeted").run();
    out.assert_code(0);
    let md = std::fs::read_to_string(
        p.session_dir(&out.session_id())
            .join("strategy/test-strategy.md"),
    )
    .unwrap();
    assert!(md.contains("the whole project is in scope"), "{md}");
}
