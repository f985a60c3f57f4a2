//! The fixer role (FIX): the test-fix cycle of the sibling workflows, as code. Step `validate`
//! (FIX-001) checks the project's code (L0) and that there is something to fix; step `cycle`
//! (FIX-002) localises the failures, asks the agent chain for fixes in an isolated git worktree
//! and iterates with the strategy engine until the suite passes. The built-in backend has no LLM:
//! it stops at the localisation and the fix plan, and says so.

mod carried;
mod cycle;
mod deliver;
mod plan;
mod prompt;
pub mod strategy;
mod suite;
mod validate;
pub mod worktree;

use serde_json::json;

use super::error::RoleError;
use super::RoleContext;
use crate::family::suites::SuiteTrace;
use crate::tasks::{meta, Outcome};
use crate::testing::framework::Framework;
use crate::testing::toolchain::Toolchain;

#[derive(Debug, thiserror::Error)]
pub enum FixError {
    #[error("the test-fix cycle does not run this project's tests yet: its framework is {0}")]
    Unsupported(String),
    /// Why the family's per-test traces cannot be had here (a coverage tool missing).
    #[error("the failures cannot be localised: {0}")]
    NoCoverage(String),
    #[error("nothing to run: the project has no tests of its own, and the session none that found a code defect")]
    NoTests,
    #[error(transparent)]
    Git(#[from] worktree::GitError),
    #[error(transparent)]
    Suite(#[from] suite::SuiteError),
    #[error(transparent)]
    Role(#[from] RoleError),
    #[error(transparent)]
    File(#[from] crate::util::FileError),
    #[error(transparent)]
    Check(#[from] crate::testing::code_check::CodeCheckError),
}

pub fn run(ctx: &RoleContext) -> Outcome {
    let step = ctx.task.meta.get(meta::STEP).and_then(|v| v.as_str());
    let result = match step {
        Some("validate") => validate::run(ctx),
        _ => run_cycle(ctx),
    };
    result.unwrap_or_else(|e| {
        let mut out = Outcome::failed(e.to_string());
        if matches!(
            e,
            FixError::Unsupported(_) | FixError::NoCoverage(_) | FixError::NoTests
        ) {
            out.data
                .insert(crate::tasks::data::BLOCKER.into(), json!(true));
        }
        out
    })
}

/// Why the test-fix cycle cannot run on the project at `repo`, before any session is made for it
/// (None: it can): a family without per-test traces says why.
pub fn cannot_run_on(repo: &std::path::Path) -> Option<String> {
    let files = crate::testing::detect::walk(repo);
    let (framework, reason) = crate::testing::detect::detect_framework(repo, &files);
    match framework {
        Some(f) => match crate::family::support(f.family(), crate::family::Capability::TestFix) {
            crate::family::Support::Built => None,
            crate::family::Support::NotYet(why) => {
                Some(format!("{why}; this project's framework is {f} ({reason})"))
            }
        },
        None => Some(format!(
            "the test-fix cycle found no test framework: {reason}"
        )),
    }
}

/// The project's framework and toolchain and its family's per-test traces, or why the cycle
/// cannot run.
fn suite_tools(
    ctx: &RoleContext,
) -> Result<(Framework, Toolchain, &'static dyn SuiteTrace), FixError> {
    let framework: Framework = crate::session::framework::session_framework(ctx.session, ctx.repo)
        .map_err(|e| FixError::Unsupported(e.to_string()))?;
    let Some(analysis) = crate::family::of(framework.family()).suite_trace() else {
        return Err(FixError::Unsupported(framework.to_string()));
    };
    let tools = crate::family::toolchain(ctx.repo, Some(framework));
    if let Some(why) = analysis.unready(&tools) {
        return Err(FixError::NoCoverage(why));
    }
    Ok((framework, tools, analysis))
}

fn run_cycle(ctx: &RoleContext) -> Result<Outcome, FixError> {
    let (framework, tools, analysis) = suite_tools(ctx)?;
    let end = cycle::run(ctx, framework, &tools, analysis)?;
    let st = &end.state;
    // Out of iterations below the gate: the user decides what next (more iterations, another
    // agent), as the seed marks such a loop blocked.
    let mut out = if st.status == crate::artifacts::CycleStatus::Failure {
        let mut out = Outcome::failed(st.summary.clone());
        out.data
            .insert(crate::tasks::data::BLOCKER.into(), json!(true));
        out
    } else {
        Outcome::completed(st.summary.clone())
    };
    out.artifacts = vec![ctx
        .session
        .root
        .join(crate::artifacts::ITERATION_STATE)
        .display()
        .to_string()];
    let data = &mut out.data;
    data.insert("status".into(), json!(st.status.as_str()));
    data.insert("iterations".into(), json!(st.fixes().count()));
    data.insert(
        "pass_rate".into(),
        json!(st
            .final_validation
            .as_ref()
            .map_or(st.best_pass_rate, |f| f.pass_rate)),
    );
    data.insert("branch".into(), json!(st.branch));
    data.insert("stuck_tests".into(), json!(st.stuck_tests));
    data.insert("tests_run".into(), json!(st.tests_run));
    data.insert("tests_full".into(), json!(st.tests_full));
    if st.status == crate::artifacts::CycleStatus::NeedsAgent {
        data.insert("needs_agent".into(), json!(true));
    }
    Ok(out)
}
