//! The test-fix cycle as HTML (what the Markdown has): the summary, the branch, each iteration
//! (strategy, pass rate, outcome, changed files, tests run, commit) with the pass rate drawn
//! over the iterations, the final validation, what progressive testing saved, stuck and pinned
//! tests, the fixed files and the latest plan's modification points.

use std::fmt::Write as _;

use super::charts::{line_chart, LineChart, Series};
use super::escape::{esc, table};
use crate::artifacts::{Iteration, IterationOutcome};
use crate::report::fix_cycle::FixCycleReport;

pub fn section(out: &mut String, f: &FixCycleReport, session_id: &str) {
    let s = &f.state;
    let _ = writeln!(
        out,
        "<h2 id=\"fix-cycle\">Test-Fix Cycle</h2>\n<p>{}</p>",
        esc(&s.summary)
    );
    if !s.branch.is_empty() {
        let _ = writeln!(
            out,
            "<p>The code was fixed in a git worktree on branch <code>{}</code>, never in your tree.</p>",
            esc(&s.branch)
        );
    }
    if !s.iterations.is_empty() {
        if s.iterations.len() > 1 {
            chart(out, &s.iterations);
        }
        let rows: Vec<Vec<String>> = s.iterations.iter().map(row).collect();
        table(
            out,
            "",
            &[
                "Iteration",
                "Strategy",
                "Pass rate",
                "Outcome",
                "Changed files",
                "Tests run",
                "Commit",
            ],
            &rows,
        );
    }
    if let Some(v) = &s.final_validation {
        let _ = writeln!(
            out,
            "<p>Final validation (the whole suite at the last commit): {} of {} passed (<span class=\"{}\">{:.1}%</span>).</p>",
            v.passed,
            v.total,
            if v.passed == v.total { "good" } else { "bad" },
            v.pass_rate
        );
    }
    if s.tests_full > 0 {
        let _ = writeln!(
            out,
            "<p>Progressive testing: the iterations ran {} tests where the whole suite each time would have been {} ({:.0}% fewer).</p>",
            s.tests_run,
            s.tests_full,
            100.0 - s.tests_run as f64 * 100.0 / s.tests_full as f64
        );
    }
    if !s.stuck_tests.is_empty() {
        out.push_str("<p>Stuck tests (failing 3 or more iterations in a row):</p>");
        code_list(out, &s.stuck_tests);
    }
    if !s.pinned_tests.is_empty() {
        let _ = write!(
            out,
            "<p>{} generated test(s) of this session fail against the fixed code: they asserted the old behaviour. Generate tests anew after <code>apply --fixes</code> (a new <code>team-testing run</code>) rather than applying these as they are:</p>",
            s.pinned_tests.len()
        );
        code_list(out, &s.pinned_tests);
    }
    if !f.fixed_files.is_empty() {
        let _ = write!(
            out,
            "<p>The fixes change {} file(s). <code>team-testing apply --fixes {}</code> applies them (it refuses if those files changed since).</p>",
            f.fixed_files.len(),
            esc(session_id)
        );
        let rows: Vec<Vec<String>> = f
            .fixed_files
            .iter()
            .map(|x| vec![format!("<code>{}</code>", esc(&x.path)), esc(x.status())])
            .collect();
        table(out, "", &["File", "Change"], &rows);
    }
    if let Some(plan) = f.plan.as_ref().filter(|p| !p.fixes.is_empty()) {
        let _ = writeln!(
            out,
            "<h3 id=\"fix-plan\">Fix plan of iteration {} ({} strategy)</h3>\n<p>Where the failures point (see analysis/fault-localisation.md).</p>",
            plan.iteration,
            esc(&plan.strategy)
        );
        let rows: Vec<Vec<String>> = plan
            .fixes
            .iter()
            .flat_map(|fix| {
                fix.modification_points.iter().map(move |p| {
                    vec![
                        fix.tests.len().to_string(),
                        format!("<code>{}:{}</code>", esc(&p.file), p.line),
                        esc(p.function.as_deref().unwrap_or("-")),
                        esc(&p.reason),
                    ]
                })
            })
            .collect();
        table(
            out,
            "",
            &["Failing tests", "Modification point", "Function", "Reason"],
            &rows,
        );
    }
}

/// One iteration's cells: iteration 0 is the suite before any fix (no strategy, no note).
fn row(i: &Iteration) -> Vec<String> {
    let initial = i.iteration == 0;
    let strategy = if initial {
        "-".to_string()
    } else {
        esc(i.strategy.as_str())
    };
    let outcome = format!("{:?}", i.outcome);
    let outcome = match i.outcome {
        IterationOutcome::Improved => format!("<span class=\"good\">{outcome}</span>"),
        IterationOutcome::Worse | IterationOutcome::Regressed | IterationOutcome::Rejected => {
            format!("<span class=\"bad\">{outcome}</span>")
        }
        IterationOutcome::Unchanged | IterationOutcome::NoChange => {
            format!("<span class=\"muted\">{outcome}</span>")
        }
        IterationOutcome::Initial => outcome,
    };
    let note = if i.note.is_empty() || initial {
        String::new()
    } else {
        format!(": {}", esc(&i.note))
    };
    let changed = if i.modified_files.is_empty() {
        "-".to_string()
    } else {
        i.modified_files
            .iter()
            .map(|f| format!("<code>{}</code>", esc(f)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ran = if initial {
        format!("{} (all)", i.suite_size)
    } else if i.selected_tests.is_empty() {
        "-".to_string()
    } else {
        format!("{} of {}", i.selected_tests.len(), i.suite_size)
    };
    let commit = match (&i.commit, &i.rollback_commit) {
        (Some(c), Some(r)) => format!("{} (rolled back by {})", commit_cell(c), commit_cell(r)),
        (Some(c), None) => commit_cell(c),
        _ => "-".to_string(),
    };
    vec![
        i.iteration.to_string(),
        strategy,
        format!("{:.1}% → {:.1}%", i.previous_pass_rate, i.pass_rate),
        format!("{outcome}{note}"),
        changed,
        ran,
        commit,
    ]
}

/// A commit shortened to 10 characters, the whole hash in its tooltip.
fn commit_cell(commit: &str) -> String {
    let short: String = commit.chars().take(10).collect();
    format!("<code title=\"{}\">{}</code>", esc(commit), esc(&short))
}

fn code_list(out: &mut String, items: &[String]) {
    out.push_str("<ul>");
    for t in items {
        let _ = write!(out, "<li><code>{}</code></li>", esc(t));
    }
    out.push_str("</ul>\n");
}

/// The pass rate after each iteration (iteration 0: before any fix).
fn chart(out: &mut String, iterations: &[Iteration]) {
    let ticks: Vec<(f64, String)> = iterations
        .iter()
        .map(|i| (f64::from(i.iteration), i.iteration.to_string()))
        .collect();
    let series = [Series {
        name: "pass rate".into(),
        points: iterations
            .iter()
            .map(|i| (f64::from(i.iteration), i.pass_rate))
            .collect(),
        target: None,
    }];
    out.push_str("<figure><figcaption>Pass rate after each iteration</figcaption>");
    out.push_str(&line_chart(
        &LineChart {
            id: "fix-cycle-chart",
            title: "Pass rate of the suite over the test-fix iterations",
            y_label: "pass rate %",
            x_label: "iteration (0: before any fix)",
            y_max: 100.0,
            x_ticks: ticks,
            unit: "%",
            width: 520.0,
            height: 220.0,
        },
        &series,
    ));
    out.push_str("</figure>\n");
}
