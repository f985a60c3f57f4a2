//! The human output of `cargo test` (stable libtest has no JSON): `test <path> ... ok|FAILED|ignored`
//! lines, the `---- <path> stdout ----` failure sections and one `test result:` line per test binary.

use crate::testing::report::{TestCase, TestStatus, TestTotals};

const DETAIL_LIMIT: usize = 4096;

/// What one `cargo test` run printed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LibtestRun {
    /// Every `test ... <result>` line, in output order, over all test binaries.
    pub cases: Vec<TestCase>,
    /// Sum of the `test result:` lines (ignored -> skipped, measured benches -> passed).
    pub summary: TestTotals,
    /// Sum of their `filtered out` counts.
    pub filtered_out: usize,
    /// How many `test result:` lines there were (one per test binary, doc-tests included).
    pub binaries: usize,
    /// A `running N tests` had no `test result:` line: a test binary crashed or the output was cut.
    pub incomplete: bool,
    /// The output says `error: could not compile`.
    pub build_failed: bool,
}

#[derive(Default)]
struct Parser {
    run: LibtestRun,
    /// The test binary's source (`src/lib.rs`, `tests/it.rs`), None for doc-tests.
    source: Option<String>,
    /// Index of the current binary's first case.
    binary_start: usize,
    running: usize,
    /// The open `---- name stdout ----` section: test id and lines so far.
    section: Option<(String, Vec<String>)>,
}

/// Reads `cargo test` output (stdout and stderr together, as `2>&1` gives it). Never fails:
/// lines it does not know are skipped.
pub fn parse_libtest(output: &str) -> LibtestRun {
    let mut p = Parser::default();
    for line in output.lines() {
        p.line(line.trim_end());
    }
    p.close_section();
    p.run.incomplete = p.running > p.run.binaries;
    p.run
}

impl Parser {
    fn line(&mut self, line: &str) {
        if line.contains("error: could not compile") {
            self.run.build_failed = true;
        }
        if let Some(name) = line
            .strip_prefix("---- ")
            .and_then(|r| r.strip_suffix(" stdout ----"))
        {
            self.close_section();
            self.section = Some((name.to_string(), Vec::new()));
        } else if line == "failures:" || line == "successes:" || line.starts_with("test result: ") {
            self.close_section();
            if let Some(rest) = line.strip_prefix("test result: ") {
                self.result_line(rest);
            }
        } else if let Some((_, lines)) = &mut self.section {
            lines.push(line.to_string());
        } else {
            self.other_line(line);
        }
    }

    fn other_line(&mut self, line: &str) {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("Running ") {
            let rest = rest.strip_prefix("unittests ").unwrap_or(rest);
            self.source = rest.split_once(" (").map(|(src, _)| src.to_string());
            self.binary_start = self.run.cases.len();
        } else if trimmed.starts_with("Doc-tests ") {
            self.source = None;
            self.binary_start = self.run.cases.len();
        } else if line.starts_with("running ")
            && (line.ends_with(" tests") || line.ends_with(" test"))
        {
            self.running += 1;
        } else if let Some(case) = line.strip_prefix("test ").and_then(|r| self.case(r)) {
            self.run.cases.push(case);
        }
    }

    /// `<path>[ - should panic] ... ok|FAILED|ignored[, reason]|bench: ...`
    fn case(&self, rest: &str) -> Option<TestCase> {
        let (id, result) = rest.rsplit_once(" ... ")?;
        let id = id.strip_suffix(" - should panic").unwrap_or(id).to_string();
        let (status, message) = match result {
            "ok" => (TestStatus::Passed, None),
            "FAILED" => (TestStatus::Failed, None),
            "ignored" => (TestStatus::Skipped, None),
            r => match r.strip_prefix("ignored, ") {
                Some(reason) => (TestStatus::Skipped, Some(reason.to_string())),
                None if r.starts_with("bench:") => (TestStatus::Passed, Some(r.to_string())),
                None => return None,
            },
        };
        // Doc-tests are named `src/lib.rs - path::item (line 3)`: no module path to split.
        let (classname, name) = match id.rsplit_once("::") {
            Some((class, name)) if !id.contains(" - ") => {
                (Some(class.to_string()), name.to_string())
            }
            _ => (None, id.clone()),
        };
        Some(TestCase {
            id,
            name,
            classname,
            file: self.source.clone(),
            line: None,
            status,
            duration_s: None,
            message,
            detail: None,
        })
    }

    /// `ok. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s`
    fn result_line(&mut self, rest: &str) {
        self.run.binaries += 1;
        let counts = rest.split_once(". ").map_or(rest, |(_, c)| c);
        let t = &mut self.run.summary;
        for part in counts.split(';') {
            let Some((n, what)) = part.trim().split_once(' ') else {
                continue;
            };
            let Ok(n) = n.parse::<usize>() else { continue };
            match what {
                "passed" | "measured" => t.passed = t.passed.saturating_add(n),
                "failed" => t.failed = t.failed.saturating_add(n),
                "ignored" => t.skipped = t.skipped.saturating_add(n),
                "filtered out" => self.run.filtered_out = self.run.filtered_out.saturating_add(n),
                _ => continue,
            }
            if what != "filtered out" {
                t.total = t.total.saturating_add(n);
            }
        }
    }

    /// Attaches the finished section to its failed case in the current binary.
    fn close_section(&mut self) {
        let Some((id, lines)) = self.section.take() else {
            return;
        };
        let binary = self
            .run
            .cases
            .get_mut(self.binary_start..)
            .unwrap_or_default();
        let Some(case) = binary
            .iter_mut()
            .rev()
            .find(|c| c.id == id && c.status == TestStatus::Failed)
        else {
            return;
        };
        let text = lines.join("\n");
        case.detail = Some(truncate(text.trim(), DETAIL_LIMIT).to_string());
        let panic = lines.iter().position(|l| l.contains("panicked at "));
        match panic {
            Some(i) => {
                let (message, location) = panic_info(&lines[i..]);
                case.message = message;
                if let Some((file, line)) = location {
                    case.file = Some(file);
                    case.line = Some(line);
                }
            }
            None => {
                case.message = lines
                    .iter()
                    .find(|l| !l.trim().is_empty())
                    .map(|l| l.trim().to_string())
            }
        }
    }
}

/// From `thread 'x' (12) panicked at src/lib.rs:21:9:` and the message lines after it (or the
/// pre-1.73 form `panicked at 'msg', src/lib.rs:21:9`): one-line message and (file, line).
fn panic_info(lines: &[String]) -> (Option<String>, Option<(String, u32)>) {
    let Some(after) = lines
        .first()
        .and_then(|l| l.split_once("panicked at "))
        .map(|(_, a)| a)
    else {
        return (None, None);
    };
    let after = after.trim_end().trim_end_matches(':');
    let location = after.rsplit(' ').next().and_then(file_line);
    let message = match after.strip_prefix('\'').and_then(|a| a.rsplit_once("', ")) {
        Some((old_style, _)) => old_style.to_string(),
        None => lines[1..]
            .iter()
            .map(|l| l.trim())
            .take_while(|l| !l.is_empty() && !l.starts_with("note: ") && *l != "stack backtrace:")
            .collect::<Vec<_>>()
            .join("; "),
    };
    ((!message.is_empty()).then_some(message), location)
}

/// `src/lib.rs:21:9` -> (`src/lib.rs`, 21)
fn file_line(loc: &str) -> Option<(String, u32)> {
    let mut parts = loc.rsplitn(3, ':');
    let _column: u32 = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    let file = parts.next().filter(|f| !f.is_empty())?;
    Some((file.to_string(), line))
}

fn truncate(text: &str, limit: usize) -> &str {
    let mut end = text.len().min(limit);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixture(name: &str) -> String {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reports");
        std::fs::read_to_string(dir.join(name)).unwrap()
    }

    fn case<'a>(run: &'a LibtestRun, id: &str) -> &'a TestCase {
        run.cases.iter().find(|c| c.id == id).unwrap()
    }

    fn check_real_run(run: &LibtestRun) {
        let ids: Vec<(&str, TestStatus)> = run
            .cases
            .iter()
            .map(|c| (c.id.as_str(), c.status))
            .collect();
        use TestStatus::*;
        assert_eq!(
            ids,
            [
                ("tests::adds", Passed),
                ("tests::networked", Skipped),
                ("tests::slow", Skipped),
                ("tests::doubles", Failed),
                ("integration_adds", Passed),
                ("integration_panics", Failed),
            ]
        );
        assert_eq!(run.summary, TestTotals::of(&run.cases));
        assert_eq!(run.summary.total, 6);
        assert_eq!(
            (
                run.binaries,
                run.filtered_out,
                run.incomplete,
                run.build_failed
            ),
            (3, 0, false, false)
        );
        let adds = case(run, "tests::adds");
        assert_eq!(
            (adds.name.as_str(), adds.classname.as_deref()),
            ("adds", Some("tests"))
        );
        assert_eq!(
            (adds.file.as_deref(), adds.line, adds.detail.as_deref()),
            (Some("src/lib.rs"), None, None)
        );
        assert_eq!(
            case(run, "tests::networked").message.as_deref(),
            Some("needs network")
        );
        assert_eq!(case(run, "tests::slow").message, None);
        let doubles = case(run, "tests::doubles");
        assert_eq!(
            doubles.message.as_deref(),
            Some("assertion `left == right` failed; left: 6; right: 4")
        );
        assert_eq!(
            (doubles.file.as_deref(), doubles.line),
            (Some("src/lib.rs"), Some(21))
        );
        assert!(doubles
            .detail
            .as_deref()
            .unwrap()
            .starts_with("checking double\n"));
        let panics = case(run, "integration_panics");
        assert_eq!(
            (panics.name.as_str(), panics.classname.as_deref()),
            ("integration_panics", None)
        );
        assert_eq!(panics.message.as_deref(), Some("boom: empty input"));
        assert_eq!(
            (panics.file.as_deref(), panics.line),
            (Some("tests/it.rs"), Some(10))
        );
        assert_eq!(
            case(run, "integration_adds").file.as_deref(),
            Some("tests/it.rs")
        );
    }

    #[test]
    fn real_cargo_test_output() {
        check_real_run(&parse_libtest(&fixture("cargo-test-output.txt")));
    }

    #[test]
    fn real_cargo_test_output_with_backtraces() {
        let run = parse_libtest(&fixture("cargo-test-output-backtrace.txt"));
        check_real_run(&run);
        let detail = case(&run, "tests::doubles").detail.clone().unwrap();
        assert!(
            detail.contains("stack backtrace:") && !detail.contains("failures:"),
            "{detail}"
        );
    }

    #[test]
    fn real_build_failure() {
        let run = parse_libtest(&fixture("cargo-test-build-failed.txt"));
        assert!(run.build_failed && !run.incomplete);
        assert_eq!(
            (run.cases.len(), run.binaries, run.summary.total),
            (0, 0, 0)
        );
    }

    #[test]
    fn old_panic_format_should_panic_doc_tests_and_benches() {
        let out = "running 4 tests\n\
            test a::b - should panic ... FAILED\n\
            test src/lib.rs - m::add (line 3) ... ok\n\
            test bench_x ... bench:          12 ns/iter (+/- 1)\n\
            test weird ... something else\n\n\
            failures:\n\n---- a::b stdout ----\n\
            thread 'a::b' panicked at 'x was 3', src/a.rs:7:5\n\n\
            failures:\n    a::b\n\n\
            test result: FAILED. 1 passed; 1 failed; 0 ignored; 1 measured; 5 filtered out; finished in 0.1s\n";
        let run = parse_libtest(out);
        assert_eq!(run.cases.len(), 3);
        let ab = case(&run, "a::b");
        assert_eq!(
            (ab.message.as_deref(), ab.file.as_deref(), ab.line),
            (Some("x was 3"), Some("src/a.rs"), Some(7))
        );
        let doc = case(&run, "src/lib.rs - m::add (line 3)");
        assert_eq!(
            (doc.name.as_str(), doc.classname.as_deref()),
            ("src/lib.rs - m::add (line 3)", None)
        );
        assert_eq!(case(&run, "bench_x").status, TestStatus::Passed);
        assert_eq!(
            (run.summary.total, run.summary.passed, run.filtered_out),
            (3, 2, 5)
        );
    }

    #[test]
    fn section_without_panic_and_long_detail() {
        let body = "é".repeat(3000);
        let out = format!(
            "running 1 test\ntest t ... FAILED\n\nfailures:\n\n---- t stdout ----\n\
             note: test did not panic as expected\n{body}\n\nfailures:\n    t\n"
        );
        let run = parse_libtest(&out);
        let t = case(&run, "t");
        assert_eq!(
            t.message.as_deref(),
            Some("note: test did not panic as expected")
        );
        let detail = t.detail.as_deref().unwrap();
        assert!(detail.len() <= DETAIL_LIMIT && detail.len() > 4000);
        assert!(run.incomplete, "no test result line");
    }

    #[test]
    fn crashed_binary_and_garbage_never_panic() {
        let run = parse_libtest(
            "running 2 tests\ntest a ... ok\nerror: test failed\n  (signal: 11, SIGSEGV)\n",
        );
        assert!(run.incomplete);
        assert_eq!(run.cases.len(), 1);
        for junk in [
            "",
            "test  ... ",
            "---- x stdout ----",
            "test result: FAILED. x passed; ;",
            "panicked at :",
        ] {
            let run = parse_libtest(junk);
            assert!(run.cases.is_empty(), "{junk}");
        }
        assert_eq!(panic_info(&["panicked at ".to_string()]), (None, None));
        let max = format!("test result: ok. {} passed; 0 failed\n", usize::MAX);
        assert_eq!(parse_libtest(&max.repeat(2)).summary.passed, usize::MAX);
        assert_eq!(file_line(":1:2"), None);
    }
}
