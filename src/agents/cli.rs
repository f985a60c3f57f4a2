//! The cli backend: an agent CLI (Claude Code, Codex, Gemini CLI, …) run in its own folder with a
//! timeout. The prompt goes on stdin, or into a file when the command says `{prompt_file}`, or
//! as an argument for `{prompt}`. The files it leaves in its folder and the named code blocks of
//! its answer are the result; what it changes in the repository is refused (undone) and reported.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::answer::{self, AnswerFile};
use super::call::WorkDir;
use crate::proc::run_captured_input;

/// Why a run of an agent CLI gave nothing. `outside` lists what it wrote outside its folder
/// (undone), so the message still says so when the run itself failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("cannot create {}: {cause}", path.display())]
    CreateFolder {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("cannot write {}: {cause}", path.display())]
    WritePrompt {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// The program could not be started or waited for, or ran past its time.
    #[error("{cause}{}", outside_note(outside))]
    Run {
        cause: crate::proc::ProcError,
        outside: Vec<String>,
    },
    #[error(
        "{program} exited with {code:?}: {stderr_tail}{}",
        outside_note(outside)
    )]
    Exited {
        program: String,
        code: Option<i32>,
        stderr_tail: String,
        outside: Vec<String>,
    },
}

fn outside_note(outside: &[String]) -> String {
    if outside.is_empty() {
        String::new()
    } else {
        format!(
            "; it also wrote outside its folder (undone): {}",
            outside.join(", ")
        )
    }
}

/// What one run of the CLI gave.
#[derive(Debug, Default)]
pub struct CliRun {
    pub stdout: String,
    pub files: Vec<AnswerFile>,
    /// Refused: files outside its folder it changed (undone), and unusable answer blocks.
    pub refused: Vec<String>,
}

/// The prompt file's name inside the agent's folder (`{prompt_file}`); never a candidate.
const PROMPT_FILE: &str = ".team-testing-prompt.md";

/// One agent CLI at a time: each watches the repository for the writes of its own run only.
static REPO_WATCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Where a CLI runs and what it must leave alone.
pub struct Folders<'a> {
    /// Its working folder.
    pub folder: &'a Path,
    /// What the folder holds when it starts (emptied first when `Empty`).
    pub workdir: WorkDir<'a>,
    /// The user's repository: watched, and what the CLI changed there is undone.
    pub repo: &'a Path,
    /// The session (not watched, should it live inside the repository).
    pub session: &'a Path,
}

/// Runs `command` in `at.folder`. `at.repo` is watched for changes (the session folder, should
/// it live inside the repository, is not); what the CLI changed there is undone.
pub fn run(
    command: &[String],
    prompt: &str,
    at: Folders,
    env: &[(&str, &str)],
    timeout: Duration,
) -> Result<CliRun, CliError> {
    let Folders {
        folder,
        workdir,
        repo,
        session,
    } = at;
    if workdir == WorkDir::Empty {
        let _ = std::fs::remove_dir_all(folder);
    }
    std::fs::create_dir_all(folder).map_err(|cause| CliError::CreateFolder {
        path: folder.to_path_buf(),
        cause,
    })?;
    // In its folder: agents may read their own working folder only.
    let prompt_file = folder.join(PROMPT_FILE);
    let mut uses_stdin = true;
    let argv: Vec<String> = command
        .iter()
        .map(|a| {
            if a.contains("{prompt_file}") {
                uses_stdin = false;
                a.replace("{prompt_file}", &prompt_file.display().to_string())
            } else if a.contains("{prompt}") {
                uses_stdin = false;
                a.replace("{prompt}", prompt)
            } else {
                a.clone()
            }
        })
        .collect();
    if !uses_stdin {
        std::fs::write(&prompt_file, prompt).map_err(|cause| CliError::WritePrompt {
            path: prompt_file.clone(),
            cause,
        })?;
    }
    let session_real = session
        .canonicalize()
        .unwrap_or_else(|_| session.to_path_buf());
    let kept = session.join("agents").join("undone");
    let watch = REPO_WATCH.lock().unwrap_or_else(|p| p.into_inner());
    let before = snapshot(repo, &session_real);
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let input = uses_stdin.then(|| prompt.as_bytes().to_vec());
    let result = run_captured_input(&args, folder, env, input, timeout);
    // Whatever happened, what it did to the repository is undone and reported.
    let outside = undo_changes(repo, &session_real, &before, &kept);
    drop(watch);
    let out = match result {
        Ok(out) => out,
        Err(cause) => return Err(CliError::Run { cause, outside }),
    };
    if !out.success() {
        return Err(CliError::Exited {
            program: argv[0].clone(),
            code: out.status,
            stderr_tail: crate::util::tail_lines(&out.stderr, 5),
            outside,
        });
    }
    let mut run = CliRun {
        refused: outside
            .into_iter()
            .map(|p| format!("{p}: written outside its folder (undone)"))
            .collect(),
        ..Default::default()
    };
    match workdir {
        WorkDir::Empty => {
            for file in files_in(folder) {
                let rel = file.strip_prefix(folder).unwrap_or(&file).to_path_buf();
                if rel == Path::new(PROMPT_FILE) {
                    continue;
                }
                match crate::util::read_regular(&file)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                {
                    Ok(content) => run.files.push(AnswerFile { path: rel, content }),
                    Err(e) => run.refused.push(format!("{}: {e}", rel.display())),
                }
            }
        }
        WorkDir::CopyOf(tree) => {
            let (files, refused) = super::copy_answer::changed(folder, tree, &[PROMPT_FILE]);
            run.files.extend(files);
            run.refused.extend(refused);
        }
    }
    let parsed = answer::parse(&out.stdout);
    for f in parsed.files {
        if !run.files.iter().any(|g| g.path == f.path) {
            run.files.push(f);
        }
    }
    if run.files.is_empty() {
        run.refused.extend(parsed.refused);
    }
    run.stdout = out.stdout;
    Ok(run)
}

/// Regular files under `dir` (symlinks are not followed).
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                stack.push(e.path());
            } else if kind.is_file() {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// Size, modification time and (within [`COPY_BUDGET`]) the bytes of every repository file.
type Snapshot = BTreeMap<PathBuf, (u64, Option<SystemTime>, Option<Vec<u8>>)>;

/// Bytes of repository files copied before a call, so a change can be put back exactly
/// (also in a dirty working tree, which `git checkout` would wipe).
const COPY_BUDGET: u64 = 64 << 20;
const COPY_FILE_MAX: u64 = 1 << 20;

/// The repository's files (not .git, not the session).
fn snapshot(repo: &Path, session: &Path) -> Snapshot {
    let mut out = Snapshot::new();
    let mut budget = COPY_BUDGET;
    let _ = crate::workspace::list_files(repo, Path::new(""), Some(session), &mut |rel, abs| {
        if let Ok(m) = std::fs::symlink_metadata(&abs) {
            let copy = (m.is_file() && m.len() <= COPY_FILE_MAX && m.len() <= budget)
                .then(|| crate::util::read_regular(&abs).ok())
                .flatten();
            if let Some(bytes) = &copy {
                budget -= bytes.len() as u64;
            }
            out.insert(rel, (m.len(), m.modified().ok(), copy));
        }
    });
    out
}

/// Puts the repository back as `before` saw it: new files move to `kept` (never deleted: someone
/// else may have made one meanwhile), changed and removed files are written back from their
/// copy. Returns what had changed (and what could not be put back, for want of a copy).
fn undo_changes(repo: &Path, session: &Path, before: &Snapshot, kept: &Path) -> Vec<String> {
    let after = snapshot(repo, session);
    let mut changed = Vec::new();
    let restore = |rel: &Path, copy: &Option<Vec<u8>>| -> String {
        let shown = rel.display().to_string();
        match copy {
            Some(bytes) if crate::util::write_nofollow(&repo.join(rel), bytes).is_ok() => shown,
            _ => format!("{shown} (not put back: no copy was kept)"),
        }
    };
    for (rel, (len, mtime, _)) in &after {
        match before.get(rel) {
            None => {
                let to = kept.join(rel);
                if let Some(parent) = to.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                if std::fs::rename(repo.join(rel), &to).is_err() {
                    let _ = std::fs::remove_file(repo.join(rel));
                }
                changed.push(rel.display().to_string());
            }
            Some((old_len, old_mtime, copy)) if (old_len, old_mtime) != (len, mtime) => {
                changed.push(restore(rel, copy));
            }
            Some(_) => {}
        }
    }
    for (rel, (_, _, copy)) in before.iter().filter(|(k, _)| !after.contains_key(*k)) {
        if let Some(parent) = repo.join(rel).parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        changed.push(restore(rel, copy));
    }
    changed
}
