//! Small helpers shared by every module: timestamps, atomic file writes, slugs.

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// A file of the session (state, views, reports) that could not be read or written; the path is
/// data, the io or JSON error its cause.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    // Causes are part of the message, not a `source`: printed as a chain they would repeat.
    #[error("reading {}: {cause}", path.display())]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("writing {}: {cause}", path.display())]
    Write {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("creating {}: {cause}", path.display())]
    CreateDir {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("{}: file is empty", path.display())]
    Empty { path: PathBuf },
    #[error("{}: invalid JSON: {cause}", path.display())]
    InvalidJson {
        path: PathBuf,
        cause: serde_json::Error,
    },
    #[error("{}: cannot serialize: {cause}", path.display())]
    Serialize {
        path: PathBuf,
        cause: serde_json::Error,
    },
}

type Result<T> = std::result::Result<T, FileError>;

fn serialized<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|cause| FileError::Serialize {
        path: path.to_path_buf(),
        cause,
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The timestamp format of CCW's team_msg records: `2026-12-02T10:00:00.000+00:00`.
pub fn now_ts() -> String {
    // `2026-12-06T13:20:00.123+00:00`
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, false)
}

pub fn today() -> String {
    chrono::Utc::now().format("%Y-%m-%d").to_string()
}

/// Parses a timestamp written by [`now_ts`] (or any RFC 3339 one).
pub fn parse_ts(ts: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    chrono::DateTime::parse_from_rfc3339(ts).ok()
}

/// Writes `bytes` to `path` so that readers see either the old file or the new one, never a torn
/// one: temp file in the same folder, fsync, rename, fsync the folder.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    replace_file(path, bytes, true)
}

/// [`atomic_write`] without the fsyncs, for files rebuilt from the log (meta.json): readers
/// still never see a torn file, and a crash may leave the previous version.
pub fn replace_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    replace_file(path, &serialized(path, value)?, false)
}

fn replace_file(path: &Path, bytes: &[u8], durable: bool) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        // A fresh file, never through a symlink planted at the temp name (sandboxed tests may
        // write into results/).
        let _ = fs::remove_file(&tmp);
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        f.write_all(bytes)?;
        if durable {
            f.sync_all()?;
        }
        if durable {
            crate::failpoint::write("state.rename")?;
        }
        fs::rename(&tmp, path)?;
        if durable {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    };
    write().map_err(|cause| {
        let _ = fs::remove_file(&tmp);
        FileError::Write {
            path: path.to_path_buf(),
            cause,
        }
    })
}

/// Writes `bytes` to `path` as a regular file of its own: in a folder that sandboxed children
/// may write, a symlink, FIFO or device planted at `path` is replaced, never written through
/// (or waited on).
pub fn write_nofollow(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file()) {
        fs::remove_file(path)?;
    }
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.file_type().is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    f.set_len(0)?;
    f.write_all(bytes)
}

/// Opens `path` for reading only if it is a regular file (never waits on a FIFO a child planted).
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.file_type().is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    Ok(f)
}

/// Reads a file that must be a regular one: a FIFO planted by a sandboxed child would block a
/// plain read forever.
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut f = open_regular(path)?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// [`read_regular`] that refuses a symbolic link at `path` itself (`O_NOFOLLOW`), for files the
/// project's tree names that must not lead out of it.
pub fn read_regular_nofollow(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)?;
    if !f.metadata()?.file_type().is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// [`write_nofollow`] with the contents of `from` (a regular file).
pub fn copy_nofollow(from: &Path, to: &Path) -> std::io::Result<u64> {
    let bytes = read_regular(from)?;
    write_nofollow(to, &bytes)?;
    Ok(bytes.len() as u64)
}

pub fn atomic_write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    atomic_write(path, &serialized(path, value)?)
}

pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = fs::read_to_string(path).map_err(|cause| FileError::Read {
        path: path.to_path_buf(),
        cause,
    })?;
    if text.trim().is_empty() {
        return Err(FileError::Empty {
            path: path.to_path_buf(),
        });
    }
    serde_json::from_str(&text).map_err(|cause| FileError::InvalidJson {
        path: path.to_path_buf(),
        cause,
    })
}

/// Lowercase, `[a-z0-9-]` only, no leading/trailing/double dashes, at most `max` characters.
pub fn slugify(text: &str, max: usize) -> String {
    let mut slug = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= max {
            break;
        }
    }
    let slug = slug.trim_end_matches('-').to_string();
    if slug.is_empty() {
        "task".to_string()
    } else {
        slug
    }
}

pub fn mkdirs(path: &Path) -> Result<()> {
    fs::create_dir_all(path).map_err(|cause| FileError::CreateDir {
        path: path.to_path_buf(),
        cause,
    })
}

/// The last `lines` lines of `text`.
pub fn tail_lines(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// `text` without terminal escape sequences (colours, cursor moves): what a test runner printed
/// for a terminal, made fit for a file a person reads.
pub fn strip_ansi(text: &str) -> std::borrow::Cow<'_, str> {
    static ANSI: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = ANSI.get_or_init(|| {
        regex::Regex::new(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
            .expect("a valid pattern")
    });
    re.replace_all(text, "")
}

/// The candidate closest to `word` when it is a likely typo of it (at most two edits, a swap of
/// neighbours counting one): for "did you mean" hints.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word: Vec<char> = word.to_lowercase().chars().collect();
    candidates
        .into_iter()
        .map(|c| {
            (
                edits(&word, &c.to_lowercase().chars().collect::<Vec<_>>()),
                c,
            )
        })
        .filter(|(d, c)| *d <= 2 && *d < c.chars().count())
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Optimal string alignment distance (Levenshtein with transpositions of neighbours).
fn edits(a: &[char], b: &[char]) -> usize {
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// What a spreadsheet reads as the start of a formula (OWASP's CSV injection list).
const FORMULA_START: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A text cell for a CSV file team-testing writes, safe to open in a spreadsheet: a cell that
/// starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'` (OWASP), so a
/// scenario name taken from a requirement file is never run as a formula. Quotes already in
/// front of one of those count as part of the cell (`'=x` is written `''=x`), so
/// [`csv_text_read`] gives back exactly what was written. Numbers team-testing writes
/// (durations, rounds) are not text cells and never pass through here.
pub fn csv_text(cell: &str) -> std::borrow::Cow<'_, str> {
    if cell.trim_start_matches('\'').starts_with(FORMULA_START) {
        format!("'{cell}").into()
    } else {
        cell.into()
    }
}

/// A text cell as [`csv_text`] wrote it, read back: the one `'` it added taken off.
pub fn csv_text_read(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if rest.trim_start_matches('\'').starts_with(FORMULA_START) => rest,
        _ => cell,
    }
}

/// A word quoted for a POSIX shell where it needs it (a command we print for the user).
pub fn quote(word: &str) -> String {
    shlex::try_quote(word)
        .map(|q| q.into_owned())
        .unwrap_or_else(|_| word.to_string())
}

/// A small, reproducible random source (SplitMix64): the same seed picks the same inputs.
pub struct Rng(pub u64);

impl Rng {
    // Not an Iterator: it never ends, and callers draw numbers, not items.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_escapes_are_taken_out() {
        assert_eq!(
            strip_ansi("\x1b[31mE   assert 1 == 2\x1b[0m"),
            "E   assert 1 == 2"
        );
        assert_eq!(strip_ansi("plain"), "plain");
    }

    #[test]
    fn typos_find_their_word() {
        let words = ["run", "resume", "status", "standard", "test-fix"];
        assert_eq!(closest("rnu", words), Some("run"));
        assert_eq!(closest("standrad", words), Some("standard"));
        assert_eq!(closest("testfix", words), Some("test-fix"));
        assert_eq!(closest("deploy", words), None);
    }

    #[test]
    fn csv_text_neutralises_formulas_and_reads_back_exactly() {
        for (cell, written) in [
            ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
            ("+1", "'+1"),
            ("-1.5", "'-1.5"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("'=x", "''=x"),
            ("''=x", "'''=x"),
            ("plain", "plain"),
            ("'quoted'", "'quoted'"),
            ("a=b", "a=b"),
            ("", ""),
        ] {
            assert_eq!(csv_text(cell), written, "{cell:?}");
            assert_eq!(csv_text_read(&csv_text(cell)), cell, "{cell:?}");
        }
        // What a user typed that no writer made is left as it is.
        assert_eq!(csv_text_read("'plain"), "'plain");
    }

    #[test]
    fn slug_is_safe_and_bounded() {
        assert_eq!(
            slugify("Test the NEW tokenizer!", 40),
            "test-the-new-tokenizer"
        );
        assert_eq!(slugify("$(rm -rf ~) ../../etc", 40), "rm-rf-etc");
        assert_eq!(slugify("////", 40), "task");
        assert!(slugify(&"a".repeat(200), 40).len() <= 40);
    }
}
