//! Command roles: the task as JSON on stdin, TT_* variables in the environment, the session folder as
//! cwd. The last non-empty stdout line is the JSON outcome; other JSON lines with a `type` are
//! messages (progress, blocker, …). Non-zero exit, bad JSON or the timeout fail the task.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::tasks::{Outcome, OutcomeStatus};

/// How much of stderr is kept for the failure reason.
const STDERR_TAIL: usize = 2000;

pub struct CommandSpec {
    /// Run inside this sandbox (a role with `sandbox: true`).
    pub sandbox: Option<crate::sandbox::Sandbox>,
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub stdin: String,
    pub timeout: Duration,
}

/// `{role_dir}` in an argument is replaced by the folder of the role file.
pub fn expand_argv(argv: &[String], role_dir: Option<&Path>) -> Vec<String> {
    let dir = role_dir
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    argv.iter().map(|a| a.replace("{role_dir}", &dir)).collect()
}

/// Runs the command; `on_message` gets every JSON object line that carries a `type`.
pub async fn run(spec: CommandSpec, mut on_message: impl FnMut(Value)) -> Outcome {
    let Some((program, args)) = spec.argv.split_first() else {
        return Outcome::failed("command role has an empty command");
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args);
    let mut run = None;
    if let Some(sandbox) = &spec.sandbox {
        // Before the role's own variables: the sandbox starts from a scrubbed environment.
        match sandbox.apply(cmd.as_std_mut(), &spec.cwd) {
            Ok(r) => run = Some(r),
            Err(e) => return Outcome::failed(format!("cannot sandbox {program}: {e}")),
        }
    }
    cmd.current_dir(&spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // SAFETY: the closure only calls prctl, which is safe between fork and exec.
    unsafe {
        crate::proc::note_parent();
        cmd.pre_exec(crate::proc::die_with_parent);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::failed(format!("cannot start {program}: {e}")),
    };
    let pid = child.id().unwrap_or(0);
    let group = crate::proc::GroupGuard::track(pid);
    let mut stdin = child.stdin.take().expect("piped");
    let input = spec.stdin.into_bytes();
    // A role that never reads stdin must not block us: write in the background, ignore EPIPE.
    tokio::spawn(async move {
        let _ = stdin.write_all(&input).await;
    });
    let stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let err_task = tokio::spawn(async move {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf).await;
        buf
    });

    // Everything, including draining the pipes, happens within the timeout.
    let work = async {
        let mut reader = BufReader::new(stdout);
        let mut last = String::new();
        let mut status = None;
        let mut line = Vec::new();
        let mut overlong = false;
        loop {
            tokio::select! {
                read = read_bounded_line(&mut reader, &mut line, &mut overlong) => {
                    match read {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                    // A partial line (the other arm won the race) stays in `line` until its
                    // newline arrives: the reader appends, so nothing is lost.
                    if line.last() != Some(&b'\n') {
                        continue;
                    }
                    if std::mem::take(&mut overlong) {
                        // Its head was kept only to say what it was; it is no message.
                        line.clear();
                        last = format!("(a stdout line over {MAX_LINE} bytes)");
                        continue;
                    }
                    // Lossy: one bad byte must not cost the outcome.
                    let text = String::from_utf8_lossy(&line).trim().to_string();
                    line.clear();
                    if text.is_empty() {
                        continue;
                    }
                    if let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(&text) {
                        if obj.contains_key("type") {
                            on_message(Value::Object(obj));
                        }
                    }
                    last = text;
                }
                exited = child.wait(), if status.is_none() => {
                    // The role is done: end what it left behind, so the pipes reach EOF.
                    crate::proc::kill_group(pid);
                    status = Some(exited);
                }
            }
        }
        // A last line without a newline still counts.
        let rest = String::from_utf8_lossy(&line).trim().to_string();
        if !rest.is_empty() {
            last = rest;
        }
        let status = match status {
            Some(s) => s,
            None => child.wait().await,
        };
        // Stdout can close before the exit is seen: end the group here too, or a grandchild
        // holding stderr would keep us waiting.
        crate::proc::kill_group(pid);
        let stderr = err_task.await.unwrap_or_default();
        (status, last, stderr)
    };
    let finished = tokio::time::timeout(spec.timeout, work).await;
    // Whatever the role left in the sandbox ends with it.
    if let (Some(sandbox), Some(run)) = (&spec.sandbox, run) {
        sandbox.end(run);
    }
    let (status, last, stderr) = match finished {
        Ok(r) => r,
        Err(_) => {
            drop(group);
            return Outcome::failed(format!(
                "{program} timed out after {}s and was killed",
                spec.timeout.as_secs()
            ));
        }
    };
    drop(group);
    let stderr = String::from_utf8_lossy(&stderr);
    let tail = tail(&stderr, STDERR_TAIL);
    match status {
        Ok(s) if s.success() => parse_outcome(&last),
        Ok(s) => Outcome::failed(match s.code() {
            Some(code) => format!("{program} exited with code {code}{}", tail_suffix(&tail)),
            None => format!("{program} was killed by a signal{}", tail_suffix(&tail)),
        }),
        Err(e) => Outcome::failed(format!("waiting for {program}: {e}")),
    }
}

/// Longest stdout line kept; the rest of a longer one is read and dropped, so a role (or a test
/// run) that prints a gigabyte without a newline costs no memory.
const MAX_LINE: usize = 1 << 20;

/// Reads up to and including the next newline into `line`, keeping at most [`MAX_LINE`] bytes
/// (`overlong` says the line was cut). Returns the bytes consumed (0 at the end). Cancel-safe:
/// what was consumed is in `line` before the next await.
async fn read_bounded_line<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    overlong: &mut bool,
) -> std::io::Result<usize> {
    let mut consumed = 0;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(consumed);
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        if chunk.len() > room && !(done && chunk.len() - 1 <= room) {
            *overlong = true;
        }
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if done && line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        let n = chunk.len();
        reader.consume(n);
        consumed += n;
        if done {
            return Ok(consumed);
        }
    }
}

/// The outcome line: `{"status":"completed"|"failed"|"not_applicable","summary":..,"data":..,"pass_rate":..,"coverage":..}`
/// (`not_applicable`: nothing to do for the task; the summary says why).
pub fn parse_outcome(line: &str) -> Outcome {
    if line.is_empty() {
        return Outcome::failed(
            "the command printed no outcome (its last stdout line must be a JSON object)",
        );
    }
    match serde_json::from_str::<Outcome>(line) {
        Ok(mut o) => {
            if let Some(p) = o.pass_rate {
                if !(0.0..=1.0).contains(&p) || p.is_nan() {
                    return Outcome::failed(format!(
                        "outcome pass_rate {p} is not between 0 and 1"
                    ));
                }
            }
            if let Some(c) = o.coverage {
                if !(0.0..=100.0).contains(&c) || c.is_nan() {
                    return Outcome::failed(format!("outcome coverage {c} is not a percentage"));
                }
            }
            if o.status == OutcomeStatus::Failed && o.summary.is_empty() {
                o.summary = "the role reported failure".into();
            }
            o
        }
        Err(e) => Outcome::failed(format!(
            "the last stdout line is not a JSON outcome ({e}): {}",
            tail(line, 200)
        )),
    }
}

fn tail(s: &str, max: usize) -> String {
    let s = s.trim();
    if s.len() <= max {
        return s.to_string();
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &s[start..])
}

fn tail_suffix(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!(": {tail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_line_is_validated() {
        let o = parse_outcome(
            r#"{"status":"completed","summary":"ok","pass_rate":0.97,"coverage":null}"#,
        );
        assert_eq!(o.status, OutcomeStatus::Completed);
        assert_eq!(o.pass_rate, Some(0.97));
        assert_eq!(o.coverage, None);
        assert_eq!(parse_outcome("not json").status, OutcomeStatus::Failed);
        assert_eq!(
            parse_outcome(r#"{"status":"completed","pass_rate":7}"#).status,
            OutcomeStatus::Failed
        );
        assert!(parse_outcome("").summary.contains("no outcome"));
    }
}
