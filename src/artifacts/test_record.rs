//! One test of a run record (`tests[]`): its outcome and, for a failure, the classifier's
//! verdict with evidence.

use serde::{Deserialize, Serialize};

use super::nullable::null_as_default;

use crate::testing::classify::{Classification, Criticality, Verdict};
use crate::testing::report::{TestCase, TestStatus};

/// A test's outcome as recorded: the runner's status, or `flaky` for a test that failed and
/// then passed on a re-run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordedStatus {
    Passed,
    Failed,
    Error,
    Skipped,
    Flaky,
    /// A status this version does not know (read only, never written).
    #[default]
    #[serde(other)]
    Unknown,
}

impl RecordedStatus {
    /// Failed or error; flaky and skipped tests do not count as failures.
    pub fn is_failing(self) -> bool {
        matches!(self, RecordedStatus::Failed | RecordedStatus::Error)
    }

    /// The word in the file (`passed`).
    pub fn as_str(self) -> &'static str {
        match self {
            RecordedStatus::Passed => "passed",
            RecordedStatus::Failed => "failed",
            RecordedStatus::Error => "error",
            RecordedStatus::Skipped => "skipped",
            RecordedStatus::Flaky => "flaky",
            RecordedStatus::Unknown => "unknown",
        }
    }
}

/// A test of a run, as recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TestRecord {
    #[serde(deserialize_with = "null_as_default")]
    pub id: String,
    pub file: Option<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub status: RecordedStatus,
    pub duration_s: Option<f64>,
    pub message: Option<String>,
    /// Set for the failures the classifier judged (null for passes and flaky tests).
    pub classification: Option<Classification>,
    pub criticality: Option<Criticality>,
    pub evidence: Option<Evidence>,
}

/// What a classification rests on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Evidence {
    /// `file:line` of the innermost frame, when the traceback names one.
    pub location: Option<String>,
    /// The exception type or error kind that decided (always written; absent in some
    /// hand-written records).
    pub error: Option<String>,
    /// The lines of the failure that show it.
    #[serde(deserialize_with = "null_as_default")]
    pub excerpt: String,
    /// Why this classification.
    #[serde(deserialize_with = "null_as_default")]
    pub reason: String,
}

impl TestRecord {
    /// A runner's case as recorded, with the classifier's verdict on a failure.
    pub fn of(c: &TestCase, v: Option<&Verdict>, flaky: bool) -> TestRecord {
        TestRecord {
            id: c.id.clone(),
            file: c.file.clone(),
            status: if flaky {
                RecordedStatus::Flaky
            } else {
                RecordedStatus::of(c.status)
            },
            duration_s: c.duration_s,
            message: c.message.clone(),
            classification: v.map(|v| v.classification),
            criticality: v.map(|v| v.criticality),
            evidence: v.map(|v| Evidence {
                location: v.location.clone(),
                error: Some(v.error.clone()),
                excerpt: v.excerpt.clone(),
                reason: v.reason.clone(),
            }),
        }
    }
}

impl RecordedStatus {
    /// A runner's status as recorded.
    pub fn of(s: TestStatus) -> RecordedStatus {
        match s {
            TestStatus::Passed => RecordedStatus::Passed,
            TestStatus::Failed => RecordedStatus::Failed,
            TestStatus::Error => RecordedStatus::Error,
            TestStatus::Skipped => RecordedStatus::Skipped,
        }
    }
}
