//! What a session asks of its sandbox (settings kept in session.json) and what the machine
//! grants (protections, in words, for the user and the report).

use serde::{Deserialize, Serialize};

use super::child::RLimit;
use super::probe::{capabilities, Capabilities};

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

/// A `--limit KEY=VALUE` that cannot be applied; the whole assignment is kept for the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error("--limit {assignment}: expected KEY=VALUE")]
    NotAssignment { assignment: String },
    #[error("--limit {assignment}: {value:?} is not a whole number")]
    NotANumber { assignment: String, value: String },
    #[error(
        "--limit {assignment}: unknown limit {key:?} (cpu_s, memory_mb, address_space_mb, \
         file_size_mb, open_files, processes)"
    )]
    Unknown { assignment: String, key: String },
}

impl Limits {
    /// Applies `key=value` (`memory_mb=2048`); the error names the key.
    pub fn set(&mut self, assignment: &str) -> Result<(), LimitError> {
        let (key, value) = assignment
            .split_once('=')
            .ok_or_else(|| LimitError::NotAssignment {
                assignment: assignment.into(),
            })?;
        let value: u64 = value.trim().parse().map_err(|_| LimitError::NotANumber {
            assignment: assignment.into(),
            value: value.into(),
        })?;
        let slot = match key.trim() {
            "cpu_s" => &mut self.cpu_s,
            "memory_mb" => &mut self.memory_mb,
            "address_space_mb" => &mut self.address_space_mb,
            "file_size_mb" => &mut self.file_size_mb,
            "open_files" => &mut self.open_files,
            "processes" => &mut self.processes,
            other => {
                return Err(LimitError::Unknown {
                    assignment: assignment.into(),
                    key: other.into(),
                })
            }
        };
        *slot = value;
        Ok(())
    }

    /// The limits as (resource, soft, hard), never above the hard limits team-testing itself
    /// runs under (raising one is not allowed and would fail the child's start).
    pub(super) fn rlimits(&self) -> Vec<RLimit> {
        const MIB: u64 = 1 << 20;
        let mut out: Vec<RLimit> = Vec::new();
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
        for (resource, soft, hard) in out.iter_mut() {
            *hard = (*hard).min(hard_limit(*resource));
            *soft = (*soft).min(*hard);
        }
        out
    }

    /// The process limit (RLIMIT_NPROC in the user namespace), never above our own hard limit.
    pub(super) fn nproc(&self) -> Option<u64> {
        (self.processes > 0).then(|| self.processes.min(hard_limit(libc::RLIMIT_NPROC)))
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
        if caps.landlock_abi.is_none() {
            missing.push(
                "environment: without Landlock a child can still read team-testing's own \
                 environment (and credentials in it) through /proc"
                    .into(),
            );
        }
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
            environment: "credentials scrubbed (*_KEY, *_TOKEN, *_SECRET, *_PASSWORD, AWS_*, \
                          GITHUB_*, …); HOME, TMPDIR and XDG folders inside the sandbox"
                .into(),
            missing,
            filesystem_contained: caps.landlock_abi.is_some() || caps.mountns,
        }
    }
}

fn running_as_root() -> bool {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() == 0 }
}

/// The hard limit team-testing itself runs under (unlimited when it cannot be read).
fn hard_limit(resource: libc::__rlimit_resource_t) -> u64 {
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: getrlimit writes into the struct we own.
    unsafe { libc::getrlimit(resource, &mut current) };
    current.rlim_max
}
