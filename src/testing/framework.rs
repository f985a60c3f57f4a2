//! The test frameworks team-testing runs, parsed once from the strategy's string (which is what
//! session files keep: `"pytest"`, `"node"`, ...). Which runner runs each: `testing::runner_for`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The name a strategy records when it found no framework.
pub const UNKNOWN: &str = "unknown";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Framework {
    #[serde(rename = "pytest")]
    Pytest,
    #[serde(rename = "unittest")]
    Unittest,
    #[serde(rename = "cargo")]
    Cargo,
    /// node's built-in runner, `node --test`.
    #[serde(rename = "node")]
    NodeTest,
    #[serde(rename = "jest")]
    Jest,
    #[serde(rename = "vitest")]
    Vitest,
    #[serde(rename = "mocha")]
    Mocha,
    #[serde(rename = "go")]
    Go,
}

/// Frameworks that share a runner: the same language, workspace and report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Python,
    Cargo,
    Node,
    Go,
}

impl Framework {
    pub const ALL: [Framework; 8] = [
        Framework::Pytest,
        Framework::Unittest,
        Framework::Cargo,
        Framework::NodeTest,
        Framework::Jest,
        Framework::Vitest,
        Framework::Mocha,
        Framework::Go,
    ];

    /// The framework a recorded name stands for; None for `unknown` or any other name.
    pub fn parse(name: &str) -> Option<Framework> {
        Framework::ALL.into_iter().find(|f| f.as_str() == name)
    }

    /// The name in session files, run records and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Framework::Pytest => "pytest",
            Framework::Unittest => "unittest",
            Framework::Cargo => "cargo",
            Framework::NodeTest => "node",
            Framework::Jest => "jest",
            Framework::Vitest => "vitest",
            Framework::Mocha => "mocha",
            Framework::Go => "go",
        }
    }

    pub fn family(self) -> Family {
        match self {
            Framework::Pytest | Framework::Unittest => Family::Python,
            Framework::Cargo => Family::Cargo,
            Framework::NodeTest | Framework::Jest | Framework::Vitest | Framework::Mocha => {
                Family::Node
            }
            Framework::Go => Family::Go,
        }
    }
}

impl fmt::Display for Framework {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A recorded framework name no runner handles (`unknown`, or a name from a newer version).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no runner for framework {name}")]
pub struct UnknownFramework {
    pub name: String,
}

/// The framework a session runs with: known, or the name it recorded.
pub type SessionFramework = Result<Framework, UnknownFramework>;

/// The recorded name of a session's framework, known or not.
pub fn name_of(framework: &SessionFramework) -> &str {
    match framework {
        Ok(f) => f.as_str(),
        Err(unknown) => &unknown.name,
    }
}

/// A recorded name as a framework.
pub fn from_name(name: &str) -> SessionFramework {
    Framework::parse(name).ok_or_else(|| UnknownFramework {
        name: name.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_as_session_files_keep_them() {
        for f in Framework::ALL {
            assert_eq!(Framework::parse(f.as_str()), Some(f));
            let json = serde_json::to_value(f).unwrap();
            assert_eq!(json, f.as_str());
            assert_eq!(serde_json::from_value::<Framework>(json).unwrap(), f);
        }
        assert_eq!(Framework::NodeTest.as_str(), "node");
        assert_eq!(Framework::parse(UNKNOWN), None);
        let unknown = from_name(UNKNOWN);
        assert_eq!(name_of(&unknown), "unknown");
        assert_eq!(
            unknown.unwrap_err().to_string(),
            "no runner for framework unknown"
        );
    }
}
