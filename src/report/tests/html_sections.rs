//! report.html's test-fix cycle and traceability sections: the synthetic session's report with a
//! hand-made cycle (three iterations, a rollback, a plan) and matrix (every verdict, a hostile
//! criterion), and the same report without them.

use super::*;
use crate::artifacts::{
    FixPlan, FixedFile, FullRun, Iteration, IterationOutcome, IterationState, ModificationPoint,
    PlannedFix, Strategy,
};
use crate::report::fix_cycle::FixCycleReport;
use crate::scenario::plan::Priority;

const HOSTILE: &str = "<script>alert('x')</script> & \"quoted\"";

fn scenario(
    id: &str,
    name: &str,
    req_ref: &str,
    status: ScenarioStatus,
    classification: Option<&str>,
    note: Option<&str>,
) -> TracedScenario {
    TracedScenario {
        id: id.into(),
        name: name.into(),
        layer: "L1".into(),
        priority: Priority::High,
        req_ref: req_ref.into(),
        test_file: format!(
            "tests/L1-unit/test_{}.py",
            id.to_lowercase().replace('-', "_")
        ),
        status,
        classification: classification.map(str::to_string),
        red_result: None,
        status_from: (status != ScenarioStatus::NotRun).then(|| "results/run-002.json".into()),
        note: note.map(str::to_string),
    }
}

fn criterion(
    req: &str,
    ac: &str,
    text: &str,
    verdict: Verdict,
    scenarios: Vec<TracedScenario>,
) -> TracedCriterion {
    TracedCriterion {
        requirement: req.into(),
        requirement_title: Some("Discounts".into()),
        criterion: ac.into(),
        text: Some(text.into()),
        verdict,
        scenarios,
    }
}

/// Criteria in the model's order (no passing test first), one of each verdict; a hostile text.
fn matrix() -> Traceability {
    use ScenarioStatus::*;
    Traceability {
        criteria_from: CriteriaFrom::Requirements,
        notes: vec!["named by scenarios but not in the requirement files: REQ-003:AC-9".into()],
        summary: TraceSummary {
            requirements: 2,
            criteria: 5,
            covered: 1,
            violated: 1,
            failing: 1,
            not_run: 1,
            no_scenario: 1,
        },
        criteria: vec![
            criterion(
                "REQ-001",
                "AC-2",
                HOSTILE,
                Verdict::Violated,
                vec![scenario(
                    "AT-002",
                    "refuse over 100",
                    "REQ-001:AC-2",
                    Failed,
                    Some("code_defect"),
                    None,
                )],
            ),
            criterion(
                "REQ-001",
                "AC-3",
                "empty cart",
                Verdict::Failing,
                vec![scenario(
                    "AT-003",
                    "empty cart",
                    "REQ-001:AC-3",
                    Failed,
                    Some("test_defect"),
                    None,
                )],
            ),
            criterion("REQ-002", "AC-2", "last unit", Verdict::NoScenario, vec![]),
            criterion(
                "REQ-002",
                "AC-1",
                "never negative",
                Verdict::NotRun,
                vec![scenario(
                    "AT-004",
                    "<img src=x onerror=alert(1)>",
                    "REQ-002:AC-1",
                    NotRun,
                    None,
                    Some("written"),
                )],
            ),
            criterion(
                "REQ-001",
                "AC-1",
                "ten percent off",
                Verdict::Covered,
                vec![
                    scenario(
                        "AT-001",
                        "ten percent off",
                        "REQ-001:AC-1",
                        Passed,
                        None,
                        None,
                    ),
                    scenario(
                        "AT-006",
                        "big cart",
                        "REQ-001:AC-1",
                        NotRun,
                        None,
                        Some("blocked: no browser"),
                    ),
                ],
            ),
        ],
        other_scenarios: vec![scenario(
            "AT-005",
            "mean of empty",
            "gap:src/shop.py:mean",
            Passed,
            None,
            None,
        )],
    }
}

fn iteration(n: u32, before: f64, after: f64, outcome: IterationOutcome) -> Iteration {
    Iteration {
        iteration: n,
        strategy: Strategy::Conservative,
        previous_pass_rate: before,
        pass_rate: after,
        outcome,
        suite_size: 8,
        ..Iteration::default()
    }
}

/// Iteration 0, an improvement committed, a regression rolled back; a final validation, a stuck
/// test, progressive testing, a fixed file and a plan.
fn cycle() -> FixCycleReport {
    let mut improved = iteration(1, 50.0, 75.0, IterationOutcome::Improved);
    improved.commit = Some("abcdef0123456789".into());
    improved.modified_files = vec!["calc/a.py".into()];
    improved.selected_tests = vec!["t2".into(), "t3".into()];
    improved.note = "fixed the <divisor>".into();
    let mut regressed = iteration(2, 75.0, 37.5, IterationOutcome::Regressed);
    regressed.strategy = Strategy::Aggressive;
    regressed.commit = Some("1111111111aaaa".into());
    regressed.rollback_commit = Some("2222222222bbbb".into());
    regressed.selected_tests = vec!["t1".into(), "t2".into(), "t3".into()];
    FixCycleReport {
        state: IterationState {
            branch: "test-cycle/<branch>".into(),
            summary: "2 iteration(s): the pass rate went from 50.0% to 75.0%.".into(),
            iterations: vec![
                iteration(0, 50.0, 50.0, IterationOutcome::Initial),
                improved,
                regressed,
            ],
            final_validation: Some(FullRun {
                total: 8,
                passed: 6,
                pass_rate: 75.0,
                ..FullRun::default()
            }),
            stuck_tests: vec!["tests/test_b.py::test_stuck".into()],
            tests_run: 12,
            tests_full: 24,
            ..IterationState::default()
        },
        fixed_files: vec![FixedFile {
            path: "calc/a.py".into(),
            status: FixedFile::MODIFIED.into(),
            base_sha256: None,
            head_sha256: None,
        }],
        plan: Some(FixPlan {
            iteration: 2,
            strategy: "aggressive".into(),
            fixes: vec![PlannedFix {
                file: "calc/a.py".into(),
                tests: vec!["t2".into(), "t3".into()],
                root_cause: "division by zero".into(),
                modification_points: vec![ModificationPoint {
                    file: "calc/a.py".into(),
                    line: 12,
                    function: Some("div".into()),
                    code: "return a / b".into(),
                    score: 0.9,
                    reason: "on every failing path".into(),
                }],
            }],
            confidence_score: 0.9,
        }),
    }
}

/// The part of `html` from the heading with `id` to the next `<h2`.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<h2 id=\"{id}\""))
        .unwrap_or_else(|| panic!("no section {id}"));
    let end = html[start + 1..]
        .find("<h2")
        .map_or(html.len(), |e| start + 1 + e);
    &html[start..end]
}

#[test]
fn html_shows_the_fix_cycle_and_traceability_before_the_layers() {
    let tmp = tempfile::tempdir().unwrap();
    let s = synthetic(tmp.path(), "2026-12-03T10:00:00.000+00:00");
    let mut r = build(&s, &config());
    r.fix_cycle = Some(cycle());
    r.traceability = Some(matrix());
    let html = html::html(&s, &r);

    // In the Markdown's order: after the score, before coverage by layer; both in the navigation.
    let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle}"));
    assert!(at("<h2 id=\"score\"") < at("<h2 id=\"fix-cycle\">Test-Fix Cycle</h2>"));
    assert!(
        at("<h2 id=\"fix-cycle\"") < at("<h2 id=\"traceability\">Requirements Traceability</h2>")
    );
    assert!(at("<h2 id=\"traceability\"") < at("<h2 id=\"layers\""));
    let nav = &html[at("<nav")..at("</nav>")];
    assert!(
        nav.find("#score") < nav.find("#fix-cycle")
            && nav.find("#fix-cycle") < nav.find("#traceability")
            && nav.find("#traceability") < nav.find("#layers"),
        "{nav}"
    );

    let t = section(&html, "traceability");
    for needle in [
        "5 criteria of 2 requirement(s), from the requirement files",
        "<span class=\"good\">1 covered</span>, <span class=\"bad\">1 violated</span>, <span class=\"bad\">1 failing</span>, <span class=\"muted\">1 not run</span>, <span class=\"muted\">1 with no scenario</span>",
        "<li>Note: named by scenarios but not in the requirement files: REQ-003:AC-9</li>",
        // A criterion with one scenario: requirement, criterion and verdict, then the scenario.
        "<tbody><tr><td rowspan=\"1\">REQ-001: Discounts</td><td rowspan=\"1\">AC-3: empty cart</td><td rowspan=\"1\"><span class=\"bad\">failing</span></td>\
         <td>AT-003 empty cart</td><td>L1</td><td>high</td><td><code>tests/L1-unit/test_at_003.py</code></td>\
         <td><span class=\"bad\" title=\"from results/run-002.json\">failed (test_defect)</span></td></tr></tbody>",
        "<td rowspan=\"1\"><span class=\"muted\">no scenario</span></td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td></tr>",
        "<td><span class=\"muted\">not run (written)</span></td>",
        // Two scenarios: the criterion spans both rows.
        "<td rowspan=\"2\"><span class=\"good\">covered</span></td><td>AT-001 ten percent off</td>",
        "<span class=\"good\" title=\"from results/run-002.json\">passed</span></td></tr><tr><td>AT-006 big cart</td>",
        "<span class=\"muted\">not run (blocked: no browser)</span>",
        // The other routes, by reference.
        "<h3 id=\"other-routes\">Scenarios of Other Routes</h3>",
        "<tr><td>gap:src/shop.py:mean</td><td>AT-005 mean of empty</td><td>L1</td><td>high</td><td><code>tests/L1-unit/test_at_005.py</code></td>",
    ] {
        assert!(t.contains(needle), "{needle} not in\n{t}");
    }
    // One group per criterion, in the model's order: no passing test first.
    let table = &t[..t.find("</table>").unwrap()];
    assert_eq!(table.matches("<tbody>").count(), 5, "{table}");
    let verdicts: Vec<&str> = ["violated", "failing", "no scenario", "not run", "covered"]
        .into_iter()
        .filter(|v| table.contains(&format!("\">{v}</span></td>")))
        .collect();
    assert_eq!(verdicts.len(), 5, "{table}");
    let positions: Vec<usize> = verdicts
        .iter()
        .map(|v| table.find(&format!("\">{v}</span></td>")).unwrap())
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{table}");

    let f = section(&html, "fix-cycle");
    for needle in [
        "<p>2 iteration(s): the pass rate went from 50.0% to 75.0%.</p>",
        "on branch <code>test-cycle/&lt;branch&gt;</code>, never in your tree.",
        "<svg id=\"fix-cycle-chart\"",
        "<polyline",
        "<tr><td>0</td><td>-</td><td>50.0% → 50.0%</td><td>Initial</td><td>-</td><td>8 (all)</td><td>-</td></tr>",
        "<tr><td>1</td><td>conservative</td><td>50.0% → 75.0%</td><td><span class=\"good\">Improved</span>: fixed the &lt;divisor&gt;</td>\
         <td><code>calc/a.py</code></td><td>2 of 8</td><td><code title=\"abcdef0123456789\">abcdef0123</code></td></tr>",
        "<tr><td>2</td><td>aggressive</td><td>75.0% → 37.5%</td><td><span class=\"bad\">Regressed</span></td><td>-</td><td>3 of 8</td>\
         <td><code title=\"1111111111aaaa\">1111111111</code> (rolled back by <code title=\"2222222222bbbb\">2222222222</code>)</td></tr>",
        "Final validation (the whole suite at the last commit): 6 of 8 passed (<span class=\"bad\">75.0%</span>).",
        "Progressive testing: the iterations ran 12 tests where the whole suite each time would have been 24 (50% fewer).",
        "<li><code>tests/test_b.py::test_stuck</code></li>",
        &format!("<code>team-testing apply --fixes {}</code>", s.id),
        "<tr><td><code>calc/a.py</code></td><td>modified</td></tr>",
        "<h3 id=\"fix-plan\">Fix plan of iteration 2 (aggressive strategy)</h3>",
        "<tr><td>2</td><td><code>calc/a.py:12</code></td><td>div</td><td>on every failing path</td></tr>",
    ] {
        assert!(f.contains(needle), "{needle} not in\n{f}");
    }
}

#[test]
fn html_traceability_escapes_hostile_project_text() {
    let tmp = tempfile::tempdir().unwrap();
    let s = synthetic(tmp.path(), "2026-12-03T10:00:00.000+00:00");
    let mut r = build(&s, &config());
    r.traceability = Some(matrix());
    let html = html::html(&s, &r);
    let t = section(&html, "traceability");
    assert!(
        t.contains(
            "AC-2: &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quoted&quot;</td>"
        ),
        "{t}"
    );
    assert!(
        t.contains("<td>AT-004 &lt;img src=x onerror=alert(1)&gt;</td>"),
        "{t}"
    );
    assert!(!html.contains("<img"), "{html}");
    // The page's own script is the only one.
    assert_eq!(html.matches("<script").count(), 1);
}

#[test]
fn html_without_a_fix_cycle_or_traceability_has_neither_section() {
    let tmp = tempfile::tempdir().unwrap();
    let s = synthetic(tmp.path(), "2026-12-03T10:00:00.000+00:00");
    let r = build(&s, &config());
    assert!(r.fix_cycle.is_none() && r.traceability.is_none());
    let html = html::html(&s, &r);
    for absent in [
        "Test-Fix Cycle",
        "Requirements Traceability",
        "Scenarios of Other Routes",
        "id=\"fix-cycle",
        "id=\"traceability",
        "#fix-cycle",
        "#traceability",
        "fix-cycle-chart",
    ] {
        assert!(!html.contains(absent), "{absent} in the page");
    }
    // The neighbours are still there, in order.
    assert!(html.find("<h2 id=\"score\"") < html.find("<h2 id=\"layers\""));
}
