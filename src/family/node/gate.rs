//! L0: `node --check` per generated file; a file that does not parse is a load error and stays
//! out of the run.

use std::path::{Path, PathBuf};

use super::ctx::Ctx;
use super::workspace::generated_files;
use super::LOAD_ERROR_LINES;
use crate::testing::framework::Framework;
use crate::testing::load_error::LoadError;
use crate::testing::runner::RunOutput;

impl Ctx<'_> {
    /// `node --check` on every generated file: unparsable files become load errors, files the
    /// deselect list names by file are left out. None when the gate itself could not run (the
    /// problem is then in `out`).
    pub(super) fn gate(&self, out: &mut RunOutput) -> Option<Vec<PathBuf>> {
        let mut kept = Vec::new();
        for file in generated_files(&self.layer_dir) {
            let rel = self.rel(&file);
            if self.spec.deselect.contains(&rel) {
                continue;
            }
            if !self.node_parses(&file) {
                kept.push(file);
                continue;
            }
            match self.exec(&[self.node(), "--check".into(), self.in_copy(&file)], &[]) {
                Ok(c) if c.success() => kept.push(file),
                Ok(c) => out.load_errors.push(LoadError {
                    error: self.load_error_text(&c.stderr, &file),
                    file: rel,
                    verdict: None,
                }),
                Err(stop) => {
                    self.stopped(stop, out);
                    return None;
                }
            }
        }
        Some(kept)
    }

    /// Whether node itself must be able to parse `file`: always under node --test (node 20 runs
    /// no TypeScript, so a .ts file there is rightly a load error); under jest, vitest and mocha
    /// only plain JavaScript, since their loaders may compile TypeScript.
    pub(super) fn node_parses(&self, file: &Path) -> bool {
        let plain = file
            .extension()
            .is_some_and(|x| x == "js" || x == "mjs" || x == "cjs");
        plain || self.framework == Framework::NodeTest
    }

    /// The first lines of node's complaint (no stack frames), with the copy's path of the file
    /// replaced by the layer-relative name.
    pub(super) fn load_error_text(&self, stderr: &str, file: &Path) -> String {
        let text = stderr.replace(&*file.to_string_lossy(), &self.rel(file));
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .filter(|l| !l.trim_start().starts_with("at ") && !l.starts_with("Node.js v"))
            .take(LOAD_ERROR_LINES)
            .collect::<Vec<_>>()
            .join("\n")
    }
}
