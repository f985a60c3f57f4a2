//! Coverage before -> after: what the project's own tests cover (`results/coverage-baseline.json`)
//! and what each layer's last run covers with the generated tests added, per layer and per file.
//! Status, the run summary and the report all read it here.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::{runs, CoverageRecord};
use crate::util::read_json;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoverageChange {
    pub layers: Vec<LayerChange>,
    /// Every file in scope, by path.
    pub files: Vec<FileChange>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayerChange {
    pub layer: String,
    /// Line coverage of the layer's files by the project's own tests.
    pub before: f64,
    /// The same files with the layer's generated tests added.
    pub after: f64,
    /// Tests of the layer's last run.
    pub new_tests: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileChange {
    pub file: String,
    /// None: the project's own tests' coverage does not list the file.
    pub before: Option<f64>,
    /// The best of the layers' last runs; None when no layer measured the file.
    pub after: Option<f64>,
}

impl LayerChange {
    pub fn points(&self) -> f64 {
        self.after - self.before
    }
}

/// None when the session ran no baseline with coverage.
pub fn coverage_change(session: &Path) -> Option<CoverageChange> {
    let results = session.join("results");
    let baseline: CoverageRecord = read_json(&results.join("coverage-baseline.json")).ok()?;
    let all = runs(session);
    let mut layers = Vec::new();
    let mut after: BTreeMap<String, f64> = BTreeMap::new();
    let mut names: Vec<&str> = all
        .runs
        .iter()
        .map(|(_, r)| r.layer.as_str())
        .filter(|l| *l != "baseline")
        .collect();
    names.sort();
    names.dedup();
    for layer in names {
        let Some(last) = all.of_layer(layer).last() else {
            continue;
        };
        if let (Some(before), Some(now)) = (last.baseline_coverage, last.coverage()) {
            layers.push(LayerChange {
                layer: layer.to_string(),
                before,
                after: now,
                new_tests: last.total,
            });
        }
        let record = last
            .coverage_file()
            .and_then(|rel| read_json::<CoverageRecord>(&session.join(rel)).ok());
        for f in record.into_iter().flat_map(|r| r.files) {
            if let Some(p) = f.line_percent {
                let best = after.entry(f.path).or_insert(p);
                *best = best.max(p);
            }
        }
    }
    let before: BTreeMap<String, Option<f64>> = baseline
        .files
        .into_iter()
        .map(|f| (f.path, f.line_percent))
        .collect();
    // The layers' files (the baseline's coverage also measured the tests themselves).
    let paths: Vec<&String> = if after.is_empty() {
        before.keys().collect()
    } else {
        after.keys().collect()
    };
    let files = paths
        .into_iter()
        .map(|p| FileChange {
            file: p.clone(),
            before: before.get(p).copied().flatten(),
            after: after.get(p).copied(),
        })
        .collect();
    Some(CoverageChange { layers, files })
}
