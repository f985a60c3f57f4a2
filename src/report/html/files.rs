//! The per-file coverage table: one row per file of the layers' final coverage records, with
//! each layer's figure, the lines no layer covered (as ranges) and, under the row, its source
//! with covered, missed and partial lines coloured (a `<details>`, so it opens without script).
//!
//! A file measured by several layers is combined the way the baseline combines suites: a line
//! is missed when every layer that measured it missed it, covered when one ran it, partial when
//! it ran somewhere with a branch never taken and ran nowhere fully.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::escape::{esc, push_esc};
use super::source::{self, Marks, Origin, Sources};
use crate::artifacts::{read_run, CoverageFile, CoverageRecord};
use crate::report::{line_ranges, Report};
use crate::util::read_json;

/// One file of the table.
#[derive(Debug, Default)]
pub struct FileRow {
    pub path: String,
    /// Line coverage in percent by layer (the layers that measured it).
    pub by_layer: BTreeMap<String, Option<f64>>,
    pub lines_total: usize,
    pub missing: Vec<u32>,
    pub executed: Vec<u32>,
    pub partial: Vec<u32>,
    pub branches_total: usize,
    pub branches_covered: usize,
}

impl FileRow {
    pub fn percent(&self) -> Option<f64> {
        (self.lines_total > 0).then(|| {
            100.0 * (self.lines_total - self.missing.len().min(self.lines_total)) as f64
                / self.lines_total as f64
        })
    }

    fn add(&mut self, layer: &str, f: &CoverageFile) {
        let first = self.by_layer.is_empty();
        self.by_layer.insert(layer.to_string(), f.line_percent);
        if first {
            self.lines_total = f.lines_total;
            self.missing = f.missing_lines.clone();
            self.executed = f.executed_lines.clone();
            self.partial = f.partial_lines.clone();
            self.branches_total = f.branches_total;
            self.branches_covered = f.branches_covered;
            return;
        }
        self.lines_total = self.lines_total.max(f.lines_total);
        self.missing.retain(|l| f.missing_lines.contains(l));
        let fully: Vec<u32> = f
            .executed_lines
            .iter()
            .filter(|l| !f.partial_lines.contains(l))
            .copied()
            .collect();
        self.partial.retain(|l| !fully.contains(l));
        for l in &f.partial_lines {
            if !self.executed.contains(l) {
                self.partial.push(*l);
            }
        }
        self.partial.sort_unstable();
        self.partial.dedup();
        self.executed.extend(&f.executed_lines);
        self.executed.sort_unstable();
        self.executed.dedup();
        self.branches_total = self.branches_total.max(f.branches_total);
        self.branches_covered = self.branches_covered.max(f.branches_covered);
    }
}

/// The rows from each layer's final run's coverage record (read from `session_root`), lowest
/// coverage first, and the layers that have one.
pub fn rows(session_root: &Path, report: &Report) -> (Vec<FileRow>, Vec<String>) {
    let mut files: BTreeMap<String, FileRow> = BTreeMap::new();
    let mut layers = Vec::new();
    for l in &report.layers {
        let Some(run) = l
            .history
            .iter()
            .rev()
            .find(|p| p.pass_rate.is_some())
            .and_then(|p| p.run.as_deref())
        else {
            continue;
        };
        let Ok(record) = read_run(&session_root.join(run)) else {
            continue;
        };
        let Some(cf) = record.coverage_file() else {
            continue;
        };
        let Ok(cov) = read_json::<CoverageRecord>(&session_root.join(cf)) else {
            continue;
        };
        layers.push(l.layer.clone());
        for f in &cov.files {
            files
                .entry(f.path.clone())
                .or_insert_with(|| FileRow {
                    path: f.path.clone(),
                    ..Default::default()
                })
                .add(&l.layer, f);
        }
    }
    let mut rows: Vec<FileRow> = files.into_values().collect();
    rows.sort_by(|a, b| {
        a.percent()
            .unwrap_or(100.0)
            .total_cmp(&b.percent().unwrap_or(100.0))
            .then_with(|| a.path.cmp(&b.path))
    });
    (rows, layers)
}

/// The table (`<table id="file-table">`), each file a `<tbody>` of its figures and its source.
pub fn table(out: &mut String, rows: &[FileRow], layers: &[String], sources: &mut Sources) {
    if rows.is_empty() {
        out.push_str("<p>No coverage record lists a file.</p>\n");
        return;
    }
    out.push_str(
        "<p>Lines: <span class=\"sw c\"></span> covered <span class=\"sw m\"></span> missed \
         <span class=\"sw p\"></span> partial (a branch never taken). Click a column to sort; open a \
         file's source under its row. \
         <button class=\"js-only\" data-open=\"1\" data-sel=\"#file-table details\">Open all</button> \
         <button class=\"js-only\" data-open=\"0\" data-sel=\"#file-table details\">Close all</button></p>\n",
    );
    let cols = 5 + layers.len();
    out.push_str("<div class=\"scroll\"><table id=\"file-table\" class=\"sortable\"><thead><tr><th scope=\"col\">File</th>");
    for l in layers {
        let _ = write!(out, "<th scope=\"col\" class=\"n\">{}</th>", esc(l));
    }
    out.push_str("<th scope=\"col\" class=\"n\">Combined</th><th scope=\"col\" class=\"n\">Lines missed</th><th scope=\"col\" class=\"n\">Branches</th><th scope=\"col\">Uncovered lines</th></tr></thead>\n");
    for (i, r) in rows.iter().enumerate() {
        out.push_str("<tbody class=\"file\"><tr><td>");
        push_esc(out, &r.path);
        out.push_str("</td>");
        for l in layers {
            match r.by_layer.get(l).copied().flatten() {
                Some(p) => {
                    let _ = write!(out, "<td class=\"n\" data-v=\"{p:.2}\">{p:.1}%</td>");
                }
                None => out.push_str("<td class=\"n\" data-v=\"-1\">-</td>"),
            }
        }
        let pct = r.percent();
        let _ = write!(
            out,
            "<td class=\"n\" data-v=\"{:.2}\"><span class=\"meter\"><span style=\"width:{:.0}%\"></span></span> {}</td>",
            pct.unwrap_or(-1.0),
            pct.unwrap_or(0.0),
            pct.map_or("-".into(), |p| format!("{p:.1}%"))
        );
        let _ = write!(
            out,
            "<td class=\"n\" data-v=\"{}\">{} of {}</td>",
            r.missing.len(),
            r.missing.len(),
            r.lines_total
        );
        if r.branches_total > 0 {
            let _ = write!(
                out,
                "<td class=\"n\" data-v=\"{}\">{} of {}</td>",
                r.branches_covered, r.branches_covered, r.branches_total
            );
        } else {
            out.push_str("<td class=\"n\" data-v=\"-1\">-</td>");
        }
        let ranges: Vec<u64> = r.missing.iter().map(|&l| u64::from(l)).collect();
        let _ = write!(out, "<td>{}</td></tr>", esc(&line_ranges(&ranges)));
        let _ = write!(
            out,
            "<tr class=\"src\"><td colspan=\"{cols}\"><details id=\"src-{i}\"><summary>Source of "
        );
        push_esc(out, &r.path);
        let marks = Marks {
            missing: &r.missing,
            executed: &r.executed,
            partial: &r.partial,
        };
        match sources.text(&r.path, &marks) {
            Ok((text, origin)) => {
                out.push_str(match origin {
                    Origin::WorkingTree => "",
                    Origin::BaseCommit => " (at the session's base commit)",
                    Origin::Mismatch => {
                        " (changed since the run: the colours may not match the lines)"
                    }
                });
                out.push_str("</summary>");
                source::view(out, &text, &marks);
            }
            Err(why) => {
                let _ = write!(
                    out,
                    "</summary><p class=\"muted\">Source not shown: {}</p>",
                    esc(&why.to_string())
                );
            }
        }
        out.push_str("</details></td></tr></tbody>\n");
    }
    out.push_str("</table></div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(missing: &[u32], executed: &[u32], partial: &[u32]) -> CoverageFile {
        CoverageFile {
            path: "m.py".into(),
            lines_total: 6,
            lines_covered: 6 - missing.len(),
            missing_lines: missing.to_vec(),
            executed_lines: executed.to_vec(),
            partial_lines: partial.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn layers_combine_missed_only_where_every_layer_missed() {
        let mut row = FileRow::default();
        row.add("L1", &file(&[3, 4, 5], &[1, 2, 6], &[2]));
        row.add("L2", &file(&[1, 5], &[2, 3, 4, 6], &[4]));
        assert_eq!(row.missing, vec![5]);
        assert_eq!(row.executed, vec![1, 2, 3, 4, 6]);
        // 2 ran fully in L2; 4 ran only partially.
        assert_eq!(row.partial, vec![4]);
        assert_eq!(row.by_layer.len(), 2);
    }
}
