//! The sandbox around the project's code, end to end: the built-in generator and real pytest
//! runs against code that reaches outside its project.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;
use team_testing::sandbox::{capabilities, Capabilities};

/// Writes outside are blocked (Landlock or read-only mounts); the tests below need at least that.
fn contained() -> bool {
    let caps = capabilities();
    let ok = caps.landlock_abi.is_some() || caps.mountns;
    if !ok {
        eprintln!("skipped: no filesystem sandbox here: {:?}", caps.missing);
    }
    ok
}

/// Every mechanism, as on the project's machine and CI.
fn complete(caps: &Capabilities) -> bool {
    caps.landlock_abi.is_some() && caps.netns && caps.mountns && caps.pids_cgroup.is_some()
}

/// Things outside the project that hostile code goes for, and a listener on the loopback.
struct Outside {
    dir: tempfile::TempDir,
    listener: TcpListener,
}

impl Outside {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("victim.txt"), "keep me").unwrap();
        std::fs::write(dir.path().join("chmod.txt"), "mode").unwrap();
        std::fs::set_permissions(
            dir.path().join("chmod.txt"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Outside { dir, listener }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn env(&self, cmd: Cmd) -> Cmd {
        let port = self.listener.local_addr().unwrap().port().to_string();
        cmd.env("HOSTILE_VICTIM", self.path("victim.txt").to_str().unwrap())
            .env("HOSTILE_CHMOD", self.path("chmod.txt").to_str().unwrap())
            .env("HOSTILE_HOME", self.path("home").to_str().unwrap())
            .env("HOSTILE_PORT", &port)
    }

    /// Nothing outside changed and nobody connected (as far as this machine's mechanisms go).
    fn assert_untouched(&self) {
        let caps = capabilities();
        assert_eq!(
            std::fs::read_to_string(self.path("victim.txt")).unwrap(),
            "keep me"
        );
        let mode = std::fs::metadata(self.path("chmod.txt"))
            .unwrap()
            .permissions()
            .mode();
        if caps.mountns {
            assert_eq!(mode & 0o777, 0o644, "the outside file's mode changed");
        }
        let home: Vec<_> = std::fs::read_dir(self.path("home")).unwrap().collect();
        assert!(
            home.is_empty(),
            "something was written into the home folder"
        );
        if caps.netns || caps.landlock_abi.unwrap_or(0) >= 4 {
            let accepted = self.listener.accept();
            assert!(
                accepted.is_err(),
                "the listener on 127.0.0.1 saw a connection"
            );
        }
        if let Some(home) = std::env::var_os("HOME") {
            assert!(!Path::new(&home).join("hostile-was-here.txt").exists());
        }
    }
}

/// `team-testing report ID --format FORMAT` (the targeted pipeline has no analyst task).
fn report(p: &Project, id: &str, format: &str) -> String {
    let out = p.cmd(&["report", id, "--format", format]).run();
    out.assert_code(0);
    out.stdout
}

fn protections(p: &Project, id: &str) -> Value {
    read_json(&p.session_dir(id).join("session.json"))["protections"].clone()
}

#[test]
fn the_builtin_generator_on_code_that_reaches_out_is_contained_and_each_attempt_reported() {
    if !contained() {
        return;
    }
    let p = Project::fixture("python-hostile");
    let outside = Outside::new();
    let out = outside
        .env(p.cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the reach module",
            "--pipeline",
            "targeted",
            "-y",
        ]))
        .run();
    out.assert_code(0);
    outside.assert_untouched();
    assert_eq!(git_status(&p.repo, true), "", "the repository changed");
    let id = out.session_id();
    assert!(
        out.stderr.contains("team-testing: sandbox: filesystem: "),
        "{}",
        out.stderr
    );

    // Each call that reached outside is a finding of the generator, with the call that made it:
    // a side_effect where the effect audit saw the attempt, sandbox_denied for a limit.
    let tasks = p.tasks(&id);
    let generator = tasks
        .iter()
        .find(|t| t["owner"] == "generator")
        .expect("a generator task");
    let findings = generator["outcome"]["data"]["findings"].as_array().unwrap();
    let blocked = |function: &str| {
        findings
            .iter()
            .find(|f| {
                matches!(f["kind"].as_str(), Some("side_effect" | "sandbox_denied"))
                    && f["function"] == format!("reach.harm.{function}")
            })
            .unwrap_or_else(|| panic!("no finding for {function} in {findings:?}"))
    };
    let full = complete(capabilities());
    let mut expected = vec!["delete_victim", "write_home", "hoard"];
    if full {
        expected.extend(["chmod_outside", "phone_home", "fork_forever"]);
    }
    for function in expected {
        let f = blocked(function);
        assert_eq!(f["call"], format!("{function}()"), "{f}");
        assert!(!f["actual"].as_str().unwrap().is_empty(), "{f}");
    }
    assert!(blocked("delete_victim")["actual"]
        .as_str()
        .unwrap()
        .contains("victim.txt"));
    if full {
        assert!(blocked("phone_home")["actual"]
            .as_str()
            .unwrap()
            .starts_with("connects to"));
    }

    // No test keeps a blocked call; the harmless function still gets its tests.
    let tests_dir = p.session_dir(&id).join("tests/L1-unit");
    let source = std::fs::read_to_string(tests_dir.join("test_reach_harm.py")).unwrap();
    assert!(source.contains("add("), "{source}");
    for function in [
        "delete_victim",
        "write_home",
        "chmod_outside",
        "phone_home",
        "fork_forever",
        "hoard",
    ] {
        assert!(!source.contains(&format!("{function}(")), "{source}");
    }

    // The report says what was contained and what was stopped.
    let report = report(&p, &id, "md");
    assert!(report.contains("## Sandbox"), "{report}");
    assert!(
        report.contains("| reach.harm.delete_victim | `delete_victim()` |"),
        "{report}"
    );
    let json: Value = serde_json::from_str(&self::report(&p, &id, "json")).unwrap();
    let reported = json["sandbox"]["blocked"].as_array().unwrap().len()
        + json["findings"]["side_effects"].as_array().unwrap().len();
    assert!(reported >= expected_len(full), "{json}");
}

fn expected_len(full: bool) -> usize {
    if full {
        6
    } else {
        3
    }
}

#[test]
fn a_test_suite_that_reaches_out_is_contained_the_same_way() {
    if !contained() {
        return;
    }
    let p = Project::fixture("python-hostile");
    let outside = Outside::new();
    let roles = copy_roles(&p);
    let out = outside
        .env(p.run_with_roles(&roles, "test the reach module", "targeted"))
        .env("TT_FIXTURE_TESTS", &generated("python-hostile"))
        .arg("-y")
        .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    outside.assert_untouched();
    let id = out.session_id();
    let run = read_json(&p.session_dir(&id).join("results/run-001.json"));
    let status = |name: &str| -> String {
        let all = run["tests"].as_array().unwrap();
        let quarantined = run["quarantined"].as_array().unwrap();
        if let Some(t) = all
            .iter()
            .find(|t| t["id"].as_str().unwrap().ends_with(name))
        {
            return t["status"].as_str().unwrap().to_string();
        }
        if quarantined
            .iter()
            .any(|q| q["id"].as_str().unwrap().ends_with(name))
        {
            return "quarantined".into();
        }
        panic!("no {name} in {run}")
    };
    assert_eq!(status("test_adds"), "passed");
    let mut stopped = vec![
        "test_deletes_the_victim",
        "test_writes_into_home",
        "test_hoards_memory",
    ];
    if complete(capabilities()) {
        stopped.extend(["test_chmods_outside", "test_phones_home"]);
    }
    for name in stopped {
        assert_ne!(status(name), "passed", "{name} was not stopped: {run}");
    }
}

/// A one-line echo server on the loopback: answers `pong` to every connection.
fn pong_server() -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 16];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"pong\n");
        }
    });
    (port, handle)
}

#[test]
fn allow_network_lets_a_test_reach_a_local_server_and_without_it_the_test_cannot() {
    let (port, _server) = pong_server();
    let port = port.to_string();
    let run = |extra: &[&str]| {
        let p = Project::fixture("python-hostile");
        let roles = copy_roles(&p);
        let mut cmd = p
            .run_with_roles(&roles, "test the reach module", "targeted")
            .env("TT_FIXTURE_TESTS", &generated("python-network"))
            .env("HOSTILE_PORT", &port)
            .arg("-y");
        for a in extra {
            cmd = cmd.arg(a);
        }
        let out = cmd.run();
        let id = out.session_id();
        let run = read_json(&p.session_dir(&id).join("results/run-001.json"));
        (run["passed"].as_u64().unwrap(), protections(&p, &id))
    };
    let (passed, prot) = run(&["--allow-network"]);
    assert_eq!(
        passed, 1,
        "with --allow-network the test reaches the server"
    );
    assert_eq!(prot["network"], "open (--allow-network)");
    let (passed, prot) = run(&[]);
    if prot["network"].as_str().unwrap().starts_with("off") {
        assert_eq!(
            passed, 0,
            "without --allow-network the server is out of reach"
        );
    }
}

#[test]
fn a_machine_without_a_filesystem_sandbox_refuses_the_builtin_generator_and_says_why() {
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
        ])
        .env("TEAM_TESTING_SANDBOX_DISABLE", "landlock,mountns")
        .run();
    out.assert_code(2);
    assert!(
        out.stderr.contains("no filesystem sandbox"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--unsafe-no-sandbox"), "{}", out.stderr);
    assert!(
        out.stderr.contains("landlock: switched off"),
        "{}",
        out.stderr
    );

    // The user may accept the risk; the session and the report say what was missing.
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "targeted",
            "-y",
            "--unsafe-no-sandbox",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let prot = protections(&p, &id);
    assert!(prot["missing"][0]
        .as_str()
        .unwrap()
        .contains("--unsafe-no-sandbox"));
    let state = read_json(&p.session_dir(&id).join("session.json"));
    assert!(state["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("missing protection")));
    let report = report(&p, &id, "md");
    assert!(report.contains("none (--unsafe-no-sandbox)"), "{report}");
}

#[test]
fn a_missing_network_namespace_is_named_at_start_and_in_the_report() {
    if capabilities().landlock_abi.is_none() {
        return; // without netns and Landlock the generator is refused (the test above)
    }
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
        ])
        .env("TEAM_TESTING_SANDBOX_DISABLE", "netns")
        .run();
    out.assert_code(0);
    assert!(
        out.stderr
            .contains("missing protection: netns: switched off"),
        "{}",
        out.stderr
    );
    let report = report(&p, &out.session_id(), "md");
    assert!(report.contains("netns: switched off"), "{report}");
}

#[test]
fn a_command_role_that_asks_for_the_sandbox_gets_it_and_others_do_not() {
    if !contained() {
        return;
    }
    let p = Project::fixture("python-calc");
    let outside = Outside::new();
    // A generator role that tries to delete a file outside and reports what happened.
    let script = "import json, os\n\
                  try:\n    os.remove(os.environ['HOSTILE_VICTIM'])\n    what = 'deleted'\n\
                  except OSError as e:\n    what = 'blocked ' + type(e).__name__\n\
                  print(json.dumps({'status': 'completed', 'summary': what, 'data': {}}))";
    let role = |sandbox: bool| {
        format!(
            "---\nrole: generator\nprefix: TESTGEN\ninner_loop: true\n\
             message_types: [progress, task_complete]\nbackend: command\n\
             command: [\"python3\", \"-c\", {script:?}]\nsandbox: {sandbox}\n---\nTries to delete a file.\n"
        )
    };
    let roles = p.write_role("generator", &role(true));
    let out = outside
        .env(p.run_with_roles(&roles, "test the calculator", "targeted"))
        .arg("-y")
        .run();
    let id = out.session_id();
    let generator = p
        .tasks(&id)
        .into_iter()
        .find(|t| t["owner"] == "generator")
        .unwrap();
    assert!(
        generator["outcome"]["summary"]
            .as_str()
            .unwrap()
            .starts_with("blocked"),
        "{generator}"
    );
    outside.assert_untouched();

    // Without `sandbox: true` a command role runs with the user's rights (it is the user's own tool).
    let p = Project::fixture("python-calc");
    let roles = p.write_role("generator", &role(false));
    let out = outside
        .env(p.run_with_roles(&roles, "test the calculator", "targeted"))
        .arg("-y")
        .run();
    let generator = p
        .tasks(&out.session_id())
        .into_iter()
        .find(|t| t["owner"] == "generator")
        .unwrap();
    assert_eq!(generator["outcome"]["summary"], "deleted", "{generator}");
    assert!(!outside.path("victim.txt").exists());
}

#[test]
fn the_sandbox_command_says_what_is_protected_and_what_is_missing() {
    let p = Project::fixture("python-calc");
    let out = p.cmd(&["sandbox", "--json"]).run();
    out.assert_code(0);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(v["protections"]["filesystem"].is_string());
    assert!(v["capabilities"]["missing"].is_array());

    let out = p
        .cmd(&["sandbox"])
        .env("TEAM_TESTING_SANDBOX_DISABLE", "landlock,mountns")
        .run();
    out.assert_code(0);
    assert!(
        out.stdout.contains("missing:     landlock: switched off"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("will refuse to run here"),
        "{}",
        out.stdout
    );
}
