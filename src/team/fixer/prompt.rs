//! The fixer's prompt: the failing tests with their evidence, the localisation, the strategy,
//! the stuck tests and what earlier iterations did, and the files to change as they are now.

use std::collections::BTreeSet;
use std::path::Path;

use super::plan::{Failure, FixPlan};
use super::strategy::Strategy;
use crate::artifacts::{Iteration, IterationOutcome};

/// Files quoted whole; a bigger one is named, not quoted.
const QUOTE_MAX: u64 = 64 * 1024;

pub struct PromptInput<'a> {
    pub iteration: u32,
    pub max_iterations: u32,
    pub pass_rate: f64,
    pub strategy: Strategy,
    pub failures: &'a [Failure],
    pub plan: &'a FixPlan,
    pub stuck: &'a [String],
    pub history: &'a [Iteration],
    /// The worktree, where the quoted files are read.
    pub code: &'a Path,
}

pub fn build(p: &PromptInput) -> String {
    let mut out = format!(
        "PURPOSE: fix the code so that the failing tests pass | Success: every listed test passes and no passing test breaks\n\
         ITERATION: {} of at most {}; pass rate now {:.1}%\n\
         Strategy: {} - {}\n\n",
        p.iteration,
        p.max_iterations,
        p.pass_rate,
        p.strategy.as_str(),
        p.strategy.instruction()
    );
    if !p.stuck.is_empty() {
        out.push_str("STUCK TESTS (failing 3 or more iterations in a row: the fixes so far did not reach them; look past the top-ranked lines, and check whether the test itself expects something wrong):\n");
        for t in p.stuck {
            out.push_str(&format!("- {t}\n"));
        }
        out.push('\n');
    }
    out.push_str(&format!("FAILING TESTS ({}):\n", p.failures.len()));
    for f in p.failures {
        out.push_str(&format!(
            "### {}\n{} at {}\n{}\n\n",
            f.id,
            f.error,
            f.location.as_deref().unwrap_or("an unknown place"),
            f.excerpt.trim_end()
        ));
    }
    out.push_str("FAULT LOCALISATION (per group of failures, the most suspicious lines first):\n");
    for fix in &p.plan.fixes {
        out.push_str(&format!("- {}\n", fix.root_cause));
        for m in &fix.modification_points {
            out.push_str(&format!(
                "  - {}:{} in {}: `{}` ({})\n",
                m.file,
                m.line,
                m.function.as_deref().unwrap_or("module level"),
                m.code,
                m.reason
            ));
        }
    }
    let done: Vec<&Iteration> = p.history.iter().filter(|i| i.iteration > 0).collect();
    if !done.is_empty() {
        out.push_str("\nPREVIOUS ITERATIONS:\n");
        for i in done {
            let what = match i.outcome {
                IterationOutcome::Improved => "improved, committed".to_string(),
                IterationOutcome::Regressed => "regressed, rolled back".to_string(),
                IterationOutcome::Unchanged => "no better, dropped".to_string(),
                IterationOutcome::Worse => "worse, dropped".to_string(),
                IterationOutcome::Rejected => format!("rejected by the L0 validation: {}", i.note),
                IterationOutcome::NoChange => "no change was made".to_string(),
                IterationOutcome::Initial => String::new(),
            };
            out.push_str(&format!(
                "- iteration {} ({}): changed {}; pass {:.1}% -> {:.1}%: {what}\n",
                i.iteration,
                i.strategy.as_str(),
                if i.modified_files.is_empty() {
                    "nothing".to_string()
                } else {
                    i.modified_files.join(", ")
                },
                i.previous_pass_rate,
                i.pass_rate
            ));
        }
    }
    let mut files: BTreeSet<String> = BTreeSet::new();
    for fix in &p.plan.fixes {
        files.extend(fix.modification_points.iter().map(|m| m.file.clone()));
    }
    files.extend(
        p.failures
            .iter()
            .map(|f| f.id.split("::").next().unwrap_or(&f.id).to_string()),
    );
    out.push_str("\nFILES (as they are now, repository-relative):\n");
    for rel in files {
        // Only the project's own files: a test id or a frame may name any path.
        let Some(path) = super::plan::inside(p.code, &rel) else {
            continue;
        };
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() && m.len() <= QUOTE_MAX => {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let ext = Path::new(&rel).extension().and_then(|e| e.to_str());
                let (fence, comment) = match ext {
                    Some("py") => ("python", "#"),
                    Some("rs") => ("rust", "//"),
                    Some(other) => (other, "//"),
                    None => ("", "#"),
                };
                out.push_str(&format!("```{fence}\n{comment} path: {rel}\n{text}```\n\n"));
            }
            Ok(_) => out.push_str(&format!("- {rel} (too big to quote)\n")),
            Err(_) => {}
        }
    }
    out.push_str(
        "ANSWER: the whole new content of every file you change, each as a fenced code block whose first line is `# path: <repository-relative path>` (`// path: …` in languages whose comments start so), or write them into your working folder at those paths. Change code, not tests, unless a test is shown to be wrong.\n",
    );
    out
}
