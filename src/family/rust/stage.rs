//! The layer's generated files as the copy's integration-test targets.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use super::ctx::Ctx;
use super::staged_name;
use crate::workspace::mirror;

/// A generated test file and the target it is staged as.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Staged {
    /// Its name in the layer's test folder.
    pub original: String,
    /// The target name (`tests/<target>.rs` in the copy).
    pub target: String,
}

/// The layer's `*.rs` files (top level only), sorted, with distinct target names.
pub(super) fn generated_files(test_dir: &Path, layer: &str) -> Vec<Staged> {
    let mut names: Vec<String> = std::fs::read_dir(test_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".rs"))
        .collect();
    names.sort();
    let mut taken = BTreeSet::new();
    names
        .into_iter()
        .map(|original| {
            let base = staged_name(layer, &original);
            let mut target = base.clone();
            // `a-b.rs` and `a_b.rs` would both become `tt_L1_a_b`.
            for n in 2.. {
                if taken.insert(target.clone()) {
                    break;
                }
                target = format!("{base}_{n}");
            }
            Staged { original, target }
        })
        .collect()
}

/// Mirrors the repository into the copy with the staged test files (and, for a crate with
/// `autotests = false`, their `[[test]]` entries).
pub(super) fn stage(ctx: &Ctx, staged: &[Staged]) -> io::Result<()> {
    let mut extra = BTreeMap::new();
    for s in staged {
        let body = std::fs::read(ctx.spec.test_dir.join(&s.original))?;
        extra.insert(PathBuf::from(format!("tests/{}.rs", s.target)), body);
    }
    let manifest = std::fs::read_to_string(ctx.spec.repo.join("Cargo.toml"))?;
    let targets: Vec<&str> = staged.iter().map(|s| s.target.as_str()).collect();
    if let Some(m) = with_test_targets(&manifest, &targets) {
        extra.insert(PathBuf::from("Cargo.toml"), m.into_bytes());
    }
    mirror(ctx.spec.repo, &ctx.copy, &extra)?;
    if !ctx.spec.repo.join("Cargo.lock").exists() {
        if let Some(lock) = generated_lock(ctx) {
            extra.insert(PathBuf::from("Cargo.lock"), lock);
            mirror(ctx.spec.repo, &ctx.copy, &extra)?;
        }
    }
    Ok(())
}

/// A Cargo.lock for a crate that has none: the copy is read-only to the sandboxed runs, where
/// cargo would write one. Made once per session by `cargo generate-lockfile --offline` in the
/// copy, outside the sandbox (it resolves versions from the local index and runs nothing of the
/// crate), and kept beside the copies; None when it cannot be made (cargo then says why).
fn generated_lock(ctx: &Ctx) -> Option<Vec<u8>> {
    let kept = ctx.copy.with_file_name("cargo-generated.lock");
    if let Ok(lock) = crate::util::read_regular(&kept) {
        return Some(lock);
    }
    let cargo = ctx.cargo.clone();
    let made = crate::proc::run_captured(
        &[&cargo, "generate-lockfile", "--offline"],
        &ctx.copy,
        std::time::Duration::from_secs(120),
    )
    .ok()?;
    if !made.success() {
        return None;
    }
    let lock = crate::util::read_regular(&ctx.copy.join("Cargo.lock")).ok()?;
    let _ = crate::util::write_nofollow(&kept, &lock);
    Some(lock)
}

/// Cargo only finds `tests/*.rs` by itself when autotests is on; otherwise each staged file
/// needs its own `[[test]]` entry, appended (a table array after anything is valid TOML).
pub(super) fn with_test_targets(manifest: &str, targets: &[&str]) -> Option<String> {
    let off = manifest.lines().any(|l| {
        let l: String = l
            .split('#')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        l == "autotests=false"
    });
    if !off || targets.is_empty() {
        return None;
    }
    let mut m = manifest.trim_end().to_string();
    for t in targets {
        m.push_str(&format!(
            "\n\n[[test]]\nname = \"{t}\"\npath = \"tests/{t}.rs\""
        ));
    }
    m.push('\n');
    Some(m)
}
