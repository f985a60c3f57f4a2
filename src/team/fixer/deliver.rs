//! What the loop delivers: a patch per committed iteration, the combined patch from the base to
//! the last commit, and the manifest `apply --fixes` checks the user's tree against.

use std::path::Path;

use super::worktree::Worktree;
use super::FixError;
use crate::artifacts::{FixManifest, FixPatch, FixedFile, COMBINED_PATCH, FIXES_MANIFEST};
use crate::artifacts::{IterationOutcome, IterationState};
use crate::util::{atomic_write, atomic_write_json, mkdirs};

/// The subject of an iteration's commit in the worktree (the seed's form).
pub fn commit_subject(n: u32, strategy: &str, before: f64, after: f64) -> String {
    format!("test-cycle: iteration {n} - {strategy} strategy (pass: {before:.1}% → {after:.1}%)")
}

/// Writes `fixes/iteration-N.patch` (the commit's own change); its session-relative path.
pub fn iteration_patch(
    session: &Path,
    wt: &Worktree,
    n: u32,
    commit: &str,
) -> Result<String, FixError> {
    let rel = format!("fixes/iteration-{n}.patch");
    let diff = wt.diff(&format!("{commit}^"), commit)?;
    mkdirs(&session.join("fixes"))?;
    atomic_write(&session.join(&rel), diff.as_bytes())?;
    Ok(rel)
}

/// The combined patch and the manifest, when the loop committed anything.
pub fn write(session: &Path, wt: &Worktree, state: &IterationState) -> Result<(), FixError> {
    let head = wt.head()?;
    if head == state.base_commit {
        return Ok(());
    }
    mkdirs(&session.join("fixes"))?;
    let diff = wt.diff(&state.base_commit, &head)?;
    atomic_write(&session.join(COMBINED_PATCH), diff.as_bytes())?;
    let git_blob = |commit: &str, path: &str| -> Option<String> {
        let out = crate::proc::run_captured(
            &["git", "show", &format!("{commit}:{path}")],
            &wt.path,
            std::time::Duration::from_secs(60),
        )
        .ok()
        .filter(|o| o.success())?;
        Some(crate::agents::record::sha256_hex(out.stdout.as_bytes()))
    };
    let files = wt
        .name_status(&state.base_commit, &head)?
        .into_iter()
        .map(|(status, path)| FixedFile {
            status: match status {
                'A' => "added",
                'D' => "deleted",
                _ => "modified",
            }
            .to_string(),
            base_sha256: git_blob(&state.base_commit, &path),
            head_sha256: crate::util::read_regular(&wt.path.join(&path))
                .ok()
                .map(|b| crate::agents::record::sha256_hex(&b)),
            path,
        })
        .collect();
    let iterations = state
        .fixes()
        .filter(|i| i.outcome == IterationOutcome::Improved)
        .filter_map(|i| {
            Some(FixPatch {
                iteration: i.iteration,
                patch: i.patch.clone()?,
                commit: i.commit.clone()?,
                message: commit_subject(
                    i.iteration,
                    i.strategy.as_str(),
                    i.previous_pass_rate,
                    i.pass_rate,
                ),
            })
        })
        .collect();
    let manifest = FixManifest {
        version: 1,
        branch: wt.branch.clone(),
        worktree: wt.path.display().to_string(),
        user_head: state.user_head.clone(),
        base_commit: state.base_commit.clone(),
        head_commit: head,
        iterations,
        files,
    };
    atomic_write_json(&session.join(FIXES_MANIFEST), &manifest)?;
    Ok(())
}
