//! Which isolation mechanisms this machine grants an unprivileged process, found once per
//! process by trying each in a throwaway child.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::child::{ChildPlan, MountPlan};

/// Names a user may list in `TEAM_TESTING_SANDBOX_DISABLE` (comma-separated) to switch a
/// mechanism off, as if the machine lacked it: for checking how a run degrades.
pub const DISABLE_VAR: &str = "TEAM_TESTING_SANDBOX_DISABLE";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Capabilities {
    /// The Landlock ABI version the kernel reports (None: not available).
    pub landlock_abi: Option<i32>,
    /// An unprivileged user namespace with a network namespace (loopback up) can be entered.
    pub netns: bool,
    /// ... and a mount namespace where everything but the sandbox turns read-only.
    pub mountns: bool,
    /// A pids cgroup folder team-testing may make sandboxes' cgroups in (a whole-sandbox
    /// process limit, and a list of every process to end).
    pub pids_cgroup: Option<PathBuf>,
    /// Why a mechanism is missing, one line each.
    pub missing: Vec<String>,
}

/// The machine's capabilities (probed on first use).
pub fn capabilities() -> &'static Capabilities {
    static CAPS: OnceLock<Capabilities> = OnceLock::new();
    CAPS.get_or_init(probe)
}

fn disabled() -> Vec<String> {
    std::env::var(DISABLE_VAR)
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect()
}

fn probe() -> Capabilities {
    let off = disabled();
    let mut caps = Capabilities::default();
    if off.iter().any(|m| m == "landlock") {
        caps.missing
            .push(format!("landlock: switched off by {DISABLE_VAR}"));
    } else {
        match landlock_abi() {
            Ok(abi) => caps.landlock_abi = Some(abi),
            Err(e) => caps.missing.push(format!(
                "landlock: not available in this kernel ({e}); needs Linux 5.13+ with lsm=landlock"
            )),
        }
    }
    if off.iter().any(|m| m == "netns" || m == "userns") {
        caps.missing
            .push(format!("netns: switched off by {DISABLE_VAR}"));
    } else {
        match try_child(false) {
            Ok(()) => caps.netns = true,
            Err(e) => caps.missing.push(format!(
                "netns: cannot enter an unprivileged user and network namespace ({e})"
            )),
        }
    }
    if off.iter().any(|m| m == "mountns" || m == "userns") {
        caps.missing
            .push(format!("mountns: switched off by {DISABLE_VAR}"));
    } else if caps.netns {
        match try_child(true) {
            Ok(()) => caps.mountns = true,
            Err(e) => caps.missing.push(format!(
                "mountns: cannot make a read-only mount namespace ({e})"
            )),
        }
    } else {
        caps.missing
            .push("mountns: needs the user namespace that is missing".into());
    }
    if off.iter().any(|m| m == "cgroup") {
        caps.missing
            .push(format!("cgroup: switched off by {DISABLE_VAR}"));
    } else {
        caps.pids_cgroup = pids_cgroup();
        if let Some(parent) = &caps.pids_cgroup {
            super::cgroup::sweep_stale(parent);
        }
    }
    full_trial(caps)
}

/// Runs a child through a real sandbox with every mechanism found (rules, binds, cgroup). While
/// that fails, finds the mechanism whose absence lets it start, gives up only that one and says
/// why, so runs degrade instead of failing every child.
fn full_trial(mut caps: Capabilities) -> Capabilities {
    let base = std::env::temp_dir().join(format!("team-testing-probe-{}", std::process::id()));
    let writable = base.join("writable");
    if std::fs::create_dir_all(&writable).is_err() {
        return caps;
    }
    let run = |c: &Capabilities| trial(c, &base.join("sandbox"), &writable);
    for _ in 0..4 {
        let Err(error) = run(&caps) else { break };
        let candidates: Vec<(&str, Capabilities)> = [
            ("mountns", without(&caps, |c| c.mountns = false)),
            ("cgroup", without(&caps, |c| c.pids_cgroup = None)),
            (
                "netns",
                without(&caps, |c| (c.netns, c.mountns) = (false, false)),
            ),
            ("landlock", without(&caps, |c| c.landlock_abi = None)),
        ]
        .into_iter()
        .filter(|(_, c)| c != &caps)
        .collect();
        let Some((culprit, fewer)) = candidates
            .iter()
            .find(|(_, c)| run(c).is_ok())
            .or(candidates.first())
            .cloned()
        else {
            break;
        };
        caps = fewer;
        caps.missing.push(format!(
            "{culprit}: a sandboxed child could not start with it ({error})"
        ));
    }
    let _ = std::fs::remove_dir_all(&base);
    caps
}

fn without(caps: &Capabilities, change: impl FnOnce(&mut Capabilities)) -> Capabilities {
    let mut c = caps.clone();
    change(&mut c);
    c
}

/// Why a probe child failed; the text goes into `Capabilities::missing`.
#[derive(Debug, thiserror::Error)]
enum ProbeError {
    #[error("{0}")]
    Setup(std::io::Error),
    #[error("{0}")]
    Run(crate::proc::ProcError),
    #[error("exit {code:?}, could not write its own folder: {stderr}")]
    CannotWrite { code: Option<i32>, stderr: String },
    #[error("{0}")]
    Spawn(std::io::Error),
    #[error("the probe exited with {0}")]
    Exited(std::process::ExitStatus),
    #[error("the probe hung")]
    Hung,
    #[error("{0}")]
    Wait(std::io::Error),
}

/// One sandboxed child that must write into its writable folder.
fn trial(caps: &Capabilities, root: &Path, writable: &Path) -> Result<(), ProbeError> {
    let sandbox = super::Sandbox::with_capabilities(
        &super::SandboxSettings::default(),
        caps.clone(),
        root,
        &[],
        &[writable.to_path_buf()],
    )
    .map_err(ProbeError::Setup)?;
    let marker = writable.join("written");
    let _ = std::fs::remove_file(&marker);
    let marker_arg = marker.display().to_string();
    let out = crate::proc::run_sandboxed(
        Some(&sandbox),
        &["sh", "-c", "echo ok > \"$1\"", "sh", &marker_arg],
        root,
        &[],
        None,
        Duration::from_secs(10),
    )
    .map_err(ProbeError::Run)?;
    if !out.success() || !marker.is_file() {
        return Err(ProbeError::CannotWrite {
            code: out.status,
            stderr: out.stderr.trim().to_string(),
        });
    }
    Ok(())
}

/// The pids controller's folder for this process, when we may make cgroups there: cgroup v1's
/// `pids` hierarchy, or the unified hierarchy where our cgroup delegates `pids`.
fn pids_cgroup() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut candidates = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let path = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") {
            candidates.push(Path::new("/sys/fs/cgroup/pids").join(path));
        } else if controllers.is_empty() {
            for unified in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                let dir = Path::new(unified).join(path);
                let delegated = std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                    .is_ok_and(|c| c.split_whitespace().any(|c| c == "pids"));
                if delegated {
                    candidates.push(dir);
                }
            }
        }
    }
    candidates.into_iter().find(|dir| {
        let trial = dir.join(format!("team-testing-probe-{}", std::process::id()));
        let ok = std::fs::create_dir(&trial).is_ok() && trial.join("pids.max").exists();
        let _ = std::fs::remove_dir(&trial);
        ok
    })
}

fn landlock_abi() -> std::io::Result<i32> {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: with a null attribute and size 0 the call only reports the ABI version.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if abi < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(abi as i32)
    }
}

/// Runs `true` in a user + network (+ mount) namespace.
fn try_child(mounts: bool) -> Result<(), ProbeError> {
    let plan = ChildPlan {
        userns: Some(super::id_maps()),
        netns: true,
        mounts: mounts.then(MountPlan::default),
        ..Default::default()
    };
    let mut command = Command::new("true");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: `enter` only makes system calls on data prepared before the fork.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(move || plan.enter());
    }
    let mut child = command.spawn().map_err(ProbeError::Spawn)?;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(ProbeError::Exited(status)),
            Ok(None) if std::time::Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ProbeError::Hung);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(ProbeError::Wait(e)),
        }
    }
}
