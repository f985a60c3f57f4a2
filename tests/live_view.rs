//! The live view of `run` and `status --watch` in a real pseudo-terminal, its screen read back by
//! a terminal emulator; off a terminal the output stays one plain line per message.

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, CommandBuilder, PtySize};

use crate::common::*;

const ROWS: u16 = 40;
const COLS: u16 = 140;

/// What a terminal showed while the command ran: every screen seen (as its rows: a long line
/// wraps onto the next row), and the terminal at the end.
struct Screens {
    seen: Vec<String>,
    last: vt100::Parser,
    exit: u32,
}

/// Runs the binary with `args` in `p`'s repository under a pseudo-terminal, sampling the screen.
fn in_terminal(p: &Project, args: &[&str]) -> Screens {
    in_terminal_with(p, args, &[])
}

/// [`in_terminal`] with more environment variables.
fn in_terminal_with(p: &Project, args: &[&str], env: &[(&str, &str)]) -> Screens {
    in_terminal_until(p, args, env, |_| false)
}

/// [`in_terminal_with`], typing Ctrl-C once a screen satisfies `interrupt`.
fn in_terminal_until(
    p: &Project,
    args: &[&str],
    env: &[(&str, &str)],
    interrupt: impl Fn(&str) -> bool,
) -> Screens {
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("a pseudo-terminal");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_team-testing"));
    cmd.args(args);
    cmd.cwd(&p.repo);
    cmd.env("TEAM_TESTING_SESSIONS", &p.sessions);
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("NO_COLOR");
    cmd.env_remove("CI");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = pty.slave.spawn_command(cmd).expect("the binary starts");
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().unwrap();
    let mut keys = pty.master.take_writer().unwrap();
    let mut interrupted = false;
    let parser = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 10_000)));
    let feed = parser.clone();
    let pump = std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            feed.lock().unwrap().process(&buf[..n]);
        }
    });
    let mut seen = Vec::new();
    let started = Instant::now();
    let status = loop {
        seen.push(rows(parser.lock().unwrap().screen()));
        if !interrupted && interrupt(seen.last().unwrap()) {
            use std::io::Write;
            keys.write_all(b"\x03").unwrap();
            keys.flush().unwrap();
            interrupted = true;
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the run did not end"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(keys);
    drop(pty.master);
    let _ = pump.join();
    let last = Arc::try_unwrap(parser).ok().unwrap().into_inner().unwrap();
    seen.push(rows(last.screen()));
    Screens {
        seen,
        last,
        exit: status.exit_code(),
    }
}

/// The screen's rows, one a line.
fn rows(screen: &vt100::Screen) -> String {
    screen
        .rows(0, COLS)
        .map(|r| r.trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every row the terminal ever held: its scrollback, then the screen.
fn all_lines(parser: &mut vt100::Parser) -> Vec<String> {
    let mut lines = Vec::new();
    parser.set_scrollback(usize::MAX);
    let back = parser.screen().scrollback();
    for offset in (1..=back).rev() {
        parser.set_scrollback(offset);
        if let Some(top) = parser.screen().rows(0, COLS).next() {
            lines.push(top.trim_end().to_string());
        }
    }
    parser.set_scrollback(0);
    lines.extend(rows(parser.screen()).lines().map(str::to_string));
    lines
}

#[test]
fn run_on_a_terminal_draws_workers_and_layers_in_place_and_leaves_the_summary() {
    let p = Project::fixture("python-calc");
    let mut screens = in_terminal(
        &p,
        &[
            "run",
            "test the calculator",
            "--pipeline",
            "standard",
            "-y",
            "--completion",
            "keep",
        ],
    );
    assert_eq!(screens.exit, 0);
    // While it ran: the pipeline bar, a running task's line with its worker, a layer's line.
    assert!(
        screens.seen.iter().any(|s| s.contains("Pipeline [")),
        "no live view was drawn"
    );
    assert!(
        screens
            .seen
            .iter()
            .any(|s| s.lines().any(|l| l.trim_start().starts_with("> executor"))),
        "no running executor line"
    );
    assert!(
        screens.seen.iter().any(|s| s
            .lines()
            .any(|l| l.trim_start().starts_with("L1-unit") && l.contains(" cov "))),
        "no layer line"
    );
    // Replaced, not scrolled: no line per message, and the block is gone at the end.
    let lines = all_lines(&mut screens.last);
    let message_lines = lines.iter().filter(|l| l.contains(" → ")).count();
    assert_eq!(message_lines, 0, "{}", lines.join("\n"));
    let bars = lines.iter().filter(|l| l.starts_with("Pipeline [")).count();
    assert!(bars <= 1, "the view scrolled: {}", lines.join("\n"));
    let end = rows(screens.last.screen());
    assert!(
        end.contains("Pipeline completed (standard): 6/6 tasks completed"),
        "{end}"
    );
    assert!(
        !end.contains("Pipeline ["),
        "the live block was left: {end}"
    );
}

#[test]
fn off_a_terminal_or_with_no_color_the_output_is_one_plain_line_per_message() {
    let p = Project::fixture("python-calc");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "targeted",
        ])
        .run();
    out.assert_code(0);
    let messages = out.stdout.lines().filter(|l| l.contains(" → ")).count();
    assert!(messages >= 6, "{}", out.stdout);
    // Every message but the state updates has its line (written by a thread of their own),
    // all of them before the summary.
    let logged = p.messages(&out.session_id());
    let shown = logged
        .iter()
        .filter(|m| m["type"] != "state_update")
        .count();
    assert_eq!(messages, shown, "{}", out.stdout);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let last = lines.iter().rposition(|l| l.contains(" → ")).unwrap();
    let summary = lines
        .iter()
        .position(|l| l.starts_with("Pipeline completed"));
    assert!(summary.is_some_and(|s| last < s), "{}", out.stdout);
    assert!(!out.stdout.contains("Pipeline ["), "{}", out.stdout);
    assert!(
        !out.stdout.contains('\u{1b}'),
        "escape codes off a terminal"
    );
    // NO_COLOR on a terminal: plain lines too.
    let q = Project::fixture("python-calc");
    let screens = in_terminal_with(
        &q,
        &[
            "run",
            "test the calculator",
            "--pipeline",
            "targeted",
            "-y",
            "--completion",
            "keep",
        ],
        &[("NO_COLOR", "1")],
    );
    assert_eq!(screens.exit, 0);
    assert!(screens.seen.iter().all(|s| !s.contains("Pipeline [")));
    assert!(screens.seen.iter().any(|s| s.contains(" → ")));
}

#[test]
fn status_watch_follows_a_running_session_and_ends_with_it() {
    let p = Project::fixture("python-calc");
    let child = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "standard",
        ])
        .spawn();
    // Wait for the session to exist, then watch it from a terminal.
    let found = wait_for(Duration::from_secs(60), || {
        std::fs::read_dir(&p.sessions).is_ok_and(|d| {
            d.flatten().any(|e| {
                e.path().join("session.json").is_file() && e.path().join("tasks.json").is_file()
            })
        })
    });
    assert!(found);
    let screens = in_terminal(&p, &["status", "--watch"]);
    let run = wait(child);
    run.assert_code(0);
    assert_eq!(screens.exit, 0);
    let end = rows(screens.last.screen());
    assert!(end.contains("Testing Pipeline Status"), "{end}");
    assert!(end.contains("Progress: 6/6 (100%)"), "{end}");
}

#[test]
fn ctrl_c_in_the_live_view_pauses_the_session() {
    let p = Project::fixture("python-calc");
    let screens = in_terminal_until(
        &p,
        &["run", "test the calculator", "--pipeline", "standard", "-y"],
        &[],
        |screen| screen.contains("> generator") || screen.contains("> executor"),
    );
    assert_eq!(screens.exit, 130);
    let sessions: Vec<_> = std::fs::read_dir(&p.sessions).unwrap().flatten().collect();
    let state = read_json(&sessions[0].path().join("session.json"));
    assert_eq!(state["status"], "paused", "{state}");
}
