//! What a watched run changed: read off the scratch once the run is over. An overlay's upper
//! folder holds exactly what was written, created or removed (a removal is a whiteout, a
//! character device 0:0; a folder removed and made again is marked opaque); a skeleton folder
//! holds what was added beside the entries the world was built with.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Most changes one report lists; the rest are counted.
pub const MAX_LISTED: usize = 200;

/// One change a watched run made outside its writable folders.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Change {
    /// The path as the run saw it (the host's path).
    pub path: PathBuf,
    pub what: What,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum What {
    Created(Kind),
    Removed,
    /// A folder removed and made again: whatever it held is gone.
    Replaced,
    /// A file opened for writing (written, truncated, appended to, or its times changed).
    Written,
    /// Only its mode or owner changed.
    Metadata,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    File,
    Folder,
    Symlink,
    Fifo,
    Socket,
    Device,
}

impl Change {
    /// The change in words, as the report names a side effect: "deletes /srv/data.txt".
    pub fn describe(&self) -> String {
        let path = self.path.display();
        match &self.what {
            What::Created(kind) => {
                let noun = match kind {
                    Kind::File => "the file",
                    Kind::Folder => "the folder",
                    Kind::Symlink => "the symlink",
                    Kind::Fifo => "the fifo",
                    Kind::Socket => "the socket",
                    Kind::Device => "the device node",
                };
                format!("creates {noun} {path}")
            }
            What::Removed => format!("deletes {path}"),
            What::Replaced => format!("deletes and recreates the folder {path}"),
            What::Written => format!("writes {path}"),
            What::Metadata => format!("changes the mode or owner of {path}"),
        }
    }
}

/// Collects changes up to [`MAX_LISTED`], counting the rest.
#[derive(Debug, Default)]
pub struct Changes {
    pub listed: Vec<Change>,
    pub more: usize,
}

impl Changes {
    pub fn push(&mut self, path: PathBuf, what: What) {
        if self.listed.len() < MAX_LISTED {
            self.listed.push(Change { path, what });
        } else {
            self.more += 1;
        }
    }
}

fn kind_of(meta: &std::fs::Metadata) -> Kind {
    let t = meta.file_type();
    if t.is_dir() {
        Kind::Folder
    } else if t.is_symlink() {
        Kind::Symlink
    } else if t.is_fifo() {
        Kind::Fifo
    } else if t.is_socket() {
        Kind::Socket
    } else if t.is_char_device() || t.is_block_device() {
        Kind::Device
    } else {
        Kind::File
    }
}

fn is_whiteout(meta: &std::fs::Metadata) -> bool {
    meta.file_type().is_char_device() && meta.rdev() == 0
}

/// Whether overlayfs marked `dir` opaque (in a user namespace its attributes are `user.`).
fn is_opaque(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    [c"user.overlay.opaque", c"trusted.overlay.opaque"]
        .iter()
        .any(|name| {
            let mut value = [0u8; 4];
            // SAFETY: both strings are NUL-terminated; the buffer's length is passed.
            let n = unsafe {
                libc::lgetxattr(
                    path.as_ptr(),
                    name.as_ptr(),
                    value.as_mut_ptr().cast(),
                    value.len(),
                )
            };
            n > 0 && value[0] == b'y'
        })
}

fn same_owner_and_mode(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.mode() == b.mode() && a.uid() == b.uid() && a.gid() == b.gid()
}

/// The changes an overlay's `upper` folder records for the host folder `host`.
pub fn overlay_changes(host: &Path, upper: &Path, out: &mut Changes) {
    let Ok(entries) = std::fs::read_dir(upper) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let (up, here) = (entry.path(), host.join(entry.file_name()));
        let Ok(meta) = std::fs::symlink_metadata(&up) else {
            continue;
        };
        let lower = std::fs::symlink_metadata(&here).ok();
        if is_whiteout(&meta) {
            if lower.is_some() {
                out.push(here, What::Removed);
            }
            continue;
        }
        match lower {
            None => out.push(here, What::Created(kind_of(&meta))),
            Some(lower) if meta.is_dir() && lower.is_dir() => {
                if is_opaque(&up) {
                    out.push(here, What::Replaced);
                    continue;
                }
                // A folder is copied up whenever something inside it changes: only its own
                // mode or owner count, then what is inside.
                if !same_owner_and_mode(&meta, &lower) {
                    out.push(here.clone(), What::Metadata);
                }
                overlay_changes(&here, &up, out);
            }
            Some(lower) if kind_of(&meta) != kind_of(&lower) => {
                out.push(here, What::Created(kind_of(&meta)))
            }
            Some(lower) => {
                let what = if meta.is_file() && !same_content(&up, &here) {
                    What::Written
                } else if !same_owner_and_mode(&meta, &lower) {
                    What::Metadata
                } else {
                    What::Written
                };
                out.push(here, what);
            }
        }
    }
}

/// Whether two regular files hold the same bytes (read in blocks; unreadable counts as not).
pub fn same_content(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let (Ok(mut fa), Ok(mut fb)) = (std::fs::File::open(a), std::fs::File::open(b)) else {
        return false;
    };
    let (mut ba, mut bb) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    loop {
        let (Ok(na), Ok(nb)) = (read_full(&mut fa, &mut ba), read_full(&mut fb, &mut bb)) else {
            return false;
        };
        if na != nb || ba[..na] != bb[..nb] {
            return false;
        }
        if na == 0 {
            return true;
        }
    }

    fn read_full(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match f.read(&mut buf[n..])? {
                0 => break,
                k => n += k,
            }
        }
        Ok(n)
    }
}

/// The changes in a skeleton folder `made` (on the scratch) standing for the host folder
/// `host`: entries that are not among `expected` were created, expected ones gone were removed.
pub fn skeleton_changes(
    host: &Path,
    made: &Path,
    expected: &BTreeSet<OsString>,
    out: &mut Changes,
) {
    let mut found = BTreeSet::new();
    let mut entries: Vec<_> = std::fs::read_dir(made)
        .map(|rd| rd.flatten().collect())
        .unwrap_or_default();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        if !expected.contains(&name) {
            if let Ok(meta) = std::fs::symlink_metadata(entry.path()) {
                out.push(host.join(&name), What::Created(kind_of(&meta)));
            }
        }
        found.insert(name);
    }
    for name in expected.difference(&found) {
        out.push(host.join(name), What::Removed);
    }
}

/// A copied file of a skeleton folder against the host's original.
pub fn copy_changes(host: &Path, copy: &Path, out: &mut Changes) {
    let (Ok(original), Ok(now)) = (
        std::fs::symlink_metadata(host),
        std::fs::symlink_metadata(copy),
    ) else {
        return; // a removal shows in the folder's listing
    };
    if !now.is_file() {
        out.push(host.into(), What::Created(kind_of(&now)));
    } else if !same_content(host, copy) {
        out.push(host.into(), What::Written);
    } else if (now.mode() & 0o7777) != (original.mode() & 0o7777) {
        out.push(host.into(), What::Metadata);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upper_folder_reads_as_writes_creations_and_kept_folders() {
        let dir = tempfile::tempdir().unwrap();
        let (host, upper) = (dir.path().join("host"), dir.path().join("upper"));
        std::fs::create_dir_all(host.join("kept")).unwrap();
        std::fs::write(host.join("kept/data.txt"), "old").unwrap();
        std::fs::write(host.join("same.txt"), "same").unwrap();
        std::fs::create_dir_all(upper.join("kept")).unwrap();
        std::fs::write(upper.join("kept/data.txt"), "new").unwrap();
        std::fs::write(upper.join("kept/new.txt"), "x").unwrap();
        std::fs::write(upper.join("same.txt"), "same").unwrap();
        std::fs::create_dir(upper.join("made")).unwrap();
        let mut out = Changes::default();
        overlay_changes(&host, &upper, &mut out);
        let words: Vec<String> = out
            .listed
            .iter()
            .map(|c| c.describe().replace(&host.display().to_string(), "H"))
            .collect();
        assert_eq!(
            words,
            [
                "writes H/kept/data.txt",
                "creates the file H/kept/new.txt",
                "creates the folder H/made",
                "writes H/same.txt",
            ]
        );
    }

    #[test]
    fn a_skeleton_folder_shows_added_and_missing_entries() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("etc")).unwrap();
        std::fs::write(dir.path().join("intruder"), "").unwrap();
        let expected: BTreeSet<OsString> = ["etc".into(), "usr".into()].into();
        let mut out = Changes::default();
        skeleton_changes(Path::new("/"), dir.path(), &expected, &mut out);
        let words: Vec<String> = out.listed.iter().map(Change::describe).collect();
        assert_eq!(words, ["creates the file /intruder", "deletes /usr"]);
    }
}
