//! L0: the files that do not compile leave the copy, each a load error with rustc's lines.

use super::ctx::Ctx;
use super::stage::{stage, Staged};
use crate::testing::exec::ExecError;
use crate::testing::load_error::LoadError;
use crate::testing::runner::RunOutput;
use crate::util::tail_lines;

/// Located error lines kept per unloadable file.
pub(super) const ERROR_LINES: usize = 8;

/// L0: builds every test target (`--keep-going`, so all broken files show in one round); files
/// that do not compile become load errors and leave the copy. A crate that does not build
/// without them is an environment problem. Bounded: one round per file, plus the last.
pub(super) fn gate(
    ctx: &Ctx,
    staged: &mut Vec<Staged>,
    out: &mut RunOutput,
) -> Result<(), ExecError> {
    let argv = ctx.argv(&["build", "--tests", "--keep-going", "--message-format=short"]);
    out.command = argv.clone();
    let mut log = String::new();
    for _round in 0..=staged.len() {
        stage(ctx, staged).map_err(|cause| ExecError::Copy {
            from: ctx.spec.repo.to_path_buf(),
            to: ctx.copy.clone(),
            cause,
        })?;
        let build = ctx.exec(&argv)?;
        if build.success() {
            return Ok(());
        }
        let text = format!("{}{}", build.stderr, build.stdout);
        log.push_str(&text);
        ctx.keep("cargo-build", "txt", &log, out);
        let units = failed_units(&text);
        let ours: Vec<Staged> = staged
            .iter()
            .filter(|s| units.contains(&format!("test \"{}\"", s.target)))
            .cloned()
            .collect();
        let theirs = units.len().saturating_sub(ours.len());
        if ours.is_empty() || theirs > 0 {
            out.output_tail = tail_lines(&text, 60);
            let errors = first_errors(&text, ERROR_LINES);
            return Err(ExecError::CrateDoesNotBuild { errors });
        }
        for s in &ours {
            out.load_errors.push(LoadError {
                file: s.original.clone(),
                error: file_errors(&text, s),
                verdict: None,
            });
        }
        staged.retain(|s| !ours.contains(s));
    }
    Err(ExecError::StillDoesNotBuild)
}

/// `error: could not compile `pkg` (test "tt_L1_x") due to ...` -> `test "tt_L1_x"`; also
/// `lib`, `lib test`, `bin "x"`: which compilation units failed.
pub(super) fn failed_units(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("error: could not compile `"))
        .filter_map(|rest| rest.split_once("` (")?.1.split_once(')'))
        .map(|(unit, _)| unit.to_string())
        .collect()
}

/// A file's errors from `--message-format=short` lines (`tests/tt_L1_x.rs:3:5: error[E..]: ..`),
/// renamed to the file's name in the layer folder; the unit's failure line if none is located.
pub(super) fn file_errors(text: &str, s: &Staged) -> String {
    let path = format!("tests/{}.rs:", s.target);
    let lines: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let at = l.find(&path)?;
            let rest = &l[at + path.len()..];
            let located = at == 0 || l[..at].ends_with('/');
            (located && rest.contains(": error")).then(|| format!("{}:{rest}", s.original))
        })
        .take(ERROR_LINES)
        .collect();
    if lines.is_empty() {
        let unit = format!("(test \"{}\")", s.target);
        return text
            .lines()
            .find(|l| l.contains(&unit))
            .unwrap_or("does not compile")
            .trim()
            .to_string();
    }
    lines.join("\n")
}

/// The first `n` error lines of a failed build.
pub(super) fn first_errors(text: &str, n: usize) -> String {
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("error") || l.contains(": error"))
        .take(n)
        .collect();
    if errors.is_empty() {
        tail_lines(text, n)
    } else {
        errors.join("\n")
    }
}
