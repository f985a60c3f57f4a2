//! The coverage gaps section: per module of each layer's final run, how far its line coverage
//! falls short of the layer's target and which lines are uncovered; and, from every run, which
//! modules in scope the tests exercise at all (for the confidence's scenario coverage).

use std::collections::BTreeSet;
use std::path::Path;

use super::load::Run;
use super::model::{CoverageGap, LayerReport};
use super::numbers::round_to;
use crate::artifacts::{CoverageFile, CoverageRecord};
use crate::tasks::TaskGraph;
use crate::util::read_json;

/// What the gaps section computes.
pub(super) struct Gaps {
    /// Largest gap first.
    pub coverage_gaps: Vec<CoverageGap>,
    /// The modules in scope: the runs' coverage scope, else the strategist's priority files.
    pub scope: BTreeSet<String>,
    /// Modules some run's coverage file shows with a covered line.
    pub exercised: BTreeSet<String>,
    /// Coverage files named by a run that could not be read.
    pub missing: Vec<String>,
}

/// Sorted line numbers as ranges: [12,13,14,15,20] → "12-15, 20".
pub fn line_ranges(lines: &[u64]) -> String {
    let mut l: Vec<u64> = lines.to_vec();
    l.sort_unstable();
    l.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < l.len() {
        let start = l[i];
        let mut end = start;
        while i + 1 < l.len() && l[i + 1] == end + 1 {
            i += 1;
            end = l[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(", ")
}

/// Computes the gaps from the coverage file each run names (read from `session_root`), the
/// layers' targets and final runs (layers section), and the strategist's task in tasks.json.
pub(super) fn coverage_gaps(
    session_root: &Path,
    runs: &[Run],
    graph: &TaskGraph,
    layers: &[LayerReport],
    final_runs: &[&Run],
) -> Gaps {
    let mut out = Gaps {
        coverage_gaps: Vec::new(),
        scope: BTreeSet::new(),
        exercised: BTreeSet::new(),
        missing: Vec::new(),
    };
    for r in runs {
        if let Some(scope) = &r.record.coverage_scope {
            out.scope.extend(scope.files().iter().cloned());
        }
        let Some(cf) = r.record.coverage_file() else {
            continue;
        };
        let detail = match read_json::<CoverageRecord>(&session_root.join(cf)) {
            Ok(d) => d,
            Err(e) => {
                out.missing.push(format!("{cf} (named by {}): {e}", r.file));
                continue;
            }
        };
        let is_final = final_runs.iter().any(|fr| fr.file == r.file);
        let target = layers
            .iter()
            .find(|l| l.layer == r.layer)
            .and_then(|l| l.target);
        for f in &detail.files {
            if f.lines_covered > 0 {
                out.exercised.insert(f.path.clone());
            }
            // Gaps only from the run the layer's final figures come from.
            if is_final {
                out.coverage_gaps.extend(gap(&r.layer, f, target));
            }
        }
    }
    out.coverage_gaps.sort_by(|a, b| {
        b.gap
            .total_cmp(&a.gap)
            .then_with(|| a.layer.cmp(&b.layer))
            .then_with(|| a.module.cmp(&b.module))
    });
    if out.scope.is_empty() {
        // The strategist's priority files are the scope when no run named one.
        for t in graph.tasks.iter().filter(|t| t.owner == "strategist") {
            let list = t.outcome.as_ref().map(|o| o.priority_files());
            out.scope.extend(list.into_iter().flatten());
        }
    }
    out
}

/// The gap of one file of a coverage file, with what to do about it; None when every line is
/// covered and the target is met.
fn gap(layer: &str, f: &CoverageFile, target: Option<f64>) -> Option<CoverageGap> {
    let path = f.path.clone();
    let pct = f.line_percent.unwrap_or_else(|| {
        if f.lines_total > 0 {
            100.0 * f.lines_covered as f64 / f.lines_total as f64
        } else {
            100.0
        }
    });
    let lines: Vec<u64> = f.missing_lines.iter().map(|&l| u64::from(l)).collect();
    let gap = target.map_or(0.0, |t| (t - pct).max(0.0));
    if lines.is_empty() && gap == 0.0 {
        return None;
    }
    let uncovered = line_ranges(&lines);
    let recommendation = if pct == 0.0 {
        format!("{path} is never exercised: add {layer} tests that import it and call its public functions")
    } else if gap > 0.0 {
        format!("add {layer} tests reaching lines {uncovered} to close the {gap:.1}-point gap")
    } else {
        format!(
            "meets the target; cover lines {uncovered} if they hold error handling or edge cases"
        )
    };
    Some(CoverageGap {
        layer: layer.to_string(),
        module: path,
        line_percent: round_to(pct, 2),
        target,
        gap: round_to(gap, 2),
        uncovered,
        recommendation,
    })
}
