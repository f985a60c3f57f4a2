//! The session's shared board (`discoveries.ndjson`, see `scenario::board`): what the roles
//! learn of the project's tests (their conventions, fixtures, the patterns written) and what
//! blocked a layer, one record per key, read by the generator's next rounds and agent prompts.

use std::path::Path;

use crate::scenario::board::{self, Discovery};

/// The board's file in the session.
fn file(session: &Path) -> std::path::PathBuf {
    session.join(board::FILE)
}

/// Adds a record (a duplicate key is merged away); a board that cannot be written is only a
/// lost hint, never a failed task.
pub(crate) fn add(session: &Path, by: &str, d: &Discovery) {
    let _ = board::append(&file(session), by, d);
}

/// The project's own test conventions and fixtures, from its test files and conftest.py files.
pub(crate) fn note_project(session: &Path, repo: &Path, by: &str) {
    let files = crate::testing::detect::walk(repo);
    let tests: Vec<String> = files
        .iter()
        .filter(|p| p.ends_with(".py") && crate::testing::detect::test_pattern(p).is_some())
        .filter_map(|p| std::fs::read_to_string(repo.join(p)).ok())
        .collect();
    if !tests.is_empty() {
        let all = tests.join("\n");
        let describe_style = if all.contains("unittest.TestCase") {
            "unittest TestCase classes"
        } else if all.contains("\nclass Test") {
            "pytest classes (class Test...)"
        } else {
            "pytest functions (def test_...)"
        };
        let mut libs = vec!["plain assert"];
        if all.contains("pytest.raises") {
            libs.push("pytest.raises");
        }
        if all.contains("self.assert") {
            libs.push("unittest assertions");
        }
        let import_pattern = all
            .lines()
            .find(|l| l.starts_with("from ") && !l.contains("pytest") && !l.contains("unittest"))
            .unwrap_or("")
            .to_string();
        add(
            session,
            by,
            &Discovery::Convention {
                describe_style: describe_style.into(),
                assertion_lib: libs.join(", "),
                import_pattern,
            },
        );
    }
    for conftest in files.iter().filter(|p| p.ends_with("conftest.py")) {
        let Ok(text) = std::fs::read_to_string(repo.join(conftest)) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if !l.trim_start().starts_with("@pytest.fixture") {
                continue;
            }
            if let Some(name) = lines[i + 1..]
                .iter()
                .find_map(|d| d.trim_start().strip_prefix("def "))
                .and_then(|d| d.split('(').next())
            {
                add(
                    session,
                    by,
                    &Discovery::Fixture {
                        name: name.trim().to_string(),
                        schema: "pytest fixture".into(),
                        file: conftest.clone(),
                    },
                );
            }
        }
    }
}

/// The merged board as a prompt section (empty when there is nothing on it).
pub(crate) fn prompt_section(session: &Path) -> String {
    let records = read(session);
    if records.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "DISCOVERIES (the session's shared board, discoveries.ndjson; follow its conventions, use its fixtures):\n",
    );
    for r in &records {
        let line = match &r.discovery {
            Discovery::Convention {
                describe_style,
                assertion_lib,
                import_pattern,
            } => format!(
                "convention: {describe_style}; assertions: {assertion_lib}; imports like `{import_pattern}`"
            ),
            Discovery::Fixture { name, file, .. } => format!("fixture `{name}` in {file}"),
            Discovery::TestPattern {
                name, description, ..
            } => format!("pattern {name}: {description}"),
            Discovery::MockSetup { target, file, .. } => format!("mock of {target} in {file}"),
            Discovery::Blocker {
                issue, severity, layer,
            } => format!("blocker ({severity}, {layer}): {issue}"),
        };
        out.push_str(&format!("- {line}\n"));
    }
    out.push('\n');
    out
}

/// One record per key, the latest.
pub(crate) fn read(session: &Path) -> Vec<board::Record> {
    board::merged(&file(session)).unwrap_or_default()
}
