//! One layer run split into shards by test file, put back together: the test cases side by
//! side, coverage as the union of what each shard ran. Line figures are exact from the line
//! lists; branch figures are exact when the tool lists the arcs never taken (coverage.py), and
//! the best shard's otherwise.

use std::collections::{BTreeMap, BTreeSet};

use super::report::{CoverageReport, FileCoverage};
use super::runner::RunOutput;

/// The shards' outputs as one run's.
pub fn merge_outputs(shards: Vec<RunOutput>) -> RunOutput {
    let mut merged = RunOutput::default();
    let mut coverage: Vec<CoverageReport> = Vec::new();
    let mut codes: Vec<i32> = Vec::new();
    for (i, out) in shards.into_iter().enumerate() {
        if i == 0 {
            merged.command = out.command.clone();
        }
        codes.extend(out.exit_code);
        merged.duration_s = merged.duration_s.max(out.duration_s);
        merged.cases.extend(out.cases);
        merged.load_errors.extend(out.load_errors);
        match out.coverage {
            Some(c) => coverage.push(c),
            None => {
                merged.coverage_problem = merged.coverage_problem.or(out.coverage_problem);
            }
        }
        merged.reports.extend(out.reports);
        if !out.output_tail.is_empty() {
            if !merged.output_tail.is_empty() {
                merged.output_tail.push('\n');
            }
            merged.output_tail.push_str(&out.output_tail);
        }
        merged.timed_out |= out.timed_out;
        merged.env_problem = merged.env_problem.or(out.env_problem);
        merged.effects.extend(out.effects);
    }
    // The run failed if any shard did.
    merged.exit_code = codes.iter().find(|&&c| c != 0).or(codes.first()).copied();
    if merged.coverage_problem.is_none() && !coverage.is_empty() {
        merged.coverage = Some(merge_coverage(coverage));
    } else if !coverage.is_empty() {
        // A shard without coverage: the union would understate it, so none is claimed.
        merged.coverage = None;
    }
    merged
}

/// The union of the shards' coverage of the same files.
pub fn merge_coverage(reports: Vec<CoverageReport>) -> CoverageReport {
    let format = reports
        .first()
        .map(|r| r.format.clone())
        .unwrap_or_default();
    let mut by_path: BTreeMap<String, Vec<FileCoverage>> = BTreeMap::new();
    for report in reports {
        for f in report.files {
            by_path.entry(f.path.clone()).or_default().push(f);
        }
    }
    let files = by_path.into_values().map(merge_file).collect();
    CoverageReport { format, files }
}

fn merge_file(shards: Vec<FileCoverage>) -> FileCoverage {
    let n = shards.len();
    let first = shards[0].clone();
    if n == 1 {
        return first;
    }
    let executed: BTreeSet<u32> = shards
        .iter()
        .flat_map(|f| f.executed_lines.iter().copied())
        .collect();
    // Never run: missing in every shard.
    let missing: Vec<u32> = first
        .missing_lines
        .iter()
        .copied()
        .filter(|l| shards.iter().all(|f| f.missing_lines.contains(l)))
        .collect();
    let lines_total = shards.iter().map(|f| f.lines_total).max().unwrap_or(0);
    let lines_covered = if shards.iter().all(|f| f.lines_total == lines_total) {
        lines_total - missing.len().min(lines_total)
    } else {
        shards.iter().map(|f| f.lines_covered).max().unwrap_or(0)
    };
    let branches_total = shards.iter().map(|f| f.branches_total).max().unwrap_or(0);
    let arcs_listed = shards
        .iter()
        .all(|f| f.branches_covered == f.branches_total || !f.missing_arcs.is_empty());
    let missing_arcs: Vec<[i64; 2]> = first
        .missing_arcs
        .iter()
        .copied()
        .filter(|a| {
            shards
                .iter()
                .all(|f| f.branches_covered < f.branches_total && f.missing_arcs.contains(a))
        })
        .collect();
    let branches_covered = if arcs_listed {
        branches_total - missing_arcs.len().min(branches_total)
    } else {
        shards.iter().map(|f| f.branches_covered).max().unwrap_or(0)
    };
    let partial_lines: Vec<u32> = {
        let mut p: BTreeSet<u32> = missing_arcs
            .iter()
            .filter_map(|[from, _]| u32::try_from(*from).ok())
            .filter(|l| executed.contains(l))
            .collect();
        if !arcs_listed {
            p = shards
                .iter()
                .flat_map(|f| f.partial_lines.iter().copied())
                .filter(|l| {
                    shards
                        .iter()
                        .all(|f| !f.executed_lines.contains(l) || f.partial_lines.contains(l))
                })
                .collect();
        }
        p.into_iter().collect()
    };
    FileCoverage {
        path: first.path,
        lines_total,
        lines_covered,
        missing_lines: missing,
        branches_total,
        branches_covered,
        executed_lines: executed.into_iter().collect(),
        partial_lines,
        missing_arcs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::report::{TestCase, TestStatus};

    fn file(
        executed: &[u32],
        missing: &[u32],
        arcs: &[[i64; 2]],
        branches: (usize, usize),
    ) -> FileCoverage {
        FileCoverage {
            path: "pkg/a.py".into(),
            lines_total: executed.len() + missing.len(),
            lines_covered: executed.len(),
            missing_lines: missing.to_vec(),
            executed_lines: executed.to_vec(),
            branches_total: branches.0,
            branches_covered: branches.1,
            missing_arcs: arcs.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn shards_coverage_is_the_union_of_what_each_ran() {
        // Lines 1-6; shard A runs 1-4 and takes arc 2->3 only, shard B runs 1,2,5 and 2->5.
        let a = file(&[1, 2, 3, 4], &[5, 6], &[[2, 5], [4, 6]], (3, 1));
        let b = file(&[1, 2, 5], &[3, 4, 6], &[[2, 3], [4, 6], [4, 5]], (3, 0));
        let merged = merge_coverage(vec![
            CoverageReport {
                format: "coveragepy-json".into(),
                files: vec![a],
            },
            CoverageReport {
                format: "coveragepy-json".into(),
                files: vec![b],
            },
        ]);
        let f = &merged.files[0];
        assert_eq!(f.missing_lines, vec![6]);
        assert_eq!((f.lines_total, f.lines_covered), (6, 5));
        assert_eq!(f.executed_lines, vec![1, 2, 3, 4, 5]);
        assert_eq!(f.missing_arcs, vec![[4, 6]]);
        assert_eq!((f.branches_total, f.branches_covered), (3, 2));
        assert_eq!(f.partial_lines, vec![4]);
    }

    #[test]
    fn cases_are_side_by_side_and_a_failure_shows_in_the_exit_code() {
        let case = TestCase::named;
        let one = RunOutput {
            exit_code: Some(0),
            cases: vec![case("t::a", TestStatus::Passed)],
            ..Default::default()
        };
        let two = RunOutput {
            exit_code: Some(1),
            cases: vec![case("t::b", TestStatus::Failed)],
            ..Default::default()
        };
        let merged = merge_outputs(vec![one, two]);
        assert_eq!(merged.cases.len(), 2);
        assert_eq!(merged.exit_code, Some(1));
    }
}
