//! analysis/quality-report.md, written from a [`Report`] only (no file reads), so the markdown
//! and report.json can never disagree. No timestamps: the same session gives the same text.

use std::fmt::Write as _;

use super::model::{CriteriaFrom, Traceability};
use super::{
    Report, TREND_COVERAGE_POINTS, TREND_SCORE_POINTS, W_COVERAGE, W_DETECTION, W_EFFECTIVENESS,
    W_GC,
};

fn pct(v: Option<f64>) -> String {
    v.map_or("unknown".into(), |v| format!("{v:.1}%"))
}

fn rate(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1}%", v * 100.0))
}

pub(super) fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Text from the project's files (a requirement's title, a criterion, a scenario's name) in a
/// table cell or a line: [`cell`], and `&`, `<`, `>` as entities, so a Markdown renderer shows
/// a `<script>` in a title as text instead of passing it on as HTML.
pub(super) fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The project's own suite, and what each layer's tests added to it.
fn baseline_section(md: &mut String, b: &super::model::BaselineReport) {
    let coverage = b.coverage.map_or_else(
        || "coverage unknown".to_string(),
        |c| format!("{c:.1}% line coverage of the files in scope"),
    );
    let _ = writeln!(
        md,
        "## Baseline: the Project's Own Tests

{} test(s), {} passed; {coverage}.
",
        b.tests, b.passed
    );
    for l in &b.layers {
        let _ = writeln!(
            md,
            "- {}: coverage {:.1}% -> {:.1}%, {:+.1} points by {} new test(s)",
            l.layer,
            l.before,
            l.after,
            l.after - l.before,
            l.new_tests
        );
    }
    if !b.files.is_empty() {
        let pct = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{p:.1}%"));
        md.push_str(
            "\n| File | The project's own tests | With the generated tests |\n|---|---|---|\n",
        );
        for f in &b.files {
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                cell(&f.file),
                pct(f.before),
                pct(f.after)
            );
        }
    }
    if !b.failing_tests.is_empty() {
        let _ = writeln!(
            md,
            "\nExisting tests that fail (reported, never removed): {}",
            b.failing_tests.join(", ")
        );
    }
    md.push('\n');
}

/// The mutation analysis: how many mutants each suite kills, and what minimization dropped.
fn mutation_section(md: &mut String, m: &crate::artifacts::MutationRecord) {
    let own = m.baseline.as_ref().map_or(String::new(), |b| {
        format!(
            "; the project's own {} test(s) alone {:.1}%",
            b.tests, b.score
        )
    });
    let _ = writeln!(
        md,
        "## Mutation Analysis

{} mutant(s) of {} module(s) (operators, constants, returns swapped; {} reached by no test). Mutation score {:.1}% with the project's tests and the kept generated ones; the {} kept generated test(s) alone {:.1}%{own}.{}
",
        m.mutants,
        m.modules.len(),
        m.no_coverage,
        m.combined.score,
        m.generated.tests,
        m.generated.score,
        if m.exhausted {
            " The time budget ended first: the figures cover the mutants that ran."
        } else {
            ""
        }
    );
    for l in &m.layers {
        let _ = writeln!(
            md,
            "- {}: {} -> {} test(s) after minimization ({} dropped: they added no line, arc or killed mutant); score {:.1}% -> {:.1}% alone, {:.1}% -> {:.1}% with the project's tests",
            l.layer,
            l.before.tests,
            l.after.tests,
            l.dropped.len(),
            l.before.score,
            l.after.score,
            l.combined_before,
            l.combined_after
        );
    }
    if !m.survivors.is_empty() {
        let mut shown: Vec<String> = m
            .survivors
            .iter()
            .map(|s| format!("{} ({})", s.location, s.operator))
            .collect();
        shown.dedup();
        let _ = writeln!(
            md,
            "\nSurviving mutants (no test notices the change): {}",
            shown.join(", ")
        );
    }
    md.push('\n');
}

pub fn markdown(r: &Report) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Quality Report — {}\n", r.session_id);
    if r.scored {
        let _ = writeln!(
            md,
            "Quality score: **{:.1} / 100** ({}). {} layer(s) met their gate, {} run record(s), {} GC round(s) used.\n",
            r.quality_score,
            r.band,
            r.gates().text(),
            r.runs.len(),
            r.score.gc_rounds_used
        );
    } else {
        let _ = writeln!(
            md,
            "Quality score: **not scored**: none of the {} layer(s) had anything to test (see Coverage by Layer).\n",
            r.layers.len()
        );
    }

    // Quality score.
    let s = &r.score;
    let _ = write!(
        md,
        "## Quality Score\n\n\
         | Dimension | Weight | Value | Points |\n|---|---|---|---|\n\
         | Coverage achievement: mean over layers of min(1, final coverage / target); unknown coverage uses the pass rate | {W_COVERAGE:.0}% | {:.3} | {:.1} |\n\
         | Test effectiveness: mean final pass rate | {W_EFFECTIVENESS:.0}% | {:.3} | {:.1} |\n\
         | Defect detection: classified failing tests / failing tests ({} / {}; 1.0 when nothing failed) | {W_DETECTION:.0}% | {:.3} | {:.1} |\n\
         | GC-loop efficiency: 1 − rounds used / (max rounds × layers) = 1 − {} / {} | {W_GC:.0}% | {:.3} | {:.1} |\n\n\
         Score = {}. Bands: >= 80 good, 60–79 needs improvement, < 60 concerning.\n\n",
        s.coverage_achievement, W_COVERAGE * s.coverage_achievement,
        s.test_effectiveness, W_EFFECTIVENESS * s.test_effectiveness,
        s.classified_failing_tests, s.failing_tests, s.defect_detection, W_DETECTION * s.defect_detection,
        s.gc_rounds_used, s.gc_budget, s.gc_efficiency, W_GC * s.gc_efficiency,
        if r.scored { format!("{:.1}", r.quality_score) } else { "not scored (no layer had anything to test)".into() }
    );

    if let Some(b) = &r.baseline {
        baseline_section(&mut md, b);
    }
    if let Some(m) = &r.mutation {
        mutation_section(&mut md, m);
    }
    if let Some(f) = &r.fix_cycle {
        super::fix_cycle::markdown(&mut md, f, &r.session_id);
    }
    if let Some(t) = &r.traceability {
        traceability(&mut md, t);
    }

    // Coverage per layer.
    let _ = writeln!(
        md,
        "## Coverage by Layer\n\nGate: pass rate >= {:.0}% and coverage >= the layer target (unknown coverage: pass rate alone).\n",
        r.pass_rate_target * 100.0
    );
    if r.layers.is_empty() {
        md.push_str("No layer was run.\n\n");
    } else {
        md.push_str("| Layer | Target | Final coverage | Final pass rate | Gate | GC rounds |\n|---|---|---|---|---|---|\n");
        for l in &r.layers {
            if let Some(why) = &l.not_applicable {
                let _ = writeln!(
                    md,
                    "| {} | {} | - | - | not applicable: {} | - |",
                    l.layer,
                    pct(l.target),
                    cell(why)
                );
                continue;
            }
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} of {} |",
                l.layer,
                pct(l.target),
                pct(l.final_coverage),
                rate(l.final_pass_rate),
                l.gate,
                l.gc_rounds_used,
                r.max_gc_rounds
            );
        }
        let na: Vec<&str> = r
            .layers
            .iter()
            .filter(|l| l.not_applicable.is_some())
            .map(|l| l.layer.as_str())
            .collect();
        if !na.is_empty() {
            let _ = writeln!(
                md,
                "\nNot applicable, so left out of the score and the GC budget: {}.",
                na.join(", ")
            );
        }
        md.push_str("\nRound history (task order):\n\n| Layer | Round | Task | Status | Coverage | Pass rate | Run |\n|---|---|---|---|---|---|---|\n");
        for l in &r.layers {
            for p in &l.history {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} | {} | {} |",
                    l.layer,
                    p.round,
                    p.task_id,
                    p.status,
                    pct(p.coverage),
                    rate(p.pass_rate),
                    p.run.as_deref().unwrap_or("-")
                );
            }
        }
        md.push('\n');
    }

    // Defect patterns.
    md.push_str("## Defect Patterns\n\nSeverity: HIGH >= 3 occurrences, MEDIUM 2, LOW 1 (every failing test record of every run, grouped by classification:error).\n\n");
    if r.defect_patterns.is_empty() {
        md.push_str("No failing tests were recorded.\n\n");
    } else {
        md.push_str(
            "| Pattern | Occurrences | Severity | Tests | Files |\n|---|---|---|---|---|\n",
        );
        for d in &r.defect_patterns {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                cell(&d.kind),
                d.count,
                d.severity,
                cell(&d.tests.join(", ")),
                cell(&d.files.join(", "))
            );
        }
        md.push('\n');
    }

    // GC effectiveness.
    md.push_str("## GC-Loop Effectiveness\n\nRating by coverage gained per round: HIGH > 10 points, MEDIUM > 5, LOW otherwise; n/a when no round was used or coverage is unknown.\n\n");
    if r.gc_effectiveness.is_empty() {
        md.push_str("No layer was run.\n\n");
    } else {
        md.push_str("| Layer | Rounds used | First coverage | Final coverage | Gained | Per round | Round deltas | Rating |\n|---|---|---|---|---|---|---|---|\n");
        for g in &r.gc_effectiveness {
            let deltas: Vec<String> = g
                .per_round
                .iter()
                .map(|d| d.map_or("?".into(), |d| format!("{d:+.1}")))
                .collect();
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                g.layer,
                g.rounds_used,
                pct(g.initial_coverage),
                pct(g.final_coverage),
                g.coverage_gained.map_or("-".into(), |v| format!("{v:+.1}")),
                g.gain_per_round.map_or("-".into(), |v| format!("{v:+.1}")),
                if deltas.is_empty() {
                    "-".into()
                } else {
                    deltas.join(", ")
                },
                g.rating
            );
        }
        md.push('\n');
    }

    // Coverage gaps.
    md.push_str(
        "## Coverage Gaps\n\nPer module, from the coverage file of each layer's final run.\n\n",
    );
    if r.coverage_gaps.is_empty() {
        md.push_str("No uncovered lines were recorded.\n\n");
    } else {
        md.push_str("| Layer | Module | Current | Target | Gap | Uncovered lines | Recommendation |\n|---|---|---|---|---|---|---|\n");
        for g in &r.coverage_gaps {
            let _ = writeln!(
                md,
                "| {} | {} | {:.1}% | {} | {:.1} | {} | {} |",
                g.layer,
                cell(&g.module),
                g.line_percent,
                pct(g.target),
                g.gap,
                if g.uncovered.is_empty() {
                    "-"
                } else {
                    &g.uncovered
                },
                cell(&g.recommendation)
            );
        }
        md.push('\n');
    }

    // Findings.
    md.push_str("## Findings\n\n### Code defects\n\n");
    if r.findings.code_defects.is_empty() {
        md.push_str("No test was classified code_defect.\n\n");
    } else {
        for d in &r.findings.code_defects {
            let e = &d.evidence;
            let suspects = if d.suspects.is_empty() {
                String::new()
            } else {
                format!(
                    "\n  - likely at (fault localisation): {}",
                    d.suspects.join(", ")
                )
            };
            let hits = if d.hits > 1 {
                format!(
                    "\n  - hit by {} tests (one location, one exception type); also: {}",
                    d.hits,
                    d.same_cause.join(", ")
                )
            } else {
                String::new()
            };
            let _ = writeln!(
                md,
                "- **{}** ({}, {}, round {}, criticality {}){hits}{suspects}\n  - location: {}\n  - error: {}\n  - reason: {}\n  - excerpt: `{}`",
                d.test,
                d.layer,
                d.task_id,
                d.round,
                d.criticality_rule
                    .as_deref()
                    .or(d.criticality.as_deref())
                    .unwrap_or("-"),
                e["location"].as_str().unwrap_or("-"),
                e["error"].as_str().unwrap_or("-"),
                e["reason"].as_str().unwrap_or("-"),
                e["excerpt"].as_str().unwrap_or("-").replace('`', "'").replace('\n', " ⏎ ")
            );
        }
        md.push('\n');
    }
    md.push_str("### Contract findings of the generator\n\n");
    if r.findings.contract_findings.is_empty() {
        md.push_str("None.\n\n");
    } else {
        md.push_str("One row per function, kind and exception type: the shortest call shows it, Calls counts the calls that hit it.\n\n| Module | Function | Kind | Call | Expected | Actual | Calls | Test |\n|---|---|---|---|---|---|---|---|\n");
        for f in &r.findings.contract_findings {
            let g = |k: &str| cell(f[k].as_str().unwrap_or("-"));
            let _ = writeln!(
                md,
                "| {} | {} | {} | `{}` | {} | {} | {} | {} |",
                g("module"),
                g("function"),
                g("kind"),
                g("call"),
                g("expected"),
                g("actual"),
                f["hits"].as_u64().unwrap_or(1),
                g("test")
            );
        }
        md.push('\n');
    }

    findings_table(
        &mut md,
        "### Side effects (never tests)\n\nCalls that change something outside the temporary folder a test creates: after `apply` that would be your project or your home folder. No delivered test makes them.\n\n",
        &r.findings.side_effects,
    );
    findings_table(
        &mut md,
        "### Flagged for review (suspicious results)\n\nResults that look like bugs rather than behaviour to keep: they are not asserted (the test checks only their type) until a person says which is right.\n\n",
        &r.findings.review,
    );
    findings_table(
        &mut md,
        "### Docstring examples left out\n\nTheir expected output only holds on the machine they were written on.\n\n",
        &r.findings.skipped_examples,
    );

    if !r.findings.load_errors.is_empty() {
        md.push_str("### Test files that do not load

Classified like failing tests: a module that exists nowhere is the test's fault, a dependency that is not installed the environment's (with the command that installs it), a syntax error in the project's code a code defect.

| File | Layer | Classification | Why | Install |
|---|---|---|---|---|
");
        for l in &r.findings.load_errors {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                cell(&l.file),
                l.layer,
                l.classification.as_deref().unwrap_or("unclassified"),
                cell(&l.reason),
                l.install
                    .as_deref()
                    .map_or("-".to_string(), |i| format!("`{}`", cell(i)))
            );
        }
        md.push('\n');
    }

    added_roles_section(&mut md, r);
    sandbox_section(&mut md, r);

    md.push_str("## Flaky Tests\n\n");
    if r.flaky_tests.is_empty() {
        md.push_str("None.\n\n");
    } else {
        for f in &r.flaky_tests {
            let _ = writeln!(md, "- {} ({}, {})", f.test, f.layer, f.task_id);
        }
        md.push('\n');
    }
    md.push_str("## Quarantined Tests\n\n");
    if r.quarantined.is_empty() {
        md.push_str("None.\n\n");
    } else {
        for q in &r.quarantined {
            let _ = writeln!(
                md,
                "- {}{} ({}): {}",
                q.test,
                if q.whole_file { " (whole file)" } else { "" },
                q.task_id,
                q.reason
            );
        }
        md.push('\n');
    }

    let c = &r.confidence;
    let _ = write!(
        md,
        "## Confidence\n\n| Dimension | Value |\n|---|---|\n\
         | Scenario coverage (modules in scope exercised by the tests) | {:.2} |\n\
         | Test quality (tests neither flaky nor quarantined) | {:.2} |\n\
         | Diagnostic accuracy (failing tests with classification and evidence location) | {:.2} |\n\
         | Strategy effectiveness (layers meeting their gate) | {:.2} |\n\
         | Infrastructure fitness (1 − env_issue share; 0 after an environment problem) | {:.2} |\n\
         | Overall (mean) | {:.2} |\n\n",
        c.scenario_coverage, c.test_quality, c.diagnostic_accuracy, c.strategy_effectiveness, c.infrastructure_fitness, c.overall
    );

    let _ = writeln!(
        md,
        "## Trends\n\nEarlier sessions of the same repository; compared with the most recent. Stable within ±{TREND_COVERAGE_POINTS} coverage points, ±{TREND_SCORE_POINTS} score points.\n"
    );
    if r.trends.previous.is_empty() {
        md.push_str("No earlier session of this repository.\n\n");
    } else {
        md.push_str("| Session | Created | Score | Coverage by layer | Defect occurrences |\n|---|---|---|---|---|\n");
        for p in &r.trends.previous {
            let layers: Vec<String> = p
                .layers
                .iter()
                .map(|(l, c)| format!("{l} {}", pct(*c)))
                .collect();
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                p.session_id,
                p.created_at,
                p.quality_score.map_or("-".into(), |s| format!("{s:.1}")),
                layers.join(", "),
                p.defect_patterns
            );
        }
        md.push('\n');
        for t in r
            .trends
            .coverage
            .iter()
            .chain(r.trends.score.iter())
            .chain(r.trends.defect_patterns.iter())
        {
            let _ = writeln!(
                md,
                "- {}: {:.1} → {:.1} ({:+.1}) {}",
                t.subject, t.previous, t.current, t.delta, t.direction
            );
        }
        md.push('\n');
    }

    md.push_str("## Recommendations\n\n");
    if r.recommendations.is_empty() {
        md.push_str("None: every layer meets its gate and no defect is open.\n\n");
    } else {
        for rec in &r.recommendations {
            let _ = writeln!(md, "- {rec}");
        }
        md.push('\n');
    }

    if !r.missing.is_empty() {
        md.push_str("## Missing\n\nThis report covers what exists; these parts of the session are missing or partial:\n\n");
        for m in &r.missing {
            let _ = writeln!(md, "- {m}");
        }
        md.push('\n');
    }
    md
}

/// Roles added while the session ran: a lint, a mutation run, a security scan, an agent.
fn added_roles_section(md: &mut String, r: &Report) {
    if r.added_roles.is_empty() {
        return;
    }
    md.push_str("## Added Roles\n\nRoles added to this session (roles add, or a capability gap a worker reported).\n\n");
    md.push_str("| Role | Task | Status | Result | Why | Files |\n|---|---|---|---|---|---|\n");
    for a in &r.added_roles {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} |",
            cell(&a.role),
            a.task_id,
            a.status,
            cell(&a.summary),
            cell(&a.reason),
            cell(&a.artifacts.join(", "))
        );
    }
    md.push('\n');
}

/// A heading, then one row per finding (function, call, what happened), or "None.".
fn findings_table(md: &mut String, heading: &str, list: &[serde_json::Value]) {
    md.push_str(heading);
    if list.is_empty() {
        md.push_str("None.\n\n");
        return;
    }
    md.push_str("| Function | Call | What it does |\n|---|---|---|\n");
    for f in list {
        let g = |k: &str| cell(f[k].as_str().unwrap_or("-"));
        let _ = writeln!(
            md,
            "| {} | `{}` | {} |",
            g("function"),
            g("call"),
            g("actual")
        );
    }
    md.push('\n');
}

/// What the sandbox protected, what it lacked, and what it stopped.
fn sandbox_section(md: &mut String, r: &Report) {
    md.push_str("## Sandbox\n\n");
    match &r.sandbox.protections {
        None => md.push_str("Not recorded (the session predates the sandbox).\n\n"),
        Some(p) => {
            let _ = write!(
                md,
                "| Protection | State |\n|---|---|\n| Filesystem | {} |\n| Network | {} |\n| Limits | {} |\n| Environment | {} |\n\n",
                cell(&p.filesystem),
                cell(&p.network),
                cell(&p.limits),
                cell(&p.environment)
            );
            if p.missing.is_empty() {
                md.push_str("Missing protections: none.\n\n");
            } else {
                md.push_str("Missing protections:\n\n");
                for m in &p.missing {
                    let _ = writeln!(md, "- {m}");
                }
                md.push('\n');
            }
        }
    }
    if !r.sandbox.watch.is_empty() {
        md.push_str("File-system watch of the kept tests (their writes diverted to a throwaway layer and listed):\n\n");
        for w in &r.sandbox.watch {
            let _ = writeln!(md, "- {}", w.line());
        }
        md.push('\n');
    }
    findings_table(
        md,
        "### Blocked attempts\n\nCalls of the generator the sandbox stopped (a limit, or what the effect audit cannot see); no test keeps them.\n\n",
        &r.sandbox.blocked,
    );
}

// ---- requirements traceability (also written alone, as analysis/traceability.md) ----

/// The section of quality-report.md.
pub(super) fn traceability(md: &mut String, t: &Traceability) {
    md.push_str("## Requirements Traceability\n\n");
    body(md, t);
}

/// analysis/traceability.md: the section on its own.
pub fn traceability_document(t: &Traceability, session_id: &str) -> String {
    let mut md = format!("# Requirements Traceability — {session_id}\n\n");
    body(&mut md, t);
    md.truncate(md.trim_end().len());
    md.push('\n');
    md
}

/// Longest criterion text in a table cell; report.json has it whole.
const TEXT_CELL: usize = 120;

fn short(text: &str) -> String {
    if text.chars().count() <= TEXT_CELL {
        text.to_string()
    } else {
        let cut: String = text.chars().take(TEXT_CELL - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

fn file_cell(file: &str) -> String {
    if file.trim().is_empty() {
        "-".into()
    } else {
        format!("`{}`", cell(file).replace('`', "'"))
    }
}

fn body(md: &mut String, t: &Traceability) {
    let s = &t.summary;
    let from = match t.criteria_from {
        CriteriaFrom::Requirements => "the requirement files",
        CriteriaFrom::Scenarios => "the scenarios' req_ref",
    };
    let _ = writeln!(
        md,
        "Each acceptance criterion, the scenarios planned for it (scenarios.csv) and the last result of their tests. {} criteria of {} requirement(s), from {from}; criteria with no passing test first.\n\n\
         Verdicts: {} covered, {} violated, {} failing, {} not run, {} with no scenario. Violated: a test of the criterion fails as a code defect; failing: it fails otherwise.\n",
        s.criteria, s.requirements, s.covered, s.violated, s.failing, s.not_run, s.no_scenario
    );
    for n in &t.notes {
        let _ = writeln!(md, "- Note: {}", text(n));
    }
    if !t.notes.is_empty() {
        md.push('\n');
    }
    if t.criteria.is_empty() {
        md.push_str("No acceptance criterion: no requirement file was read and no scenario names one (req_ref `REQ-001:AC-1`).\n\n");
    } else {
        md.push_str("| Requirement | Criterion | Verdict | Scenario | Layer | Priority | Test file | Last status |\n|---|---|---|---|---|---|---|---|\n");
        for c in &t.criteria {
            // Everything that comes from a REQ file or scenarios.csv is text, never HTML.
            let requirement = match c.requirement_title.as_deref() {
                Some(title) if !title.is_empty() && title != c.requirement => {
                    format!("{}: {}", text(&c.requirement), text(title))
                }
                _ => text(&c.requirement),
            };
            let criterion = match (&c.text, t.criteria_from) {
                (Some(words), _) => format!("{}: {}", text(&c.criterion), text(&short(words))),
                (None, CriteriaFrom::Requirements) => {
                    format!("{} (not in the requirement files)", text(&c.criterion))
                }
                (None, CriteriaFrom::Scenarios) => text(&c.criterion),
            };
            if c.scenarios.is_empty() {
                let _ = writeln!(
                    md,
                    "| {requirement} | {criterion} | {} | - | - | - | - | - |",
                    c.verdict.words()
                );
            }
            for sc in &c.scenarios {
                let _ = writeln!(
                    md,
                    "| {requirement} | {criterion} | {} | {} {} | {} | {} | {} | {} |",
                    c.verdict.words(),
                    text(&sc.id),
                    text(&sc.name),
                    text(&sc.layer),
                    sc.priority,
                    file_cell(&sc.test_file),
                    text(&sc.status_words())
                );
            }
        }
        md.push('\n');
    }
    if !t.other_scenarios.is_empty() {
        md.push_str("### Scenarios of Other Routes\n\nCoverage gaps, code boundaries and defects: traced to their reference rather than to a criterion.\n\n| Reference | Scenario | Layer | Priority | Test file | Last status |\n|---|---|---|---|---|---|\n");
        for sc in &t.other_scenarios {
            let _ = writeln!(
                md,
                "| {} | {} {} | {} | {} | {} | {} |",
                if sc.req_ref.trim().is_empty() {
                    "-".to_string()
                } else {
                    text(&sc.req_ref)
                },
                text(&sc.id),
                text(&sc.name),
                text(&sc.layer),
                sc.priority,
                file_cell(&sc.test_file),
                text(&sc.status_words())
            );
        }
        md.push('\n');
    }
}
