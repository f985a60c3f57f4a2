//! Scenarios from each route's input. Pure and deterministic: the same input gives the same rows,
//! numbered `AT-001`.. in order, each with a Python test file name (see [`name_tests`] for
//! JavaScript/TypeScript, [`renumber`] for merging the rows of several routes).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::plan::{Priority, Scenario};
use super::req::{Criterion, Example, Expect, Requirement};

/// How test files are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestNaming {
    /// `tests/L1-unit/test_at_001_apply_discount.py`
    Python,
    /// `tests/L1-unit/at-001-apply-discount.test.js`
    JavaScript,
    /// `tests/L1-unit/at-001-apply-discount.test.ts`
    TypeScript,
}

impl TestNaming {
    pub const ALL: [TestNaming; 3] = [
        TestNaming::Python,
        TestNaming::JavaScript,
        TestNaming::TypeScript,
    ];

    /// The test file of scenario `id` named `name` in `layer`, relative to the tests folder.
    pub fn path(self, layer: &str, id: &str, name: &str) -> String {
        let slug = file_slug(name);
        let id = id.to_ascii_lowercase();
        let dir = layer_dir(layer);
        match self {
            TestNaming::Python => format!(
                "tests/{dir}/test_{}_{}.py",
                id.replace('-', "_"),
                slug.replace('-', "_")
            ),
            TestNaming::JavaScript => format!("tests/{dir}/{id}-{slug}.test.js"),
            TestNaming::TypeScript => format!("tests/{dir}/{id}-{slug}.test.ts"),
        }
    }
}

/// The folder of a layer's tests: `L1` is `L1-unit`, `L2` `L2-integration`, `L3` `L3-e2e`,
/// `L4` `L4-perf`; any other layer is its own folder.
pub fn layer_dir(layer: &str) -> String {
    match layer {
        "L1" => "L1-unit".into(),
        "L2" => "L2-integration".into(),
        "L3" => "L3-e2e".into(),
        "L4" => "L4-perf".into(),
        other => other.to_string(),
    }
}

/// The name's slug in at most 40 characters, cut between words.
fn file_slug(name: &str) -> String {
    const MAX: usize = 40;
    let full = crate::util::slugify(name, 200);
    if full.len() <= MAX {
        return full;
    }
    match full[..=MAX].rfind('-') {
        Some(i) if i > 0 => full[..i].to_string(),
        _ => full[..MAX].trim_end_matches('-').to_string(),
    }
}

/// `AT-001` for `n` = 1.
pub fn scenario_id(n: usize) -> String {
    format!("AT-{n:03}")
}

/// Names every row's test file with `naming` (after [`renumber`], or to switch language).
pub fn name_tests(rows: &mut [Scenario], naming: TestNaming) {
    for row in rows {
        row.test_file = naming.path(&row.layer, &row.id, &row.name);
    }
}

/// Numbers the rows `AT-001`.. in order (for the merged rows of several routes). A test file
/// named after the row's old id by a [`TestNaming`] follows the new id; any other is kept.
pub fn renumber(rows: &mut [Scenario]) {
    for (i, row) in rows.iter_mut().enumerate() {
        let id = scenario_id(i + 1);
        let generated = TestNaming::ALL
            .into_iter()
            .find(|n| row.test_file == n.path(&row.layer, &row.id, &row.name));
        if let Some(naming) = generated {
            row.test_file = naming.path(&row.layer, &id, &row.name);
        }
        row.id = id;
    }
}

/// Ids in order and Python test file names: what every builder hands back.
fn numbered(mut rows: Vec<Scenario>) -> Vec<Scenario> {
    for (i, row) in rows.iter_mut().enumerate() {
        row.id = scenario_id(i + 1);
    }
    name_tests(&mut rows, TestNaming::Python);
    rows
}

/// At most `max` characters (plus "..." when cut), cut at a word, backticks dropped.
fn short(text: &str, max: usize) -> String {
    let text = text
        .replace('`', "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if text.chars().count() <= max {
        return text;
    }
    let cut: String = text.chars().take(max).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > max / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}...", cut.trim_end_matches([',', ';', ':', '.']))
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("static regex")
}

/// A function named in a criterion: `name(` or `module.name(`.
static FUNCTION: LazyLock<Regex> = LazyLock::new(|| re(r"\b((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\("));
/// A source file named in a criterion.
static SOURCE_FILE: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b([\w/-]+)\.(?:py|js|mjs|cjs|jsx|ts|tsx|rs|go|java|kt|rb|php|cs)\b"));
static INTEGRATION_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(?:together|integrat\w*|flows?|workflow|pipeline|across|round[- ]trip)\b")
});
static E2E_WORDS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:end[- ]to[- ]end|e2e|user journey|browser|clicks?|screen)\b"));
static API_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:apis?|endpoints?|requests?|responses?|https?|rest|graphql|status codes?|payloads?|headers?)\b",
    )
});
static STATE_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(?:states?|status(?:es)?|transitions?|becomes?|lifecycle|moves? to|changes? to)\b")
});
static USER_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:user flows?|user journeys?|journeys?|signs? (?:up|in)|logs? (?:in|out)|checks? out)\b",
    )
});
static ARTICLE: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)^(?:an?|the|some)\s+"));

/// Everything a criterion says, for the word rules.
fn all_text(c: &Criterion) -> String {
    [
        Some(c.text.as_str()),
        c.given.as_deref(),
        c.when.as_deref(),
        c.then.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" ")
}

/// The layers a criterion needs: L1 when it names functions or has examples; L2 when it names
/// two or more modules (`a.f(`, `b.g(`, or two source files) or speaks of things working
/// together (together, integration, flow, workflow, pipeline, across, round trip); L3 for
/// end-to-end words (end-to-end, e2e, user journey, browser, click, screen); L1 when none.
pub fn layers_for(c: &Criterion) -> Vec<&'static str> {
    let text = all_text(c);
    let functions: Vec<&str> = FUNCTION
        .captures_iter(&text)
        .map(|m| m.get(1).expect("group").as_str())
        .collect();
    let mut modules: BTreeSet<String> = functions
        .iter()
        .filter_map(|f| f.rsplit_once('.').map(|(m, _)| m.to_string()))
        .collect();
    modules.extend(
        SOURCE_FILE
            .captures_iter(&text)
            .map(|m| m[1].rsplit('/').next().unwrap_or_default().to_string()),
    );
    let mut layers = Vec::new();
    if !c.examples.is_empty() || !functions.is_empty() {
        layers.push("L1");
    }
    if modules.len() >= 2 || INTEGRATION_WORDS.is_match(&text) {
        layers.push("L2");
    }
    if E2E_WORDS.is_match(&text) {
        layers.push("L3");
    }
    if layers.is_empty() {
        layers.push("L1");
    }
    layers
}

/// The category of a criterion's scenario in `layer`: `user_flow` in L3; else `api_contract`
/// (request, response, endpoint, API, HTTP, header, payload), `state_transition` (state,
/// status, transition, becomes, lifecycle), `user_flow` (user flow/journey, signs up, logs in,
/// checks out), `business_rule` by default, in that order.
pub fn category_for(c: &Criterion, layer: &str) -> &'static str {
    let text = all_text(c);
    if layer == "L3" {
        "user_flow"
    } else if API_WORDS.is_match(&text) {
        "api_contract"
    } else if STATE_WORDS.is_match(&text) {
        "state_transition"
    } else if USER_WORDS.is_match(&text) {
        "user_flow"
    } else {
        "business_rule"
    }
}

/// One test case per example: `apply_discount(100, 10) returns 90`.
pub fn example_case(e: &Example) -> String {
    match &e.expect {
        Expect::Equals(v) => format!("{} returns {v}", e.call),
        Expect::Raises(x) => format!("{} raises {x}", e.call),
        Expect::Truthy => format!("{} is true", e.call),
        Expect::Falsy => format!("{} is false", e.call),
    }
}

/// Fixture names from a Given clause: `a product with stock 3 and a cart` gives
/// `product_with_stock_3`, `cart`.
fn fixtures_from(given: Option<&str>) -> Vec<String> {
    let Some(given) = given else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for part in given.split(" and ") {
        let part = ARTICLE.replace(part.trim(), "");
        let slug = crate::util::slugify(&part, 40).replace('-', "_");
        if !part.trim().is_empty() && !out.contains(&slug) {
            out.push(slug);
        }
    }
    out
}

/// The spec route: each criterion becomes one scenario per layer it needs ([`layers_for`]),
/// `req_ref` `REQ-001:AC-1`, test cases from its examples (L1) or its Then clause, else its
/// text; fixtures from its Given clause; priority the criterion's, else its file's, else high;
/// `target_file` what `locate` says (empty when it does not know).
pub fn from_requirements(
    reqs: &[Requirement],
    locate: &dyn Fn(&Criterion) -> Option<String>,
) -> Vec<Scenario> {
    let mut rows = Vec::new();
    for r in reqs {
        for c in &r.criteria {
            let layers = layers_for(c);
            let target = locate(c).unwrap_or_default();
            let priority = c.priority.or(r.priority).unwrap_or(Priority::High);
            let general = c.then.clone().unwrap_or_else(|| c.text.clone());
            let mut description = format!("{} {} ({}): {}", r.id, c.id, r.title, c.text);
            let clauses: Vec<String> = [("given", &c.given), ("when", &c.when), ("then", &c.then)]
                .into_iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v}")))
                .collect();
            if !clauses.is_empty() && c.then.as_ref().is_some_and(|t| !c.text.contains(t)) {
                description.push_str(&format!(" ({})", clauses.join("; ")));
            }
            for &layer in &layers {
                let test_cases = if layer == "L1" && !c.examples.is_empty() {
                    c.examples.iter().map(example_case).collect()
                } else {
                    vec![general.clone()]
                };
                let name = match (layers.len(), layer) {
                    (1, _) | (_, "L1") => short(&c.text, 60),
                    (_, "L2") => format!("{} (integration)", short(&c.text, 46)),
                    _ => format!("{} (end to end)", short(&c.text, 46)),
                };
                rows.push(Scenario {
                    name,
                    layer: layer.to_string(),
                    priority,
                    category: category_for(c, layer).to_string(),
                    target_file: target.clone(),
                    description: description.clone(),
                    test_cases,
                    fixtures: fixtures_from(c.given.as_deref()),
                    req_ref: format!("{}:{}", r.id, c.id),
                    source: "spec".into(),
                    ..Scenario::default()
                });
            }
        }
    }
    numbered(rows)
}

/// What an earlier session's coverage left uncovered in one function (or one file, outside
/// functions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    /// Repository-relative.
    pub file: String,
    pub function: Option<String>,
    /// Uncovered line ranges, inclusive.
    pub lines: Vec<(u32, u32)>,
    /// Uncovered branches, as the coverage tool names them (`12->15`).
    pub branches: Vec<String>,
}

/// Sorted, overlapping and touching ranges merged.
fn merge_ranges(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    for r in &mut ranges {
        if r.0 > r.1 {
            *r = (r.1, r.0);
        }
    }
    ranges.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::new();
    for (a, b) in ranges {
        match out.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

fn range_text((a, b): (u32, u32)) -> String {
    if a == b {
        format!("line {a}")
    } else {
        format!("lines {a}-{b}")
    }
}

/// The gap route: one L1 scenario per (file, function), in the order they first appear, its
/// test cases naming the ranges (`lines 12-15`) and branches; priority high when a range spans
/// 5 or more lines, else medium. Entries with nothing uncovered give nothing.
pub fn from_gaps(gaps: &[Gap]) -> Vec<Scenario> {
    let mut groups: Vec<Gap> = Vec::new();
    for g in gaps {
        match groups
            .iter_mut()
            .find(|x| x.file == g.file && x.function == g.function)
        {
            Some(x) => {
                x.lines.extend(&g.lines);
                x.branches.extend(g.branches.iter().cloned());
            }
            None => groups.push(g.clone()),
        }
    }
    let mut rows = Vec::new();
    for g in groups {
        let lines = merge_ranges(g.lines);
        let mut branches: Vec<String> = Vec::new();
        for b in g.branches {
            if !branches.contains(&b) {
                branches.push(b);
            }
        }
        if lines.is_empty() && branches.is_empty() {
            continue;
        }
        let big = lines.iter().any(|(a, b)| b - a + 1 >= 5);
        let mut test_cases: Vec<String> = lines.iter().map(|&r| range_text(r)).collect();
        test_cases.extend(branches.iter().map(|b| format!("branch {b}")));
        let (name, req_ref, place) = match &g.function {
            Some(f) => (
                format!("Cover {f} in {}", g.file),
                format!("gap:{}:{f}", g.file),
                format!("{f} in {}", g.file),
            ),
            None => (
                format!("Cover {}", g.file),
                format!("gap:{}", g.file),
                g.file.clone(),
            ),
        };
        rows.push(Scenario {
            name,
            layer: "L1".into(),
            priority: if big { Priority::High } else { Priority::Medium },
            category: "coverage_gap".into(),
            target_file: g.file.clone(),
            description: format!(
                "{} of {place} were not run by any test of the earlier session; write tests that run them and check what they do",
                test_cases.join(", ")
            ),
            test_cases,
            req_ref,
            source: "gap".into(),
            ..Scenario::default()
        });
    }
    numbered(rows)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoundaryKind {
    PublicFunction,
    Class,
    /// A program's entry: a CLI, a request handler, `main`.
    EntryPoint,
    /// Where two or more modules meet.
    Integration,
}

/// A module boundary found by exploring the code (the strategist's priority files and touched
/// symbols).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boundary {
    pub file: String,
    pub symbols: Vec<String>,
    pub kind: BoundaryKind,
    pub priority: Priority,
}

/// The code route: one scenario per boundary. Public functions and classes are L1
/// (`business_rule`, `state_transition`), integration points L2 (`api_contract`), entry points
/// L3 (`user_flow`); the cases name the symbols.
pub fn from_code(boundaries: &[Boundary]) -> Vec<Scenario> {
    let rows = boundaries
        .iter()
        .map(|b| {
            let symbols = if b.symbols.is_empty() {
                b.file.clone()
            } else {
                b.symbols.join(", ")
            };
            let (layer, category, what, cases): (&str, &str, &str, Vec<String>) = match b.kind {
                BoundaryKind::PublicFunction => (
                    "L1",
                    "business_rule",
                    "public function",
                    b.symbols
                        .iter()
                        .flat_map(|s| {
                            [
                                format!("{s}: expected result for typical input"),
                                format!("{s}: boundary and invalid input"),
                            ]
                        })
                        .collect(),
                ),
                BoundaryKind::Class => (
                    "L1",
                    "state_transition",
                    "class",
                    b.symbols
                        .iter()
                        .flat_map(|s| {
                            [
                                format!("{s}: construction and initial state"),
                                format!("{s}: state after each operation"),
                            ]
                        })
                        .collect(),
                ),
                BoundaryKind::Integration => (
                    "L2",
                    "api_contract",
                    "integration point",
                    vec![
                        format!("{symbols}: data passes across the boundary intact"),
                        format!("{symbols}: a failure on one side is reported by the other"),
                    ],
                ),
                BoundaryKind::EntryPoint => (
                    "L3",
                    "user_flow",
                    "entry point",
                    b.symbols
                        .iter()
                        .flat_map(|s| {
                            [
                                format!("{s}: runs end to end with valid input"),
                                format!("{s}: reports bad input"),
                            ]
                        })
                        .collect(),
                ),
            };
            let cases = if cases.is_empty() {
                vec![format!("{}: behaviour of the {what}", b.file)]
            } else {
                cases
            };
            Scenario {
                name: short(&format!("{symbols} ({what})"), 60),
                layer: layer.into(),
                priority: b.priority,
                category: category.into(),
                target_file: b.file.clone(),
                description: format!("The {what} {symbols} of {}", b.file),
                test_cases: cases,
                req_ref: format!("code:{}", b.file),
                source: "code".into(),
                ..Scenario::default()
            }
        })
        .collect();
    numbered(rows)
}

/// `src/x.py:12` is (`src/x.py`, `12`); a location without a line is all file.
fn split_location(location: &str) -> (&str, Option<&str>) {
    match location.rsplit_once(':') {
        Some((file, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => {
            (file, Some(line))
        }
        _ => (location, None),
    }
}

/// Regression scenarios from confirmed code defects of earlier sessions: (location
/// `file:line`, error, the test that found it). L1, high, `source: debug_root_cause`,
/// `req_ref` `defect:<test id>`.
pub fn regression(defects: &[(String, String, String)]) -> Vec<Scenario> {
    let rows = defects
        .iter()
        .map(|(location, error, test)| {
            let (file, _) = split_location(location);
            let error_line = error.lines().next().unwrap_or_default();
            Scenario {
                name: short(&format!("Regression: {error_line}"), 60),
                layer: "L1".into(),
                priority: Priority::High,
                category: "regression".into(),
                target_file: file.to_string(),
                description: format!(
                    "{test} found a code defect at {location}: {}; the test keeps it fixed",
                    short(error_line, 200)
                ),
                test_cases: vec![short(
                    &format!("{location} no longer fails with {error_line}"),
                    120,
                )],
                req_ref: format!("defect:{test}"),
                source: "debug_root_cause".into(),
                ..Scenario::default()
            }
        })
        .collect();
    numbered(rows)
}

/// Scenarios for fault-localisation results: (location `file:line`, suspiciousness 0..1, the
/// failing test). One per location (its highest score), most suspicious first; high from 0.8,
/// else medium; `source: fault_localisation`, `req_ref` `suspect:<location>`.
pub fn from_localisation(suspects: &[(String, f64, String)]) -> Vec<Scenario> {
    let mut best: Vec<(&str, f64, &str)> = Vec::new();
    for (location, score, test) in suspects {
        match best.iter_mut().find(|b| b.0 == location.as_str()) {
            Some(b) if *score > b.1 => *b = (location.as_str(), *score, test.as_str()),
            Some(_) => {}
            None => best.push((location.as_str(), *score, test.as_str())),
        }
    }
    best.sort_by(|a, b| b.1.total_cmp(&a.1));
    let rows = best
        .into_iter()
        .map(|(location, score, test)| {
            let (file, _) = split_location(location);
            Scenario {
                name: short(&format!("Suspect code at {location}"), 60),
                layer: "L1".into(),
                priority: if score >= 0.8 {
                    Priority::High
                } else {
                    Priority::Medium
                },
                category: "suspicious_code".into(),
                target_file: file.to_string(),
                description: format!(
                    "Fault localisation points at {location} (score {score:.2}) for the failing test {test}"
                ),
                test_cases: vec![format!("behaviour at {location} that {test} relies on")],
                req_ref: format!("suspect:{location}"),
                source: "fault_localisation".into(),
                ..Scenario::default()
            }
        })
        .collect();
    numbered(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::req::parse;
    use std::path::Path;

    fn reqs() -> Vec<Requirement> {
        vec![
            parse(
                Path::new("REQ-001.md"),
                "# REQ-001: Discounts\n\
                 Priority: medium\n\
                 - AC-1: `apply_discount(100, 10)` returns `90` and `apply_discount(10, 150)` raises `ValueError`\n\
                 - AC-2: Orders flow from `cart.total()` to `billing.charge()` (priority: critical)\n\
                 - AC-3: A refunded order's status becomes refunded\n",
            )
            .unwrap(),
            parse(
                Path::new("REQ-002.md"),
                "# Stock\n\
                 ### AC-1: Taking stock\n\
                 Given a product with stock 3 and a cart\n\
                 When `take(3, 3)` is called\n\
                 Then the result is `0`\n\
                 ### AC-2: The API answers 404 for an unknown product\n\
                 ### AC-3: A shopper checks out end-to-end in the browser\n",
            )
            .unwrap(),
        ]
    }

    #[test]
    fn spec_scenarios_per_criterion_and_layer() {
        let reqs = reqs();
        let locate = |c: &Criterion| (c.id == "AC-1").then(|| "src/shop.py".to_string());
        let rows = from_requirements(&reqs, &locate);
        let brief: Vec<(&str, &str, &str, Priority, &str)> = rows
            .iter()
            .map(|r| {
                (
                    r.id.as_str(),
                    r.layer.as_str(),
                    r.req_ref.as_str(),
                    r.priority,
                    r.category.as_str(),
                )
            })
            .collect();
        assert_eq!(
            brief,
            [
                (
                    "AT-001",
                    "L1",
                    "REQ-001:AC-1",
                    Priority::Medium,
                    "business_rule"
                ),
                (
                    "AT-002",
                    "L1",
                    "REQ-001:AC-2",
                    Priority::Critical,
                    "business_rule"
                ),
                (
                    "AT-003",
                    "L2",
                    "REQ-001:AC-2",
                    Priority::Critical,
                    "business_rule"
                ),
                (
                    "AT-004",
                    "L1",
                    "REQ-001:AC-3",
                    Priority::Medium,
                    "state_transition"
                ),
                (
                    "AT-005",
                    "L1",
                    "REQ-002:AC-1",
                    Priority::High,
                    "business_rule"
                ),
                (
                    "AT-006",
                    "L1",
                    "REQ-002:AC-2",
                    Priority::High,
                    "api_contract"
                ),
                ("AT-007", "L3", "REQ-002:AC-3", Priority::High, "user_flow"),
            ]
        );
        assert!(rows
            .iter()
            .all(|r| r.source == "spec" && r.status == "pending"));
        assert_eq!(
            rows[0].test_cases,
            [
                "apply_discount(100, 10) returns 90",
                "apply_discount(10, 150) raises ValueError"
            ]
        );
        assert_eq!(rows[0].target_file, "src/shop.py");
        assert_eq!(rows[1].target_file, "");
        assert_eq!(
            rows[1].name,
            "Orders flow from cart.total() to billing.charge()"
        );
        assert_eq!(
            rows[2].name,
            "Orders flow from cart.total() to... (integration)"
        );
        assert_eq!(
            rows[3].test_cases,
            ["A refunded order's status becomes refunded"]
        );
        assert_eq!(rows[4].test_cases, ["take(3, 3) returns 0"]);
        assert_eq!(rows[4].fixtures, ["product_with_stock_3", "cart"]);
        assert_eq!(
            rows[4].description,
            "REQ-002 AC-1 (Stock): Taking stock (given a product with stock 3 and a cart; \
             when `take(3, 3)` is called; then the result is `0`)"
        );
        assert_eq!(
            rows[0].test_file,
            "tests/L1-unit/test_at_001_apply_discount_100_10_returns_90_and.py"
        );
        assert_eq!(
            rows[6].test_file,
            "tests/L3-e2e/test_at_007_a_shopper_checks_out_end_to_end_in_the.py"
        );
    }

    #[test]
    fn gap_scenarios_group_per_function_and_name_ranges() {
        let gaps = vec![
            Gap {
                file: "src/calc.py".into(),
                function: Some("mean".into()),
                lines: vec![(12, 15)],
                branches: vec![],
            },
            Gap {
                file: "src/calc.py".into(),
                function: None,
                lines: vec![(3, 3)],
                branches: vec![],
            },
            Gap {
                file: "src/calc.py".into(),
                function: Some("mean".into()),
                lines: vec![(16, 16), (30, 40)],
                branches: vec!["20->22".into()],
            },
            Gap {
                file: "src/io.py".into(),
                function: Some("load".into()),
                lines: vec![],
                branches: vec![],
            },
        ];
        let rows = from_gaps(&gaps);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].id, "AT-001");
        assert_eq!(rows[0].name, "Cover mean in src/calc.py");
        assert_eq!(rows[0].req_ref, "gap:src/calc.py:mean");
        assert_eq!(
            rows[0].test_cases,
            ["lines 12-16", "lines 30-40", "branch 20->22"]
        );
        assert_eq!(rows[0].priority, Priority::High);
        assert_eq!(rows[0].target_file, "src/calc.py");
        assert_eq!(rows[0].source, "gap");
        assert_eq!(
            (rows[1].req_ref.as_str(), rows[1].priority),
            ("gap:src/calc.py", Priority::Medium)
        );
        assert_eq!(rows[1].test_cases, ["line 3"]);
        let small = from_gaps(&[Gap {
            file: "a.py".into(),
            function: Some("f".into()),
            lines: vec![(1, 4)],
            branches: vec![],
        }]);
        assert_eq!(small[0].priority, Priority::Medium);
    }

    #[test]
    fn code_scenarios_per_boundary() {
        let rows = from_code(&[
            Boundary {
                file: "src/shop.py".into(),
                symbols: vec!["apply_discount".into()],
                kind: BoundaryKind::PublicFunction,
                priority: Priority::High,
            },
            Boundary {
                file: "src/cart.py".into(),
                symbols: vec!["Cart".into()],
                kind: BoundaryKind::Class,
                priority: Priority::Medium,
            },
            Boundary {
                file: "src/checkout.py".into(),
                symbols: vec!["cart.total".into(), "billing.charge".into()],
                kind: BoundaryKind::Integration,
                priority: Priority::Critical,
            },
            Boundary {
                file: "src/cli.py".into(),
                symbols: vec![],
                kind: BoundaryKind::EntryPoint,
                priority: Priority::Low,
            },
        ]);
        let brief: Vec<(&str, &str, &str, Priority)> = rows
            .iter()
            .map(|r| {
                (
                    r.id.as_str(),
                    r.layer.as_str(),
                    r.category.as_str(),
                    r.priority,
                )
            })
            .collect();
        assert_eq!(
            brief,
            [
                ("AT-001", "L1", "business_rule", Priority::High),
                ("AT-002", "L1", "state_transition", Priority::Medium),
                ("AT-003", "L2", "api_contract", Priority::Critical),
                ("AT-004", "L3", "user_flow", Priority::Low),
            ]
        );
        assert_eq!(
            rows[0].test_cases,
            [
                "apply_discount: expected result for typical input",
                "apply_discount: boundary and invalid input"
            ]
        );
        assert_eq!(
            rows[2].name,
            "cart.total, billing.charge (integration point)"
        );
        assert_eq!(
            rows[3].test_cases,
            ["src/cli.py: behaviour of the entry point"]
        );
        assert!(rows.iter().all(|r| r.source == "code"));
        assert_eq!(rows[1].test_file, "tests/L1-unit/test_at_002_cart_class.py");
    }

    #[test]
    fn regression_and_localisation_scenarios() {
        let rows = regression(&[(
            "src/calc.py:14".into(),
            "ZeroDivisionError: division by zero\n  more".into(),
            "test_calc::test_mean_empty".into(),
        )]);
        assert_eq!(rows[0].target_file, "src/calc.py");
        assert_eq!(rows[0].priority, Priority::High);
        assert_eq!(rows[0].source, "debug_root_cause");
        assert_eq!(rows[0].req_ref, "defect:test_calc::test_mean_empty");
        assert_eq!(
            rows[0].name,
            "Regression: ZeroDivisionError: division by zero"
        );

        let rows = from_localisation(&[
            ("src/a.py:3".into(), 0.5, "t1".into()),
            ("src/b.py:9".into(), 0.9, "t2".into()),
            ("src/a.py:3".into(), 0.7, "t3".into()),
        ]);
        let brief: Vec<(&str, &str, Priority)> = rows
            .iter()
            .map(|r| (r.id.as_str(), r.req_ref.as_str(), r.priority))
            .collect();
        assert_eq!(
            brief,
            [
                ("AT-001", "suspect:src/b.py:9", Priority::High),
                ("AT-002", "suspect:src/a.py:3", Priority::Medium),
            ]
        );
        assert!(rows[1].description.contains("score 0.70"));
    }

    #[test]
    fn renumber_merges_routes_and_keeps_hand_named_files() {
        let mut rows = from_gaps(&[Gap {
            file: "a.py".into(),
            function: Some("f".into()),
            lines: vec![(1, 2)],
            branches: vec![],
        }]);
        let mut code = from_code(&[Boundary {
            file: "b.py".into(),
            symbols: vec!["g".into()],
            kind: BoundaryKind::PublicFunction,
            priority: Priority::High,
        }]);
        name_tests(&mut code, TestNaming::TypeScript);
        assert_eq!(
            code[0].test_file,
            "tests/L1-unit/at-001-g-public-function.test.ts"
        );
        rows.extend(code);
        rows.extend(regression(&[("c.py:1".into(), "E".into(), "t".into())]));
        rows[2].test_file = "tests/mine.py".into();
        renumber(&mut rows);
        let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["AT-001", "AT-002", "AT-003"]);
        assert_eq!(
            rows[0].test_file,
            "tests/L1-unit/test_at_001_cover_f_in_a_py.py"
        );
        assert_eq!(
            rows[1].test_file,
            "tests/L1-unit/at-002-g-public-function.test.ts"
        );
        assert_eq!(rows[2].test_file, "tests/mine.py");
        assert_eq!(scenario_id(1000), "AT-1000");
    }
}
