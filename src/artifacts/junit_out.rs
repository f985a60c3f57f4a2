//! `results/junit-<layer>.xml`: a layer's last run as JUnit XML, for a CI's test tab. One
//! `<testcase>` per test of the run record, then one per test the layer's runs took out:
//!
//! - passed: a plain case;
//! - a failure or an error the classifier judged a code defect: `<skipped>` with the message
//!   (the test did its job, it found a bug; `--fail-on code-defect` is how a job fails on it);
//! - any other failure or error: `<failure>` or `<error>`, typed by its classification;
//! - skipped: `<skipped>` with the runner's message;
//! - flaky (failed, then passed on a re-run): `<skipped>`, "flaky: …";
//! - quarantined (taken out of the layer): `<skipped>`, "quarantined: …" with the reason.
//!
//! So the suite's `tests` is the record's tests plus the quarantined ones, `failures` and
//! `errors` are the record's less the code defects, and `skipped` is everything else that did
//! not pass.

use std::io::Cursor;

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;

use super::{RecordedStatus, RunRecord, TestRecord};
use crate::testing::classify::Classification;

/// The file of a layer's JUnit XML, relative to the session.
pub fn junit_file(layer: &str) -> String {
    format!("results/junit-{layer}.xml")
}

/// What one case says beyond passing: (element, message, type, body).
struct Outcome {
    element: &'static str,
    message: String,
    kind: Option<String>,
    body: String,
}

/// Text XML 1.0 allows: terminal colours taken out, other control characters (which a strict
/// parser rejects, and the whole file with them) dropped.
fn xml_text(s: &str) -> String {
    crate::util::strip_ansi(s)
        .chars()
        .filter(|c| {
            matches!(c, '\t' | '\n' | '\r')
                || !(c.is_control() || ('\u{fffe}'..='\u{ffff}').contains(c))
        })
        .collect()
}

fn outcome(t: &TestRecord) -> Option<Outcome> {
    let message = xml_text(t.message.as_deref().unwrap_or_default());
    let classification = t.classification.map(|c| c.as_str().to_string());
    let body = t
        .evidence
        .as_ref()
        .map(|e| xml_text(&e.excerpt))
        .unwrap_or_default();
    let skipped = |message: String| Outcome {
        element: "skipped",
        message,
        kind: None,
        body: String::new(),
    };
    match t.status {
        RecordedStatus::Passed => None,
        RecordedStatus::Failed | RecordedStatus::Error
            if t.classification == Some(Classification::CodeDefect) =>
        {
            Some(skipped(format!("code_defect: {message}")))
        }
        RecordedStatus::Failed => Some(Outcome {
            element: "failure",
            message,
            kind: classification,
            body,
        }),
        RecordedStatus::Error | RecordedStatus::Unknown => Some(Outcome {
            element: "error",
            message,
            kind: classification,
            body,
        }),
        RecordedStatus::Skipped => Some(skipped(message)),
        RecordedStatus::Flaky => Some(skipped(
            "flaky: failed, then passed on a re-run".to_string(),
        )),
    }
}

/// One `<testcase>`: (id, file, seconds, what it says beyond passing).
type Case<'a> = (&'a str, Option<&'a str>, Option<f64>, Option<Outcome>);

/// (classname, name) of a test id: the part before the first `::` is the file or module.
fn split_id(id: &str) -> (&str, &str) {
    id.split_once("::").unwrap_or(("", id))
}

/// The run as JUnit XML (UTF-8, with its declaration).
pub fn junit_xml(record: &RunRecord) -> String {
    let listed: Vec<Case> = record
        .tests()
        .iter()
        .map(|t| (t.id.as_str(), t.file.as_deref(), t.duration_s, outcome(t)))
        .collect();
    let taken_out = record
        .quarantined()
        .iter()
        .filter(|q| !record.tests().iter().any(|t| t.id == q.id))
        .map(|q| {
            let why = q.unsafe_effect.as_deref().unwrap_or(&q.reason);
            let outcome = Outcome {
                element: "skipped",
                message: xml_text(&format!("quarantined: {why}")),
                kind: None,
                body: String::new(),
            };
            (q.id.as_str(), None, None, Some(outcome))
        });
    let cases: Vec<_> = listed.into_iter().chain(taken_out).collect();
    let count = |element: &str| {
        cases
            .iter()
            .filter(|c| c.3.as_ref().is_some_and(|o| o.element == element))
            .count()
            .to_string()
    };
    let (tests, failures, errors, skipped) = (
        cases.len().to_string(),
        count("failure"),
        count("error"),
        count("skipped"),
    );
    let time = format!("{:.3}", record.duration_s.unwrap_or(0.0));
    let name = format!("team-testing {}", record.layer);
    let mut w = Writer::new_with_indent(Cursor::new(Vec::new()), b' ', 2);
    // Writing to memory cannot fail.
    let mut put = |event: Event| w.write_event(event).expect("writing to memory");
    put(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)));
    let counts = [
        ("tests", tests.as_str()),
        ("failures", failures.as_str()),
        ("errors", errors.as_str()),
        ("skipped", skipped.as_str()),
        ("time", time.as_str()),
    ];
    put(Event::Start(
        BytesStart::new("testsuites")
            .with_attributes([("name", name.as_str())])
            .with_attributes(counts),
    ));
    let mut suite = BytesStart::new("testsuite")
        .with_attributes([("name", record.layer.as_str())])
        .with_attributes(counts);
    if let Some(at) = &record.started_at {
        suite.push_attribute(("timestamp", at.as_str()));
    }
    put(Event::Start(suite));
    for (id, file, duration, outcome) in &cases {
        let id = xml_text(id);
        let (classname, case_name) = split_id(&id);
        let mut case = BytesStart::new("testcase").with_attributes([("name", case_name)]);
        if !classname.is_empty() {
            case.push_attribute(("classname", classname));
        }
        if let Some(file) = file {
            case.push_attribute(("file", *file));
        }
        let seconds = duration.map(|d| format!("{d:.3}"));
        if let Some(s) = &seconds {
            case.push_attribute(("time", s.as_str()));
        }
        let Some(o) = outcome else {
            put(Event::Empty(case));
            continue;
        };
        put(Event::Start(case));
        let mut element =
            BytesStart::new(o.element).with_attributes([("message", o.message.as_str())]);
        if let Some(kind) = &o.kind {
            element.push_attribute(("type", kind.as_str()));
        }
        if o.body.is_empty() {
            put(Event::Empty(element));
        } else {
            put(Event::Start(element));
            put(Event::Text(BytesText::new(&o.body)));
            put(Event::End(BytesEnd::new(o.element)));
        }
        put(Event::End(BytesEnd::new("testcase")));
    }
    put(Event::End(BytesEnd::new("testsuite")));
    put(Event::End(BytesEnd::new("testsuites")));
    let mut text = String::from_utf8(w.into_inner().into_inner()).expect("written from strs");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::{Evidence, Quarantined};
    use crate::testing::report::TestStatus;

    fn test(id: &str, status: RecordedStatus, class: Option<Classification>) -> TestRecord {
        TestRecord {
            id: id.into(),
            file: Some("test_m.py".into()),
            status,
            duration_s: Some(0.5),
            message: (status != RecordedStatus::Passed)
                .then(|| format!("{id} <went> \u{1b}[31m\"wrong\"\u{1b}[0m\u{7}")),
            classification: class,
            evidence: class.map(|_| Evidence {
                excerpt: "assert 1 == 2 & more".into(),
                ..Evidence::default()
            }),
            ..TestRecord::default()
        }
    }

    /// The strict parser the executor reads runners' reports with reads ours back: every case,
    /// code defects, flaky and quarantined tests skipped with their message.
    #[test]
    fn a_run_record_reads_back_as_the_same_cases_with_defects_and_quarantined_tests_skipped() {
        let record = RunRecord {
            layer: "L1-unit".into(),
            duration_s: Some(2.0),
            tests: Some(vec![
                test("test_m::test_ok", RecordedStatus::Passed, None),
                test(
                    "test_m::test_bug",
                    RecordedStatus::Failed,
                    Some(Classification::CodeDefect),
                ),
                test(
                    "test_m::test_wrong",
                    RecordedStatus::Failed,
                    Some(Classification::TestDefect),
                ),
                test(
                    "test_m::TestA::test_env",
                    RecordedStatus::Error,
                    Some(Classification::EnvIssue),
                ),
                test("test_m::test_skip", RecordedStatus::Skipped, None),
                test("test_m::test_flaky", RecordedStatus::Flaky, None),
            ]),
            quarantined: Some(vec![Quarantined {
                id: "test_m::test_unsafe".into(),
                reason: "unsafe".into(),
                unsafe_effect: Some("removed /x".into()),
                file: false,
                task_id: String::new(),
            }]),
            ..RunRecord::default()
        };
        let xml = junit_xml(&record);
        let cases = crate::testing::junit::parse_junit_str(&xml, std::path::Path::new("j.xml"))
            .unwrap_or_else(|e| panic!("{e}\n{xml}"));
        let got: Vec<(&str, TestStatus, Option<&str>)> = cases
            .iter()
            .map(|c| (c.id.as_str(), c.status, c.message.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("test_m::test_ok", TestStatus::Passed, None),
                (
                    "test_m::test_bug",
                    TestStatus::Skipped,
                    Some("code_defect: test_m::test_bug <went> \"wrong\"")
                ),
                (
                    "test_m::test_wrong",
                    TestStatus::Failed,
                    Some("test_m::test_wrong <went> \"wrong\"")
                ),
                (
                    "test_m::TestA::test_env",
                    TestStatus::Error,
                    Some("test_m::TestA::test_env <went> \"wrong\"")
                ),
                (
                    "test_m::test_skip",
                    TestStatus::Skipped,
                    Some("test_m::test_skip <went> \"wrong\"")
                ),
                (
                    "test_m::test_flaky",
                    TestStatus::Skipped,
                    Some("flaky: failed, then passed on a re-run")
                ),
                (
                    "test_m::test_unsafe",
                    TestStatus::Skipped,
                    Some("quarantined: removed /x")
                ),
            ]
        );
        assert!(xml.contains(r#"<testsuite name="L1-unit" tests="7" failures="1" errors="1" skipped="4" time="2.000""#), "{xml}");
        assert!(xml.contains("assert 1 == 2 &amp; more"), "{xml}");
    }
}
