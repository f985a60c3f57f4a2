//! The wrapper every watched child runs through: `team-testing __watch CONFIG REPORT -- CMD…`.
//! It builds the world, starts CMD as the first process of a pid namespace of its own inside
//! it, waits, and writes what CMD and its descendants changed to REPORT.

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::Command;

use super::{world, WatchConfig, WatchReport};
use crate::sandbox::child::{check, drop_capabilities, write_file};

/// Exit code when the world could not be built (the command did not run).
pub const NOT_RUN: i32 = 125;

pub fn wrapper_main(config: &Path, report: &Path, argv: &[OsString]) -> i32 {
    let failed = |error: String| {
        eprintln!("team-testing: the file-system watch could not start: {error}");
        write_report(
            report,
            &WatchReport {
                error: Some(error),
                ..Default::default()
            },
        );
        NOT_RUN
    };
    let Some((program, args)) = argv.split_first() else {
        return failed("no command to watch".into());
    };
    let cfg: WatchConfig = match crate::util::read_json(config) {
        Ok(c) => c,
        Err(e) => return failed(format!("{}: {e}", config.display())),
    };
    let world = match world::build(&cfg) {
        Ok(w) => w,
        Err(e) => return failed(format!("building the watched world: {e}")),
    };
    let enter = match Enter::new(&world, &cfg) {
        Ok(e) => e,
        Err(e) => return failed(e.to_string()),
    };
    // The command and everything it starts live in a pid namespace of their own: none of them
    // can signal or trace a process outside, and all of them end when the command does.
    // SAFETY: unshare takes no pointers.
    if let Err(e) = check(unsafe { libc::unshare(libc::CLONE_NEWPID) }) {
        return failed(format!("a pid namespace: {e}"));
    }
    let mut command = Command::new(program);
    command.args(args);
    // SAFETY: `enter` only makes system calls on data prepared above.
    unsafe {
        command.pre_exec(move || enter.enter());
    }
    let code = match command.spawn().and_then(|mut child| child.wait()) {
        Ok(status) => status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
        Err(e) => {
            eprintln!(
                "team-testing: cannot start {}: {e}",
                Path::new(program).display()
            );
            127
        }
    };
    let changes = world.changes();
    write_report(
        report,
        &WatchReport {
            changes: changes.listed,
            more: changes.more,
            unwatched: world.unwatched.clone(),
            error: None,
        },
    );
    code
}

/// The report, written whole or not at all (a reader never sees half of it).
fn write_report(path: &Path, report: &WatchReport) {
    if let Err(e) = crate::util::replace_json(path, report) {
        eprintln!("team-testing: {e}");
    }
}

/// What the command's first process does before exec, prepared in the wrapper.
struct Enter {
    root: CString,
    proc_dir: CString,
    cwd: CString,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl Enter {
    fn new(world: &world::World, cfg: &WatchConfig) -> io::Result<Enter> {
        let c = |p: &Path| {
            CString::new(p.as_os_str().as_bytes())
                .map_err(|_| io::Error::other(format!("{} contains a NUL byte", p.display())))
        };
        Ok(Enter {
            root: c(&world.root)?,
            proc_dir: c(&world.inside(Path::new("/proc")))?,
            cwd: c(&std::env::current_dir()?)?,
            // Inside, the user is who they are on the host (the wrapper is 0 here, mapped to it).
            uid_map: format!("{} 0 1\n", cfg.uid).into_bytes(),
            gid_map: format!("{} 0 1\n", cfg.gid).into_bytes(),
        })
    }

    /// In the forked child: its own mount namespace rooted in the world, a fresh /proc, then a
    /// user namespace of its own where it holds no capability over any of that.
    fn enter(&self) -> io::Result<()> {
        // SAFETY: system calls on NUL-terminated strings prepared before the fork.
        unsafe {
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            check(libc::unshare(libc::CLONE_NEWNS))?;
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            let fresh = libc::mount(
                c"proc".as_ptr(),
                self.proc_dir.as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            );
            if fresh == -1 {
                // Where a fresh proc is refused (a container hides parts of the host's), the
                // host's; its processes stay out of reach through the pid namespace.
                check(libc::mount(
                    c"/proc".as_ptr(),
                    self.proc_dir.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
            }
            check(libc::chdir(self.root.as_ptr()))?;
            // The old root goes on top of the new one, and is then detached.
            check(
                libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) as libc::c_int,
            )?;
            check(libc::umount2(c".".as_ptr(), libc::MNT_DETACH))?;
            check(libc::chdir(c"/".as_ptr()))?;
            check(libc::unshare(libc::CLONE_NEWUSER))?;
        }
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/uid_map", &self.uid_map)?;
        write_file(c"/proc/self/gid_map", &self.gid_map)?;
        drop_capabilities()?;
        // SAFETY: plain system calls.
        unsafe {
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
            check(libc::chdir(self.cwd.as_ptr()))?;
        }
        Ok(())
    }
}
