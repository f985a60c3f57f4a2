//! How an agent writes pytest tests for a Python project.

use crate::family::agent::{Conventions, UnsafeCall};

pub(super) fn conventions() -> Conventions {
    Conventions {
        language: "Python",
        framework: "pytest".into(),
        fence: "python",
        comment: "#",
        file_name: "test_<name>.py".into(),
        idioms: vec![
            "Tests import the project normally (`from package.module import name`) and use pytest only; every test asserts something.".into(),
            "Write files only under pytest's `tmp_path`.".into(),
        ],
        is_test_file,
    }
}

/// pytest collects `test_*.py` and `*_test.py`.
fn is_test_file(name: &str) -> bool {
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}

/// Python's audit hook sees what a Python test does, and the file-system watch what native code
/// and children do: no static check is needed in front of them.
pub(super) fn unsafe_calls(_source: &str) -> Vec<UnsafeCall> {
    Vec::new()
}
