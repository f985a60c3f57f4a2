//! A resident child: one long-lived process, confined like any other, that answers requests
//! written to its stdin one line at a time. It exists for runners whose start costs more than
//! the work (mocha loads in 0.25 s and runs a mutant's tests in 10 ms). Each request still has
//! its own timeout: past it the child is killed and the next request starts a new one.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{kill_group, Confinement, GroupGuard, ProcError};

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum ResidentError {
    #[error("{program} ended before it answered")]
    Gone { program: String },
    #[error("{program} gave no answer within {seconds:.1}s and was killed")]
    TimedOut { program: String, seconds: f64 },
    #[error("writing a request to {program}: {cause}")]
    Write {
        program: String,
        cause: std::io::Error,
    },
}

/// What one request brought back.
#[derive(Debug)]
pub struct Reply {
    /// The text after the marker on the answer's line.
    pub answer: String,
    /// What the child printed to stdout and stderr while it worked on the request.
    pub stdout: String,
    pub stderr: String,
}

/// A running resident child; dropping it closes its stdin, gives it a moment to end on its own
/// (a watching sandbox's wrapper then writes its report) and kills what is left.
pub struct Resident<'a> {
    program: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<Vec<u8>>>,
    sandbox: Option<&'a (dyn Confinement + Sync)>,
    run: u64,
    group: Option<GroupGuard>,
}

/// How long a resident child may take to end once its stdin is closed.
const GRACE: Duration = Duration::from_secs(2);

impl<'a> Resident<'a> {
    /// Starts `argv` in `cwd` (inside `sandbox` when given) with `env` added.
    pub fn start(
        sandbox: Option<&'a (dyn Confinement + Sync)>,
        argv: &[&str],
        cwd: &Path,
        env: &[(&str, &str)],
    ) -> Result<Self, ProcError> {
        let (mut command, program, run) =
            super::confined_command(sandbox, argv, cwd, env, Stdio::piped())?;
        let program = &program;
        let mut child = command.spawn().map_err(|cause| ProcError::Start {
            program: program.clone(),
            cause,
        })?;
        let group = GroupGuard::track(child.id());
        let stdout = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).split(b'\n') {
                let Ok(line) = line else { break };
                if send
                    .send(String::from_utf8_lossy(&line).into_owned())
                    .is_err()
                {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut kept) = kept.lock() {
                    // Only the current request's output matters; a chatty child cannot grow it
                    // past the cap between two requests.
                    if kept.len() + n > super::OUTPUT_CAP {
                        kept.clear();
                    }
                    kept.extend_from_slice(&buf[..n]);
                }
            }
        });
        Ok(Resident {
            program: program.clone(),
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            sandbox,
            run,
            group: Some(group),
        })
    }

    /// Writes `request` as one line and waits, at most `timeout`, for the line that starts with
    /// `marker`. Past the timeout, or when the child ends, the child is killed: the caller
    /// starts another for its next request.
    pub fn ask(
        &mut self,
        request: &str,
        marker: &str,
        timeout: Duration,
    ) -> Result<Reply, ResidentError> {
        self.take_stderr();
        let written = match self.stdin.as_mut() {
            Some(stdin) => stdin
                .write_all(format!("{request}\n").as_bytes())
                .and_then(|()| stdin.flush()),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        if let Err(cause) = written {
            self.kill();
            return Err(match cause.kind() {
                std::io::ErrorKind::BrokenPipe => ResidentError::Gone {
                    program: self.program.clone(),
                },
                _ => ResidentError::Write {
                    program: self.program.clone(),
                    cause,
                },
            });
        }
        let started = (std::time::SystemTime::now(), Instant::now());
        let deadline = started.1 + timeout;
        let mut stdout = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => match line.strip_prefix(marker) {
                    Some(answer) => {
                        super::note_child_time(&format!("{} (resident)", self.program), started);
                        return Ok(Reply {
                            answer: answer.trim().to_string(),
                            stdout,
                            stderr: self.take_stderr(),
                        });
                    }
                    None if stdout.len() < super::OUTPUT_CAP => {
                        stdout.push_str(&line);
                        stdout.push('\n');
                    }
                    None => {}
                },
                Err(RecvTimeoutError::Timeout) => {
                    let name = format!("{} (resident, timed out)", self.program);
                    super::note_child_time(&name, started);
                    self.kill();
                    return Err(ResidentError::TimedOut {
                        program: self.program.clone(),
                        seconds: timeout.as_secs_f64(),
                    });
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.kill();
                    return Err(ResidentError::Gone {
                        program: self.program.clone(),
                    });
                }
            }
        }
    }

    /// Whether the child is still there to ask.
    pub fn alive(&mut self) -> bool {
        self.group.is_some() && matches!(self.child.try_wait(), Ok(None))
    }

    fn take_stderr(&self) -> String {
        let bytes = self
            .stderr
            .lock()
            .map(|mut kept| std::mem::take(&mut *kept))
            .unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Kills the child's group and whatever the run left in the sandbox.
    fn kill(&mut self) {
        self.stdin = None;
        if let Some(group) = self.group.take() {
            kill_group(self.child.id());
            drop(group);
            if let Some(sandbox) = self.sandbox {
                sandbox.end(self.run);
            }
            let _ = self.child.wait();
        }
    }
}

impl Drop for Resident<'_> {
    fn drop(&mut self) {
        // Closing stdin asks the child to end; it gets a moment before it is killed.
        self.stdin = None;
        let until = Instant::now() + GRACE;
        while self.group.is_some() && Instant::now() < until {
            match self.child.try_wait() {
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                _ => break,
            }
        }
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shell loop that echoes each request after the marker, and sleeps on "hang".
    fn echo() -> Resident<'static> {
        let script = r#"while read -r line; do
            if [ "$line" = hang ]; then sleep 30; fi
            echo "noise for $line"
            echo "@@ok $line"
        done"#;
        Resident::start(None, &["sh", "-c", script], Path::new("."), &[]).unwrap()
    }

    #[test]
    fn each_request_gets_its_own_answer_and_output() {
        let mut child = echo();
        for word in ["one", "two"] {
            let reply = child.ask(word, "@@ok", Duration::from_secs(10)).unwrap();
            assert_eq!(reply.answer, word);
            assert_eq!(reply.stdout, format!("noise for {word}\n"));
        }
        assert!(child.alive());
    }

    #[test]
    fn a_request_past_its_timeout_kills_the_child() {
        let mut child = echo();
        let started = Instant::now();
        let err = child
            .ask("hang", "@@ok", Duration::from_millis(300))
            .unwrap_err();
        assert!(matches!(err, ResidentError::TimedOut { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(!child.alive());
        let again = child
            .ask("one", "@@ok", Duration::from_secs(1))
            .unwrap_err();
        assert!(matches!(again, ResidentError::Gone { .. }), "{again}");
    }
}
