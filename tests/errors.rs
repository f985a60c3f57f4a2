//! Bad input of every kind: a clear message naming the file and the problem, exit code 2.

use crate::common::*;

fn builtin_config() -> serde_json::Value {
    read_json(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/team-config.json"))
}

fn run_with_spec(p: &Project, spec: &str) -> Output {
    let path = p.tmp.path().join("team-config.json");
    std::fs::write(&path, spec).unwrap();
    p.scripted_run("test it", "standard")
        .arg("--spec")
        .arg(path.to_str().unwrap())
        .run()
}

#[test]
fn malformed_spec_names_the_file() {
    let p = Project::fixture("python-calc");
    let out = run_with_spec(&p, "{ not json");
    out.assert_code(2);
    assert!(
        out.stderr.contains("team-config.json: invalid team config"),
        "{}",
        out.stderr
    );
    assert!(!p.sessions.exists(), "nothing is written for bad input");
}

#[test]
fn spec_missing_a_field_names_it() {
    let p = Project::fixture("python-calc");
    let mut c = builtin_config();
    c.as_object_mut().unwrap().remove("max_gc_rounds");
    let out = run_with_spec(&p, &c.to_string());
    out.assert_code(2);
    assert!(
        out.stderr.contains("missing field `max_gc_rounds`"),
        "{}",
        out.stderr
    );
}

#[test]
fn cyclic_pipeline_names_the_task() {
    let p = Project::fixture("python-calc");
    let mut c = builtin_config();
    c["pipelines"]["standard"]["tasks"][0]["blockedBy"] = serde_json::json!(["TESTANA-001"]);
    let out = run_with_spec(&p, &c.to_string());
    out.assert_code(2);
    assert!(
        out.stderr.contains("team-config.json: task "),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("dependency cycle"), "{}", out.stderr);
}

#[test]
fn dangling_dependency_names_the_task() {
    let p = Project::fixture("python-calc");
    let mut c = builtin_config();
    c["pipelines"]["targeted"]["tasks"][2]["blockedBy"] = serde_json::json!(["TESTGEN-404"]);
    let out = run_with_spec(&p, &c.to_string());
    out.assert_code(2);
    assert!(out.stderr.contains("task TESTRUN-001"), "{}", out.stderr);
    assert!(out.stderr.contains("TESTGEN-404"), "{}", out.stderr);
}

#[test]
fn unknown_owner_names_the_task() {
    let p = Project::fixture("python-calc");
    let mut c = builtin_config();
    c["pipelines"]["targeted"]["tasks"][1]["owner"] = "ghost".into();
    let out = run_with_spec(&p, &c.to_string());
    out.assert_code(2);
    assert!(
        out.stderr.contains("TESTGEN-001") && out.stderr.contains("ghost"),
        "{}",
        out.stderr
    );
}

#[test]
fn bad_role_file_names_the_file() {
    let p = Project::fixture("python-calc");
    let roles = p.write_role(
        "executor",
        "---\nrole: executor\nprefix: TESTRUN\n---\nno fields",
    );
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test it",
            "--roles-dir",
            roles.to_str().unwrap(),
        ])
        .run();
    out.assert_code(2);
    assert!(
        out.stderr.contains("executor/role.md: invalid frontmatter"),
        "{}",
        out.stderr
    );
}

#[test]
fn duplicate_prefix_is_refused() {
    let p = Project::fixture("python-calc");
    let roles = p.write_role("linter", "---\nrole: linter\nprefix: TESTRUN\ninner_loop: false\nmessage_types: []\nbackend: command\ncommand: [\"true\"]\n---\n");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test it",
            "--roles-dir",
            roles.to_str().unwrap(),
        ])
        .run();
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("prefix TESTRUN is already used by role executor"),
        "{}",
        out.stderr
    );
}

#[test]
fn missing_repo_is_an_error() {
    let p = Project::plain();
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test it",
            "--repo",
            "/nonexistent/team-testing/repo",
        ])
        .run();
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("/nonexistent/team-testing/repo does not exist"),
        "{}",
        out.stderr
    );
}

#[test]
fn unknown_pipeline_is_an_error() {
    let p = Project::fixture("python-calc");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test it",
            "--pipeline",
            "huge",
        ])
        .run();
    out.assert_code(2);
    assert!(
        out.stderr.contains("unknown pipeline 'huge'"),
        "{}",
        out.stderr
    );
}

#[test]
fn unknown_session_lists_the_candidates() {
    let p = Project::fixture("python-calc");
    let out = p.scripted_run("test the ops", "targeted").run();
    let id = out.session_id();
    let out = p.cmd(&["status", "TST-nope"]).run();
    out.assert_code(2);
    assert!(
        out.stderr.contains("no session 'TST-nope'") && out.stderr.contains(&id),
        "{}",
        out.stderr
    );
}

#[test]
fn hostile_task_text_makes_a_safe_session_name() {
    let p = Project::fixture("python-calc");
    let out = p
        .scripted_run("$(rm -rf ~) ../../etc; `id`", "targeted")
        .run();
    out.assert_code(0);
    let id = out.session_id();
    assert!(id.starts_with("TST-rm-rf-etc-id-"), "{id}");
    assert!(p.session_dir(&id).is_dir());
    // The text is kept as data, verbatim.
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert_eq!(state["task_description"], "$(rm -rf ~) ../../etc; `id`");
}

#[test]
fn plain_folder_runs_with_a_warning() {
    let p = Project::plain();
    let out = p
        .run_with_roles(&scripted_roles(), "test it", "targeted")
        .run();
    out.assert_code(0);
    assert!(
        out.stderr
            .contains("not a git repository: the whole project is in scope"),
        "{}",
        out.stderr
    );
}
