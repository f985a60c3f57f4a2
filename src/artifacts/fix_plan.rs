//! `analysis/fix-plan.json`: the fixer's latest plan (the part of the seed's planning agent code
//! can do): the failures grouped by the file they point at, and for each group the lines to
//! change with the reason. Written by the fixer each iteration, read by the report.

use serde::{Deserialize, Serialize};

/// Relative to the session.
pub const FIX_PLAN_FILE: &str = "analysis/fix-plan.json";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FixPlan {
    pub iteration: u32,
    pub strategy: String,
    pub fixes: Vec<PlannedFix>,
    /// How sure the ranking is (the top point's score), 0..=1.
    pub confidence_score: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PlannedFix {
    /// The file the group's failures point at.
    pub file: String,
    pub tests: Vec<String>,
    pub root_cause: String,
    pub modification_points: Vec<ModificationPoint>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ModificationPoint {
    pub file: String,
    pub line: u32,
    pub function: Option<String>,
    pub code: String,
    pub score: f64,
    pub reason: String,
}
