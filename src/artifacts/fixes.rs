//! `fixes/`: what a test-fix cycle leaves in the session. Each committed iteration's patch
//! (`fixes/iteration-N.patch`), the whole change (`fixes/combined.patch`, `git diff --binary
//! <base_commit> <head_commit>` made in the fix worktree, paths relative to the repository's top
//! level) and this manifest, which `apply --fixes` reads to know what the patch may touch and
//! what each file held before and after.

use serde::{Deserialize, Serialize};

pub const FIXES_MANIFEST: &str = "fixes/manifest.json";
pub const COMBINED_PATCH: &str = "fixes/combined.patch";

/// The version this code writes.
pub const FIX_MANIFEST_VERSION: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FixManifest {
    pub version: u32,
    /// The fix worktree's branch (`team-testing/fix/<session>`): it holds one commit per
    /// iteration.
    pub branch: String,
    /// Where the fix worktree is (or was).
    pub worktree: String,
    /// The user's HEAD when the worktree was made.
    pub user_head: String,
    /// The worktree's first commit: the user's HEAD plus their uncommitted changes. The combined
    /// patch applies to it.
    pub base_commit: String,
    /// The worktree's last commit.
    pub head_commit: String,
    pub iterations: Vec<FixPatch>,
    /// Every file the combined patch touches.
    pub files: Vec<FixedFile>,
}

/// One committed iteration of the cycle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FixPatch {
    pub iteration: u32,
    /// Session-relative (`fixes/iteration-1.patch`).
    pub patch: String,
    pub commit: String,
    pub message: String,
}

/// One file the fixes touch, with its content's sha256 (hex) before and after; None where the
/// file does not exist (added: no base; deleted: no head). A symbolic link's content is its
/// target, as git stores it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FixedFile {
    /// Relative to the repository's top level, `/`-separated.
    pub path: String,
    /// [`FixedFile::MODIFIED`], [`FixedFile::ADDED`] or [`FixedFile::DELETED`].
    pub status: String,
    pub base_sha256: Option<String>,
    pub head_sha256: Option<String>,
}

impl FixedFile {
    pub const MODIFIED: &'static str = "modified";
    pub const ADDED: &'static str = "added";
    pub const DELETED: &'static str = "deleted";

    /// The status as written, or what the hashes say when it is missing.
    pub fn status(&self) -> &str {
        match (self.status.as_str(), &self.base_sha256, &self.head_sha256) {
            (s, _, _) if !s.is_empty() => s,
            (_, None, Some(_)) => Self::ADDED,
            (_, Some(_), None) => Self::DELETED,
            _ => Self::MODIFIED,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_is_tolerant_missing_fields_default_and_unknown_ones_are_ignored() {
        let m: FixManifest = serde_json::from_str(
            r#"{"branch": "team-testing/fix/TST-1", "later_field": [1, 2],
                "files": [{"path": "calc/ops.py", "head_sha256": "ab", "extra": true}]}"#,
        )
        .unwrap();
        assert_eq!(m.version, 0);
        assert_eq!(m.branch, "team-testing/fix/TST-1");
        assert!(m.iterations.is_empty());
        assert_eq!(m.files[0].base_sha256, None);
        assert_eq!(m.files[0].status(), FixedFile::ADDED);
    }

    #[test]
    fn a_manifest_reads_back_as_written() {
        let m = FixManifest {
            version: FIX_MANIFEST_VERSION,
            branch: "b".into(),
            iterations: vec![FixPatch {
                iteration: 1,
                patch: "fixes/iteration-1.patch".into(),
                commit: "c1".into(),
                message: "fix mean".into(),
            }],
            files: vec![FixedFile {
                path: "calc/ops.py".into(),
                status: FixedFile::MODIFIED.into(),
                base_sha256: Some("a".into()),
                head_sha256: Some("b".into()),
            }],
            ..Default::default()
        };
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<FixManifest>(&text).unwrap(), m);
    }
}
