//! The report's model: what report.json serializes (field order and serde attributes are its
//! format), plus the rows of results.csv. Computed by the section modules, written by `render`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::scenario::plan::Priority;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub session_id: String,
    /// What the change altered (`behaviour/changes.json`), when the session compared its
    /// change with the base.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behaviour: Option<crate::gen::behaviour::BehaviourReport>,
    pub repo: Option<String>,
    pub created_at: Option<String>,
    pub quality_score: f64,
    /// good, needs improvement, concerning; "not scored" when no layer had anything to test.
    pub band: String,
    /// False when every layer was not applicable: there is nothing to score, and the 0 is no
    /// verdict (trends leave such a session's score out).
    pub scored: bool,
    pub score: ScoreBreakdown,
    pub layers: Vec<LayerReport>,
    /// The project's own suite before any generated test, when the session ran it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineReport>,
    /// The project's dependencies could not be fetched before the sandbox: the command to run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_dependencies: Option<MissingDependencies>,
    /// The mutation analysis of the session's suites (`results/mutation.json`), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mutation: Option<crate::artifacts::MutationRecord>,
    /// The test-fix cycle (`iteration-state.json`), when the session ran one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_cycle: Option<super::fix_cycle::FixCycleReport>,
    /// Requirement -> criterion -> scenarios -> tests, when the session was planned with
    /// scenarios (scenarios.csv).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traceability: Option<Traceability>,
    pub defect_patterns: Vec<DefectPattern>,
    pub gc_effectiveness: Vec<GcEffect>,
    pub coverage_gaps: Vec<CoverageGap>,
    pub findings: Findings,
    pub sandbox: SandboxReport,
    pub added_roles: Vec<AddedRole>,
    pub flaky_tests: Vec<FlakyTest>,
    pub quarantined: Vec<QuarantinedTest>,
    pub confidence: Confidence,
    pub trends: Trends,
    pub recommendations: Vec<String>,
    pub missing: Vec<String>,
    pub runs: Vec<RunSummary>,
    /// One row per test of every run (results.csv).
    #[serde(skip)]
    pub rows: Vec<CsvRow>,
    /// Pass-rate gate the layers were judged with.
    #[serde(skip)]
    pub pass_rate_target: f64,
    #[serde(skip)]
    pub max_gc_rounds: u32,
}

/// The project's own tests, run once before generating.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BaselineReport {
    pub tests: u64,
    pub passed: u64,
    /// Existing tests that fail: reported, never removed.
    pub failing_tests: Vec<String>,
    /// Line coverage of the files in scope by the project's own tests.
    pub coverage: Option<f64>,
    pub layers: Vec<BaselineLayer>,
    /// Each file in scope: the project's own tests' coverage, and with the generated ones.
    pub files: Vec<crate::artifacts::FileChange>,
}

/// One layer's coverage by the project's own tests (before) and with its tests added (after).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BaselineLayer {
    pub layer: String,
    pub before: f64,
    pub after: f64,
    /// Tests in the layer's final run.
    pub new_tests: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScoreBreakdown {
    pub weights: BTreeMap<String, f64>,
    /// Mean over layers of min(1, final coverage / target); a layer with unknown coverage (or no
    /// target) contributes its final pass rate.
    pub coverage_achievement: f64,
    /// Mean final pass rate over layers.
    pub test_effectiveness: f64,
    /// The combined suite's mutation score (0..1) when mutation analysis ran; 0 with weight 0
    /// when it did not (`detection_measured` false).
    pub defect_detection: f64,
    /// 1 − rounds used / (max rounds × layers), clamped to 0..1.
    pub gc_efficiency: f64,
    pub gc_rounds_used: u32,
    pub gc_budget: u32,
    pub failing_tests: usize,
    pub classified_failing_tests: usize,
    /// Whether mutation analysis measured the detection term; without it the band is at best
    /// "unverified".
    pub detection_measured: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct RoundPoint {
    pub task_id: String,
    pub round: u32,
    pub status: String,
    pub pass_rate: Option<f64>,
    pub coverage: Option<f64>,
    pub run: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct LayerReport {
    pub layer: String,
    pub target: Option<f64>,
    /// Met, Below, or NotApplicable (no run: nothing for the layer to do; out of the score).
    pub gate: String,
    /// Why the layer had nothing to do, when it had not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
    /// Why its GC loop ended before its last round, below the gate ("plateau: +0.4 points …").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loop_stopped: Option<String>,
    pub final_pass_rate: Option<f64>,
    pub final_coverage: Option<f64>,
    pub gc_rounds_used: u32,
    pub history: Vec<RoundPoint>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DefectPattern {
    pub kind: String,
    pub count: usize,
    pub severity: String,
    pub tests: Vec<String>,
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GcEffect {
    pub layer: String,
    pub rounds_used: u32,
    pub initial_coverage: Option<f64>,
    pub final_coverage: Option<f64>,
    pub coverage_gained: Option<f64>,
    pub gain_per_round: Option<f64>,
    /// Coverage change of each round against the run before it.
    pub per_round: Vec<Option<f64>>,
    pub rating: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CoverageGap {
    pub layer: String,
    pub module: String,
    pub line_percent: f64,
    pub target: Option<f64>,
    pub gap: f64,
    pub uncovered: String,
    pub recommendation: String,
}

/// A role added to the session (`roles add`, or a capability gap): what it did.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AddedRole {
    pub role: String,
    pub task_id: String,
    pub status: String,
    pub summary: String,
    /// Why it was added: `added with roles add`, or the capability gap.
    pub reason: String,
    pub artifacts: Vec<String>,
}

/// A dependency fetch that failed: the command that fetches them, and what it said.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MissingDependencies {
    pub command: String,
    pub problem: String,
}

/// How many layers met their gate, of those that had something to test: the one count every
/// rendering shows (the Markdown, the HTML, the analyst's summary).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GateCount {
    pub met: usize,
    /// Layers that had something to test.
    pub applicable: usize,
    pub not_applicable: usize,
}

impl GateCount {
    /// "2/2 (1 not applicable)".
    pub fn text(&self) -> String {
        let mut t = format!("{}/{}", self.met, self.applicable);
        if self.not_applicable > 0 {
            t.push_str(&format!(" ({} not applicable)", self.not_applicable));
        }
        t
    }
}

impl Report {
    pub fn gates(&self) -> GateCount {
        let not_applicable = self
            .layers
            .iter()
            .filter(|l| l.not_applicable.is_some())
            .count();
        GateCount {
            met: self.layers.iter().filter(|l| l.gate == "Met").count(),
            applicable: self.layers.len() - not_applicable,
            not_applicable,
        }
    }
}

/// What the sandbox protected during the session, and what it stopped.
#[derive(Debug, Clone, Serialize, Default)]
pub struct SandboxReport {
    /// As recorded at the session's (last) start; None for sessions older than the sandbox.
    pub protections: Option<crate::sandbox::Protections>,
    /// The generator's calls the sandbox stopped that its effect audit did not see (a memory or
    /// process limit: sandbox_denied findings; env_issue in older sessions), with the call.
    pub blocked: Vec<Value>,
    /// Whether each layer's kept tests ran under the file-system watch (their final run).
    pub watch: Vec<LayerWatch>,
}

/// A layer's final run under the file-system watch, or why it was not watched.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LayerWatch {
    pub layer: String,
    pub checked: bool,
    pub note: Option<String>,
    pub unwatched: Vec<String>,
}

impl LayerWatch {
    /// One line for the report: "L1-unit: watched" or why not.
    pub fn line(&self) -> String {
        let mut text = match (&self.note, self.checked) {
            (None, true) => format!(
                "{}: watched, nothing kept changes anything outside its own folders",
                self.layer
            ),
            (Some(n), true) => format!("{}: watched; {n}", self.layer),
            (Some(n), false) => format!("{}: not watched: {n}", self.layer),
            (None, false) => format!("{}: not watched", self.layer),
        };
        if !self.unwatched.is_empty() {
            text.push_str(&format!(" (not watched: {})", self.unwatched.join("; ")));
        }
        text
    }
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct Findings {
    pub code_defects: Vec<CodeDefect>,
    pub contract_findings: Vec<Value>,
    /// Functions (and entry points) whose calls change something outside their tmp_path: never
    /// tests, one finding per function with the call that showed it.
    pub side_effects: Vec<Value>,
    /// Docstring examples left out because their output only holds on their author's machine.
    pub skipped_examples: Vec<Value>,
    /// Results that look like bugs (a negative price, a docstring they break), flagged for a
    /// person instead of asserted: the test asserts only their type.
    pub review: Vec<Value>,
    /// Test files that did not load, classified like failures (latest record per file).
    pub load_errors: Vec<LoadErrorFinding>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LoadErrorFinding {
    pub file: String,
    pub layer: String,
    pub task_id: String,
    /// test_defect, code_defect, env_issue; None in records older than the classification.
    pub classification: Option<String>,
    pub reason: String,
    pub location: Option<String>,
    /// The command that installs what is missing (env_issue).
    pub install: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CodeDefect {
    /// The test that shows it: of the tests that hit the same cause, the shortest (generated
    /// tests are named after their call, so the shortest name is the shortest call).
    pub test: String,
    pub layer: String,
    pub file: Option<String>,
    pub task_id: String,
    pub round: u32,
    pub criticality: Option<String>,
    /// The rule that decided the criticality, in words.
    pub criticality_rule: Option<String>,
    /// How many failing tests hit this cause (one code location and one exception type).
    pub hits: usize,
    /// The other tests that hit it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub same_cause: Vec<String>,
    /// Where the defect most likely is (fault localisation): `file:line`, most suspicious first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suspects: Vec<String>,
    pub message: Option<String>,
    pub evidence: Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlakyTest {
    pub test: String,
    pub layer: String,
    pub task_id: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct QuarantinedTest {
    pub test: String,
    pub whole_file: bool,
    pub reason: String,
    pub task_id: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Confidence {
    /// Modules in scope that generated tests exercise (lines_covered > 0 in a coverage file).
    pub scenario_coverage: f64,
    /// Distinct tests that are neither flaky nor quarantined.
    pub test_quality: f64,
    /// Failing test records with a classification and an evidence location (1.0: none failed).
    pub diagnostic_accuracy: f64,
    /// Layers meeting their gate / layers.
    pub strategy_effectiveness: f64,
    /// 1 − env_issue failures / failing records; 0 when a run stopped on an environment problem.
    pub infrastructure_fitness: f64,
    pub overall: f64,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct Trends {
    pub thresholds: BTreeMap<String, f64>,
    pub previous: Vec<PreviousSession>,
    pub coverage: Vec<Trend>,
    pub score: Option<Trend>,
    pub defect_patterns: Option<Trend>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PreviousSession {
    pub session_id: String,
    pub created_at: String,
    pub quality_score: Option<f64>,
    pub layers: BTreeMap<String, Option<f64>>,
    pub defect_patterns: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Trend {
    /// Layer name for coverage trends; "score" / "defect_patterns" otherwise.
    pub subject: String,
    pub previous: f64,
    pub current: f64,
    pub delta: f64,
    pub direction: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub file: String,
    pub task_id: String,
    pub layer: String,
    pub round: u32,
    pub total: u64,
    pub passed: u64,
    pub failed: u64,
    pub errors: u64,
    pub skipped: u64,
    pub pass_rate: Option<f64>,
    pub coverage: Option<f64>,
    pub env_problem: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct CsvRow {
    pub id: String,
    pub layer: String,
    pub file: String,
    pub status: String,
    pub classification: String,
    pub criticality: String,
    pub duration: Option<f64>,
    pub round: u32,
    // The scenario of the test (scenarios.csv), when it has one; empty otherwise.
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub priority: String,
    #[serde(default)]
    pub category: String,
    #[serde(default)]
    pub target_file: String,
    #[serde(default)]
    pub red_result: String,
    #[serde(default)]
    pub findings: String,
}

impl CsvRow {
    /// The row's cells in the order of `CSV_HEADER`: text neutralised for spreadsheets
    /// (`util::csv_text`), the duration and the round written as numbers.
    pub fn cells(&self) -> [String; 14] {
        let text = |s: &str| crate::util::csv_text(s).into_owned();
        // As serde writes a float (`1.0`, not `1`).
        let duration = self
            .duration
            .and_then(serde_json::Number::from_f64)
            .map(|n| n.to_string())
            .unwrap_or_default();
        [
            text(&self.id),
            text(&self.layer),
            text(&self.file),
            text(&self.status),
            text(&self.classification),
            text(&self.criticality),
            duration,
            self.round.to_string(),
            text(&self.name),
            text(&self.priority),
            text(&self.category),
            text(&self.target_file),
            text(&self.red_result),
            text(&self.findings),
        ]
    }
}

// ---- requirements traceability (computed by `traceability`) ----

/// Written next to quality-report.md when the section exists.
pub const TRACEABILITY_FILE: &str = "analysis/traceability.md";

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Traceability {
    /// Where the criteria come from: the requirement files, or the scenarios' `req_ref` alone.
    pub criteria_from: CriteriaFrom,
    /// Why the requirement files were not used; references they do not hold.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub summary: TraceSummary,
    /// Criteria with no passing test first (violated, failing, no scenario, not run), then the
    /// rest; in requirement and criterion order within each verdict.
    pub criteria: Vec<TracedCriterion>,
    /// Scenarios that trace to no criterion (`gap:…`, `code:…`, `defect:…`, `suspect:…`, or no
    /// reference), by reference.
    pub other_scenarios: Vec<TracedScenario>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CriteriaFrom {
    Requirements,
    Scenarios,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct TraceSummary {
    pub requirements: usize,
    pub criteria: usize,
    pub covered: usize,
    pub violated: usize,
    pub failing: usize,
    pub not_run: usize,
    pub no_scenario: usize,
}

/// One acceptance criterion and the scenarios planned for it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TracedCriterion {
    /// `REQ-001`.
    pub requirement: String,
    /// From the requirement file; None when the criterion is known by a `req_ref` only.
    pub requirement_title: Option<String>,
    /// `AC-1`.
    pub criterion: String,
    pub text: Option<String>,
    pub verdict: Verdict,
    pub scenarios: Vec<TracedScenario>,
}

/// What the tests of a criterion's scenarios say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A scenario failed as a code defect: the code does not do what the criterion says.
    Violated,
    /// A scenario's test passes (and none shows a code defect).
    Covered,
    /// A scenario failed otherwise (its test, the environment, unclassified).
    Failing,
    /// Scenarios planned, none run yet (pending, written, blocked, skipped).
    NotRun,
    /// No scenario names the criterion.
    NoScenario,
}

impl Verdict {
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Violated => "violated",
            Verdict::Covered => "covered",
            Verdict::Failing => "failing",
            Verdict::NotRun => "not run",
            Verdict::NoScenario => "no scenario",
        }
    }

    /// Listing order: the criteria that most need a look first.
    pub(super) fn rank(self) -> u8 {
        match self {
            Verdict::Violated => 0,
            Verdict::Failing => 1,
            Verdict::NoScenario => 2,
            Verdict::NotRun => 3,
            Verdict::Covered => 4,
        }
    }
}

/// One scenario of the plan and the last result of its tests.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TracedScenario {
    /// `AT-001`.
    pub id: String,
    pub name: String,
    pub layer: String,
    pub priority: Priority,
    pub req_ref: String,
    /// Relative to the session; empty when the plan names none.
    pub test_file: String,
    pub status: ScenarioStatus,
    /// Of a failure: the worst of its failing tests' (code_defect first); None when
    /// unclassified or not failed.
    pub classification: Option<String>,
    /// The red phase's result from scenarios.csv (`expected_fail`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub red_result: Option<String>,
    /// Where the status comes from: the run record (`results/run-003.json`) or `scenarios.csv`;
    /// None when nothing ran.
    pub status_from: Option<String>,
    /// What else the status rests on: `flaky`, `skipped`, `pending`, `blocked: …`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScenarioStatus {
    Passed,
    Failed,
    NotRun,
}

impl TracedScenario {
    /// `passed`, `failed (code_defect)`, `not run (pending)`.
    pub fn status_words(&self) -> String {
        let note = |n: &Option<String>| n.as_ref().map_or(String::new(), |n| format!(" ({n})"));
        match self.status {
            ScenarioStatus::Passed => format!("passed{}", note(&self.note)),
            ScenarioStatus::Failed => format!(
                "failed ({})",
                self.classification.as_deref().unwrap_or("unclassified")
            ),
            ScenarioStatus::NotRun => format!("not run{}", note(&self.note)),
        }
    }
}
