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

mod cgroup;
mod child;
pub mod env;
mod landlock_rules;
pub mod probe;
mod roots;
mod settings;

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicI32;
use std::sync::Arc;

use child::{ChildPlan, MountPlan, PrivateTmp, TmpBind};
pub use probe::{capabilities, Capabilities};
pub use roots::{python_roots, toolchain_roots};
pub use settings::{LimitError, Limits, Protections, SandboxSettings};

/// A path under the host's /tmp that a sandbox reads or writes.
struct TmpRoot {
    path: PathBuf,
    is_dir: bool,
    identity: (u64, u64),
    writable: bool,
}

/// One sandbox: its own folder (home/, tmp/, shm/), what its children may read and write, and
/// what was built once for all of them (the Landlock ruleset, the pids cgroup).
pub struct Sandbox {
    settings: SandboxSettings,
    caps: Capabilities,
    root: PathBuf,
    /// Readable: the caller's folders, then toolchains and system files.
    read: Vec<PathBuf>,
    /// How many of `read` the caller gave (the rest are toolchain and system roots).
    own_read: usize,
    /// Writable: the sandbox's folder first, then the caller's.
    write: Vec<PathBuf>,
    /// (device, inode) of each writable folder when the sandbox was made: a folder replaced by
    /// a symlink since (by a child) is refused, not followed.
    identities: Vec<(u64, u64)>,
    landlock: Option<Arc<OwnedFd>>,
    cgroup: Option<PathBuf>,
    /// The folders and files under /tmp it uses, mounted back into the private /tmp.
    tmp_roots: Vec<TmpRoot>,
}

impl Sandbox {
    /// A sandbox rooted at `root` (emptied and made: home/, tmp/, shm/). `read` and `write` are
    /// the caller's folders (missing ones are left out); toolchains and system files are added.
    pub fn new(
        settings: &SandboxSettings,
        root: &Path,
        read: &[PathBuf],
        write: &[PathBuf],
    ) -> std::io::Result<Sandbox> {
        Sandbox::with_capabilities(settings, capabilities().clone(), root, read, write)
    }

    /// [`Sandbox::new`] with the given mechanisms (the probe tries them this way).
    pub fn with_capabilities(
        settings: &SandboxSettings,
        caps: Capabilities,
        root: &Path,
        read: &[PathBuf],
        write: &[PathBuf],
    ) -> std::io::Result<Sandbox> {
        let _ = std::fs::remove_dir_all(root);
        for dir in ["home", "tmp", "shm", "slash-tmp"] {
            std::fs::create_dir_all(root.join(dir))?;
        }
        let root = root.canonicalize()?;
        let canon = |paths: &[PathBuf]| -> Vec<PathBuf> {
            paths.iter().filter_map(|p| p.canonicalize().ok()).collect()
        };
        let mut write = canon(write);
        // shm/ and slash-tmp/ are mounted over /dev/shm and /tmp; Landlock sees them through
        // those mounts, where the rule on the sandbox's folder above is out of sight, so each
        // gets its own rule.
        write.splice(
            0..0,
            [root.clone(), root.join("shm"), root.join("slash-tmp")],
        );
        let mut read = canon(read);
        let own_read = read.len();
        read.extend(toolchain_roots().iter().cloned());
        let identities = write
            .iter()
            .map(|p| std::fs::metadata(p).map(|m| (m.dev(), m.ino())))
            .collect::<std::io::Result<_>>()?;
        let mut sandbox = Sandbox {
            settings: settings.clone(),
            caps,
            root,
            read,
            own_read,
            write,
            identities,
            landlock: None,
            cgroup: None,
            tmp_roots: Vec::new(),
        };
        if !settings.enabled {
            return Ok(sandbox);
        }
        if let Some(abi) = sandbox.caps.landlock_abi {
            let tcp_off = !settings.allow_network && !sandbox.caps.netns;
            sandbox.landlock = landlock_rules::ruleset(abi, &sandbox.read, &sandbox.write, tcp_off)
                .map_err(|e| std::io::Error::other(format!("building the Landlock rules: {e}")))?
                .map(Arc::new);
        }
        if sandbox.caps.mountns {
            sandbox.tmp_roots = sandbox.roots_under_tmp()?;
        }
        if let (Some(parent), n) = (&sandbox.caps.pids_cgroup, settings.limits.processes) {
            if n > 0 {
                sandbox.cgroup = cgroup::create(parent, n);
            }
        }
        Ok(sandbox)
    }

    /// SIGKILL to every process left in the sandbox's cgroup, also those that left the
    /// process group (setsid) and would otherwise outlive the run.
    pub fn kill_all(&self) {
        if let Some(dir) = &self.cgroup {
            cgroup::kill_all(dir);
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
        self.check_unchanged()?;
        let caps = &self.caps;
        let (env, _dropped) = env::child_env(
            std::env::vars_os(),
            &self.root,
            &self.settings.allow_env,
            &self.settings.secret_env,
        );
        command
            .env_clear()
            .envs(env)
            .envs(roots::toolchain_env().iter().map(|(k, v)| (k, v)));
        let writable: Vec<String> = self.write.iter().map(|p| p.display().to_string()).collect();
        let network_off = !self.settings.allow_network;
        command
            .env("TT_SANDBOX", "1")
            .env("TT_SANDBOX_NETWORK", if network_off { "off" } else { "on" })
            .env("TT_SANDBOX_WRITABLE", writable.join(":"));

        // std changes into `cwd` before our steps; the mounts need it again, and absolute.
        let cwd = std::path::absolute(cwd)?;
        let visible = self
            .read
            .iter()
            .chain(&self.write)
            .any(|r| cwd.starts_with(r));
        if caps.mountns && cwd.starts_with("/tmp") && !visible {
            return Err(std::io::Error::other(format!(
                "the working folder {} is not among the sandbox's folders (the private /tmp hides it)",
                cwd.display()
            )));
        }
        let mut plan = ChildPlan {
            rlimits: self.settings.limits.rlimits(),
            cwd: Some(cstring(&cwd)?),
            cgroup_procs: self
                .cgroup
                .as_ref()
                .map(|d| cstring(&d.join("cgroup.procs")))
                .transpose()?,
            landlock: self.landlock.clone(),
            ..Default::default()
        };
        if caps.netns {
            plan.userns = Some(id_maps());
            plan.netns = network_off;
            plan.nproc = self.settings.limits.nproc();
        }
        if caps.mountns {
            plan.mounts = Some(self.mount_plan(network_off)?);
        }
        // SAFETY: `enter` only makes system calls on data prepared above, before the fork.
        unsafe {
            command.pre_exec(move || plan.enter());
        }
        Ok(())
    }

    fn mount_plan(&self, network_off: bool) -> std::io::Result<MountPlan> {
        // /run holds host service sockets (databases, D-Bus, Docker); it stays out of reach
        // while the network is off, unless the caller's folders or the programs live there
        // (NixOS keeps them in /run/current-system). /etc's entries do not count:
        // /etc/resolv.conf often resolves into /run.
        let own = self
            .write
            .iter()
            .chain(&self.read[..self.own_read])
            .chain(roots::program_roots());
        let hide_run = network_off
            && Path::new("/run").is_dir()
            && !own.clone().any(|p| p.starts_with("/run"));
        Ok(MountPlan {
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
            shm: Path::new("/dev/shm")
                .is_dir()
                .then(|| cstring(&self.root.join("shm")))
                .transpose()?,
            private_tmp: Path::new("/tmp")
                .is_dir()
                .then(|| self.private_tmp())
                .transpose()?,
        })
    }

    fn private_tmp(&self) -> std::io::Result<PrivateTmp> {
        let bind = |source: &Path, target: &Path, is_dir, identity, writable| {
            let parents = target
                .ancestors()
                .skip(1)
                .take_while(|a| *a != Path::new("/tmp") && *a != Path::new("/"))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .map(cstring)
                .collect::<std::io::Result<_>>()?;
            Ok::<_, std::io::Error>(TmpBind {
                source: cstring(source)?,
                target: cstring(target)?,
                parents,
                is_dir,
                identity,
                writable,
                tree: AtomicI32::new(-1),
            })
        };
        let base_dir = self.root.join("slash-tmp");
        let meta = std::fs::metadata(&base_dir)?;
        Ok(PrivateTmp {
            base: bind(
                &base_dir,
                Path::new("/tmp"),
                true,
                (meta.dev(), meta.ino()),
                true,
            )?,
            binds: self
                .tmp_roots
                .iter()
                .map(|r| bind(&r.path, &r.path, r.is_dir, r.identity, r.writable))
                .collect::<std::io::Result<_>>()?,
        })
    }

    /// The folders and files (read or written) that live under /tmp, outermost first.
    fn roots_under_tmp(&self) -> std::io::Result<Vec<TmpRoot>> {
        let tmp = Path::new("/tmp");
        let mut roots: Vec<TmpRoot> = Vec::new();
        let all = self
            .read
            .iter()
            .map(|p| (p, false))
            .chain(self.write.iter().map(|p| (p, true)));
        for (path, writable) in all {
            if !path.starts_with(tmp) || path == tmp {
                continue;
            }
            if let Some(known) = roots.iter_mut().find(|r| &r.path == path) {
                known.writable |= writable;
                continue;
            }
            let meta = std::fs::metadata(path)?;
            roots.push(TmpRoot {
                path: path.clone(),
                is_dir: meta.is_dir(),
                identity: (meta.dev(), meta.ino()),
                writable,
            });
        }
        roots.sort_by_key(|r| r.path.components().count());
        Ok(roots)
    }

    /// Every writable folder is still the folder it was (not a symlink planted by a child).
    fn check_unchanged(&self) -> std::io::Result<()> {
        for (path, (dev, ino)) in self.write.iter().zip(&self.identities) {
            let meta = std::fs::symlink_metadata(path)?;
            if !meta.is_dir() || meta.dev() != *dev || meta.ino() != *ino {
                return Err(std::io::Error::other(format!(
                    "the sandbox folder {} was replaced since the sandbox was made; refusing to use it",
                    path.display()
                )));
            }
        }
        Ok(())
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Some(dir) = &self.cgroup {
            cgroup::remove(dir);
        }
        // Its home and temporary files are of no use after the run.
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Runs a short probe of the project's toolchain (`.venv/bin/python -c ...`) in a throwaway
/// sandbox that reads `repo`: the interpreter and its `.pth` files are the project's code too.
pub fn run_probe(
    argv: &[&str],
    repo: &Path,
    timeout: std::time::Duration,
) -> Result<crate::proc::Captured, crate::proc::ProcError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let root = std::env::temp_dir().join(format!(
        "team-testing-probe-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let sandbox = Sandbox::new(
        &SandboxSettings::default(),
        &root,
        &[repo.to_path_buf()],
        &[],
    )
    .map_err(|cause| crate::proc::ProcError::Sandbox {
        program: argv.first().unwrap_or(&"").to_string(),
        cause,
    })?;
    let cwd = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
    crate::proc::run_sandboxed(Some(&sandbox), argv, &cwd, &[], None, timeout)
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

impl crate::proc::Confinement for Sandbox {
    fn apply(&self, command: &mut Command, cwd: &Path) -> std::io::Result<()> {
        Sandbox::apply(self, command, cwd)
    }
    fn kill_all(&self) {
        Sandbox::kill_all(self)
    }
}
