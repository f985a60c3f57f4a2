//! Go's coverage profile (`go test -coverprofile`) as line coverage: after a `mode:` line, one
//! block a line, `importpath/file.go:startLine.startCol,endLine.endCol numStmts count`. Every line
//! a block with statements spans is code; it is covered when any block over it ran.

use std::collections::BTreeMap;
use std::path::Path;

use crate::testing::report::{CoverageReport, FileCoverage, ReportParseError};

/// The profile at `path`, with files named relative to the module root (their import path with
/// `module` taken off; files of other modules keep their import path).
pub(super) fn parse_profile(path: &Path, module: &str) -> Result<CoverageReport, ReportParseError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| ReportParseError::new(path, e.to_string()))?;
    let mut lines = text.lines();
    if !lines.next().is_some_and(|l| l.starts_with("mode: ")) {
        return Err(ReportParseError::new(
            path,
            "not a Go coverage profile (no mode: line)",
        ));
    }
    // file -> line -> ran
    let mut files: BTreeMap<String, BTreeMap<u32, bool>> = BTreeMap::new();
    for (n, line) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let block = parse_block(line).ok_or_else(|| {
            ReportParseError::at_line(path, n + 2, format!("cannot read {line:?}"))
        })?;
        if block.statements == 0 {
            continue;
        }
        let file = block
            .file
            .strip_prefix(module)
            .and_then(|rest| rest.strip_prefix('/'))
            .unwrap_or(block.file);
        let lines = files.entry(file.to_string()).or_default();
        for l in block.start..=block.end {
            *lines.entry(l).or_default() |= block.count > 0;
        }
    }
    Ok(CoverageReport {
        format: "go-coverprofile".into(),
        files: files
            .into_iter()
            .map(|(path, lines)| FileCoverage {
                missing_arcs: Vec::new(),
                executed_lines: lines
                    .iter()
                    .filter(|(_, ran)| **ran)
                    .map(|(l, _)| *l)
                    .collect(),
                partial_lines: Vec::new(),
                path,
                lines_total: lines.len(),
                lines_covered: lines.values().filter(|ran| **ran).count(),
                missing_lines: lines
                    .iter()
                    .filter(|(_, ran)| !**ran)
                    .map(|(l, _)| *l)
                    .collect(),
                branches_total: 0,
                branches_covered: 0,
            })
            .collect(),
    })
}

struct Block<'a> {
    file: &'a str,
    start: u32,
    end: u32,
    statements: u32,
    count: u64,
}

/// `example.com/calc/calc.go:7.24,9.2 1 1`.
fn parse_block(line: &str) -> Option<Block<'_>> {
    let (file, rest) = line.rsplit_once(':')?;
    let mut fields = rest.split_whitespace();
    let (from, to) = fields.next()?.split_once(',')?;
    let line_of = |pos: &str| pos.split_once('.')?.0.parse::<u32>().ok();
    let block = Block {
        file,
        start: line_of(from)?,
        end: line_of(to)?,
        statements: fields.next()?.parse().ok()?,
        count: fields.next()?.parse().ok()?,
    };
    (block.start <= block.end).then_some(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_become_covered_and_missing_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cover.out");
        std::fs::write(
            &path,
            "mode: set\n\
             example.com/calc/calc.go:7.24,9.2 1 1\n\
             example.com/calc/calc.go:13.42,14.16 1 1\n\
             example.com/calc/calc.go:14.16,16.3 1 0\n\
             example.com/calc/calc.go:17.2,17.2 0 0\n\
             example.com/calc/stats/mean.go:3.20,5.2 2 0\n\
             other.org/dep/x.go:1.1,1.9 1 1\n",
        )
        .unwrap();
        let report = parse_profile(&path, "example.com/calc").unwrap();
        assert_eq!(report.format, "go-coverprofile");
        let paths: Vec<&str> = report.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["calc.go", "other.org/dep/x.go", "stats/mean.go"]);
        let calc = &report.files[0];
        // 7-9 ran; 13-14 ran (14 also starts the block not taken); 15-16 did not.
        assert_eq!((calc.lines_total, calc.lines_covered), (7, 5));
        assert_eq!(calc.missing_lines, [15, 16]);
        assert_eq!(report.files[2].missing_lines, [3, 4, 5]);

        std::fs::write(&path, "not a profile\n").unwrap();
        assert!(parse_profile(&path, "example.com/calc").is_err());
        std::fs::write(&path, "mode: count\nx.go:oops\n").unwrap();
        let err = parse_profile(&path, "m").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }
}
