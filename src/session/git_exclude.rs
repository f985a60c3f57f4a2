//! Keeps sessions out of the user's `git status`: the sessions folder inside the repository is
//! added to the repository's own `.git/info/exclude`, never to a tracked file such as .gitignore.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::proc::run_captured;

const GIT_TIMEOUT: Duration = Duration::from_secs(30);

/// Adds the folder that holds the sessions inside `repo` (`/.workflow/` by default, the sessions
/// root itself when it is somewhere else in the repository: never a wider folder such as `src/`)
/// to the exclude file when git does not ignore it yet. Returns the exclude file when it added
/// the line, None when there was nothing to do (not a git repository, sessions kept outside it,
/// or the folder already ignored).
pub fn exclude_sessions(repo: &Path, sessions_root: &Path) -> Result<Option<PathBuf>> {
    let (Ok(repo), Ok(root)) = (repo.canonicalize(), sessions_root.canonicalize()) else {
        return Ok(None);
    };
    let Ok(rel) = root.strip_prefix(&repo) else {
        return Ok(None);
    };
    let words: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let ours = match words.first().map(String::as_str) {
        None => return Ok(None),
        // The default layout: the whole .workflow/ folder is ours.
        Some(".workflow") => ".workflow".to_string(),
        Some(_) => words.join("/"),
    };
    let git = |args: &[&str]| -> Result<Option<String>> {
        let out = run_captured(args, &repo, GIT_TIMEOUT)?;
        Ok(out.success().then(|| out.stdout.trim().to_string()))
    };
    // The pattern is anchored at the work tree's top, which may be above the project folder.
    let Some(top_level) = git(&["git", "rev-parse", "--show-toplevel"])?
        .and_then(|t| Path::new(&t).canonicalize().ok())
    else {
        return Ok(None);
    };
    let Ok(project) = repo.strip_prefix(&top_level) else {
        return Ok(None);
    };
    let top = project.join(&ours).to_string_lossy().into_owned();
    // A name git's pattern syntax would read as something else is left alone.
    if top.contains(['*', '?', '[', '\\', '!', '#']) || top.starts_with(' ') {
        return Ok(None);
    }
    // Relative to the project folder, where git runs.
    let probe = format!("{ours}/");
    if git(&["git", "check-ignore", "-q", "--no-index", &probe])?.is_some() {
        return Ok(None);
    }
    let Some(path) = git(&["git", "rev-parse", "--git-path", "info/exclude"])? else {
        return Ok(None);
    };
    let exclude = repo.join(path);
    if let Some(dir) = exclude.parent() {
        crate::util::mkdirs(dir)?;
    }
    let existing = std::fs::read_to_string(&exclude).unwrap_or_default();
    let mut line = String::new();
    if !existing.is_empty() && !existing.ends_with('\n') {
        line.push('\n');
    }
    line.push_str(&format!(
        "# team-testing sessions (added once by team-testing)\n/{top}/\n"
    ));
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&exclude)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| Error::io(format!("adding /{top}/ to {}", exclude.display()), e))?;
    Ok(Some(exclude))
}
