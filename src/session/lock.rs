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

impl SessionLock {
    pub fn acquire(lock_path: &Path, session_id: &str) -> Result<Self> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock_path)
            .map_err(|e| Error::io(format!("opening lock {}", lock_path.display()), e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let pid = holder.trim();
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

    /// The pid of the process holding the lock, if one does (for status views; takes nothing).
    pub fn holder(lock_path: &Path) -> Option<String> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(lock_path)
            .ok()?;
        match file.try_lock() {
            Ok(()) => {
                let _ = file.unlock();
                None
            }
            Err(_) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                Some(pid.trim().to_string())
            }
        }
    }
}
