//! What a sandboxed child does to itself between fork and exec. Everything here runs in the
//! forked child of a multi-threaded parent, so it may only make system calls: every path and
//! every byte it writes was prepared by the parent, and nothing allocates.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// One resource limit: `(resource, soft, hard)`.
pub type RLimit = (libc::__rlimit_resource_t, u64, u64);

/// The steps, prepared in the parent.
#[derive(Default)]
pub struct ChildPlan {
    /// Limits set before anything else (the process limit comes after the user namespace, so
    /// it counts only the sandbox's own processes).
    pub rlimits: Vec<RLimit>,
    /// The process limit; applied only inside a new user namespace.
    pub nproc: Option<u64>,
    /// `Some` to enter a user namespace: the uid_map and gid_map lines.
    pub userns: Option<(Vec<u8>, Vec<u8>)>,
    /// A new network namespace with only a loopback (needs `userns`).
    pub netns: bool,
    /// A new mount namespace: everything read-only but these folders (needs `userns`).
    pub mounts: Option<MountPlan>,
    /// A Landlock ruleset to enforce on exec (built once per sandbox, shared by its children).
    pub landlock: Option<Arc<OwnedFd>>,
    /// The working directory, entered again after the mounts changed under it.
    pub cwd: Option<CString>,
    /// `cgroup.procs` of the sandbox's pids cgroup, joined first (before /sys turns read-only).
    pub cgroup_procs: Option<CString>,
    /// The child is the file-system watch's wrapper: it gets a mount namespace of its own and
    /// keeps its capabilities there to build the watched world (it gives them up itself before
    /// the command runs).
    pub watch_wrapper: bool,
}

#[derive(Default)]
pub struct MountPlan {
    /// Stay writable (each is bind-mounted over itself before the rest turns read-only).
    pub writable: Vec<CString>,
    /// An empty tmpfs goes over each: host service sockets in /run stay out of reach.
    pub hide: Vec<CString>,
    /// Bind-mounted over /dev/shm: shared memory of the host stays out of reach, and the
    /// sandbox's own folder is one Landlock lets it write.
    pub shm: Option<CString>,
    /// A private /tmp (the host's /tmp holds tmux, X11 and agent sockets, which no file rule
    /// stops a connect to), with the sandbox's own folders under /tmp mounted back.
    pub private_tmp: Option<PrivateTmp>,
}

pub struct PrivateTmp {
    /// The sandbox's own (empty, Landlock-writable) folder that becomes /tmp.
    pub base: TmpBind,
    /// Folders and files under the host's /tmp that the sandbox uses, outermost first.
    pub binds: Vec<TmpBind>,
}

/// A folder or file mounted at `target` from the same path as the child's namespace sees it
/// before /tmp is covered (cloned with open_tree, checked against what the parent saw).
pub struct TmpBind {
    /// Where the clone is taken (the path itself, or the sandbox's folder for `base`).
    pub source: CString,
    pub target: CString,
    /// Folders to make first, outermost first (those that exist already are fine).
    pub parents: Vec<CString>,
    pub is_dir: bool,
    /// (device, inode) the parent saw at `source`.
    pub identity: (u64, u64),
    pub writable: bool,
    /// The detached clone, between taking it and mounting it (set in the child only).
    pub tree: AtomicI32,
}

impl ChildPlan {
    /// Applies the plan to the calling (child) process.
    pub fn enter(&self) -> io::Result<()> {
        if let Some(procs) = &self.cgroup_procs {
            // "0" is the writing process itself.
            write_file(procs, b"0")?;
        }
        for &(resource, soft, hard) in &self.rlimits {
            set_rlimit(resource, soft, hard)?;
        }
        if let Some((uid_map, gid_map)) = &self.userns {
            let mut flags = libc::CLONE_NEWUSER;
            if self.netns {
                flags |= libc::CLONE_NEWNET;
            }
            if self.mounts.is_some() || self.watch_wrapper {
                flags |= libc::CLONE_NEWNS;
            }
            check(unsafe { libc::unshare(flags) })?;
            write_file(c"/proc/self/setgroups", b"deny")?;
            write_file(c"/proc/self/uid_map", uid_map)?;
            write_file(c"/proc/self/gid_map", gid_map)?;
            if let Some(n) = self.nproc {
                set_rlimit(libc::RLIMIT_NPROC, n, n)?;
            }
            if self.netns {
                loopback_up()?;
            }
            if let Some(mounts) = &self.mounts {
                mounts.apply()?;
            }
        }
        if let Some(cwd) = &self.cwd {
            check(unsafe { libc::chdir(cwd.as_ptr()) })?;
        }
        if self.watch_wrapper {
            return Ok(());
        }
        drop_capabilities()?;
        // No set-uid program (sudo, su) may give the child more rights than it has.
        check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) })?;
        if let Some(fd) = &self.landlock {
            let rc = unsafe {
                libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) as libc::c_int
            };
            check(rc)?;
        }
        Ok(())
    }
}

/// `struct mount_attr` of mount_setattr(2).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x0000_0001;
const AT_RECURSIVE: libc::c_uint = 0x8000;

impl MountPlan {
    fn apply(&self) -> io::Result<()> {
        let none: *const libc::c_char = std::ptr::null();
        // Nothing done here may reach the parent's mount namespace.
        check(unsafe {
            libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        })?;
        for dir in &self.writable {
            check(unsafe {
                libc::mount(
                    dir.as_ptr(),
                    dir.as_ptr(),
                    none,
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                )
            })?;
        }
        set_readonly(c"/", true)?;
        for dir in &self.writable {
            set_readonly(dir, false)?;
        }
        for dir in &self.hide {
            mount_tmpfs(dir, c"size=16m,mode=755")?;
        }
        if let Some(shm) = &self.shm {
            check(unsafe {
                libc::mount(
                    shm.as_ptr(),
                    c"/dev/shm".as_ptr(),
                    none,
                    libc::MS_BIND,
                    std::ptr::null(),
                )
            })?;
            set_readonly(c"/dev/shm", false)?;
        }
        if let Some(tmp) = &self.private_tmp {
            tmp.apply()?;
        }
        Ok(())
    }
}

const OPEN_TREE_CLONE: libc::c_uint = 1;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;

impl PrivateTmp {
    /// Clones every folder first (covering /tmp hides them), then mounts the sandbox's folder as
    /// /tmp and the clones back at their places.
    fn apply(&self) -> io::Result<()> {
        for bind in std::iter::once(&self.base).chain(&self.binds) {
            bind.take()?;
        }
        self.base.put()?;
        for bind in &self.binds {
            bind.put()?;
        }
        Ok(())
    }
}

impl TmpBind {
    fn take(&self) -> io::Result<()> {
        let flags = OPEN_TREE_CLONE
            | libc::O_CLOEXEC as libc::c_uint
            | AT_RECURSIVE
            | libc::AT_SYMLINK_NOFOLLOW as libc::c_uint;
        let fd = unsafe {
            libc::syscall(
                libc::SYS_open_tree,
                libc::AT_FDCWD,
                self.source.as_ptr(),
                flags,
            ) as libc::c_int
        };
        check(fd)?;
        self.tree.store(fd, Ordering::Relaxed);
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        check(unsafe { libc::fstat(fd, &mut st) })?;
        if (st.st_dev, st.st_ino) != self.identity {
            // Swapped since the parent looked: mount nothing rather than the wrong thing.
            return Err(io::Error::from_raw_os_error(libc::ESTALE));
        }
        let attr = MountAttr {
            attr_set: if self.writable { 0 } else { MOUNT_ATTR_RDONLY },
            attr_clr: if self.writable { MOUNT_ATTR_RDONLY } else { 0 },
            propagation: 0,
            userns_fd: 0,
        };
        check(unsafe {
            libc::syscall(
                libc::SYS_mount_setattr,
                fd,
                c"".as_ptr(),
                libc::AT_EMPTY_PATH as libc::c_uint | AT_RECURSIVE,
                &attr as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            ) as libc::c_int
        })
    }

    fn put(&self) -> io::Result<()> {
        for dir in &self.parents {
            make_dir(dir)?;
        }
        if self.is_dir {
            make_dir(&self.target)?;
        } else {
            let fd = unsafe {
                libc::open(
                    self.target.as_ptr(),
                    libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC,
                    0o644,
                )
            };
            check(fd)?;
            unsafe { libc::close(fd) };
        }
        let fd = self.tree.load(Ordering::Relaxed);
        let rc = unsafe {
            libc::syscall(
                libc::SYS_move_mount,
                fd,
                c"".as_ptr(),
                libc::AT_FDCWD,
                self.target.as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH,
            ) as libc::c_int
        };
        unsafe { libc::close(fd) };
        check(rc)
    }
}

/// mkdir that accepts a folder already there.
fn make_dir(path: &std::ffi::CStr) -> io::Result<()> {
    if unsafe { libc::mkdir(path.as_ptr(), 0o755) } == -1
        && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST)
    {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `struct __user_cap_header_struct` and `__user_cap_data_struct` of capset(2).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// Gives up every capability for good: root inside the user namespace (or a team-testing run as
/// root) must not be able to undo the mounts or regain rights on exec. Without CAP_SETPCAP (an
/// ordinary user, no namespace) the bounding set stays, and exec drops the rest anyway.
pub(super) fn drop_capabilities() -> io::Result<()> {
    for cap in 0..64 {
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } == -1 {
            match io::Error::last_os_error().raw_os_error() {
                Some(libc::EINVAL) => break, // past the last capability this kernel knows
                Some(libc::EPERM) => break,  // no CAP_SETPCAP: nothing to drop
                _ => return Err(io::Error::last_os_error()),
            }
        }
    }
    // Ambient capabilities only exist since Linux 4.3; EINVAL before.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    let header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    let rc = unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) as libc::c_int };
    check(rc)
}

pub(super) fn set_readonly(path: &std::ffi::CStr, readonly: bool) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: if readonly { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if readonly { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        ) as libc::c_int
    };
    check(rc)
}

fn mount_tmpfs(target: &std::ffi::CStr, options: &std::ffi::CStr) -> io::Result<()> {
    check(unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        )
    })
}

fn set_rlimit(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) -> io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    check(unsafe { libc::setrlimit(resource, &limit) })
}

pub(super) fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    check(fd)?;
    let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    let err = io::Error::last_os_error();
    unsafe { libc::close(fd) };
    if n != bytes.len() as isize {
        return Err(err);
    }
    Ok(())
}

/// A new network namespace starts with its loopback down: bring it up, so the tests can still
/// talk to servers they start themselves.
fn loopback_up() -> io::Result<()> {
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    check(fd)?;
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    let result = (|| {
        check(unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) })?;
        unsafe { req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
        check(unsafe { libc::ioctl(fd, libc::SIOCSIFFLAGS, &req) })
    })();
    unsafe { libc::close(fd) };
    result
}

pub(super) fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
