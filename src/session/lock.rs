//! One coordinator per session: an exclusive advisory lock on `<session>/.lock` that holds the
//! owner's pid. The OS drops the lock when the process dies, so a stale lock never blocks.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::error::{Error, Result};

#[derive(Debug)]
pub struct SessionLock {
    _file: File,
}

impl Drop for SessionLock {
    /// A clean release empties the file: a pid found there later belongs to a holder that died.
    fn drop(&mut self) {
        let _ = self._file.set_len(0);
    }
}

impl SessionLock {
    pub fn acquire(lock_path: &Path, session_id: &str) -> Result<Self> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock_path)
            .map_err(|e| Error::io(format!("opening lock {}", lock_path.display()), e))?;
        // The pid the last holder wrote: a dead one means its lock was left behind.
        let mut previous = String::new();
        let _ = file.read_to_string(&mut previous);
        // A holder that died right after forking a child leaves the lock with that child until
        // it execs (the file is close-on-exec): a dead holder's lock is waited for a moment.
        let holder_dead = || Self::holder(lock_path).is_none();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut attempt = file.try_lock();
        while matches!(attempt, Err(TryLockError::WouldBlock))
            && std::time::Instant::now() < deadline
            && holder_dead()
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
            attempt = file.try_lock();
        }
        match attempt {
            Ok(()) => {
                let pid = previous.trim();
                if !pid.is_empty() && pid != std::process::id().to_string() {
                    eprintln!(
                        "team-testing: session {session_id}: took over the lock of pid {pid}, which is no longer running"
                    );
                }
            }
            Err(TryLockError::WouldBlock) => {
                let pid = previous.trim();
                return Err(Error::Locked {
                    session: session_id.to_string(),
                    pid: if pid.is_empty() {
                        "unknown".into()
                    } else {
                        pid.to_string()
                    },
                    lock: lock_path.to_path_buf(),
                });
            }
            Err(TryLockError::Error(e)) => {
                return Err(Error::io(format!("locking {}", lock_path.display()), e))
            }
        }
        let write = |f: &mut File| -> std::io::Result<()> {
            f.set_len(0)?;
            f.seek(SeekFrom::Start(0))?;
            writeln!(f, "{}", std::process::id())?;
            f.sync_all()
        };
        write(&mut file).map_err(|e| Error::io(format!("writing {}", lock_path.display()), e))?;
        Ok(SessionLock { _file: file })
    }

    /// The pid of the coordinator driving the session, if one is alive. Reads the pid the holder
    /// wrote and checks that the process exists; it never touches the lock itself, so it cannot
    /// get in the way of a `resume` starting at the same moment.
    pub fn holder(lock_path: &Path) -> Option<String> {
        let text = std::fs::read_to_string(lock_path).ok()?;
        let pid: i32 = text.trim().parse().ok()?;
        if pid <= 0 {
            return None;
        }
        // SAFETY: signal 0 only checks that the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        (alive && !is_zombie(pid)).then(|| pid.to_string())
    }
}

/// A process that has exited but is not yet reaped by its parent holds no lock and writes
/// nothing more (`/proc/<pid>/stat` state `Z`).
fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // The state follows the command name, which is in parentheses and may hold spaces.
            let after = stat.rsplit_once(')')?.1;
            after.split_whitespace().next().map(|s| s == "Z")
        })
        .unwrap_or(false)
}
