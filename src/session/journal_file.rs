//! The journal's file as the coordinator writes it: lines appended over zeros already on disk,
//! each durable when `append` returns. Where the file system allows it, a line goes out with
//! `O_DIRECT | O_DSYNC` in whole 4 KiB blocks (the block the last line ended in, rewritten with
//! the same bytes, then the new line, then zeros): one call, past the page cache, and since the
//! file's size and blocks stay as they are, the kernel flushes the disk's cache and commits no
//! metadata. Where the file system refuses direct I/O (older tmpfs, some FUSE and network file
//! systems) a buffered write and an fdatasync do the same.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Direct I/O's unit: a multiple of every disk's logical block.
const BLOCK: usize = 4096;

pub(super) struct JournalFile {
    /// Buffered: reads, zeroing, and every write when `direct` is None.
    file: File,
    /// The same file opened `O_DIRECT | O_DSYNC`, where the file system allows it.
    direct: Option<File>,
    /// The bytes of the block the lines end in, before their end (rewritten with the next line).
    partial: Vec<u8>,
    /// Over-allocated so that a 4 KiB-aligned window fits: what a direct write is made of.
    staging: Vec<u8>,
}

impl JournalFile {
    /// Opens (creating) the file; returns it with its bytes as they are.
    pub(super) fn open(path: &Path) -> std::io::Result<(JournalFile, Vec<u8>)> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)?;
        let direct = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT | libc::O_DSYNC)
            .open(path)
            .ok();
        let bytes = std::fs::read(path)?;
        let journal = JournalFile {
            file,
            direct,
            partial: Vec::new(),
            staging: Vec::new(),
        };
        Ok((journal, bytes))
    }

    /// Says where the lines end (the file holds `before` up to there): the next line goes there.
    pub(super) fn resume_at(&mut self, before: &[u8]) {
        self.partial = before[block_start(before.len() as u64) as usize..].to_vec();
    }

    /// Writes `line` at `at`, where the lines end and zeros follow up to the file's end (at
    /// least to the end of the line's last 4 KiB block), and makes it durable.
    pub(super) fn append(&mut self, line: &[u8], at: u64) -> std::io::Result<()> {
        if self.direct.is_some() {
            match self.append_direct(line, at) {
                // A file system that opens direct files but refuses these writes.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => self.direct = None,
                done => return done,
            }
        }
        self.file.write_all_at(line, at)?;
        self.file.sync_data()?;
        self.advance(line, at);
        Ok(())
    }

    fn append_direct(&mut self, line: &[u8], at: u64) -> std::io::Result<()> {
        let start = block_start(at);
        let used = self.partial.len() + line.len();
        let len = used.div_ceil(BLOCK) * BLOCK;
        self.staging.resize(len + BLOCK, 0);
        let offset = self.staging.as_ptr().align_offset(BLOCK);
        let window = &mut self.staging[offset..offset + len];
        window[..self.partial.len()].copy_from_slice(&self.partial);
        window[self.partial.len()..used].copy_from_slice(line);
        window[used..].fill(0);
        let direct = self.direct.as_ref().expect("direct");
        direct.write_all_at(window, start)?;
        self.advance(line, at);
        Ok(())
    }

    /// The partial block after `line` was written at `at`.
    fn advance(&mut self, line: &[u8], at: u64) {
        let end = at + line.len() as u64;
        let keep = (end - block_start(end)) as usize;
        if keep <= line.len() {
            self.partial.clear();
            self.partial.extend_from_slice(&line[line.len() - keep..]);
        } else {
            self.partial.extend_from_slice(line);
        }
    }

    /// Zeros over `from..to` (growing the file when `to` is past its end), made durable: the
    /// lines written over them next must find zeros after them whatever the disk kept.
    pub(super) fn zero(&mut self, from: u64, to: u64) -> std::io::Result<()> {
        const CHUNK: usize = 64 << 10;
        let zeros = vec![0u8; CHUNK.min(to.saturating_sub(from) as usize)];
        let mut at = from;
        while at < to {
            let n = zeros.len().min((to - at) as usize);
            self.file.write_all_at(&zeros[..n], at)?;
            at += n as u64;
        }
        self.file.sync_data()
    }

    /// The room a line ending at `end` needs: the end of its last 4 KiB block.
    pub(super) fn room_for(end: u64) -> u64 {
        end.div_ceil(BLOCK as u64) * BLOCK as u64
    }

    /// Cuts the file to `len` (its lines): best effort, the zeros beyond them are harmless.
    pub(super) fn trim(&self, len: u64) {
        let _ = self.file.set_len(len);
    }

    /// The lines were emptied (the file zeroed from the start): the next one starts at 0.
    pub(super) fn restart(&mut self) {
        self.partial.clear();
    }

    /// Writes `bytes` at `at` with no flush: a kill mid-write, for the failure tests.
    pub(super) fn write_torn(&mut self, bytes: &[u8], at: u64) {
        if self.direct.is_some() {
            let _ = self.append_direct(bytes, at);
        } else {
            let _ = self.file.write_all_at(bytes, at);
        }
    }
}

fn block_start(at: u64) -> u64 {
    at - at % BLOCK as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same lines through both paths: direct I/O (where this file system takes it) and the
    /// buffered one the others get.
    #[test]
    fn lines_land_where_they_belong_across_blocks_and_the_zeros_stay() {
        for direct in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("j");
            let open = || {
                let (mut f, bytes) = JournalFile::open(&path).unwrap();
                if !direct {
                    f.direct = None;
                }
                (f, bytes)
            };
            let (mut f, bytes) = open();
            assert!(bytes.is_empty());
            f.zero(0, 3 * BLOCK as u64).unwrap();
            let lines: Vec<Vec<u8>> = [100, 4000, 5000, 7]
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let mut l = vec![b'a' + i as u8; *n];
                    l.push(b'\n');
                    l
                })
                .collect();
            let mut at = 0;
            for line in &lines {
                f.append(line, at).unwrap();
                at += line.len() as u64;
            }
            let on_disk = std::fs::read(&path).unwrap();
            assert_eq!(on_disk.len(), 3 * BLOCK);
            assert_eq!(&on_disk[..at as usize], lines.concat().as_slice());
            assert!(on_disk[at as usize..].iter().all(|&b| b == 0));

            // Reopened where the lines end, the next line follows on.
            let (mut g, bytes) = open();
            g.resume_at(&bytes[..at as usize]);
            g.append(b"z\n", at).unwrap();
            let on_disk = std::fs::read(&path).unwrap();
            assert_eq!(&on_disk[at as usize..at as usize + 2], b"z\n");
            assert_eq!(&on_disk[..at as usize], lines.concat().as_slice());
            assert!(on_disk[at as usize + 2..].iter().all(|&b| b == 0));
        }
    }
}
