//! coverage.py's `coverage json` report (meta.format 2 or 3): per-file summaries and totals.
//! Line counts are statements (what `coverage report` shows in Stmts/Miss); branch counts are 0
//! when the run had no `--branch`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::testing::report::{CoverageReport, FileCoverage, ReportParseError};

const FORMATS: [u64; 2] = [2, 3];

#[derive(Deserialize)]
struct Report {
    files: BTreeMap<String, FileEntry>,
    #[serde(default)]
    totals: Option<Summary>,
}

#[derive(Deserialize)]
struct FileEntry {
    summary: Summary,
    #[serde(default)]
    missing_lines: Vec<u32>,
    #[serde(default)]
    executed_lines: Vec<u32>,
    /// `[from, to]` arcs never taken (`--branch` runs).
    #[serde(default)]
    missing_branches: Vec<[i64; 2]>,
}

#[derive(Deserialize)]
struct Summary {
    num_statements: usize,
    covered_lines: usize,
    #[serde(default)]
    num_branches: usize,
    #[serde(default)]
    covered_branches: usize,
}

/// Reads a `coverage json` report.
pub fn parse_coveragepy_json(path: &Path) -> Result<CoverageReport, ReportParseError> {
    parse_coveragepy_json_str(&read(path)?, path)
}

/// Parses `coverage json` text; `path` only names the source in errors.
pub fn parse_coveragepy_json_str(
    text: &str,
    path: &Path,
) -> Result<CoverageReport, ReportParseError> {
    let report = decode(text, path)?;
    let files: Vec<FileCoverage> = report
        .files
        .into_iter()
        .map(|(file, entry)| file_coverage(file, entry))
        .collect();
    // Counts that cannot be (a hand-edited or spliced report) would make coverage above 100 %.
    for f in &files {
        if f.lines_covered > f.lines_total || f.branches_covered > f.branches_total {
            return Err(ReportParseError::new(
                path,
                format!(
                    "files.{}.summary: covered counts above the totals (lines {}/{}, branches {}/{})",
                    f.path, f.lines_covered, f.lines_total, f.branches_covered, f.branches_total
                ),
            ));
        }
    }
    Ok(CoverageReport {
        format: "coveragepy-json".into(),
        files,
    })
}

/// Line coverage as coverage.py itself reports it: 100 * totals.covered_lines /
/// totals.num_statements (100 when there are no statements, as coverage.py says).
pub fn totals_line_percent(path: &Path) -> Result<f64, ReportParseError> {
    totals_line_percent_str(&read(path)?, path)
}

/// [`totals_line_percent`] of report text.
pub fn totals_line_percent_str(text: &str, path: &Path) -> Result<f64, ReportParseError> {
    let totals = decode(text, path)?
        .totals
        .ok_or_else(|| ReportParseError::new(path, "no totals object"))?;
    Ok(match totals.num_statements {
        0 => 100.0,
        n => 100.0 * totals.covered_lines as f64 / n as f64,
    })
}

fn read(path: &Path) -> Result<String, ReportParseError> {
    let bytes = crate::util::read_regular(path)
        .map_err(|e| ReportParseError::new(path, format!("cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|e| ReportParseError::new(path, format!("cannot read: {e}")))
}

/// JSON -> checked format -> typed report, with the failing field's path in errors.
fn decode(text: &str, path: &Path) -> Result<Report, ReportParseError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| ReportParseError::new(path, format!("not JSON: {e}")))?;
    check_format(&value).map_err(|p| ReportParseError::new(path, p))?;
    serde_path_to_error::deserialize(value).map_err(|e| {
        ReportParseError::new(
            path,
            format!("not a coverage.py JSON report: {}: {}", e.path(), e.inner()),
        )
    })
}

/// Why a JSON document is not a coverage.py report this reader knows.
#[derive(Debug, thiserror::Error)]
enum FormatProblem {
    #[error("no meta.format: not a coverage.py JSON report")]
    NoFormat,
    #[error("unsupported coverage.py JSON meta.format {0} (this reader knows 2 and 3)")]
    Unsupported(Value),
}

fn check_format(value: &Value) -> Result<(), FormatProblem> {
    let format = value
        .get("meta")
        .and_then(|m| m.get("format"))
        .ok_or(FormatProblem::NoFormat)?;
    match format.as_u64() {
        Some(n) if FORMATS.contains(&n) => Ok(()),
        _ => Err(FormatProblem::Unsupported(format.clone())),
    }
}

fn file_coverage(path: String, entry: FileEntry) -> FileCoverage {
    let mut missing_lines = entry.missing_lines;
    missing_lines.sort_unstable();
    missing_lines.dedup();
    let mut executed_lines = entry.executed_lines;
    executed_lines.sort_unstable();
    executed_lines.dedup();
    // A line that ran with an arc out of it never taken.
    let mut partial_lines: Vec<u32> = entry
        .missing_branches
        .iter()
        .filter_map(|[from, _]| u32::try_from(*from).ok())
        .filter(|l| executed_lines.binary_search(l).is_ok())
        .collect();
    partial_lines.sort_unstable();
    partial_lines.dedup();
    let s = entry.summary;
    let mut missing_arcs = entry.missing_branches;
    missing_arcs.sort_unstable();
    missing_arcs.dedup();
    FileCoverage {
        missing_arcs,
        executed_lines,
        partial_lines,
        path,
        lines_total: s.num_statements,
        lines_covered: s.covered_lines,
        missing_lines,
        branches_total: s.num_branches,
        branches_covered: s.covered_branches,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Found by fuzzing (fuzz/regressions/coverage-json.txt): a summary whose duplicated key
    /// lowered num_statements below covered_lines.
    #[test]
    fn covered_counts_above_the_totals_are_an_error() {
        let text = r#"{"meta": {"format": 3}, "files": {"a.py": {"summary": {"covered_lines": 9, "num_statements": 9, "num_statements": 0}}}}"#;
        let e = parse_coveragepy_json_str(text, Path::new("cov.json")).unwrap_err();
        assert!(
            e.problem
                .contains("files.a.py.summary: covered counts above"),
            "{e}"
        );
    }

    fn fixture(name: &str) -> PathBuf {
        crate::testing::report::fixture_report(name)
    }

    /// Every JSON coverage.py report in the fixtures (the other helper's too, when present).
    fn json_fixtures() -> Vec<PathBuf> {
        let dir = fixture("");
        let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                name.starts_with("coveragepy") && name.ends_with(".json")
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn branch_run_sample() {
        let r = parse_coveragepy_json(&fixture("coveragepy-b.json")).unwrap();
        assert_eq!(r.format, "coveragepy-json");
        let paths: Vec<&str> = r.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["pkg/__init__.py", "pkg/shapes.py", "test_shapes.py"]
        );
        let shapes = &r.files[1];
        assert_eq!((shapes.lines_total, shapes.lines_covered), (11, 7));
        assert_eq!(shapes.missing_lines, vec![14, 15, 16, 17]);
        assert_eq!((shapes.branches_total, shapes.branches_covered), (8, 4));
        assert_eq!(
            r.files[0],
            FileCoverage {
                path: "pkg/__init__.py".into(),
                ..Default::default()
            }
        );
    }

    #[test]
    fn run_without_branch_has_zero_branches() {
        let r = parse_coveragepy_json(&fixture("coveragepy-nobranch.json")).unwrap();
        assert!(r
            .files
            .iter()
            .all(|f| f.branches_total == 0 && f.branches_covered == 0));
        assert_eq!(r.line_percent(|_| true), Some(80.0));
        assert_eq!(r.branch_percent(|_| true), None);
    }

    #[test]
    fn json_and_lcov_of_the_same_run_agree() {
        let pairs = [
            ("coveragepy-b.json", "coveragepy-b.lcov"),
            ("coveragepy.json", "coveragepy-small.lcov"),
        ];
        for (json, lcov) in pairs {
            let mut json = parse_coveragepy_json(&fixture(json)).unwrap();
            let lcov = crate::testing::lcov::parse_lcov(&fixture(lcov)).unwrap();
            // LCOV names branches by block, not by arc: only coverage.py's JSON lists the arcs.
            for f in &mut json.files {
                f.missing_arcs.clear();
            }
            assert_eq!(json.files, lcov.files);
        }
    }

    #[test]
    fn file_sums_match_the_reports_own_totals() {
        let fixtures = json_fixtures();
        assert!(fixtures.len() >= 2, "{fixtures:?}");
        for path in fixtures {
            let r = parse_coveragepy_json(&path).unwrap();
            let ours = r.line_percent(|_| true).unwrap_or(100.0);
            let theirs = totals_line_percent(&path).unwrap();
            assert!((ours - theirs).abs() < 0.1, "{path:?}: {ours} vs {theirs}");
        }
        let p = totals_line_percent(&fixture("coveragepy-b.json")).unwrap();
        assert!((p - 80.0).abs() < 1e-9, "{p}");
    }

    fn parse(text: &str) -> Result<CoverageReport, ReportParseError> {
        parse_coveragepy_json_str(text, Path::new("cov.json"))
    }

    #[test]
    fn format_two_is_read_and_others_refused() {
        let file = r#""a.py": {"summary": {"num_statements": 4, "covered_lines": 3}, "missing_lines": [9, 2, 9]}"#;
        let v2 = format!(r#"{{"meta": {{"format": 2}}, "files": {{{file}}}}}"#);
        let r = parse(&v2).unwrap();
        assert_eq!((r.files[0].lines_total, r.files[0].lines_covered), (4, 3));
        assert_eq!(r.files[0].missing_lines, vec![2, 9]);
        let e = parse(r#"{"meta": {"format": 1}, "files": {}}"#).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cov.json: unsupported coverage.py JSON meta.format 1"),
            "{e}"
        );
        let e = parse(r#"{"meta": {"format": "3"}, "files": {}}"#).unwrap_err();
        assert!(e.problem.contains("unsupported"), "{e}");
    }

    #[test]
    fn malformed_reports_are_errors() {
        assert!(parse("").unwrap_err().problem.starts_with("not JSON"));
        assert!(parse("[1, 2]")
            .unwrap_err()
            .problem
            .contains("no meta.format"));
        let e = parse(
            r#"{"meta": {"format": 3}, "files": {"a.py": {"summary": {"covered_lines": 1}}}}"#,
        )
        .unwrap_err();
        assert!(
            e.problem.contains("files.a.py.summary") && e.problem.contains("num_statements"),
            "{e}"
        );
        let e = totals_line_percent_str(
            r#"{"meta": {"format": 3}, "files": {}}"#,
            Path::new("c.json"),
        )
        .unwrap_err();
        assert!(e.problem.contains("no totals"), "{e}");
        assert!(parse_coveragepy_json(Path::new("/nonexistent.json")).is_err());
    }
}
