//! One call of one agent backend for a role's task, recorded in the session; answered from a
//! recording instead when the session replays one and the prompt matches.

use std::path::Path;
use std::time::{Duration, Instant};

use super::answer::{self, AnswerFile};
use super::backends::{Backend, BackendSpec};
use super::record::{self, CallRecord, RecordedFile};
use super::{cli, http};
use crate::util::now_ts;

/// Why a call gave nothing usable; the chain moves on to its next backend.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// Replaying never asks a live backend: a reproduction must not depend on the network.
    #[error("replay: the recording has no answer to this prompt")]
    NotRecorded { prompt_hash: String },
    #[error("replay: the recorded call has no answer")]
    RecordedWithoutAnswer { prompt_hash: String },
    #[error("the built-in backend is not an agent call")]
    Builtin,
    #[error(transparent)]
    Cli(#[from] cli::CliError),
    #[error(transparent)]
    Http(#[from] http::CallError),
    #[error("the backend gave no answer")]
    NoAnswer { backend: String },
    #[error("the answer is empty")]
    EmptyAnswer { backend: String },
    #[error("the answer has no usable file{}", refused_note(refused))]
    NoUsableFile {
        backend: String,
        refused: Vec<String>,
    },
}

fn refused_note(refused: &[String]) -> String {
    if refused.is_empty() {
        String::new()
    } else {
        format!(" ({})", refused.join("; "))
    }
}

/// What the call is about.
pub struct CallInput<'a> {
    pub session: &'a Path,
    pub repo: &'a Path,
    pub role: &'a str,
    pub task_id: &'a str,
    /// The role's instructions (roles/<role>/role.md).
    pub system: &'a str,
    pub prompt: &'a str,
    /// The cli backend's own folder (its cwd, where the files it writes are taken from).
    pub folder: &'a Path,
    /// What `folder` holds when the agent starts.
    pub workdir: WorkDir<'a>,
    /// `<replayed session>/agents`, when replaying.
    pub replay: Option<&'a Path>,
    /// No call may run past this.
    pub time_left: Duration,
}

/// What an agent CLI's working folder holds when it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkDir<'a> {
    /// Nothing (it is emptied first): every file the agent leaves there is its answer.
    Empty,
    /// A copy of this tree, made by the caller (a mirror of the repository): the agent can read
    /// the project and run its tests there, and the files it creates or changes are its answer.
    CopyOf(&'a Path),
}

/// A call that gave files.
#[derive(Debug)]
pub struct CallResult {
    pub files: Vec<AnswerFile>,
    pub refused: Vec<String>,
    pub replayed: bool,
    pub tokens: (Option<u64>, Option<u64>),
}

/// The prompt as hashed for replay: the session's folder and id and the repository's folder
/// written as `<session>`, `<session-id>` and `<repo>`, so the same task on the same code
/// matches in another session or another clone.
fn replay_key(input: &CallInput) -> String {
    let mut key = input.prompt.to_string();
    let mut places: Vec<(String, &str)> = Vec::new();
    for (path, name) in [(input.session, "<session>"), (input.repo, "<repo>")] {
        places.push((path.display().to_string(), name));
        if let Ok(real) = path.canonicalize() {
            places.push((real.display().to_string(), name));
        }
    }
    // Longest first: a session inside the repository is replaced as a session.
    places.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    for (path, name) in places {
        if !path.is_empty() {
            key = key.replace(&path, name);
        }
    }
    if let Some(id) = input.session.file_name().and_then(|n| n.to_str()) {
        key = key.replace(id, "<session-id>");
    }
    key
}

/// The recorded call for this prompt when replaying; replaying never asks a live backend for a
/// prompt the recording lacks (a reproduction must not depend on the network).
fn recorded(input: &CallInput, hash: &str) -> Result<Option<CallRecord>, AgentError> {
    let Some(dir) = input.replay else {
        return Ok(None);
    };
    record::find(dir, hash)
        .map(Some)
        .ok_or_else(|| AgentError::NotRecorded {
            prompt_hash: hash.to_string(),
        })
}

/// The record of a call about to be made.
fn new_record(backend: &Backend, input: &CallInput) -> CallRecord {
    CallRecord {
        role: input.role.into(),
        task_id: input.task_id.into(),
        backend: backend.name.clone(),
        prompt_hash: record::prompt_hash(&replay_key(input)),
        prompt: input.prompt.into(),
        at: now_ts(),
        ..Default::default()
    }
}

/// Calls `backend` (not the built-in one); Err says why the chain should move on.
pub fn call(backend: &Backend, input: &CallInput) -> Result<CallResult, AgentError> {
    let started = Instant::now();
    let mut rec = new_record(backend, input);
    let hash = rec.prompt_hash.clone();
    let result = match recorded(input, &hash) {
        Err(e) => Err(e),
        Ok(Some(r)) => {
            rec.replayed = true;
            rec.answer = r.answer.clone();
            rec.tokens_in = r.tokens_in;
            rec.tokens_out = r.tokens_out;
            let files = r
                .files
                .iter()
                .filter_map(|f| {
                    answer::safe_relative(&f.path).ok().map(|path| AnswerFile {
                        path,
                        content: f.content.clone(),
                    })
                })
                .collect();
            Ok((files, Vec::new()))
        }
        Ok(None) => run_backend(backend, input, &mut rec),
    };
    rec.duration_s = started.elapsed().as_secs_f64();
    let out = match result {
        Ok((files, refused)) if !files.is_empty() => {
            rec.files = files
                .iter()
                .map(|f| RecordedFile {
                    path: f.path.display().to_string(),
                    content: f.content.clone(),
                })
                .collect();
            Ok(CallResult {
                files,
                refused,
                replayed: rec.replayed,
                tokens: (rec.tokens_in, rec.tokens_out),
            })
        }
        Ok((_, refused)) => Err(AgentError::NoUsableFile {
            backend: backend.name.clone(),
            refused,
        }),
        Err(e) => Err(e),
    };
    if let Err(e) = &out {
        rec.error = Some(e.to_string());
    }
    // A call that cannot be recorded still counts; the record is evidence, not state.
    let _ = record::save(input.session, &rec);
    out
}

type Files = (Vec<AnswerFile>, Vec<String>);

fn run_backend(
    backend: &Backend,
    input: &CallInput,
    rec: &mut CallRecord,
) -> Result<Files, AgentError> {
    match &backend.spec {
        BackendSpec::Builtin => Err(AgentError::Builtin),
        BackendSpec::Cli { command, timeout_s } => {
            let timeout = Duration::from_secs(*timeout_s).min(input.time_left);
            let env = [
                ("TT_ROLE", input.role),
                ("TT_TASK_ID", input.task_id),
                ("TT_REPO", &*input.repo.to_string_lossy()),
                // git in the agent's folder must not find the user's repository above it.
                (
                    "GIT_CEILING_DIRECTORIES",
                    &*input
                        .folder
                        .parent()
                        .unwrap_or(input.folder)
                        .to_string_lossy(),
                ),
            ]
            .map(|(k, v)| (k, v.to_string()));
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let prompt = format!("{}\n\n{}", input.system, input.prompt);
            let run = cli::run(
                command,
                &prompt,
                cli::Folders {
                    folder: input.folder,
                    workdir: input.workdir,
                    repo: input.repo,
                    session: input.session,
                },
                &env,
                timeout,
            )?;
            rec.answer = Some(run.stdout.clone());
            Ok((run.files, run.refused))
        }
        BackendSpec::Http {
            base_url,
            model,
            api_key_env,
            timeout_s,
            max_retries,
        } => {
            let key = match api_key_env {
                Some(var) => {
                    Some(std::env::var(var).map_err(|_| http::CallError::MissingKey(var.clone()))?)
                }
                None => None,
            };
            let answer = http::complete(&http::Request {
                base_url,
                model,
                api_key: key.as_deref(),
                system: input.system,
                prompt: input.prompt,
                timeout: Duration::from_secs(*timeout_s).min(input.time_left),
                max_retries: *max_retries,
                backoff: Duration::from_millis(500),
            })?;
            rec.answer = Some(answer.text.clone());
            rec.tokens_in = answer.tokens_in;
            rec.tokens_out = answer.tokens_out;
            let parsed = answer::parse(&answer.text);
            Ok((parsed.files, parsed.refused))
        }
    }
}

/// Asks `backend` for prose (the analyst's narrative): the answer text, and whether it came from
/// a recording. Recorded like [`call`].
pub fn ask(backend: &Backend, input: &CallInput) -> Result<(String, bool), AgentError> {
    let started = Instant::now();
    let mut rec = new_record(backend, input);
    let hash = rec.prompt_hash.clone();
    let result = match recorded(input, &hash) {
        Err(e) => Err(e),
        Ok(Some(r)) => {
            rec.replayed = true;
            r.answer
                .ok_or(AgentError::RecordedWithoutAnswer { prompt_hash: hash })
        }
        Ok(None) => run_backend(backend, input, &mut rec).and_then(|_| {
            rec.answer.clone().ok_or_else(|| AgentError::NoAnswer {
                backend: backend.name.clone(),
            })
        }),
    };
    rec.duration_s = started.elapsed().as_secs_f64();
    let out = match result {
        Ok(text) if !text.trim().is_empty() => {
            rec.answer = Some(text.clone());
            Ok((text, rec.replayed))
        }
        Ok(_) => Err(AgentError::EmptyAnswer {
            backend: backend.name.clone(),
        }),
        Err(e) => Err(e),
    };
    if let Err(e) = &out {
        rec.error = Some(e.to_string());
    }
    let _ = record::save(input.session, &rec);
    out
}
