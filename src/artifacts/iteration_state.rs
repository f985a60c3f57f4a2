//! `iteration-state.json`: the test-fix loop's state machine on disk (the seed's fields:
//! current_task, selected_strategy, next_action, iterations[]). The fixer writes it after every
//! step, so a killed loop resumes at its last committed iteration; status and the report read it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::util::{atomic_write_json, read_json};

/// The strategy of an iteration (the seed's three).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// One targeted fix, high confidence required.
    #[default]
    Conservative,
    /// Fix the failures that share a cause together.
    Aggressive,
    /// The smallest change, after a regression was rolled back.
    Surgical,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Conservative => "conservative",
            Strategy::Aggressive => "aggressive",
            Strategy::Surgical => "surgical",
        }
    }

    /// What the agent is asked to do under this strategy (the seed's words).
    pub fn instruction(self) -> &'static str {
        match self {
            Strategy::Conservative => "single targeted fix, high confidence required: fix one root cause, the one the evidence is clearest about",
            Strategy::Aggressive => "batch fix similar failures, pattern-based: the failures share a cause, fix them together",
            Strategy::Surgical => "minimal changes, focus on rollback safety: the last change broke more than it fixed and was rolled back; change as few lines as can fix one failure, touch nothing else",
        }
    }
}

/// Relative to the session.
pub const ITERATION_STATE: &str = "iteration-state.json";

/// What the loop does next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NextAction {
    /// Run the suite once, in full, before any fix (iteration 0).
    #[default]
    InitialRun,
    /// Ask for a fix and test it.
    ExecuteFixTask,
    /// Run the whole suite once more, the last check.
    FinalValidation,
    Complete,
}

/// How the loop ended (or that it has not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CycleStatus {
    #[default]
    Running,
    /// Every test passes.
    Success,
    /// At or above the pass-rate target, every remaining failure of low criticality.
    PartialSuccess,
    /// The iterations ran out below the target.
    Failure,
    /// Only the built-in backend: the localisation and the fix plan are written, nothing fixed.
    NeedsAgent,
    /// Nothing to fix: the suite passes as it is.
    NothingToFix,
}

impl CycleStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CycleStatus::Running => "running",
            CycleStatus::Success => "success",
            CycleStatus::PartialSuccess => "partial_success",
            CycleStatus::Failure => "failure",
            CycleStatus::NeedsAgent => "needs_agent",
            CycleStatus::NothingToFix => "nothing_to_fix",
        }
    }
}

/// What became of one iteration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IterationOutcome {
    /// Iteration 0: the suite before any fix.
    #[default]
    Initial,
    /// The pass rate went up: committed.
    Improved,
    /// The same pass rate: the change was dropped.
    Unchanged,
    /// Lower, by no more than the regression threshold: the change was dropped.
    Worse,
    /// More than the threshold lower: committed, then rolled back by a commit.
    Regressed,
    /// The L0 validation found critical issues in the change: dropped before testing.
    Rejected,
    /// No backend gave a usable change.
    NoChange,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Iteration {
    pub iteration: u32,
    pub strategy: Strategy,
    /// Percent, over the whole suite (tests this iteration did not run keep their last result).
    pub pass_rate: f64,
    /// Percent before this iteration.
    pub previous_pass_rate: f64,
    pub failed_tests: Vec<String>,
    pub outcome: IterationOutcome,
    /// `test-cycle: iteration N ...` in the worktree.
    pub commit: Option<String>,
    /// The rollback commit, after a regression.
    pub rollback_commit: Option<String>,
    /// `fixes/iteration-N.patch`, when committed.
    pub patch: Option<String>,
    pub modified_files: Vec<String>,
    /// Progressive testing: the tests this iteration ran, and how many the suite has.
    pub selected_tests: Vec<String>,
    pub suite_size: usize,
    /// Wall time of the iteration's test run, and an estimate of the full suite's.
    pub tests_duration_s: f64,
    pub full_suite_estimate_s: f64,
    pub backend: Option<String>,
    /// What happened, in a sentence (why a change was dropped, what the agent said).
    pub note: String,
}

/// The whole suite's last run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FullRun {
    pub total: usize,
    pub passed: usize,
    pub pass_rate: f64,
    pub failed_tests: Vec<String>,
    pub duration_s: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct IterationState {
    pub version: u32,
    /// The FIX task running the loop.
    pub current_task: String,
    pub selected_strategy: Strategy,
    pub next_action: NextAction,
    pub status: CycleStatus,
    pub max_iterations: u32,
    /// The worktree, its branch, the user's HEAD and the commit the fixes start from (HEAD plus
    /// the uncommitted changes).
    pub worktree: String,
    /// Where the project is inside the worktree (`""`, or `pkg/` for a project in a subfolder of
    /// its git repository).
    pub prefix: String,
    pub branch: String,
    pub user_head: String,
    pub base_commit: String,
    /// The iteration whose commit is the best so far (0: the base) and its pass rate.
    pub best_iteration: u32,
    pub best_pass_rate: f64,
    pub best_commit: String,
    /// Tests failing in 3 or more consecutive iterations.
    pub stuck_tests: Vec<String>,
    pub iterations: Vec<Iteration>,
    pub final_validation: Option<FullRun>,
    /// The session's generated tests that fail against the fixed code: they asserted the old
    /// behaviour (regenerate them before applying them with the fixes).
    pub pinned_tests: Vec<String>,
    /// Progressive testing: tests run over the iterations, against the full suite each time.
    pub tests_run: usize,
    pub tests_full: usize,
    pub summary: String,
}

impl IterationState {
    pub fn load(session: &Path) -> Option<Self> {
        read_json(&session.join(ITERATION_STATE)).ok()
    }

    pub fn save(&self, session: &Path) -> Result<(), crate::util::FileError> {
        atomic_write_json(&session.join(ITERATION_STATE), self)
    }

    /// The fix iterations (without iteration 0).
    pub fn fixes(&self) -> impl Iterator<Item = &Iteration> {
        self.iterations.iter().filter(|i| i.iteration > 0)
    }
}
