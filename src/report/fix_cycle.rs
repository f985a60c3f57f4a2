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

/// The section's markdown.
pub(super) fn markdown(md: &mut String, f: &FixCycleReport, session_id: &str) {
    let s = &f.state;
    md.push_str(&format!("## Test-Fix Cycle\n\n{}\n\n", s.summary));
    if !s.branch.is_empty() {
        md.push_str(&format!(
            "The code was fixed in a git worktree on branch `{}`, never in your tree.\n\n",
            s.branch
        ));
    }
    let rows: Vec<_> = s.iterations.iter().collect();
    if !rows.is_empty() {
        md.push_str("| Iteration | Strategy | Pass rate | Outcome | Changed | Tests run | Commit |\n|---|---|---|---|---|---|---|\n");
        for i in rows {
            let strategy = if i.iteration == 0 {
                "-"
            } else {
                i.strategy.as_str()
            };
            let ran = if i.iteration == 0 {
                format!("{} (all)", i.suite_size)
            } else if i.selected_tests.is_empty() {
                "-".to_string()
            } else {
                format!("{} of {}", i.selected_tests.len(), i.suite_size)
            };
            let commit = match (&i.commit, &i.rollback_commit) {
                (Some(c), Some(r)) => format!("{} (rolled back by {})", short(c), short(r)),
                (Some(c), None) => short(c).to_string(),
                _ => "-".to_string(),
            };
            md.push_str(&format!(
                "| {} | {strategy} | {:.1}% → {:.1}% | {:?}{} | {} | {ran} | {commit} |\n",
                i.iteration,
                i.previous_pass_rate,
                i.pass_rate,
                i.outcome,
                if i.note.is_empty() || i.iteration == 0 {
                    String::new()
                } else {
                    format!(": {}", i.note.replace('|', "\\|"))
                },
                if i.modified_files.is_empty() {
                    "-".to_string()
                } else {
                    i.modified_files.join(", ")
                },
            ));
        }
        md.push('\n');
    }
    if let Some(v) = &s.final_validation {
        md.push_str(&format!(
            "Final validation (the whole suite at the last commit): {} of {} passed ({:.1}%).\n\n",
            v.passed, v.total, v.pass_rate
        ));
    }
    if s.tests_full > 0 {
        md.push_str(&format!(
            "Progressive testing: the iterations ran {} tests where the whole suite each time would have been {} ({:.0}% fewer).\n\n",
            s.tests_run,
            s.tests_full,
            100.0 - s.tests_run as f64 * 100.0 / s.tests_full as f64
        ));
    }
    if !s.stuck_tests.is_empty() {
        md.push_str("Stuck tests (failing 3 or more iterations in a row):\n\n");
        for t in &s.stuck_tests {
            md.push_str(&format!("- `{t}`\n"));
        }
        md.push('\n');
    }
    if !s.pinned_tests.is_empty() {
        md.push_str(&format!(
            "{} generated test(s) of this session fail against the fixed code: they asserted the old behaviour. Generate tests anew after `apply --fixes` (a new `team-testing run`) rather than applying these as they are:\n\n",
            s.pinned_tests.len()
        ));
        for t in &s.pinned_tests {
            md.push_str(&format!("- `{t}`\n"));
        }
        md.push('\n');
    }
    if !f.fixed_files.is_empty() {
        md.push_str(&format!(
            "The fixes change {} file(s): {}. `team-testing apply --fixes {session_id}` applies them (it refuses if those files changed since).\n\n",
            f.fixed_files.len(),
            f.fixed_files
                .iter()
                .map(|x| format!("{} ({})", x.path, x.status))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(plan) = f.plan.as_ref().filter(|p| !p.fixes.is_empty()) {
        md.push_str(&format!(
            "Fix plan of iteration {} ({} strategy; see analysis/fault-localisation.md):\n\n| Failing tests | Modification point | Function | Reason |\n|---|---|---|---|\n",
            plan.iteration, plan.strategy
        ));
        for fix in &plan.fixes {
            for p in &fix.modification_points {
                md.push_str(&format!(
                    "| {} | {}:{} | {} | {} |\n",
                    fix.tests.len(),
                    p.file,
                    p.line,
                    p.function.as_deref().unwrap_or("-"),
                    p.reason.replace('|', "\\|")
                ));
            }
        }
        md.push('\n');
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}
