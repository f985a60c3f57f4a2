//! "What did my change alter?": a change-scoped run replays its search's calls on the base and
//! on HEAD and shows exactly the behaviours the change altered, with an input, before → after
//! and a verdict; the unchanged behaviour becomes ordinary regression tests that pass on both
//! versions, and `apply --keep-old` / `--keep-new` deliver the chosen side.

use std::path::Path;
use std::process::Command;

use crate::common::*;

/// The python-change fixture's base, then its change in three commits (so `--base HEAD~3` is
/// the whole range): the fee (with its docstring), the label regression, the reformatting.
fn changed_project() -> Project {
    let p = Project::fixture("python-change/base");
    let head = std::fs::read_to_string(fixtures().join("python-change/head/pricing.py")).unwrap();
    let base = std::fs::read_to_string(p.repo.join("pricing.py")).unwrap();
    let function = |text: &str, name: &str| {
        let start = text.find(&format!("def {name}(")).unwrap();
        let end = text[start + 4..]
            .find("\ndef ")
            .map_or(text.len(), |e| start + 4 + e + 1);
        text[start..end].to_string()
    };
    let mut text = base.clone();
    for name in ["total_price", "label", "clamp"] {
        text = text.replace(&function(&base, name), &function(&head, name));
        std::fs::write(p.repo.join("pricing.py"), &text).unwrap();
        git(&p.repo, &["commit", "-q", "-am", &format!("change {name}")]);
    }
    assert_eq!(text, head, "the three commits make the head version");
    p
}

/// pytest on `tests` with the project's `pricing.py` as `code` has it: (passed, output).
fn pytest_with(code: &str, tests: &[(String, String)]) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pricing.py"), code).unwrap();
    for (name, text) in tests {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    outcome(
        Command::new("python3")
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .current_dir(dir.path())
            .env("PYTHONDONTWRITEBYTECODE", "1"),
    )
}

/// Every test file apply wrote under `dir`, by file name.
fn applied(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in walk(dir) {
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("test_") && name.ends_with(".py") {
            out.push((name, std::fs::read_to_string(&entry).unwrap()));
        }
    }
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() && !p.ends_with(".git") {
            out.extend(walk(&p));
        } else if p.is_file() {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_change_scoped_run_shows_what_the_change_altered_and_pins_the_rest() {
    let p = changed_project();
    let base_code =
        std::fs::read_to_string(fixtures().join("python-change/base/pricing.py")).unwrap();
    let head_code = std::fs::read_to_string(p.repo.join("pricing.py")).unwrap();
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the pricing change",
            "--base",
            "HEAD~3",
            "--pipeline",
            "standard",
            "-y",
        ])
        .run();
    out.assert_code(0);
    assert!(
        out.stdout
            .contains("Your change altered 2 behaviours in 2 functions"),
        "{}",
        out.stdout
    );
    let id = out.session_id();
    // The analyst's SARIF has the regression at the function's line in the repository, and
    // --fail-on regression fails a CI job on it by name.
    let sarif = read_json(&p.session_dir(&id).join("analysis/report.sarif"));
    let regression = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "likely-regression")
        .unwrap_or_else(|| panic!("{sarif:#}"));
    let at = &regression["locations"][0]["physicalLocation"];
    assert_eq!(
        at["artifactLocation"]["uri"], "pricing.py",
        "{regression:#}"
    );
    assert!(
        at["region"]["startLine"].as_u64().is_some(),
        "{regression:#}"
    );
    assert!(regression["message"]["text"]
        .as_str()
        .unwrap()
        .contains("label('')"));
    let failed = p.cmd(&["report", &id, "--fail-on", "regression"]).run();
    failed.assert_code(4);
    assert!(
        failed
            .stderr
            .contains("--fail-on regression: B1 pricing.label: label(''): before returns ''"),
        "{}",
        failed.stderr
    );
    // The pull-request summary leads with what the change altered, and goes to the step
    // summary of a GitHub Actions job too.
    let step_summary = p.tmp.path().join("step-summary.md");
    let pr = p
        .cmd(&["report", &id, "--format", "pr"])
        .env("GITHUB_STEP_SUMMARY", step_summary.to_str().unwrap())
        .run();
    pr.assert_code(0);
    let first_section = pr.stdout.find("\n## ").map(|i| &pr.stdout[i..]);
    assert!(
        first_section.is_some_and(|s| s.starts_with("\n## Behaviour the change altered")),
        "{}",
        pr.stdout
    );
    assert!(
        pr.stdout.contains("| B1 | `pricing.label` | `label('')` |"),
        "{}",
        pr.stdout
    );
    assert_eq!(
        std::fs::read_to_string(&step_summary).unwrap(),
        format!("{}\n", pr.stdout)
    );
    let record = read_json(&p.session_dir(&id).join("behaviour/changes.json"));
    let changes = record["changes"].as_array().unwrap();
    let of = |function: &str| {
        changes
            .iter()
            .find(|c| c["function"] == function)
            .unwrap_or_else(|| panic!("no change of {function}: {record:#}"))
    };
    assert_eq!(changes.len(), 2, "{record:#}");
    let label = of("pricing.label");
    assert_eq!(label["verdict"], "likely_regression", "{label:#}");
    assert_eq!(label["before"], "returns ''", "{label:#}");
    assert!(
        label["after"]
            .as_str()
            .unwrap()
            .starts_with("raises IndexError"),
        "{label:#}"
    );
    let total = of("pricing.total_price");
    assert_eq!(total["verdict"], "likely_intended", "{total:#}");
    assert!(total["input"].as_str().unwrap().contains("total_price("));
    assert!(
        record["unchanged_tests"].as_u64().unwrap() >= 2,
        "{record:#}"
    );
    // Status leads with it too, one line per change.
    let status = p.cmd(&["status", &id]).run();
    assert!(
        status.stdout.contains("Your change altered 2 behaviours"),
        "{}",
        status.stdout
    );
    // By default nothing about a behaviour change is applied; what is applied pins what the
    // change did not alter, and passes on both versions.
    p.cmd(&["apply", &id]).run().assert_code(0);
    let pinned = applied(&p.repo);
    assert!(!pinned.is_empty());
    for change in changes {
        let test = change["new_test"].as_str().unwrap();
        for (name, text) in &pinned {
            assert!(
                !text.contains(test),
                "{name} pins a changed behaviour:\n{text}"
            );
        }
    }
    let (ok, log) = pytest_with(&head_code, &pinned);
    assert!(ok, "the regression tests fail on HEAD:\n{log}");
    let (ok, log) = pytest_with(&base_code, &pinned);
    assert!(ok, "the regression tests fail on the base:\n{log}");
    // --keep-old: the regression test of the label fails on HEAD with the difference.
    let label_id = label["id"].as_str().unwrap();
    p.cmd(&["apply", &id, "--keep-old", label_id])
        .run()
        .assert_code(0);
    let old: Vec<_> = applied(&p.repo)
        .into_iter()
        .filter(|(n, _)| n.ends_with("_old.py"))
        .collect();
    assert_eq!(old.len(), 1, "{old:?}");
    let (ok, log) = pytest_with(&head_code, &old);
    assert!(!ok && log.contains("IndexError"), "{log}");
    let (ok, log) = pytest_with(&base_code, &old);
    assert!(ok, "{log}");
    // --keep-new: the tests of the new behaviour pass on HEAD.
    p.cmd(&["apply", &id, "--keep-new"]).run().assert_code(0);
    let new: Vec<_> = applied(&p.repo)
        .into_iter()
        .filter(|(n, _)| n.ends_with("_new.py"))
        .collect();
    assert_eq!(new.len(), 2, "{new:?}");
    let (ok, log) = pytest_with(&head_code, &new);
    assert!(ok, "{log}");
    // An id the session does not have is named.
    let wrong = p.cmd(&["apply", &id, "--keep-new", "B9"]).run();
    assert_eq!(wrong.code, 2, "{}", wrong.stderr);
    assert!(
        wrong.stderr.contains("no such behaviour change"),
        "{}",
        wrong.stderr
    );
}

/// A module the change adds has nothing on the base to compare with: the comparison names it
/// as new and replays only the module the change modified.
#[test]
fn a_module_the_change_adds_is_named_new_and_not_replayed() {
    let p = Project::fixture("python-calc");
    let ops = std::fs::read_to_string(p.repo.join("calc/ops.py")).unwrap();
    p.write(
        "calc/ops.py",
        &ops.replace("return a + b", "return b + a if a else b"),
    );
    p.write(
        "calc/scale.py",
        "def scale(x: float, by: float = 2.0) -> float:\n    return x * by\n",
    );
    git(&p.repo, &["add", "."]);
    git(&p.repo, &["commit", "-q", "-m", "scale, and add reordered"]);
    let out = p
        .cmd(&[
            "run",
            "test the change",
            "--base",
            "HEAD~1",
            "--pipeline",
            "targeted",
            "--layer",
            "L1",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let record = read_json(&p.session_dir(&id).join("behaviour/changes.json"));
    assert_eq!(
        record["added"],
        serde_json::json!(["calc.scale"]),
        "{record:#}"
    );
    assert!(record["compared"].as_u64().unwrap() > 0, "{record:#}");
    let problems = record["problems"].as_array().unwrap();
    assert!(
        problems
            .iter()
            .all(|p| !p.as_str().unwrap().contains("calc.scale")),
        "{record:#}"
    );
    let report = p.cmd(&["report", &id, "--format", "md"]).run();
    report.assert_code(0);
    assert!(
        report
            .stdout
            .contains("New in this change, so not compared with the base: calc.scale."),
        "{}",
        report.stdout
    );
}

/// What a command said: (it passed, its stdout and stderr).
fn outcome(cmd: &mut Command) -> (bool, String) {
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The fixture `<name>/base` with its `file` from `<name>/head` committed over it, run
/// change-scoped (targeted, against the commit before): the project, the session and its
/// behaviour record, once the summary says the change altered its two behaviours.
fn changed_run(name: &str, file: &str) -> (Project, String, serde_json::Value) {
    let p = Project::fixture(&format!("{name}/base"));
    std::fs::copy(
        fixtures().join(format!("{name}/head/{file}")),
        p.repo.join(file),
    )
    .unwrap();
    git(&p.repo, &["commit", "-q", "-am", "the change"]);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the change",
            "--base",
            "HEAD~1",
            "--pipeline",
            "targeted",
            "-y",
        ])
        .run();
    out.assert_code(0);
    assert!(
        out.stdout
            .contains("Your change altered 2 behaviours in 2 functions"),
        "{}",
        out.stdout
    );
    let id = out.session_id();
    let record = read_json(&p.session_dir(&id).join("behaviour/changes.json"));
    (p, id, record)
}

/// The record's change of `function`.
fn change_of(record: &serde_json::Value, function: &str) -> serde_json::Value {
    record["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["function"] == function)
        .unwrap_or_else(|| panic!("no change of {function}: {record:#}"))
        .clone()
}

/// The same in JavaScript: the label's regression and the fee, judged, and each side's test
/// delivered on demand, run by node's own runner from the project.
#[test]
fn a_javascript_change_shows_its_behaviour_changes_and_delivers_either_side() {
    let (p, id, record) = changed_run("js-change", "lib/pricing.js");
    let label = change_of(&record, "pricing.label");
    assert_eq!(label["verdict"], "likely_regression", "{label:#}");
    assert!(label["after"]
        .as_str()
        .unwrap()
        .starts_with("throws TypeError"));
    assert_eq!(
        change_of(&record, "pricing.totalPrice")["verdict"],
        "likely_intended"
    );
    // The old behaviour's test fails on HEAD; the new behaviour's pass.
    let node_test = |files: &[std::path::PathBuf]| {
        outcome(
            Command::new("node")
                .arg("--test")
                .args(files)
                .current_dir(&p.repo),
        )
    };
    let before: Vec<_> = walk(&p.repo);
    p.cmd(&["apply", &id, "--keep-old", label["id"].as_str().unwrap()])
        .run()
        .assert_code(0);
    let old: Vec<_> = walk(&p.repo)
        .into_iter()
        .filter(|f| !before.contains(f) && f.to_string_lossy().contains("_old."))
        .collect();
    assert_eq!(old.len(), 1, "{old:?}");
    let (ok, log) = node_test(&old);
    assert!(!ok && log.contains("TypeError"), "{log}");
    p.cmd(&["apply", &id, "--keep-new"]).run().assert_code(0);
    let new: Vec<_> = walk(&p.repo)
        .into_iter()
        .filter(|f| f.to_string_lossy().contains("_new."))
        .collect();
    assert_eq!(new.len(), 2, "{new:?}");
    let (ok, log) = node_test(&new);
    assert!(ok, "{log}");
}

/// The same in Rust: the base's crate is built beside HEAD's in the search's target folder
/// (never mistaken for it), the label's new panic is a likely regression, the fee is intended,
/// and `cargo test` runs either side's test as delivered.
#[test]
fn a_rust_change_shows_its_behaviour_changes_and_delivers_either_side() {
    if !has_llvm_cov() {
        eprintln!("cargo-llvm-cov (and llvm-tools) is not installed: the Rust generator needs it");
        return;
    }
    let (p, id, record) = changed_run("rust-change", "src/pricing.rs");
    let label = change_of(&record, "pricing::label");
    assert_eq!(label["verdict"], "likely_regression", "{label:#}");
    assert_eq!(label["before"], "returns \"\"", "{label:#}");
    assert!(label["after"].as_str().unwrap().starts_with("panics: "));
    let fee = change_of(&record, "pricing::total_price");
    assert_eq!(fee["verdict"], "likely_intended", "{fee:#}");
    assert!(
        record["unchanged_tests"].as_u64().unwrap() >= 2,
        "{record:#}"
    );
    let target = tempfile::tempdir().unwrap();
    let cargo_test = || {
        outcome(
            Command::new("cargo")
                .args(["test", "--offline", "-q"])
                .current_dir(&p.repo)
                .env("CARGO_TARGET_DIR", target.path())
                .env("RUST_BACKTRACE", "0"),
        )
    };
    p.cmd(&["apply", &id, "--keep-old", label["id"].as_str().unwrap()])
        .run()
        .assert_code(0);
    let (ok, log) = cargo_test();
    assert!(!ok && log.contains("out of bounds"), "{log}");
    for f in walk(&p.repo.join("tests")) {
        if f.to_string_lossy().contains("_old.") {
            std::fs::remove_file(f).unwrap();
        }
    }
    p.cmd(&["apply", &id, "--keep-new"]).run().assert_code(0);
    let (ok, log) = cargo_test();
    assert!(ok, "{log}");
}

/// The same in Go: a function new in HEAD is never compared, the label's new panic is a likely
/// regression, the fee is intended, and `go test` runs either side's test as delivered, in the
/// package it tests.
#[test]
fn a_go_change_shows_its_behaviour_changes_and_delivers_either_side() {
    if Command::new("go").arg("version").output().is_err() {
        eprintln!("go is not installed: the Go generator needs it");
        return;
    }
    let (p, id, record) = changed_run("go-change", "pricing/pricing.go");
    let label = change_of(&record, "pricing.Label");
    assert_eq!(label["verdict"], "likely_regression", "{label:#}");
    assert_eq!(label["input"], "pricing.Label(\"\")", "{label:#}");
    assert_eq!(label["before"], "returns \"?\"", "{label:#}");
    assert!(label["after"]
        .as_str()
        .unwrap()
        .starts_with("panics: runtime error: index out of range"));
    assert_eq!(
        change_of(&record, "pricing.TotalPrice")["verdict"],
        "likely_intended"
    );
    assert!(
        record["unchanged_tests"].as_u64().unwrap() >= 2,
        "{record:#}"
    );
    // go with a build cache of the test's own.
    let go_test = || {
        outcome(
            Command::new("go")
                .args(["test", "-count=1", "./..."])
                .current_dir(&p.repo)
                .env("GOCACHE", p.tmp.path().join("user-go-cache"))
                .env("GOFLAGS", "-modcacherw")
                .env("GOPROXY", "off"),
        )
    };
    p.cmd(&["apply", &id, "--keep-old", label["id"].as_str().unwrap()])
        .run()
        .assert_code(0);
    let written = Path::new(label["old_file"].as_str().unwrap()).file_name();
    let old = p.repo.join("pricing").join(written.unwrap());
    assert!(old.is_file(), "{:?}", walk(&p.repo));
    let (ok, log) = go_test();
    assert!(!ok && log.contains("index out of range"), "{log}");
    std::fs::remove_file(old).unwrap();
    p.cmd(&["apply", &id, "--keep-new"]).run().assert_code(0);
    let (ok, log) = go_test();
    assert!(ok, "{log}");
}
