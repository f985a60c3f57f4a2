//! The generator's findings (`findings[]` of a generator task's outcome data): a stated
//! contract the code breaks, or what kept a function from being tested.

use serde::{Deserialize, Serialize};

/// A stated contract the code breaks: a doctest, an annotation, a builtin exception escaping.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Finding {
    pub module: String,
    pub function: String,
    /// `exception`, `side_effect`, `env_issue`, … (see [`FindingCategory::of_kind`]).
    pub kind: String,
    pub call: String,
    #[serde(default)]
    pub expected: Option<String>,
    #[serde(default)]
    pub actual: Option<String>,
    #[serde(default)]
    pub test: Option<String>,
}

/// Where the report lists a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingCategory {
    /// The environment or the sandbox stopped the call, or the generator itself failed on a
    /// module or a candidate (`generator_error`, with its traceback): nothing was learnt about
    /// the code.
    Blocked,
    /// The call changed something outside its temporary folder.
    SideEffect,
    /// A documented example that could not be run.
    SkippedExample,
    /// A result that looks like a bug (a negative price, a docstring it breaks): flagged for a
    /// person to review instead of being asserted.
    Review,
    /// The code broke what it states (every other kind).
    Contract,
}

impl FindingCategory {
    pub fn of_kind(kind: &str) -> Self {
        match kind {
            "env_issue" | "sandbox_denied" | "generator_error" => FindingCategory::Blocked,
            "side_effect" => FindingCategory::SideEffect,
            "skipped_example" => FindingCategory::SkippedExample,
            "suspicious_result" => FindingCategory::Review,
            _ => FindingCategory::Contract,
        }
    }
}
