//! The go runner against the go-calc fixture, with the real go toolchain.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::run::{rerun, run};
use crate::testing::report::{TestCase, TestStatus, TestTotals};
use crate::testing::runner::{RunOutput, RunSpec};
use crate::testing::toolchain::Toolchain;
use crate::workspace::{list_files, mirror};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

struct Fixture {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    session: PathBuf,
    tools: Toolchain,
}

/// go-calc copied to a temp repository, and a session whose L1-unit layer holds the prepared
/// tests (a passing file, one that finds the bug, one that does not compile).
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let none = Default::default();
    mirror(&Path::new(FIXTURES).join("go-calc"), &repo, &none).unwrap();
    let session = dir.path().join("session");
    std::fs::create_dir_all(session.join("results")).unwrap();
    let prepared = Path::new(FIXTURES).join("generated/go-calc/L1-unit");
    mirror(&prepared, &session.join("tests/L1-unit"), &none).unwrap();
    let tools = Toolchain {
        framework: "go".into(),
        interpreter: "go".into(),
        runner: vec!["go".into(), "test".into()],
        runner_available: true,
        coverage_tool: Some("go -coverprofile".into()),
        coverage_reason: "go test measures coverage itself".into(),
        ..Default::default()
    };
    Fixture {
        _dir: dir,
        repo,
        session,
        tools,
    }
}

impl Fixture {
    fn spec<'a>(&'a self, run_no: &str, deselect: &'a [String]) -> RunSpec<'a> {
        RunSpec {
            repo: &self.repo,
            session: &self.session,
            layer: "L1-unit",
            test_dir: self.session.join("tests/L1-unit"),
            tools: &self.tools,
            results: self.session.join("results"),
            run_no: run_no.into(),
            timeout: Duration::from_secs(300),
            deselect,
            sandbox: None,
        }
    }
}

/// Every file under `root` with its bytes.
fn tree(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    list_files(root, Path::new(""), None, &mut |rel, abs| {
        files.push((rel, std::fs::read(abs).unwrap()));
    })
    .unwrap();
    files.sort();
    files
}

fn find<'a>(out: &'a RunOutput, name: &str) -> &'a TestCase {
    out.cases
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", out.cases))
}

/// go is installed where these tests run (.ci/run installs it).
fn require_go() {
    let ok = std::process::Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "go not found: apt-get install golang-go (these tests run the real go test)"
    );
}

#[test]
fn a_real_go_run_reports_each_test_leaves_out_what_does_not_compile_and_measures_coverage() {
    require_go();
    let f = fixture();
    let before = tree(&f.repo);
    let out = run(&f.spec("001", &[]));
    assert_eq!(out.env_problem, None, "{}", out.output_tail);
    assert!(!out.timed_out);

    // The file that does not compile is a load error under its own name, with go's error.
    assert_eq!(out.load_errors.len(), 1, "{:?}", out.load_errors);
    let broken = &out.load_errors[0];
    assert_eq!(broken.file, "does_not_compile_test.go");
    assert!(
        broken
            .error
            .starts_with("does_not_compile_test.go:6:19: cannot use Add(1, 2)"),
        "{}",
        broken.error
    );
    let copy = f.session.join("workspace/go-L1-unit");
    assert!(!copy.join("tt_L1_does_not_compile_test.go").exists());
    assert!(copy.join("tt_L1_average_test.go").is_file());

    // One result per test, in the file that declares it; the bug is found.
    let totals = TestTotals::of(&out.cases);
    assert_eq!((totals.passed, totals.failed), (3, 1), "{:?}", out.cases);
    let bug = find(&out, "TestAverageOfThreeValues");
    assert_eq!(bug.status, TestStatus::Failed);
    assert_eq!(bug.id, "average_test.go::TestAverageOfThreeValues");
    assert_eq!(
        (bug.file.as_deref(), bug.line),
        (Some("average_test.go"), Some(5))
    );
    assert_eq!(
        bug.message.as_deref(),
        Some("average_test.go:11: Average([2 4 6]) = 3.3333333333333335, want 4")
    );
    assert_eq!(bug.classname.as_deref(), Some("example.com/calc"));
    let pass = find(&out, "TestClampKeepsValuesInRange");
    assert_eq!(
        (pass.status, pass.file.as_deref(), pass.line),
        (TestStatus::Passed, Some("calc_test.go"), Some(11))
    );
    assert_eq!(out.exit_code, Some(1));
    assert_eq!(out.command[..4], ["go", "test", "-count=1", "-json"]);
    assert!(out.output_tail.contains("FAIL"), "{}", out.output_tail);
    assert!(!out.output_tail.contains("tt_L1_"), "{}", out.output_tail);

    // Line coverage of the module's code, from the profile kept under results/.
    assert_eq!(out.coverage_problem, None);
    let coverage = out.coverage.as_ref().unwrap();
    let calc = coverage
        .files
        .iter()
        .find(|c| c.path == "calc.go")
        .unwrap_or_else(|| panic!("{coverage:?}"));
    assert!(
        calc.lines_total > 10 && calc.lines_covered == calc.lines_total,
        "{calc:?}"
    );
    for report in [
        "results/go-build-001.txt",
        "results/go-test-001.jsonl",
        "results/go-cover-001.out",
    ] {
        assert!(
            out.reports.contains(&report.to_string()),
            "{:?}",
            out.reports
        );
    }
    assert_eq!(tree(&f.repo), before, "the repository is unchanged");

    // Reruns find the same outcome; a deselected test still runs and counts as skipped.
    let s = f.spec("001", &[]);
    assert_eq!(rerun(&s, bug), Some(TestStatus::Failed));
    assert_eq!(rerun(&s, pass), Some(TestStatus::Passed));
    let mut gone = bug.clone();
    gone.name = "TestNoSuchTest".into();
    assert_eq!(rerun(&s, &gone), None);
    let deselect = [bug.id.clone()];
    let out = run(&f.spec("002", &deselect));
    let totals = TestTotals::of(&out.cases);
    assert_eq!(
        (totals.passed, totals.failed, totals.skipped),
        (3, 0, 1),
        "{:?}",
        out.cases
    );
    assert_eq!(tree(&f.repo), before);
}

#[test]
fn missing_go_and_an_empty_budget_are_reported_not_panicked() {
    let mut f = fixture();
    f.tools.interpreter = "/nonexistent/go".into();
    let out = run(&f.spec("001", &[]));
    assert_eq!(
        out.env_problem.as_deref(),
        Some("/nonexistent/go not found: install Go (apt-get install golang-go)")
    );
    f.tools.runner_available = false;
    f.tools.install_hint = Some("apt-get install golang-go".into());
    let out = run(&f.spec("002", &[]));
    assert_eq!(
        out.env_problem.as_deref(),
        Some("go is not available: apt-get install golang-go")
    );
    let f = fixture();
    let mut s = f.spec("003", &[]);
    s.timeout = Duration::ZERO;
    let out = run(&s);
    assert!(out.timed_out && out.cases.is_empty() && out.env_problem.is_none());
}
