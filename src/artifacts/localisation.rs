//! `results/fault-localisation.json`: for each failing test, the project's lines most likely to
//! hold the defect (spectrum-based, Ochiai over per-test coverage), as the analyst wrote them.

use serde::{Deserialize, Serialize};

pub const LOCALISATION_FILE: &str = "results/fault-localisation.json";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LocalisationRecord {
    pub tests: Vec<TestLocalisation>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TestLocalisation {
    /// The run record's test id (`test_calc_ops::test_mean_empty`).
    pub test: String,
    /// `baseline` or the layer.
    pub suite: String,
    /// Most suspicious first.
    pub suspects: Vec<Suspect>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Suspect {
    /// `file:line`, repository-relative.
    pub location: String,
    /// Ochiai: failing / sqrt(all failing x (failing + passing)) of the tests that run the line.
    pub score: f64,
    /// Passing tests that run the line too.
    pub passing: usize,
    /// The failing test's exception was raised on this line.
    pub raised_here: bool,
    /// The line's code.
    pub code: String,
}
