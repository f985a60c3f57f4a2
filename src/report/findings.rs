//! The findings section: defect patterns over every failing test record, code defects (latest
//! record per test, and test files that do not load because of the project's code), flaky and
//! quarantined tests, load errors, the generator's findings, and the rows of results.csv.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::load::Run;
use super::model::{
    CodeDefect, CsvRow, DefectPattern, Findings, FlakyTest, LoadErrorFinding, QuarantinedTest,
};
use crate::artifacts::{FindingCategory, LoadErrorRecord, RecordedStatus, TestRecord};
use crate::tasks::TaskGraph;
use crate::testing::classify::Classification;

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
    let mut generated = generator_findings(graph, generator);
    add_unsafe_tests(runs, &mut generated.side_effects);
    FindingsSection {
        defect_patterns,
        failures,
        findings: Findings {
            code_defects: one_per_cause(records.code_defects),
            contract_findings: generated.contract_findings,
            side_effects: generated.side_effects,
            skipped_examples: generated.skipped_examples,
            review: generated.review,
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
        for t in r.tests().filter(|t| t.status.is_failing()) {
            n.failing += 1;
            let class = t.classification.map(Classification::as_str);
            if class.is_some() {
                n.classified += 1;
                let loc = t.evidence.as_ref().and_then(|e| e.location.as_deref());
                if !loc.unwrap_or("").is_empty() {
                    n.diagnosed += 1;
                }
            }
            if t.classification == Some(Classification::EnvIssue) {
                n.env_failures += 1;
            }
            let kind = match (class, t.evidence.as_ref().and_then(|e| e.error.as_deref())) {
                (Some(c), Some(e)) => format!("{c}:{e}"),
                (Some(c), None) => c.to_string(),
                _ => "unclassified".into(),
            };
            let e = patterns.entry(kind).or_default();
            e.0 += 1;
            e.1.insert(t.id.clone());
            if let Some(f) = &t.file {
                e.2.insert(f.clone());
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
    load_errors: BTreeMap<String, (LoadErrorFinding, LoadErrorRecord, u32)>,
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
        for id in r.record.flaky() {
            out.flaky.insert(id.clone(), flaky_test(id));
        }
        for le in r.record.load_errors() {
            if le.file.is_empty() {
                continue;
            }
            let verdict = le.verdict.as_ref();
            let finding = LoadErrorFinding {
                file: le.file.clone(),
                layer: r.layer.clone(),
                task_id: r.task_id.clone(),
                classification: verdict
                    .and_then(|v| v.classification)
                    .map(|c| c.as_str().to_string()),
                reason: verdict
                    .map(|v| v.reason.clone())
                    .filter(|r| !r.is_empty())
                    .unwrap_or_else(|| le.error.lines().last().unwrap_or("").into()),
                location: verdict.and_then(|v| v.location.clone()),
                install: verdict.and_then(|v| v.install.clone()),
            };
            out.load_errors.insert(
                format!("{}/{}", r.layer, le.file),
                (finding, le.clone(), r.round),
            );
        }
        for q in r.record.quarantined().iter().filter(|q| !q.id.is_empty()) {
            // The first quarantine of a test keeps its reason.
            out.quarantined
                .entry(q.id.clone())
                .or_insert(QuarantinedTest {
                    test: q.id.clone(),
                    whole_file: q.file,
                    reason: Some(q.reason.clone())
                        .filter(|r| !r.is_empty())
                        .unwrap_or_else(|| "no reason recorded".into()),
                    task_id: Some(q.task_id.clone())
                        .filter(|t| !t.is_empty())
                        .unwrap_or_else(|| r.task_id.clone()),
                });
        }
        for t in r.tests() {
            let id = t.id.clone();
            out.test_ids.insert(id.clone());
            if t.status == RecordedStatus::Flaky {
                out.flaky.insert(id.clone(), flaky_test(&id));
            }
            if t.classification == Some(Classification::CodeDefect) && t.status.is_failing() {
                out.code_defects.insert(
                    id.clone(),
                    CodeDefect {
                        test: id.clone(),
                        layer: r.layer.clone(),
                        file: t.file.clone(),
                        task_id: r.task_id.clone(),
                        round: r.round,
                        criticality: criticality_of(t),
                        criticality_rule: criticality_rule(t),
                        hits: 1,
                        same_cause: Vec::new(),
                        suspects: Vec::new(),
                        message: t.message.clone(),
                        evidence: serde_json::to_value(&t.evidence).unwrap_or_default(),
                    },
                );
            }
            out.rows.push(CsvRow {
                id,
                layer: r.layer.clone(),
                file: t.file.clone().unwrap_or_default(),
                status: status_word(t.status),
                classification: t
                    .classification
                    .map(|c| c.as_str().to_string())
                    .unwrap_or_default(),
                criticality: criticality_of(t).unwrap_or_default(),
                duration: t.duration_s,
                round: r.round,
                ..CsvRow::default()
            });
        }
    }
    out
}

/// One code defect per cause: failing tests whose exception has the same type and was raised at
/// the same code location are one defect, shown by its shortest test, with the count of tests
/// that hit it. Failures without a location (or assertion failures, whose location is the
/// test's own line) stay one per test.
fn one_per_cause(defects: BTreeMap<String, CodeDefect>) -> Vec<CodeDefect> {
    let mut causes: BTreeMap<(String, String), Vec<CodeDefect>> = BTreeMap::new();
    for (id, d) in defects {
        let location = d.evidence["location"].as_str().unwrap_or("").to_string();
        let error = d.evidence["error"].as_str().unwrap_or("").to_string();
        let key = if location.is_empty() {
            (id, String::new())
        } else {
            (location, error)
        };
        causes.entry(key).or_default().push(d);
    }
    causes
        .into_values()
        .map(|mut group| {
            group.sort_by(|a, b| a.test.len().cmp(&b.test.len()).then(a.test.cmp(&b.test)));
            let mut first = group.remove(0);
            first.hits = group.len() + 1;
            first.same_cause = group.into_iter().map(|d| d.test).collect();
            first
        })
        .collect()
}

/// Each code defect's likely location from the session's fault localisation, when it ran: the
/// top three lines of the defect's test (or of another test with the same cause).
pub(super) fn add_suspects(defects: &mut [CodeDefect], session: &std::path::Path) {
    let Ok(found) = crate::util::read_json::<crate::artifacts::LocalisationRecord>(
        &session.join(crate::artifacts::LOCALISATION_FILE),
    ) else {
        return;
    };
    for d in defects.iter_mut() {
        let tests: Vec<&String> = std::iter::once(&d.test).chain(&d.same_cause).collect();
        if let Some(t) = found.tests.iter().find(|t| tests.contains(&&t.test)) {
            d.suspects = t
                .suspects
                .iter()
                .take(3)
                .map(|s| format!("{} ({:.2})", s.location, s.score))
                .collect();
        }
    }
}

/// The seed's criticality rules, as the report states the one that decided.
fn criticality_rule(t: &TestRecord) -> Option<String> {
    let raised_in_code = t
        .evidence
        .as_ref()
        .is_some_and(|e| e.reason.starts_with("the code under test raised"));
    let rule = match t.criticality?.as_str() {
        "high" if raised_in_code => {
            "high: the code crashes on input its tests call its public API with"
        }
        "high" => {
            "high: the code returns a wrong result on input its tests call its public API with"
        }
        "medium" => {
            "medium: the code drifts from a contract it states (a docstring, an annotation)"
        }
        _ => "low: cosmetic (a message, a format), or a failure only some runs show",
    };
    Some(rule.into())
}

/// The criticality of a judged test, as the report words it.
fn criticality_of(t: &TestRecord) -> Option<String> {
    t.criticality.map(|c| c.as_str().to_string())
}

/// The status column of results.csv; empty for a status this version does not know.
fn status_word(s: RecordedStatus) -> String {
    match s {
        RecordedStatus::Unknown => String::new(),
        known => known.as_str().to_string(),
    }
}

/// The load errors that still hold at the end: files the layer's last run still holds in
/// quarantine (a file regenerated since and loading fine is no finding). One whose cause is the
/// project's own code (a syntax error there) is a code defect like any other.
fn load_error_findings(
    all: BTreeMap<String, (LoadErrorFinding, LoadErrorRecord, u32)>,
    final_runs: &[&Run],
    code_defects: &mut BTreeMap<String, CodeDefect>,
) -> Vec<LoadErrorFinding> {
    let still_out = |layer: &str, file: &str| {
        final_runs
            .iter()
            .any(|r| r.layer == layer && r.record.quarantined().iter().any(|q| q.id == file))
    };
    let mut out = Vec::new();
    for (key, (finding, record, round)) in all {
        if !still_out(&finding.layer, &finding.file) {
            continue;
        }
        if finding.classification.as_deref() == Some("code_defect") {
            let v = record.verdict.clone().unwrap_or_default();
            code_defects.insert(
                key,
                CodeDefect {
                    test: finding.file.clone(),
                    layer: finding.layer.clone(),
                    file: Some(finding.file.clone()),
                    task_id: finding.task_id.clone(),
                    round,
                    criticality: v.criticality.map(|c| c.as_str().to_string()),
                    criticality_rule: Some(
                        "high: the project's own code does not load, so nothing of it can run"
                            .into(),
                    ),
                    hits: 1,
                    same_cause: Vec::new(),
                    suspects: Vec::new(),
                    message: Some(finding.reason.clone()),
                    evidence: json!({"location": finding.location, "error": v.error,
                                     "excerpt": v.excerpt, "kind": "load_error"}),
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
    review: Vec<Value>,
    /// What the sandbox stopped (env_issue in sessions older than sandbox_denied).
    blocked: Vec<Value>,
}

/// A contract finding joins the one of the same function, kind and exception type: the
/// shortest call shows it, `hits` counts the calls.
fn add_contract_finding(list: &mut Vec<Value>, mut f: Value) {
    let exception = |v: &Value| -> String {
        let actual = v["actual"].as_str().unwrap_or("");
        actual
            .split([':', '('])
            .next()
            .unwrap_or("")
            .trim()
            .to_string()
    };
    let cause = |v: &Value| {
        (
            v["module"].clone(),
            v["function"].clone(),
            v["kind"].clone(),
            exception(v),
        )
    };
    let call_len = |v: &Value| v["call"].as_str().map_or(usize::MAX, str::len);
    match list.iter_mut().find(|x| cause(x) == cause(&f)) {
        Some(same) => {
            let hits = same["hits"].as_u64().unwrap_or(1) + 1;
            if call_len(&f) < call_len(same) {
                *same = f;
            }
            same["hits"] = json!(hits);
        }
        None => {
            f["hits"] = json!(1);
            list.push(f);
        }
    }
}

/// The tests the executor took out as unsafe (the effect audit or the file-system watch saw
/// them change something outside their own folders) are side effects too: each once, named by
/// the test and what it did.
fn add_unsafe_tests(runs: &[Run], side_effects: &mut Vec<Value>) {
    for r in runs {
        for q in r.record.quarantined() {
            let Some(what) = q.unsafe_effect.as_deref().filter(|w| !w.is_empty()) else {
                continue;
            };
            let file = crate::testing::effects::file_of(&q.id);
            let entry = json!({
                "kind": "side_effect",
                "module": format!("{}/{file}", r.layer),
                "function": q.id,
                "call": q.id,
                "actual": what,
                "found_by": "executor",
                "task_id": if q.task_id.is_empty() { &r.task_id } else { &q.task_id },
            });
            if !side_effects
                .iter()
                .any(|s| s["function"] == entry["function"] && s["actual"] == entry["actual"])
            {
                side_effects.push(entry);
            }
        }
    }
}

fn generator_findings(graph: &TaskGraph, generator: &str) -> GeneratorFindings {
    let mut out = GeneratorFindings::default();
    for t in graph.tasks.iter().filter(|t| t.owner == generator) {
        let list = t.outcome.as_ref().map(|o| o.findings());
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
            let list = match FindingCategory::of_kind(f["kind"].as_str().unwrap_or("")) {
                FindingCategory::Blocked => &mut out.blocked,
                FindingCategory::SideEffect => &mut out.side_effects,
                FindingCategory::SkippedExample => &mut out.skipped_examples,
                FindingCategory::Review => &mut out.review,
                FindingCategory::Contract => &mut out.contract_findings,
            };
            if matches!(
                FindingCategory::of_kind(f["kind"].as_str().unwrap_or("")),
                FindingCategory::Contract
            ) {
                add_contract_finding(list, f);
            } else if !list.iter().any(|x| key(x) == key(&f)) {
                list.push(f);
            }
        }
    }
    out
}
