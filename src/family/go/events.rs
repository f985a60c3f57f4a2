//! `go test -json` output: one event a line (`run`, `output`, `pass`, `fail`, `skip`, with the
//! package and the test's name), folded into one result per test with its output.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::testing::report::TestStatus;

/// Bytes of a test's output kept as the detail of its result.
const DETAIL_LIMIT: usize = 4096;

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Package", default)]
    package: String,
    #[serde(rename = "Test")]
    test: Option<String>,
    #[serde(rename = "Output")]
    output: Option<String>,
    #[serde(rename = "Elapsed")]
    elapsed: Option<f64>,
}

/// One test (or subtest, `TestSub/case`) as the events told it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct GoTest {
    /// The package's import path.
    pub package: String,
    pub name: String,
    /// None: it started and never ended (the test binary died: a panic elsewhere, a timeout).
    pub status: Option<TestStatus>,
    pub elapsed: Option<f64>,
    pub output: String,
}

impl GoTest {
    /// The top-level test function this (sub)test belongs to.
    pub fn function(&self) -> &str {
        self.name.split('/').next().unwrap_or(&self.name)
    }

    /// The first log line (`calc_test.go:12: want 4`) or panic, trimmed.
    pub fn message(&self) -> Option<String> {
        self.output
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with("panic: ") || is_log_line(l))
            .map(str::to_string)
    }

    /// What the test printed, without go's own `=== RUN` / `--- FAIL` lines.
    pub fn detail(&self) -> Option<String> {
        let lines: Vec<&str> = self
            .output
            .lines()
            .filter(|l| {
                let t = l.trim_start();
                !(t.starts_with("=== ") || t.starts_with("--- "))
            })
            .collect();
        let mut detail = lines.join("\n");
        if detail.trim().is_empty() {
            return None;
        }
        if detail.len() > DETAIL_LIMIT {
            let mut end = DETAIL_LIMIT;
            while !detail.is_char_boundary(end) {
                end -= 1;
            }
            detail.truncate(end);
        }
        Some(detail)
    }
}

/// `file.go:12: text`: what t.Log, t.Error and t.Skip print.
fn is_log_line(line: &str) -> bool {
    let Some((location, _)) = line.split_once(": ") else {
        return false;
    };
    location
        .rsplit_once(".go:")
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The tests of a `go test -json` run, in the order they started, and all it printed.
#[derive(Debug, Default)]
pub(super) struct Parsed {
    pub tests: Vec<GoTest>,
    /// Every output event's text in order: what `go test` alone would have printed.
    pub transcript: String,
}

pub(super) fn parse_events(text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let mut index: BTreeMap<(String, String), usize> = BTreeMap::new();
    // Lines that are not events (a go older than -json, a wrapper's noise) are not results.
    for event in text
        .lines()
        .filter_map(|l| serde_json::from_str::<Event>(l).ok())
    {
        if let Some(o) = &event.output {
            parsed.transcript.push_str(o);
        }
        let Some(name) = event.test else {
            continue;
        };
        let key = (event.package.clone(), name.clone());
        let at = *index.entry(key).or_insert_with(|| {
            parsed.tests.push(GoTest {
                package: event.package.clone(),
                name,
                status: None,
                elapsed: None,
                output: String::new(),
            });
            parsed.tests.len() - 1
        });
        let test = &mut parsed.tests[at];
        match event.action.as_str() {
            "output" => test.output.push_str(event.output.as_deref().unwrap_or("")),
            "pass" => test.status = Some(TestStatus::Passed),
            "fail" => test.status = Some(TestStatus::Failed),
            "skip" => test.status = Some(TestStatus::Skipped),
            _ => {}
        }
        if event.elapsed.is_some() {
            test.elapsed = event.elapsed;
        }
    }
    parsed
}

/// The results that count: every test without subtests, and a parent that failed on its own
/// (its subtests all passed). A parent that failed because a subtest did would count twice.
pub(super) fn leaves(tests: &[GoTest]) -> Vec<&GoTest> {
    let children = |t: &GoTest| -> Vec<&GoTest> {
        let prefix = format!("{}/", t.name);
        tests
            .iter()
            .filter(|c| c.package == t.package && c.name.starts_with(&prefix))
            .collect()
    };
    tests
        .iter()
        .filter(|t| {
            let kids = children(t);
            kids.is_empty()
                || (t.status == Some(TestStatus::Failed)
                    && kids.iter().all(|k| k.status != Some(TestStatus::Failed)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real events of go 1.19 (`go test -json`), shortened: a pass, a skip, subtests of which
    /// one fails, a failed assertion and a panic.
    const EVENTS: &str = r#"{"Action":"run","Package":"example.com/calc","Test":"TestAdd"}
{"Action":"output","Package":"example.com/calc","Test":"TestAdd","Output":"=== RUN   TestAdd\n"}
{"Action":"output","Package":"example.com/calc","Test":"TestAdd","Output":"--- PASS: TestAdd (0.00s)\n"}
{"Action":"pass","Package":"example.com/calc","Test":"TestAdd","Elapsed":0}
{"Action":"run","Package":"example.com/calc","Test":"TestSkip"}
{"Action":"output","Package":"example.com/calc","Test":"TestSkip","Output":"    tt_L1_add_test.go:11: not now\n"}
{"Action":"skip","Package":"example.com/calc","Test":"TestSkip","Elapsed":0}
{"Action":"run","Package":"example.com/calc","Test":"TestSub"}
{"Action":"run","Package":"example.com/calc","Test":"TestSub/one"}
{"Action":"run","Package":"example.com/calc","Test":"TestSub/two_words"}
{"Action":"output","Package":"example.com/calc","Test":"TestSub/two_words","Output":"    tt_L1_add_test.go:15: boom\n"}
{"Action":"output","Package":"example.com/calc","Test":"TestSub","Output":"--- FAIL: TestSub (0.00s)\n"}
{"Action":"pass","Package":"example.com/calc","Test":"TestSub/one","Elapsed":0}
{"Action":"fail","Package":"example.com/calc","Test":"TestSub/two_words","Elapsed":0}
{"Action":"fail","Package":"example.com/calc","Test":"TestSub","Elapsed":0}
{"Action":"run","Package":"example.com/calc","Test":"TestAverage"}
{"Action":"output","Package":"example.com/calc","Test":"TestAverage","Output":"    tt_L1_avg_test.go:11: Average([2 4 6]) = 3.3333333333333335, want 4\n"}
{"Action":"fail","Package":"example.com/calc","Test":"TestAverage","Elapsed":0.01}
{"Action":"run","Package":"example.com/calc","Test":"TestPanic"}
{"Action":"output","Package":"example.com/calc","Test":"TestPanic","Output":"panic: assignment to entry in nil map [recovered]\n"}
{"Action":"output","Package":"example.com/calc","Test":"TestPanic","Output":"\t/usr/lib/go-1.19/src/runtime/panic.go:884 +0x212\n"}
{"Action":"output","Package":"example.com/calc","Test":"TestPanic","Output":"\t/w/go-L1-unit/tt_L1_avg_test.go:16 +0x2e\n"}
{"Action":"fail","Package":"example.com/calc","Test":"TestPanic","Elapsed":0}
{"Action":"run","Package":"example.com/calc","Test":"TestNeverEnds"}
{"Action":"output","Package":"example.com/calc","Output":"FAIL\texample.com/calc\t0.009s\n"}
{"Action":"fail","Package":"example.com/calc","Elapsed":0.009}
"#;

    #[test]
    fn events_become_one_result_per_test() {
        let parsed = parse_events(&format!("not an event\n{EVENTS}"));
        let results: Vec<(&str, Option<TestStatus>)> = leaves(&parsed.tests)
            .iter()
            .map(|t| (t.name.as_str(), t.status))
            .collect();
        assert_eq!(
            results,
            [
                ("TestAdd", Some(TestStatus::Passed)),
                ("TestSkip", Some(TestStatus::Skipped)),
                ("TestSub/one", Some(TestStatus::Passed)),
                ("TestSub/two_words", Some(TestStatus::Failed)),
                ("TestAverage", Some(TestStatus::Failed)),
                ("TestPanic", Some(TestStatus::Failed)),
                ("TestNeverEnds", None),
            ]
        );
        let average = &parsed.tests[5];
        assert_eq!(average.function(), "TestAverage");
        assert_eq!(average.elapsed, Some(0.01));
        assert_eq!(
            average.message().as_deref(),
            Some("tt_L1_avg_test.go:11: Average([2 4 6]) = 3.3333333333333335, want 4")
        );
        let panic = &parsed.tests[6];
        assert_eq!(
            panic.message().as_deref(),
            Some("panic: assignment to entry in nil map [recovered]")
        );
        assert!(panic
            .detail()
            .unwrap()
            .contains("tt_L1_avg_test.go:16 +0x2e"));
        assert_eq!(parsed.tests[0].detail(), None, "go's own lines only");
        assert_eq!(parsed.tests[4].function(), "TestSub");
        assert!(parsed.transcript.starts_with("=== RUN   TestAdd\n"));
        assert!(parsed
            .transcript
            .ends_with("FAIL\texample.com/calc\t0.009s\n"));
    }
}
