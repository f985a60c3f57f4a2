//! What a new user meets in the first hour: the seed's own role files, sessions that keep their
//! place when archived, scope and layers with nothing to do, the plan gate, hints that work
//! pasted, and files that do not load. Each test drives the real binary on a fixture project.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::*;

/// The path printed in `Session: <path>`.
fn printed_session_path(out: &Output) -> PathBuf {
    let line = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("Session: "))
        .unwrap_or_else(|| panic!("no 'Session:' line in\n{}", out.stdout));
    PathBuf::from(line.trim())
}

/// Every command in backticks that starts with the program: the hints the tool printed.
fn hints(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|c| {
            shlex::split(c)
                .and_then(|w| w.first().cloned())
                .is_some_and(|w| w == "team-testing" || w.ends_with("/team-testing"))
        })
        .map(str::to_string)
        .collect()
}

/// Runs `program args` from `cwd` as a user would: no sessions root from the environment.
fn run_bare(program: &str, args: &[String], cwd: &Path) -> Output {
    let mut c = Command::new(program);
    c.args(args)
        .current_dir(cwd)
        .env_remove("TEAM_TESTING_SESSIONS")
        .env_remove("TEAM_TESTING_LOG");
    wait(
        c.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("binary starts"),
    )
}

/// Runs a printed hint as a user pasting it would: split as a shell splits it, from `cwd`.
fn run_hint(hint: &str, cwd: &Path) -> Output {
    let words = shlex::split(hint).unwrap_or_else(|| panic!("not shell words: {hint}"));
    let program = if words[0] == "team-testing" {
        BIN
    } else {
        &words[0]
    };
    run_bare(program, &words[1..], cwd)
}

/// The task ids under "Tasks that will run" in a dry run's output.
fn tasks_that_will_run(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("Tasks that will run"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_seeds_role_files_load_and_run_as_the_builtin_roles_with_their_body_as_prompt() {
    let p = Project::fixture("python-calc");
    let cfg = cli_config(&p, 60);
    let seed = fixtures().join("roles/seed");
    let out = p
        .run_with_roles(&seed, "test calc", "targeted")
        .args(&["-y", "--config", cfg.to_str().unwrap()])
        .args(&["--backend", "generator=fake"])
        .env("FAKE_AGENT_MODE", "answer")
        // The fake agent refuses a prompt that lacks the seed generator's body.
        .env("FAKE_AGENT_EXPECT", "Marker: seed-generator-body")
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let gen = generator_task(&p, &id);
    assert_eq!(gen["status"], "completed", "{gen}");
    let data = &gen["outcome"]["data"];
    assert!(data.get("fallbacks").is_none(), "the agent failed: {data}");
    assert!(
        gen["outcome"]["artifacts"]
            .as_array()
            .is_some_and(|a| !a.is_empty()),
        "{gen}"
    );
    // `roles list` names the seed's files as the roles' source.
    let list = p.cmd(&["roles", "list", &id]).run();
    list.assert_code(0);
    assert!(
        list.stdout.contains("roles/seed/generator/role.md"),
        "{}",
        list.stdout
    );
}

#[test]
fn archive_keeps_the_session_where_it_was_printed_and_refused_resume_changes_nothing() {
    let p = Project::fixture("python-calc");
    let out = p
        .cmd(&["run", "--max-mutants", QUICK_MUTANTS, "test calc", "-y"])
        .run();
    out.assert_code(0);
    let path = printed_session_path(&out);
    assert!(path.join("session.json").is_file(), "{}", path.display());
    assert!(out.stdout.contains("freed"), "{}", out.stdout);
    let state = read_json(&path.join("session.json"));
    assert_eq!(state["status"], "archived");
    assert_eq!(
        read_json(&path.join(".msg/meta.json"))["status"],
        "archived"
    );
    // The deliverables and the log stay; the rebuildable copies are gone.
    // Only the tests as written before minimization stay: nothing can make
    // them again.
    assert!(path.join("analysis/quality-report.md").is_file());
    assert!(path.join(".msg/messages.jsonl").is_file());
    let left: Vec<String> = std::fs::read_dir(path.join("workspace"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.iter().all(|name| name == "unminimized"), "{left:?}");
    let p_str = path.to_str().unwrap();
    p.cmd(&["status", p_str]).run().assert_code(0);

    // Resume is refused, and the session is byte for byte what it was.
    let before: Vec<Vec<u8>> = [
        "session.json",
        "tasks.json",
        ".msg/meta.json",
        ".msg/messages.jsonl",
    ]
    .iter()
    .map(|f| bytes(&path.join(f)))
    .collect();
    let refused = p.cmd(&["resume", p_str]).run();
    refused.assert_code(2);
    assert!(
        refused.stderr.contains("already completed"),
        "{}",
        refused.stderr
    );
    let after: Vec<Vec<u8>> = [
        "session.json",
        "tasks.json",
        ".msg/meta.json",
        ".msg/messages.jsonl",
    ]
    .iter()
    .map(|f| bytes(&path.join(f)))
    .collect();
    assert!(before == after, "a refused resume changed the session");
    assert!(!p.sessions.join("archive").exists());

    // `sessions` hides it, `--all` shows it.
    let listed = p.cmd(&["sessions"]).run();
    assert!(
        !listed.stdout.contains(&out.session_id()),
        "{}",
        listed.stdout
    );
    assert!(listed.stdout.contains("--all"), "{}", listed.stdout);
    let all = p.cmd(&["sessions", "--all"]).run();
    assert!(all.stdout.contains(&out.session_id()), "{}", all.stdout);

    // deepen by the printed path runs in place; status by the same path still works.
    let deepened = p.cmd(&["deepen", p_str, "-y"]).run();
    deepened.assert_code(0);
    assert_eq!(printed_session_path(&deepened), path);
    p.cmd(&["status", p_str]).run().assert_code(0);
    assert_eq!(read_json(&path.join("session.json"))["status"], "archived");
}

#[test]
fn a_second_sessions_report_shows_the_trend_against_the_archived_first() {
    let p = Project::fixture("python-calc");
    let first = p
        .cmd(&["run", "--max-mutants", QUICK_MUTANTS, "test calc", "-y"])
        .run();
    first.assert_code(0);
    let second = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test calc again",
            "-y",
        ])
        .run();
    second.assert_code(0);
    let report = read_json(&printed_session_path(&second).join("analysis/report.json"));
    let previous: Vec<&str> = report["trends"]["previous"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["session_id"].as_str())
        .collect();
    assert_eq!(previous, vec![first.session_id().as_str()], "{report:#}");
    let md =
        std::fs::read_to_string(printed_session_path(&second).join("analysis/quality-report.md"))
            .unwrap();
    assert!(!md.contains("No earlier session"), "{md}");
}

#[test]
fn sessions_an_earlier_version_moved_into_archive_are_still_found_and_read() {
    let p = Project::fixture("python-calc");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test calc",
            "--completion",
            "keep",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    // What an earlier version did on archive: status completed, folder moved to archive/.
    let legacy = p.sessions.join("archive").join(&id);
    std::fs::create_dir_all(legacy.parent().unwrap()).unwrap();
    std::fs::rename(p.sessions.join(&id), &legacy).unwrap();
    let state_file = legacy.join("session.json");
    let mut state = read_json(&state_file);
    state["status"] = "completed".into();
    std::fs::write(&state_file, serde_json::to_string(&state).unwrap()).unwrap();

    p.cmd(&["status", &id]).run().assert_code(0);
    let report = p.cmd(&["report", &id]).run();
    report.assert_code(0);
    assert!(
        report.stdout.contains("Quality Report"),
        "{}",
        report.stdout
    );
    let all = p.cmd(&["sessions", "--all"]).run();
    assert!(all.stdout.contains(&id), "{}", all.stdout);
    let refused = p.cmd(&["resume", &id]).run();
    refused.assert_code(2);
    assert!(
        legacy.join("session.json").is_file(),
        "the refusal moved it"
    );
    // A new session's trend reads it.
    let next = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test calc again",
            "-y",
        ])
        .run();
    next.assert_code(0);
    let r = read_json(&printed_session_path(&next).join("analysis/report.json"));
    assert_eq!(
        r["trends"]["previous"][0]["session_id"],
        id.as_str(),
        "{r:#}"
    );
}

#[test]
fn an_untracked_notes_file_puts_the_whole_project_in_scope_and_says_why() {
    let p = Project::fixture("python-calc");
    p.write("notes.txt", "remember to test the calculator\n");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test calc",
            "--pipeline",
            "targeted",
            "-y",
        ])
        .run();
    out.assert_code(0);
    assert!(
        out.stdout.contains("notes.txt) touches no source file"),
        "{}",
        out.stdout
    );
    let id = out.session_id();
    let strategy =
        std::fs::read_to_string(p.session_dir(&id).join("strategy/test-strategy.md")).unwrap();
    assert!(
        strategy.contains("whole project is in scope") && strategy.contains("notes.txt"),
        "{strategy}"
    );
    // The layer had real work: tests that pass, and no GC round spent on an empty layer.
    let tasks = p.tasks(&id);
    assert!(!tasks
        .iter()
        .any(|t| t["id"].as_str().unwrap().contains("-fix-")));
    let run = tasks.iter().find(|t| t["id"] == "TESTRUN-001").unwrap();
    assert!(
        run["outcome"]["pass_rate"].as_f64().unwrap() >= 0.95,
        "{run}"
    );
}

#[test]
fn a_go_command_ends_with_not_applicable_layers_and_no_gc_rounds() {
    let p = Project::fixture("go-module");
    // The plan already says which tasks will have nothing to do.
    let dry = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test tally",
            "--pipeline",
            "targeted",
            "--dry-run",
        ])
        .run();
    dry.assert_code(0);
    let will_run = tasks_that_will_run(&dry.stdout);
    assert_eq!(will_run, ["STRATEGY-001"], "{}", dry.stdout);
    assert!(
        dry.stdout.contains("no Go library source file in scope"),
        "{}",
        dry.stdout
    );
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test tally",
            "--pipeline",
            "standard",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let tasks = p.tasks(&id);
    assert!(
        !tasks
            .iter()
            .any(|t| t["id"].as_str().unwrap().contains("-fix-")),
        "{tasks:#?}"
    );
    for t in tasks.iter().filter(|t| t["layer"].is_string()) {
        assert_eq!(t["status"], "not_applicable", "{t}");
        assert!(
            t["reason"]
                .as_str()
                .unwrap()
                .contains("no Go library source file in scope"),
            "{t}"
        );
    }
    assert!(
        out.stdout.contains("L1-unit: not applicable"),
        "{}",
        out.stdout
    );
    let dir = p.session_dir(&id);
    assert!(dir.join("results/L1-unit-not-applicable.json").is_file());
    let report = read_json(&dir.join("analysis/report.json"));
    for l in report["layers"].as_array().unwrap() {
        assert_eq!(l["gate"], "NotApplicable", "{l}");
        assert!(l["not_applicable"].is_string(), "{l}");
    }
    assert_eq!(report["score"]["gc_budget"], 0, "{report:#}");
    // Nothing had anything to test: no score rather than a 0 that reads as a verdict.
    assert_eq!(report["scored"], false, "{report:#}");
    assert!(out.stdout.contains("not scored"), "{}", out.stdout);
    // A not applicable layer has nothing to raise.
    let raise = p.cmd(&["deepen", &id, "--layer", "L1"]).run();
    raise.assert_code(2);
    assert!(raise.stderr.contains("not applicable"), "{}", raise.stderr);
    let status = p.cmd(&["status", &id]).run();
    assert!(status.stdout.contains("n/a"), "{}", status.stdout);
}

#[test]
fn l3_on_a_library_without_entry_points_is_not_applicable_and_out_of_the_score() {
    let p = Project::fixture("python-calc");
    // The plan foresees it: L3's tasks are not among those that will run.
    let dry = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test calc",
            "--pipeline",
            "comprehensive",
            "--dry-run",
        ])
        .run();
    dry.assert_code(0);
    let will_run = tasks_that_will_run(&dry.stdout);
    assert!(
        will_run.iter().any(|t| t == "TESTRUN-002") && !will_run.iter().any(|t| t == "TESTRUN-003"),
        "{}",
        dry.stdout
    );
    assert!(dry.stdout.contains("no entry points"), "{}", dry.stdout);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test calc",
            "--pipeline",
            "comprehensive",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let l3: Vec<Value> = p
        .tasks(&id)
        .into_iter()
        .filter(|t| t["layer"] == "L3-e2e")
        .collect();
    assert_eq!(l3.len(), 2, "no GC round for L3: {l3:#?}");
    assert!(l3.iter().all(|t| t["status"] == "not_applicable"));
    assert!(
        l3[0]["reason"]
            .as_str()
            .unwrap()
            .contains("no entry points"),
        "{}",
        l3[0]
    );
    let report = read_json(&p.session_dir(&id).join("analysis/report.json"));
    // L1 and L2 met their gates; L3 does not pull the score down.
    assert!(
        report["quality_score"].as_f64().unwrap() >= 80.0,
        "{report:#}"
    );
}

#[test]
fn the_plan_gate_takes_enter_as_proceed_and_shows_no_unlayered_group() {
    let p = Project::fixture("python-calc");
    // A real terminal (the gate asks only there): `script` gives the command a pty.
    let cmd = [
        BIN,
        "run",
        "test calc",
        "--pipeline",
        "targeted",
        "--completion",
        "keep",
    ]
    .iter()
    .map(|w| shlex::try_quote(w).unwrap().into_owned())
    .collect::<Vec<_>>()
    .join(" ");
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .current_dir(&p.repo)
        .env("TEAM_TESTING_SESSIONS", &p.sessions)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script runs");
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    // Enter alone, after the question has had time to appear; stdin stays open to the end.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    stdin.write_all(b"\n").unwrap();
    let out = wait(child);
    drop(stdin);
    out.assert_code(0);
    assert!(out.stdout.contains("Run this plan?"), "{}", out.stdout);
    assert!(
        !out.stdout.contains("is not one of the choices"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("(no layer)"), "{}", out.stdout);
    assert!(out.stdout.contains("Pipeline completed"), "{}", out.stdout);
}

#[test]
fn a_targeted_dry_run_lists_exactly_the_tasks_that_then_run() {
    let p = Project::fixture("python-calc");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test calc",
            "--pipeline",
            "targeted",
            "--dry-run",
        ])
        .run();
    out.assert_code(0);
    assert!(!out.stdout.contains("(no layer)"), "{}", out.stdout);
    assert!(!out.stdout.contains("analyst:"), "{}", out.stdout);
    let listed = tasks_that_will_run(&out.stdout);
    assert_eq!(listed, ["STRATEGY-001", "TESTGEN-001", "TESTRUN-001"]);
    let id = out.session_id();
    p.cmd(&["resume", &id, "--completion", "keep"])
        .run()
        .assert_code(0);
    let ran: Vec<String> = p
        .tasks(&id)
        .iter()
        .filter(|t| t["status"] == "completed")
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ran, listed);
}

#[test]
fn every_printed_hint_works_pasted_from_where_the_user_is() {
    let p = Project::fixture("python-calc");
    // The user stands elsewhere and names both the repository and the sessions folder.
    let elsewhere = p.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let sessions = p.tmp.path().join("my sessions");
    let repo = p.repo.to_str().unwrap();
    let cmd = |args: &[&str]| {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        run_bare(BIN, &args, &elsewhere)
    };
    let where_ = ["--repo", repo, "--sessions-dir", sessions.to_str().unwrap()];
    let dry = cmd(&[&["run", "test calc", "--dry-run"], &where_[..]].concat());
    dry.assert_code(0);
    let dry_hints = hints(&dry.stdout);
    assert_eq!(dry_hints.len(), 1, "{}", dry.stdout);
    // The dry run's `resume`, then the completed run's hints, then status's.
    let resumed = run_hint(&format!("{} --completion keep", dry_hints[0]), &elsewhere);
    resumed.assert_code(0);
    let done_hints = hints(&format!("{}{}", resumed.stdout, resumed.stderr));
    assert!(
        done_hints.iter().any(|h| h.contains(" apply "))
            && done_hints.iter().any(|h| h.contains(" report ")),
        "{}",
        resumed.stdout
    );
    assert!(resumed.stdout.contains("Report: "), "{}", resumed.stdout);
    let session_path = printed_session_path(&resumed);
    let status = cmd(&["status", session_path.to_str().unwrap()]);
    status.assert_code(0);
    assert!(!status.stdout.contains(" resume "), "{}", status.stdout);
    let status_hints = hints(&status.stdout);
    assert!(!status_hints.is_empty(), "{}", status.stdout);
    let mut distinct: Vec<&String> = done_hints.iter().chain(&status_hints).collect();
    distinct.sort();
    distinct.dedup();
    for hint in distinct {
        assert!(!hint.contains('|'), "not a command: {hint}");
        let ran = run_hint(hint, &elsewhere);
        assert_eq!(
            ran.code, 0,
            "{hint}\n--- stdout\n{}\n--- stderr\n{}",
            ran.stdout, ran.stderr
        );
    }
}

#[test]
fn help_lists_every_exit_code() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for code in ["0 ", "1 ", "2 ", "3 ", "130 "] {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(code)),
            "exit code {code}missing:\n{text}"
        );
    }
}

#[test]
fn the_sandbox_is_described_once_and_sessions_stay_out_of_git_status() {
    let p = Project::fixture("python-calc");
    // The default sessions folder: inside the repository, in .workflow/.
    let run = |task: &str| {
        let args = ["run", task, "--pipeline", "targeted", "-y"].map(String::from);
        run_bare(BIN, &args, &p.repo)
    };
    let first = run("test calc");
    first.assert_code(0);
    assert_eq!(
        first.stderr.matches("sandbox: filesystem").count(),
        1,
        "{}",
        first.stderr
    );
    assert_eq!(first.stderr.matches(".git/info/exclude").count(), 1);
    let exclude = std::fs::read_to_string(p.repo.join(".git/info/exclude")).unwrap();
    assert!(exclude.contains("/.workflow/"), "{exclude}");
    assert!(!p.repo.join(".gitignore").exists());
    assert_eq!(git_status(&p.repo, false), "");
    // Said once: the second session finds the line there.
    let second = run("test calc again");
    second.assert_code(0);
    assert!(
        !second.stderr.contains(".git/info/exclude"),
        "{}",
        second.stderr
    );
    assert_eq!(
        std::fs::read_to_string(p.repo.join(".git/info/exclude"))
            .unwrap()
            .matches("/.workflow/")
            .count(),
        1
    );
}

#[test]
fn sessions_kept_elsewhere_in_the_repository_are_excluded_and_nothing_wider() {
    let p = Project::fixture("python-calc");
    // Sessions in a folder next to the project's own tests: only that folder leaves git status.
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test calc",
            "--pipeline",
            "targeted",
            "-y",
            "--sessions-dir",
            "tests/tt-sessions",
        ])
        .run();
    out.assert_code(0);
    let exclude = std::fs::read_to_string(p.repo.join(".git/info/exclude")).unwrap();
    assert!(exclude.contains("\n/tests/tt-sessions/\n"), "{exclude}");
    assert!(!exclude.contains("\n/tests/\n"), "{exclude}");
    // A new test file beside them is still seen by git.
    p.write("tests/test_new.py", "def test_new():\n    assert True\n");
    assert_eq!(git_status(&p.repo, false), "?? tests/test_new.py");
}

#[test]
fn test_files_that_do_not_load_are_classified_like_failures() {
    let p = Project::fixture("python-loaderrors");
    let roles = copy_roles(&p);
    let out = p
        .run_with_roles(&roles, "test the shop", "targeted")
        .arg("-y")
        .env("TT_FIXTURE_TESTS", &generated("python-loaderrors"))
        .run();
    assert!(out.code == 0, "{}\n{}", out.stdout, out.stderr);
    let id = out.session_id();
    let dir = p.session_dir(&id);
    let run = read_json(&dir.join("results/run-001.json"));
    let class_of = |file: &str| -> Value {
        run["load_errors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["file"] == file)
            .unwrap_or_else(|| panic!("{file} not among {:#}", run["load_errors"]))["verdict"]
            .clone()
    };
    // A module that exists nowhere: the test is wrong.
    assert_eq!(class_of("test_nowhere.py")["classification"], "test_defect");
    // A declared dependency that is not installed: the machine, with the command that fixes it.
    let dep = class_of("test_needs_dependency.py");
    assert_eq!(dep["classification"], "env_issue", "{dep}");
    assert!(
        dep["install"].as_str().unwrap().contains("pip install")
            && dep["install"].as_str().unwrap().contains("frobnicate-lib"),
        "{dep}"
    );
    // A syntax error in the project's own code: a code defect, located.
    let broken = class_of("test_labels.py");
    assert_eq!(broken["classification"], "code_defect", "{broken}");
    assert!(
        broken["location"]
            .as_str()
            .unwrap()
            .contains("shop/labels.py"),
        "{broken}"
    );
    // The test that loads still ran and passed.
    assert_eq!(run["passed"], 1, "{run:#}");
    // The report says the same.
    let json = p.cmd(&["report", &id, "--format", "json"]).run();
    json.assert_code(0);
    let report: Value = serde_json::from_str(&json.stdout).unwrap();
    let findings = report["findings"]["load_errors"].as_array().unwrap();
    assert_eq!(findings.len(), 3, "{findings:#?}");
    assert!(report["findings"]["code_defects"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["test"] == "test_labels.py"));
    let md = p.cmd(&["report", &id]).run().stdout;
    assert!(md.contains("Test files that do not load"), "{md}");
    assert!(md.contains("frobnicate-lib"), "{md}");
}
