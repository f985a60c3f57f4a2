//! Agent backends end to end: a real program that behaves like an agent CLI, a real
//! chat-completions server on 127.0.0.1, the fallback chain, the accept filter, records and replay.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::*;

fn run_with(p: &Project, cfg: &Path, chain: &str, mode: &str) -> Output {
    p.cmd(&[
        "run",
        "--max-mutants",
        QUICK_MUTANTS,
        "test the calculator",
        "--pipeline",
        "targeted",
        "-y",
        "--config",
        cfg.to_str().unwrap(),
        "--backend",
        &format!("generator={chain}"),
    ])
    .env("FAKE_AGENT_MODE", mode)
    .run()
}

fn records(p: &Project, id: &str) -> Vec<Value> {
    let dir = p.session_dir(id).join("agents");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.sort();
    paths.iter().map(|p| read_json(p)).collect()
}

#[test]
fn a_cli_agent_writes_tests_and_only_candidates_that_load_pass_and_add_coverage_are_kept() {
    let p = Project::fixture("python-calc");
    let cfg = cli_config(&p, 60);
    let out = run_with(&p, &cfg, "fake", "write");
    out.assert_code(0);
    let id = out.session_id();
    let gen = generator_task(&p, &id);
    let data = &gen["outcome"]["data"];
    assert_eq!(data["backend"], "fake", "{gen}");
    assert_eq!(
        data["test_files"],
        json!(["tests/L1-unit/test_agent_ops.py"])
    );
    let rejected = data["rejected"].as_array().unwrap();
    let reason = |file: &str| {
        rejected
            .iter()
            .find(|r| r["file"] == file)
            .map(|r| r["reason"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("{file} not rejected: {rejected:?}"))
    };
    assert!(reason("test_agent_wrong.py").starts_with("failed"));
    assert_eq!(
        reason("test_agent_zz_again.py"),
        "no new coverage of the scope"
    );
    // The executor ran the accepted test for real.
    let run = read_json(&p.session_dir(&id).join("results/run-001.json"));
    assert_eq!(run["passed"], 3, "{run}");
    // The call is recorded: prompt, answer, files, duration.
    let recs = records(&p, &id);
    assert!(!recs.is_empty());
    assert_eq!(recs[0]["backend"], "fake");
    assert!(recs[0]["prompt"].as_str().unwrap().contains("EXPECTED:"));
    assert_eq!(recs[0]["files"].as_array().unwrap().len(), 3);
    assert!(recs[0]["duration_s"].as_f64().unwrap() > 0.0);
    assert_eq!(git_status(&p.repo, true), "");
}

#[test]
fn a_cli_agent_that_hangs_or_answers_nothing_falls_back_to_the_builtin_generator() {
    for (mode, timeout, expect) in [("sleep", 2, "timed out"), ("nothing", 60, "no usable file")] {
        let p = Project::fixture("python-calc");
        let cfg = cli_config(&p, timeout);
        let out = run_with(&p, &cfg, "fake,builtin", mode);
        out.assert_code(0);
        let gen = generator_task(&p, &out.session_id());
        let fallbacks = gen["outcome"]["data"]["fallbacks"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(fallbacks[0]["backend"], "fake");
        assert!(
            fallbacks[0]["error"].as_str().unwrap().contains(expect),
            "{mode}: {fallbacks:?}"
        );
        // The built-in generator wrote the layer's tests.
        assert!(p
            .session_dir(&out.session_id())
            .join("tests/L1-unit/test_calc_ops.py")
            .is_file());
    }
}

#[test]
fn a_write_outside_its_folder_is_undone_and_reported() {
    let p = Project::fixture("python-calc");
    // The user's own unsaved work in a file the agent also edits must survive the undo.
    let readme = p.repo.join("calc/ops.py");
    let mut dirty = std::fs::read_to_string(&readme).unwrap();
    dirty.push_str("\n# A line the user has not committed.\n");
    std::fs::write(&readme, &dirty).unwrap();
    let status = git_status(&p.repo, true);
    let cfg = cli_config(&p, 60);
    let out = run_with(&p, &cfg, "fake", "outside");
    out.assert_code(0);
    assert!(!p.repo.join("hacked.py").exists());
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), dirty);
    assert_eq!(git_status(&p.repo, true), status);
    let gen = generator_task(&p, &out.session_id());
    let refused = gen["outcome"]["data"]["refused"].as_array().unwrap();
    assert!(
        refused
            .iter()
            .any(|r| r.as_str().unwrap() == "hacked.py: written outside its folder (undone)"),
        "{refused:?}"
    );
    assert!(
        refused
            .iter()
            .any(|r| r.as_str().unwrap() == "calc/ops.py: written outside its folder (undone)"),
        "{refused:?}"
    );
    assert_eq!(
        gen["outcome"]["data"]["test_files"],
        json!(["tests/L1-unit/test_agent_ops.py"])
    );
}

/// A chat-completions server on 127.0.0.1: each connection gets the next reply (status, body,
/// delay); the last reply repeats. Returns the base URL.
fn chat_server(replies: Vec<(u16, String, Duration)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut n = 0;
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let (status, body, delay) = replies[n.min(replies.len() - 1)].clone();
            n += 1;
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut request = vec![0u8; length];
            let _ = reader.read_exact(&mut request);
            std::thread::sleep(delay);
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nRetry-After: 0\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

fn completion(text: &str) -> String {
    json!({"choices": [{"message": {"role": "assistant", "content": text}}],
           "usage": {"prompt_tokens": 900, "completion_tokens": 120}})
    .to_string()
}

const ANSWER: &str = "```python path=test_llm_ops.py\nfrom calc.ops import add, divide\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_divide():\n    assert divide(8, 2) == 4\n```\n";

fn http_config(p: &Project, url: &str, timeout_s: u64) -> PathBuf {
    config(
        p,
        &format!(
            "[backends.local]\nkind = \"http\"\nbase_url = {url:?}\nmodel = \"test-model\"\ntimeout_s = {timeout_s}\nmax_retries = 2\n"
        ),
    )
}

#[test]
fn an_http_backend_after_a_429_writes_tests_and_a_replay_reproduces_them_offline() {
    let url = chat_server(vec![
        (429, "{}".into(), Duration::ZERO),
        (200, completion(ANSWER), Duration::ZERO),
    ]);
    let p = Project::fixture("python-calc");
    let cfg = http_config(&p, &url, 30);
    let out = run_with(&p, &cfg, "local", "");
    out.assert_code(0);
    let id = out.session_id();
    let gen = generator_task(&p, &id);
    assert_eq!(gen["outcome"]["data"]["backend"], "local", "{gen}");
    assert_eq!(gen["outcome"]["data"]["tokens_in"], 900);
    let test_file = p.session_dir(&id).join("tests/L1-unit/test_llm_ops.py");
    let original = std::fs::read_to_string(&test_file).unwrap();
    let run = read_json(&p.session_dir(&id).join("results/run-001.json"));

    // Replay with the backend unreachable: the recording answers.
    let dead = config(
        &p,
        "[backends.local]\nkind = \"http\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"test-model\"\ntimeout_s = 5\n",
    );
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "targeted",
            "-y",
            "--config",
            dead.to_str().unwrap(),
            "--backend",
            "generator=local",
            "--replay",
            &id,
        ])
        .run();
    out.assert_code(0);
    let replay_id = out.session_id();
    let gen = generator_task(&p, &replay_id);
    assert_eq!(gen["outcome"]["data"]["replayed"], true, "{gen}");
    let replayed = std::fs::read_to_string(
        p.session_dir(&replay_id)
            .join("tests/L1-unit/test_llm_ops.py"),
    )
    .unwrap();
    assert_eq!(replayed, original);
    let again = read_json(&p.session_dir(&replay_id).join("results/run-001.json"));
    assert_eq!(again["pass_rate"], run["pass_rate"]);
    assert_eq!(records(&p, &replay_id)[0]["replayed"], true);
}

#[test]
fn an_http_backend_that_keeps_failing_or_answers_too_late_falls_back() {
    for (reply, timeout, expect) in [
        (
            (500, "boom".to_string(), Duration::ZERO),
            30,
            "HTTP 500 after 3 attempt(s)",
        ),
        (
            (200, completion(ANSWER), Duration::from_secs(4)),
            1,
            "no answer within",
        ),
    ] {
        let url = chat_server(vec![reply]);
        let p = Project::fixture("python-calc");
        let cfg = http_config(&p, &url, timeout);
        let out = run_with(&p, &cfg, "local,builtin", "");
        out.assert_code(0);
        let gen = generator_task(&p, &out.session_id());
        let fallbacks = gen["outcome"]["data"]["fallbacks"]
            .as_array()
            .unwrap()
            .clone();
        assert!(
            fallbacks[0]["error"].as_str().unwrap().contains(expect),
            "{fallbacks:?}"
        );
        assert!(gen["outcome"]["summary"]
            .as_str()
            .unwrap()
            .contains("after 1 failed backend"));
    }
}

#[test]
fn a_bad_backend_config_is_refused_before_a_session_is_made() {
    let p = Project::fixture("python-calc");
    let cfg = config(&p, "[roles.generator]\nbackend = [\"nope\"]\n");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test it",
            "-y",
            "--config",
            cfg.to_str().unwrap(),
        ])
        .run();
    out.assert_code(2);
    assert!(out.stderr.contains("team-testing.toml"), "{}", out.stderr);
    assert!(
        out.stderr.contains("unknown backend \"nope\""),
        "{}",
        out.stderr
    );
    assert!(!p.sessions.exists() || std::fs::read_dir(&p.sessions).unwrap().count() == 0);
}

#[test]
fn the_executor_repairs_a_wrong_test_through_its_agent_before_quarantining_it() {
    let p = Project::fixture("python-buggy");
    let roles = copy_roles(&p);
    let cfg = cli_config(&p, 60);
    let out = p
        .run_with_roles(&roles, "test pricing", "targeted")
        .arg("-y")
        .arg("--config")
        .arg(cfg.to_str().unwrap())
        .arg("--backend")
        .arg("executor=fake")
        .env(
            "TT_FIXTURE_TESTS",
            fixtures().join("generated/python-buggy").to_str().unwrap(),
        )
        .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    let id = out.session_id();
    let run = read_json(&p.session_dir(&id).join("results/run-001.json"));
    let repairs = run["repairs"].as_array().unwrap();
    assert!(
        repairs
            .iter()
            .any(|r| r["action"] == "repaired by agent" && r["file"] == "test_wrong_call.py"),
        "{repairs:?}"
    );
    // The repaired test now runs and passes instead of being quarantined.
    let test = run["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| {
            t["id"]
                .as_str()
                .unwrap()
                .contains("test_describe_called_wrongly")
        })
        .unwrap_or_else(|| panic!("{run}"));
    assert_eq!(test["status"], "passed");
    assert!(!run["quarantined"]
        .as_array()
        .unwrap()
        .iter()
        .any(|q| q["id"].as_str().unwrap().contains("test_wrong_call")));
    let fixed =
        std::fs::read_to_string(p.session_dir(&id).join("tests/L1-unit/test_wrong_call.py"))
            .unwrap();
    assert!(fixed.contains("describe(0)"));
    assert_eq!(records(&p, &id)[0]["role"], "executor");
}

#[test]
fn the_analyst_hands_its_narrative_to_an_agent_and_keeps_its_own_figures() {
    let p = Project::fixture("python-calc");
    let cfg = cli_config(&p, 60);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "standard",
            "-y",
            "--config",
            cfg.to_str().unwrap(),
            "--backend",
            "analyst=fake",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let narrative =
        std::fs::read_to_string(p.session_dir(&id).join("analysis/narrative.md")).unwrap();
    assert!(
        narrative.contains("Written by the fake backend"),
        "{narrative}"
    );
    assert!(
        narrative.contains("nothing needs attention now"),
        "{narrative}"
    );
    let analyst = p
        .tasks(&id)
        .into_iter()
        .find(|t| t["owner"] == "analyst")
        .unwrap();
    assert_eq!(analyst["outcome"]["data"]["narrative_backend"], "fake");
    assert!(records(&p, &id).iter().any(|r| r["role"] == "analyst"));
}

#[test]
fn a_cli_agent_can_take_its_prompt_from_a_file_and_answer_with_code_blocks() {
    let p = Project::fixture("python-calc");
    let cfg = config(
        &p,
        &format!(
            "[backends.fake]\nkind = \"cli\"\ncommand = [\"python3\", {:?}, \"{{prompt_file}}\"]\n",
            fake_agent()
        ),
    );
    let out = run_with(&p, &cfg, "fake", "answer");
    out.assert_code(0);
    let gen = generator_task(&p, &out.session_id());
    assert_eq!(gen["outcome"]["data"]["backend"], "fake", "{gen}");
    assert_eq!(
        gen["outcome"]["data"]["test_files"],
        json!(["tests/L1-unit/test_agent_ops.py"])
    );
}

/// The sessions made under `p` so far.
fn sessions_made(p: &Project) -> usize {
    std::fs::read_dir(&p.sessions)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("TST-"))
                .count()
        })
        .unwrap_or(0)
}

/// A chain naming an agent this machine cannot run stops before any work: exit 2, naming the
/// program or the missing key, with no session made and no branch in the repository. Only a
/// built-in backend the user named after it lets the run go on, and never for the fixer, whose
/// built-in backend fixes nothing.
#[test]
fn a_chain_naming_an_agent_that_cannot_run_stops_before_any_work() {
    let p = Project::fixture("python-fixcycle");
    let cfg = config(
        &p,
        "[backends.ghost]\nkind = \"cli\"\ncommand = [\"tt-no-such-agent-cli\", \"{prompt_file}\"]\n\n\
         [backends.remote]\nkind = \"http\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\napi_key_env = \"TT_NO_SUCH_KEY\"\n",
    );
    let cfg = cfg.to_str().unwrap();
    let run = |pipeline: &str, chain: &str| {
        p.cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the shop",
            "--pipeline",
            pipeline,
            "-y",
            "--config",
            cfg,
            "--backend",
            chain,
        ])
        .run()
    };
    let branches = || {
        let out = std::process::Command::new("git")
            .args(["branch", "--list", "team-testing/*"])
            .current_dir(&p.repo)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };

    let out = run("targeted", "generator=ghost");
    out.assert_code(2);
    assert!(
        out.stderr.contains(
            "the generator role's backend ghost cannot run: tt-no-such-agent-cli is not on PATH"
        ) && out.stderr.contains("--backend generator=ghost,builtin"),
        "{}",
        out.stderr
    );
    let out = run("targeted", "generator=remote");
    out.assert_code(2);
    assert!(
        out.stderr.contains("$TT_NO_SUCH_KEY is not set"),
        "{}",
        out.stderr
    );
    // The fixer's chain stops the test-fix pipeline even with the built-in one after it.
    let out = run("test-fix", "fixer=ghost,builtin");
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("the fixer role's backend ghost cannot run")
            && out.stderr.contains("fixes nothing"),
        "{}",
        out.stderr
    );
    assert_eq!(
        sessions_made(&p),
        0,
        "no session is made for a run that cannot start"
    );
    assert_eq!(branches(), "");

    // The user named the built-in generator after it: the run says so and goes on.
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the shop",
            "--pipeline",
            "targeted",
            "-y",
            "--dry-run",
            "--config",
            cfg,
            "--backend",
            "generator=ghost,builtin",
        ])
        .run();
    out.assert_code(0);
    assert!(
        out.stderr.contains(
            "the generator role's backend ghost cannot run (tt-no-such-agent-cli is not on PATH): the built-in one named after it does the work"
        ),
        "{}",
        out.stderr
    );

    // `fix` on a session: the fixer that cannot run stops it before a worktree or branch.
    let id = out.session_id();
    let fixed = p
        .cmd(&[
            "fix",
            &id,
            "-y",
            "--config",
            cfg,
            "--backend",
            "fixer=ghost",
        ])
        .run();
    fixed.assert_code(2);
    assert!(
        fixed.stderr.contains("tt-no-such-agent-cli is not on PATH"),
        "{}",
        fixed.stderr
    );
    assert_eq!(branches(), "");
    assert!(!p.session_dir(&id).join("worktree").exists());
}
