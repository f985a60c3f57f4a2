//! What every test-result and coverage parser produces: the shapes the executor and analyst read,
//! whatever tool wrote the raw report.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A raw report that could not be read: the file, the line when the format has lines (LCOV, Go
/// profiles), and the problem.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {}{problem}", path.display(), line.map(|n| format!("line {n}: ")).unwrap_or_default())]
pub struct ReportParseError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub problem: String,
}

impl ReportParseError {
    pub fn new(path: &Path, problem: impl ToString) -> Self {
        ReportParseError {
            path: path.to_path_buf(),
            line: None,
            problem: problem.to_string(),
        }
    }

    pub fn at_line(path: &Path, line: usize, problem: impl ToString) -> Self {
        ReportParseError {
            line: Some(line),
            ..ReportParseError::new(path, problem)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    Passed,
    Failed,
    Error,
    Skipped,
}

/// One test case as the framework reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestCase {
    /// Stable id: `<classname>::<name>` (or the name alone when there is no class).
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub status: TestStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// The failure/error/skip message attribute (one line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The failure body (traceback), truncated to a few KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl TestCase {
    /// A case known only by its id and status (a parser fills in the rest).
    pub fn named(id: &str, status: TestStatus) -> Self {
        TestCase {
            id: id.into(),
            name: id.into(),
            classname: None,
            file: None,
            line: None,
            status,
            duration_s: None,
            message: None,
            detail: None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TestTotals {
    pub total: usize,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    pub skipped: usize,
}

impl TestTotals {
    pub fn of(cases: &[TestCase]) -> Self {
        let mut t = TestTotals {
            total: cases.len(),
            ..Default::default()
        };
        for c in cases {
            match c.status {
                TestStatus::Passed => t.passed += 1,
                TestStatus::Failed => t.failed += 1,
                TestStatus::Error => t.errors += 1,
                TestStatus::Skipped => t.skipped += 1,
            }
        }
        t
    }

    /// passed / (passed + failed + errors); skipped tests do not count. None when nothing ran.
    pub fn pass_rate(&self) -> Option<f64> {
        let ran = self.passed + self.failed + self.errors;
        (ran > 0).then(|| self.passed as f64 / ran as f64)
    }
}

/// Line and branch coverage of one source file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileCoverage {
    /// As the tool wrote it (relative or absolute); see [`CoverageReport::relative_to`].
    pub path: String,
    pub lines_total: usize,
    pub lines_covered: usize,
    /// Executable lines never run, ascending.
    pub missing_lines: Vec<u32>,
    pub branches_total: usize,
    pub branches_covered: usize,
    /// Executable lines that ran, ascending; empty when the tool does not list them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub executed_lines: Vec<u32>,
    /// Lines that ran with a branch never taken, ascending; empty without branch data.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partial_lines: Vec<u32>,
    /// `[from, to]` arcs never taken, when the tool lists them (coverage.py): what lets the
    /// branch counts of shards of one run be merged exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_arcs: Vec<[i64; 2]>,
}

impl FileCoverage {
    pub fn line_percent(&self) -> Option<f64> {
        (self.lines_total > 0).then(|| 100.0 * self.lines_covered as f64 / self.lines_total as f64)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CoverageReport {
    /// Which tool format it came from: `lcov`, `cobertura`, `coveragepy-json`.
    pub format: String,
    pub files: Vec<FileCoverage>,
}

impl CoverageReport {
    /// Line coverage over the files `keep` accepts, in percent; None when no line counts.
    pub fn line_percent(&self, keep: impl Fn(&str) -> bool) -> Option<f64> {
        let (total, covered) = self
            .files
            .iter()
            .filter(|f| keep(&f.path))
            .fold((0, 0), |(t, c), f| (t + f.lines_total, c + f.lines_covered));
        (total > 0).then(|| 100.0 * covered as f64 / total as f64)
    }

    /// Branch coverage over the files `keep` accepts, in percent; None when no branch counts.
    pub fn branch_percent(&self, keep: impl Fn(&str) -> bool) -> Option<f64> {
        let (total, covered) = self
            .files
            .iter()
            .filter(|f| keep(&f.path))
            .fold((0, 0), |(t, c), f| {
                (t + f.branches_total, c + f.branches_covered)
            });
        (total > 0).then(|| 100.0 * covered as f64 / total as f64)
    }

    /// Takes out the files outside the project (an absolute path, or one that climbs out with
    /// `..`) — a report naming /etc/passwd or ../other must not move the project's figures — and
    /// returns their paths.
    pub fn drop_outside(&mut self) -> Vec<String> {
        let outside =
            |p: &str| p.starts_with('/') || p == ".." || p.starts_with("../") || p.contains("/../");
        let dropped = self
            .files
            .iter()
            .filter(|f| outside(&f.path))
            .map(|f| f.path.clone())
            .collect();
        self.files.retain(|f| !outside(&f.path));
        dropped
    }

    /// Rewrites absolute paths under `root` to root-relative ones (llvm-cov and tarpaulin write
    /// absolute paths; coverage.py and node relative ones).
    pub fn relative_to(mut self, root: &Path) -> Self {
        let root = root.to_string_lossy().trim_end_matches('/').to_string();
        for f in &mut self.files {
            if let Some(rest) = f.path.strip_prefix(&format!("{root}/")) {
                f.path = rest.to_string();
            }
        }
        self
    }
}

/// A real tool report kept in tests/fixtures/reports, for the parsers' tests.
#[cfg(test)]
pub(crate) fn fixture_report(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reports")
        .join(name)
}
