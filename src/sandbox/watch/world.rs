//! Builds the watched world on a scratch tmpfs, in the wrapper's own mount namespace: the
//! layout's steps carried out, then the run's writable folders bound in as they are. Runs in
//! the wrapper process (root of its user namespace, before anything of the project runs).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::changes::{copy_changes, overlay_changes, skeleton_changes, Changes};
use super::layout::{self, Step};
use super::WatchConfig;
use crate::sandbox::child::{check, set_readonly};

/// The devices a test may use; everything else of the host's /dev stays out.
const DEVICES: [&str; 6] = ["null", "zero", "full", "random", "urandom", "tty"];
const DEV_LINKS: [(&str, &str); 5] = [
    ("fd", "/proc/self/fd"),
    ("stdin", "/proc/self/fd/0"),
    ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"),
    ("ptmx", "pts/ptmx"),
];

pub struct World {
    /// The new root: a folder of the scratch tmpfs, bound on itself for pivot_root.
    pub root: PathBuf,
    /// (host folder, its overlay's upper folder).
    layers: Vec<(PathBuf, PathBuf)>,
    /// (host folder, the entries the skeleton was built with).
    skeletons: Vec<(PathBuf, BTreeSet<OsString>)>,
    /// Host files copied into skeleton folders.
    copies: Vec<PathBuf>,
    /// What is not watched, and why: bound read-only where an overlay could not be made.
    pub unwatched: Vec<String>,
}

impl World {
    /// What the run changed, read off the scratch.
    pub fn changes(&self) -> Changes {
        let mut out = Changes::default();
        for (host, upper) in &self.layers {
            overlay_changes(host, upper, &mut out);
        }
        for (host, expected) in &self.skeletons {
            skeleton_changes(host, &self.inside(host), expected, &mut out);
        }
        for host in &self.copies {
            copy_changes(host, &self.inside(host), &mut out);
        }
        out
    }

    /// Where a host path lives in the new root.
    pub fn inside(&self, host: &Path) -> PathBuf {
        self.root.join(host.strip_prefix("/").unwrap_or(host))
    }
}

pub fn build(cfg: &WatchConfig) -> io::Result<World> {
    // Nothing mounted from here on may reach the host's mount table.
    mount(
        None,
        Path::new("/"),
        None,
        libc::MS_REC | libc::MS_PRIVATE,
        None,
    )?;
    let mounts = layout::parse_mountinfo(&std::fs::read_to_string("/proc/self/mountinfo")?);
    let steps = layout::plan(&mounts, &layout::list_host);
    mount(
        Some("tmpfs"),
        &cfg.stage,
        Some("tmpfs"),
        libc::MS_NOSUID,
        Some(&format!("size={}m,mode=700", cfg.scratch_mb.max(16))),
    )?;
    let root = cfg.stage.join("root");
    std::fs::create_dir_all(&root)?;
    std::fs::create_dir_all(cfg.stage.join("layers"))?;
    // pivot_root wants the new root to be a mount point.
    mount(
        Some(&root.to_string_lossy()),
        &root,
        None,
        libc::MS_BIND,
        None,
    )?;
    let mut world = World {
        root,
        layers: Vec::new(),
        skeletons: Vec::new(),
        copies: Vec::new(),
        unwatched: Vec::new(),
    };
    let expected = expected_entries(&steps);
    for step in &steps {
        world.carry_out(step, cfg, &expected)?;
    }
    let mut writable: Vec<&PathBuf> = cfg.writable.iter().filter(|w| w.is_dir()).collect();
    writable.sort_by_key(|w| w.components().count());
    for dir in writable {
        let target = world.inside(dir);
        if !target.is_dir() {
            std::fs::create_dir_all(&target)?;
        }
        mount(
            Some(&dir.to_string_lossy()),
            &target,
            None,
            libc::MS_BIND | libc::MS_REC,
            None,
        )?;
    }
    Ok(world)
}

/// The names each skeleton folder is built with: its steps' last components.
fn expected_entries(steps: &[Step]) -> BTreeMap<PathBuf, BTreeSet<OsString>> {
    let mut out: BTreeMap<PathBuf, BTreeSet<OsString>> = BTreeMap::new();
    for step in steps {
        let path = match step {
            Step::Skeleton(p) | Step::Overlay(p) | Step::CopyFile(p) => p.clone(),
            Step::BindReadOnly { path, .. } | Step::Symlink { path, .. } => path.clone(),
            Step::Dev => "/dev".into(),
            Step::Proc => "/proc".into(),
        };
        if let (Some(parent), Some(name)) = (path.parent(), path.file_name()) {
            out.entry(parent.to_path_buf())
                .or_default()
                .insert(name.to_os_string());
        }
    }
    out
}

impl World {
    fn carry_out(
        &mut self,
        step: &Step,
        cfg: &WatchConfig,
        expected: &BTreeMap<PathBuf, BTreeSet<OsString>>,
    ) -> io::Result<()> {
        match step {
            Step::Skeleton(path) => {
                std::fs::create_dir_all(self.inside(path))?;
                self.skeletons.push((
                    path.clone(),
                    expected.get(path).cloned().unwrap_or_default(),
                ));
            }
            Step::Overlay(path) => {
                if let Err(e) = self.overlay(path) {
                    self.unwatched.push(format!(
                        "{}: bound read-only, no overlay could be made ({e})",
                        path.display()
                    ));
                    self.bind_read_only(path, true)?;
                }
            }
            Step::CopyFile(path) => {
                let target = self.inside(path);
                match std::fs::copy(path, &target) {
                    Ok(_) => self.copies.push(path.clone()),
                    Err(_) => self.bind_read_only(path, false)?,
                }
            }
            Step::BindReadOnly { path, dir } => self.bind_read_only(path, *dir)?,
            Step::Symlink { path, target } => {
                std::os::unix::fs::symlink(target, self.inside(path))?;
            }
            Step::Dev => self.dev(&cfg.shm)?,
            Step::Proc => std::fs::create_dir_all(self.inside(Path::new("/proc")))?,
        }
        Ok(())
    }

    fn overlay(&mut self, host: &Path) -> io::Result<()> {
        let n = self.layers.len();
        let scratch = self
            .root
            .parent()
            .expect("the root is inside the stage")
            .join("layers")
            .join(n.to_string());
        let (upper, work) = (scratch.join("u"), scratch.join("w"));
        std::fs::create_dir_all(&upper)?;
        std::fs::create_dir_all(&work)?;
        let target = self.inside(host);
        std::fs::create_dir_all(&target)?;
        let plain = |p: &Path| {
            let s = p.to_string_lossy().into_owned();
            (!s.contains([',', ':', '\\'])).then_some(s)
        };
        let (Some(lower), Some(up), Some(wk)) = (plain(host), plain(&upper), plain(&work)) else {
            return Err(io::Error::other("a path has ',', ':' or '\\' in it"));
        };
        let options = format!("lowerdir={lower},upperdir={up},workdir={wk}");
        // userxattr is how a user namespace's overlay marks whiteouts and opaque folders (Linux
        // 5.11+); an older kernel refuses the word and takes the plain form.
        mount(
            Some("overlay"),
            &target,
            Some("overlay"),
            0,
            Some(&format!("{options},userxattr")),
        )
        .or_else(|_| mount(Some("overlay"), &target, Some("overlay"), 0, Some(&options)))?;
        self.layers.push((host.to_path_buf(), upper));
        Ok(())
    }

    fn bind_read_only(&mut self, host: &Path, dir: bool) -> io::Result<()> {
        let target = self.inside(host);
        if dir {
            std::fs::create_dir_all(&target)?;
        } else {
            std::fs::write(&target, b"")?;
        }
        let flags = libc::MS_BIND | if dir { libc::MS_REC } else { 0 };
        if mount(Some(&host.to_string_lossy()), &target, None, flags, None).is_err() {
            // Unreadable or gone: left out of the world (an empty folder or file).
            return Ok(());
        }
        let c = cstring(&target)?;
        set_readonly(&c, true).or_else(|_| {
            mount(
                None,
                &target,
                None,
                libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY,
                None,
            )
        })
    }

    /// A fresh /dev on its own tmpfs (a skeleton: a node a test adds shows): the harmless
    /// devices bound from the host, its own ptys, the sandbox's /dev/shm.
    fn dev(&mut self, shm: &Path) -> io::Result<()> {
        let dev = self.inside(Path::new("/dev"));
        std::fs::create_dir_all(&dev)?;
        mount(
            Some("tmpfs"),
            &dev,
            Some("tmpfs"),
            libc::MS_NOSUID,
            Some("size=1m,mode=755"),
        )?;
        let mut names = BTreeSet::new();
        for name in DEVICES {
            let host = Path::new("/dev").join(name);
            if !host.exists() {
                continue;
            }
            std::fs::write(dev.join(name), b"")?;
            mount(
                Some(&host.to_string_lossy()),
                &dev.join(name),
                None,
                libc::MS_BIND,
                None,
            )?;
            names.insert(OsString::from(name));
        }
        for (name, target) in DEV_LINKS {
            std::os::unix::fs::symlink(target, dev.join(name))?;
            names.insert(OsString::from(name));
        }
        std::fs::create_dir(dev.join("pts"))?;
        mount(
            Some("devpts"),
            &dev.join("pts"),
            Some("devpts"),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            Some("newinstance,ptmxmode=0666,mode=620"),
        )
        .or_else(|_| {
            mount(
                Some("/dev/pts"),
                &dev.join("pts"),
                None,
                libc::MS_BIND | libc::MS_REC,
                None,
            )
        })?;
        std::fs::create_dir(dev.join("shm"))?;
        mount(
            Some(&shm.to_string_lossy()),
            &dev.join("shm"),
            None,
            libc::MS_BIND,
            None,
        )?;
        names.extend(["pts".into(), "shm".into()]);
        self.skeletons.push(("/dev".into(), names));
        Ok(())
    }
}

fn cstring(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::other(format!("{} contains a NUL byte", path.display())))
}

/// mount(2) with owned strings.
fn mount(
    source: Option<&str>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> io::Result<()> {
    let source = source.map(CString::new).transpose()?;
    let fstype = fstype.map(CString::new).transpose()?;
    let data = data.map(CString::new).transpose()?;
    let target = cstring(target)?;
    let ptr = |c: &Option<CString>| c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: every pointer is a NUL-terminated string that outlives the call, or null.
    check(unsafe {
        libc::mount(
            ptr(&source),
            target.as_ptr(),
            ptr(&fstype),
            flags,
            ptr(&data).cast(),
        )
    })
}
