//! The second line of defence: the file-system watch. A watched command's writes go to a
//! throwaway layer and are listed, whoever makes them (Python, native code, a child process);
//! the tests team-testing keeps run under it, so what Python's audit hooks cannot see still
//! keeps a test from being delivered.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

fn report_json(p: &Project, id: &str) -> Value {
    let out = p.cmd(&["report", id, "--format", "json"]).run();
    out.assert_code(0);
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn a_watched_command_changes_nothing_and_every_change_it_tried_is_listed() {
    let p = Project::plain();
    let victim = p.tmp.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "keep").unwrap();
    let script = format!(
        "rm {v}/keep.txt; echo x > {v}/new.txt; mkfifo {v}/fifo; chmod 700 {v}; \
         python3 -c \"import ctypes; ctypes.CDLL(None).unlink(b'{v}/keep.txt')\"; kill -9 -1",
        v = victim.display()
    );
    let out = p
        .cmd(&["sandbox", "--watch", "--", "sh", "-c", &script])
        .run();
    let v = victim.display().to_string();
    for line in [
        format!("watch: deletes {v}/keep.txt"),
        format!("watch: creates the file {v}/new.txt"),
        format!("watch: creates the fifo {v}/fifo"),
        format!("watch: changes the mode or owner of {v}"),
    ] {
        assert!(
            out.stdout.contains(&line),
            "no `{line}` in:\n{}\n{}",
            out.stdout,
            out.stderr
        );
    }
    // Nothing of it reached the machine, and `kill -9 -1` reached nothing outside.
    let names: Vec<String> = std::fs::read_dir(&victim)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["keep.txt"]);
    assert_eq!(
        std::fs::read_to_string(victim.join("keep.txt")).unwrap(),
        "keep"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777,
        0o755
    );
}

/// The names of the nasty fixture's functions that reach outside, and a word each of what the
/// report must say they did.
const NASTY: [(&str, &str); 9] = [
    ("unlink_data", "unlink()"),
    ("unlink_victim", "unlink()"),
    ("make_node", "node.txt"),
    ("open_state", "state.db"),
    ("bind_socket", "sock"),
    ("make_fifo", "fifo"),
    ("remove_with_rm", "rm"),
    ("create_file", "created.txt"),
    ("make_fifo_natively", "sneaky.fifo"),
];

#[test]
fn applied_tests_of_code_that_reaches_out_natively_change_nothing_when_a_user_runs_them() {
    let p = Project::fixture("python-nasty");
    let victim = p.tmp.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    for name in ["native.txt", "sub.txt"] {
        std::fs::write(victim.join(name), "canary").unwrap();
    }
    let v = victim.to_str().unwrap();
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the nasty helpers",
            "--pipeline",
            "standard",
            "-y",
        ])
        .env("NASTY_VICTIM", v)
        .run();
    out.assert_code(0);
    let id = out.session_id();
    p.cmd(&["apply", &id]).run().assert_code(0);

    // A throwaway copy, run by plain pytest as a user who may change every file of it.
    let copy = p.tmp.path().join("copy");
    let ok = Command::new("cp")
        .arg("-a")
        .arg(&p.repo)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(ok.success());
    let home = p.tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let run = plain_pytest_as_user(
        &copy,
        &[&victim, &home],
        &[("NASTY_VICTIM", v), ("HOME", home.to_str().unwrap())],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("PASSED") && l.contains("test_add")),
        "the harmless function lost its tests:\n{}",
        run.stdout
    );
    let status = Command::new("git")
        .args([
            "-c",
            "safe.directory=*",
            "status",
            "--porcelain",
            "--ignored",
        ])
        .current_dir(&copy)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&status.stdout).trim(),
        "?? tests/",
        "{}",
        run.stdout
    );
    let mut left: Vec<String> = std::fs::read_dir(&victim)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["native.txt", "sub.txt"],
        "the canaries outside changed"
    );
    assert_eq!(
        std::fs::read_dir(&home).unwrap().count(),
        0,
        "HOME was written"
    );

    // Every function that reaches out is a side effect, named by what it did.
    let report = report_json(&p, &id);
    let side_effects = report["findings"]["side_effects"].as_array().unwrap();
    for (function, word) in NASTY {
        let named = side_effects.iter().any(|s| {
            s["function"].as_str().unwrap_or("").contains(function)
                && s["actual"].as_str().unwrap_or("").contains(word)
        });
        assert!(
            named,
            "{function} is not a side effect naming {word}: {side_effects:#?}"
        );
    }
    assert!(
        report["findings"]["code_defects"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{}",
        report["findings"]["code_defects"]
    );
}

#[test]
fn a_requirement_whose_call_unlinks_natively_is_a_side_effect_and_no_code_defect() {
    let p = Project::fixture("python-nasty");
    let victim = p.tmp.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    let target = victim.join("req.txt");
    std::fs::write(&target, "canary").unwrap();
    p.write(
        "nasty/native.py",
        "import ctypes\n\n\ndef native_rm(path: str) -> int:\n    \"\"\"Removes a file through the C library.\"\"\"\n    return ctypes.CDLL(None).unlink(path.encode())\n",
    );
    p.write(
        "REQ-004.md",
        &format!(
            "# REQ-004: Native removal\n\n## Acceptance Criteria\n\n- AC-5: `native_rm('{}')` returns `0`\n",
            target.display()
        ),
    );
    git(&p.repo, &["add", "."]);
    git(&p.repo, &["commit", "-q", "-m", "native removal"]);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test native removal",
            "--pipeline",
            "targeted",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "canary");
    let report = report_json(&p, &id);
    assert!(
        report["findings"]["code_defects"]
            .as_array()
            .unwrap()
            .is_empty(),
        "a denied effect became a code defect: {}",
        report["findings"]["code_defects"]
    );
    let side_effects = report["findings"]["side_effects"].as_array().unwrap();
    assert!(
        side_effects.iter().any(|s| {
            let text = s.to_string();
            text.contains("at_") && text.contains("unlink")
        }),
        "the scenario's call is not a side effect: {side_effects:#?}"
    );
    // Nothing of the scenario is delivered.
    let applied = p.cmd(&["apply", &id]).run();
    let delivered = walk_texts(&p.repo.join("tests"));
    assert!(
        !delivered.iter().any(|t| t.contains("native_rm")),
        "{}\n{delivered:?}",
        applied.stdout
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "canary");
}

fn walk_texts(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                out.push(text);
            }
        }
    }
    out
}
