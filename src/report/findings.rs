//! The findings section: defect patterns over every failing test record, code defects (latest
//! record per test, and test files that do not load because of the project's code), flaky and
//! quarantined tests, load errors, the generator's findings, and the rows of results.csv.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::load::{is_failing, str_of, Run};
use super::model::{
    CodeDefect, CsvRow, DefectPattern, Findings, FlakyTest, LoadErrorFinding, QuarantinedTest,
};
use crate::tasks::TaskGraph;

/// What the findings section computes.
pub(super) struct FindingsSection {
    pub defect_patterns: Vec<DefectPattern>,
    pub failures: FailureCounts,
    pub findings: Findings,
    pub flaky_tests: Vec<FlakyTest>,
    pub quarantined: Vec<QuarantinedTest>,
    /// Generator calls the sandbox stopped (the sandbox section's list).
    pub blocked: Vec<Value>,
    /// Every distinct test id of every run.
    pub test_ids: BTreeSet<String>,
    pub rows: Vec<CsvRow>,
}

/// Failing test records (failed/error) of every run, for the score and confidence.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct FailureCounts {
    pub failing: usize,
    /// With a classification.
    pub classified: usize,
    /// With a classification and an evidence location.
    pub diagnosed: usize,
    /// Classified env_issue.
    pub env_failures: usize,
}

pub fn pattern_severity(count: usize) -> &'static str {
    match count {
        c if c >= 3 => "HIGH",
        2 => "MEDIUM",
        _ => "LOW",
    }
}

/// Computes the findings from the run records and the generator's task outcomes in tasks.json;
/// `final_runs` (from the layers section) says which load errors still hold.
pub(super) fn findings(
    runs: &[Run],
    graph: &TaskGraph,
    generator: &str,
    final_runs: &[&Run],
) -> FindingsSection {
    let (defect_patterns, failures) = defect_patterns(runs);
    let mut records = test_records(runs);
    let load_errors =
        load_error_findings(records.load_errors, final_runs, &mut records.code_defects);
    let generated = generator_findings(graph, generator);
    FindingsSection {
        defect_patterns,
        failures,
        findings: Findings {
            code_defects: records.code_defects.into_values().collect(),
            contract_findings: generated.contract_findings,
            side_effects: generated.side_effects,
            skipped_examples: generated.skipped_examples,
            load_errors,
        },
        flaky_tests: records.flaky.into_values().collect(),
        quarantined: records.quarantined.into_values().collect(),
        blocked: generated.blocked,
        test_ids: records.test_ids,
        rows: records.rows,
    }
}

/// Every failing test record of every run grouped by `classification:error`, most frequent
/// first, with the counts the score and confidence take.
fn defect_patterns(runs: &[Run]) -> (Vec<DefectPattern>, FailureCounts) {
    let mut patterns: BTreeMap<String, (usize, BTreeSet<String>, BTreeSet<String>)> =
        BTreeMap::new();
    let mut n = FailureCounts::default();
    for r in runs {
        for t in r.tests().filter(|t| is_failing(t)) {
            n.failing += 1;
            let class = str_of(&t["classification"]);
            if class.is_some() {
                n.classified += 1;
                let loc = t["evidence"]["location"].as_str().unwrap_or("");
                if !loc.is_empty() {
                    n.diagnosed += 1;
                }
            }
            if class.as_deref() == Some("env_issue") {
                n.env_failures += 1;
            }
            let kind = match (class, str_of(&t["evidence"]["error"])) {
                (Some(c), Some(e)) => format!("{c}:{e}"),
                (Some(c), None) => c,
                _ => "unclassified".into(),
            };
            let e = patterns.entry(kind).or_default();
            e.0 += 1;
            e.1.insert(str_of(&t["id"]).unwrap_or_default());
            if let Some(f) = str_of(&t["file"]) {
                e.2.insert(f);
            }
        }
    }
    let mut out: Vec<DefectPattern> = patterns
        .into_iter()
        .map(|(kind, (count, tests, files))| DefectPattern {
            kind,
            count,
            severity: pattern_severity(count).into(),
            tests: tests.into_iter().collect(),
            files: files.into_iter().collect(),
        })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.kind.cmp(&b.kind)));
    (out, n)
}

/// What the run records say test by test; maps keyed by test id (load errors by
/// `layer/file`), so a later run's record replaces an earlier one.
struct TestRecords {
    code_defects: BTreeMap<String, CodeDefect>,
    flaky: BTreeMap<String, FlakyTest>,
    quarantined: BTreeMap<String, QuarantinedTest>,
    /// Each file's latest load error, with its raw record and round.
    load_errors: BTreeMap<String, (LoadErrorFinding, Value, u32)>,
    test_ids: BTreeSet<String>,
    rows: Vec<CsvRow>,
}

fn test_records(runs: &[Run]) -> TestRecords {
    let mut out = TestRecords {
        code_defects: BTreeMap::new(),
        flaky: BTreeMap::new(),
        quarantined: BTreeMap::new(),
        load_errors: BTreeMap::new(),
        test_ids: BTreeSet::new(),
        rows: Vec::new(),
    };
    for r in runs {
        let flaky_test = |id: &str| FlakyTest {
            test: id.into(),
            layer: r.layer.clone(),
            task_id: r.task_id.clone(),
        };
        for id in r.v["flaky"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            out.flaky.insert(id.to_string(), flaky_test(id));
        }
        for le in r.v["load_errors"].as_array().into_iter().flatten() {
            let Some(file) = str_of(&le["file"]) else {
                continue;
            };
            let finding = LoadErrorFinding {
                file: file.clone(),
                layer: r.layer.clone(),
                task_id: r.task_id.clone(),
                classification: str_of(&le["verdict"]["classification"]),
                reason: str_of(&le["verdict"]["reason"])
                    .or_else(|| str_of(&le["error"]).map(|e| e.lines().last().unwrap_or("").into()))
                    .unwrap_or_default(),
                location: str_of(&le["verdict"]["location"]),
                install: str_of(&le["verdict"]["install"]),
            };
            out.load_errors.insert(
                format!("{}/{file}", r.layer),
                (finding, le.clone(), r.round),
            );
        }
        for q in r.v["quarantined"].as_array().into_iter().flatten() {
            let Some(id) = str_of(&q["id"]) else { continue };
            // The first quarantine of a test keeps its reason.
            out.quarantined
                .entry(id.clone())
                .or_insert(QuarantinedTest {
                    test: id,
                    whole_file: q["file"].as_bool().unwrap_or(false),
                    reason: str_of(&q["reason"]).unwrap_or_else(|| "no reason recorded".into()),
                    task_id: str_of(&q["task_id"]).unwrap_or_else(|| r.task_id.clone()),
                });
        }
        for t in r.tests() {
            let id = str_of(&t["id"]).unwrap_or_default();
            out.test_ids.insert(id.clone());
            let status = str_of(&t["status"]).unwrap_or_default();
            if status == "flaky" {
                out.flaky.insert(id.clone(), flaky_test(&id));
            }
            if t["classification"].as_str() == Some("code_defect") && is_failing(t) {
                out.code_defects.insert(
                    id.clone(),
                    CodeDefect {
                        test: id.clone(),
                        layer: r.layer.clone(),
                        file: str_of(&t["file"]),
                        task_id: r.task_id.clone(),
                        round: r.round,
                        criticality: str_of(&t["criticality"]),
                        message: str_of(&t["message"]),
                        evidence: t["evidence"].clone(),
                    },
                );
            }
            out.rows.push(CsvRow {
                id,
                layer: r.layer.clone(),
                file: str_of(&t["file"]).unwrap_or_default(),
                status,
                classification: str_of(&t["classification"]).unwrap_or_default(),
                criticality: str_of(&t["criticality"]).unwrap_or_default(),
                duration: t["duration_s"].as_f64(),
                round: r.round,
            });
        }
    }
    out
}

/// The load errors that still hold at the end: files the layer's last run still holds in
/// quarantine (a file regenerated since and loading fine is no finding). One whose cause is the
/// project's own code (a syntax error there) is a code defect like any other.
fn load_error_findings(
    all: BTreeMap<String, (LoadErrorFinding, Value, u32)>,
    final_runs: &[&Run],
    code_defects: &mut BTreeMap<String, CodeDefect>,
) -> Vec<LoadErrorFinding> {
    let still_out = |layer: &str, file: &str| {
        final_runs.iter().any(|r| {
            r.layer == layer
                && r.v["quarantined"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|q| q["id"] == file)
        })
    };
    let mut out = Vec::new();
    for (key, (finding, record, round)) in all {
        if !still_out(&finding.layer, &finding.file) {
            continue;
        }
        if finding.classification.as_deref() == Some("code_defect") {
            let v = &record["verdict"];
            code_defects.insert(
                key,
                CodeDefect {
                    test: finding.file.clone(),
                    layer: finding.layer.clone(),
                    file: Some(finding.file.clone()),
                    task_id: finding.task_id.clone(),
                    round,
                    criticality: str_of(&v["criticality"]),
                    message: Some(finding.reason.clone()),
                    evidence: json!({"location": finding.location, "error": v["error"],
                                     "excerpt": v["excerpt"], "kind": "load_error"}),
                },
            );
        }
        out.push(finding);
    }
    out
}

/// The generator tasks' findings by kind, each (module, function, call) once, tagged with the
/// task that found it.
#[derive(Default)]
struct GeneratorFindings {
    contract_findings: Vec<Value>,
    side_effects: Vec<Value>,
    skipped_examples: Vec<Value>,
    /// What the sandbox stopped (env_issue in sessions older than sandbox_denied).
    blocked: Vec<Value>,
}

fn generator_findings(graph: &TaskGraph, generator: &str) -> GeneratorFindings {
    let mut out = GeneratorFindings::default();
    for t in graph.tasks.iter().filter(|t| t.owner == generator) {
        let list = t
            .outcome
            .as_ref()
            .and_then(|o| o.data.get("findings"))
            .and_then(Value::as_array);
        for f in list.into_iter().flatten() {
            let mut f = f.clone();
            if let Some(o) = f.as_object_mut() {
                o.insert("task_id".into(), json!(t.id));
            }
            let key = |v: &Value| {
                (
                    v["module"].clone(),
                    v["function"].clone(),
                    v["call"].clone(),
                )
            };
            let list = match f["kind"].as_str() {
                Some("env_issue" | "sandbox_denied") => &mut out.blocked,
                Some("side_effect") => &mut out.side_effects,
                Some("skipped_example") => &mut out.skipped_examples,
                _ => &mut out.contract_findings,
            };
            if !list.iter().any(|x| key(x) == key(&f)) {
                list.push(f);
            }
        }
    }
    out
}
