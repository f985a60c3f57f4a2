//! The test-fix cycle section: the summary, the branch, each iteration (strategy, pass rate,
//! outcome, changed files, tests run, commit), the final validation, what progressive testing
//! saved, stuck and pinned tests, the fixed files and the latest plan's modification points.

use crate::artifacts::{Iteration, IterationOutcome};
use crate::report::document::{code, toned, Block, Extra, Section, Table, Text, Tone};
use crate::report::fix_cycle::FixCycleReport;

pub fn fix_cycle(f: &FixCycleReport, session_id: &str) -> Section {
    let s = &f.state;
    let mut out = Section::new("Test-Fix Cycle", "fix-cycle").nav("Fix cycle");
    out.para(s.summary.as_str());
    if !s.branch.is_empty() {
        out.para(
            Text::from("The code was fixed in a git worktree on branch ")
                .code(s.branch.as_str())
                .plain(", never in your tree."),
        );
    }
    if !s.iterations.is_empty() {
        if s.iterations.len() > 1 {
            out.push(Block::Extra(Extra::FixCycleChart));
        }
        out.push(Block::Table(Table::new(
            &[
                "Iteration",
                "Strategy",
                "Pass rate",
                "Outcome",
                "Changed files",
                "Tests run",
                "Commit",
            ],
            s.iterations.iter().map(row).collect(),
        )));
    }
    if let Some(v) = &s.final_validation {
        let tone = if v.passed == v.total {
            Tone::Good
        } else {
            Tone::Bad
        };
        out.para(
            Text::from(format!(
                "Final validation (the whole suite at the last commit): {} of {} passed (",
                v.passed, v.total
            ))
            .tone(tone, format!("{:.1}%", v.pass_rate))
            .plain(")."),
        );
    }
    if s.tests_full > 0 {
        out.para(format!(
            "Progressive testing: the iterations ran {} tests where the whole suite each time would have been {} ({:.0}% fewer).",
            s.tests_run,
            s.tests_full,
            100.0 - s.tests_run as f64 * 100.0 / s.tests_full as f64
        ));
    }
    if !s.stuck_tests.is_empty() {
        out.para("Stuck tests (failing 3 or more iterations in a row):");
        out.push(Block::List(s.stuck_tests.iter().map(code).collect()));
    }
    if !s.pinned_tests.is_empty() {
        out.para(
            Text::from(format!(
                "{} generated test(s) of this session fail against the fixed code: they asserted the old behaviour. Generate tests anew after ",
                s.pinned_tests.len()
            ))
            .code("apply --fixes")
            .plain(" (a new ")
            .code("team-testing run")
            .plain(") rather than applying these as they are:"),
        );
        out.push(Block::List(s.pinned_tests.iter().map(code).collect()));
    }
    fixed_files(&mut out, f, session_id);
    plan(&mut out, f);
    out
}

/// One iteration's cells: iteration 0 is the suite before any fix (no strategy, no note).
fn row(i: &Iteration) -> Vec<Text> {
    let initial = i.iteration == 0;
    let strategy = if initial { "-" } else { i.strategy.as_str() };
    let words = format!("{:?}", i.outcome);
    let mut outcome = match i.outcome {
        IterationOutcome::Improved => toned(Tone::Good, words),
        IterationOutcome::Worse | IterationOutcome::Regressed | IterationOutcome::Rejected => {
            toned(Tone::Bad, words)
        }
        IterationOutcome::Unchanged | IterationOutcome::NoChange => toned(Tone::Muted, words),
        IterationOutcome::Initial => words.into(),
    };
    if !(i.note.is_empty() || initial) {
        outcome = outcome.plain(format!(": {}", i.note));
    }
    let changed = if i.modified_files.is_empty() {
        "-".into()
    } else {
        list_of_code(&i.modified_files)
    };
    let ran = if initial {
        format!("{} (all)", i.suite_size)
    } else if i.selected_tests.is_empty() {
        "-".to_string()
    } else {
        format!("{} of {}", i.selected_tests.len(), i.suite_size)
    };
    let commit = match (&i.commit, &i.rollback_commit) {
        (Some(c), Some(r)) => {
            commit(commit(Text::default(), c).plain(" (rolled back by "), r).plain(")")
        }
        (Some(c), None) => commit(Text::default(), c),
        _ => "-".into(),
    };
    vec![
        i.iteration.to_string().into(),
        strategy.into(),
        format!("{:.1}% → {:.1}%", i.previous_pass_rate, i.pass_rate).into(),
        outcome,
        changed,
        ran.into(),
        commit,
    ]
}

/// A commit shortened to 10 characters, the whole hash in its tooltip.
fn commit(t: Text, hash: &str) -> Text {
    t.code(short(hash)).titled(hash)
}

fn short(commit: &str) -> String {
    commit.chars().take(10).collect()
}

/// `a`, `b`: each item as code.
fn list_of_code(items: &[String]) -> Text {
    items.iter().enumerate().fold(Text::default(), |t, (n, x)| {
        if n == 0 { t } else { t.plain(", ") }.code(x.as_str())
    })
}

fn fixed_files(out: &mut Section, f: &FixCycleReport, session_id: &str) {
    if f.fixed_files.is_empty() {
        return;
    }
    out.para(
        Text::from(format!(
            "The fixes change {} file(s). ",
            f.fixed_files.len()
        ))
        .code(format!("team-testing apply --fixes {session_id}"))
        .plain(" applies them (it refuses if those files changed since)."),
    );
    let rows = f
        .fixed_files
        .iter()
        .map(|x| vec![code(x.path.as_str()), x.status().into()])
        .collect();
    out.push(Block::Table(Table::new(&["File", "Change"], rows)));
}

/// The latest plan: where the failures point.
fn plan(out: &mut Section, f: &FixCycleReport) {
    let Some(plan) = f.plan.as_ref().filter(|p| !p.fixes.is_empty()) else {
        return;
    };
    out.sub(
        format!(
            "Fix plan of iteration {} ({} strategy)",
            plan.iteration, plan.strategy
        ),
        "fix-plan",
    );
    out.para("Where the failures point (see analysis/fault-localisation.md).");
    let rows = plan
        .fixes
        .iter()
        .flat_map(|fix| {
            fix.modification_points.iter().map(move |p| {
                vec![
                    fix.tests.len().to_string().into(),
                    code(format!("{}:{}", p.file, p.line)),
                    p.function.as_deref().unwrap_or("-").into(),
                    p.reason.as_str().into(),
                ]
            })
        })
        .collect();
    out.push(Block::Table(Table::new(
        &["Failing tests", "Modification point", "Function", "Reason"],
        rows,
    )));
}
