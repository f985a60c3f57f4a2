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

    /// This record with `earlier`'s lines added, file by file: a line is missing only where it
    /// is missing in both. What a rerun of the failed tests alone measured, added to the run it
    /// repeats, gives the layer's coverage.
    pub fn merged_with(&self, earlier: &CoverageRecord) -> CoverageRecord {
        let mut files = self.files.clone();
        for old in &earlier.files {
            match files.iter_mut().find(|f| f.path == old.path) {
                Some(f) => f.merge(old),
                None => files.push(old.clone()),
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        CoverageRecord {
            format: self.format.clone(),
            scope: self.scope.clone(),
            files,
        }
    }

    /// Line coverage over the files for which `in_scope` holds, in percent (None: no lines).
    pub fn line_percent(&self, in_scope: impl Fn(&str) -> bool) -> Option<f64> {
        let (total, covered) = self
            .files
            .iter()
            .filter(|f| in_scope(&f.path))
            .fold((0, 0), |(t, c), f| (t + f.lines_total, c + f.lines_covered));
        (total > 0).then(|| 100.0 * covered as f64 / total as f64)
    }
}

impl CoverageFile {
    fn merge(&mut self, other: &CoverageFile) {
        let total = self.lines_total.max(other.lines_total);
        self.missing_lines
            .retain(|l| other.missing_lines.contains(l));
        for l in &other.executed_lines {
            if !self.executed_lines.contains(l) {
                self.executed_lines.push(*l);
            }
        }
        self.executed_lines.sort_unstable();
        self.partial_lines
            .retain(|l| other.partial_lines.contains(l) || !other.executed_lines.contains(l));
        self.lines_total = total;
        self.lines_covered = total.saturating_sub(self.missing_lines.len());
        self.line_percent = (total > 0).then(|| 100.0 * self.lines_covered as f64 / total as f64);
        if self.branches_total == other.branches_total {
            self.branches_covered = self.branches_covered.max(other.branches_covered);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(total: usize, missing: &[u32]) -> CoverageFile {
        CoverageFile {
            path: "m.py".into(),
            lines_total: total,
            lines_covered: total - missing.len(),
            line_percent: Some(100.0 * (total - missing.len()) as f64 / total as f64),
            missing_lines: missing.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn a_reruns_coverage_adds_to_the_run_it_repeats() {
        let record = |f: CoverageFile| CoverageRecord {
            format: "coverage.py".into(),
            scope: Vec::new(),
            files: vec![f],
        };
        let rerun = record(file(10, &[3, 4, 5, 6]));
        let earlier = record(file(10, &[6]));
        let merged = rerun.merged_with(&earlier);
        assert_eq!(merged.files[0].missing_lines, [6]);
        assert_eq!(merged.files[0].lines_covered, 9);
        assert_eq!(merged.line_percent(|_| true), Some(90.0));
    }
}
