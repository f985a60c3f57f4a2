//! JUnit XML as pytest, node --test, jest (our reporter), vitest and nextest write it. A tolerant streaming
//! reader: `<testcase>` at any depth (node puts them straight under `<testsuites>`), counts come
//! from the cases (suite totals and timestamps are ignored), and broken input is an error.

use std::borrow::Cow;
use std::io::{BufRead, Read};
use std::path::Path;

use quick_xml::errors::SyntaxError;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use super::report::{ReportParseError, TestCase, TestStatus};

/// Failure bodies and messages longer than this many bytes are cut.
const TEXT_LIMIT: usize = 4096;
const TRUNCATED: &str = "…[truncated]";

/// Why an XML report cannot be read, before it is known which file it is; byte offsets and
/// element names are kept as data.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(super) enum XmlProblem {
    #[error("not XML: text outside any element")]
    TextOutside,
    #[error("empty file")]
    Empty,
    #[error("truncated: the document ends inside <{inside}>")]
    EndsInside { inside: String },
    /// quick-xml's "not closed before end of input" syntax errors: a cut-off file.
    #[error("truncated: {syntax} (at byte {at})")]
    CutOff { syntax: String, at: u64 },
    #[error("malformed XML at byte {at}: {cause}")]
    Malformed { at: u64, cause: String },
    #[error("bad attribute in <{element}>: {cause}")]
    BadAttribute { element: String, cause: String },
}

/// One element-level XML event, entities already resolved.
pub(super) enum Node<'e> {
    Start(BytesStart<'e>),
    Empty(BytesStart<'e>),
    /// An end tag, by local name.
    End(String),
    Text(Cow<'e, str>),
}

/// Streams `text` as XML into `visit`; malformed, truncated or non-XML text is an error.
pub(super) fn walk_xml<E: From<XmlProblem>>(
    text: &str,
    visit: impl FnMut(Node<'_>) -> Result<(), E>,
) -> Result<(), E> {
    walk_xml_from(text.as_bytes(), visit)
}

/// [`walk_xml`] over a reader: one event in memory at a time, so a report of any size is parsed
/// in the memory of its largest single element or text.
pub(super) fn walk_xml_from<R: BufRead, E: From<XmlProblem>>(
    source: R,
    mut visit: impl FnMut(Node<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let mut reader = Reader::from_reader(source);
    let mut buf = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let mut anything = false;
    loop {
        buf.clear();
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| xml_error(&e, reader.error_position()))?;
        let node = match event {
            Event::Start(e) => {
                open.push(e.local_name().as_ref().to_string());
                Node::Start(e)
            }
            Event::Empty(e) => Node::Empty(e),
            Event::End(_) => Node::End(open.pop().unwrap_or_default()),
            Event::Text(t) => Node::Text(t.xml10_content()),
            Event::CData(t) => Node::Text(t.xml10_content()),
            Event::GeneralRef(r) => Node::Text(resolve_ref(&r)),
            Event::Eof => break,
            _ => {
                anything = true;
                continue;
            }
        };
        let blank =
            matches!(&node, Node::Text(t) if t.trim_start_matches('\u{feff}').trim().is_empty());
        anything |= !blank;
        if open.is_empty() && matches!(&node, Node::Text(_)) && !blank {
            return Err(XmlProblem::TextOutside.into());
        }
        visit(node)?;
    }
    if !anything {
        return Err(XmlProblem::Empty.into());
    }
    match open.pop() {
        Some(inside) => Err(XmlProblem::EndsInside { inside }.into()),
        None => Ok(()),
    }
}

/// A report file, read as it is parsed; bytes that are not UTF-8 stop it with their offset.
pub(super) fn open_report(path: &Path) -> Result<impl BufRead, ReportParseError> {
    let file = crate::util::open_regular(path)
        .map_err(|e| ReportParseError::new(path, format!("cannot read: {e}")))?;
    Ok(std::io::BufReader::with_capacity(
        64 * 1024,
        Utf8Checked {
            inner: file,
            carry: Vec::new(),
            offset: 0,
        },
    ))
}

/// Checks that what passes through is UTF-8, a chunk at a time (a character split between two
/// reads is carried over).
struct Utf8Checked<R> {
    inner: R,
    carry: Vec<u8>,
    offset: u64,
}

impl<R: Read> Read for Utf8Checked<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.len() < 8 {
            return Err(std::io::Error::other("read buffer too small"));
        }
        let held = self.carry.len();
        out[..held].copy_from_slice(&self.carry);
        self.carry.clear();
        let n = self.inner.read(&mut out[held..])?;
        let total = held + n;
        let valid = match std::str::from_utf8(&out[..total]) {
            Ok(_) => total,
            Err(e) if e.error_len().is_none() && n > 0 => {
                // An incomplete character at the end: hand it over with the next read.
                let cut = e.valid_up_to();
                self.carry.extend_from_slice(&out[cut..total]);
                cut
            }
            Err(e) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "not UTF-8 (invalid byte at offset {})",
                        self.offset + e.valid_up_to() as u64
                    ),
                ))
            }
        };
        self.offset += valid as u64;
        if valid == 0 && n > 0 {
            // Only part of a character so far: read on.
            return self.read(out);
        }
        Ok(valid)
    }
}

/// quick-xml's "not closed before end of input" syntax errors mean a cut-off file.
fn xml_error(e: &quick_xml::Error, at: u64) -> XmlProblem {
    match e {
        quick_xml::Error::Syntax(s) if *s != SyntaxError::InvalidBangMarkup => XmlProblem::CutOff {
            syntax: s.to_string(),
            at,
        },
        _ => XmlProblem::Malformed {
            at,
            cause: e.to_string(),
        },
    }
}

/// `&lt;`, `&#10;` and the like; an unknown or invalid reference is kept as written.
fn resolve_ref<'e>(r: &BytesRef<'e>) -> Cow<'e, str> {
    match r.resolve_char_ref() {
        Ok(Some(ch)) => Cow::Owned(ch.to_string()),
        _ => resolve_predefined_entity(r)
            .map_or_else(|| Cow::Owned(format!("&{};", &**r)), Cow::Borrowed),
    }
}

/// The value of attribute `key`, entities resolved (kept raw if one is unknown); None when absent.
pub(super) fn attr(e: &BytesStart, key: &str) -> Result<Option<String>, XmlProblem> {
    let a = e
        .try_get_attribute(key)
        .map_err(|err| XmlProblem::BadAttribute {
            element: e.name().as_ref().to_string(),
            cause: err.to_string(),
        })?;
    Ok(
        a.map(|a| match a.normalized_value(XmlVersion::Implicit1_0) {
            Ok(value) => value.into_owned(),
            Err(_) => a.value.into_owned(),
        }),
    )
}

/// Reads a JUnit XML report, streaming (memory does not grow with the file).
pub fn parse_junit(path: &Path) -> Result<Vec<TestCase>, ReportParseError> {
    let mut parser = Parser::default();
    walk_xml_from(open_report(path)?, |node| parser.node(node))
        .map_err(|p| ReportParseError::new(path, p))?;
    parser.finish(path)
}

/// Parses JUnit XML text; `path` only names the source in errors.
pub fn parse_junit_str(text: &str, path: &Path) -> Result<Vec<TestCase>, ReportParseError> {
    let mut parser = Parser::default();
    walk_xml(text, |node| parser.node(node)).map_err(|p| ReportParseError::new(path, p))?;
    parser.finish(path)
}

impl Parser {
    fn finish(mut self, path: &Path) -> Result<Vec<TestCase>, ReportParseError> {
        let parser = &mut self;
        if !parser.saw_junit {
            let root = parser.root.take().unwrap_or_default();
            let problem = format!(
                "not a JUnit report: no <testsuites>, <testsuite> or <testcase> (root is <{root}>)"
            );
            return Err(ReportParseError::new(path, problem));
        }
        if parser.pytest {
            for case in parser.cases.iter_mut().filter(|c| c.file.is_none()) {
                case.file = case.classname.as_deref().and_then(pytest_file);
            }
        }
        Ok(self.cases)
    }
}

/// pytest writes no file attribute; its classname is the dotted module path, then any test
/// classes (`tests.test_ops.TestClamp` -> `tests/test_ops.py`).
fn pytest_file(classname: &str) -> Option<String> {
    let parts: Vec<&str> = classname.split('.').collect();
    // Trailing segments that start upper-case are test classes; the first segment always stays.
    let is_class = |p: &str| p.starts_with(char::is_uppercase);
    let keep = parts
        .iter()
        .rposition(|p| !is_class(p))
        .map_or(1, |i| i + 1);
    let module = parts[..keep.min(parts.len())].join("/");
    (!module.is_empty()).then(|| format!("{module}.py"))
}

#[derive(Default)]
struct Parser {
    cases: Vec<TestCase>,
    root: Option<String>,
    saw_junit: bool,
    /// Some suite is named like pytest's (`pytest tests`, `pytest`).
    pytest: bool,
    /// The `<testcase>` being read.
    open: Option<TestCase>,
    /// Body of the `<failure>`/`<error>`/`<skipped>` that set the open case's status.
    body: Option<String>,
    /// The open case is node's `todo` (`<skipped type="todo">`): its failure does not count,
    /// as node's own summary says.
    todo: bool,
}

impl Parser {
    fn node(&mut self, node: Node<'_>) -> Result<(), XmlProblem> {
        match node {
            Node::Start(e) => self.element(&e, false),
            Node::Empty(e) => self.element(&e, true),
            Node::Text(t) => {
                if let Some(body) = self.body.as_mut().filter(|b| b.len() <= TEXT_LIMIT) {
                    body.push_str(&t);
                }
                Ok(())
            }
            Node::End(name) => {
                self.end(&name);
                Ok(())
            }
        }
    }

    fn element(&mut self, e: &BytesStart, empty: bool) -> Result<(), XmlProblem> {
        let name = e.local_name().as_ref().to_string();
        self.root.get_or_insert_with(|| name.clone());
        match name.as_str() {
            "testsuites" | "testsuite" => {
                self.saw_junit = true;
                self.pytest |= attr(e, "name")?.is_some_and(|n| n.starts_with("pytest"));
            }
            "testcase" => {
                self.saw_junit = true;
                let case = new_case(e)?;
                self.todo = false;
                if empty {
                    self.cases.push(case);
                } else {
                    self.open = Some(case);
                }
            }
            "failure" | "error" | "skipped" => self.outcome(e, &name, empty)?,
            _ => {}
        }
        Ok(())
    }

    /// A `<failure>`, `<error>` or `<skipped>` child; the first failure or error wins.
    fn outcome(&mut self, e: &BytesStart, name: &str, empty: bool) -> Result<(), XmlProblem> {
        let Some(case) = self.open.as_mut() else {
            return Ok(());
        };
        let status = match name {
            "failure" => TestStatus::Failed,
            "error" => TestStatus::Error,
            _ => TestStatus::Skipped,
        };
        let todo = name == "skipped" && attr(e, "type")?.as_deref() == Some("todo");
        if todo {
            self.todo = true;
        } else if self.todo || rank(status) <= rank(case.status) {
            return Ok(());
        }
        case.status = status;
        case.message = attr(e, "message")?.as_deref().and_then(first_line);
        case.detail = None;
        self.body = (!empty).then(String::new);
        Ok(())
    }

    /// An end tag: `</testcase>` closes the open case, an outcome's end tag its body.
    fn end(&mut self, name: &str) {
        match name {
            "testcase" => self.cases.extend(self.open.take()),
            "failure" | "error" | "skipped" => {
                let (Some(body), Some(case)) = (self.body.take(), self.open.as_mut()) else {
                    return;
                };
                case.message = case.message.take().or_else(|| first_line(&body));
                let body = body.trim();
                case.detail = (!body.is_empty()).then(|| truncate(body));
            }
            _ => {}
        }
    }
}

fn rank(status: TestStatus) -> u8 {
    match status {
        TestStatus::Passed => 0,
        TestStatus::Skipped => 1,
        TestStatus::Failed | TestStatus::Error => 2,
    }
}

fn new_case(e: &BytesStart) -> Result<TestCase, XmlProblem> {
    let trimmed = |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let name = trimmed(attr(e, "name")?).unwrap_or_default();
    let classname = trimmed(attr(e, "classname")?);
    let id = match &classname {
        Some(class) => format!("{class}::{name}"),
        None => name.clone(),
    };
    Ok(TestCase {
        id,
        name,
        classname,
        file: trimmed(attr(e, "file")?),
        line: attr(e, "line")?.and_then(|l| l.trim().parse().ok()),
        status: TestStatus::Passed,
        duration_s: attr(e, "time")?.and_then(|t| t.trim().parse().ok()),
        message: None,
        detail: None,
    })
}

/// The first non-blank line, trimmed and length-capped.
fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(truncate)
}

/// `text` cut to at most [`TEXT_LIMIT`] bytes (on a char boundary), marked when cut.
fn truncate(text: &str) -> String {
    if text.len() <= TEXT_LIMIT {
        return text.to_string();
    }
    let mut end = TEXT_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{TRUNCATED}", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::report::TestTotals;

    const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/reports/");

    fn cases(name: &str) -> Vec<TestCase> {
        parse_junit(&Path::new(DIR).join(name)).expect(name)
    }

    fn counts(cases: &[TestCase]) -> [usize; 5] {
        let t = TestTotals::of(cases);
        [t.total, t.passed, t.failed, t.errors, t.skipped]
    }

    fn problem(text: &str) -> String {
        let err = parse_junit_str(text, Path::new("r.xml")).expect_err(text);
        assert_eq!(err.path, Path::new("r.xml"));
        err.problem
    }

    /// Counted by hand: [total, passed, failed, errors, skipped], the failing case's id, message.
    #[test]
    fn real_samples_parse_with_exact_counts() {
        let samples = [
            ("pytest", [4, 2, 1, 0, 1], "test_calc::test_fail"),
            ("node", [4, 2, 1, 0, 1], "test::fail"),
            ("jest", [2, 1, 1, 0, 0], "fail::fail"),
            ("vitest", [2, 1, 1, 0, 0], "vt/calc.test.js::fail"),
        ];
        let messages = [
            "AssertionError: assert 'zero' == 'pos'",
            "Expected values to be strictly equal:'zero' !== 'pos'",
            "Error: expect(received).toBe(expected) // Object.is equality",
            "expected 'zero' to be 'pos' // Object.is equality",
        ];
        for ((tool, expected, id), message) in samples.into_iter().zip(messages) {
            let cases = cases(&format!("{tool}-junit.xml"));
            assert_eq!(counts(&cases), expected, "{tool}");
            let failed = cases.iter().find(|c| c.status == TestStatus::Failed);
            let failed = failed.expect(tool);
            assert_eq!(failed.id, id);
            assert_eq!(failed.message.as_deref(), Some(message));
            let detail = failed.detail.as_deref().unwrap_or_default();
            assert!(detail.lines().count() > 1, "{tool}: {detail}");
        }
        let nextest = cases("nextest-junit.xml");
        assert_eq!(counts(&nextest), [3, 3, 0, 0, 0]);
        let ids: Vec<&str> = nextest.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            ["tiny::tests::pos", "tiny::tests::neg", "tiny::it::zero"]
        );
    }

    /// node 20 reports a failing `todo` test with both `<skipped type="todo">` and `<failure>`;
    /// node does not count it as a failure, and neither do we.
    #[test]
    fn a_failing_node_todo_test_is_skipped() {
        let xml = "<testsuites><testsuite name=\"s\"><testcase name=\"t\" classname=\"test\"><skipped type=\"todo\" message=\"code_defect\"/><failure type=\"testCodeFailure\" message=\"boom\">boom</failure></testcase><testcase name=\"u\" classname=\"test\"><failure message=\"x\">x</failure></testcase></testsuite></testsuites>";
        let cases = parse_junit_str(xml, Path::new("r.xml")).unwrap();
        assert_eq!(cases[0].status, TestStatus::Skipped);
        assert_eq!(cases[0].message.as_deref(), Some("code_defect"));
        assert_eq!(cases[1].status, TestStatus::Failed);
    }

    #[test]
    fn sample_details() {
        let pytest = cases("pytest-junit.xml");
        assert!(pytest
            .iter()
            .all(|c| c.file.as_deref() == Some("test_calc.py")));
        assert_eq!(pytest[3].message.as_deref(), Some("demo"));
        let detail = pytest[2].detail.as_deref().unwrap_or_default();
        assert!(detail.ends_with("test_calc.py:5: AssertionError"));
        let node = cases("node-junit.xml");
        assert_eq!(node[2].file, None);
        assert_eq!(node[2].duration_s, Some(0.001377));
        let vitest = cases("vitest-junit.xml");
        let detail = vitest[1].detail.as_deref().unwrap_or_default();
        assert!(detail.ends_with("❯ vt/calc.test.js:4:40"));
        let pkg = cases("pytest-pkg-junit.xml");
        assert_eq!(counts(&pkg), [3, 3, 0, 0, 0]);
        assert_eq!(pkg[2].id, "tests.test_ops.TestClamp::test_high");
        assert!(pkg
            .iter()
            .all(|c| c.file.as_deref() == Some("tests/test_ops.py")));
    }

    #[test]
    fn pytest_file_from_classname() {
        let file = |c: &str| pytest_file(c).unwrap_or_default();
        assert_eq!(file("tests.test_ops"), "tests/test_ops.py");
        assert_eq!(file("test_calc.TestA.TestB"), "test_calc.py");
        assert_eq!(pytest_file(""), None);
    }

    #[test]
    fn first_error_wins_and_long_bodies_are_cut() {
        let body = "é".repeat(5000);
        let text = format!(
            "<testsuite><testcase name=\"t\"><system-out>o</system-out><error message=\"boom\">\
             {body}</error><failure message=\"later\"/></testcase></testsuite>"
        );
        let cases = parse_junit_str(&text, Path::new("r.xml")).expect("parses");
        assert_eq!(counts(&cases), [1, 0, 0, 1, 0]);
        assert_eq!(cases[0].id, "t");
        assert_eq!(cases[0].message.as_deref(), Some("boom"));
        let detail = cases[0].detail.clone().unwrap_or_default();
        assert_eq!(detail.len(), TEXT_LIMIT + TRUNCATED.len());
        assert!(detail.ends_with(TRUNCATED));
        let odd = "<testsuite><testcase name=\"a&nbsp;b\">&bogus;</testcase></testsuite>";
        let odd = parse_junit_str(odd, Path::new("r.xml")).expect("unknown entities kept");
        assert_eq!(odd[0].name, "a&nbsp;b");
        let empty = parse_junit_str("<testsuites/>", Path::new("r.xml"));
        assert_eq!(empty, Ok(vec![]));
    }

    #[test]
    fn truncated_garbage_html_and_empty_are_errors() {
        for tool in ["pytest", "node", "jest"] {
            let text = std::fs::read_to_string(format!("{DIR}{tool}-junit.xml"));
            let text = text.unwrap_or_default();
            let half = (0..=text.len() / 2)
                .rev()
                .find(|&i| text.is_char_boundary(i));
            let p = problem(&text[..half.unwrap_or(0)]);
            assert!(p.contains("truncated"), "{tool}: {p}");
        }
        assert!(problem("<html></html>").contains("not a JUnit report"));
        assert!(problem("").contains("empty file"));
        assert!(problem("PK\u{3}\u{4} binary junk").contains("not XML"));
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("bad.xml");
        std::fs::write(&file, b"<testsuites>\xff\xfe\x00junk</testsuites>").expect("write");
        let err = parse_junit(&file).expect_err("non-UTF-8");
        assert_eq!(err.path, file);
        assert!(err.problem.contains("not UTF-8"), "{err}");
    }
}
