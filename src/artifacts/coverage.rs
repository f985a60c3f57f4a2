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
}
