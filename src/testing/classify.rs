//! Why a test failed: test_defect (the test is wrong), code_defect (the code breaks what a correct
//! test expects), env_issue (the machine: a missing tool, service, timeout) or sandbox_denied (the
//! test reached outside its sandbox; see `effects::sandbox_denial`), with the evidence (file:line
//! and the error excerpt) and a criticality.

use serde::{Deserialize, Serialize};

use super::report::TestCase;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Classification {
    TestDefect,
    CodeDefect,
    EnvIssue,
    /// The sandbox refused what the test tried (a write outside, the network, a limit): never
    /// the code's fault; the test is unsafe and leaves the layer.
    SandboxDenied,
}

impl Classification {
    /// The name in run records and reports (`test_defect`).
    pub fn as_str(self) -> &'static str {
        match self {
            Classification::TestDefect => "test_defect",
            Classification::CodeDefect => "code_defect",
            Classification::EnvIssue => "env_issue",
            Classification::SandboxDenied => "sandbox_denied",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Criticality {
    High,
    Medium,
    Low,
}

impl Criticality {
    /// The name in run records and reports (`high`).
    pub fn as_str(self) -> &'static str {
        match self {
            Criticality::High => "high",
            Criticality::Medium => "medium",
            Criticality::Low => "low",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub classification: Classification,
    pub criticality: Criticality,
    /// `file:line` of the innermost frame, when the traceback names one.
    pub location: Option<String>,
    /// The exception type or error kind that decided.
    pub error: String,
    /// The lines of the failure that show it (a few, not the whole traceback).
    pub excerpt: String,
    /// One sentence: why this classification.
    pub reason: String,
}

/// Errors that come from the machine, not from the test or the code, wherever they surface.
const ENV_MARKERS: [&str; 8] = [
    "timed out",
    "Timeout >",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "No space left on device",
    "command not found",
    "No module named 'pytest'",
    "Cannot find module 'node:",
];

/// Errors that mean the test cannot run as written, when the test's own code raised them.
const TEST_ERRORS: [&str; 9] = [
    "ModuleNotFoundError",
    "ImportError",
    "SyntaxError",
    "IndentationError",
    "NameError",
    "TypeError",
    "AttributeError",
    "ReferenceError",
    "fixture",
];

/// Classifies a failing or erroring test. `is_test_file` says whether a path (as it appears in the
/// traceback) is test code rather than code under test. Where the error was raised decides first:
/// an error raised inside the code under test is a code defect whatever its type.
pub fn classify(case: &TestCase, is_test_file: impl Fn(&str) -> bool) -> Verdict {
    let text = format!(
        "{}\n{}",
        case.message.as_deref().unwrap_or(""),
        case.detail.as_deref().unwrap_or("")
    );
    let frame = innermost_frame(&text);
    let location = frame.as_ref().map(|(f, l, _)| format!("{f}:{l}"));
    let error = frame
        .as_ref()
        .map(|(_, _, e)| e.clone())
        .filter(|e| !e.is_empty())
        .or_else(|| exception_name(&text))
        .unwrap_or_else(|| "failure".into());
    let excerpt = excerpt(&text);
    let verdict = |classification, criticality, reason: String| Verdict {
        classification,
        criticality,
        location: location.clone(),
        error: error.clone(),
        excerpt: excerpt.clone(),
        reason,
    };
    if let Some(m) = ENV_MARKERS.iter().find(|m| text.contains(*m)) {
        return verdict(
            Classification::EnvIssue,
            Criticality::Medium,
            format!("the environment failed ({m}), not the test or the code"),
        );
    }
    let in_code = frame.as_ref().is_some_and(|(f, _, _)| !is_test_file(f));
    if in_code {
        return verdict(
            Classification::CodeDefect,
            Criticality::High,
            format!("the code under test raised {error}"),
        );
    }
    // Raised in the test (or while loading it): an assertion judged the code; anything else
    // means the test itself is broken. pytest's `Failed` (DID NOT RAISE, pytest.fail) and a Rust
    // panic are how assertions fail there.
    // jest's matchers fail with a plain Error whose message starts `expect(received)`.
    let assertion = error.contains("AssertionError")
        || error.contains("Failed")
        || error == "panic"
        || error == "failure"
        || text.contains("expect(received)");
    let broken = text.contains("collection failure")
        || TEST_ERRORS.iter().any(|e| error.contains(e))
        || (!assertion && text.contains("is not defined"));
    if broken || !assertion {
        return verdict(
            Classification::TestDefect,
            Criticality::Low,
            format!("the test cannot run as written ({error})"),
        );
    }
    verdict(
        Classification::CodeDefect,
        Criticality::High,
        "the code returned what the test's assertion rules out".into(),
    )
}

/// The last `path:line: Error` (pytest), `panicked at path:line` (Rust), Go's panic frame or
/// `file.go:line: message`, or `at path:line` (JavaScript) location.
fn innermost_frame(text: &str) -> Option<(String, u32, String)> {
    let mut found = None;
    for line in text.lines() {
        let line = line.trim();
        // pytest long traceback: "calc/ops.py:12: ZeroDivisionError" or "test_x.py:5: in test_y".
        // Frames inside the interpreter or installed packages are neither test nor code.
        if is_library_frame(line) {
            continue;
        }
        if let Some((path, rest)) = line.split_once(".py:") {
            let (num, tail) = rest.split_once(':').unwrap_or((rest, ""));
            if let Ok(n) = num.trim().parse::<u32>() {
                let tail = tail.trim();
                let err = if tail.starts_with("in ") {
                    String::new()
                } else {
                    tail.to_string()
                };
                found = Some((
                    format!("{}.py", path.trim_start_matches("../").trim()),
                    n,
                    err,
                ));
            }
        }
        // Rust: "panicked at src/lib.rs:21:9:"
        if let Some(rest) = line.split("panicked at ").nth(1) {
            let mut parts = rest.split(':');
            if let (Some(p), Some(n)) = (parts.next(), parts.next().and_then(|n| n.parse().ok())) {
                found = Some((p.to_string(), n, "panic".into()));
            }
        }
    }
    if found.is_none() {
        found = go_frame(text);
    }
    // JavaScript stacks list the innermost frame first: "at fn (file:///x/strings.js:12:5)",
    // or in vitest's reports "❯ fn src/strings.js:12:5".
    if found.is_none() {
        found = text
            .lines()
            .map(str::trim)
            .filter_map(|l| {
                if l.starts_with("at ") {
                    Some(l.to_string())
                } else {
                    l.strip_prefix("❯ ")
                        .map(|rest| format!("at {}", rest.rsplit(' ').next().unwrap_or(rest)))
                }
            })
            .find_map(|l| js_frame(&l));
    }
    found.map(|(f, l, e)| {
        let e = if e.is_empty() {
            exception_name(text).unwrap_or_default()
        } else {
            e
        };
        (f, l, e)
    })
}

/// Go: after a panic, the first stack frame outside the Go installation and module cache (Go
/// lists the innermost first: `\t/w/calc.go:16 +0x2e`); else the last `file.go:12: message`
/// line (t.Error, t.Fatal, a build error).
fn go_frame(text: &str) -> Option<(String, u32, String)> {
    if text.lines().any(|l| l.trim_start().starts_with("panic: ")) {
        let frame = text
            .lines()
            .filter(|l| l.starts_with('\t'))
            .map(str::trim)
            .filter(|l| !is_go_library_frame(l))
            .find_map(go_location);
        if let Some((file, line)) = frame {
            return Some((file, line, "panic".into()));
        }
    }
    text.lines()
        .rev()
        .find_map(|l| go_location(l.trim().split_once(": ")?.0))
        .map(|(file, line)| (file, line, String::new()))
}

/// `calc.go:12`, `./calc.go:12:5` or `/w/calc.go:12 +0x2e` as (file, line).
fn go_location(text: &str) -> Option<(String, u32)> {
    let text = text.split(" +0x").next()?;
    let (file, rest) = text.rsplit_once(".go:")?;
    let numbers: Vec<&str> = rest.split(':').collect();
    let digits = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if file.is_empty() || file.contains(char::is_whitespace) || numbers.len() > 2 {
        return None;
    }
    if !numbers.iter().all(digits) {
        return None;
    }
    let line = numbers[0].parse().ok()?;
    Some((format!("{}.go", file.trim_start_matches("./")), line))
}

/// Frames in the Go installation (runtime, testing, the standard library) or in the module cache.
fn is_go_library_frame(line: &str) -> bool {
    ["/go/src/", "/src/runtime/", "/src/testing/", "/pkg/mod/"]
        .iter()
        .any(|m| line.contains(m))
        || line.contains("/go-1.")
}

fn js_frame(line: &str) -> Option<(String, u32, String)> {
    if is_library_frame(line) || line.contains("node_modules") {
        return None;
    }
    let inner = line
        .rsplit_once('(')
        .map_or(line, |(_, r)| r.trim_end_matches(')'));
    let inner = inner
        .trim_start_matches("at ")
        .trim_start_matches("file://");
    let mut parts = inner.rsplitn(3, ':');
    let (_col, line_no, path) = (parts.next()?, parts.next()?.parse().ok()?, parts.next()?);
    let ext_ok = [".js", ".mjs", ".cjs", ".ts"]
        .iter()
        .any(|e| path.ends_with(e));
    ext_ok.then(|| (path.to_string(), line_no, String::new()))
}

fn is_library_frame(line: &str) -> bool {
    [
        "site-packages",
        "/lib/python",
        "<frozen",
        "importlib",
        "node:internal",
    ]
    .iter()
    .any(|m| line.contains(m))
}

/// The last `SomethingError` / `SomethingException` named in the text.
fn exception_name(text: &str) -> Option<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .rfind(|w| w.ends_with("Error") || w.ends_with("Exception"))
        .map(str::to_string)
}

/// The `E   ` lines of a pytest failure, else its first lines; at most 8 lines.
fn excerpt(text: &str) -> String {
    let e_lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("E "))
        .take(8)
        .collect();
    if !e_lines.is_empty() {
        return e_lines.join("\n");
    }
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .take(8)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::report::TestStatus;

    fn case(message: &str, detail: &str) -> TestCase {
        TestCase {
            id: "t::x".into(),
            name: "x".into(),
            classname: None,
            file: None,
            line: None,
            status: TestStatus::Failed,
            duration_s: None,
            message: Some(message.into()),
            detail: Some(detail.into()),
        }
    }

    fn is_test(p: &str) -> bool {
        p.rsplit('/').next().is_some_and(|n| n.starts_with("test_"))
    }

    #[test]
    fn failing_assertion_against_code_is_a_code_defect() {
        let c = case(
            "assert 10 == 20",
            "def test_total():\n>       assert total_price(2, 10) == 20\nE       assert 10 == 20\n\ntest_bug.py:4: AssertionError",
        );
        let v = classify(&c, is_test);
        assert_eq!(v.classification, Classification::CodeDefect);
        assert_eq!(v.criticality, Criticality::High);
        assert_eq!(v.location.as_deref(), Some("test_bug.py:4"));
        assert_eq!(v.excerpt, "E       assert 10 == 20");
    }

    #[test]
    fn a_failing_jest_matcher_is_a_code_defect() {
        let c = case(
            "expect(received).toBe(expected) // Object.is equality",
            "Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: \"$19.99\"\nReceived: \"$199.90\"\n    at Object.toBe (tt-tests/L1-unit/buggy.test.js:6:31)",
        );
        let v = classify(&c, |f: &str| f.contains(".test."));
        assert_eq!(v.classification, Classification::CodeDefect, "{v:?}");
    }

    #[test]
    fn vitest_frames_locate_an_error_in_the_code() {
        let c = case(
            "Cannot read properties of undefined (reading 'toUpperCase')",
            "TypeError: Cannot read properties of undefined (reading 'toUpperCase')\n ❯ src/buggy.js:25:28\n ❯ initials src/buggy.js:25:6\n ❯ tt-tests/x/buggy.test.js:15:28",
        );
        let v = classify(&c, |f: &str| f.contains(".test."));
        assert_eq!(v.classification, Classification::CodeDefect, "{v:?}");
        assert_eq!(v.location.as_deref(), Some("src/buggy.js:25"));
    }

    #[test]
    fn an_exception_raised_in_the_code_is_a_code_defect() {
        let c = case(
            "ZeroDivisionError: division by zero",
            "test_ops.py:7: in test_mean\n    mean([])\n../../../../calc/ops.py:18: in mean\n    return sum(values) / len(values)\nE   ZeroDivisionError: division by zero\n../../../../calc/ops.py:18: ZeroDivisionError",
        );
        let v = classify(&c, is_test);
        assert_eq!(v.classification, Classification::CodeDefect);
        assert_eq!(v.location.as_deref(), Some("calc/ops.py:18"));
        assert_eq!(v.error, "ZeroDivisionError");
    }

    #[test]
    fn a_missing_module_is_a_test_defect() {
        let c = case("collection failure", "test_bad.py:1: in <module>\n    import nosuchmod\nE   ModuleNotFoundError: No module named 'nosuchmod'");
        assert_eq!(
            classify(&c, is_test).classification,
            Classification::TestDefect
        );
    }

    #[test]
    fn a_type_error_in_the_test_itself_is_a_test_defect() {
        let c = case("TypeError", "test_x.py:3: in test_y\nE   TypeError: add() missing 1 required positional argument: 'b'\ntest_x.py:3: TypeError");
        assert_eq!(
            classify(&c, is_test).classification,
            Classification::TestDefect
        );
    }

    #[test]
    fn missing_pytest_and_timeouts_are_env_issues() {
        let c = case("", "/usr/bin/python3: No module named 'pytest'");
        assert_eq!(
            classify(&c, is_test).classification,
            Classification::EnvIssue
        );
        let c = case("Failed: Timeout >5.0s", "");
        assert_eq!(
            classify(&c, is_test).classification,
            Classification::EnvIssue
        );
    }

    #[test]
    fn where_the_error_was_raised_decides_before_its_type() {
        // A NameError raised inside the code under test is the code's fault.
        let c = case(
            "NameError: name 'qty' is not defined",
            "test_total.py:4: in test_total\n    total(2, 10)\n../../inventory/pricing.py:7: in total\n    return qty * unit\nE   NameError: name 'qty' is not defined\n../../inventory/pricing.py:7: NameError",
        );
        assert_eq!(
            classify(&c, is_test).classification,
            Classification::CodeDefect
        );
        // pytest.raises around code that does not raise.
        let c = case(
            "Failed: DID NOT RAISE <class 'ValueError'>",
            "    def test_rejects():\n>       with pytest.raises(ValueError):\nE       Failed: DID NOT RAISE <class 'ValueError'>\n\ntest_x.py:9: Failed",
        );
        assert_eq!(
            classify(&c, is_test).classification,
            Classification::CodeDefect
        );
        // A TimeoutError raised by the code is the code's, not the machine's.
        let c = case("TimeoutError: slow", "../../svc.py:3: TimeoutError");
        assert_eq!(
            classify(&c, is_test).classification,
            Classification::CodeDefect
        );
    }

    #[test]
    fn javascript_frames_say_where_an_error_was_raised() {
        let in_code = case(
            "ReferenceError: n is not defined",
            "ReferenceError: n is not defined\n    at truncate (file:///w/strings.js:24:3)\n    at TestContext.<anonymous> (file:///w/tt-tests/L1-unit/s.test.js:9:10)\n    at Test.runInAsyncScope (node:async_hooks:206:9)",
        );
        let is_js_test = |p: &str| p.contains("tt-tests/");
        let v = classify(&in_code, is_js_test);
        assert_eq!(v.classification, Classification::CodeDefect);
        assert_eq!(v.location.as_deref(), Some("/w/strings.js:24"));
        let in_test = case(
            "ReferenceError: capitalise is not defined",
            "ReferenceError: capitalise is not defined\n    at TestContext.<anonymous> (file:///w/tt-tests/L1-unit/s.test.js:9:10)",
        );
        assert_eq!(
            classify(&in_test, is_js_test).classification,
            Classification::TestDefect
        );
    }

    #[test]
    fn a_syntax_error_while_collecting_is_a_test_defect() {
        let c = case(
            "collection failure",
            "/usr/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule\n    mod = import_path(\n<frozen importlib._bootstrap>:1204: in _gcd_import\n    ???\n/usr/lib/python3.11/ast.py:50: in parse\nE     File \"/s/test_syntax.py\", line 1\nE   SyntaxError: invalid syntax",
        );
        assert_eq!(
            classify(&c, is_test).classification,
            Classification::TestDefect
        );
    }

    #[test]
    fn go_failures_say_where_they_happened() {
        let is_go_test = |p: &str| p.ends_with("_test.go");
        let assertion = case(
            "avg_test.go:11: Average([2 4 6]) = 3.3333333333333335, want 4",
            "    avg_test.go:11: Average([2 4 6]) = 3.3333333333333335, want 4",
        );
        let v = classify(&assertion, is_go_test);
        assert_eq!(v.classification, Classification::CodeDefect);
        assert_eq!(v.location.as_deref(), Some("avg_test.go:11"));
        let in_code = case(
            "panic: runtime error: integer divide by zero [recovered]",
            "panic: runtime error: integer divide by zero [recovered]\n\tpanic: runtime error: integer divide by zero\n\ngoroutine 7 [running]:\ntesting.tRunner.func1.2({0x4f, 0x5c})\n\t/usr/lib/go-1.19/src/testing/testing.go:1396 +0x24e\npanic({0x4f, 0x5c})\n\t/usr/lib/go-1.19/src/runtime/panic.go:884 +0x212\nexample.com/calc.Mean(...)\n\tstats/mean.go:9\nexample.com/calc.TestMean(0xc0)\n\tmean_test.go:6 +0x1d",
        );
        let v = classify(&in_code, is_go_test);
        assert_eq!(v.classification, Classification::CodeDefect);
        assert_eq!(
            (v.location.as_deref(), v.error.as_str()),
            (Some("stats/mean.go:9"), "panic")
        );
        assert_eq!(go_location("./calc.go:12:5"), Some(("calc.go".into(), 12)));
        assert_eq!(go_location("calc.go:x"), None);
        assert_eq!(go_location("see notes.go:12 later"), None);
    }

    #[test]
    fn a_rust_panic_in_a_test_is_a_code_defect() {
        let c = case(
            "assertion `left == right` failed",
            "thread 'area' (77) panicked at tests/tt_L1_area.rs:5:5:\nassertion `left == right` failed\n  left: 11\n right: 12",
        );
        let v = classify(&c, |p| p.starts_with("tests/"));
        assert_eq!(v.classification, Classification::CodeDefect);
        assert_eq!(v.location.as_deref(), Some("tests/tt_L1_area.rs:5"));
    }
}
