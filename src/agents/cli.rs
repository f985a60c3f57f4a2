//! The cli backend: an agent CLI (Claude Code, Codex, Gemini CLI, …) run in its own folder with a
//! timeout. The prompt goes on stdin, or into a file when the command says `{prompt_file}`, or
//! as an argument for `{prompt}`. The files it leaves in its folder and the named code blocks of
//! its answer are the result; what it changes in the repository is refused (undone) and reported.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::answer::{self, AnswerFile};
use crate::proc::run_captured_input;

/// What one run of the CLI gave.
#[derive(Debug, Default)]
pub struct CliRun {
    pub stdout: String,
    pub files: Vec<AnswerFile>,
    /// Refused: files outside its folder it changed (undone), and unusable answer blocks.
    pub refused: Vec<String>,
}

/// Runs `command` in `folder` (emptied first). `repo` is watched for changes.
pub fn run(
    command: &[String],
    prompt: &str,
    folder: &Path,
    repo: &Path,
    env: &[(&str, &str)],
    timeout: Duration,
) -> Result<CliRun, String> {
    let _ = std::fs::remove_dir_all(folder);
    std::fs::create_dir_all(folder)
        .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    let prompt_file = folder.with_extension("prompt.md");
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
        std::fs::write(&prompt_file, prompt)
            .map_err(|e| format!("cannot write {}: {e}", prompt_file.display()))?;
    }
    let before = snapshot(repo);
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let input = uses_stdin.then(|| prompt.as_bytes().to_vec());
    let result = run_captured_input(&args, folder, env, input, timeout);
    // Whatever happened, what it did to the repository is undone and reported.
    let outside = undo_changes(repo, &before);
    let out = result.map_err(|e| e.to_string())?;
    if !out.success() {
        return Err(format!(
            "{} exited with {:?}: {}",
            argv[0],
            out.status,
            crate::testing::runner::tail_lines(&out.stderr, 5)
        ));
    }
    let mut run = CliRun {
        refused: outside
            .into_iter()
            .map(|p| format!("{p}: written outside its folder (undone)"))
            .collect(),
        ..Default::default()
    };
    for file in files_in(folder) {
        let rel = file.strip_prefix(folder).unwrap_or(&file).to_path_buf();
        match crate::util::read_regular(&file).map(|b| String::from_utf8_lossy(&b).into_owned()) {
            Ok(content) => run.files.push(AnswerFile { path: rel, content }),
            Err(e) => run.refused.push(format!("{}: {e}", rel.display())),
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

type Snapshot = BTreeMap<PathBuf, (u64, Option<SystemTime>)>;

/// Size and modification time of every file of the repository (not .git or sessions).
fn snapshot(repo: &Path) -> Snapshot {
    let mut out = Snapshot::new();
    let _ = crate::testing::workspace::list_files(repo, Path::new(""), None, &mut |rel, abs| {
        if let Ok(m) = std::fs::symlink_metadata(&abs) {
            out.insert(rel, (m.len(), m.modified().ok()));
        }
    });
    out
}

/// Puts the repository back as `before` saw it, as far as it can: new files are removed,
/// changed tracked files are checked out again. Returns what had changed.
fn undo_changes(repo: &Path, before: &Snapshot) -> Vec<String> {
    let after = snapshot(repo);
    let mut changed = Vec::new();
    for (rel, state) in &after {
        match before.get(rel) {
            None => {
                let _ = std::fs::remove_file(repo.join(rel));
                changed.push(rel.display().to_string());
            }
            Some(old) if old != state => {
                let path = rel.display().to_string();
                let _ = crate::proc::run_captured(
                    &["git", "checkout", "--", &path],
                    repo,
                    Duration::from_secs(30),
                );
                changed.push(path);
            }
            Some(_) => {}
        }
    }
    for rel in before.keys().filter(|k| !after.contains_key(*k)) {
        let path = rel.display().to_string();
        let _ = crate::proc::run_captured(
            &["git", "checkout", "--", &path],
            repo,
            Duration::from_secs(30),
        );
        changed.push(path);
    }
    changed
}
