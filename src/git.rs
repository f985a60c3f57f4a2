//! Git with argv, a timeout and none of the repository's programs: no hooks, no fsmonitor, every
//! filter driver the config names emptied. The test-fix cycle's worktree and the cluster's
//! repository snapshot both run git through here.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::proc::run_captured_input;

/// Why a git command failed.
#[derive(Debug, thiserror::Error)]
#[error("git {args} in {}: {detail}", dir.display())]
pub struct GitFailed {
    pub args: String,
    pub dir: PathBuf,
    pub detail: String,
}

/// One git command's budget.
const GIT_TIMEOUT: Duration = Duration::from_secs(120);

/// Settings of every git command here: an identity for the worktree's commits (the user's own
/// config may have none), no signing, none of the repository's hooks or fsmonitor.
const SETTINGS: [&str; 10] = [
    "-c",
    "user.name=team-testing",
    "-c",
    "user.email=team-testing@localhost",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
];

/// `-c filter.<name>.clean= ...` for every filter driver the repository's config names, so a
/// `.gitattributes` (the project's or an agent's) cannot make `git add` or a checkout run it.
fn no_filters(dir: &Path) -> Vec<String> {
    let mut argv = vec!["git".to_string()];
    argv.extend(SETTINGS.iter().map(|s| s.to_string()));
    argv.extend(
        ["config", "--name-only", "--get-regexp", r"^filter\."]
            .iter()
            .map(|s| s.to_string()),
    );
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let Ok(out) = run_captured_input(&args, dir, &[], None, GIT_TIMEOUT) else {
        return Vec::new();
    };
    let mut drivers: Vec<String> = out
        .stdout
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("filter.")?;
            rest.rsplit_once('.').map(|(name, _)| name.to_string())
        })
        .collect();
    drivers.sort();
    drivers.dedup();
    drivers
        .iter()
        .flat_map(|d| {
            ["clean", "smudge", "process"]
                .iter()
                .flat_map(move |k| ["-c".to_string(), format!("filter.{d}.{k}=")])
                .chain(["-c".to_string(), format!("filter.{d}.required=false")])
        })
        .collect()
}

fn argv_for(dir: &Path, args: &[&str]) -> Vec<String> {
    let mut argv = vec!["git".to_string()];
    argv.extend(SETTINGS.iter().map(|s| s.to_string()));
    argv.extend(no_filters(dir));
    argv.extend(args.iter().map(|s| s.to_string()));
    argv
}

/// Runs git in `dir`; its stdout, or why it failed.
pub fn git(dir: &Path, args: &[&str], input: Option<Vec<u8>>) -> Result<String, GitFailed> {
    git_env(dir, args, &[], input)
}

/// The tree's changes against `base` with no context (`git diff -U0`, no external diff or text
/// conversion the repository configures, paths relative to `repo`), of `file` alone when given:
/// the lines a change touched and the function git names in each hunk's header.
pub fn changed_lines_diff(
    repo: &Path,
    base: &str,
    file: Option<&str>,
) -> Result<String, GitFailed> {
    let mut args = vec![
        "diff",
        "-U0",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--relative",
        base,
    ];
    if let Some(file) = file {
        args.extend(["--", file]);
    }
    git(repo, &args, None)
}

/// [`git`] with more environment (`GIT_INDEX_FILE`, `GIT_OBJECT_DIRECTORY`, …).
pub fn git_env(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    input: Option<Vec<u8>>,
) -> Result<String, GitFailed> {
    let argv = argv_for(dir, args);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let failed = |detail: String| GitFailed {
        args: args.join(" "),
        dir: dir.to_path_buf(),
        detail,
    };
    let out = run_captured_input(&argv, dir, env, input, GIT_TIMEOUT)
        .map_err(|e| failed(e.to_string()))?;
    if !out.success() {
        return Err(failed(crate::util::tail_lines(&out.stderr, 5)));
    }
    Ok(out.stdout)
}

/// Runs git in `dir` with its stdout into `out` (whole, however big), within the timeout.
pub fn git_to_file(dir: &Path, args: &[&str], out: &Path) -> Result<(), GitFailed> {
    let failed = |detail: String| GitFailed {
        args: args.join(" "),
        dir: dir.to_path_buf(),
        detail,
    };
    let argv = argv_for(dir, args);
    let file = File::create(out).map_err(|e| failed(format!("{}: {e}", out.display())))?;
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = command.spawn().map_err(|e| failed(e.to_string()))?;
    let _group = crate::proc::GroupGuard::track(child.id());
    let deadline = Instant::now() + GIT_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(failed(format!("exited with {status}"))),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(failed(format!(
                    "timed out after {}s",
                    GIT_TIMEOUT.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(failed(e.to_string())),
        }
    }
}

/// Why the project at a commit could not be laid out.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Git(#[from] GitFailed),
    #[error("{}: {cause}", path.display())]
    Io {
        path: std::path::PathBuf,
        cause: std::io::Error,
    },
}

/// Lays out the project as it was at `commit` in `copy`, made afresh: the files git holds for
/// it (never the working tree's), from the project's own folder of the repository. `scratch`
/// holds the archive on its way.
pub(crate) fn export_commit(
    repo: &Path,
    commit: &str,
    copy: &Path,
    scratch: &Path,
) -> Result<(), ExportError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |cause| ExportError::Io { path, cause }
    };
    // A project in a subfolder of its repository: that folder's tree, paths relative to it.
    let prefix = git(repo, &["rev-parse", "--show-prefix"], None)?;
    let tree = match prefix.trim().trim_end_matches('/') {
        "" => commit.to_string(),
        sub => format!("{commit}:{sub}"),
    };
    std::fs::create_dir_all(scratch).map_err(io(scratch))?;
    let archive = scratch.join("base.tar");
    git_to_file(repo, &["archive", "--format=tar", &tree], &archive)?;
    if copy.exists() {
        std::fs::remove_dir_all(copy).map_err(io(copy))?;
    }
    std::fs::create_dir_all(copy).map_err(io(copy))?;
    let file = std::fs::File::open(&archive).map_err(io(&archive))?;
    // tar's unpack keeps every entry inside `copy` (no `..`, no absolute paths).
    tar::Archive::new(file).unpack(copy).map_err(io(copy))?;
    let _ = std::fs::remove_file(&archive);
    Ok(())
}
