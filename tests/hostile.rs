//! The hostile-input catalogue. Each case: the error class (exit code and the message that names
//! the file and the problem, or the session marked failed with the reason), the prior state intact,
//! no panic. Cases 1–12 and 33–44 are tested where their feature lives; the rest here.
//!
//! | #  | input                                            | expected                                                    | test |
//! |----|--------------------------------------------------|-------------------------------------------------------------|------|
//! | 1  | malformed team-config.json                       | exit 2, `<file>: invalid team config`                       | errors::malformed_spec_names_the_file |
//! | 2  | team config missing a field                      | exit 2, names the file and the field                        | errors::spec_missing_a_field_names_it |
//! | 3  | cyclic pipeline                                  | exit 2, `task X is part of a dependency cycle`              | errors::cyclic_pipeline_names_the_task |
//! | 4  | dangling blockedBy                               | exit 2, names the task and the missing id                   | errors::dangling_dependency_names_the_task |
//! | 5  | task owned by an unknown role                    | exit 2, names the task and the role                         | errors::unknown_owner_names_the_task |
//! | 6  | role file with bad frontmatter                   | exit 2, `<role.md>: invalid frontmatter`                    | errors::bad_role_file_names_the_file |
//! | 7  | two roles with one prefix                        | exit 2, `prefix P is already used by role R`                | errors::duplicate_prefix_is_refused |
//! | 8  | task text `$(rm -rf ~)`, `../../etc`             | a safe session name, the text kept as text                  | errors::hostile_task_text_makes_a_safe_session_name |
//! | 9  | repo path that does not exist                    | exit 2, `repository … does not exist`                       | errors::missing_repo_is_an_error |
//! | 10 | unknown pipeline                                 | exit 2, lists the pipelines                                 | errors::unknown_pipeline_is_an_error |
//! | 11 | unknown session                                  | exit 2, lists the sessions                                  | errors::unknown_session_lists_the_candidates |
//! | 12 | a folder that is not a git repository            | runs, warns: the whole project is in scope                  | errors::plain_folder_runs_with_a_warning |
//! | 13 | empty task text                                  | exit 2, no session created                                  | an_empty_task_is_refused_before_a_session_exists |
//! | 14 | empty git repository (no commits)                | runs, warns: every file counts as added                     | an_empty_git_repo_runs_with_a_warning |
//! | 15 | repo path that is a file                         | exit 2, `repository … is not a directory`                   | a_repo_that_is_a_file_is_refused |
//! | 16 | binary files in the diff                         | runs; binary files are no source to test                    | binary_files_in_the_diff_are_no_trouble |
//! | 17 | session.json truncated to zero                   | exit 2, `session.json: file is empty`; files untouched      | a_state_file_emptied_or_garbled_is_refused_and_kept |
//! | 18 | tasks.json garbage                               | exit 2, `tasks.json: invalid JSON`; files untouched         | a_state_file_emptied_or_garbled_is_refused_and_kept |
//! | 19 | tasks.json edited into a cycle                   | exit 2, `tasks.json: task X: … dependency cycle`            | a_state_file_emptied_or_garbled_is_refused_and_kept |
//! | 20 | garbage lines in the middle of messages.jsonl    | `log` warns naming each line; resume runs; lines kept       | garbage_lines_in_the_log_are_named_skipped_and_kept |
//! | 21 | meta.json unreadable                             | kept as meta.json.corrupt-1, rebuilt, the repair logged     | an_unreadable_meta_json_is_kept_aside_and_rebuilt |
//! | 22 | sessions dir that cannot be created              | exit 2, names the folder                                    | an_unwritable_sessions_dir_is_refused |
//! | 23 | disk full writing a state file or an outcome (injected ENOSPC) | the run stops with exit 2, or (an outcome) the task is retried; resume ends it | a_full_disk_stops_the_run_and_resume_finishes_it |
//! | 24 | disk full writing the log (injected ENOSPC)      | exit 2 naming messages.jsonl; resume ends it                | a_full_disk_stops_the_run_and_resume_finishes_it |
//! | 25 | --spec FILE that does not exist                  | exit 2, names the file                                      | missing_spec_or_roles_dir_is_refused |
//! | 26 | --roles-dir that does not exist                  | exit 2, names the folder                                    | missing_spec_or_roles_dir_is_refused |
//! | 27 | a role whose command is not installed            | pipeline failed (exit 1), reason `cannot start …`           | a_role_command_that_is_not_installed_fails_the_task_with_the_reason |
//! | 28 | 1 GB of output (a 512 MB line, 512 MB of lines)  | runs; at most 1 MiB of a line kept (BENCHMARKS.md: peak RSS) | a_gigabyte_of_output_is_read_and_dropped |
//! | 29 | children that ignore SIGTERM                     | the run ends; no child is left                              | children_that_ignore_sigterm_are_killed_with_their_group |
//! | 30 | JUnit XML with an entity bomb                    | no expansion; an error or the literal, at once              | junit_with_an_entity_bomb_is_not_expanded |
//! | 31 | LCOV with negative counts                        | error naming the file and the line                          | lcov_with_negative_counts_is_an_error_naming_the_line |
//! | 32 | coverage paths outside the repository            | left out of the figures and named                           | coverage_of_files_outside_the_repo_is_left_out |
//! | 33 | --target L9=50, --coverage-preset lax            | exit 2 naming the value                                     | bad_run_controls_are_refused_naming_the_value |
//! | 34 | a session locked by a live process               | exit 2 naming the pid                                       | resume::a_locked_session_is_refused_naming_the_holder |
//! | 35 | malformed team-testing.toml                      | exit 2 naming the file, no session made                     | agents::a_bad_backend_config_is_refused_before_a_session_is_made |
//! | 36 | roles add: duplicate prefix, unknown backend     | exit 2 naming the file; tasks.json unchanged                | dynamic::a_role_file_with_a_duplicate_prefix_or_an_unknown_backend_is_an_error_naming_it |
//! | 37 | a resumed session whose repository is gone       | exit 2 naming the path                                      | views::resuming_an_example_whose_repo_is_gone_is_a_clear_error |
//! | 38 | a role printing garbage instead of its outcome   | task failed with the line quoted                            | pipelines::a_role_printing_garbage_fails_with_the_reason |
//! | 39 | a REQ-*.md that is a symbolic link               | exit 2 naming it, no session made                           | scenarios::issue31_a_requirement_file_that_is_a_symbolic_link_is_refused_naming_it |
//! | 40 | scenarios.csv a folder or a FIFO                 | exit 2 naming it; tasks.json unchanged                      | scenarios::issue31_a_plan_that_is_not_a_regular_file_is_an_error_naming_it |
//! | 41 | test_file naming the generator's own file        | exit 2 naming the row; tasks.json unchanged                 | scenarios::issue31_a_test_file_naming_the_generators_own_file_is_refused_on_resume |
//! | 42 | HTML in a requirement's title or criterion       | escaped in the Markdown reports                             | scenarios::issue31_the_markdown_report_escapes_html_from_requirement_files |
//! | 43 | a criterion starting with `=` (CSV formula)      | `'=` in every CSV written, the name kept on reading         | scenarios::issue31_formula_like_scenario_names_are_neutralised_in_every_csv_and_kept_on_reading |
//! | 44 | a fix patch making a symbolic link               | exit 2 naming the file; nothing written                     | apply_fixes::issue31_apply_fixes_refuses_a_patch_that_makes_a_symbolic_link |

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use team_testing::testing::report::CoverageReport;

use crate::common::*;

/// Every file under `dir` with its bytes: the state before, to compare with the state after.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn refused(out: &Output, needles: &[&str]) {
    out.assert_code(2);
    for n in needles {
        assert!(out.stderr.contains(n), "missing {n:?} in:\n{}", out.stderr);
    }
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

/// A scripted standard run kept paused, ready to be tampered with.
fn kept_session(p: &Project) -> (String, PathBuf) {
    let out = p
        .scripted_run("test the calculator", "standard")
        .args(&["--completion", "keep"])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let dir = p.session_dir(&id);
    (id, dir)
}

#[test]
fn an_empty_task_is_refused_before_a_session_exists() {
    let p = Project::fixture("python-calc");
    refused(
        &p.cmd(&["run", "--max-mutants", QUICK_MUTANTS, "  "]).run(),
        &["the task text is empty"],
    );
    assert!(!p.sessions.exists());
}

#[test]
fn an_empty_git_repo_runs_with_a_warning() {
    let p = Project::plain();
    git(&p.repo, &["init", "-q"]);
    let out = p
        .scripted_run("test it", "targeted")
        .args(&["--completion", "keep"])
        .run();
    out.assert_code(0);
    assert!(
        out.stderr.contains("the repository has no commits yet"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_repo_that_is_a_file_is_refused() {
    let p = Project::fixture("python-calc");
    let file = p.repo.join("README.md");
    refused(
        &p.cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "t",
            "--repo",
            file.to_str().unwrap(),
        ])
        .run(),
        &["README.md does not exist or is not a directory"],
    );
    assert!(!p.sessions.exists());
}

#[test]
fn binary_files_in_the_diff_are_no_trouble() {
    let p = Project::fixture("python-calc");
    let blob: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(p.repo.join("calc/blob.bin"), &blob).unwrap();
    std::fs::write(p.repo.join("calc/nul.py"), b"x = 1\x00\x01\xff\n").unwrap();
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "targeted",
            "--completion",
            "keep",
        ])
        .run();
    out.assert_code(0);
    let analysis = read_json(&p.session_dir(&out.session_id()).join("task-analysis.json"));
    let files = analysis["scope"]["files"].to_string();
    assert!(files.contains("calc/blob.bin"), "{files}");
    // The repository is as it was.
    assert_eq!(std::fs::read(p.repo.join("calc/blob.bin")).unwrap(), blob);
}

#[test]
fn a_state_file_emptied_or_garbled_is_refused_and_kept() {
    let p = Project::fixture("python-calc");
    let (id, dir) = kept_session(&p);
    let cases: [(&str, &[u8], &str); 3] = [
        ("session.json", b"", "session.json: file is empty"),
        ("tasks.json", b"garbage{", "tasks.json: invalid JSON"),
        ("tasks.json", b"", "tasks.json: file is empty"),
    ];
    for (file, bytes, message) in cases {
        let good = std::fs::read(dir.join(file)).unwrap();
        std::fs::write(dir.join(file), bytes).unwrap();
        let before = snapshot(&dir);
        refused(&p.cmd(&["resume", &id]).run(), &[message]);
        assert_eq!(snapshot(&dir), before, "{file}: resume changed the session");
        std::fs::write(dir.join(file), good).unwrap();
    }
    // A cycle edited into tasks.json names the file and the task.
    let good = std::fs::read(dir.join("tasks.json")).unwrap();
    let mut tasks: Value = serde_json::from_slice(&good).unwrap();
    tasks["tasks"][0]["blockedBy"] = serde_json::json!(["TESTANA-001"]);
    tasks["tasks"][0]["status"] = serde_json::json!("pending");
    std::fs::write(dir.join("tasks.json"), tasks.to_string()).unwrap();
    let before = snapshot(&dir);
    refused(
        &p.cmd(&["resume", &id]).run(),
        &["tasks.json: task", "dependency cycle"],
    );
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn garbage_lines_in_the_log_are_named_skipped_and_kept() {
    let p = Project::fixture("python-calc");
    let (id, dir) = kept_session(&p);
    let log = dir.join(".msg/messages.jsonl");
    let mut lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let total = lines.len();
    lines.insert(4, "this is garbage".into());
    lines.insert(9, "{\"half\": ".into());
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let out = p.cmd(&["log", &id]).run();
    out.assert_code(0);
    assert_eq!(out.stdout.lines().count(), total);
    assert!(
        out.stderr.contains("messages.jsonl line 5: not a message")
            && out.stderr.contains("messages.jsonl line 10: not a message"),
        "{}",
        out.stderr
    );
    p.cmd(&["resume", &id, "--completion", "keep"])
        .run()
        .assert_code(0);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("this is garbage\n") && text.contains("{\"half\": \n"));
}

#[test]
fn an_unreadable_meta_json_is_kept_aside_and_rebuilt() {
    let p = Project::fixture("python-calc");
    let (id, dir) = kept_session(&p);
    std::fs::write(dir.join(".msg/meta.json"), "{not json").unwrap();
    let out = p.cmd(&["resume", &id, "--completion", "keep"]).run();
    out.assert_code(0);
    assert!(out.stderr.contains("meta.json.corrupt-1"), "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join(".msg/meta.json.corrupt-1")).unwrap(),
        "{not json"
    );
    assert!(read_json(&dir.join(".msg/meta.json"))["role_state"].is_object());
    assert!(p
        .messages(&id)
        .iter()
        .any(|m| m["type"] == "error" && m["summary"].as_str().unwrap().contains("corrupt-1")));
}

#[test]
fn an_unwritable_sessions_dir_is_refused() {
    let p = Project::fixture("python-calc");
    // Root writes anywhere, so "unwritable" is a path through a file.
    let under_a_file = p.repo.join("README.md").join("sessions");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "t",
            "--sessions-dir",
            under_a_file.to_str().unwrap(),
        ])
        .run();
    refused(&out, &["README.md/sessions", "Not a directory"]);
}

#[test]
fn a_full_disk_stops_the_run_and_resume_finishes_it() {
    // (point, what must happen): the log and the state files stop the run; an outcome record
    // that cannot be written leaves its task unfinished, and the retry finishes it. Which file a
    // numbered state write hits depends on the threads' timing, so it may do either.
    let cases = [
        ("log.fsync:6:enospc", "stops"),
        ("outcome.write:2:enospc", "retries"),
        ("state.rename:12:enospc", "either"),
        ("state.rename:18:enospc", "either"),
    ];
    for (point, expect) in cases {
        let p = Project::fixture("python-calc");
        let out = p
            .scripted_run("test the calculator", "standard")
            .args(&["--completion", "keep"])
            .env("TEAM_TESTING_CRASH_AT", point)
            .run();
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        let stopped = out.code == 2;
        if stopped {
            assert!(
                out.stderr.contains("No space left on device")
                    && out.stderr.contains("team-testing resume"),
                "{point}: {}",
                out.stderr
            );
        } else {
            out.assert_code(0);
            assert!(
                out.stdout.contains("cannot record the outcome"),
                "{point}: {}",
                out.stdout
            );
        }
        match expect {
            "stops" => assert!(stopped, "{point} did not stop the run"),
            "retries" => assert!(!stopped, "{point} stopped the run"),
            _ => {}
        }
        let id = out.session_id();
        p.cmd(&["resume", &id, "--completion", "keep"])
            .run()
            .assert_code(0);
        assert!(p.tasks(&id).iter().all(|t| t["status"] == "completed"));
    }
}

#[test]
fn missing_spec_or_roles_dir_is_refused() {
    let p = Project::fixture("python-calc");
    refused(
        &p.cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "t",
            "--spec",
            "no-such-config.json",
        ])
        .run(),
        &["no-such-config.json", "No such file"],
    );
    refused(
        &p.cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "t",
            "--roles-dir",
            "no-such-roles",
        ])
        .run(),
        &["no-such-roles", "No such file"],
    );
    assert!(!p.sessions.exists());
}

#[test]
fn a_role_command_that_is_not_installed_fails_the_task_with_the_reason() {
    let p = Project::fixture("python-calc");
    let roles = p.write_role(
        "strategist",
        "---\nrole: strategist\nprefix: STRATEGY\ninner_loop: false\nmessage_types: []\nbackend: command\ncommand: [\"no-such-tool-xyz\"]\n---\nx\n",
    );
    let out = p
        .run_with_roles(&roles, "t", "targeted")
        .args(&["--completion", "keep"])
        .run();
    out.assert_code(1);
    let tasks = p.tasks(&out.session_id());
    assert_eq!(tasks[0]["status"], "failed");
    assert!(
        tasks[0]["reason"]
            .as_str()
            .unwrap()
            .contains("cannot start no-such-tool-xyz"),
        "{}",
        tasks[0]
    );
    assert_eq!(tasks[1]["status"], "skipped");
}

/// A strategist role that prints `script`'s output, then a completed outcome.
fn printing_strategist(p: &Project, script: &str) -> PathBuf {
    let text = format!(
        "---\nrole: strategist\nprefix: STRATEGY\ninner_loop: false\nmessage_types: []\nbackend: command\ncommand: [\"python3\", \"-c\", {}]\ntimeout_s: 120\n---\nx\n",
        serde_json::to_string(script).unwrap()
    );
    let roles = p.write_role("strategist", &text);
    for r in ["generator", "executor"] {
        let body = std::fs::read_to_string(scripted_roles().join(r).join("role.md")).unwrap();
        let script = scripted_roles().join("role.py");
        p.write_role(
            r,
            &body.replace("{role_dir}/../role.py", script.to_str().unwrap()),
        );
    }
    roles
}

#[test]
fn a_gigabyte_of_output_is_read_and_dropped() {
    let p = Project::fixture("python-calc");
    let roles = printing_strategist(
        &p,
        "import sys\nw = sys.stdout.buffer.write\nmb = b'x' * (1 << 20)\n\
         for _ in range(512): w(mb)\nw(b'\\n')\n\
         for _ in range(512): w(mb[:1023] + b'\\n')\n\
         print('{\"status\": \"completed\", \"summary\": \"printed 1 GB\"}')",
    );
    let out = p
        .run_with_roles(&roles, "t", "targeted")
        .args(&["--completion", "keep"])
        .run();
    out.assert_code(0);
    let tasks = p.tasks(&out.session_id());
    assert_eq!(tasks[0]["outcome"]["summary"], "printed 1 GB");
}

#[test]
fn children_that_ignore_sigterm_are_killed_with_their_group() {
    let p = Project::fixture("python-calc");
    let pids = p.tmp.path().join("pids");
    let roles = printing_strategist(
        &p,
        &format!(
            "import os, signal, time\n\
             for _ in range(3):\n\
             \x20   if os.fork() == 0:\n\
             \x20       signal.signal(signal.SIGTERM, signal.SIG_IGN)\n\
             \x20       open({:?}, 'a').write(f'{{os.getpid()}}\\n')\n\
             \x20       time.sleep(600)\n\
             \x20       os._exit(0)\n\
             time.sleep(0.5)\n\
             print('{{\"status\": \"completed\", \"summary\": \"left 3 children\"}}')",
            pids.to_str().unwrap()
        ),
    );
    let out = p
        .run_with_roles(&roles, "t", "targeted")
        .args(&["--completion", "keep"])
        .run();
    out.assert_code(0);
    let text = std::fs::read_to_string(&pids).unwrap();
    let children: Vec<i32> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(children.len(), 3);
    assert!(
        wait_for(std::time::Duration::from_secs(10), || {
            children.iter().all(|pid| {
                !Path::new(&format!("/proc/{pid}")).exists()
                    || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                        s.rsplit_once(')')
                            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
                    })
            })
        }),
        "children survived: {children:?}"
    );
}

#[test]
fn junit_with_an_entity_bomb_is_not_expanded() {
    let mut bomb =
        String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n");
    for i in 1..=9 {
        let prev = if i == 1 {
            "lol".to_string()
        } else {
            format!("lol{}", i - 1)
        };
        bomb.push_str(&format!(
            "<!ENTITY lol{i} \"{}\">\n",
            format!("&{prev};").repeat(10)
        ));
    }
    bomb.push_str("]>\n<testsuite><testcase classname=\"t\" name=\"&lol9;\"/></testsuite>\n");
    let started = std::time::Instant::now();
    let parsed =
        team_testing::testing::junit::parse_junit_str(&bomb, Path::new("results/junit-001.xml"));
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    match parsed {
        Err(e) => assert!(e.to_string().contains("junit-001.xml"), "{e}"),
        Ok(cases) => {
            // Left as written: at most the entity's name, never a billion "lol".
            assert!(cases.iter().all(|c| c.name.len() < 100), "{cases:?}");
        }
    }
}

#[test]
fn lcov_with_negative_counts_is_an_error_naming_the_line() {
    let text = "TN:\nSF:src/lib.rs\nDA:1,3\nDA:2,-5\nend_of_record\n";
    let err = team_testing::testing::lcov::parse_lcov_str(text, Path::new("results/lcov-001.info"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("lcov-001.info") && err.contains("line 4") && err.contains("-5"),
        "{err}"
    );
}

#[test]
fn coverage_of_files_outside_the_repo_is_left_out() {
    let text = "SF:/etc/passwd\nDA:1,1\nend_of_record\nSF:../other/x.rs\nDA:1,0\nend_of_record\n\
                SF:src/lib.rs\nDA:1,1\nDA:2,0\nend_of_record\n";
    let mut report: CoverageReport =
        team_testing::testing::lcov::parse_lcov_str(text, Path::new("lcov.info")).unwrap();
    let outside = report.drop_outside();
    assert_eq!(outside, ["/etc/passwd", "../other/x.rs"]);
    assert_eq!(report.line_percent(|_| true), Some(50.0));
}

#[test]
fn bad_run_controls_are_refused_naming_the_value() {
    let p = Project::fixture("python-calc");
    refused(
        &p.cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "t",
            "--target",
            "L9=50",
        ])
        .run(),
        &["--target L9=50: no layer"],
    );
    refused(
        &p.cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "t",
            "--coverage-preset",
            "lax",
        ])
        .run(),
        &["--coverage-preset lax"],
    );
    assert!(!p.sessions.exists());
}
