//! Candidates run in batches: a round's candidate calls become the tests of one generated test
//! target in a copy of the crate, built once with coverage instrumentation (incrementally: the
//! crate and its dependencies are not rebuilt between rounds); a candidate the compiler refuses
//! is dropped by the line its error points at and the target is built again without it. Each
//! candidate then runs as its own process, with a timeout, writing its own raw profile.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::harness::{CALLING, HARNESS, OBSERVED, PANICKED, RETURNED};
use crate::sandbox::Sandbox;

/// The candidates that built, and those dropped with the compiler's word.
pub type Built = (Vec<Candidate>, Vec<(Candidate, String)>);

/// A call to try: the body of one test.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// `c_0001`: its test's name in the probe.
    pub id: String,
    /// What it exercises: an index into the API's callables, or a doc example.
    pub source: Source,
    /// Statements up to the call; the last binds `value` (a doc example: its whole code).
    pub setup: Vec<String>,
    /// Observations after the call, as the probe prints them: `tt_obs!("value", &value);`.
    pub observe: Vec<String>,
    /// The values the observations name (`value`, `ok`, `value.len()`) and their types.
    pub labels: Vec<(String, super::ty::Ty)>,
    /// The call as the docs and findings show it: `parse("42")`.
    pub call: String,
    /// How big its inputs are (the shortest input that shows a defect is the one reported).
    pub size: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    Callable(usize),
    Example(usize),
    /// A value of a crate type, built and observed (its `Display`): the index of the type's
    /// name among the API's types.
    Value(usize),
    /// Method calls on one value of a crate type (L2): the index of the type's name.
    Sequence(usize),
    /// Two values of a crate type compared: the index of the type's name.
    Compare(usize),
}

/// What one run of a candidate showed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observation {
    /// The call was reached: what came before it (the receiver, its arguments' setup) did not
    /// panic.
    pub calling: bool,
    /// The call returned (the observations that follow are of its result).
    pub returned: bool,
    /// The first panic: its message and `file:line`.
    pub panic: Option<(String, String)>,
    /// label -> what was seen.
    pub values: BTreeMap<String, Seen>,
    /// It ran past its time or died without a word (abort, stack overflow).
    pub stopped: Option<String>,
    /// What it left in the empty home and temporary folder it ran with.
    pub effects: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Seen {
    pub debug: Option<String>,
    pub eq: Option<bool>,
    pub display: Option<String>,
}

#[derive(Deserialize)]
struct ObservedLine {
    label: String,
    #[serde(flatten)]
    seen: Seen,
}

#[derive(Deserialize)]
struct PanicLine {
    message: String,
    place: String,
}

/// Why the probe could not be built at all.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("cannot write {}: {cause}", path.display())]
    Write {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("cargo did not finish: {0}")]
    Cargo(crate::proc::ProcError),
    #[error("the crate does not build: {0}")]
    CrateDoesNotBuild(String),
    #[error("the probe target does not build, and no candidate is to blame: {0}")]
    Unattributed(String),
    #[error("cargo built no test binary for {0}")]
    NoBinary(String),
}

/// The probe target of a layer in the generator's copy of the crate.
pub struct Probe<'a> {
    /// The copy of the crate.
    pub copy: PathBuf,
    /// The target's name: `tt_probe_L1`.
    pub target: String,
    pub target_dir: PathBuf,
    pub cargo: String,
    pub sandbox: Option<&'a Sandbox>,
    pub deadline: Instant,
    /// The built binary.
    pub binary: Option<PathBuf>,
}

/// A compiler error and the line of the target's file it points at (None: elsewhere).
pub struct BuildProblem {
    pub line: Option<u32>,
    pub message: String,
}

impl Probe<'_> {
    /// The file of test target `target` in the copy.
    pub fn file(&self, target: &str) -> PathBuf {
        self.copy.join("tests").join(format!("{target}.rs"))
    }

    fn env(&self) -> Vec<(String, String)> {
        vec![
            (
                "CARGO_TARGET_DIR".into(),
                self.target_dir.display().to_string(),
            ),
            ("CARGO_TERM_COLOR".into(), "never".into()),
            ("CARGO_NET_OFFLINE".into(), "true".into()),
            ("RUSTFLAGS".into(), "-C instrument-coverage".into()),
            ("CARGO_INCREMENTAL".into(), "1".into()),
        ]
    }

    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Builds the candidates that compile: the others are returned with the compiler's word.
    pub fn build(&mut self, mut candidates: Vec<Candidate>) -> Result<Built, ProbeError> {
        let mut dropped = Vec::new();
        // Each attempt drops every candidate an error points at; new errors can surface only
        // once earlier ones are gone (name resolution before type checking).
        for _ in 0..6 {
            let (text, lines) = render(&candidates);
            let path = self.file(&self.target);
            crate::util::write_nofollow(&path, text.as_bytes())
                .map_err(|cause| ProbeError::Write { path, cause })?;
            let problems = match self.compile(&self.target)? {
                Ok(binary) => {
                    self.binary = Some(binary);
                    return Ok((candidates, dropped));
                }
                Err(problems) => problems,
            };
            let blamed: BTreeMap<String, String> = problems
                .iter()
                .filter_map(|p| {
                    let line = p.line?;
                    let id = lines
                        .iter()
                        .find(|(_, from, to)| (*from..=*to).contains(&line))?
                        .0
                        .clone();
                    Some((id, p.message.clone()))
                })
                .collect();
            if blamed.is_empty() {
                let first = problems
                    .first()
                    .map(|p| p.message.clone())
                    .unwrap_or_default();
                return Err(ProbeError::Unattributed(first));
            }
            let (bad, good): (Vec<Candidate>, Vec<Candidate>) = candidates
                .into_iter()
                .partition(|c| blamed.contains_key(&c.id));
            dropped.extend(bad.into_iter().map(|c| {
                let why = blamed[&c.id].clone();
                (c, why)
            }));
            candidates = good;
        }
        Err(ProbeError::Unattributed(
            "the compiler kept finding new errors".into(),
        ))
    }

    /// `cargo test --no-run` of test target `target`: its binary, or the errors in its file.
    pub fn compile(&self, target: &str) -> Result<Result<PathBuf, Vec<BuildProblem>>, ProbeError> {
        let argv: Vec<String> = [
            self.cargo.as_str(),
            "test",
            "--no-run",
            "--offline",
            "--message-format=json",
            "--test",
            target,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let argv_ref: Vec<&str> = argv.iter().map(String::as_str).collect();
        let env = self.env();
        let env_ref: Vec<(&str, &str)> =
            env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let out = crate::proc::run_sandboxed(
            self.sandbox,
            &argv_ref,
            &self.copy,
            &env_ref,
            None,
            self.left(),
        )
        .map_err(ProbeError::Cargo)?;
        let probe_file = format!("tests/{target}.rs");
        let mut problems = Vec::new();
        let mut binary = None;
        let mut crate_errors = Vec::new();
        for line in out.stdout.lines() {
            let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            match msg["reason"].as_str() {
                Some("compiler-artifact") if msg["target"]["name"] == target => {
                    if let Some(exe) = msg["executable"].as_str() {
                        binary = Some(PathBuf::from(exe));
                    }
                }
                Some("compiler-message") if msg["message"]["level"] == "error" => {
                    let rendered = msg["message"]["rendered"].as_str().unwrap_or_default();
                    let text = rendered.lines().take(12).collect::<Vec<_>>().join("\n");
                    let spans = msg["message"]["spans"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default();
                    let primary = spans.iter().find(|s| s["is_primary"] == true);
                    let at = primary
                        .and_then(|s| line_in(s, &probe_file))
                        .or_else(|| spans.iter().find_map(|s| line_in(s, &probe_file)));
                    if msg["target"]["name"] != target {
                        crate_errors.push(text);
                        continue;
                    }
                    if at.is_none() && text.starts_with("error: aborting") {
                        continue;
                    }
                    problems.push(BuildProblem {
                        line: at,
                        message: text,
                    });
                }
                _ => {}
            }
        }
        if !crate_errors.is_empty() {
            return Err(ProbeError::CrateDoesNotBuild(crate_errors.join("\n")));
        }
        if out.success() {
            return binary
                .map(Ok)
                .ok_or_else(|| ProbeError::NoBinary(target.to_string()));
        }
        if problems.is_empty() {
            return Err(ProbeError::Unattributed(crate::util::tail_lines(
                &out.stderr,
                12,
            )));
        }
        Ok(Err(problems))
    }

    /// Runs `binary` with `args` in the copy, its raw profile written to `profile`, with
    /// `home` (made empty) as its home and temporary folder.
    pub fn run_binary(
        &self,
        binary: &Path,
        args: &[&str],
        profile: &Path,
        home: &Path,
        timeout: Duration,
    ) -> Result<crate::proc::Captured, crate::proc::ProcError> {
        let binary = binary.display().to_string();
        let mut argv = vec![binary.as_str()];
        argv.extend_from_slice(args);
        let profile = profile.display().to_string();
        let _ = std::fs::remove_dir_all(home);
        let _ = std::fs::create_dir_all(home);
        let home = home.display().to_string();
        let env = [
            ("LLVM_PROFILE_FILE", profile.as_str()),
            ("RUST_BACKTRACE", "0"),
            ("HOME", home.as_str()),
            ("TMPDIR", home.as_str()),
            ("XDG_CONFIG_HOME", home.as_str()),
            ("XDG_CACHE_HOME", home.as_str()),
            ("XDG_DATA_HOME", home.as_str()),
        ];
        let timeout = timeout.min(self.left());
        crate::proc::run_sandboxed(self.sandbox, &argv, &self.copy, &env, None, timeout)
    }

    /// Runs candidate `id` alone, its raw profile written to `profile`, in an empty home
    /// (`<profile>.home`): what it leaves there is an effect, named in `effects`.
    pub fn run(&self, id: &str, profile: &Path, timeout: Duration) -> Observation {
        let home = profile.with_extension("home");
        let mut seen = self.run_in(id, profile, &home, timeout);
        seen.effects = left_in(&home);
        let _ = std::fs::remove_dir_all(&home);
        seen
    }

    fn run_in(&self, id: &str, profile: &Path, home: &Path, timeout: Duration) -> Observation {
        let Some(binary) = &self.binary else {
            return Observation {
                stopped: Some("the probe is not built".into()),
                ..Observation::default()
            };
        };
        let args = [id, "--exact", "--nocapture", "--test-threads=1", "-q"];
        match self.run_binary(binary, &args, profile, home, timeout) {
            Ok(out) => {
                let mut seen = observation(&out.stdout);
                if out.status != Some(0) && seen.panic.is_none() {
                    seen.stopped = Some(format!(
                        "the test process ended with {:?}: {}",
                        out.status,
                        crate::util::tail_lines(&out.stderr, 3)
                    ));
                }
                seen
            }
            Err(e) => Observation {
                stopped: Some(e.to_string()),
                ..Observation::default()
            },
        }
    }
}

/// The files and folders under `dir`, relative to it (a few: what shows an effect).
fn left_in(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            out.push(
                path.strip_prefix(dir)
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            );
            if e.file_type().is_ok_and(|t| t.is_dir()) && out.len() < 20 {
                stack.push(path);
            }
        }
    }
    out.sort();
    out.truncate(5);
    out
}

/// The line of `file` a compiler span points at: its own, or, for code a macro expanded (the
/// harness's `tt_obs!`), the line that invoked the macro, the outermost one in `file`.
fn line_in(span: &serde_json::Value, file: &str) -> Option<u32> {
    let mut found = None;
    let mut at = Some(span);
    while let Some(s) = at {
        if s["file_name"].as_str() == Some(file) {
            found = s["line_start"].as_u64().map(|l| l as u32);
        }
        at = s["expansion"].get("span").filter(|x| x.is_object());
    }
    found
}

/// Reads what a candidate printed.
pub fn observation(stdout: &str) -> Observation {
    let mut seen = Observation::default();
    for line in stdout.lines() {
        if line == CALLING {
            seen.calling = true;
        } else if line == RETURNED {
            seen.returned = true;
        } else if let Some(json) = line.strip_prefix(OBSERVED) {
            if let Ok(o) = serde_json::from_str::<ObservedLine>(json) {
                seen.values.entry(o.label).or_insert(o.seen);
            }
        } else if let Some(json) = line.strip_prefix(PANICKED) {
            // The first panic is the call's (or the observation's, after it returned).
            if let (Ok(p), false, None) = (
                serde_json::from_str::<PanicLine>(json),
                seen.returned,
                &seen.panic,
            ) {
                seen.panic = Some((p.message, p.place));
            }
        }
    }
    seen
}

/// The probe target's source, and where each candidate is in it: (id, first line, last line).
pub fn render(candidates: &[Candidate]) -> (String, Vec<(String, u32, u32)>) {
    let mut text = HARNESS.to_string();
    let mut places = Vec::new();
    let mut line = text.lines().count() as u32;
    for c in candidates {
        let mut block = vec![
            String::new(),
            "#[test]".to_string(),
            format!("fn {}() {{", c.id),
            "    tt_start();".to_string(),
        ];
        // The call is the last statement (a doc example is all call).
        let call_at = match c.source {
            Source::Example(_) => 0,
            Source::Callable(_) | Source::Value(_) | Source::Compare(_) => {
                c.setup.len().saturating_sub(1)
            }
            // The constructor is the setup; every call after it counts.
            Source::Sequence(_) => 1,
        };
        // A doc example's lines go in as written: indenting them would change a string
        // literal that spans lines.
        let indent = if matches!(c.source, Source::Example(_)) {
            ""
        } else {
            "    "
        };
        for (i, s) in c.setup.iter().enumerate() {
            if i == call_at {
                block.push("    tt_calling();".into());
            }
            block.push(format!("{indent}{s}"));
        }
        block.push("    tt_returned();".into());
        block.extend(c.observe.iter().map(|s| format!("    {s}")));
        block.push("}".into());
        let from = line + 1;
        line += block.len() as u32;
        places.push((c.id.clone(), from, line));
        text.push_str(&block.join("\n"));
        text.push('\n');
    }
    (text, places)
}

/// The candidates' ids.
pub fn ids(candidates: &[Candidate]) -> BTreeSet<String> {
    candidates.iter().map(|c| c.id.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_in_macro_code_points_at_the_line_that_invoked_the_macro() {
        let span: serde_json::Value = serde_json::json!({
            "file_name": "tests/tt_probe_L1.rs", "line_start": 40, "is_primary": true,
            "expansion": {"span": {"file_name": "tests/tt_probe_L1.rs", "line_start": 212,
                                   "expansion": null}}
        });
        assert_eq!(line_in(&span, "tests/tt_probe_L1.rs"), Some(212));
        let elsewhere = serde_json::json!({"file_name": "src/lib.rs", "line_start": 3});
        assert_eq!(line_in(&elsewhere, "tests/tt_probe_L1.rs"), None);
    }

    #[test]
    fn the_first_panic_before_the_return_is_the_calls() {
        let out = "running 1 test\nTTPANIC {\"message\":\"index out of bounds\",\"place\":\"src/lib.rs:3\"}\nTTPANIC {\"message\":\"x\",\"place\":\"y\"}\n";
        let seen = observation(out);
        assert_eq!(
            seen.panic,
            Some(("index out of bounds".into(), "src/lib.rs:3".into()))
        );
        let out = "TTRET\nTTOBS {\"label\":\"value\",\"debug\":\"3\",\"eq\":true,\"display\":\"3\"}\nTTPANIC {\"message\":\"getter\",\"place\":\"src/lib.rs:9\"}\n";
        let seen = observation(out);
        assert!(seen.returned && seen.panic.is_none());
        assert_eq!(seen.values["value"].debug.as_deref(), Some("3"));
    }
}
