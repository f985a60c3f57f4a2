//! `results/mutation.json`: the mutation analysis of the session's suites, in any language (the
//! project's own and each layer's generated one) and the minimization it decided, as the analyst
//! wrote it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::judged::Rewrite;

/// Where the record lives, relative to the session.
pub const MUTATION_FILE: &str = "results/mutation.json";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MutationRecord {
    /// Repository-relative module files the mutants were made from.
    pub modules: Vec<String>,
    /// Mutants every suite was run against (the denominator of every score).
    pub mutants: usize,
    /// Mutants no passing test reaches.
    pub no_coverage: usize,
    /// The project's own suite alone; None when it has none or it did not run.
    pub baseline: Option<SuiteScore>,
    /// Every layer's kept generated tests together.
    pub generated: SuiteScore,
    /// The project's tests and the kept generated ones together.
    pub combined: SuiteScore,
    pub layers: Vec<LayerMutation>,
    /// Mutants that survived every suite: where the tests' assertions are blind.
    pub survivors: Vec<Survivor>,
    pub duration_s: f64,
    /// The time budget ended before every mutant ran.
    pub exhausted: bool,
    pub problems: Vec<String>,
}

/// Mutants a suite kills, out of the record's `mutants`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SuiteScore {
    pub tests: usize,
    pub killed: usize,
    /// Percent of the record's mutants killed.
    pub score: f64,
}

/// One layer's generated suite before and after minimization.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LayerMutation {
    pub layer: String,
    /// The layer's generated tests alone, before and after minimization.
    pub before: SuiteScore,
    pub after: SuiteScore,
    /// With the project's own tests, before and after: minimization keeps this the same.
    pub combined_before: f64,
    pub combined_after: f64,
    /// Passing tests dropped because they add no line, arc or killed mutant beyond the project's
    /// tests and the kept ones (`file::name`).
    pub dropped: Vec<String>,
    /// Each kept passing test with what it adds beyond the project's tests and the tests kept
    /// before it, in the order minimization kept them.
    pub kept: Vec<KeptTest>,
    /// Passing tests kept without judging: their reach cannot be measured in process (L3, or a
    /// test that runs the program in a child).
    pub unmeasured: Vec<String>,
    /// Assertions of kept tests dropped because they noticed no mutant while another assertion
    /// of the same test did (`file::test:line`).
    pub assertions_dropped: Vec<String>,
    /// The layer's files minimization rewrote, from the content the last run judged to the one
    /// it wrote: `apply` delivers these as judged (`artifacts::judged`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rewritten: BTreeMap<String, Rewrite>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KeptTest {
    pub test: String,
    pub new_lines: usize,
    pub new_arcs: usize,
    pub new_kills: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Survivor {
    /// `file:line`, repository-relative.
    pub location: String,
    pub operator: String,
}

impl SuiteScore {
    pub fn of(tests: usize, killed: usize, mutants: usize) -> Self {
        let score = if mutants == 0 {
            0.0
        } else {
            (1000.0 * killed as f64 / mutants as f64).round() / 10.0
        };
        SuiteScore {
            tests,
            killed,
            score,
        }
    }
}
