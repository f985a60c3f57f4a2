//! The sandbox every child process that runs the target's code goes through: the generator's
//! helper, the test runs, and command roles that ask for it.
//!
//! Layers, each used when the machine grants it (see [`probe`]), none needing root:
//! - **Landlock**: writes only under the sandbox's folders; reads only the repository, the
//!   session, toolchains and system files; no signals to processes outside the sandbox.
//! - **Mount namespace**: every other mount read-only (chmod, chown and utime outside the
//!   sandbox fail too, which Landlock does not cover); a private /dev/shm; /run hidden while the
//!   network is off (host service sockets).
//! - **Network namespace**: only a loopback of its own, unless the network is allowed.
//! - **rlimits**: CPU seconds, memory, file size, open files, and processes (the process limit
//!   counts only the sandbox's processes, thanks to the user namespace).
//! - **Environment**: credentials scrubbed; HOME, TMPDIR and XDG folders inside the sandbox.

mod child;
pub mod env;
mod landlock_rules;
pub mod probe;
mod roots;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use child::{ChildPlan, MountPlan};
pub use probe::{capabilities, Capabilities};
pub use roots::{python_roots, toolchain_roots};

/// Per-child resource limits. 0 switches one off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// CPU seconds per process (SIGXCPU, then SIGKILL 5 s later).
    pub cpu_s: u64,
    /// Data segment per process (RLIMIT_DATA: heap and private writable mappings), MiB.
    pub memory_mb: u64,
    /// Address space per process (RLIMIT_AS), MiB. Generous: V8 and Go reserve large ranges.
    pub address_space_mb: u64,
    /// Largest file a process may write, MiB.
    pub file_size_mb: u64,
    pub open_files: u64,
    /// Processes in the whole sandbox (only with a user namespace; otherwise the kernel would
    /// count every process of the user).
    pub processes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            cpu_s: 1800,
            memory_mb: 8192,
            address_space_mb: 16384,
            file_size_mb: 2048,
            open_files: 4096,
            processes: 512,
        }
    }
}

impl Limits {
    /// Applies `key=value` (`memory_mb=2048`); the error names the key.
    pub fn set(&mut self, assignment: &str) -> Result<(), String> {
        let (key, value) = assignment
            .split_once('=')
            .ok_or_else(|| format!("--limit {assignment}: expected KEY=VALUE"))?;
        let value: u64 = value
            .trim()
            .parse()
            .map_err(|_| format!("--limit {assignment}: {value:?} is not a whole number"))?;
        let slot = match key.trim() {
            "cpu_s" => &mut self.cpu_s,
            "memory_mb" => &mut self.memory_mb,
            "address_space_mb" => &mut self.address_space_mb,
            "file_size_mb" => &mut self.file_size_mb,
            "open_files" => &mut self.open_files,
            "processes" => &mut self.processes,
            other => {
                return Err(format!(
                    "--limit {assignment}: unknown limit {other:?} (cpu_s, memory_mb, \
                     address_space_mb, file_size_mb, open_files, processes)"
                ))
            }
        };
        *slot = value;
        Ok(())
    }

    fn rlimits(&self) -> Vec<child::RLimit> {
        const MIB: u64 = 1 << 20;
        let mut out = Vec::new();
        if self.cpu_s > 0 {
            out.push((libc::RLIMIT_CPU, self.cpu_s, self.cpu_s + 5));
        }
        for (resource, mb) in [
            (libc::RLIMIT_DATA, self.memory_mb),
            (libc::RLIMIT_AS, self.address_space_mb),
            (libc::RLIMIT_FSIZE, self.file_size_mb),
        ] {
            if mb > 0 {
                out.push((resource, mb * MIB, mb * MIB));
            }
        }
        if self.open_files > 0 {
            out.push((libc::RLIMIT_NOFILE, self.open_files, self.open_files));
        }
        out
    }
}

/// How a session's children are sandboxed; kept in session.json so a resume does the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SandboxSettings {
    /// False only with `--unsafe-no-sandbox`.
    pub enabled: bool,
    /// `--allow-network`: the children keep the machine's network.
    pub allow_network: bool,
    /// Variables that pass although they look like credentials (`--allow-env NAME`).
    pub allow_env: Vec<String>,
    /// More variables known to hold credentials (a backend's `api_key_env`).
    pub secret_env: Vec<String>,
    pub limits: Limits,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            enabled: true,
            allow_network: false,
            allow_env: Vec::new(),
            secret_env: Vec::new(),
            limits: Limits::default(),
        }
    }
}

/// What the sandbox protects on this machine, in words, for the start of a run, session.json
/// and the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Protections {
    pub filesystem: String,
    pub network: String,
    pub limits: String,
    pub environment: String,
    /// Protections that are missing, one line each, with the reason.
    pub missing: Vec<String>,
    /// Writes outside the sandbox are blocked (Landlock or read-only mounts).
    pub filesystem_contained: bool,
}

impl SandboxSettings {
    pub fn protections(&self) -> Protections {
        self.protections_with(capabilities())
    }

    pub fn protections_with(&self, caps: &Capabilities) -> Protections {
        if !self.enabled {
            return Protections {
                filesystem: "none (--unsafe-no-sandbox)".into(),
                network: "open (--unsafe-no-sandbox)".into(),
                limits: "none (--unsafe-no-sandbox)".into(),
                environment: "inherited unchanged (--unsafe-no-sandbox)".into(),
                missing: vec![
                    "every protection: the target's code runs with your user's full rights \
                     (--unsafe-no-sandbox)"
                        .into(),
                ],
                filesystem_contained: false,
            };
        }
        let mut missing = caps.missing.clone();
        let filesystem = match (caps.landlock_abi, caps.mountns) {
            (Some(abi), true) => format!(
                "Landlock ABI {abi}: writes only in the sandbox's folders, reads only the \
                 repository, the session, toolchains and system files; every other mount \
                 read-only (mount namespace)"
            ),
            (Some(abi), false) => {
                missing.push(
                    "read-only mounts: chmod, chown and utime outside the sandbox are not blocked"
                        .into(),
                );
                format!(
                    "Landlock ABI {abi}: writes only in the sandbox's folders, reads only the \
                     repository, the session, toolchains and system files"
                )
            }
            (None, true) => {
                missing
                    .push("Landlock: reads are not limited (your home folder is readable)".into());
                "every mount read-only but the sandbox's folders (mount namespace)".into()
            }
            (None, false) => "none: no mechanism available".into(),
        };
        let network = if self.allow_network {
            "open (--allow-network)".to_string()
        } else if caps.netns {
            "off: a network namespace of its own with only a loopback".into()
        } else if caps.landlock_abi.unwrap_or(0) >= 4 {
            missing.push("network namespace: only TCP is blocked (by Landlock); UDP and unix sockets are open".into());
            "TCP connect and bind blocked (Landlock)".into()
        } else {
            missing.push("network: no mechanism to turn it off".into());
            "open: no mechanism available".into()
        };
        let l = &self.limits;
        let processes = if caps.pids_cgroup.is_some() {
            format!("; {} processes per sandbox (pids cgroup)", l.processes)
        } else if caps.netns && !running_as_root() {
            format!("; {} processes per sandbox (user namespace)", l.processes)
        } else {
            missing.push(
                "process limit: needs a pids cgroup team-testing may write, or a user namespace \
                 and a user other than root"
                    .into(),
            );
            String::new()
        };
        Protections {
            filesystem,
            network,
            limits: format!(
                "{} CPU s, {} MiB data, {} MiB address space, {} MiB files, {} open files per process{processes} (0 = off)",
                l.cpu_s, l.memory_mb, l.address_space_mb, l.file_size_mb, l.open_files
            ),
            environment: "credentials scrubbed (*_KEY, *_TOKEN, *_SECRET, AWS_*, GITHUB_*, …); \
                          HOME, TMPDIR and XDG folders inside the sandbox"
                .into(),
            missing,
            filesystem_contained: caps.landlock_abi.is_some() || caps.mountns,
        }
    }
}

/// One child's sandbox: its own folder (home/, tmp/) and what it may read and write.
pub struct Sandbox {
    settings: SandboxSettings,
    root: PathBuf,
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    /// The sandbox's own pids cgroup (removed on drop).
    cgroup: Option<PathBuf>,
}

impl Sandbox {
    /// A sandbox rooted at `root` (emptied and made: home/, tmp/). `read` and `write` are the
    /// caller's folders; the toolchains and system files are added here.
    pub fn new(
        settings: &SandboxSettings,
        root: &Path,
        read: &[PathBuf],
        write: &[PathBuf],
    ) -> std::io::Result<Sandbox> {
        let _ = std::fs::remove_dir_all(root);
        std::fs::create_dir_all(root.join("home"))?;
        std::fs::create_dir_all(root.join("tmp"))?;
        let root = root.canonicalize()?;
        let canon = |paths: &[PathBuf]| -> Vec<PathBuf> {
            paths.iter().filter_map(|p| p.canonicalize().ok()).collect()
        };
        let mut write = canon(write);
        write.insert(0, root.clone());
        let mut read = canon(read);
        read.extend(toolchain_roots().iter().cloned());
        let cgroup = if settings.enabled {
            make_cgroup(settings.limits.processes)
        } else {
            None
        };
        Ok(Sandbox {
            settings: settings.clone(),
            root,
            read,
            write,
            cgroup,
        })
    }

    /// SIGKILL to every process left in the sandbox's cgroup, also those that left the
    /// process group (setsid) and would otherwise outlive the run.
    pub fn kill_all(&self) {
        let Some(dir) = &self.cgroup else {
            return;
        };
        for _ in 0..20 {
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
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    pub fn enabled(&self) -> bool {
        self.settings.enabled
    }

    /// The sandbox's own folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Sets `command` up to run inside the sandbox in `cwd`: its environment (call before the
    /// caller adds its own variables) and the steps the child takes before exec.
    pub fn apply(&self, command: &mut Command, cwd: &Path) -> std::io::Result<()> {
        if !self.settings.enabled {
            return Ok(());
        }
        let caps = capabilities();
        let (env, _dropped) = env::child_env(
            std::env::vars(),
            &self.root,
            &self.settings.allow_env,
            &self.settings.secret_env,
        );
        command
            .env_clear()
            .envs(env)
            .envs(roots::toolchain_env().iter().map(|(k, v)| (k, v)));
        let writable: Vec<String> = self.write.iter().map(|p| p.display().to_string()).collect();
        command
            .env("TT_SANDBOX", "1")
            .env(
                "TT_SANDBOX_NETWORK",
                if self.settings.allow_network {
                    "on"
                } else {
                    "off"
                },
            )
            .env("TT_SANDBOX_WRITABLE", writable.join(":"));

        let network_off = !self.settings.allow_network;
        let mut plan = ChildPlan {
            rlimits: self.settings.limits.rlimits(),
            cwd: Some(cstring(cwd)?),
            cgroup_procs: self
                .cgroup
                .as_ref()
                .map(|d| cstring(&d.join("cgroup.procs")))
                .transpose()?,
            ..Default::default()
        };
        if caps.netns {
            plan.userns = Some(id_maps());
            plan.netns = network_off;
            plan.nproc =
                (self.settings.limits.processes > 0).then_some(self.settings.limits.processes);
        }
        if caps.mountns {
            let hide_run = network_off
                && Path::new("/run").is_dir()
                && !self
                    .write
                    .iter()
                    .chain(&self.read)
                    .any(|p| p.starts_with("/run"));
            plan.mounts = Some(MountPlan {
                writable: self
                    .write
                    .iter()
                    .map(|p| cstring(p))
                    .collect::<Result<_, _>>()?,
                hide: if hide_run {
                    vec![c"/run".to_owned()]
                } else {
                    Vec::new()
                },
                private_shm: Path::new("/dev/shm").is_dir(),
            });
        }
        if let Some(abi) = caps.landlock_abi {
            let tcp_off = network_off && !caps.netns;
            plan.landlock =
                landlock_rules::ruleset(abi, &self.read, &self.write, caps.mountns, tcp_off)
                    .map_err(|e| {
                        std::io::Error::other(format!("building the Landlock rules: {e}"))
                    })?;
        }
        // SAFETY: `enter` only makes system calls on data prepared above, before the fork.
        unsafe {
            command.pre_exec(move || plan.enter());
        }
        Ok(())
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Some(dir) = &self.cgroup {
            self.kill_all();
            let _ = std::fs::remove_dir(dir);
        }
    }
}

fn running_as_root() -> bool {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() == 0 }
}

/// A fresh pids cgroup with `pids.max` set, under the probed pids folder.
fn make_cgroup(processes: u64) -> Option<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    if processes == 0 {
        return None;
    }
    let parent = capabilities().pids_cgroup.as_ref()?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = parent.join(format!("team-testing-{}-{n}", std::process::id()));
    std::fs::create_dir(&dir).ok()?;
    if std::fs::write(dir.join("pids.max"), processes.to_string()).is_err() {
        let _ = std::fs::remove_dir(&dir);
        return None;
    }
    Some(dir)
}

/// The uid_map and gid_map lines that keep the user's own ids inside the namespace.
fn id_maps() -> (Vec<u8>, Vec<u8>) {
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    (
        format!("{uid} {uid} 1\n").into_bytes(),
        format!("{gid} {gid} 1\n").into_bytes(),
    )
}

fn cstring(path: &Path) -> std::io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other(format!("{} contains a NUL byte", path.display())))
}

#[cfg(test)]
mod tests;
