//! Child processes: always an argument vector (never a shell string), always a timeout, and on
//! timeout the whole process group is killed.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use dashmap::DashSet;

use crate::error::{Error, Result};

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
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| Error::Environment("empty command".into()))?;
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(env.iter().copied())
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: the closure only calls prctl, which is safe between fork and exec.
    unsafe {
        command.pre_exec(die_with_parent);
    }
    let mut child = command
        .spawn()
        .map_err(|e| Error::io(format!("starting {program}"), e))?;
    let group = GroupGuard::track(child.id());
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                // Ends grandchildren that would hold the pipes open.
                drop(group);
                break status.code();
            }
            Ok(None) if Instant::now() >= deadline => {
                kill_group(child.id());
                let _ = child.wait();
                return Err(Error::Environment(format!(
                    "{} timed out after {}s",
                    argv.join(" "),
                    timeout.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(Error::io(format!("waiting for {program}"), e)),
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

/// Makes the child die with team-testing: without it a `kill -9` of the coordinator would leave
/// role processes running (they sit in their own process group, out of the terminal's reach).
pub fn die_with_parent() -> std::io::Result<()> {
    // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and touches no memory of ours.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// SIGKILL to the process group led by `pid` (children were started with `process_group(0)`).
pub fn kill_group(pid: u32) {
    // SAFETY: killpg only sends a signal; a stale pid at worst yields ESRCH.
    unsafe {
        libc::killpg(pid as libc::pid_t, libc::SIGKILL);
    }
}
