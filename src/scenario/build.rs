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
mod tests;
