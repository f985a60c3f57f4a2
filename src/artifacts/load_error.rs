//! A test file that did not load (`load_errors[]` of a run record), with the executor's verdict
//! on whose fault it is. Read tolerantly: hand-written records may give only part of a verdict.

use serde::{Deserialize, Serialize};

use super::nullable::null_as_default;

use crate::testing::classify::{Classification, Criticality};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadErrorRecord {
    /// Relative to the layer's test folder.
    #[serde(deserialize_with = "null_as_default")]
    pub file: String,
    /// The loader's output.
    #[serde(deserialize_with = "null_as_default")]
    pub error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<LoadVerdictRecord>,
}

/// The classifier's verdict on a file that does not load (the fields of a failing test's
/// verdict, and the install command for a missing dependency).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadVerdictRecord {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classification: Option<Classification>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub criticality: Option<Criticality>,
    pub location: Option<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub error: String,
    #[serde(deserialize_with = "null_as_default")]
    pub excerpt: String,
    #[serde(deserialize_with = "null_as_default")]
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub install: Option<String>,
}
