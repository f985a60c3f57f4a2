//! The source of a file in the coverage table, and its coloured view: covered, missed and
//! partial lines from the coverage record.
//!
//! Which text: the coverage was measured on the repository's tree at the session's base commit
//! plus its uncommitted changes. One `git diff --name-only <base>` (with a timeout) tells which
//! files differ from the base; the others are read from the working tree (the same bytes, no git
//! call per file). For a file that differs, the working file and `git show <base>:<path>` are the
//! candidates, and the first whose lines fit the coverage record (every listed line exists and is
//! not blank) is shown; when none fits, the working file is shown with a warning.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use super::escape::push_esc;
use crate::proc::run_captured;
use crate::testing::symbols::git_diff;

/// Each git call's limit.
const GIT_TIMEOUT: Duration = Duration::from_secs(10);
/// A file larger than this is listed without its source.
pub const MAX_FILE_BYTES: usize = 512 * 1024;
/// Bytes of source views (escaped text and line markup) the page holds at most; the files after
/// are listed without their source, so the page stays under 10 MB for a thousand files.
pub const SOURCE_BUDGET: usize = 5_000_000;

/// Where a file's text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    WorkingTree,
    BaseCommit,
    /// The working file, though its lines do not fit the coverage record.
    Mismatch,
}

/// Why a file's source is not shown on the page.
#[derive(Debug, thiserror::Error)]
pub enum NotShown {
    #[error("the session's repository is not on this machine")]
    RepositoryElsewhere,
    #[error("the path is not inside the repository")]
    OutsideRepository,
    #[error("left out: the page's source budget is spent (it stays under 10 MB)")]
    BudgetSpent,
    #[error("not in the working tree or at the base commit")]
    Missing,
    #[error("too large to show ({kb} KB)")]
    TooLarge { kb: usize },
}

/// Reads sources from one repository, within the page's budget.
pub struct Sources {
    repo: Option<PathBuf>,
    base: Option<String>,
    /// Files that differ from the base commit; None when git could not tell (all are candidates).
    changed: Option<BTreeSet<String>>,
    budget: usize,
}

/// The lines a coverage record names for one file.
pub struct Marks<'a> {
    pub missing: &'a [u32],
    pub executed: &'a [u32],
    pub partial: &'a [u32],
}

impl Marks<'_> {
    /// Every named line exists in `text` and holds something.
    fn fit(&self, text: &str) -> bool {
        let lines: Vec<&str> = text.lines().collect();
        self.missing
            .iter()
            .chain(self.executed)
            .chain(self.partial)
            .all(|&n| {
                (n as usize)
                    .checked_sub(1)
                    .and_then(|i| lines.get(i))
                    .is_some_and(|l| !l.trim().is_empty())
            })
    }
}

impl Sources {
    /// `repo` is the session's repository (None: no source is shown), `base` its base commit.
    pub fn new(repo: Option<&Path>, base: Option<&str>) -> Sources {
        let repo = repo.and_then(|r| r.canonicalize().ok());
        let changed = match (&repo, base) {
            (Some(r), Some(b)) => git_diff(r, &["--name-only", b, "--"], GIT_TIMEOUT)
                .ok()
                .map(|out| out.lines().map(str::to_string).collect()),
            _ => None,
        };
        Sources {
            repo,
            base: base.map(str::to_string),
            changed,
            budget: SOURCE_BUDGET,
        }
    }

    /// The text of `path` (relative to the repository) and where it came from, or why it is not
    /// shown.
    pub fn text(&mut self, path: &str, marks: &Marks) -> Result<(String, Origin), NotShown> {
        let Some(repo) = self.repo.clone() else {
            return Err(NotShown::RepositoryElsewhere);
        };
        let rel = Path::new(path);
        if rel.is_absolute() || rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(NotShown::OutsideRepository);
        }
        if self.budget == 0 {
            return Err(NotShown::BudgetSpent);
        }
        let working = read_inside(&repo, rel);
        let unchanged = self.changed.as_ref().is_some_and(|c| !c.contains(path));
        let (text, origin) = match working {
            Some(w) if unchanged || marks.fit(&w) => (w, Origin::WorkingTree),
            working => match self.at_base(&repo, path).filter(|b| marks.fit(b)) {
                Some(b) => (b, Origin::BaseCommit),
                None => match working {
                    Some(w) => (w, Origin::Mismatch),
                    None => return Err(NotShown::Missing),
                },
            },
        };
        if text.len() > MAX_FILE_BYTES {
            return Err(NotShown::TooLarge {
                kb: text.len() / 1024,
            });
        }
        let cost = rendered_size(&text);
        if cost > self.budget {
            self.budget = 0;
            return Err(NotShown::BudgetSpent);
        }
        self.budget -= cost;
        Ok((text, origin))
    }

    /// `git show <base>:./<path>`, when there is a base commit.
    fn at_base(&self, repo: &Path, path: &str) -> Option<String> {
        let spec = format!("{}:./{path}", self.base.as_deref()?);
        let out = run_captured(&["git", "show", &spec], repo, GIT_TIMEOUT).ok()?;
        out.success().then_some(out.stdout)
    }
}

/// What [`view`] writes for `text`, in bytes: the text, its escapes, each line's markup.
fn rendered_size(text: &str) -> usize {
    let escapes = text
        .bytes()
        .filter(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\''))
        .count();
    text.len() + 5 * escapes + 23 * text.lines().count()
}

/// The file at `rel` under `repo`, when it is a regular file whose real path stays inside the
/// repository (a symbolic link out of it is not followed) and is text.
fn read_inside(repo: &Path, rel: &Path) -> Option<String> {
    let real = repo.join(rel).canonicalize().ok()?;
    if !real.starts_with(repo) {
        return None;
    }
    let bytes = crate::util::read_regular(&real).ok()?;
    if bytes.len() > MAX_FILE_BYTES * 4 {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// `text` as `<pre class="src">`, one `<span>` a line, classed c (covered), m (missed) or
/// p (partial: ran, with a branch never taken); line numbers come from the stylesheet.
pub fn view(out: &mut String, text: &str, marks: &Marks) {
    let n = text.lines().count();
    let mut class = vec![0u8; n + 1];
    for (lines, c) in [
        (marks.executed, b'c'),
        (marks.missing, b'm'),
        (marks.partial, b'p'),
    ] {
        for &l in lines {
            if let Some(slot) = class.get_mut(l as usize) {
                *slot = c;
            }
        }
    }
    out.push_str("<pre class=\"src\">");
    for (i, line) in text.lines().enumerate() {
        match class[i + 1] {
            0 => out.push_str("<span>"),
            c => {
                out.push_str("<span class=");
                out.push(c as char);
                out.push('>');
            }
        }
        push_esc(out, line);
        out.push_str("\n</span>");
    }
    out.push_str("</pre>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classed_and_escaped() {
        let mut out = String::new();
        let marks = Marks {
            missing: &[2],
            executed: &[1, 3],
            partial: &[3],
        };
        view(&mut out, "a = 1\nif x < 2: <b>\ny\n", &marks);
        assert_eq!(
            out,
            "<pre class=\"src\"><span class=c>a = 1\n</span><span class=m>if x &lt; 2: &lt;b&gt;\n</span><span class=p>y\n</span></pre>"
        );
    }

    #[test]
    fn a_record_fits_a_text_whose_named_lines_hold_code() {
        let marks = Marks {
            missing: &[3],
            executed: &[1],
            partial: &[],
        };
        assert!(marks.fit("a\n\nb\n"));
        assert!(!marks.fit("a\nb\n\n"));
        assert!(!marks.fit("a\n"));
    }

    #[test]
    fn paths_out_of_the_repository_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Sources::new(Some(dir.path()), None);
        let marks = Marks {
            missing: &[],
            executed: &[],
            partial: &[],
        };
        assert!(s.text("../etc/passwd", &marks).is_err());
        assert!(s.text("/etc/passwd", &marks).is_err());
    }
}
