//! The requirements traceability section, for sessions planned with scenarios
//! (`<session>/scenarios.csv`): every acceptance criterion of the `REQ-*.md` files, the scenarios
//! planned for it, their test files and the last result of those tests, with a verdict per
//! criterion. Scenarios of the other routes (coverage gaps, code boundaries, defects) are listed
//! by their reference. None when the session has no scenarios.csv.
//!
//! A scenario's last result is that of its tests in the last run record holding any of them (a
//! test belongs to a scenario when its file is the scenario's `test_file`, or when its name or
//! file carries the scenario's number, `at_001` / `AT-001`); without one, the lifecycle columns
//! the executor filled in scenarios.csv. The same match gives results.csv its scenario columns.
//!
//! The criteria come from the requirement files (the spec folder named by session.json's
//! `controls.spec_dir`, else the repository) when they can be read, else from the scenarios'
//! `req_ref` alone.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use serde_json::Value;

use super::load::Run;
use super::model::{
    CriteriaFrom, CsvRow, ScenarioStatus, TraceSummary, Traceability, TracedCriterion,
    TracedScenario, Verdict,
};
use crate::scenario::plan::{self, Scenario};
use crate::scenario::req;
use crate::session::SessionDir;
use crate::testing::classify::Classification;

/// The session's scenarios.csv, when it has one; one that cannot be read is a line of Missing.
pub(super) fn read_plan(session: &SessionDir, missing: &mut Vec<String>) -> Option<Vec<Scenario>> {
    let path = session.root.join(plan::FILE);
    if !path.exists() {
        return None;
    }
    match plan::read_csv(&path) {
        Ok(rows) => Some(rows),
        Err(e) => {
            let root = format!("{}/", session.root.display());
            missing.push(format!(
                "{} cannot be read, so there is no traceability section: {}",
                plan::FILE,
                e.to_string().replace(&root, "")
            ));
            None
        }
    }
}

/// The section, from the plan, the run records and the requirement files under `repo`.
pub(super) fn traceability(
    session: &SessionDir,
    repo: Option<&Path>,
    scenarios: &[Scenario],
    runs: &[Run],
) -> Traceability {
    let matcher = Matcher::new(scenarios);
    let results = last_results(runs, &matcher);
    let traced: Vec<TracedScenario> = scenarios
        .iter()
        .zip(results)
        .map(|(s, r)| traced(s, r))
        .collect();

    let mut notes = Vec::new();
    let (criteria_from, mut criteria) = match requirement_files(session, repo) {
        Ok(reqs) => (
            CriteriaFrom::Requirements,
            reqs.iter()
                .flat_map(|r| {
                    r.criteria.iter().map(|c| TracedCriterion {
                        requirement: r.id.clone(),
                        requirement_title: Some(r.title.clone()),
                        criterion: c.id.clone(),
                        text: Some(c.text.clone()),
                        verdict: Verdict::NoScenario,
                        scenarios: Vec::new(),
                    })
                })
                .collect(),
        ),
        Err(why) => {
            notes.push(format!(
                "{why}; the criteria are the scenarios' req_ref alone"
            ));
            (CriteriaFrom::Scenarios, Vec::new())
        }
    };

    let mut other_scenarios = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    // Each criterion by (requirement, criterion), upper-cased, once: a scan per scenario made
    // the section quadratic (100,000 criteria took minutes). The first of two equal keys wins,
    // as the scan had it.
    let key = |requirement: &str, criterion: &str| {
        (
            requirement.to_ascii_uppercase(),
            criterion.to_ascii_uppercase(),
        )
    };
    let mut index: HashMap<(String, String), usize> = HashMap::with_capacity(criteria.len());
    for (i, c) in criteria.iter().enumerate() {
        index.entry(key(&c.requirement, &c.criterion)).or_insert(i);
    }
    for s in traced {
        let refs = spec_refs(&s.req_ref);
        if refs.is_empty() {
            other_scenarios.push(s);
            continue;
        }
        let last = refs.len() - 1;
        let mut s = Some(s);
        for (n, (requirement, criterion)) in refs.into_iter().enumerate() {
            let at = *index
                .entry(key(&requirement, &criterion))
                .or_insert_with(|| {
                    if criteria_from == CriteriaFrom::Requirements {
                        unknown.push(format!("{requirement}:{criterion}"));
                    }
                    criteria.push(TracedCriterion {
                        requirement,
                        requirement_title: None,
                        criterion,
                        text: None,
                        verdict: Verdict::NoScenario,
                        scenarios: Vec::new(),
                    });
                    criteria.len() - 1
                });
            // The last reference takes the scenario itself; the others a copy.
            let scenario = if n == last { s.take() } else { s.clone() };
            criteria[at].scenarios.extend(scenario);
        }
    }
    if !unknown.is_empty() {
        notes.push(format!(
            "named by scenarios but not in the requirement files: {}",
            unknown.join(", ")
        ));
    }
    if criteria_from == CriteriaFrom::Scenarios {
        criteria.sort_by(|a, b| {
            natural(&a.requirement, &b.requirement)
                .then_with(|| natural(&a.criterion, &b.criterion))
        });
    }
    for c in &mut criteria {
        c.scenarios.sort_by(|a, b| natural(&a.id, &b.id));
        c.verdict = verdict(&c.scenarios);
    }
    // Stable: requirement and criterion order within each group.
    criteria.sort_by_key(|c| {
        let passing = c
            .scenarios
            .iter()
            .any(|s| s.status == ScenarioStatus::Passed);
        (passing, c.verdict.rank())
    });
    other_scenarios.sort_by(|a, b| {
        a.req_ref
            .cmp(&b.req_ref)
            .then_with(|| natural(&a.id, &b.id))
    });

    let mut summary = TraceSummary {
        criteria: criteria.len(),
        ..TraceSummary::default()
    };
    let mut requirements: Vec<String> = criteria
        .iter()
        .map(|c| c.requirement.to_ascii_uppercase())
        .collect();
    requirements.sort();
    requirements.dedup();
    summary.requirements = requirements.len();
    for c in &criteria {
        *match c.verdict {
            Verdict::Covered => &mut summary.covered,
            Verdict::Violated => &mut summary.violated,
            Verdict::Failing => &mut summary.failing,
            Verdict::NotRun => &mut summary.not_run,
            Verdict::NoScenario => &mut summary.no_scenario,
        } += 1;
    }
    Traceability {
        criteria_from,
        notes,
        summary,
        criteria,
        other_scenarios,
    }
}

/// Fills the scenario columns of each test row whose test belongs to a scenario.
pub(super) fn annotate_rows(rows: &mut [CsvRow], scenarios: &[Scenario]) {
    let matcher = Matcher::new(scenarios);
    for row in rows {
        let file = Some(row.file.as_str()).filter(|f| !f.is_empty());
        if let Some(i) = matcher.find(&row.layer, file, &row.id) {
            let s = &scenarios[i];
            row.name = s.name.clone();
            row.priority = s.priority.as_str().to_string();
            row.category = s.category.clone();
            row.target_file = s.target_file.clone();
            row.red_result = s.red_result.clone();
            row.findings = s.findings.clone();
        }
    }
}

fn verdict(scenarios: &[TracedScenario]) -> Verdict {
    let failed = |s: &&TracedScenario| s.status == ScenarioStatus::Failed;
    if scenarios.is_empty() {
        Verdict::NoScenario
    } else if scenarios
        .iter()
        .filter(failed)
        .any(|s| s.classification.as_deref() == Some("code_defect"))
    {
        Verdict::Violated
    } else if scenarios.iter().any(|s| s.status == ScenarioStatus::Passed) {
        Verdict::Covered
    } else if scenarios.iter().any(|s| failed(&s)) {
        Verdict::Failing
    } else {
        Verdict::NotRun
    }
}

/// The requirement files, or why there are none to use.
fn requirement_files(
    session: &SessionDir,
    repo: Option<&Path>,
) -> Result<Vec<req::Requirement>, NoRequirements> {
    let Some(repo) = repo else {
        return Err(NoRequirements::NoRepository);
    };
    let spec_dir = spec_dir(session);
    match req::load_dir(repo, spec_dir.as_deref()) {
        Ok(reqs) if reqs.is_empty() => Err(NoRequirements::None { spec_dir }),
        Ok(reqs) => Ok(reqs),
        // Named relative to the repository: the report shows no path of this machine.
        Err(e) => Err(NoRequirements::Unusable(
            e.to_string().replace(&format!("{}/", repo.display()), ""),
        )),
    }
}

/// Why the requirement files are not used (the criteria then come from the scenarios).
#[derive(Debug, thiserror::Error)]
enum NoRequirements {
    #[error("session.json names no repository to read REQ-*.md files from")]
    NoRepository,
    #[error("no REQ-*.md file in {}", spec_dir.as_deref().map_or("the repository".into(), |d| d.display().to_string()))]
    None { spec_dir: Option<PathBuf> },
    #[error("the requirement files cannot be used ({0})")]
    Unusable(String),
}

/// session.json's `controls.spec_dir`, read as plain JSON so that sessions written before (or
/// without) the field read the same.
fn spec_dir(session: &SessionDir) -> Option<PathBuf> {
    let state: Value = crate::util::read_json(&session.session_json()).ok()?;
    state
        .pointer("/controls/spec_dir")
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty())
        .map(PathBuf::from)
}

static SPEC_REF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(REQ-[^:\s;,]+)\s*:\s*(AC-\d+(?:\.\d+)*)$").expect("static regex")
});

/// The `(REQ-001, AC-1)` pairs of a `req_ref` (`;`-separated); empty for the other routes.
fn spec_refs(req_ref: &str) -> Vec<(String, String)> {
    req_ref
        .split(';')
        .filter_map(|part| {
            let c = SPEC_REF.captures(part.trim())?;
            Some((c[1].to_ascii_uppercase(), c[2].to_ascii_uppercase()))
        })
        .collect()
}

/// `REQ-2` before `REQ-10`: the first number, then the text.
fn natural(a: &str, b: &str) -> Ordering {
    let key = |s: &str| {
        let digits: String = s
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(|c| c.is_ascii_digit())
            .collect();
        (
            digits.parse::<u64>().unwrap_or(u64::MAX),
            s.to_ascii_uppercase(),
        )
    };
    key(a).cmp(&key(b))
}

/// A scenario's number carried by a test's name or file: `test_at_001_…`, `AT-001 …`,
/// `at-001-….test.js`.
static SCENARIO_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:^|[^a-z0-9])at[-_](\d+)(?:[^0-9]|$)").expect("static regex")
});

pub(super) fn number_in(text: &str) -> Option<u64> {
    SCENARIO_NUMBER
        .captures(text)
        .and_then(|c| c[1].parse().ok())
}

/// Which scenario a test (or a test file) belongs to.
struct Matcher<'a> {
    scenarios: &'a [Scenario],
    by_file: HashMap<String, usize>,
    /// A test file's last path component -> the scenarios whose file has it, in plan order.
    by_name: HashMap<String, Vec<usize>>,
    by_number: HashMap<u64, usize>,
}

/// `tests/L1-unit/test_a.py` -> `test_a.py`.
fn last_component(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn norm(path: &str) -> String {
    let p = path.trim().replace('\\', "/");
    p.strip_prefix("./").unwrap_or(&p).to_string()
}

impl<'a> Matcher<'a> {
    fn new(scenarios: &'a [Scenario]) -> Matcher<'a> {
        let mut by_file = HashMap::new();
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_number = HashMap::new();
        for (i, s) in scenarios.iter().enumerate() {
            if !s.test_file.trim().is_empty() {
                let file = norm(&s.test_file);
                by_name
                    .entry(last_component(&file).to_string())
                    .or_default()
                    .push(i);
                by_file.entry(file).or_insert(i);
            }
            if let Some(n) = s.id.strip_prefix("AT-").and_then(|n| n.parse::<u64>().ok()) {
                by_number.entry(n).or_insert(i);
            }
        }
        Matcher {
            scenarios,
            by_file,
            by_name,
            by_number,
        }
    }

    /// The scenario of a test of `layer` in `file` (relative to the layer's test folder, or to
    /// the session) named `id`.
    fn find(&self, layer: &str, file: Option<&str>, id: &str) -> Option<usize> {
        if let Some(file) = file.map(norm).filter(|f| !f.is_empty()) {
            let in_layer = format!("tests/{layer}/{file}");
            if let Some(&i) = self
                .by_file
                .get(&file)
                .or_else(|| self.by_file.get(&in_layer))
            {
                return Some(i);
            }
            // A file named relative to another folder: the one scenario whose file ends so
            // (among those of the same file name, not every scenario: once per test).
            let suffix = format!("/{file}");
            let ends: Vec<usize> = self
                .by_name
                .get(last_component(&file))
                .into_iter()
                .flatten()
                .copied()
                .filter(|&i| norm(&self.scenarios[i].test_file).ends_with(&suffix))
                .collect();
            if let [i] = ends[..] {
                return Some(i);
            }
        }
        number_in(id)
            .or_else(|| file.and_then(number_in))
            .and_then(|n| self.by_number.get(&n).copied())
    }
}

/// What one run says of one scenario's tests.
#[derive(Debug, Clone, Default)]
struct RunResult {
    file: String,
    passed: bool,
    flaky: bool,
    skipped: bool,
    failed: bool,
    /// The worst classification of the failing tests.
    classification: Option<Classification>,
}

impl RunResult {
    fn fail(&mut self, c: Option<Classification>) {
        let rank = |c: Option<Classification>| match c {
            Some(Classification::CodeDefect) => 0,
            Some(Classification::TestDefect) => 1,
            Some(Classification::EnvIssue) => 2,
            Some(Classification::SandboxDenied) => 3,
            None => 4,
        };
        if !self.failed || rank(c) < rank(self.classification) {
            self.classification = c;
        }
        self.failed = true;
    }
}

/// Per scenario, the result of the last run record holding any of its tests (or a load error of
/// its test file).
fn last_results(runs: &[Run], matcher: &Matcher) -> Vec<Option<RunResult>> {
    use crate::artifacts::RecordedStatus as S;
    let mut last: Vec<Option<RunResult>> = vec![None; matcher.scenarios.len()];
    for run in runs {
        let mut this: BTreeMap<usize, RunResult> = BTreeMap::new();
        fn entry<'m>(
            this: &'m mut BTreeMap<usize, RunResult>,
            i: usize,
            file: &str,
        ) -> &'m mut RunResult {
            this.entry(i).or_insert_with(|| RunResult {
                file: file.to_string(),
                ..RunResult::default()
            })
        }
        for t in run.tests() {
            let Some(i) = matcher.find(&run.layer, t.file.as_deref(), &t.id) else {
                continue;
            };
            let r = entry(&mut this, i, &run.file);
            match t.status {
                S::Passed => r.passed = true,
                S::Flaky => {
                    r.passed = true;
                    r.flaky = true;
                }
                S::Failed | S::Error => r.fail(t.classification),
                S::Skipped | S::Unknown => r.skipped = true,
            }
        }
        for le in run.record.load_errors() {
            if le.file.is_empty() {
                continue;
            }
            if let Some(i) = matcher.find(&run.layer, Some(&le.file), &le.file) {
                entry(&mut this, i, &run.file)
                    .fail(le.verdict.as_ref().and_then(|v| v.classification));
            }
        }
        for (i, r) in this {
            last[i] = Some(r);
        }
    }
    last
}

fn traced(s: &Scenario, result: Option<RunResult>) -> TracedScenario {
    let some = |v: &str| Some(v.trim().to_string()).filter(|v| !v.is_empty());
    let csv_failed = s.status.trim().eq_ignore_ascii_case("failed");
    let (status, classification, status_from, note) = match result {
        Some(r) if r.failed => (
            ScenarioStatus::Failed,
            r.classification
                .map(|c| c.as_str().to_string())
                .or_else(|| some(&s.classification).filter(|_| csv_failed)),
            Some(r.file),
            None,
        ),
        Some(r) if r.passed => (
            ScenarioStatus::Passed,
            None,
            Some(r.file),
            r.flaky.then(|| "flaky".to_string()),
        ),
        Some(r) => (
            ScenarioStatus::NotRun,
            None,
            Some(r.file),
            Some("skipped".into()),
        ),
        None => {
            let word = s.status.trim().to_ascii_lowercase();
            let from_csv = Some(plan::FILE.to_string());
            match word.as_str() {
                "passed" => (ScenarioStatus::Passed, None, from_csv, None),
                "failed" => (
                    ScenarioStatus::Failed,
                    some(&s.classification),
                    from_csv,
                    None,
                ),
                "blocked" => (
                    ScenarioStatus::NotRun,
                    None,
                    from_csv,
                    Some(match some(&s.error) {
                        Some(e) => format!("blocked: {e}"),
                        None => "blocked".into(),
                    }),
                ),
                "" => (ScenarioStatus::NotRun, None, None, Some("pending".into())),
                other => (ScenarioStatus::NotRun, None, None, Some(other.to_string())),
            }
        }
    };
    TracedScenario {
        id: s.id.clone(),
        name: s.name.clone(),
        layer: s.layer.clone(),
        priority: s.priority,
        req_ref: s.req_ref.clone(),
        test_file: s.test_file.clone(),
        status,
        classification,
        red_result: some(&s.red_result),
        status_from,
        note,
    }
}
