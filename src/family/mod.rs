//! The language families and what team-testing can do for each. Every capability a role offers
//! is asked of the family here, so a "not yet" is stated once, with the reason the user sees:
//! the roles' refusals, `doctor` and ARCHITECTURE.md's table all read this one answer.

use serde::Serialize;

pub mod agent;
pub mod code_check;
pub mod doctor;
pub mod generator;
pub mod go;
pub mod mutants;
pub mod node;
pub mod python;
pub mod rust;
pub mod suites;

use crate::testing::code_check::{CheckInput, CodeCheck, CodeCheckError};
pub use crate::testing::framework::Family;
use crate::testing::framework::Framework;
use crate::testing::runner::Runner;
use crate::testing::toolchain::Toolchain;

/// What a language family is to the roles: the one way they reach a language. Each family's
/// folder implements it (`python::Python`, `node::Node`, `rust::Rust`, `go::Go`), so what a
/// family can do, and why not where it cannot yet, stands in that family's own folder.
pub trait Language: Sync {
    /// The family's name as users say it.
    fn name(&self) -> &'static str;
    /// Whether team-testing implements `capability` for this family (the table's row).
    fn support(&self, capability: Capability) -> Support;
    /// The programs that run `framework`'s tests and measure coverage for `repo` on this
    /// machine, probed (a framework of this family).
    fn toolchain(&self, repo: &std::path::Path, framework: Framework) -> Toolchain;
    /// The runner that runs `framework`'s tests (a framework of this family).
    fn runner(&self, framework: Framework) -> Box<dyn Runner>;
    /// Its built-in generator, when it has one (the capability table says why not otherwise).
    fn generator(&self) -> Option<&'static dyn generator::Generator> {
        None
    }
    /// Its suite analysis under mutation, which mutation analysis and minimization stand on,
    /// when it has one (the capability table says why not otherwise).
    fn suite_analysis(&self) -> Option<&'static dyn suites::SuiteAnalysis> {
        None
    }
    /// Its tests traced one by one (outcome, failure report, reach), which fault localisation,
    /// progressive testing and the test-fix cycle stand on, when it has it.
    fn suite_trace(&self) -> Option<&'static dyn suites::SuiteTrace> {
        None
    }
    /// How this family's tests are written for `framework` in `repo`: what an agent backend is
    /// told, and the names the accept filter takes.
    fn conventions(&self, framework: Framework, repo: &std::path::Path) -> agent::Conventions;
    /// The calls of a candidate test file that reach what the file-system watch cannot see
    /// (the network, other processes, native or computed code), and for Rust and Go the file
    /// system outside a temporary folder too: refused before the file runs. Empty for Python,
    /// whose audit hook sees all of it.
    fn unsafe_calls(&self, source: &str) -> Vec<agent::UnsafeCall>;
    /// The family's own L0 checks of the changed files (`code_check` adds the shared ones).
    fn check_code(
        &self,
        input: &CheckInput,
        changed: &[String],
        out: &mut CodeCheck,
    ) -> Result<(), CodeCheckError>;
}

/// The family's implementation.
pub fn of(family: Family) -> &'static dyn Language {
    match family {
        Family::Python => &python::Python,
        Family::Node => &node::Node,
        Family::Cargo => &rust::Rust,
        Family::Go => &go::Go,
    }
}

/// The toolchain of `framework` on this machine; a project with no known framework has none.
pub fn toolchain(repo: &std::path::Path, framework: Option<Framework>) -> Toolchain {
    match framework {
        Some(f) => of(f.family()).toolchain(repo, f),
        None => crate::testing::toolchain::unknown(),
    }
}

/// The runner that runs `framework`'s tests.
pub fn runner_for(framework: Framework) -> Box<dyn Runner> {
    of(framework.family()).runner(framework)
}

/// What a role can do for a project, one row of the capability table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// The project's own suite runs first, sandboxed, as the baseline each layer is judged with.
    OwnSuite,
    /// The offline generator writes tests with no LLM.
    Generator,
    /// An agent backend (`--backend generator=…`) writes tests, through the accept filter.
    AgentGeneration,
    /// Mutation score, mutation-chosen assertions, minimization.
    Mutation,
    /// Per-test coverage, fault localisation, the test-fix cycle.
    TestFix,
    /// Delivered tests are checked for effects outside their temporary folders.
    EffectsCheck,
}

impl Capability {
    pub const ALL: [Capability; 6] = [
        Capability::OwnSuite,
        Capability::Generator,
        Capability::AgentGeneration,
        Capability::Mutation,
        Capability::TestFix,
        Capability::EffectsCheck,
    ];

    /// The row's name, as `doctor` and the table print it.
    pub fn label(self) -> &'static str {
        match self {
            Capability::OwnSuite => "own suite as baseline",
            Capability::Generator => "built-in generator",
            Capability::AgentGeneration => "agent generation (--backend generator=…)",
            Capability::Mutation => "mutation score, mutation-chosen assertions, minimization",
            Capability::TestFix => "per-test coverage, fault localisation, test-fix cycle",
            Capability::EffectsCheck => "effects check of delivered tests",
        }
    }
}

/// Whether team-testing implements a capability for a family (before any tool on this machine
/// is asked: that is `doctor`'s part).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    Built,
    /// Not implemented for this family; the reason is printed as it is.
    NotYet(&'static str),
}

/// The capability table: what each family has (each family's `Language::support`, an exhaustive
/// match, so none can leave a capability out silently).
pub fn support(family: Family, capability: Capability) -> Support {
    of(family).support(capability)
}

/// The family's name as users say it.
pub fn family_name(family: Family) -> &'static str {
    of(family).name()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAMILIES: [Family; 4] = [Family::Python, Family::Node, Family::Cargo, Family::Go];

    /// The table and the code agree: a family says it has a built-in generator exactly when it
    /// hands one to the generator role.
    #[test]
    fn a_family_has_the_generator_its_row_says() {
        for family in FAMILIES {
            assert_eq!(
                support(family, Capability::Generator) == Support::Built,
                of(family).generator().is_some(),
                "{family:?}"
            );
        }
    }

    /// Mutation analysis stands on the suite analysis, the test-fix cycle on the suite trace: a
    /// family says it has them exactly when it hands one out.
    #[test]
    fn a_family_has_the_suite_analysis_and_trace_its_row_says() {
        for family in FAMILIES {
            assert_eq!(
                support(family, Capability::Mutation) == Support::Built,
                of(family).suite_analysis().is_some(),
                "{family:?} mutation"
            );
            assert_eq!(
                support(family, Capability::TestFix) == Support::Built,
                of(family).suite_trace().is_some(),
                "{family:?} test-fix"
            );
        }
    }

    /// Every family either has each capability or says why not, in words a user can act on.
    #[test]
    fn every_family_has_each_capability_or_says_why_not() {
        for family in FAMILIES {
            for capability in Capability::ALL {
                if let Support::NotYet(reason) = support(family, capability) {
                    assert!(
                        reason.len() > 30 && !reason.contains("TODO"),
                        "{family:?} {capability:?}: {reason:?}"
                    );
                }
            }
        }
    }

    /// Every family has the whole pipeline: parity is the table's shape, not a promise.
    #[test]
    fn every_family_has_the_whole_pipeline() {
        for family in FAMILIES {
            for capability in Capability::ALL {
                assert_eq!(support(family, capability), Support::Built, "{family:?}");
            }
        }
    }
}
