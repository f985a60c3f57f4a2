//! The test-fix cycle section: what the fixer's loop did (each iteration's strategy, pass rate
//! and outcome, the stuck tests, the final validation, what progressive testing saved), the
//! files its fixes change, and its latest plan. From `iteration-state.json`, the fixes manifest
//! and `analysis/fix-plan.json`; None when the session ran no test-fix cycle.

use serde::Serialize;

use crate::artifacts::{
    FixManifest, FixPlan, FixedFile, IterationState, FIXES_MANIFEST, FIX_PLAN_FILE, ITERATION_STATE,
};
use crate::session::SessionDir;
use crate::util::read_json;

#[derive(Debug, Clone, Serialize)]
pub struct FixCycleReport {
    #[serde(flatten)]
    pub state: IterationState,
    /// What `apply --fixes` changes.
    pub fixed_files: Vec<FixedFile>,
    /// The last iteration's plan (with the built-in backend, the result).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<FixPlan>,
}

pub(super) fn fix_cycle(session: &SessionDir) -> Option<FixCycleReport> {
    let state: IterationState = read_json(&session.root.join(ITERATION_STATE)).ok()?;
    let fixed_files = read_json::<FixManifest>(&session.root.join(FIXES_MANIFEST))
        .map(|m| m.files)
        .unwrap_or_default();
    Some(FixCycleReport {
        state,
        fixed_files,
        plan: read_json(&session.root.join(FIX_PLAN_FILE)).ok(),
    })
}
