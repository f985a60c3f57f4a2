//! The prompts of the agent-backed generator and repairer, in the family's terms: its framework
//! and idioms (`family::agent::Conventions`), how the project's own tests look (two or three of
//! them as style examples), the code in scope with line numbers, the last run's failures and
//! the lines still missing. A prompt names files relative to the repository only, so the same
//! repository and task give the same prompt (and a replay finds its recording).

use std::fmt::Write as _;
use std::path::Path;

use super::feedback::feedback;
use crate::family::agent::Conventions;
use crate::pipeline::scope::ChangeKind;
use crate::session::scope::load_scope;
use crate::team::error::Result;
use crate::team::RoleContext;
use crate::testing::framework::Framework;

/// Lines of one source file shown in a prompt.
const MAX_SOURCE_LINES: usize = 400;
/// Lines of one style example.
const MAX_EXAMPLE_LINES: usize = 60;
/// Style examples shown.
const MAX_EXAMPLES: usize = 3;

/// The project's facts a prompt is built from.
pub(crate) struct PromptFacts {
    pub conventions: Conventions,
    /// The source files in scope (changed, or all), relative to the repository.
    pub sources: Vec<String>,
    /// Up to three of the project's own test files, relative to the repository.
    pub examples: Vec<String>,
}

impl PromptFacts {
    pub(crate) fn of(ctx: &RoleContext, framework: Framework) -> Result<Self> {
        let scope = load_scope(ctx.session)?;
        let files: Vec<String> = scope
            .files
            .iter()
            .filter(|f| f.kind != ChangeKind::Deleted && ctx.repo.join(&f.path).is_file())
            .map(|f| f.path.clone())
            .collect();
        let sources =
            crate::testing::project_files::classify(ctx.repo, Some(framework), &files).sources;
        let own_tests = crate::testing::project_files::of_repo(ctx.repo, Some(framework)).tests;
        Ok(PromptFacts {
            conventions: crate::family::agent::conventions(framework, ctx.repo),
            examples: style_examples(&own_tests, &sources),
            sources,
        })
    }
}

/// The project's tests closest to the sources in scope (sharing a word of a file name), then
/// the shortest paths: what the agent imitates.
fn style_examples(tests: &[String], sources: &[String]) -> Vec<String> {
    let stem = |f: &str| {
        Path::new(f)
            .file_stem()
            .map(|s| s.to_string_lossy().to_lowercase())
            .unwrap_or_default()
    };
    let words: Vec<String> = sources.iter().map(|s| stem(s)).collect();
    let mut ranked: Vec<&String> = tests.iter().collect();
    ranked.sort_by_key(|t| {
        let s = stem(t);
        let related = words
            .iter()
            .any(|w| !w.is_empty() && s.contains(w.as_str()));
        (!related, t.len(), t.as_str())
    });
    ranked.into_iter().take(MAX_EXAMPLES).cloned().collect()
}

/// The generator's prompt for `layer`.
pub(crate) fn generation(ctx: &RoleContext, layer: &str, facts: &PromptFacts) -> String {
    let c = &facts.conventions;
    let target = ctx.config.coverage_target(layer).unwrap_or(80.0);
    let fb = feedback(&ctx.session.root, layer);
    let mut p = String::new();
    let _ = writeln!(
        p,
        "PURPOSE: write {layer} {} tests in {} for the code in scope, reaching at least {target:.0}% line coverage of it, that pass on the code as it is unless it has a real bug.\n",
        c.framework, c.language
    );
    // The task text names the session's folder; the prompt must not (replay matches by prompt).
    let session = ctx.session.root.display().to_string();
    let task = ctx.task.description.replace(&session, "<session>");
    let _ = writeln!(p, "TASK: {}\n", task.trim());
    p.push_str("CONTEXT:\n\n");
    p.push_str(&super::discoveries::prompt_section(&ctx.session.root));
    if let Ok(strategy) =
        std::fs::read_to_string(ctx.session.root.join("strategy/test-strategy.md"))
    {
        let _ = writeln!(p, "Test strategy:\n\n{}\n", truncate(&strategy, 6000));
    }
    conventions_section(&mut p, c);
    examples_section(&mut p, ctx.repo, c, &facts.examples);
    for file in &facts.sources {
        source_section(&mut p, ctx.repo, file);
    }
    if !fb.avoid.is_empty() {
        let _ = writeln!(
            p,
            "Tests of the last run that failed as written (do not repeat them): {}\n",
            fb.avoid.join(", ")
        );
    }
    if !fb.missing.is_empty() {
        p.push_str(if fb.missing_from_baseline {
            "Lines the project's own tests do not cover (they cover the rest; aim here, a test that covers nothing new is dropped):\n"
        } else {
            "Lines the last run did not cover:\n"
        });
        for (file, lines) in &fb.missing {
            let _ = writeln!(p, "- {file}: {}", ranges(lines));
        }
        p.push('\n');
    }
    let _ = writeln!(
        p,
        "Your working folder is a copy of the project (without its installed dependencies): read any of its files there. A test file you write or change in it is your answer, as is a fenced block.\n"
    );
    let _ = writeln!(
        p,
        "EXPECTED: one fenced code block per test file. Name the file on the first line inside the block as `{} path: {}` (or write `path=<file>` after the opening fence). Every test asserts something.\n\n\
         CONSTRAINTS: write test files only; never change the project's files; no network; no sleeping, no randomness without a fixed seed.",
        c.comment, c.file_name
    );
    p
}

/// The repairer's prompt for the layer's test file `name` (its text `content`) whose tests
/// failed with `failures`.
pub(crate) fn repair(
    ctx: &RoleContext,
    layer: &str,
    facts: &PromptFacts,
    name: &str,
    content: &str,
    failures: &str,
    in_copy: &Path,
) -> String {
    let c = &facts.conventions;
    let mut p = String::new();
    let _ = writeln!(
        p,
        "PURPOSE: repair the {layer} {} file `{name}`: its failing tests are wrong as written (the executor judged the failures to be the tests' own fault, not the code's).\n",
        c.framework
    );
    let _ = writeln!(p, "TASK: fix the mistakes in the failing tests so they test what they meant to; keep every passing test as it is.\n");
    p.push_str("CONTEXT:\n\n");
    let _ = writeln!(p, "The test file `{name}`, with line numbers:\n");
    for (i, line) in content.lines().enumerate() {
        let _ = writeln!(p, "{:>4} | {line}", i + 1);
    }
    let _ = writeln!(p, "\nThe failures:\n\n{}\n", truncate(failures, 6000));
    conventions_section(&mut p, c);
    for file in &facts.sources {
        source_section(&mut p, ctx.repo, file);
    }
    let _ = writeln!(
        p,
        "Your working folder is a copy of the project; the test file is at `{}` in it, where its tests run from. Change it there, or answer with the whole file.\n",
        in_copy.display()
    );
    let _ = writeln!(
        p,
        "EXPECTED: the whole corrected file in one fenced code block whose first line is `{} path: {name}`.\n\n\
         CONSTRAINTS: never weaken an assertion to make it pass on wrong behaviour; do not change the project's files; {} only.",
        c.comment, c.framework
    );
    p
}

/// Where the repairer's copy of the project holds the file under repair when its runner names
/// no place for it.
pub(crate) const REPAIR_DIR: &str = "team-testing-repair";

fn conventions_section(p: &mut String, c: &Conventions) {
    let _ = writeln!(
        p,
        "How tests are written here ({} in {}; a file is named like `{}`):",
        c.framework, c.language, c.file_name
    );
    for idiom in &c.idioms {
        let _ = writeln!(p, "- {idiom}");
    }
    p.push('\n');
}

fn examples_section(p: &mut String, repo: &Path, c: &Conventions, examples: &[String]) {
    for file in examples {
        let Ok(text) = std::fs::read_to_string(repo.join(file)) else {
            continue;
        };
        let _ = writeln!(
            p,
            "Style example, one of the project's own tests `{file}`:\n"
        );
        let _ = writeln!(p, "```{}", c.fence);
        for line in text.lines().take(MAX_EXAMPLE_LINES) {
            let _ = writeln!(p, "{line}");
        }
        let _ = writeln!(p, "```\n");
    }
}

fn source_section(p: &mut String, repo: &Path, file: &str) {
    let Ok(source) = std::fs::read_to_string(repo.join(file)) else {
        return;
    };
    let _ = writeln!(p, "Source of {file}, with line numbers:\n");
    for (i, line) in source.lines().take(MAX_SOURCE_LINES).enumerate() {
        let _ = writeln!(p, "{:>4} | {line}", i + 1);
    }
    p.push('\n');
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// `[1, 2, 3, 7]` as `1-3, 7`.
fn ranges(lines: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut sorted = lines.to_vec();
    sorted.sort_unstable();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ranges_are_compact() {
        assert_eq!(ranges(&[7, 1, 2, 3, 9, 10]), "1-3, 7, 9-10");
        assert_eq!(ranges(&[]), "");
    }

    #[test]
    fn style_examples_prefer_the_tests_of_the_code_in_scope() {
        let tests = [
            "tests/test_zebra.py".to_string(),
            "tests/test_calc.py".to_string(),
            "tests/a/test_other.py".to_string(),
        ];
        let picked = style_examples(&tests, &["calc/calc.py".to_string()]);
        assert_eq!(picked[0], "tests/test_calc.py");
        assert_eq!(picked.len(), 3);
    }
}
