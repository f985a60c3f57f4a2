//! What a session writes and reads back: the run records under `results/` (`run-NNN.json`),
//! their tests, repairs and quarantined tests, the coverage detail (`coverage-NNN.json`), and the
//! code fixes of a test-fix cycle (`fixes/manifest.json`).
//! The writers (the executor) and the readers (the generator's feedback, the executor's rerun,
//! the report) share these types, so a field cannot be spelled two ways.
//!
//! Plain data only: this module depends on serde, `error`, `util` and plain-data enums, never on
//! a role, the report or the actors. Reading is tolerant (unknown fields are ignored, missing
//! ones take their default), so records written by earlier versions still load.

mod coverage;
mod coverage_change;
mod finding;
mod fix_plan;
mod fixes;
mod iteration_state;
mod judged;
mod junit_out;
mod load_error;
mod localisation;
mod mutation;
mod nullable;
mod quarantine;
mod reader;
mod repair;
mod run_record;
mod test_record;

pub use coverage::{CoverageFile, CoverageRecord};
pub use coverage_change::{coverage_change, CoverageChange, FileChange, LayerChange};
pub use finding::{Finding, FindingCategory};
pub use fix_plan::{FixPlan, ModificationPoint, PlannedFix, FIX_PLAN_FILE};
pub use fixes::{
    FixManifest, FixPatch, FixedFile, COMBINED_PATCH, FIXES_MANIFEST, FIX_MANIFEST_VERSION,
};
pub use iteration_state::{
    CycleStatus, FullRun, Iteration, IterationOutcome, IterationState, NextAction, Strategy,
    ITERATION_STATE,
};
pub use judged::{
    digest, layer_files, rewrites, snapshot, FileDigests, LayerFile, LayerJudgement, Rewrite,
};
pub use junit_out::{junit_file, junit_xml};
pub use load_error::{LoadErrorRecord, LoadVerdictRecord};
pub use localisation::{LocalisationRecord, Suspect, TestLocalisation, LOCALISATION_FILE};
pub use mutation::{KeptTest, LayerMutation, MutationRecord, SuiteScore, Survivor, MUTATION_FILE};
pub use quarantine::{recorded_quarantine, Quarantined};
pub use reader::{is_run_file, read_run, runs, ArtifactError, SessionResults};
pub use repair::{Repair, RepairAction};
pub use run_record::{CoverageScope, RunRecord, WatchRecord};
pub use test_record::{Evidence, RecordedStatus, TestRecord};

#[cfg(test)]
mod tests;
