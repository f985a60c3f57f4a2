//! Verdicts a person can trust: a crash on an empty string is a code defect shown by the call
//! `f('')`; a crash on input of the wrong type, or outside the range a docstring states, is the
//! input's fault; a suspicious result is flagged for review instead of asserted; bug-free,
//! well-typed code gets no defect at all.

use crate::common::*;

#[test]
fn an_empty_string_crash_is_the_one_code_defect_and_ill_typed_or_clean_code_gets_none() {
    let p = Project::fixture("python-verdicts");
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the helpers",
            "--pipeline",
            "standard",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let report = p.cmd(&["report", &id, "--format", "json"]).run();
    report.assert_code(0);
    let report: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    let findings = &report["findings"];
    let contracts = findings["contract_findings"].as_array().unwrap();
    let defects = findings["code_defects"].as_array().unwrap();

    // The empty-string bug: found, shown by its shortest call, as a code defect.
    let empty = contracts
        .iter()
        .find(|f| f["function"] == "words.text.last_word")
        .unwrap_or_else(|| panic!("last_word('') not found: {findings}"));
    assert_eq!(empty["call"], "last_word('')", "{empty}");
    assert!(
        empty["actual"].as_str().unwrap().starts_with("IndexError"),
        "{empty}"
    );
    assert!(
        defects
            .iter()
            .any(|d| d["evidence"]["location"] == "words/text.py:6"),
        "{findings}"
    );

    // A negative total is flagged for review with its reason, not asserted.
    let review = findings["review"].as_array().unwrap();
    let negative = review
        .iter()
        .find(|f| f["function"] == "words.shop.line_total")
        .unwrap_or_else(|| panic!("no review flag: {findings}"));
    assert!(
        negative["actual"]
            .as_str()
            .unwrap()
            .contains("a negative total"),
        "{negative}"
    );

    // Nothing else: the ill-typed crash of digits (a float), grade's crash outside its
    // documented 0 to 100, and the clean functions.
    for f in contracts {
        assert_eq!(f["function"], "words.text.last_word", "{f}");
    }
    for d in defects {
        assert_eq!(d["evidence"]["location"], "words/text.py:6", "{d}");
    }

    // Applied, the defect's test is a strict xfail with the evidence: plain pytest from the
    // project's root passes, and nothing outside the tests' folder changed.
    p.cmd(&["apply", &id]).run().assert_code(0);
    let pytest = std::process::Command::new("python3")
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/team_testing",
        ])
        .current_dir(&p.repo)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("pytest is installed");
    let text = String::from_utf8_lossy(&pytest.stdout);
    assert!(pytest.status.success(), "{text}");
    assert!(text.contains("xfailed"), "{text}");
    // The fixture has no tests folder of its own: the applied one is all that is new.
    assert_eq!(git_status(&p.repo, false), "?? tests/");
    assert!(p.repo.join("tests/team_testing").is_dir());
}
