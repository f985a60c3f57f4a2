//! The example sessions in the repository, written by the current version, still load and
//! report: every run record is read, none is left out as unreadable.

use super::*;

#[test]
fn the_example_sessions_report_every_run_record() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
    let mut sessions: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("session.json").is_file())
        .collect();
    sessions.sort();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    let config = TeamConfig::builtin().unwrap();
    for dir in sessions {
        let session = SessionDir::open(dir.clone()).unwrap();
        let records = crate::artifacts::runs(&session.root);
        assert!(records.unreadable.is_empty(), "{:?}", records.unreadable);
        let report = build(&session, &config);
        assert_eq!(report.runs.len(), records.runs.len(), "{}", dir.display());
        assert!(
            !report.missing.iter().any(|m| m.contains("unreadable")),
            "{:?}",
            report.missing
        );
    }
}

/// What GitHub would show of a pull-request summary: CommonMark with tables, as HTML.
fn rendered(md: &str) -> String {
    let parser = pulldown_cmark::Parser::new_ext(md, pulldown_cmark::Options::ENABLE_TABLES);
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, parser);
    html
}

/// The tags Markdown itself makes of the summary: anything else came from the project.
fn foreign_tags(html: &str) -> Vec<String> {
    let ours = [
        "h1", "h2", "p", "table", "thead", "tbody", "tr", "th", "td", "code", "strong", "ul", "li",
    ];
    let tag = regex::Regex::new(r"</?([a-zA-Z][a-zA-Z0-9]*)").unwrap();
    tag.captures_iter(html)
        .map(|c| c[1].to_ascii_lowercase())
        .filter(|t| !ours.contains(&t.as_str()))
        .collect()
}

#[test]
fn the_pull_request_summary_of_the_example_sessions_fits_a_comment_and_renders_as_markdown() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
    let config = TeamConfig::builtin().unwrap();
    for name in [
        "TST-test-the-new-tokenizer-2026-12-03",
        "TST-test-the-tokenizer-edge-cases-2026-12-03",
    ] {
        let session = SessionDir::open(root.join(name)).unwrap();
        let md = pr_summary(&build(&session, &config), &session.root);
        assert!(md.chars().count() < COMMENT_LIMIT, "{name}");
        assert!(md.contains("## What `apply` would add"), "{md}");
        let html = rendered(&md);
        assert_eq!(foreign_tags(&html), Vec::<String>::new(), "{html}");
    }
}

/// Names, inputs and messages from the project are shown as written: no HTML, no link, no
/// emphasis of theirs gets through, and a session with thousands of findings still fits.
#[test]
fn the_projects_words_reach_the_pull_request_summary_inert_and_a_huge_session_is_cut_to_fit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
    let session = SessionDir::open(root.join("TST-test-the-new-tokenizer-2026-12-03")).unwrap();
    let mut report = build(&session, &TeamConfig::builtin().unwrap());
    let hostile = "<script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror=alert(1)> **b** `tick` | pipe \r<img src=y onerror=alert(2)> @octocat https://evil.example";
    for i in 0..5000 {
        report.findings.contract_findings.push(serde_json::json!({
            "module": format!("calc{i}"), "function": hostile, "kind": "exception",
            "call": hostile, "expected": hostile, "actual": hostile,
        }));
    }
    report.behaviour = Some(crate::gen::behaviour::BehaviourReport {
        base: "abc".into(),
        changes: vec![crate::gen::behaviour::BehaviourChange {
            id: "B1".into(),
            module: "calc".into(),
            function: hostile.into(),
            input: hostile.into(),
            before: hostile.into(),
            after: "returns <b>bold</b>".into(),
            verdict: crate::gen::behaviour::Verdict::ForReview,
            more_inputs: 0,
            new_test: String::new(),
            old_test: String::new(),
            new_body: Vec::new(),
            old_body: Vec::new(),
            new_file: String::new(),
            old_file: String::new(),
            lines: None,
            hunk: String::new(),
        }],
        compared: 1,
        unchanged_tests: 0,
        seconds: 0.0,
        problems: Vec::new(),
        added: Vec::new(),
    });
    let md = pr_summary(&report, &session.root);
    assert!(md.chars().count() < COMMENT_LIMIT);
    // Behaviour changes first, then the findings, cut with a count.
    let behaviour = md.find("## Behaviour the change altered").unwrap();
    let defects = md.find("## Defects and side effects").unwrap();
    assert!(behaviour < defects, "{md}");
    assert!(md.contains("… and 4960 more"), "{md}");
    let html = rendered(&md);
    assert_eq!(foreign_tags(&html), Vec::<String>::new());
    assert!(!html.contains("href="), "a link got through");
    assert!(!md.contains('\r'));
    // Outside code, a mention or an address GitHub would act on is broken by a zero-width space.
    let plain: String = regex::Regex::new(r"<code>[^<]*</code>")
        .unwrap()
        .replace_all(&html, "")
        .into_owned();
    assert!(
        !plain.contains("@octocat") && !plain.contains("https://evil"),
        "{plain}"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}
