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
pub mod watch;

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
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
    /// Numbers each run: its cgroup inside `cgroup`.
    runs: std::sync::atomic::AtomicU64,
    /// The folders and files under /tmp it uses, mounted back into the private /tmp.
    tmp_roots: Vec<TmpRoot>,
    /// Set for a watching sandbox: its children run through the file-system watch.
    watch: Option<Watching>,
}

/// A watching sandbox's own files: the wrapper's config and the reports its children write,
/// in a folder beside the sandbox's that no child can write for real.
struct Watching {
    dir: PathBuf,
    config: PathBuf,
    exe: PathBuf,
    next: AtomicU64,
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
            runs: Default::default(),
            tmp_roots: Vec::new(),
            watch: None,
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

    /// A watching sandbox: its children run where every write outside `write` (and the
    /// sandbox's own folder) goes to a throwaway layer, and [`Sandbox::take_watch_reports`]
    /// lists what they changed. Reads see the whole machine; the network is off unless allowed,
    /// the limits and the process cgroup are the same as a confining sandbox's. An error when
    /// the machine has no user and mount namespaces.
    pub fn watching(
        settings: &SandboxSettings,
        root: &Path,
        read: &[PathBuf],
        write: &[PathBuf],
    ) -> std::io::Result<Sandbox> {
        let caps = capabilities().clone();
        if !(settings.enabled && caps.netns && caps.mountns) {
            return Err(std::io::Error::other(
                "the file-system watch needs the sandbox's user and mount namespaces",
            ));
        }
        let mut sandbox = Sandbox::with_capabilities(settings, caps, root, read, write)?;
        sandbox.landlock = None;
        sandbox.tmp_roots.clear();
        let dir = sandbox.root.with_extension("watch");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("stage"))?;
        let config = watch::WatchConfig {
            writable: sandbox.write.clone(),
            shm: sandbox.root.join("shm"),
            stage: dir.join("stage"),
            scratch_mb: settings.limits.file_size_mb.clamp(64, 4096),
            // SAFETY: getuid/getgid cannot fail.
            uid: unsafe { libc::getuid() },
            gid: unsafe { libc::getgid() },
        };
        let config_path = dir.join("config.json");
        std::fs::write(&config_path, serde_json::to_vec(&config)?)?;
        sandbox.watch = Some(Watching {
            dir,
            config: config_path,
            exe: std::env::current_exe()?,
            next: AtomicU64::new(0),
        });
        Ok(sandbox)
    }

    /// What the children of a watching sandbox changed, one report per child in the order
    /// they ran, and forgets them (empty for a confining sandbox).
    pub fn take_watch_reports(&self) -> Vec<watch::WatchReport> {
        let Some(w) = &self.watch else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(&w.dir)
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.retain(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("report-"))
                && p.extension().is_some_and(|e| e == "json")
        });
        files.sort();
        files
            .iter()
            .filter_map(|p| {
                let report = crate::util::read_json::<watch::WatchReport>(p).ok();
                let _ = std::fs::remove_file(p);
                report
            })
            .map(|mut report| {
                // A toolchain's own bookkeeping files, written as regular files: nothing else
                // done to those paths (a link made there, a removal) is left out.
                let own = roots::tool_bookkeeping();
                report.changes.retain(|c| {
                    let written = matches!(
                        c.what,
                        watch::What::Written | watch::What::Created(watch::Kind::File)
                    );
                    !(written && own.contains(&c.path))
                });
                report
            })
            .collect()
    }

    /// Whether this sandbox watches rather than confines.
    pub fn is_watching(&self) -> bool {
        self.watch.is_some()
    }

    /// The argument vector that runs `argv` in this sandbox: through the watch's wrapper for a
    /// watching sandbox, else as it is.
    pub fn wrap(&self, argv: &[&str]) -> Vec<String> {
        let Some(w) = &self.watch else {
            return argv.iter().map(|a| a.to_string()).collect();
        };
        let n = w.next.fetch_add(1, Ordering::Relaxed);
        let mut out = vec![
            w.exe.to_string_lossy().into_owned(),
            watch::WRAPPER_COMMAND.to_string(),
            w.config.to_string_lossy().into_owned(),
            w.dir
                .join(format!("report-{n:06}.json"))
                .to_string_lossy()
                .into_owned(),
            "--".to_string(),
        ];
        out.extend(argv.iter().map(|a| a.to_string()));
        out
    }

    /// SIGKILL to every process `run` left in the sandbox, also those that left the process
    /// group (setsid) and would otherwise outlive it; other runs of the sandbox go on.
    pub fn end(&self, run: u64) {
        let Some(dir) = &self.cgroup else {
            return;
        };
        let run_dir = dir.join(format!("run-{run}"));
        if run_dir.is_dir() {
            cgroup::kill_all(&run_dir);
            let _ = std::fs::remove_dir(&run_dir);
        } else {
            // The run could not have a cgroup of its own and ran in the sandbox's.
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
    /// caller adds its own variables) and the steps the child takes before exec. Returns the
    /// run's number, which [`Sandbox::end`] takes once the child is done.
    pub fn apply(&self, command: &mut Command, cwd: &Path) -> std::io::Result<u64> {
        let run = self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if !self.settings.enabled {
            return Ok(run);
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
        if caps.mountns && self.watch.is_none() && cwd.starts_with("/tmp") && !visible {
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
                .map(|d| cgroup::create_run(d, run).unwrap_or_else(|| d.clone()))
                .map(|d| cstring(&d.join("cgroup.procs")))
                .transpose()?,
            landlock: self.landlock.clone(),
            ..Default::default()
        };
        if self.watch.is_some() {
            // The wrapper is root of its user namespace (mapped to the user), to build the world.
            // SAFETY: getuid/getgid cannot fail.
            let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
            plan.userns = Some((
                format!("0 {uid} 1\n").into_bytes(),
                format!("0 {gid} 1\n").into_bytes(),
            ));
            plan.netns = network_off;
            plan.nproc = self.settings.limits.nproc();
            plan.watch_wrapper = true;
        } else {
            if caps.netns {
                plan.userns = Some(id_maps());
                plan.netns = network_off;
                plan.nproc = self.settings.limits.nproc();
            }
            if caps.mountns {
                plan.mounts = Some(self.mount_plan(network_off)?);
            }
        }
        // SAFETY: `enter` only makes system calls on data prepared above, before the fork.
        unsafe {
            command.pre_exec(move || plan.enter());
        }
        Ok(run)
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
        if let Some(w) = &self.watch {
            let _ = std::fs::remove_dir_all(&w.dir);
        }
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
    fn wrap(&self, argv: &[&str]) -> Vec<String> {
        Sandbox::wrap(self, argv)
    }
    fn apply(&self, command: &mut Command, cwd: &Path) -> std::io::Result<u64> {
        Sandbox::apply(self, command, cwd)
    }
    fn end(&self, run: u64) {
        Sandbox::end(self, run)
    }
}
