//! quality-report.md and report.html state the same words and figures: section by section, the
//! words and numbers of the Markdown are those of the page (its charts, timeline, file table
//! and test list aside), for a report with a layer not applicable, a code defect and a mutation
//! analysis. A renderer that computed or worded a figure of its own would fail here.

use super::*;
use crate::artifacts::{LayerMutation, MutationRecord, SuiteScore, MUTATION_FILE};
use crate::tasks::TaskStatus;

/// The synthetic session, plus a layer with nothing to test and a mutation record.
fn report() -> (tempfile::TempDir, SessionDir, Report) {
    let tmp = tempfile::tempdir().unwrap();
    let s = synthetic(tmp.path(), "2026-12-03T10:00:00.000+00:00");
    let mut graph = s.load_tasks().unwrap();
    let mut na = task("TESTRUN-L2", "executor", Some("L2-integration"), None, None);
    na.status = TaskStatus::NotApplicable;
    na.reason = Some("no entry points to test".into());
    graph.tasks.push(na);
    s.save_tasks(&graph).unwrap();
    let score = |tests, killed, score| SuiteScore {
        tests,
        killed,
        score,
    };
    let mutation = MutationRecord {
        modules: vec!["calc/a.py".into()],
        mutants: 12,
        no_coverage: 2,
        baseline: Some(score(3, 6, 50.0)),
        generated: score(4, 7, 58.3),
        combined: score(7, 9, 75.0),
        layers: vec![LayerMutation {
            layer: "L1-unit".into(),
            before: score(5, 7, 58.3),
            after: score(4, 7, 58.3),
            combined_before: 75.0,
            combined_after: 75.0,
            dropped: vec!["test_a.py::t9".into()],
            ..LayerMutation::default()
        }],
        ..MutationRecord::default()
    };
    atomic_write_json(&s.root.join(MUTATION_FILE), &mutation).unwrap();
    let r = build(&s, &config());
    (tmp, s, r)
}

/// `&lt;` and the others back to the characters they stand for.
fn decode(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The words and numbers, in order: what a reader takes from the text, markup aside.
fn tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// `from` up to `to`, every time, cut out of `s`.
fn cut(s: &str, from: &str, to: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(from) {
        out.push_str(&rest[..i]);
        let end = rest[i..].find(to).expect("closed") + i + to.len();
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Each tag a space: `<td>a</td><td>b</td>` is "a b".
fn without_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// The page's text without tags, each section by its `<h2>`, the opening figures first; the
/// sections only the page has, and its charts (their legends and captions), left out.
fn page_sections(html: &str) -> Vec<String> {
    let main = &html[html.find("<main>").unwrap()..html.find("</main>").unwrap()];
    let main = cut(main, "<svg", "</svg>");
    let main = cut(&main, "<div class=\"legend\">", "</div>");
    let main = cut(&main, "<figcaption>", "</figcaption>");
    let mut parts: Vec<&str> = Vec::new();
    let mut rest = main.as_str();
    while let Some(i) = rest[1..].find("<h2 ").map(|i| i + 1) {
        parts.push(&rest[..i]);
        rest = &rest[i..];
    }
    parts.push(rest);
    parts
        .into_iter()
        .filter(|p| {
            !["timeline-section", "files", "tests"]
                .iter()
                .any(|id| p.starts_with(&format!("<h2 id=\"{id}\"")))
        })
        .map(|p| decode(&without_tags(p)))
        .collect()
}

/// The Markdown's text, each section by its `## `, the opening figures first (the title left
/// out: the page has it in its header).
fn markdown_sections(md: &str) -> Vec<String> {
    let body = md.split_once("\n\n").unwrap().1;
    body.split("\n## ").map(decode).collect()
}

#[test]
fn markdown_and_html_state_the_same_figures_section_by_section() {
    let (_tmp, s, r) = report();
    let gates = r.gates();
    assert_eq!(
        (gates.met, gates.applicable, gates.not_applicable),
        (0, 1, 1)
    );
    assert_eq!(r.findings.code_defects.len(), 1);
    assert!(r.mutation.is_some());
    let md = markdown(&r);
    let html = html::html(&s, &r);

    let (md_sections, page) = (markdown_sections(&md), page_sections(&html));
    assert_eq!(
        md_sections.len(),
        page.len(),
        "the same sections\n{md}\n---\n{page:#?}"
    );
    for (m, h) in md_sections.iter().zip(&page) {
        assert_eq!(tokens(m), tokens(h), "\nMarkdown: {m}\nPage: {h}");
    }

    // The figures the two have disagreed on, or could: each in the Markdown as written, and on
    // the page as the same words and numbers.
    let l1 = r.layers.iter().find(|l| l.layer == "L1-unit").unwrap();
    let l2 = r
        .layers
        .iter()
        .find(|l| l.layer == "L2-integration")
        .unwrap();
    let figures = [
        format!(
            "Layers meeting their gate: **{} / {}** ({} not applicable)",
            gates.met, gates.applicable, gates.not_applicable
        ),
        format!("Quality score: **{:.1} / 100**", r.quality_score),
        format!("= **{:.1}**.", r.quality_score),
        format!(
            "| L1-unit | {:.1}% | {:.1}% | {:.1}% | Below |",
            l1.target.unwrap(),
            l1.final_coverage.unwrap(),
            l1.final_pass_rate.unwrap() * 100.0
        ),
        format!(
            "| L2-integration | {:.1}% | - | - | not applicable: no entry points to test | - |",
            l2.target.unwrap()
        ),
        "Not applicable, so left out of the score and the GC budget: L2-integration.".into(),
        "Mutation score 75.0% with the project's tests".into(),
        format!("Confidence: **{:.2}**", r.confidence.overall),
        format!("Shown by the test `{}`", r.findings.code_defects[0].test),
    ];
    let md_text = decode(&md);
    let page_tokens = tokens(&page.join(" "));
    for f in &figures {
        assert!(
            md_text.contains(f.as_str()),
            "{f} not in the Markdown\n{md}"
        );
        let words = tokens(f);
        assert!(
            page_tokens
                .windows(words.len())
                .any(|w| w == words.as_slice()),
            "{f} not on the page\n{page:#?}"
        );
    }
}
