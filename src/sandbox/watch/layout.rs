//! How the watched world is laid out: which folders get a throwaway overlay, which are rebuilt
//! entry by entry, which are only bound read-only. Pure: it reads the mount table and folder
//! listings through what it is given, so its rules are tested as data.
//!
//! A user namespace may not overlay a mount that has mounts below it (they are locked, and an
//! overlay would show what they cover), so `/` cannot be one overlay. Instead every folder with
//! no mount below it becomes one overlay; a folder with mounts below is rebuilt as a skeleton of
//! its entries on the scratch tmpfs, where whatever a test adds or removes shows too.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// One line of /proc/self/mountinfo that matters here.
#[derive(Debug, Clone, PartialEq)]
pub struct MountPoint {
    pub path: PathBuf,
    pub fstype: String,
}

/// What a folder entry is, as far as the layout cares.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Dir,
    Symlink(PathBuf),
    /// A regular file of this many bytes.
    File(u64),
    /// A socket, fifo or device.
    Special,
}

/// One step of building the world, in order (a folder before what is inside it).
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The folder is made on the scratch tmpfs; its entries follow as their own steps.
    Skeleton(PathBuf),
    /// The folder as a throwaway overlay: reads see the host, writes land in the scratch.
    Overlay(PathBuf),
    /// A regular file of a skeleton folder, copied into the scratch (compared afterwards).
    CopyFile(PathBuf),
    /// Bound read-only (recursively for a folder): nothing written there is kept or seen.
    BindReadOnly {
        path: PathBuf,
        dir: bool,
    },
    Symlink {
        path: PathBuf,
        target: PathBuf,
    },
    /// A fresh /dev: the harmless devices, ptys, the sandbox's own /dev/shm.
    Dev,
    /// /proc, mounted afresh by the first process of the new pid namespace.
    Proc,
}

/// Largest file of a skeleton folder that is copied rather than bound read-only.
pub const MAX_COPIED: u64 = 1 << 20;

/// File systems that hold no user data: bound read-only, never overlaid.
fn is_pseudo(fstype: &str) -> bool {
    matches!(
        fstype,
        "proc"
            | "sysfs"
            | "devtmpfs"
            | "devpts"
            | "mqueue"
            | "cgroup"
            | "cgroup2"
            | "debugfs"
            | "tracefs"
            | "securityfs"
            | "pstore"
            | "bpf"
            | "configfs"
            | "fusectl"
            | "binfmt_misc"
            | "autofs"
            | "efivarfs"
            | "hugetlbfs"
            | "nsfs"
            | "rpc_pipefs"
    )
}

/// Parses /proc/self/mountinfo: the mount point (field 5, octal escapes undone) and the type
/// (the first field after the ` - ` separator).
pub fn parse_mountinfo(text: &str) -> Vec<MountPoint> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let (Some(point), Some(fstype)) = (
            left.split(' ').nth(4),
            right.split(' ').next().filter(|t| !t.is_empty()),
        ) else {
            continue;
        };
        out.push(MountPoint {
            path: PathBuf::from(unescape(point)),
            fstype: fstype.to_string(),
        });
    }
    out
}

/// mountinfo writes space, tab, newline and backslash as `\NNN` (octal).
fn unescape(field: &str) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    OsString::from_vec(out)
}

/// How a folder's entries are listed: (name, kind) in any order.
pub type Lister<'a> = &'a dyn Fn(&Path) -> std::io::Result<Vec<(OsString, Entry)>>;

/// The steps that cover `/`.
pub fn plan(mounts: &[MountPoint], list: Lister) -> Vec<Step> {
    let mut steps = Vec::new();
    cover(Path::new("/"), mounts, list, &mut steps);
    steps
}

fn cover(path: &Path, mounts: &[MountPoint], list: Lister, steps: &mut Vec<Step>) {
    match path.to_str() {
        Some("/proc") => return steps.push(Step::Proc),
        Some("/dev") => return steps.push(Step::Dev),
        Some("/sys") => {
            return steps.push(Step::BindReadOnly {
                path: path.into(),
                dir: true,
            })
        }
        _ => {}
    }
    // The innermost mount at this very path decides its type (a later line covers an earlier).
    if let Some(own) = mounts.iter().rev().find(|m| m.path == path) {
        if is_pseudo(&own.fstype) {
            return steps.push(Step::BindReadOnly {
                path: path.into(),
                dir: true,
            });
        }
    }
    let below = mounts
        .iter()
        .any(|m| m.path != path && m.path.starts_with(path));
    if !below {
        return steps.push(Step::Overlay(path.into()));
    }
    steps.push(Step::Skeleton(path.into()));
    let Ok(mut entries) = list(path) else {
        return; // unreadable: an empty folder in the world
    };
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, entry) in entries {
        let child = path.join(&name);
        match entry {
            Entry::Dir => cover(&child, mounts, list, steps),
            Entry::Symlink(target) => steps.push(Step::Symlink {
                path: child,
                target,
            }),
            Entry::File(size) if size <= MAX_COPIED => steps.push(Step::CopyFile(child)),
            // A mount point that is a file (a bound resolv.conf), a big file, a socket.
            Entry::File(_) | Entry::Special => steps.push(Step::BindReadOnly {
                path: child,
                dir: false,
            }),
        }
    }
}

/// A folder's entries from the host, for [`plan`].
pub fn list_host(path: &Path) -> std::io::Result<Vec<(OsString, Entry)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        let kind = if meta.is_dir() {
            Entry::Dir
        } else if meta.file_type().is_symlink() {
            match std::fs::read_link(entry.path()) {
                Ok(target) => Entry::Symlink(target),
                Err(_) => continue,
            }
        } else if meta.is_file() {
            Entry::File(meta.len())
        } else {
            Entry::Special
        };
        out.push((entry.file_name(), kind));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mount(path: &str, fstype: &str) -> MountPoint {
        MountPoint {
            path: path.into(),
            fstype: fstype.into(),
        }
    }

    #[test]
    fn mountinfo_lines_give_the_point_and_the_type() {
        let text = "22 27 0:21 / /proc rw,relatime - proc proc rw\n\
                    27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n\
                    40 27 0:40 / /mnt/with\\040space rw shared:1 - tmpfs t rw\n\
                    broken line\n";
        assert_eq!(
            parse_mountinfo(text),
            vec![
                mount("/proc", "proc"),
                mount("/", "ext4"),
                mount("/mnt/with space", "tmpfs")
            ]
        );
    }

    #[test]
    fn folders_without_mounts_below_are_overlays_and_the_rest_skeletons() {
        let mounts = vec![
            mount("/", "ext4"),
            mount("/proc", "proc"),
            mount("/sys", "sysfs"),
            mount("/dev", "devtmpfs"),
            mount("/home", "ext4"),
            mount("/home/u/nfs", "nfs"),
            mount("/mnt/cg", "cgroup2"),
        ];
        let list = |p: &Path| -> std::io::Result<Vec<(OsString, Entry)>> {
            Ok(match p.to_str().unwrap() {
                "/" => vec![
                    ("etc".into(), Entry::Dir),
                    ("bin".into(), Entry::Symlink("usr/bin".into())),
                    ("home".into(), Entry::Dir),
                    ("proc".into(), Entry::Dir),
                    ("dev".into(), Entry::Dir),
                    ("sys".into(), Entry::Dir),
                    ("mnt".into(), Entry::Dir),
                    ("swapfile".into(), Entry::File(1 << 30)),
                    ("notes".into(), Entry::File(10)),
                ],
                "/home" => vec![("u".into(), Entry::Dir)],
                "/home/u" => vec![("nfs".into(), Entry::Dir), ("code".into(), Entry::Dir)],
                "/mnt" => vec![("cg".into(), Entry::Dir)],
                _ => vec![],
            })
        };
        let steps = plan(&mounts, &list);
        let expect = vec![
            Step::Skeleton("/".into()),
            Step::Symlink {
                path: "/bin".into(),
                target: "usr/bin".into(),
            },
            Step::Dev,
            Step::Overlay("/etc".into()),
            Step::Skeleton("/home".into()),
            Step::Skeleton("/home/u".into()),
            Step::Overlay("/home/u/code".into()),
            Step::Overlay("/home/u/nfs".into()),
            Step::Skeleton("/mnt".into()),
            Step::BindReadOnly {
                path: "/mnt/cg".into(),
                dir: true,
            },
            Step::CopyFile("/notes".into()),
            Step::Proc,
            Step::BindReadOnly {
                path: "/swapfile".into(),
                dir: false,
            },
            Step::BindReadOnly {
                path: "/sys".into(),
                dir: true,
            },
        ];
        assert_eq!(steps, expect);
    }
}
