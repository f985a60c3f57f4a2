//! Child processes: always an argument vector (never a shell string), always a timeout, and on
//! timeout the whole process group is killed.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use dashmap::DashSet;

pub mod resident;

/// Why a child gave no output: it could not start, be waited for, or ran past its time.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    #[error("empty command")]
    EmptyCommand,
    // The io error is part of the message, not a `source`: printed as a chain it would repeat.
    #[error("preparing the sandbox for {program}: {cause}")]
    Sandbox {
        program: String,
        cause: std::io::Error,
    },
    #[error("starting {program}: {cause}")]
    Start {
        program: String,
        cause: std::io::Error,
    },
    #[error("waiting for {program}: {cause}")]
    Wait {
        program: String,
        cause: std::io::Error,
    },
    /// It ran past its time budget and was killed (with its process group).
    #[error("{command} timed out after {seconds}s")]
    TimedOut { command: String, seconds: u64 },
}

type Result<T> = std::result::Result<T, ProcError>;

/// Process groups of every running child, so Ctrl-C can end them all (their own process groups
/// keep them out of the terminal's reach).
static GROUPS: LazyLock<DashSet<u32>> = LazyLock::new(DashSet::new);

/// A running child's process group; dropping it kills whatever is left in the group (a
/// grandchild the role left behind) and forgets it.
pub struct GroupGuard(u32);

impl GroupGuard {
    pub fn track(pgid: u32) -> Self {
        GROUPS.insert(pgid);
        GroupGuard(pgid)
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        GROUPS.remove(&self.0);
        kill_group(self.0);
    }
}

/// Kills every tracked child process group (on Ctrl-C).
pub fn kill_all_groups() {
    for pgid in GROUPS.iter() {
        kill_group(*pgid);
    }
}

#[derive(Debug)]
pub struct Captured {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Captured {
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }
}

/// Runs `argv` in `cwd` and captures its output; kills its process group after `timeout`.
/// For short helper commands (git); roles run through the async runner in `agents::command`.
pub fn run_captured(argv: &[&str], cwd: &Path, timeout: Duration) -> Result<Captured> {
    run_captured_env(argv, cwd, &[], timeout)
}

/// [`run_captured`] with extra environment variables.
pub fn run_captured_env(
    argv: &[&str],
    cwd: &Path,
    env: &[(&str, &str)],
    timeout: Duration,
) -> Result<Captured> {
    run_captured_input(argv, cwd, env, None, timeout)
}

/// [`run_captured_env`] that also feeds `input` to the child's stdin.
pub fn run_captured_input(
    argv: &[&str],
    cwd: &Path,
    env: &[(&str, &str)],
    input: Option<Vec<u8>>,
    timeout: Duration,
) -> Result<Captured> {
    run_sandboxed(None::<&Unconfined>, argv, cwd, env, input, timeout)
}

/// `TEAM_TESTING_CHILD_LOG=<file>`: one JSON line per finished child (program, start, wall
/// time), so the end-to-end benchmark can tell the children's time from the runtime's own.
pub(crate) fn note_child_time(
    program: &str,
    (wall_start, start): (std::time::SystemTime, Instant),
) {
    let Some(path) = std::env::var_os("TEAM_TESTING_CHILD_LOG") else {
        return;
    };
    let since_epoch = wall_start
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let line = serde_json::json!({
        "program": program,
        "start_us": since_epoch.as_micros() as u64,
        "wall_us": start.elapsed().as_micros() as u64,
    });
    // One short O_APPEND write per line: concurrent children never interleave.
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        use std::io::Write;
        let _ = f.write_all(format!("{line}\n").as_bytes());
    }
}

/// What confines a child: the sandbox sets the command up before it starts and ends whatever the
/// child left behind. A trait so this module, below the sandbox, does not know how it is done.
pub trait Confinement {
    /// The argument vector that runs `argv` confined (a wrapper program may come first).
    fn wrap(&self, argv: &[&str]) -> Vec<String> {
        argv.iter().map(|a| a.to_string()).collect()
    }
    /// Sets `command` up to run confined in `cwd`, before the caller adds its own variables;
    /// returns the run's number for `end`. One confinement may run several children at once.
    fn apply(&self, command: &mut Command, cwd: &Path) -> std::io::Result<u64>;
    /// Ends every process the run left inside, also those that left its process group, and
    /// none of another run.
    fn end(&self, run: u64);
}

/// No confinement: the way helper children (git, agent CLIs) start.
pub struct Unconfined;

impl Confinement for Unconfined {
    fn apply(&self, _: &mut Command, _: &Path) -> std::io::Result<u64> {
        Ok(0)
    }
    fn end(&self, _: u64) {}
}

/// [`run_captured_input`] inside `sandbox` (when given): the way every child that runs the
/// target's code starts.
pub fn run_sandboxed<C: Confinement + ?Sized>(
    sandbox: Option<&C>,
    argv: &[&str],
    cwd: &Path,
    env: &[(&str, &str)],
    input: Option<Vec<u8>>,
    timeout: Duration,
) -> Result<Captured> {
    let stdin = if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    let (mut command, program, run) = confined_command(sandbox, argv, cwd, env, stdin)?;
    let program = program.as_str();
    let started = (std::time::SystemTime::now(), Instant::now());
    let mut child = command.spawn().map_err(|cause| ProcError::Start {
        program: program.to_string(),
        cause,
    })?;
    let group = GroupGuard::track(child.id());
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        // A writer thread: a child that does not read its input must not block us.
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(&bytes);
        });
    }
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || read_capped(&mut out, OUTPUT_CAP));
    let err_reader = std::thread::spawn(move || read_capped(&mut err, OUTPUT_CAP));
    let deadline = Instant::now() + timeout;
    // Short children are common (git, probes): poll fast at first, then back off to 5 ms.
    let mut pause = Duration::from_micros(100);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                // Ends grandchildren that would hold the pipes open.
                drop(group);
                if let Some(sandbox) = sandbox {
                    sandbox.end(run);
                }
                note_child_time(program, started);
                break status.code();
            }
            Ok(None) if Instant::now() >= deadline => {
                kill_group(child.id());
                if let Some(sandbox) = sandbox {
                    sandbox.end(run);
                }
                let _ = child.wait();
                return Err(ProcError::TimedOut {
                    command: argv.join(" "),
                    seconds: timeout.as_secs(),
                });
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(5));
            }
            Err(cause) => {
                return Err(ProcError::Wait {
                    program: program.to_string(),
                    cause,
                })
            }
        }
    };
    let stdout = String::from_utf8_lossy(&out_reader.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
    Ok(Captured {
        status,
        stdout,
        stderr,
    })
}

/// The command that runs `argv` in `cwd`, confined by `sandbox` when given, with `env` added,
/// its stdout and stderr piped, in a process group of its own that dies with us: its program
/// (as wrapped) and the sandbox's run number, for [`Confinement::end`].
pub(crate) fn confined_command<C: Confinement + ?Sized>(
    sandbox: Option<&C>,
    argv: &[&str],
    cwd: &Path,
    env: &[(&str, &str)],
    stdin: Stdio,
) -> Result<(Command, String, u64)> {
    let wrapped = match sandbox {
        Some(s) => s.wrap(argv),
        None => argv.iter().map(|a| a.to_string()).collect(),
    };
    let (program, args) = wrapped.split_first().ok_or(ProcError::EmptyCommand)?;
    let mut command = Command::new(program);
    command.args(args);
    let run = match sandbox {
        Some(sandbox) => sandbox
            .apply(&mut command, cwd)
            .map_err(|cause| ProcError::Sandbox {
                program: program.to_string(),
                cause,
            })?,
        None => 0,
    };
    command
        .envs(env.iter().copied())
        .current_dir(cwd)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: the closure only calls prctl and getppid, which are safe between fork and exec.
    unsafe {
        note_parent();
        command.pre_exec(die_with_parent);
    }
    Ok((command, program.to_string(), run))
}

/// Most bytes of one stream kept in memory: the first and last halves; the middle is dropped with
/// a marker, so a chatty test suite cannot exhaust memory.
pub const OUTPUT_CAP: usize = 1 << 20;

/// Reads a stream to its end, keeping its first and last `cap / 2` bytes.
pub fn read_capped(reader: &mut impl Read, cap: usize) -> Vec<u8> {
    let half = cap / 2;
    let mut head = Vec::new();
    let mut tail = std::collections::VecDeque::new();
    let mut dropped: u64 = 0;
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut chunk = &buf[..n];
        if head.len() < half {
            let take = (half - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        tail.extend(chunk.iter().copied());
        while tail.len() > half {
            tail.pop_front();
            dropped += 1;
        }
    }
    if dropped > 0 {
        head.extend_from_slice(format!("\n…[{dropped} bytes of output truncated]…\n").as_bytes());
    }
    head.extend(tail);
    head
}

/// Makes the child die with team-testing: without it a `kill -9` of the coordinator would leave
/// role processes running (they sit in their own process group, out of the terminal's reach).
pub fn die_with_parent() -> std::io::Result<()> {
    // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and touches no memory of ours.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    // The parent may have died between the fork and the prctl (the signal then never comes):
    // an orphan is adopted by init or a subreaper, never by a process of ours that is us.
    let parent = PARENT.load(std::sync::atomic::Ordering::Relaxed);
    // SAFETY: getppid is async-signal-safe.
    if parent != 0 && parent != unsafe { libc::getppid() } {
        return Err(std::io::Error::other(
            "the parent died before the child started",
        ));
    }
    Ok(())
}

/// This process's pid, for [`die_with_parent`] in a forked child (getpid there is the child's).
static PARENT: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Records this process's pid for children's [`die_with_parent`]; call before spawning.
pub fn note_parent() {
    PARENT.store(
        std::process::id() as i32,
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// SIGKILL to the process group led by `pid` (children were started with `process_group(0)`).
pub fn kill_group(pid: u32) {
    // SAFETY: killpg only sends a signal; a stale pid at worst yields ESRCH.
    unsafe {
        libc::killpg(pid as libc::pid_t, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_beyond_the_cap_keeps_head_and_tail() {
        let text: Vec<u8> = (0..10_000u32)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let kept = read_capped(&mut text.as_slice(), 1000);
        let kept = String::from_utf8(kept).unwrap();
        assert!(kept.starts_with("0\n1\n"));
        assert!(kept.ends_with("9999\n"));
        assert!(kept.contains("bytes of output truncated"));
        assert!(kept.len() < 1100);
        let small = read_capped(&mut b"short".as_slice(), 1000);
        assert_eq!(small, b"short");
    }

    #[test]
    fn a_command_past_its_timeout_is_killed_with_its_group() {
        let started = Instant::now();
        let err =
            run_captured(&["sleep", "30"], Path::new("."), Duration::from_millis(300)).unwrap_err();
        assert!(
            matches!(err, ProcError::TimedOut { seconds: 0, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("timed out"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
