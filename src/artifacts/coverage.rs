//! `results/coverage-NNN.json`: per-file line coverage of the files in scope, with the lines
//! no test reached.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CoverageRecord {
    /// The coverage tool's format (`coverage.py`, `lcov`, …).
    pub format: String,
    /// The files coverage is judged on; empty for the whole project.
    pub scope: Vec<String>,
    pub files: Vec<CoverageFile>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CoverageFile {
    pub path: String,
    pub lines_total: usize,
    pub lines_covered: usize,
    /// None for a file with no code lines.
    pub line_percent: Option<f64>,
    pub missing_lines: Vec<u32>,
    pub branches_total: usize,
    pub branches_covered: usize,
    /// Lines that ran (for the HTML report's source view); empty in older records and for tools
    /// that do not list them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub executed_lines: Vec<u32>,
    /// Lines that ran with a branch never taken; empty without branch data.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partial_lines: Vec<u32>,
}

impl CoverageRecord {
    /// Per-file coverage of the files in scope (all files when the scope is empty), with the
    /// missing lines.
    pub fn of(report: &crate::testing::report::CoverageReport, scope: &[String]) -> CoverageRecord {
        let files = report
            .files
            .iter()
            .filter(|f| scope.is_empty() || scope.contains(&f.path))
            .map(|f| CoverageFile {
                path: f.path.clone(),
                lines_total: f.lines_total,
                lines_covered: f.lines_covered,
                line_percent: f.line_percent(),
                missing_lines: f.missing_lines.clone(),
                branches_total: f.branches_total,
                branches_covered: f.branches_covered,
                executed_lines: f.executed_lines.clone(),
                partial_lines: f.partial_lines.clone(),
            })
            .collect();
        CoverageRecord {
            format: report.format.clone(),
            scope: scope.to_vec(),
            files,
        }
    }
}
