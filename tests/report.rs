//! The analyst's report on a real session of a project with a deliberate bug.

use crate::common::*;

#[test]
fn report_figures_come_from_the_results_and_the_bug_is_a_code_defect() {
    let p = Project::fixture("python-buggy");
    let roles = copy_roles(&p);
    // One run is what these tests look at: no GC rounds.
    let spec = one_round_spec(&p);
    let generated = fixtures().join("generated/python-buggy");
    let out = p
        .run_with_roles(&roles, "test pricing", "standard")
        .arg("--spec")
        .arg(&spec)
        .env("TT_FIXTURE_TESTS", generated.to_str().unwrap())
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let analysis = p.session_dir(&id).join("analysis");
    let report = read_json(&analysis.join("report.json"));
    assert_eq!(report["schema_version"], 1);

    // Every figure equals the executor's own record.
    let run = read_json(&p.session_dir(&id).join("results/run-001.json"));
    let md = std::fs::read_to_string(analysis.join("quality-report.md")).unwrap();
    let pass = format!("{:.1}%", run["pass_rate"].as_f64().unwrap() * 100.0);
    assert!(md.contains(&pass), "{pass} in\n{md}");

    // The deliberate bug is a code_defect with its evidence, in the report and for a tracker.
    let issues = std::fs::read_to_string(analysis.join("issues.jsonl")).unwrap();
    let defects: Vec<serde_json::Value> = issues
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        defects.iter().any(|d| d
            .to_string()
            .contains("test_two_items_cost_twice_the_unit_price")
            && d.to_string().contains("test_total.py:5")),
        "{issues}"
    );
    assert!(
        md.contains("test_two_items_cost_twice_the_unit_price"),
        "{md}"
    );

    // results.csv: a row per test of every run.
    let mut reader = csv::Reader::from_path(analysis.join("results.csv")).unwrap();
    let rows = reader.records().count();
    let tests: usize = std::fs::read_dir(p.session_dir(&id).join("results"))
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("run-") && n.ends_with(".json")
        })
        .map(|e| {
            read_json(&e.path())["tests"]
                .as_array()
                .map_or(0, |t| t.len())
        })
        .sum();
    assert_eq!(rows, tests);

    // The report command prints the same report, and the score is stable.
    let first = p.cmd(&["report", &id, "--format", "json"]).run();
    first.assert_code(0);
    let second = p.cmd(&["report", &id, "--format", "json"]).run();
    let a: serde_json::Value = serde_json::from_str(&first.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_str(&second.stdout).unwrap();
    assert_eq!(a["quality_score"], b["quality_score"]);
    assert_eq!(a["quality_score"], report["quality_score"]);
    let csv_out = p.cmd(&["report", &id, "--format", "csv"]).run();
    assert!(
        csv_out
            .stdout
            .starts_with("id,layer,file,status,classification,criticality,duration,round"),
        "{}",
        csv_out.stdout
    );
}
