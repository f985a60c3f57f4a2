//! session.json: what the coordinator persists after every beat.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    Active,
    Paused,
    Completed,
    Failed,
    /// Completed, then archived in place: its rebuildable files are gone, the rest stays.
    Archived,
}

impl SessionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Active => "active",
            SessionStatus::Paused => "paused",
            SessionStatus::Completed => "completed",
            SessionStatus::Failed => "failed",
            SessionStatus::Archived => "archived",
        }
    }

    pub fn is_finished(self) -> bool {
        matches!(
            self,
            SessionStatus::Completed | SessionStatus::Failed | SessionStatus::Archived
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActiveWorker {
    pub name: String,
    pub role: String,
    pub task_id: String,
    pub started_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionState {
    #[serde(default = "version")]
    pub version: u32,
    pub session_id: String,
    pub status: SessionStatus,
    pub task_description: String,
    pub pipeline_mode: String,
    pub team_name: String,
    pub repo: PathBuf,
    #[serde(default)]
    pub base_commit: Option<String>,
    pub completion_action: CompletionAction,
    /// Rounds used per layer code (`L1`).
    #[serde(default)]
    pub gc_rounds: BTreeMap<String, u32>,
    #[serde(default = "default_max_gc_rounds")]
    pub max_gc_rounds: u32,
    /// Seed of every random choice the built-in roles make: the same seed, the same tests.
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(default)]
    pub active_workers: Vec<ActiveWorker>,
    #[serde(default)]
    pub roles: Vec<String>,
    /// The spec file and roles dir the session was created with, so resume loads the same.
    #[serde(default)]
    pub spec_file: Option<PathBuf>,
    #[serde(default)]
    pub roles_dir: Option<PathBuf>,
    #[serde(default)]
    pub tasks_total: usize,
    /// Gates still missed after the last round, and other things the user should know.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// How children that run the target's code are sandboxed (`--allow-network`, …).
    #[serde(default)]
    pub sandbox: crate::sandbox::SandboxSettings,
    /// What that sandbox protects on the machine that last ran the session.
    #[serde(default)]
    pub protections: Option<crate::sandbox::Protections>,
    /// Agent backend chains per role (`--backend`, role files, team-testing.toml) and replay.
    #[serde(default)]
    pub agents: crate::agents::backends::AgentSettings,
    /// `--max-rounds`, `--coverage-preset`, `--target`: applied to the team config on resume too.
    #[serde(default)]
    pub controls: crate::pipeline::controls::RunControls,
    /// Capability gaps the coordinator paused on (the role cap): handled again on resume.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_gaps: Vec<crate::bus::message::CapabilityGap>,
    pub created_at: String,
    pub updated_at: String,
    #[serde(default)]
    pub pid: Option<u32>,
    /// The last coordinator beat this file includes (see `session::journal`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub beat: u64,
}

/// What happens to a session once every task is done, as session.json records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionAction {
    /// Archive it in place.
    Archive,
    /// Leave it paused, resumable.
    Keep,
    /// Archived without asking (sessions of earlier versions).
    AutoArchive,
    /// Kept paused by the coordinator itself instead of completing: it never ends the run.
    AutoKeep,
    /// Ask the user (keep when nobody can be asked). Also what a name from a newer version
    /// reads as (hence last).
    #[default]
    #[serde(other)]
    Interactive,
}

impl SessionState {
    /// Whether a session whose tasks are all done stays paused (`auto_keep`).
    pub fn keeps_paused_on_completion(&self) -> bool {
        self.completion_action == CompletionAction::AutoKeep
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn default_max_gc_rounds() -> u32 {
    3
}

fn default_seed() -> u64 {
    1
}

fn version() -> u32 {
    1
}

#[cfg(test)]
mod tests {
    use super::CompletionAction;

    #[test]
    fn completion_actions_keep_their_session_file_names_and_unknown_ones_ask() {
        for (action, name) in [
            (CompletionAction::Interactive, "interactive"),
            (CompletionAction::Archive, "archive"),
            (CompletionAction::Keep, "keep"),
            (CompletionAction::AutoArchive, "auto_archive"),
            (CompletionAction::AutoKeep, "auto_keep"),
        ] {
            assert_eq!(serde_json::to_value(action).unwrap(), name);
            assert_eq!(
                serde_json::from_value::<CompletionAction>(name.into()).unwrap(),
                action
            );
        }
        assert_eq!(
            serde_json::from_value::<CompletionAction>("ask_twice".into()).unwrap(),
            CompletionAction::Interactive
        );
    }
}
