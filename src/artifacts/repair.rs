//! One step of the executor's self-repair, as listed in the run record's `repairs`.

use serde::{Deserialize, Serialize};

/// What a repair step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RepairAction {
    #[serde(rename = "quarantined test")]
    QuarantinedTest,
    #[serde(rename = "quarantined file")]
    QuarantinedFile,
    #[serde(rename = "repaired by agent")]
    RepairedByAgent,
    #[serde(rename = "agent repair failed")]
    AgentRepairFailed,
}

/// A repair step: which iteration, what it did, to which test or file, and why (or by whom).
/// The keys a step does not use are left out of the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repair {
    pub iteration: usize,
    pub action: RepairAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The agent backend that repaired the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
}

impl Repair {
    /// A step on a whole file (quarantine, agent repair).
    pub fn on_file(iteration: usize, action: RepairAction, file: &str) -> Self {
        Repair {
            iteration,
            action,
            test: None,
            file: Some(file.to_string()),
            reason: None,
            backend: None,
        }
    }
}
