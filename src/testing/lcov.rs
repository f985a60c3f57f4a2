//! LCOV tracefiles (`lcov.info`) as coverage.py, node, jest, vitest, cargo-llvm-cov and tarpaulin
//! write them. A small line-based reader: BRDA fields stay strings (coverage.py writes free text
//! such as `jump to line 3` in the branch field), `-` as a taken count means 0, and records for
//! the same `SF:` are merged.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::report::{CoverageReport, FileCoverage, ReportParseError};

/// Line and branch hits gathered for one source file, over every record that names it.
#[derive(Default)]
struct FileAcc {
    /// line -> hits (summed over records).
    lines: BTreeMap<u32, u64>,
    /// (line, block, branch) -> times taken (summed over records).
    branches: BTreeMap<(u32, String, String), u64>,
    /// Largest LF/LH of the records without DA lines.
    lf_lh: Option<(usize, usize)>,
    /// Largest BRF/BRH of the records without BRDA lines.
    brf_brh: Option<(usize, usize)>,
}

/// The record being read: summary counts are kept per record, since they only stand in for
/// the record's own DA/BRDA lines.
#[derive(Default)]
struct Open {
    path: String,
    start_line: usize,
    has_da: bool,
    has_brda: bool,
    lf: Option<usize>,
    lh: Option<usize>,
    brf: Option<usize>,
    brh: Option<usize>,
}

/// What is wrong with one line of a tracefile (its number goes into the [`ReportParseError`]).
#[derive(Debug, thiserror::Error)]
enum LcovProblem {
    #[error("SF:{path} while the record for {open} (line {opened_at}) has no end_of_record")]
    Unclosed {
        path: String,
        open: String,
        opened_at: usize,
    },
    #[error("SF: without a path")]
    NoPath,
    #[error("{tag}: before any SF: record")]
    OutsideRecord { tag: String },
    #[error("end_of_record without an SF: record")]
    EndOutsideRecord,
    #[error("no file for {0}")]
    NoFile(String),
    #[error("DA without a hit count")]
    NoHitCount,
    #[error("BRDA needs 4 fields")]
    BrdaFields,
    #[error("{what} is not a number: {value:?}")]
    NotANumber { what: &'static str, value: String },
}

#[derive(Default)]
struct Reader {
    order: Vec<String>,
    files: HashMap<String, FileAcc>,
    open: Option<Open>,
}

/// Reads an LCOV tracefile.
/// Reads an LCOV tracefile a line at a time (memory does not grow with the file).
pub fn parse_lcov(path: &Path) -> Result<CoverageReport, ReportParseError> {
    use std::io::BufRead;
    let source = super::junit::open_report(path)?;
    let lines = source
        .lines()
        .map(|l| l.map_err(|e| ReportParseError::new(path, format!("cannot read: {e}"))));
    parse_lines(lines, path)
}

/// Parses LCOV text; `path` only names the source in errors.
pub fn parse_lcov_str(text: &str, path: &Path) -> Result<CoverageReport, ReportParseError> {
    parse_lines(text.lines().map(|l| Ok(l.to_string())), path)
}

fn parse_lines(
    lines: impl Iterator<Item = Result<String, ReportParseError>>,
    path: &Path,
) -> Result<CoverageReport, ReportParseError> {
    let mut reader = Reader::default();
    for (i, raw) in lines.enumerate() {
        let raw = raw?;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        reader
            .line(line, i + 1)
            .map_err(|problem| ReportParseError::at_line(path, i + 1, problem))?;
    }
    if let Some(open) = &reader.open {
        return Err(ReportParseError::new(
            path,
            format!(
                "truncated: the record for {} opened at line {} has no end_of_record",
                open.path, open.start_line
            ),
        ));
    }
    if reader.order.is_empty() {
        return Err(ReportParseError::new(
            path,
            "no coverage records (no SF: line)",
        ));
    }
    Ok(reader.finish())
}

impl Reader {
    fn line(&mut self, line: &str, line_no: usize) -> Result<(), LcovProblem> {
        let (tag, value) = line.split_once(':').unwrap_or((line, ""));
        match tag {
            "SF" => self.start(value, line_no),
            "end_of_record" => self.end(),
            "TN" | "VER" => Ok(()), // test name, version: allowed outside records
            _ => self.data(tag, value),
        }
    }

    fn start(&mut self, value: &str, line_no: usize) -> Result<(), LcovProblem> {
        if let Some(open) = &self.open {
            return Err(LcovProblem::Unclosed {
                path: value.to_string(),
                open: open.path.clone(),
                opened_at: open.start_line,
            });
        }
        if value.is_empty() {
            return Err(LcovProblem::NoPath);
        }
        if !self.files.contains_key(value) {
            self.order.push(value.to_string());
            self.files.insert(value.to_string(), FileAcc::default());
        }
        self.open = Some(Open {
            path: value.to_string(),
            start_line: line_no,
            ..Default::default()
        });
        Ok(())
    }

    fn data(&mut self, tag: &str, value: &str) -> Result<(), LcovProblem> {
        let open = self
            .open
            .as_mut()
            .ok_or_else(|| LcovProblem::OutsideRecord { tag: tag.into() })?;
        let acc = self
            .files
            .get_mut(&open.path)
            .ok_or_else(|| LcovProblem::NoFile(open.path.clone()))?;
        match tag {
            "DA" => {
                let (line, hits) = parse_da(value)?;
                let h = acc.lines.entry(line).or_default();
                *h = h.saturating_add(hits);
                open.has_da = true;
            }
            "BRDA" => {
                let (key, taken) = parse_brda(value)?;
                let t = acc.branches.entry(key).or_default();
                *t = t.saturating_add(taken);
                open.has_brda = true;
            }
            "LF" => open.lf = Some(number(value, "LF count")?),
            "LH" => open.lh = Some(number(value, "LH count")?),
            "BRF" => open.brf = Some(number(value, "BRF count")?),
            "BRH" => open.brh = Some(number(value, "BRH count")?),
            _ => {} // function records and unknown tags: not reported
        }
        Ok(())
    }

    fn end(&mut self) -> Result<(), LcovProblem> {
        let open = self.open.take().ok_or(LcovProblem::EndOutsideRecord)?;
        let acc = self
            .files
            .get_mut(&open.path)
            .ok_or_else(|| LcovProblem::NoFile(open.path.clone()))?;
        if !open.has_da {
            acc.lf_lh = max_pair(acc.lf_lh, open.lf, open.lh);
        }
        if !open.has_brda {
            acc.brf_brh = max_pair(acc.brf_brh, open.brf, open.brh);
        }
        Ok(())
    }

    fn finish(mut self) -> CoverageReport {
        let files = self
            .order
            .iter()
            .filter_map(|p| self.files.remove(p).map(|acc| file_coverage(p, acc)))
            .collect();
        CoverageReport {
            format: "lcov".into(),
            files,
        }
    }
}

/// DA lines win; LF/LH only stand in when no record of the file had any.
fn file_coverage(path: &str, acc: FileAcc) -> FileCoverage {
    let (lines_total, lines_covered) = if acc.lines.is_empty() {
        acc.lf_lh.unwrap_or((0, 0))
    } else {
        (
            acc.lines.len(),
            acc.lines.values().filter(|&&h| h > 0).count(),
        )
    };
    let (branches_total, branches_covered) = if acc.branches.is_empty() {
        acc.brf_brh.unwrap_or((0, 0))
    } else {
        (
            acc.branches.len(),
            acc.branches.values().filter(|&&t| t > 0).count(),
        )
    };
    let executed_lines: Vec<u32> = acc
        .lines
        .iter()
        .filter(|(_, &h)| h > 0)
        .map(|(&l, _)| l)
        .collect();
    let mut partial_lines: Vec<u32> = acc
        .branches
        .iter()
        .filter(|(_, &taken)| taken == 0)
        .map(|((l, _, _), _)| *l)
        .filter(|l| executed_lines.binary_search(l).is_ok())
        .collect();
    partial_lines.dedup();
    FileCoverage {
        missing_arcs: Vec::new(),
        executed_lines,
        partial_lines,
        path: path.to_string(),
        lines_total,
        lines_covered,
        missing_lines: acc
            .lines
            .iter()
            .filter(|(_, &h)| h == 0)
            .map(|(&l, _)| l)
            .collect(),
        branches_total,
        branches_covered,
    }
}

/// A summary pair (found, hit) from one record, kept when larger than what earlier records said.
fn max_pair(
    prev: Option<(usize, usize)>,
    found: Option<usize>,
    hit: Option<usize>,
) -> Option<(usize, usize)> {
    let found = found?;
    let hit = hit.unwrap_or(0).min(found);
    match prev {
        Some((f, h)) => Some((f.max(found), h.max(hit))),
        None => Some((found, hit)),
    }
}

/// `DA:<line>,<hits>[,<checksum>]`
fn parse_da(value: &str) -> Result<(u32, u64), LcovProblem> {
    let mut parts = value.split(',');
    let line = number(parts.next().unwrap_or(""), "DA line number")?;
    let hits = number(parts.next().ok_or(LcovProblem::NoHitCount)?, "DA hit count")?;
    Ok((line, hits))
}

/// `BRDA:<line>,<block>,<branch>,<taken>`; the branch may be free text with commas, taken may be `-`.
fn parse_brda(value: &str) -> Result<((u32, String, String), u64), LcovProblem> {
    let (line, rest) = value.split_once(',').ok_or(LcovProblem::BrdaFields)?;
    let (block, rest) = rest.split_once(',').ok_or(LcovProblem::BrdaFields)?;
    let (branch, taken) = rest.rsplit_once(',').ok_or(LcovProblem::BrdaFields)?;
    let line = number(line, "BRDA line number")?;
    let taken = match taken.trim() {
        "-" => 0,
        t => number(t, "BRDA taken count")?,
    };
    Ok(((line, block.trim().to_string(), branch.to_string()), taken))
}

fn number<T: std::str::FromStr>(field: &str, what: &'static str) -> Result<T, LcovProblem> {
    field.trim().parse().map_err(|_| LcovProblem::NotANumber {
        what,
        value: field.trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(name: &str) -> PathBuf {
        crate::testing::report::fixture_report(name)
    }

    /// (path, lines_total, lines_covered, missing, branches_total, branches_covered)
    type Expect<'a> = (&'a str, usize, usize, &'a [u32], usize, usize);

    fn check(name: &str, expect: &[Expect]) {
        let report = parse_lcov(&fixture(name)).unwrap();
        assert_eq!(report.format, "lcov");
        let got: Vec<Expect> = report
            .files
            .iter()
            .map(|f| {
                let m = f.missing_lines.as_slice();
                (
                    f.path.as_str(),
                    f.lines_total,
                    f.lines_covered,
                    m,
                    f.branches_total,
                    f.branches_covered,
                )
            })
            .collect();
        assert_eq!(got, expect, "{name}");
    }

    #[test]
    fn coveragepy_sample() {
        check(
            "coveragepy.lcov",
            &[
                ("calc.py", 8, 7, &[9], 4, 4),
                ("test_calc.py", 7, 7, &[], 8, 7),
            ],
        );
    }

    #[test]
    fn coveragepy_sample_with_dash_taken_and_empty_record() {
        check(
            "coveragepy-b.lcov",
            &[
                ("pkg/__init__.py", 0, 0, &[], 0, 0),
                ("pkg/shapes.py", 11, 7, &[14, 15, 16, 17], 8, 4),
                ("test_shapes.py", 9, 9, &[], 0, 0),
            ],
        );
    }

    #[test]
    fn coveragepy_small_sample() {
        check(
            "coveragepy-small.lcov",
            &[
                ("pkg/__init__.py", 0, 0, &[], 0, 0),
                ("pkg/ops.py", 12, 8, &[4, 5, 7, 15], 8, 4),
                ("tests/test_ops.py", 8, 8, &[], 0, 0),
            ],
        );
    }

    #[test]
    fn node_sample() {
        check(
            "node.lcov",
            &[
                ("calc.js", 7, 6, &[6], 6, 6),
                ("test/calc.test.js", 7, 7, &[], 4, 4),
            ],
        );
    }

    #[test]
    fn jest_and_vitest_samples() {
        check("jest.lcov", &[("calc.js", 5, 4, &[6], 4, 3)]);
        check("vitest.lcov", &[("calc.js", 5, 4, &[6], 4, 3)]);
    }

    #[test]
    fn llvmcov_sample_without_final_newline() {
        check(
            "llvmcov.lcov",
            &[("/home/user/tiny/src/lib.rs", 6, 5, &[4], 0, 0)],
        );
    }

    #[test]
    fn tarpaulin_sample() {
        check(
            "tarpaulin.lcov",
            &[("/home/user/tiny/src/lib.rs", 3, 2, &[4], 0, 0)],
        );
    }

    fn parse(text: &str) -> Result<CoverageReport, ReportParseError> {
        parse_lcov_str(text, Path::new("x.lcov"))
    }

    #[test]
    fn records_for_one_file_merge() {
        let text = "SF:a.py\nDA:1,0\nDA:2,1\nBRDA:1,0,0,0\nend_of_record\n\
                    SF:b.py\nDA:1,1\nend_of_record\n\
                    SF:a.py\nDA:1,2\nDA:3,0,abc\nBRDA:1,0,0,1\nBRDA:1,0,1,-\nend_of_record\n";
        let r = parse(text).unwrap();
        assert_eq!(r.files.len(), 2);
        let a = &r.files[0];
        assert_eq!(
            (a.path.as_str(), a.lines_total, a.lines_covered),
            ("a.py", 3, 2)
        );
        assert_eq!(a.missing_lines, vec![3]);
        assert_eq!((a.branches_total, a.branches_covered), (2, 1));
    }

    #[test]
    fn summary_counts_only_without_da_or_brda() {
        let r = parse("SF:a.rs\nLF:10\nLH:4\nBRF:6\nBRH:5\nend_of_record\n").unwrap();
        let f = &r.files[0];
        assert_eq!(
            (
                f.lines_total,
                f.lines_covered,
                f.branches_total,
                f.branches_covered
            ),
            (10, 4, 6, 5)
        );
        // DA present: the LF/LH that disagree with it are ignored.
        let r = parse("SF:a.rs\nDA:1,1\nLF:10\nLH:4\nend_of_record\n").unwrap();
        assert_eq!((r.files[0].lines_total, r.files[0].lines_covered), (1, 1));
    }

    #[test]
    fn huge_counts_saturate() {
        let r = parse("SF:a\nDA:1,18446744073709551615\nDA:1,9\nend_of_record\n").unwrap();
        assert_eq!(r.files[0].lines_covered, 1);
    }

    #[test]
    fn crlf_and_blank_lines_are_fine() {
        let r = parse("TN:\r\n\r\nSF:a.js\r\nDA:1,1\r\nend_of_record\r\n").unwrap();
        assert_eq!(r.files[0].lines_covered, 1);
    }

    fn problem(text: &str) -> String {
        let e = parse(text).unwrap_err();
        assert_eq!(e.path, Path::new("x.lcov"));
        e.to_string()
    }

    #[test]
    fn errors_name_file_line_and_problem() {
        let e = problem("SF:a.py\nDA:1,1\nDA:2,lots\nend_of_record\n");
        assert!(
            e.starts_with("x.lcov: line 3: DA hit count is not a number"),
            "{e}"
        );
        let e = problem("SF:a.py\nDA:x,1\nend_of_record\n");
        assert!(e.contains("line 2: DA line number is not a number"), "{e}");
        let e = problem("TN:\nDA:1,1\nSF:a.py\nend_of_record\n");
        assert!(e.contains("line 2: DA: before any SF"), "{e}");
        let e = problem("SF:a.py\nDA:1,1\nSF:b.py\nend_of_record\n");
        assert!(
            e.contains("line 3") && e.contains("no end_of_record"),
            "{e}"
        );
        let e = problem("SF:a.py\nBRDA:1,0\nend_of_record\n");
        assert!(e.contains("BRDA needs 4 fields"), "{e}");
        let e = problem("{\"meta\": {}}\n");
        assert!(e.contains("before any SF"), "{e}");
    }

    #[test]
    fn truncated_and_empty_files_are_errors() {
        let e = problem("SF:a.py\nDA:1,1\nDA:2,0\n");
        assert!(e.contains("truncated") && e.contains("a.py"), "{e}");
        assert!(problem("").contains("no coverage records"));
        assert!(problem("TN:\n\n").contains("no coverage records"));
        let missing = parse_lcov(Path::new("/nonexistent/x.lcov")).unwrap_err();
        assert!(missing.problem.contains("cannot read"));
    }
}
