//! `apply --fixes`: puts a session's code fixes (the combined patch of a test-fix cycle) into the
//! user's repository. The patch goes only onto the very files it was made from: every file it
//! touches must still hold the content the manifest recorded as its base (sha256), else nothing
//! is written. After `git apply`, every touched file is checked against the fixed content.
//!
//! No printing here: `cli::apply` shows the diffstat and the outcome.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::artifacts::{FixManifest, FixedFile, COMBINED_PATCH, FIXES_MANIFEST};
use crate::proc::{run_captured, ProcError};
use crate::session::SessionDir;
use crate::util::FileError;

/// git reads and applies one patch: seconds, unless the machine is stuck.
const GIT_TIMEOUT: Duration = Duration::from_secs(120);

/// Why the fixes were not applied.
#[derive(Debug, thiserror::Error)]
pub enum FixError {
    #[error(
        "session {session} has no code fixes: {} does not exist (code fixes are made by \
         `team-testing fix` or `team-testing run --pipeline test-fix` with an agent backend)",
        missing.display()
    )]
    NoFixes { session: String, missing: PathBuf },

    /// The manifest could not be read or is not valid JSON (the error names the file).
    #[error(transparent)]
    Manifest(FileError),

    #[error("{}: {problem}", manifest.display())]
    BadManifest { manifest: PathBuf, problem: String },

    #[error("{}: git cannot read the patch: {stderr}", patch.display())]
    BadPatch { patch: PathBuf, stderr: String },

    /// The patch makes or changes something other than a regular file's content (a symbolic
    /// link, a submodule, a file's mode): code fixes never need that.
    #[error("{}: {}", patch.display(), unsafe_refusal(file, problem))]
    UnsafePatch {
        patch: PathBuf,
        file: String,
        problem: String,
    },

    /// A touched file is no longer what the fixes were made from.
    #[error(
        "refusing to apply the fixes of session {session}: {} changed since the fixes were made, \
         and nothing was written:\n{}\n{}Put back the content they were made from and apply \
         again, or make the fixes again from your current code",
        if files.len() == 1 { "this file".to_string() } else { format!("these {} files", files.len()) },
        files.iter().map(|d| format!("  {d}")).collect::<Vec<_>>().join("\n"),
        see.as_ref().map(|c| format!("Your changes since then: `{c}`\n")).unwrap_or_default()
    )]
    Changed {
        session: String,
        files: Vec<Drift>,
        /// The command that shows the changes since the fixes' base, when the base is known.
        see: Option<String>,
    },

    #[error("the fixes do not apply to {}: {stderr}", repo.display())]
    DoesNotApply { repo: PathBuf, stderr: String },

    #[error(
        "git apply changed {}, but these files do not have the fixed content: {}",
        repo.display(),
        files.join(", ")
    )]
    NotAsFixed { repo: PathBuf, files: Vec<String> },

    // The io error is part of the message, not a `source`: printed as a chain it would repeat.
    #[error("reading {}: {cause}", path.display())]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },

    /// git could not start, be waited for, or ran past its time.
    #[error(transparent)]
    Git(#[from] ProcError),
}

fn unsafe_refusal(file: &str, problem: &str) -> String {
    format!(
        "refusing the fixes, nothing was written: {file} {problem} (code fixes change the content of regular files only)"
    )
}

/// Every refusal is bad input or environment, the way `apply` refuses to overwrite a file.
impl From<FixError> for crate::error::Error {
    fn from(e: FixError) -> Self {
        use crate::error::Error;
        match e {
            FixError::Manifest(f) => Error::File(f),
            FixError::Git(p) => Error::Proc(p),
            FixError::BadManifest { manifest, problem } => Error::bad_file(manifest, problem),
            FixError::UnsafePatch {
                patch,
                file,
                problem,
            } => Error::bad_file(patch, unsafe_refusal(&file, &problem)),
            FixError::Read { path, cause } => {
                Error::io(format!("reading {}", path.display()), cause)
            }
            other @ (FixError::NoFixes { .. }
            | FixError::BadPatch { .. }
            | FixError::Changed { .. }
            | FixError::DoesNotApply { .. }
            | FixError::NotAsFixed { .. }) => Error::Session(other.to_string()),
        }
    }
}

/// How a touched file differs from the content the fixes were made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Its content is not the base's.
    Edited,
    /// It exists, and the fixes add it.
    Created,
    /// It is gone, and the fixes change it.
    Deleted,
    /// Something other than a file or symbolic link is at its path.
    NotAFile,
}

/// One touched file that is no longer the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    pub path: String,
    pub change: Change,
    /// It already holds the fixed content (the fixes were partly applied).
    pub has_fix: bool,
}

impl std::fmt::Display for Drift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.change {
            Change::Edited => "edited since the fixes were made",
            Change::Created => "exists now, and the fixes create it",
            Change::Deleted => "deleted since the fixes were made",
            Change::NotAFile => "is no longer a file",
        };
        write!(f, "{}: {what}", self.path)?;
        if self.has_fix {
            write!(f, " (it already has the fixed content)")?;
        }
        Ok(())
    }
}

/// What the touched files are now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// Every file is the base: the patch goes on.
    Ready,
    /// Every file has the fixed content already.
    AlreadyApplied,
    /// Some files are neither.
    Changed(Vec<Drift>),
}

/// A file's content now: what the manifest's hashes are compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Current {
    Missing,
    /// sha256 (hex) of the file's bytes, or of a symbolic link's target.
    Content(String),
    NotAFile,
}

impl Current {
    fn is(&self, want: &Option<String>) -> bool {
        match (self, want) {
            (Current::Missing, None) => true,
            (Current::Content(have), Some(want)) => have.eq_ignore_ascii_case(want),
            _ => false,
        }
    }
}

fn current(path: &Path) -> Result<Current, FixError> {
    let read_error = |cause| FixError::Read {
        path: path.to_path_buf(),
        cause,
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Current::Missing),
        Err(e) => return Err(read_error(e)),
    };
    let sha = crate::agents::record::sha256_hex;
    if meta.file_type().is_symlink() {
        use std::os::unix::ffi::OsStrExt;
        let target = std::fs::read_link(path).map_err(read_error)?;
        return Ok(Current::Content(sha(target.as_os_str().as_bytes())));
    }
    if !meta.file_type().is_file() {
        return Ok(Current::NotAFile);
    }
    let bytes = crate::util::read_regular(path).map_err(read_error)?;
    Ok(Current::Content(sha(&bytes)))
}

/// Compares each touched file under `top` (the repository's top level) with the manifest's
/// hashes. Every file at its fixed content is "already applied" (an empty list is not).
pub fn check(top: &Path, files: &[FixedFile]) -> Result<Check, FixError> {
    let now = files
        .iter()
        .map(|f| Ok((f, current(&top.join(&f.path))?)))
        .collect::<Result<Vec<_>, FixError>>()?;
    if !now.is_empty() && now.iter().all(|(f, c)| c.is(&f.head_sha256)) {
        return Ok(Check::AlreadyApplied);
    }
    let drift: Vec<Drift> = now
        .iter()
        .filter(|(f, c)| !c.is(&f.base_sha256))
        .map(|(f, c)| Drift {
            path: f.path.clone(),
            change: match (c, &f.base_sha256) {
                (Current::NotAFile, _) => Change::NotAFile,
                (Current::Missing, _) => Change::Deleted,
                (Current::Content(_), None) => Change::Created,
                (Current::Content(_), Some(_)) => Change::Edited,
            },
            has_fix: c.is(&f.head_sha256),
        })
        .collect();
    Ok(if drift.is_empty() {
        Check::Ready
    } else {
        Check::Changed(drift)
    })
}

/// One line of the diffstat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStat {
    pub path: String,
    /// `modified`, `added` or `deleted` (from the manifest).
    pub status: String,
    /// Lines added and removed; None for a binary file.
    pub lines: Option<(u64, u64)>,
}

/// `git apply --numstat -z` output: `added\tremoved\tpath\0` per file, `-` for binary counts.
/// A renamed file shows under its new path.
pub fn parse_numstat(out: &str) -> Vec<(String, Option<(u64, u64)>)> {
    out.split('\0')
        .filter(|r| !r.trim().is_empty())
        .filter_map(|r| {
            let mut parts = r.splitn(3, '\t');
            let (added, removed, path) = (parts.next()?, parts.next()?, parts.next()?);
            let lines = added.trim().parse().ok().zip(removed.trim().parse().ok());
            Some((path.trim_start_matches('\n').to_string(), lines))
        })
        .collect()
}

/// Where the fixes are and what they would do: the result of [`prepare`].
#[derive(Debug, Clone)]
pub struct FixPlan {
    pub session: String,
    pub manifest: FixManifest,
    /// The combined patch.
    pub patch: PathBuf,
    /// The repository's top level: the patch's paths start there, and git runs there.
    pub top: PathBuf,
    /// Per file the patch touches, in the patch's order.
    pub stat: Vec<FileStat>,
    /// [`Check::Ready`] or [`Check::AlreadyApplied`] ([`Check::Changed`] is an error).
    pub check: Check,
}

impl FixPlan {
    /// The patch changes nothing (a cycle that committed no fix).
    pub fn is_empty(&self) -> bool {
        self.stat.is_empty() && self.manifest.files.is_empty()
    }
}

/// Loads the session's fixes for the repository at `repo` and checks that they can go on:
/// the manifest and patch exist and agree, and every touched file is what the fixes were made
/// from (or already what they make it). Reads only; nothing is written.
pub fn prepare(session: &SessionDir, repo: &Path) -> Result<FixPlan, FixError> {
    let manifest_path = session.root.join(FIXES_MANIFEST);
    let patch = session.root.join(COMBINED_PATCH);
    for file in [&manifest_path, &patch] {
        if !file.is_file() {
            return Err(FixError::NoFixes {
                session: session.id.clone(),
                missing: file.clone(),
            });
        }
    }
    let manifest: FixManifest =
        crate::util::read_json(&manifest_path).map_err(FixError::Manifest)?;
    let bad = |problem: String| FixError::BadManifest {
        manifest: manifest_path.clone(),
        problem,
    };
    for f in &manifest.files {
        if !safe_relative(&f.path) {
            return Err(bad(format!(
                "file {:?} is not a path inside the repository",
                f.path
            )));
        }
    }
    let top = top_level(repo)?;
    let patch_text = std::fs::read(&patch).map_err(|cause| FixError::Read {
        path: patch.clone(),
        cause,
    })?;
    // Before git reads it: a patch that would make a symbolic link (pointing anywhere) or
    // change a mode is refused, whatever the manifest's hashes say.
    if let Some((file, problem)) = unsafe_mode(&patch_text) {
        return Err(FixError::UnsafePatch {
            patch: patch.clone(),
            file,
            problem,
        });
    }
    let numstat = if patch_text.iter().all(u8::is_ascii_whitespace) {
        Vec::new()
    } else {
        let patch_arg = patch.to_string_lossy();
        let out = git(&["apply", "--numstat", "-z", &patch_arg], &top)?;
        if !out.success() {
            return Err(FixError::BadPatch {
                patch: patch.clone(),
                stderr: out.stderr.trim().to_string(),
            });
        }
        parse_numstat(&out.stdout)
    };
    let mut stat = Vec::new();
    for (path, lines) in numstat {
        let Some(file) = manifest.files.iter().find(|f| f.path == path) else {
            return Err(bad(format!(
                "{COMBINED_PATCH} changes {path}, which the manifest does not list"
            )));
        };
        stat.push(FileStat {
            path,
            status: file.status().to_string(),
            lines,
        });
    }
    let check = check(&top, &manifest.files)?;
    if let Check::Changed(files) = check {
        let base = &manifest.base_commit;
        let see = (!base.is_empty() && !base.starts_with('-')).then(|| {
            let mut words = vec![
                "git".to_string(),
                "-C".to_string(),
                crate::hint::quote(&top.to_string_lossy()),
                "diff".to_string(),
                crate::hint::quote(base),
                "--".to_string(),
            ];
            words.extend(files.iter().map(|d| crate::hint::quote(&d.path)));
            words.join(" ")
        });
        return Err(FixError::Changed {
            session: session.id.clone(),
            files,
            see,
        });
    }
    Ok(FixPlan {
        session: session.id.clone(),
        manifest,
        patch,
        top,
        stat,
        check,
    })
}

/// Checks that the patch applies (`git apply --check`), then, unless `dry_run`, applies it and
/// verifies that every touched file has its fixed content. Returns the files verified (none
/// on a dry run). `git apply` writes all or nothing.
pub fn apply(plan: &FixPlan, dry_run: bool) -> Result<Vec<String>, FixError> {
    if plan.is_empty() || plan.check == Check::AlreadyApplied {
        return Ok(Vec::new());
    }
    let patch = plan.patch.to_string_lossy();
    // Exactly what the patch says: no whitespace "fixing" from the user's git config.
    let args = ["apply", "--whitespace=nowarn"];
    let out = git(&[&args[..], &["--check", &patch]].concat(), &plan.top)?;
    if !out.success() {
        return Err(FixError::DoesNotApply {
            repo: plan.top.clone(),
            stderr: out.stderr.trim().to_string(),
        });
    }
    if dry_run {
        return Ok(Vec::new());
    }
    // The touched files as they are, to put back should the result not be what was fixed.
    let before: Vec<(PathBuf, Option<Vec<u8>>)> = plan
        .manifest
        .files
        .iter()
        .map(|f| {
            let path = plan.top.join(&f.path);
            let bytes = crate::util::read_regular(&path).ok();
            (path, bytes)
        })
        .collect();
    let out = git(&[&args[..], &[&patch]].concat(), &plan.top)?;
    if !out.success() {
        return Err(FixError::DoesNotApply {
            repo: plan.top.clone(),
            stderr: out.stderr.trim().to_string(),
        });
    }
    let mut wrong = Vec::new();
    let mut verified = Vec::new();
    for f in &plan.manifest.files {
        if current(&plan.top.join(&f.path))?.is(&f.head_sha256) {
            verified.push(f.path.clone());
        } else {
            wrong.push(f.path.clone());
        }
    }
    if !wrong.is_empty() {
        for (path, bytes) in &before {
            let _ = match bytes {
                Some(b) => crate::util::write_nofollow(path, b),
                None => std::fs::remove_file(path),
            };
        }
        return Err(FixError::NotAsFixed {
            repo: plan.top.clone(),
            files: wrong,
        });
    }
    Ok(verified)
}

/// The file modes a code fix may name: a regular file, executable or not.
const REGULAR_MODES: [&str; 2] = ["100644", "100755"];

/// The first file of a git patch whose header makes or deletes something other than a regular
/// file, changes in place something other than one, or changes a file's mode: (its path as the
/// header names it, what is wrong). A header is the `diff --git a/X b/Y` line and the lines
/// after it up to the first `---`, `+++`, `@@` or `GIT binary patch`.
fn unsafe_mode(patch: &[u8]) -> Option<(String, String)> {
    let text = String::from_utf8_lossy(patch);
    let mut file = String::new();
    let mut in_header = false;
    let mut old_mode: Option<String> = None;
    for line in text.lines() {
        if let Some(names) = line.strip_prefix("diff --git ") {
            if let Some(old) = old_mode.take() {
                return Some((file, format!("changes the file's mode (old mode {old})")));
            }
            file = names
                .rsplit_once(" b/")
                .map_or(names, |(_, new)| new)
                .to_string();
            in_header = true;
            continue;
        }
        if !in_header {
            continue;
        }
        if line.starts_with("--- ")
            || line.starts_with("+++ ")
            || line.starts_with("@@")
            || line.starts_with("GIT binary patch")
        {
            in_header = false;
            continue;
        }
        let mode_in = |prefix: &str| line.strip_prefix(prefix).map(|m| m.trim().to_string());
        if let Some(mode) = mode_in("old mode ") {
            old_mode = Some(mode);
            continue;
        }
        if let Some(mode) = mode_in("new mode ") {
            let old = old_mode.take().unwrap_or_else(|| "?".into());
            return Some((
                file,
                format!(
                    "changes the file's mode from {old}{} to {mode}{}",
                    kind_of(&old),
                    kind_of(&mode)
                ),
            ));
        }
        let modes = [
            ("new file mode ", "is created with mode"),
            ("deleted file mode ", "is deleted with mode"),
        ];
        for (prefix, words) in modes {
            if let Some(mode) = mode_in(prefix) {
                if !REGULAR_MODES.contains(&mode.as_str()) {
                    return Some((file, format!("{words} {mode}{}", kind_of(&mode))));
                }
            }
        }
        // `index <from>..<to> <mode>`: the mode of a file changed in place.
        if let Some(rest) = line.strip_prefix("index ") {
            if let Some(mode) = rest.split_whitespace().nth(1) {
                if !REGULAR_MODES.contains(&mode) {
                    return Some((
                        file,
                        format!("is changed with mode {mode}{}", kind_of(mode)),
                    ));
                }
            }
        }
    }
    old_mode.map(|old| (file, format!("changes the file's mode (old mode {old})")))
}

/// What a mode that is not a regular file's makes: ` (a symbolic link)`.
fn kind_of(mode: &str) -> &'static str {
    match mode {
        "120000" => " (a symbolic link)",
        "160000" => " (a submodule)",
        "040000" => " (a folder)",
        _ => "",
    }
}

fn git(args: &[&str], cwd: &Path) -> Result<crate::proc::Captured, FixError> {
    let argv: Vec<&str> = std::iter::once("git").chain(args.iter().copied()).collect();
    Ok(run_captured(&argv, cwd, GIT_TIMEOUT)?)
}

/// The repository's top level (the fix worktree's paths start there); `repo` itself when it is
/// not inside a git work tree.
fn top_level(repo: &Path) -> Result<PathBuf, FixError> {
    let out = git(&["rev-parse", "--show-toplevel"], repo)?;
    let top = out.stdout.trim();
    Ok(if out.success() && !top.is_empty() {
        PathBuf::from(top)
    } else {
        repo.to_path_buf()
    })
}

/// A relative path that stays inside the folder it is joined to.
fn safe_relative(path: &str) -> bool {
    use std::path::Component;
    !path.is_empty()
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(text: &str) -> Option<String> {
        Some(crate::agents::record::sha256_hex(text.as_bytes()))
    }

    fn file(path: &str, base: Option<&str>, head: Option<&str>) -> FixedFile {
        FixedFile {
            path: path.into(),
            status: String::new(),
            base_sha256: base.and_then(sha),
            head_sha256: head.and_then(sha),
        }
    }

    /// A modified `ops.py`, an added `new.py` and a deleted `old.py`, in a folder at their base.
    fn at_base() -> (tempfile::TempDir, Vec<FixedFile>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("calc")).unwrap();
        std::fs::write(dir.path().join("calc/ops.py"), "old\n").unwrap();
        std::fs::write(dir.path().join("old.py"), "gone\n").unwrap();
        let files = vec![
            file("calc/ops.py", Some("old\n"), Some("fixed\n")),
            file("new.py", None, Some("new\n")),
            file("old.py", Some("gone\n"), None),
        ];
        (dir, files)
    }

    fn drift(path: &str, change: Change, has_fix: bool) -> Drift {
        Drift {
            path: path.into(),
            change,
            has_fix,
        }
    }

    #[test]
    fn files_at_their_base_are_ready() {
        let (dir, files) = at_base();
        assert_eq!(check(dir.path(), &files).unwrap(), Check::Ready);
    }

    #[test]
    fn an_edited_file_is_named_as_changed() {
        let (dir, files) = at_base();
        std::fs::write(dir.path().join("calc/ops.py"), "mine\n").unwrap();
        assert_eq!(
            check(dir.path(), &files).unwrap(),
            Check::Changed(vec![drift("calc/ops.py", Change::Edited, false)])
        );
    }

    #[test]
    fn a_file_the_fixes_add_that_exists_now_is_changed() {
        let (dir, files) = at_base();
        std::fs::write(dir.path().join("new.py"), "mine\n").unwrap();
        assert_eq!(
            check(dir.path(), &files).unwrap(),
            Check::Changed(vec![drift("new.py", Change::Created, false)])
        );
    }

    #[test]
    fn a_deleted_file_the_fixes_change_is_changed() {
        let (dir, files) = at_base();
        std::fs::remove_file(dir.path().join("calc/ops.py")).unwrap();
        assert_eq!(
            check(dir.path(), &files).unwrap(),
            Check::Changed(vec![drift("calc/ops.py", Change::Deleted, false)])
        );
    }

    #[test]
    fn a_directory_where_a_file_was_is_changed() {
        let (dir, files) = at_base();
        std::fs::create_dir(dir.path().join("new.py")).unwrap();
        assert_eq!(
            check(dir.path(), &files).unwrap(),
            Check::Changed(vec![drift("new.py", Change::NotAFile, false)])
        );
    }

    #[test]
    fn every_file_at_its_fixed_content_is_already_applied() {
        let (dir, files) = at_base();
        std::fs::write(dir.path().join("calc/ops.py"), "fixed\n").unwrap();
        std::fs::write(dir.path().join("new.py"), "new\n").unwrap();
        std::fs::remove_file(dir.path().join("old.py")).unwrap();
        assert_eq!(check(dir.path(), &files).unwrap(), Check::AlreadyApplied);
    }

    #[test]
    fn a_partly_applied_fix_is_changed_and_says_which_files_have_the_fix() {
        let (dir, files) = at_base();
        std::fs::write(dir.path().join("calc/ops.py"), "fixed\n").unwrap();
        let Check::Changed(d) = check(dir.path(), &files).unwrap() else {
            panic!("not refused");
        };
        assert_eq!(d, vec![drift("calc/ops.py", Change::Edited, true)]);
        assert_eq!(
            d[0].to_string(),
            "calc/ops.py: edited since the fixes were made (it already has the fixed content)"
        );
    }

    #[test]
    fn hashes_compare_without_regard_to_case() {
        let (dir, mut files) = at_base();
        for f in &mut files {
            f.base_sha256 = f.base_sha256.as_ref().map(|s| s.to_uppercase());
        }
        assert_eq!(check(dir.path(), &files).unwrap(), Check::Ready);
    }

    #[test]
    fn a_symbolic_link_is_compared_by_its_target() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("calc/ops.py", dir.path().join("link")).unwrap();
        let files = [file("link", Some("calc/ops.py"), Some("calc/other.py"))];
        assert_eq!(check(dir.path(), &files).unwrap(), Check::Ready);
    }

    #[test]
    fn numstat_gives_each_path_with_its_counts_and_binary_files_none() {
        let out = "-\t-\tdata.bin\u{0}3\t1\tcalc/ops.py\u{0}0\t4\tREADME.md\u{0}";
        assert_eq!(
            parse_numstat(out),
            vec![
                ("data.bin".to_string(), None),
                ("calc/ops.py".to_string(), Some((3, 1))),
                ("README.md".to_string(), Some((0, 4))),
            ]
        );
    }

    #[test]
    fn only_relative_paths_inside_the_repository_are_safe() {
        assert!(safe_relative("calc/ops.py"));
        assert!(safe_relative("./calc/ops.py"));
        for bad in ["", "/etc/passwd", "../x", "calc/../../x"] {
            assert!(!safe_relative(bad), "{bad}");
        }
    }

    #[test]
    fn a_patch_making_a_link_or_changing_a_mode_is_refused_naming_the_file() {
        let text = "diff --git a/calc/ops.py b/calc/ops.py\nindex 1111111..2222222 100644\n--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -1 +1 @@\n-old mode 100644\n+new mode 120000\n";
        assert_eq!(unsafe_mode(text.as_bytes()), None, "hunk lines are content");
        let added = "diff --git a/x.py b/x.py\nnew file mode 100755\nindex 0000000..3333333\n--- /dev/null\n+++ b/x.py\n@@ -0,0 +1 @@\n+x\n";
        assert_eq!(unsafe_mode(added.as_bytes()), None);
        let cases = [
            (
                "diff --git a/calc/link b/calc/link\nnew file mode 120000\nindex 0000000..4444444\n--- /dev/null\n+++ b/calc/link\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n",
                "calc/link",
                "is created with mode 120000 (a symbolic link)",
            ),
            (
                "diff --git a/l b/l\ndeleted file mode 120000\nindex 5555555..0000000\n",
                "l",
                "is deleted with mode 120000 (a symbolic link)",
            ),
            (
                "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
                "run.sh",
                "changes the file's mode from 100644 to 100755",
            ),
            (
                "diff --git a/l b/l\nindex 1111111..2222222 120000\n--- a/l\n+++ b/l\n",
                "l",
                "is changed with mode 120000 (a symbolic link)",
            ),
            (
                "diff --git a/vendor b/vendor\nnew file mode 160000\nindex 0000000..6666666\n",
                "vendor",
                "is created with mode 160000 (a submodule)",
            ),
        ];
        for (patch, file, problem) in cases {
            let ok = text.to_string() + patch;
            assert_eq!(
                unsafe_mode(ok.as_bytes()),
                Some((file.to_string(), problem.to_string())),
                "{patch}"
            );
        }
    }

    #[test]
    fn a_refusal_lists_every_file_and_is_bad_input() {
        let e = FixError::Changed {
            session: "TST-1".into(),
            files: vec![
                drift("calc/ops.py", Change::Edited, false),
                drift("new.py", Change::Created, false),
            ],
            see: Some("git -C /r diff abc -- calc/ops.py new.py".into()),
        };
        let text = e.to_string();
        assert!(text.contains("these 2 files changed"), "{text}");
        assert!(
            text.contains("\n  calc/ops.py: edited since the fixes were made\n"),
            "{text}"
        );
        assert!(
            text.contains("\n  new.py: exists now, and the fixes create it\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "\nYour changes since then: `git -C /r diff abc -- calc/ops.py new.py`\n"
            ),
            "{text}"
        );
        let e = crate::error::Error::from(e);
        assert_eq!(e.exit_code(), crate::error::EXIT_BAD_INPUT);
    }
}
