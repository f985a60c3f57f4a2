//! The cargo runner against the rust-crate fixture, with real cargo.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::gate::{failed_units, file_errors, first_errors};
use super::run::{interleave, nextest_match, run, skip_args, status_of};
use super::stage::{generated_files, with_test_targets, Staged};
use super::staged_name;
use crate::family::rust::libtest::parse_libtest;
use crate::testing::report::{TestCase, TestStatus, TestTotals};
use crate::testing::runner::RunSpec;
use crate::testing::toolchain::Toolchain;
use crate::workspace::{list_files, mirror};

fn rerun(spec: &RunSpec, case_id: &str) -> Option<TestStatus> {
    super::run::rerun(spec, case_id)
}

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

fn staged(original: &str, target: &str) -> Staged {
    Staged {
        original: original.into(),
        target: target.into(),
    }
}

#[test]
fn generated_files_become_prefixed_test_targets() {
    assert_eq!(staged_name("L1-unit", "area-test.rs"), "tt_L1_area_test");
    assert_eq!(staged_name("L2", "x.rs"), "tt_L2_x");
    let dir = tempfile::tempdir().unwrap();
    for f in ["b.rs", "a-b.rs", "a_b.rs", "notes.txt"] {
        std::fs::write(dir.path().join(f), "").unwrap();
    }
    let files = generated_files(dir.path(), "L1-unit");
    assert_eq!(
        files,
        [
            staged("a-b.rs", "tt_L1_a_b"),
            staged("a_b.rs", "tt_L1_a_b_2"),
            staged("b.rs", "tt_L1_b")
        ]
    );
}

#[test]
fn build_errors_are_traced_to_their_generated_files() {
    let text = std::fs::read_to_string(format!("{FIXTURES}reports/cargo-build-error.txt")).unwrap();
    assert_eq!(
        failed_units(&text),
        ["test \"tt_L1_bad2\"", "test \"tt_L1_bad\""]
    );
    let bad = file_errors(&text, &staged("bad.rs", "tt_L1_bad"));
    let lines: Vec<&str> = bad.lines().collect();
    assert_eq!(lines.len(), 2, "{bad}");
    assert!(
        lines[0].starts_with("bad.rs:1:5: error[E0432]: unresolved import"),
        "{bad}"
    );
    assert!(
        lines[1].starts_with("bad.rs:5:18: error[E0308]: mismatched types"),
        "{bad}"
    );
    // tt_L1_bad must not pick up tt_L1_bad2's lines.
    let bad2 = file_errors(&text, &staged("bad2.rs", "tt_L1_bad2"));
    assert!(
        bad2.starts_with("bad2.rs:4:5: error[E0425]") && !bad2.contains('\n'),
        "{bad2}"
    );

    let crate_broken = "src/lib.rs:29:24: error[E0308]: mismatched types\n\
        error: could not compile `shapes` (lib) due to 1 previous error\n\
        warning: build failed, waiting for other jobs to finish...\n\
        error: could not compile `shapes` (lib test) due to 1 previous error\n";
    assert_eq!(failed_units(crate_broken), ["lib", "lib test"]);
    assert!(first_errors(crate_broken, 1).starts_with("src/lib.rs:29:24: error[E0308]"));
}

#[test]
fn running_lines_from_stderr_are_put_before_their_binary_results() {
    let stdout = "\nrunning 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n\
                  \nrunning 1 test\ntest b ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
    let stderr = "   Compiling x v0.1.0\n     Running unittests src/lib.rs (t/x-1)\n     Running tests/it.rs (t/it-2)\nerror: 1 target failed\n";
    let text = interleave(stdout, stderr);
    let it = text.find("Running tests/it.rs").unwrap();
    assert!(text.find("test a ... ok").unwrap() < it && it < text.find("test b ... ok").unwrap());
    assert!(text.ends_with("error: 1 target failed\n"));
    let files: Vec<_> = parse_libtest(&text)
        .cases
        .into_iter()
        .map(|c| c.file.unwrap())
        .collect();
    assert_eq!(files, ["src/lib.rs", "tests/it.rs"]);
}

#[test]
fn ids_map_to_filters_and_manifest_entries() {
    assert_eq!(
        nextest_match("shapes::tt_L1_a::t"),
        "(binary_id(=shapes) & test(=tt_L1_a::t)) | (binary_id(=shapes::tt_L1_a) & test(=t)) | test(=shapes::tt_L1_a::t)"
    );
    assert_eq!(skip_args(&["a::b".into()]), ["--", "--skip", "a::b"]);
    let m = "[package]\nname = \"x\"\nautotests = false # by hand\n";
    let with = with_test_targets(m, &["tt_L1_a"]).unwrap();
    assert!(with.ends_with("[[test]]\nname = \"tt_L1_a\"\npath = \"tests/tt_L1_a.rs\"\n"));
    assert_eq!(
        with_test_targets("[package]\nname = \"x\"\n", &["tt_L1_a"]),
        None
    );
    let cases = [
        ("a", TestStatus::Passed),
        ("a", TestStatus::Failed),
        ("b", TestStatus::Skipped),
    ]
    .map(|(id, status)| TestCase::named(id, status));
    assert_eq!(status_of(&cases, "a"), Some(TestStatus::Failed));
    assert_eq!(status_of(&cases, "b"), Some(TestStatus::Skipped));
    assert_eq!(status_of(&cases, "c"), None);
}

#[test]
fn the_mirror_rewrites_only_what_changed_and_drops_what_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, copy) = (dir.path().join("repo"), dir.path().join("copy"));
    for f in [
        "Cargo.toml",
        "src/lib.rs",
        "src/old.rs",
        ".git/HEAD",
        "target/x",
        "a/target/y",
    ] {
        std::fs::create_dir_all(repo.join(f).parent().unwrap()).unwrap();
        std::fs::write(repo.join(f), f).unwrap();
    }
    let extra = BTreeMap::from([(PathBuf::from("tests/tt_L1_a.rs"), b"t".to_vec())]);
    mirror(&repo, &copy, &extra).unwrap();
    let names: Vec<PathBuf> = tree(&copy).into_keys().collect();
    let expected = [
        "Cargo.toml",
        "a/target/y",
        "src/lib.rs",
        "src/old.rs",
        "tests/tt_L1_a.rs",
    ];
    assert_eq!(names, expected.map(PathBuf::from));

    // Cargo rebuilds by mtime: an unchanged file must keep it. Gone files leave the copy;
    // cargo's own target/ and Cargo.lock stay.
    let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let lib_time = mtime(&copy.join("src/lib.rs"));
    std::fs::remove_file(repo.join("src/old.rs")).unwrap();
    std::fs::create_dir_all(copy.join("target")).unwrap();
    std::fs::write(copy.join("target/keep"), "").unwrap();
    std::fs::write(copy.join("Cargo.lock"), "").unwrap();
    std::thread::sleep(Duration::from_millis(20));
    mirror(&repo, &copy, &BTreeMap::new()).unwrap();
    assert_eq!(mtime(&copy.join("src/lib.rs")), lib_time);
    assert!(!copy.join("src/old.rs").exists() && !copy.join("tests/tt_L1_a.rs").exists());
    assert!(copy.join("target/keep").exists() && copy.join("Cargo.lock").exists());
}

/// Every file under `root` (no target/) with its bytes.
fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    list_files(root, Path::new(""), None, &mut |rel, abs| {
        files.insert(rel, std::fs::read(abs).unwrap());
    })
    .unwrap();
    files
}

const PASSING: &str = "use shapes::square_perimeter;\n\n#[test]\nfn square_perimeter_is_four_sides() {\n    assert_eq!(square_perimeter(5), 20);\n}\n";
const FAILING: &str = "use shapes::interior_angle_sum;\n\n#[test]\nfn triangle_angles_sum_to_180() {\n    assert_eq!(interior_angle_sum(3), 180);\n}\n";
const BROKEN: &str =
    "use shapes::circle_area;\n\n#[test]\nfn circle() {\n    assert_eq!(circle_area(1), 3);\n}\n";

struct Fixture {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    session: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    mirror(
        &Path::new(FIXTURES).join("rust-crate"),
        &repo,
        &BTreeMap::new(),
    )
    .unwrap();
    let session = dir.path().join("session");
    let tests = session.join("tests/L1-unit");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::create_dir_all(session.join("results")).unwrap();
    for (name, body) in [
        ("pass.rs", PASSING),
        ("angles.rs", FAILING),
        ("broken.rs", BROKEN),
    ] {
        std::fs::write(tests.join(name), body).unwrap();
    }
    Fixture {
        _dir: dir,
        repo,
        session,
    }
}

fn spec<'a>(
    f: &'a Fixture,
    tools: &'a Toolchain,
    run_no: &str,
    deselect: &'a [String],
) -> RunSpec<'a> {
    RunSpec {
        repo: &f.repo,
        session: &f.session,
        layer: "L1-unit",
        test_dir: f.session.join("tests/L1-unit"),
        tools,
        results: f.session.join("results"),
        run_no: run_no.into(),
        timeout: Duration::from_secs(600),
        deselect,
        sandbox: None,
    }
}

/// `cargo <subcommand>` works on this machine.
fn installed(subcommand: &str) -> bool {
    let argv = ["cargo", subcommand, "--version"];
    crate::proc::run_captured(&argv, Path::new(FIXTURES), Duration::from_secs(60))
        .is_ok_and(|c| c.success())
}

fn cargo_tools(nextest: bool) -> Toolchain {
    Toolchain {
        framework: "cargo".into(),
        interpreter: "cargo".into(),
        runner_available: true,
        coverage_reason: "no coverage tool in this test".into(),
        nextest,
        ..Default::default()
    }
}

#[test]
fn a_real_cargo_run_counts_failures_and_leaves_out_files_that_do_not_compile() {
    let f = fixture();
    let before = tree(&f.repo);
    let tools = cargo_tools(false);
    let out = run(&spec(&f, &tools, "001", &[]));
    assert_eq!(out.env_problem, None, "{}", out.output_tail);
    assert!(!out.timed_out);

    // The broken file is a load error, named as in the layer folder, with rustc's errors.
    assert_eq!(out.load_errors.len(), 1, "{:?}", out.load_errors);
    assert_eq!(out.load_errors[0].file, "broken.rs");
    assert!(
        out.load_errors[0]
            .error
            .starts_with("broken.rs:1:5: error[E0432]"),
        "{}",
        out.load_errors[0].error
    );
    let copy = f.session.join("workspace/cargo-L1-unit");
    assert!(!copy.join("tests/tt_L1_broken.rs").exists());
    assert!(copy.join("tests/tt_L1_pass.rs").is_file());

    // Counts agree with libtest's own `test result:` lines: the crate's unit test and
    // pass.rs pass, angles.rs catches the off-by-one.
    let raw = std::fs::read_to_string(f.session.join("results/cargo-test-001.txt")).unwrap();
    let summary = parse_libtest(&raw).summary;
    let totals = TestTotals::of(&out.cases);
    assert_eq!(
        (totals.passed, totals.failed),
        (summary.passed, summary.failed)
    );
    assert_eq!((totals.passed, totals.failed), (2, 1), "{:?}", out.cases);
    let failed = out
        .cases
        .iter()
        .find(|c| c.status == TestStatus::Failed)
        .unwrap();
    assert_eq!(failed.id, "triangle_angles_sum_to_180");
    assert_eq!(failed.file.as_deref(), Some("tests/tt_L1_angles.rs"));
    assert!(failed.detail.as_deref().unwrap_or("").contains("left: 360"));
    assert_eq!(out.exit_code, Some(101));
    assert_eq!(out.command, ["cargo", "test", "--no-fail-fast"]);
    assert!(
        out.reports
            .contains(&"results/cargo-test-001.txt".to_string()),
        "{:?}",
        out.reports
    );
    assert!(out
        .reports
        .contains(&"results/cargo-build-001.txt".to_string()));
    assert_eq!(
        (out.coverage, out.coverage_problem.as_deref()),
        (None, Some("no coverage tool in this test"))
    );
    assert!(f.session.join("workspace/cargo-target/debug").is_dir());

    // The repository is untouched: same files, no target/ or Cargo.lock written into it.
    assert_eq!(tree(&f.repo), before);
    assert!(!f.repo.join("target").exists() && !f.repo.join("Cargo.lock").exists());

    // Rerun reuses the copy; a deselected test is skipped on the next run.
    let s = spec(&f, &tools, "001", &[]);
    assert_eq!(
        rerun(&s, "triangle_angles_sum_to_180"),
        Some(TestStatus::Failed)
    );
    assert_eq!(
        rerun(&s, "tests::rectangle_area_multiplies_the_sides"),
        Some(TestStatus::Passed)
    );
    assert_eq!(rerun(&s, "no_such_test"), None);
    let deselect = ["triangle_angles_sum_to_180".to_string()];
    let out = run(&spec(&f, &tools, "002", &deselect));
    let totals = TestTotals::of(&out.cases);
    assert_eq!(
        (totals.passed, totals.failed),
        (2, 0),
        "{}",
        out.output_tail
    );
    assert_eq!(out.load_errors.len(), 1);

    // The same run through nextest, when it is installed here.
    if !installed("nextest") {
        eprintln!("cargo-nextest is not installed: its half of the test is skipped");
        return;
    }
    let tools = cargo_tools(true);
    let out = run(&spec(&f, &tools, "003", &[]));
    assert_eq!(out.env_problem, None, "{}", out.output_tail);
    assert!(
        out.reports.contains(&"results/junit-003.xml".to_string()),
        "{:?}",
        out.reports
    );
    let totals = TestTotals::of(&out.cases);
    assert_eq!((totals.passed, totals.failed), (2, 1), "{:?}", out.cases);
    let failed = out
        .cases
        .iter()
        .find(|c| c.status == TestStatus::Failed)
        .unwrap();
    assert_eq!(
        failed.id,
        "shapes::tt_L1_angles::triangle_angles_sum_to_180"
    );
    assert_eq!(failed.file.as_deref(), Some("tests/tt_L1_angles.rs"));
    let s = spec(&f, &tools, "003", &[]);
    assert_eq!(rerun(&s, &failed.id), Some(TestStatus::Failed));
    let deselect = [failed.id.clone()];
    let out = run(&spec(&f, &tools, "004", &deselect));
    let totals = TestTotals::of(&out.cases);
    assert_eq!(
        (totals.passed, totals.failed),
        (2, 0),
        "{}",
        out.output_tail
    );
    assert_eq!(tree(&f.repo), before);
}

#[test]
fn coverage_comes_from_cargo_llvm_cov_when_it_is_installed() {
    let f = fixture();
    let mut tools = cargo_tools(false);
    tools.coverage_tool = Some("cargo-llvm-cov".into());
    let s = spec(&f, &tools, "001", &[]);
    if !installed("llvm-cov") {
        eprintln!("cargo-llvm-cov is not installed: coverage test skipped");
        return;
    }
    let out = run(&s);
    assert_eq!(
        (out.env_problem, out.coverage_problem),
        (None, None),
        "{}",
        out.output_tail
    );
    let totals = TestTotals::of(&out.cases);
    assert_eq!((totals.passed, totals.failed), (2, 1), "{:?}", out.cases);
    assert!(
        out.reports.contains(&"results/lcov-001.info".to_string()),
        "{:?}",
        out.reports
    );
    // Paths are repo-relative, and every line of the three functions ran.
    let coverage = out.coverage.unwrap();
    let lib = coverage
        .files
        .iter()
        .find(|c| c.path == "src/lib.rs")
        .unwrap();
    assert!(
        lib.lines_covered > 0 && lib.missing_lines.is_empty(),
        "{lib:?}"
    );
}

#[test]
fn missing_cargo_and_an_empty_budget_are_reported_not_panicked() {
    let f = fixture();
    let mut tools = cargo_tools(false);
    tools.interpreter = "/nonexistent/cargo".into();
    let out = run(&spec(&f, &tools, "001", &[]));
    assert_eq!(
        out.env_problem.as_deref(),
        Some("/nonexistent/cargo not found: install Rust with rustup")
    );
    let tools = cargo_tools(false);
    let mut s = spec(&f, &tools, "002", &[]);
    s.timeout = Duration::ZERO;
    let out = run(&s);
    assert!(out.timed_out && out.cases.is_empty() && out.env_problem.is_none());
}
