//! L0 code validation (the seed's IMPL-001.3) and the quality gate before the loop (FIX-001),
//! and the same validation of each change the agent makes. The code is checked in a mirror, so
//! importing it never runs in the user's tree or the worktree.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use super::{suite_tools, FixError};
use crate::family::code_check;
use crate::tasks::Outcome;
use crate::team::util::{sandbox_for, time_left};
use crate::team::RoleContext;
use crate::testing::code_check::{CheckInput, CodeCheck, CodeIssue};
use crate::testing::framework::Framework;
use crate::testing::toolchain::Toolchain;
use crate::util::{atomic_write, mkdirs};

/// The report of FIX-001, relative to the session.
pub const L0_REPORT: &str = "analysis/l0-validation.md";

/// Checks `root` (a mirror) with `changed` as the code that is new, with the checks of
/// `framework`'s family (its compiler or checker, then the shared text checks).
fn check(
    ctx: &RoleContext,
    name: &str,
    root: &Path,
    changed: &[String],
    (framework, tools): (Framework, &Toolchain),
) -> Result<CodeCheck, FixError> {
    let scratch = ctx
        .session
        .root
        .join("workspace")
        .join("fix")
        .join(format!("{name}.tmp"));
    mkdirs(&scratch)?;
    let runner = crate::family::runner_for(framework);
    let sandbox = sandbox_for(
        ctx,
        name,
        runner.read_roots(tools, ctx.repo),
        std::slice::from_ref(&scratch),
    )?;
    Ok(code_check::check(&CheckInput {
        root,
        changed,
        family: framework.family(),
        tools,
        sandbox: sandbox.as_ref(),
        scratch: &scratch,
        deadline: std::time::Instant::now() + time_left(ctx.deadline)?.mul_f64(0.25),
    })?)
}

/// FIX-001: the project's code as it is (the change's files judged for placeholders, imports and
/// mock leakage), and the failing tests the loop will work on.
pub fn run(ctx: &RoleContext) -> Result<Outcome, FixError> {
    let (framework, tools, analysis) = suite_tools(ctx)?;
    let mirror = ctx.session.root.join("workspace").join("fix").join("l0");
    crate::workspace::mirror(ctx.repo, &mirror, &BTreeMap::new()).map_err(|cause| {
        crate::team::error::RoleError::Mirror {
            into: mirror.clone(),
            cause,
        }
    })?;
    let changed: Vec<String> = crate::session::framework::strategist_outcome(ctx.session)
        .map(|o| o.priority_files())
        .unwrap_or_default()
        .into_iter()
        .filter(|f| analysis.is_code(f))
        .collect();
    let found = check(ctx, "l0", &mirror, &changed, (framework, &tools))?;
    let baseline = crate::util::read_json::<crate::artifacts::RunRecord>(
        &ctx.session.root.join("results/baseline.json"),
    )
    .ok();
    let failing: Vec<String> = baseline
        .as_ref()
        .map(|b| {
            b.tests()
                .iter()
                .filter(|t| {
                    matches!(
                        t.status,
                        crate::artifacts::RecordedStatus::Failed
                            | crate::artifacts::RecordedStatus::Error
                    )
                })
                .map(|t| t.id.clone())
                .collect()
        })
        .unwrap_or_default();
    let carried = super::carried::tests(&ctx.session.root, analysis).defect_ids;
    let mut md = found.markdown();
    md.push_str(&format!(
        "\n## Quality gate\n\n- The project's own suite: {}\n",
        match &baseline {
            Some(b) => format!("{} tests, {} failing", b.total, failing.len()),
            None => "did not run (see the strategy)".into(),
        }
    ));
    for t in &failing {
        md.push_str(&format!("  - `{t}`\n"));
    }
    md.push_str(&format!(
        "- Tests of this session that found code defects: {}\n",
        carried.len()
    ));
    for t in &carried {
        md.push_str(&format!("  - `{t}`\n"));
    }
    mkdirs(&ctx.session.root.join("analysis"))?;
    atomic_write(&ctx.session.root.join(L0_REPORT), md.as_bytes())?;
    let critical = found.critical();
    let mut out = if critical.is_empty() {
        Outcome::completed(format!(
            "L0 code validation: no critical issue ({} warning(s), {} file(s) checked); {} failing test(s) to fix",
            found.issues.len(),
            found.checked.len(),
            failing.len() + carried.len()
        ))
    } else {
        let mut out = Outcome::failed(format!(
            "L0 code validation found {} critical issue(s), which block the test-fix loop: {}",
            critical.len(),
            critical
                .iter()
                .map(|i| describe(i))
                .collect::<Vec<_>>()
                .join("; ")
        ));
        out.data
            .insert(crate::tasks::data::BLOCKER.into(), json!(true));
        out
    };
    out.artifacts = vec![ctx.session.root.join(L0_REPORT).display().to_string()];
    out.data.insert("l0".into(), json!(found));
    out.data
        .insert("failing_tests".into(), json!(failing.len() + carried.len()));
    Ok(out)
}

fn describe(i: &CodeIssue) -> String {
    format!(
        "{}{}: {}",
        i.file,
        i.line.map(|l| format!(":{l}")).unwrap_or_default(),
        i.message
    )
}

/// Validates a change to `modified` in the loop's mirror (refreshed from the worktree first):
/// the critical issues, in a sentence, when there are any.
pub fn change(
    ctx: &RoleContext,
    worktree: &Path,
    mirror: &Path,
    modified: &[String],
    (framework, tools): (Framework, &Toolchain),
) -> Result<Option<String>, FixError> {
    crate::workspace::mirror(worktree, mirror, &BTreeMap::new()).map_err(|cause| {
        crate::team::error::RoleError::Mirror {
            into: mirror.to_path_buf(),
            cause,
        }
    })?;
    let is_code = crate::family::of(framework.family())
        .suite_trace()
        .map(|t| move |f: &str| t.is_code(f));
    let code: Vec<String> = modified
        .iter()
        .filter(|f| is_code.as_ref().is_some_and(|is| is(f)) && mirror.join(f).is_file())
        .cloned()
        .collect();
    if code.is_empty() {
        return Ok(None);
    }
    let found = check(ctx, "l0-change", mirror, &code, (framework, tools))?;
    let critical = found.critical();
    Ok((!critical.is_empty()).then(|| {
        critical
            .iter()
            .map(|i| describe(i))
            .collect::<Vec<_>>()
            .join("; ")
    }))
}
