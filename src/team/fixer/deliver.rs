//! What the loop delivers: a patch per committed iteration, the combined patch from the base to
//! the last commit, and the manifest `apply --fixes` checks the user's tree against. Patches are
//! written by git straight into their files (whole, binary-safe); hashes are of the blobs' bytes.

use std::path::Path;

use super::worktree::Worktree;
use super::FixError;
use crate::artifacts::{
    FixManifest, FixPatch, FixedFile, IterationOutcome, IterationState, COMBINED_PATCH,
    FIXES_MANIFEST,
};
use crate::util::{atomic_write_json, mkdirs};

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
    mkdirs(&session.join("fixes"))?;
    wt.diff_to_file(&format!("{commit}^"), commit, &session.join(&rel))?;
    Ok(rel)
}

/// The combined patch and the manifest, when the loop committed anything. Idempotent: a retry
/// or a resume writes the same files again.
pub fn write(session: &Path, wt: &Worktree, state: &IterationState) -> Result<(), FixError> {
    let head = wt.head()?;
    if head == state.base_commit {
        return Ok(());
    }
    mkdirs(&session.join("fixes"))?;
    wt.diff_to_file(&state.base_commit, &head, &session.join(COMBINED_PATCH))?;
    let scratch = session.join("workspace").join("fix").join("scratch");
    mkdirs(&scratch)?;
    let sha = |commit: &str, path: &str| {
        wt.blob(commit, path, &scratch)
            .map(|b| crate::agents::record::sha256_hex(&b))
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
            base_sha256: sha(&state.base_commit, &path),
            head_sha256: sha(&head, &path),
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
