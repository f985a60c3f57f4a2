//! The node runner against the node-pkg fixture, with the real node --test.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::attribute::{is_error_line, test_id};
use super::ctx::Ctx;
use super::rerun::{regex_escape, Target};
use super::run::drop_reporter_noise;
use super::workspace::copy_tree;
use super::{missing_node, NODE_COVERAGE};
use crate::testing::framework::Framework;
use crate::testing::report::{TestCase, TestStatus, TestTotals};
use crate::testing::runner::{RunOutput, RunSpec};
use crate::testing::toolchain::Toolchain;

/// The fixture's toolchain names the framework under test.
fn framework(spec: &RunSpec) -> Framework {
    Framework::parse(&spec.tools.framework).expect("a node framework")
}

fn run(spec: &RunSpec) -> RunOutput {
    super::run::run(spec, framework(spec))
}

fn rerun(spec: &RunSpec, case_id: &str) -> Option<TestStatus> {
    super::rerun::rerun(spec, framework(spec), case_id)
}

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/node-pkg");

const PASSING: &str = "import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { capitalize, slugify } from '../../strings.js';

describe('capitalize', () => {
  test('handles the empty string', () => assert.equal(capitalize(''), ''));
});
describe('slugify', () => {
  test('handles the empty string', () => assert.equal(slugify(''), ''));
  test('joins words', () => assert.equal(slugify('Hello, World!'), 'hello-world'));
});
";

const FAILING: &str = "import { test } from 'node:test';
import assert from 'node:assert/strict';
import { truncate } from '../../strings.js';

test('truncate keeps a string of exactly max characters', () => {
  assert.equal(truncate('hello', 5), 'hello');
});
test('truncate cuts a long string', () => {
  assert.equal(truncate('hello world', 5), 'hell…');
});
";

const BROKEN: &str =
    "import { test } from 'node:test';\ntest('broken', () => {\n  const x = ;\n});\n";

const BAD_IMPORT: &str =
    "import { test } from 'node:test';\nimport { nope } from '../../strings.js';\ntest('never runs', () => {});\n";

struct Fixture {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    session: PathBuf,
    tools: Toolchain,
}

impl Fixture {
    /// The fixture package copied to a temp repo, and a session whose L1-unit layer holds
    /// `tests` (file name, source).
    fn new(tests: &[(&str, &str)]) -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).expect("repo");
        copy_tree(Path::new(FIXTURE), &repo, Path::new("/nonexistent")).expect("copy fixture");
        let session = dir.path().join("session");
        let layer = session.join("tests/L1-unit");
        std::fs::create_dir_all(&layer).expect("layer");
        std::fs::create_dir_all(session.join("results")).expect("results");
        for (name, text) in tests {
            std::fs::write(layer.join(name), text).expect("test file");
        }
        let tools = Toolchain {
            framework: "node".into(),
            interpreter: "node".into(),
            runner: vec!["node".into(), "--test".into()],
            runner_available: true,
            coverage_tool: Some(NODE_COVERAGE.into()),
            ..Default::default()
        };
        Fixture {
            _dir: dir,
            repo,
            session,
            tools,
        }
    }

    fn spec<'a>(&'a self, deselect: &'a [String], timeout: Duration) -> RunSpec<'a> {
        RunSpec {
            repo: &self.repo,
            session: &self.session,
            layer: "L1-unit",
            test_dir: self.session.join("tests/L1-unit"),
            tools: &self.tools,
            results: self.session.join("results"),
            run_no: "001".into(),
            timeout,
            deselect,
            sandbox: None,
        }
    }
}

/// Every file under `dir` with its bytes, sorted by path.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

/// node's own summary: the `ℹ tests N` / `ℹ pass N` / ... lines of the spec reporter.
fn node_summary(output: &str, key: &str) -> usize {
    let prefix = format!("ℹ {key} ");
    let line = output.lines().find(|l| l.starts_with(&prefix));
    let line = line.unwrap_or_else(|| panic!("no `{prefix}` line in:\n{output}"));
    line[prefix.len()..].trim().parse().expect("a count")
}

fn require_node() {
    let ok = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{} (these tests run the real node --test)",
        missing_node("node")
    );
}

#[test]
fn runs_node_tests_with_junit_coverage_and_a_load_gate() {
    require_node();
    let fx = Fixture::new(&[
        ("passing.test.js", PASSING),
        ("failing.test.js", FAILING),
        ("broken.test.js", BROKEN),
    ]);
    let before = snapshot(&fx.repo);
    let out = run(&fx.spec(&[], Duration::from_secs(120)));
    assert_eq!(out.env_problem, None, "{}", out.output_tail);
    assert!(!out.timed_out);
    assert_eq!(out.exit_code, Some(1), "a test fails");

    // The syntax error is a load error and stays out of the run.
    assert_eq!(out.load_errors.len(), 1, "{:?}", out.load_errors);
    assert_eq!(out.load_errors[0].file, "broken.test.js");
    assert!(
        out.load_errors[0].error.contains("SyntaxError"),
        "{}",
        out.load_errors[0].error
    );
    assert!(
        out.load_errors[0].error.contains("broken.test.js:3"),
        "{}",
        out.load_errors[0].error
    );
    assert!(!out.command.iter().any(|a| a.contains("broken")));

    // JUnit counts equal node's own summary.
    let log = std::fs::read_to_string(fx.session.join("results/output-001.txt")).expect("log");
    let t = TestTotals::of(&out.cases);
    assert_eq!(t.total, node_summary(&log, "tests"));
    assert_eq!(t.passed, node_summary(&log, "pass"));
    assert_eq!(t.failed + t.errors, node_summary(&log, "fail"));
    assert_eq!(t.skipped, node_summary(&log, "skipped"));
    assert_eq!([t.total, t.passed, t.failed], [5, 4, 1]);

    // Ids name the file and the describe blocks, so equal test names stay apart.
    let ids: Vec<&str> = out.cases.iter().map(|c| c.id.as_str()).collect();
    assert!(
        ids.contains(&"passing.test.js::capitalize > handles the empty string"),
        "{ids:?}"
    );
    assert!(
        ids.contains(&"passing.test.js::slugify > handles the empty string"),
        "{ids:?}"
    );
    let failed = out
        .cases
        .iter()
        .find(|c| c.status == TestStatus::Failed)
        .expect("a failure");
    assert_eq!(
        failed.id,
        "failing.test.js::truncate keeps a string of exactly max characters"
    );
    assert_eq!(failed.file.as_deref(), Some("failing.test.js"));
    assert_eq!(failed.line, Some(5));
    assert!(
        failed.message.as_deref().unwrap_or("").contains("'hell…'"),
        "{failed:?}"
    );

    let detail = failed.detail.as_deref().unwrap_or("");
    assert!(
        detail.contains("at TestContext.<anonymous> (tt-tests/L1-unit/failing.test.js:6:"),
        "{detail}"
    );

    // Coverage of the package's code, repo-relative, without the generated tests.
    let coverage = out
        .coverage
        .as_ref()
        .unwrap_or_else(|| panic!("{:?}", out.coverage_problem));
    let strings = coverage
        .files
        .iter()
        .find(|f| f.path == "strings.js")
        .expect("strings.js covered");
    assert!(
        strings.lines_total >= 15 && strings.lines_covered > 10,
        "{strings:?}"
    );
    assert!(strings.lines_covered < strings.lines_total || strings.missing_lines.is_empty());
    assert!(strings.branches_total > 0);
    assert!(
        coverage.files.iter().all(|f| !f.path.contains("tt-tests")),
        "{coverage:?}"
    );

    assert_eq!(
        out.reports,
        [
            "results/output-001.txt",
            "results/junit-001.xml",
            "results/lcov-001.info"
        ]
    );
    assert!(out.output_tail.contains("ℹ fail 1"), "{}", out.output_tail);
    assert!(!out.output_tail.contains("MaxListenersExceededWarning"));
    assert!(out.duration_s > 0.0);
    assert_eq!(snapshot(&fx.repo), before, "the repository is unchanged");

    // The failing test fails again on its own; the passing one passes.
    let spec = fx.spec(&[], Duration::from_secs(60));
    assert_eq!(rerun(&spec, &failed.id), Some(TestStatus::Failed));
    assert_eq!(
        rerun(&spec, "passing.test.js::slugify > handles the empty string"),
        Some(TestStatus::Passed)
    );
    assert_eq!(rerun(&spec, "passing.test.js::no such test"), None);
    assert_eq!(
        snapshot(&fx.repo),
        before,
        "reruns leave the repository alone too"
    );
}

#[test]
fn a_file_that_fails_to_import_carries_its_error() {
    require_node();
    let fx = Fixture::new(&[
        ("bad-import.test.js", BAD_IMPORT),
        ("failing.test.js", FAILING),
    ]);
    let deselect = vec!["failing.test.js::truncate cuts a long string".to_string()];
    let out = run(&fx.spec(&deselect, Duration::from_secs(120)));
    assert!(
        out.load_errors.is_empty(),
        "node --check passes it: imports resolve at run time"
    );
    let file = out
        .cases
        .iter()
        .find(|c| c.id == "bad-import.test.js")
        .expect("file-level case");
    assert_eq!(file.status, TestStatus::Failed);
    let message = file.message.as_deref().unwrap_or("");
    assert!(
        message.starts_with("SyntaxError:") && message.contains("nope"),
        "{message}"
    );
    assert!(file
        .detail
        .as_deref()
        .unwrap_or("")
        .contains("tt-tests/L1-unit/bad-import.test.js:2"));
    assert!(!file
        .detail
        .as_deref()
        .unwrap_or("")
        .contains(&*fx.session.to_string_lossy()));
    let skipped = out
        .cases
        .iter()
        .find(|c| c.id == deselect[0])
        .expect("deselected case");
    assert_eq!(skipped.status, TestStatus::Skipped);
    let spec = fx.spec(&[], Duration::from_secs(60));
    assert_eq!(rerun(&spec, "bad-import.test.js"), Some(TestStatus::Failed));
}

#[test]
fn a_hanging_test_times_out_and_a_missing_node_is_an_env_problem() {
    require_node();
    let hang = "import { test } from 'node:test';\ntest('hangs', () => new Promise(() => setInterval(() => {}, 1000)));\n";
    let fx = Fixture::new(&[("hang.test.js", hang)]);
    let started = Instant::now();
    let out = run(&fx.spec(&[], Duration::from_secs(3)));
    assert!(out.timed_out, "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(20));

    let mut fx = Fixture::new(&[("passing.test.js", PASSING)]);
    fx.tools.interpreter = "tt-no-such-node".into();
    fx.tools.runner = vec!["tt-no-such-node".into(), "--test".into()];
    let out = run(&fx.spec(&[], Duration::from_secs(30)));
    let problem = out.env_problem.unwrap_or_default();
    assert_eq!(
        problem,
        "tt-no-such-node not found: install Node.js (apt-get install nodejs)"
    );
    let mut fx = Fixture::new(&[("passing.test.js", PASSING)]);
    fx.tools.framework = "jest".into();
    fx.tools.runner_available = false;
    let out = run(&fx.spec(&[], Duration::from_secs(30)));
    assert!(out
        .env_problem
        .unwrap_or_default()
        .starts_with("jest is not installed"));
}

#[test]
fn helpers() {
    assert_eq!(
        regex_escape("a (b) [c]/d.e*"),
        "a \\(b\\) \\[c\\]\\/d\\.e\\*"
    );
    assert_eq!(
        test_id("x.test.js", &["a".into(), "b".into()], "t"),
        "x.test.js::a > b > t"
    );
    assert!(is_error_line("SyntaxError: The requested module"));
    assert!(is_error_line(
        "Error [ERR_MODULE_NOT_FOUND]: Cannot find module"
    ));
    assert!(!is_error_line("    at ModuleJob._instantiate"));
    let noise = "(node:1) MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 11 end listeners added to [TestsStream].\n(Use `node --trace-warnings ...` to show where the warning was created)\nreal\n";
    assert_eq!(drop_reporter_noise(noise), "real\n");
}

fn case(classname: Option<&str>, name: &str, file: Option<&str>) -> TestCase {
    TestCase {
        id: String::new(),
        name: name.into(),
        classname: classname.map(String::from),
        file: file.map(String::from),
        line: None,
        status: TestStatus::Failed,
        duration_s: None,
        message: None,
        detail: None,
    }
}

/// jest, vitest and mocha are not installed here; their report shapes (checked by hand with
/// jest 30 with our reporter, vitest 3, mocha 10) get node-shaped ids, and reruns filter by title.
#[test]
fn other_frameworks_get_node_shaped_ids_and_title_filters() {
    let mut fx = Fixture::new(&[("a.test.js", PASSING)]);
    fx.tools.framework = "jest".into();
    fx.tools.runner = vec!["jest".into()];
    let spec = fx.spec(&[], Duration::from_secs(30));
    let ctx = Ctx::prepare(&spec, Framework::Jest, true).expect("workspace");
    let abs = ctx.layer_dir.join("a.test.js").display().to_string();
    let mut cases = vec![
        // vitest: classname is the file, name the title path.
        case(Some("tt-tests/L1-unit/a.test.js"), "s > t", None),
        // jest (our reporter, jest-junit's shape) and mocha: file attribute, classname the suites.
        case(Some("s"), "t", Some(&abs)),
        case(None, "top", Some("tt-tests/L1-unit/a.test.js")),
        // jest's "Test suite failed to run" and vitest's load failure name the file.
        case(
            Some("Test suite failed to run"),
            "tt-tests/L1-unit/a.test.js",
            Some(&abs),
        ),
        // Not ours: untouched.
        case(Some("other"), "x", Some("test/strings.test.js")),
    ];
    ctx.attribute_by_report(&mut cases);
    let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "a.test.js::s > t",
            "a.test.js::s > t",
            "a.test.js::top",
            "a.test.js",
            ""
        ]
    );
    assert!(cases[..4]
        .iter()
        .all(|c| c.file.as_deref() == Some("a.test.js")));

    let target = Target::of(&ctx, "a.test.js::s > t (1)");
    assert_eq!(target.files, [ctx.layer_dir.join("a.test.js")]);
    // jest reports through our reporter: the copy needs no jest-junit.
    let plan = ctx.rerun_plan(&target).expect("plan");
    let tail: Vec<&str> = plan
        .argv
        .iter()
        .rev()
        .take(4)
        .rev()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        [
            "--runTestsByPath",
            "-t",
            r"^s t \(1\)$",
            "tt-tests/L1-unit/a.test.js"
        ]
    );
    let vm = (
        "NODE_OPTIONS".to_string(),
        "--experimental-vm-modules".to_string(),
    );
    assert!(plan.env.contains(&vm));

    let whole = Target::of(&ctx, "a.test.js");
    assert!(whole.name.is_none());
    let mut passed = case(None, "x", None);
    passed.status = TestStatus::Passed;
    assert_eq!(
        whole.status_in(&[passed], "a.test.js"),
        Some(TestStatus::Passed)
    );
    assert_eq!(whole.status_in(&[], "a.test.js"), None);
    let foreign = Target::of(&ctx, "test::plain name");
    assert_eq!(foreign.name.as_deref(), Some("plain name"));
    assert_eq!(foreign.files.len(), 1);
}
