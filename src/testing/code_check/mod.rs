//! L0 code validation: whether a project's *code* (not its tests) is sound enough to test, run
//! before and during a test-fix loop where an agent edits code. It answers, per changed file:
//! does it compile or import, does it import modules or names that exist nowhere (hallucinated),
//! is a function a placeholder, does production code import test doubles (mock leakage), and what
//! the project's type checker says when one is installed.
//!
//! Python is checked by `ttl0.py` (shipped inside the binary), run with the project's interpreter
//! in the sandbox: it compiles every source file, reads the changed files' syntax trees, and
//! imports each changed module in a child of its own. Rust, JavaScript/TypeScript and Go get the
//! text checks of `text.rs` and whatever their own cheap tools say (`node --check`, `tsc`,
//! `gofmt -e`); what is not checked is said in `notes`.
//!
//! Critical issues block the caller's loop; warnings (TODO comments, type errors) do not.

pub mod report;
pub mod text;

use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::sandbox::Sandbox;
use crate::testing::exec::{Exec, ExecError};
use crate::testing::framework::Family;
use crate::testing::toolchain::Toolchain;

/// What to check.
pub struct CheckInput<'a> {
    /// A copy of the project's code (read-only for the check).
    pub root: &'a Path,
    /// Root-relative files whose code is new or changed: placeholders, imports and mock leakage
    /// are judged here; compile covers every project source file.
    pub changed: &'a [String],
    pub family: Family,
    /// `.interpreter` is the Python to use.
    pub tools: &'a Toolchain,
    pub sandbox: Option<&'a Sandbox>,
    /// A writable folder of the check's own (the sandbox lets its children write there).
    pub scratch: &'a Path,
    pub deadline: Instant,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CodeCheck {
    pub issues: Vec<CodeIssue>,
    /// What ran, one line per check (`compile: 42 Python files`).
    pub checked: Vec<String>,
    /// The type checker that ran (`mypy`, `pyright`, `tsc`), if any.
    pub type_checker: Option<String>,
    /// What could not be checked and why.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeIssue {
    pub severity: Severity,
    pub kind: IssueKind,
    /// Root-relative.
    pub file: String,
    pub line: Option<u32>,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Blocks the caller's loop.
    Critical,
    Warning,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueKind {
    DoesNotCompile,
    DoesNotImport,
    HallucinatedImport,
    Placeholder,
    MockLeakage,
    TypeError,
}

impl IssueKind {
    /// How the report names it.
    pub fn label(self) -> &'static str {
        match self {
            IssueKind::DoesNotCompile => "does not compile",
            IssueKind::DoesNotImport => "does not import",
            IssueKind::HallucinatedImport => "hallucinated import",
            IssueKind::Placeholder => "placeholder",
            IssueKind::MockLeakage => "mock leakage",
            IssueKind::TypeError => "type error",
        }
    }
}

impl CodeCheck {
    /// The issues that block the caller's loop.
    pub fn critical(&self) -> Vec<&CodeIssue> {
        self.issues
            .iter()
            .filter(|i| i.severity == Severity::Critical)
            .collect()
    }

    /// A `## L0 code validation` section: a table per severity, then what was checked and what
    /// was not.
    pub fn markdown(&self) -> String {
        report::markdown(self)
    }

    pub fn push(
        &mut self,
        severity: Severity,
        kind: IssueKind,
        file: &str,
        line: Option<u32>,
        message: String,
    ) {
        self.issues.push(CodeIssue {
            severity,
            kind,
            file: file.to_string(),
            line,
            message,
        });
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CodeCheckError {
    #[error("cannot write {}: {cause}", path.display())]
    Write {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("the code check's {program}: {cause}")]
    Exec { program: String, cause: ExecError },
    #[error("the code check's {program} gave no result: {problem}")]
    NoResult { program: String, problem: String },
}

/// What one family checks of the changed files (its compiler, its helper, its tools).
pub type FamilyCheck<'f> =
    &'f dyn Fn(&CheckInput, &[String], &mut CodeCheck) -> Result<(), CodeCheckError>;

/// Checks the project's code: `family_check` (the family's own checks, `family::code_check`
/// passes them), then the text checks every family gets. Tools that are missing or time out are
/// notes, not errors; an error is a check that could not run at all (its scratch file, its
/// helper).
pub fn check(input: &CheckInput, family_check: FamilyCheck) -> Result<CodeCheck, CodeCheckError> {
    // Children run in the root: every path handed to them must not depend on our own cwd.
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let (root, scratch) = (absolute(input.root), absolute(input.scratch));
    let input = &CheckInput {
        root: &root,
        scratch: &scratch,
        ..*input
    };
    let mut out = CodeCheck::default();
    let changed = changed_files(input, &mut out);
    family_check(input, &changed, &mut out)?;
    if input.family != Family::Python {
        let python: Vec<&String> = changed.iter().filter(|f| f.ends_with(".py")).collect();
        if !python.is_empty() {
            out.notes.push(format!(
                "{} changed Python files are not checked: the project's framework family is not Python",
                python.len()
            ));
        }
    }
    text::check(input.root, &changed, &mut out);
    out.issues.sort_by(|a, b| {
        (a.severity, &a.file, a.line, a.kind).cmp(&(b.severity, &b.file, b.line, b.kind))
    });
    out.issues.dedup();
    Ok(out)
}

/// The changed files that exist as regular files inside the root (a deleted file has no code).
fn changed_files(input: &CheckInput, out: &mut CodeCheck) -> Vec<String> {
    let mut files = Vec::new();
    for rel in input.changed {
        let rel = rel.trim_start_matches("./");
        let inside = Path::new(rel)
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
        if !inside {
            out.notes.push(format!(
                "{rel} is not a path inside the project: not checked"
            ));
            continue;
        }
        let is_file = std::fs::symlink_metadata(input.root.join(rel)).is_ok_and(|m| m.is_file());
        if is_file && !files.iter().any(|f| f == rel) {
            files.push(rel.to_string());
        }
    }
    files
}

/// How the check's children run: in the sandbox, in the project's copy, until the deadline.
pub fn exec<'a>(input: &CheckInput<'a>, env: Vec<(String, String)>) -> Exec<'a> {
    Exec {
        sandbox: input.sandbox,
        cwd: input.root.to_path_buf(),
        env,
        deadline: input.deadline,
    }
}

/// A root-relative form of a path a tool printed (relative to the root, or absolute).
pub fn relative(root: &Path, printed: &str) -> String {
    let printed = printed.trim();
    let path = Path::new(printed);
    let rel = if path.is_absolute() {
        path.strip_prefix(root)
            .or_else(|_| {
                root.canonicalize()
                    .map_err(|_| ())
                    .and_then(|r| path.strip_prefix(r).map_err(|_| ()))
            })
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| printed.to_string())
    } else {
        printed.to_string()
    };
    rel.trim_start_matches("./").to_string()
}

/// A tool that could not run becomes a note saying why.
pub fn tool_note(what: &str, err: &ExecError) -> String {
    match err {
        ExecError::NotFound { program, .. } => {
            format!("{what}: not checked ({program} is not installed)")
        }
        ExecError::TimedOut { .. } => format!("{what}: not checked (no time left: {err})"),
        other => format!("{what}: not checked ({other})"),
    }
}
