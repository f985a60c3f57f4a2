//! Which file, line and describe blocks each JUnit case belongs to, and the ids built from them.

use std::path::Path;

use serde::Deserialize;

use super::ctx::Ctx;
use super::{STDERR_LIMIT, TESTS_DIR};
use crate::testing::report::TestCase;

/// One line of the attribution reporter: a JUnit leaf, or a file's stderr.
#[derive(Deserialize)]
#[serde(untagged)]
enum Record {
    Leaf {
        name: String,
        file: Option<String>,
        line: Option<u32>,
        suites: Vec<String>,
    },
    Stderr {
        stderr: String,
        text: String,
    },
}

impl Ctx<'_> {
    /// Gives each node case its file, line and an id unique across files and describe blocks:
    /// `<file>::<suite> > <test>` (file relative to the layer's test folder). A file that failed
    /// to load (its "test" is named by its absolute path) gets the file alone as id and its
    /// stderr as evidence. Cases stay as parse_junit made them when the leaves do not line up.
    pub(super) fn attribute(&self, cases: &mut [TestCase], path: &Path) {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let records: Vec<Record> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let mut leaves = Vec::new();
        let mut stderr = std::collections::HashMap::new();
        for record in records {
            match record {
                Record::Leaf {
                    name,
                    file,
                    line,
                    suites,
                } => leaves.push((name, file, line, suites)),
                Record::Stderr { stderr: file, text } => {
                    stderr.insert(file, text);
                }
            }
        }
        let aligned = leaves.len() == cases.len()
            && leaves.iter().zip(cases.iter()).all(|(l, c)| l.0 == c.name);
        if !aligned {
            return;
        }
        for (case, (name, file, line, suites)) in cases.iter_mut().zip(leaves) {
            let Some(file) = file else { continue };
            let rel = self.rel(Path::new(&file));
            case.file = Some(rel.clone());
            case.line = line;
            if name == file {
                self.file_failure(case, &rel, stderr.get(&file));
            } else {
                case.id = test_id(&rel, &suites, &name);
            }
        }
    }

    /// A file whose top level failed (import error, uncaught exception): node reports it as one
    /// test named by its path, with "test failed" and no cause; the cause is on its stderr.
    pub(super) fn file_failure(&self, case: &mut TestCase, rel: &str, stderr: Option<&String>) {
        case.id = rel.to_string();
        case.name = rel.to_string();
        let Some(stderr) = stderr else { return };
        let stderr: String = stderr.chars().take(STDERR_LIMIT).collect();
        if let Some(error) = stderr.lines().find(|l| is_error_line(l)) {
            case.message = Some(error.trim().to_string());
        }
        let detail = case.detail.take().unwrap_or_default();
        case.detail = Some(format!("{}\n{detail}", stderr.trim_end()));
    }

    /// jest, vitest and mocha name the file themselves (file attribute, or vitest's classname):
    /// the same id shape as node's, `<file>::<suite> > <test>`, for the cases in our files.
    pub(super) fn attribute_by_report(&self, cases: &mut [TestCase]) {
        for case in cases.iter_mut() {
            let from_file = case.file.as_deref().and_then(|f| self.ours(f));
            let from_class = case.classname.as_deref().and_then(|c| self.ours(c));
            let Some(rel) = from_file.or(from_class.clone()) else {
                continue;
            };
            // vitest: classname is the file, name the suites and test already joined by " > ";
            // jest (as configured in `jest`) and mocha: classname is the enclosing suites.
            let title = match (&case.classname, from_class) {
                (Some(suites), None) => format!("{suites} > {}", case.name),
                _ => case.name.clone(),
            };
            // A file that failed to load is named by its path: the file alone is its id.
            case.id = match self.ours(&case.name) {
                Some(_) => rel.clone(),
                None => format!("{rel}::{title}"),
            };
            case.file = Some(rel);
        }
    }

    /// The layer-relative name of one of our generated files, from an absolute or copy-relative
    /// path; None for any other file.
    pub(super) fn ours(&self, path: &str) -> Option<String> {
        let copy = self.copy.to_string_lossy();
        let path = path
            .strip_prefix(&*copy)
            .map_or(path, |p| p.trim_start_matches('/'));
        let prefix = format!("{TESTS_DIR}/{}/", self.spec.layer);
        path.strip_prefix(&prefix).map(str::to_string)
    }
}

/// `SyntaxError: ...`, `Error [ERR_MODULE_NOT_FOUND]: ...`, `ReferenceError: ...`.
pub(super) fn is_error_line(line: &str) -> bool {
    let head = line.trim_start().split(':').next().unwrap_or("");
    let word = head.split_whitespace().next().unwrap_or("");
    (word.ends_with("Error") || word.ends_with("Exception")) && line.contains(':')
}

/// `<file>::<suite> > <suite> > <test>`.
pub(super) fn test_id(rel: &str, suites: &[String], name: &str) -> String {
    let mut path: Vec<&str> = suites.iter().map(String::as_str).collect();
    path.push(name);
    format!("{rel}::{}", path.join(" > "))
}
