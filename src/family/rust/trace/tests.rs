//! Rust's trace: the pure parts, then a real trace of the rust-crate fixture under cargo-llvm-cov.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::*;
use crate::testing::framework::Framework;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/rust-crate");

fn target(token: &str, root: &str, args: &[&str]) -> Target {
    Target {
        token: token.into(),
        root: root.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        dir: String::new(),
    }
}

#[test]
fn ids_name_their_target_and_file_of_guesses_the_module_file() {
    let t = RustTrace;
    assert_eq!(split_id("lib::tests::adds"), Some(("lib", "tests::adds")));
    assert_eq!(
        split_id("tests/calc.rs::adds"),
        Some(("tests/calc.rs", "adds"))
    );
    assert_eq!(split_id("tests/calc.rs"), None);
    assert_eq!(split_id("shapes::adds"), None);
    assert_eq!(t.file_of("lib::tests::adds"), "src/lib.rs");
    assert_eq!(t.file_of("lib::shapes::tests::area"), "src/shapes.rs");
    assert_eq!(t.file_of("lib::geo::plane::area"), "src/geo/plane.rs");
    assert_eq!(t.file_of("lib::tests::helpers::x"), "src/lib.rs");
    assert_eq!(
        t.file_of("tests/shapes.rs::area_is_width_times_height"),
        "tests/shapes.rs"
    );
    assert_eq!(t.file_of("tests/calc.rs::inline::adds"), "tests/calc.rs");
    assert_eq!(t.file_of("src/main.rs::cli::tests::parse"), "src/cli.rs");
    assert_eq!(t.file_of("src/bin/x.rs::tests::y"), "src/bin/x.rs");
    assert_eq!(
        t.file_of("crates/geo/src/lib.rs::plane::tests::area"),
        "crates/geo/src/plane.rs"
    );
}

#[test]
fn test_files_are_tests_and_the_crate_roots_code_is_src() {
    let t = RustTrace;
    for yes in [
        "tests/calc.rs",
        "tests/common/mod.rs",
        "src/lib.rs",
        "src/main.rs",
        "crates/geo/tests/a.rs",
        "crates/geo/src/lib.rs",
    ] {
        assert!(t.is_test_file(yes), "{yes}");
    }
    for no in [
        "src/shapes.rs",
        "src/bin/main.rs",
        "benches/b.rs",
        "build.rs",
        "tests/data.txt",
        "target/debug/build/x/out/lib.rs",
        ".team-testing-fix/tests/a.rs",
        "/abs/tests/a.rs",
    ] {
        assert!(!t.is_test_file(no), "{no}");
    }
    for yes in [
        "src/lib.rs",
        "src/shapes.rs",
        "src/geo/mod.rs",
        "src/bin/x.rs",
        "crates/geo/src/lib.rs",
    ] {
        assert!(t.is_code(yes), "{yes}");
    }
    for no in [
        "tests/calc.rs",
        "tests/src/x.rs",
        "examples/src/a.rs",
        "build.rs",
        "benches/b.rs",
        "../src/lib.rs",
        "/rustc/abc/library/std/src/panicking.rs",
        "target/src/a.rs",
        "src/lib.py",
    ] {
        assert!(!t.is_code(no), "{no}");
    }
}

#[test]
fn frames_are_the_project_frames_of_a_panic_innermost_last() {
    let detail = "thread 'a_triangle' (31) panicked at src/lib.rs:17:20:\n\
        attempt to subtract with overflow\n\
        stack backtrace:\n   0: __rustc::rust_begin_unwind\n\
        \x20            at /rustc/5980/library/std/src/panicking.rs:689:5\n\
        \x20  1: shapes::interior_angle_sum\n             at ./src/lib.rs:17:20\n\
        \x20  2: shapes::polygon::total\n             at ./src/polygon.rs:9:5\n\
        \x20  3: shapes::a_triangle\n             at ./tests/shapes.rs:10:5\n\
        note: Some details are omitted";
    assert_eq!(
        RustTrace.frames(detail),
        ["src/polygon.rs:9", "src/lib.rs:17"]
    );
    let old = "thread 'a::b' panicked at 'x was 3', src/a.rs:7:5";
    assert_eq!(RustTrace.frames(old), ["src/a.rs:7"]);
    assert!(RustTrace
        .frames("panicked at tests/x.rs:3:1:\nboom")
        .is_empty());
}

#[test]
fn cargo_metadata_gives_the_testable_targets() {
    let json = r#"{"packages":[{"name":"shapes","manifest_path":"/m/Cargo.toml","targets":[
        {"name":"shapes","kind":["lib"],"src_path":"/m/src/lib.rs"},
        {"name":"shapes","kind":["bin"],"src_path":"/m/src/main.rs"},
        {"name":"calc","kind":["test"],"src_path":"/real/m/tests/calc.rs"},
        {"name":"b","kind":["bench"],"src_path":"/m/benches/b.rs"},
        {"name":"build-script-build","kind":["custom-build"],"src_path":"/m/build.rs"},
        {"name":"outside","kind":["lib"],"src_path":"/elsewhere/src/lib.rs"}]}]}"#;
    let roots = [Path::new("/real/m"), Path::new("/m")];
    assert_eq!(
        targets_of(json, &roots).unwrap(),
        [
            target("lib", "src/lib.rs", &["--lib"]),
            target("src/main.rs", "src/main.rs", &["--bin", "shapes"]),
            target("tests/calc.rs", "tests/calc.rs", &["--test", "calc"]),
        ]
    );
    let workspace = r#"{"packages":[
        {"name":"geo","manifest_path":"/m/crates/geo/Cargo.toml","targets":[{"name":"geo","kind":["lib"],"src_path":"/m/crates/geo/src/lib.rs"}]},
        {"name":"app","manifest_path":"/m/Cargo.toml","targets":[{"name":"app","kind":["lib"],"src_path":"/m/src/lib.rs"}]}]}"#;
    assert_eq!(
        targets_of(workspace, &roots).unwrap(),
        [
            Target {
                dir: "crates/geo".into(),
                ..target(
                    "crates/geo/src/lib.rs",
                    "crates/geo/src/lib.rs",
                    &["--lib", "--package", "geo"],
                )
            },
            target("lib", "src/lib.rs", &["--lib", "--package", "app"]),
        ]
    );
    assert!(targets_of("not json", &roots).is_err());
}

#[test]
fn the_selection_is_planned_by_target() {
    let targets = [
        target("lib", "src/lib.rs", &["--lib"]),
        target("tests/calc.rs", "tests/calc.rs", &["--test", "calc"]),
    ];
    let sel = |s: &[&str]| s.iter().map(|e| e.to_string()).collect::<Vec<_>>();
    let mut problems = Vec::new();
    let all = plan(&[], &targets, &mut problems);
    assert_eq!(all, Plan::from([(0, None), (1, None)]));
    let got = plan(
        &sel(&[
            "tests/calc.rs::b",
            "tests/calc.rs::a",
            "src/lib.rs",
            "lib::tests::x",
            "tests/common/mod.rs",
            "tests/gone.rs::t",
            "tests/orphan.rs",
        ]),
        &targets,
        &mut problems,
    );
    let names = ["a", "b"].map(String::from).into_iter().collect();
    assert_eq!(got, Plan::from([(0, None), (1, Some(names))]));
    assert_eq!(
        problems,
        [
            "tests/gone.rs::t: the crate has no target tests/gone.rs",
            "tests/orphan.rs: no test target of the crate runs it"
        ]
    );
}

#[test]
fn an_lcov_becomes_the_reach_of_the_code_without_test_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let mirror = dir.path().join("mirror");
    std::fs::create_dir_all(mirror.join("src")).unwrap();
    let lib = "pub fn f() -> u32 {\n    1\n}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {\n        assert_eq!(super::f(), 1);\n    }\n}\n";
    std::fs::write(mirror.join("src/lib.rs"), lib).unwrap();
    let real = mirror.canonicalize().unwrap();
    let lcov = dir.path().join("t.info");
    let text = format!(
        "SF:{m}/src/lib.rs\nDA:1,1\nDA:2,1\nDA:3,1\nDA:7,1\nDA:8,1\nDA:9,1\nend_of_record\n\
         SF:{m}/src/unused.rs\nDA:1,0\nend_of_record\n\
         SF:{m}/tests/calc.rs\nDA:3,1\nend_of_record\n\
         SF:/home/u/.cargo/registry/src/dep/src/lib.rs\nDA:5,1\nend_of_record\n",
        m = real.display()
    );
    std::fs::write(&lcov, text).unwrap();
    let report = parse_lcov(&lcov).unwrap();
    let mut map = ReachMap::new(&mirror, &real);
    let reach = map.reach(report, &|f| RustTrace.is_code(f));
    let key = mirror.join("src/lib.rs").to_string_lossy().into_owned();
    assert_eq!(reach.keys().collect::<Vec<_>>(), [&key]);
    assert_eq!(reach[&key].lines, [1, 2, 3]);
    assert!(reach[&key].arcs.is_empty());
}

#[test]
fn unready_without_cargo_llvm_cov() {
    let mut tools = Toolchain {
        runner_available: true,
        coverage_tool: Some(LLVM_COV.into()),
        ..crate::testing::toolchain::unknown()
    };
    assert_eq!(RustTrace.unready(&tools), None);
    tools.coverage_tool = Some("cargo-tarpaulin".into());
    assert!(RustTrace
        .unready(&tools)
        .unwrap()
        .contains("cargo install cargo-llvm-cov"));
    assert!(RustTrace.test_files(Path::new(FIXTURE)).is_empty());
}

/// Whether cargo-llvm-cov runs on this machine (the real trace needs it).
fn llvm_cov_installed() -> bool {
    std::process::Command::new("cargo")
        .args(["llvm-cov", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

const SHAPES_TESTS: &str = "use shapes::*;\n\n#[test]\nfn rectangle_area_is_width_times_height() {\n    assert_eq!(rectangle_area(2, 5), 10);\n}\n\n#[test]\nfn a_triangle_has_180_degrees() {\n    assert_eq!(interior_angle_sum(3), 180);\n}\n";

#[test]
fn the_fixture_is_traced_test_by_test() {
    if !llvm_cov_installed() {
        eprintln!("cargo llvm-cov is not installed: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mirror = dir.path().join("mirror");
    let scratch = dir.path().join("scratch");
    let extra = BTreeMap::from([(
        PathBuf::from("tests/shapes.rs"),
        SHAPES_TESTS.as_bytes().to_vec(),
    )]);
    crate::workspace::mirror(Path::new(FIXTURE), &mirror, &extra).unwrap();
    let tools = crate::family::toolchain(&mirror, Some(Framework::Cargo));
    assert_eq!(RustTrace.unready(&tools), None);
    let job = |selection: &[&str]| TraceJob {
        name: "baseline".into(),
        tools: &tools,
        scratch: &scratch,
        mirror: &mirror,
        repo: &mirror,
        session: &mirror,
        selection: selection.iter().map(|s| s.to_string()).collect(),
        sandbox: None,
        timeout: Duration::from_secs(600),
    };
    let started = Instant::now();
    let files = ["src/lib.rs", "tests/shapes.rs"];
    let traced = RustTrace.trace(&job(&files)).unwrap();
    eprintln!("traced by files in {:?}", started.elapsed());
    assert!(traced.problems.is_empty(), "{:?}", traced.problems);
    assert!(traced.mutants.is_empty());
    let ids: Vec<&String> = traced.tests.keys().collect();
    assert_eq!(
        ids,
        [
            "lib::tests::rectangle_area_multiplies_the_sides",
            "tests/shapes.rs::a_triangle_has_180_degrees",
            "tests/shapes.rs::rectangle_area_is_width_times_height"
        ]
    );
    let lib = mirror.join("src/lib.rs").to_string_lossy().into_owned();
    let failing = &traced.tests["tests/shapes.rs::a_triangle_has_180_degrees"];
    assert_eq!(failing.outcome, "failed");
    let detail = failing.detail.as_deref().unwrap();
    assert!(
        detail.contains("panicked at tests/shapes.rs:10:5"),
        "{detail}"
    );
    assert!(
        failing.reached[&lib].lines.contains(&17),
        "{:?}",
        failing.reached
    );
    let passing = &traced.tests["tests/shapes.rs::rectangle_area_is_width_times_height"];
    assert_eq!(
        (passing.outcome.as_str(), passing.detail.as_deref()),
        ("passed", None)
    );
    assert!(!passing.reached[&lib].lines.contains(&17));
    assert!(passing.reached[&lib].lines.contains(&6));
    // The unit test's own body (lines 20-28) is test code, not reach.
    let unit = &traced.tests["lib::tests::rectangle_area_multiplies_the_sides"];
    assert_eq!(unit.outcome, "passed");
    assert_eq!(unit.reached[&lib].lines, [5, 6, 7]);

    // Again by id, with the build done: only the test runs.
    let started = Instant::now();
    let again = RustTrace
        .trace(&job(&[
            "tests/shapes.rs::a_triangle_has_180_degrees",
            "lib::tests::gone",
        ]))
        .unwrap();
    eprintln!("one test by id in {:?}", started.elapsed());
    assert_eq!(again.tests.len(), 1);
    assert_eq!(
        again.tests["tests/shapes.rs::a_triangle_has_180_degrees"].outcome,
        "failed"
    );
    assert_eq!(again.problems.len(), 1, "{:?}", again.problems);
    assert!(
        again.problems[0].starts_with("lib::tests::gone: no such test"),
        "{:?}",
        again.problems
    );
}

#[test]
fn a_panic_in_the_code_is_a_frame_and_no_time_is_a_problem() {
    if !llvm_cov_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mirror = dir.path().join("mirror");
    let scratch = dir.path().join("scratch");
    let overflow = "#[test]\nfn no_sides() {\n    shapes::interior_angle_sum(0);\n}\n";
    let broken = "#[test]\nfn a() { let x: u32 = \"no\"; }\n";
    let extra = BTreeMap::from([
        (PathBuf::from("tests/edge.rs"), overflow.as_bytes().to_vec()),
        (PathBuf::from("tests/broken.rs"), broken.as_bytes().to_vec()),
    ]);
    crate::workspace::mirror(Path::new(FIXTURE), &mirror, &extra).unwrap();
    let tools = crate::family::toolchain(&mirror, Some(Framework::Cargo));
    let mut job = TraceJob {
        name: "iteration-1".into(),
        tools: &tools,
        scratch: &scratch,
        mirror: &mirror,
        repo: &mirror,
        session: &mirror,
        selection: vec!["tests/edge.rs".into()],
        sandbox: None,
        timeout: Duration::from_secs(600),
    };
    let traced = RustTrace.trace(&job).unwrap();
    let t = &traced.tests["tests/edge.rs::no_sides"];
    let detail = t.detail.as_deref().unwrap_or_default();
    assert_eq!(t.outcome, "failed");
    assert!(detail.contains("panicked at src/lib.rs:17:"), "{detail}");
    assert_eq!(
        RustTrace.frames(detail).last().map(String::as_str),
        Some("src/lib.rs:17")
    );
    // A target that does not build is tried once, whatever its tests.
    job.selection = vec!["tests/broken.rs::a".into(), "tests/broken.rs::b".into()];
    let broken = RustTrace.trace(&job).unwrap();
    assert!(broken.tests.is_empty());
    assert_eq!(broken.problems.len(), 1, "{:?}", broken.problems);
    assert!(
        broken.problems[0].starts_with(
            "the crate does not build: error[E0308]: mismatched types at tests/broken.rs:2:"
        ),
        "{:?}",
        broken.problems
    );
    job.timeout = Duration::ZERO;
    let none = RustTrace.trace(&job).unwrap();
    assert!(none.tests.is_empty());
    assert!(
        none.problems[0].contains("ran out of its 0s"),
        "{:?}",
        none.problems
    );
}

#[test]
fn the_trace_runs_in_the_sandbox() {
    let caps = crate::sandbox::capabilities();
    if !llvm_cov_installed() || caps.landlock_abi.is_none() || !caps.mountns {
        eprintln!(
            "skipped: no cargo-llvm-cov or no sandbox ({:?})",
            caps.missing
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mirror = dir.path().join("mirror");
    let scratch = dir.path().join("scratch");
    crate::workspace::mirror(Path::new(FIXTURE), &mirror, &BTreeMap::new()).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    let tools = crate::family::toolchain(&mirror, Some(Framework::Cargo));
    let reads = RustTrace.sandbox_reads(&tools, &mirror);
    let sandbox = crate::sandbox::Sandbox::new(
        &crate::sandbox::SandboxSettings::default(),
        &dir.path().join("sb"),
        &reads,
        &[mirror.clone(), scratch.clone()],
    )
    .unwrap();
    let traced = RustTrace
        .trace(&TraceJob {
            name: "baseline".into(),
            tools: &tools,
            scratch: &scratch,
            mirror: &mirror,
            repo: &mirror,
            session: &mirror,
            selection: vec!["src/lib.rs".into()],
            sandbox: Some(&sandbox),
            timeout: Duration::from_secs(600),
        })
        .unwrap();
    assert!(traced.problems.is_empty(), "{:?}", traced.problems);
    let unit = &traced.tests["lib::tests::rectangle_area_multiplies_the_sides"];
    let lib = mirror.join("src/lib.rs").to_string_lossy().into_owned();
    assert_eq!(
        (unit.outcome.as_str(), &unit.reached[&lib].lines[..]),
        ("passed", &[5, 6, 7][..])
    );
}
