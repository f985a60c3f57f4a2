//! A pids cgroup per sandbox: a process limit for the whole sandbox; and in it one cgroup per
//! run, the list of every process that run started (also those that left its process group) to
//! end them all without touching another run of the same sandbox.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Name prefix of our cgroups: `team-testing-<pid>-<n>`.
const PREFIX: &str = "team-testing-";

/// A fresh cgroup under `parent` with `pids.max` set.
pub fn create(parent: &Path, processes: u64) -> Option<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = parent.join(format!("{PREFIX}{}-{n}", std::process::id()));
    std::fs::create_dir(&dir).ok()?;
    if std::fs::write(dir.join("pids.max"), processes.to_string()).is_err() {
        let _ = std::fs::remove_dir(&dir);
        return None;
    }
    Some(dir)
}

/// SIGKILL to every process in the cgroup (`cgroup.kill` where the kernel has it), until it is
/// empty or a second has passed.
pub fn kill_all(dir: &Path) {
    let _ = std::fs::write(dir.join("cgroup.kill"), "1");
    for _ in 0..200 {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        let pids: Vec<i32> = procs
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.is_empty() {
            return;
        }
        for pid in pids {
            // SAFETY: kill only sends a signal; a pid that just exited yields ESRCH.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A fresh cgroup for one run inside the sandbox's `dir` (the sandbox's limit covers it).
pub fn create_run(dir: &Path, run: u64) -> Option<PathBuf> {
    let run_dir = dir.join(format!("run-{run}"));
    std::fs::create_dir(&run_dir).ok()?;
    Some(run_dir)
}

/// Ends and removes the cgroup, its runs' first.
pub fn remove(dir: &Path) {
    kill_all(dir);
    if let Ok(entries) = std::fs::read_dir(dir) {
        for run in entries.flatten().filter(|e| e.path().is_dir()) {
            kill_all(&run.path());
            let _ = std::fs::remove_dir(run.path());
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// Removes the cgroups a team-testing process that no longer runs left behind (a kill -9).
pub fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(owner) = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only checks that the process exists.
        let alive = unsafe { libc::kill(owner, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !alive {
            remove(&entry.path());
        }
    }
}
