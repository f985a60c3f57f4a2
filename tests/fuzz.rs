//! Property-based fuzzing of every parser that reads what tools or users write: the JSONL log
//! reader, role-file frontmatter, JUnit XML, LCOV, Cobertura, coverage.py JSON, libtest output,
//! and the task-graph validator. Inputs are the seeds in `fuzz/corpus/<target>/` mutated
//! (bytes flipped, inserted, deleted, spliced, truncated) or made from nothing. The property: no
//! panic, a bounded time, and an error that names the file; the validator must also agree with a
//! reference implementation. A failure is kept in `fuzz/regressions/<target>.txt` and replayed
//! first on every later run.
//!
//! CI runs a smoke run (`TT_FUZZ_CASES`, default 200 per target); a long run:
//! `TT_FUZZ_CASES=200000 cargo test --release fuzz::` (see BENCHMARKS.md).

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use team_testing::roles::{RoleSource, RoleSpec};
use team_testing::tasks::{GraphError, Task, TaskGraph};

fn cases() -> u32 {
    std::env::var("TT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

fn config(target: &str) -> Config {
    let file: &'static str = Box::leak(
        format!(
            "{}/fuzz/regressions/{target}.txt",
            env!("CARGO_MANIFEST_DIR")
        )
        .into_boxed_str(),
    );
    Config {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(file))),
        ..Config::default()
    }
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Splice(usize, usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    // Bytes that matter to these formats, and any byte.
    let token = prop_oneof![
        Just(b"<".to_vec()),
        Just(b">".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"&".to_vec()),
        Just(b"\n".to_vec()),
        Just(b",".to_vec()),
        Just(b":".to_vec()),
        Just(b"{".to_vec()),
        Just(b"}".to_vec()),
        Just(b"-1".to_vec()),
        Just(b"99999999999999999999".to_vec()),
        Just(b"---\n".to_vec()),
        Just(b"end_of_record\n".to_vec()),
        Just("\u{feff}é".as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 1..8),
    ];
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Flip(i, b)),
        (any::<usize>(), token).prop_map(|(i, t)| Edit::Insert(i, t)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<usize>(), any::<usize>(), 1usize..128).prop_map(|(a, b, n)| Edit::Splice(a, b, n)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let len = bytes.len().max(1);
        match e {
            Edit::Flip(i, b) => {
                if !bytes.is_empty() {
                    let i = i % bytes.len();
                    bytes[i] = *b;
                }
            }
            Edit::Insert(i, t) => {
                let i = i % (bytes.len() + 1);
                bytes.splice(i..i, t.iter().copied());
            }
            Edit::Delete(i, n) => {
                let i = i % len;
                let end = (i + n).min(bytes.len());
                if i < end {
                    bytes.drain(i..end);
                }
            }
            Edit::Splice(from, to, n) => {
                if !bytes.is_empty() {
                    let from = from % bytes.len();
                    let end = (from + n).min(bytes.len());
                    let piece = bytes[from..end].to_vec();
                    let to = to % (bytes.len() + 1);
                    bytes.splice(to..to, piece);
                }
            }
            Edit::Truncate(i) => bytes.truncate(i % len),
        }
    }
    bytes
}

/// A seed of `target` with random edits, or random bytes.
fn input(target: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let seeds = corpus(target);
    let n = seeds.len();
    prop_oneof![
        4 => (0..n, prop::collection::vec(edit(), 0..12))
            .prop_map(move |(i, edits)| apply(seeds[i].clone(), &edits)),
        1 => prop::collection::vec(any::<u8>(), 0..512),
    ]
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// An error must say which file it is about.
fn names(err: impl std::fmt::Display, file: &str) -> Result<(), TestCaseError> {
    let e = err.to_string();
    prop_assert!(e.contains(file), "error without the file name: {e}");
    Ok(())
}

#[test]
fn junit_parser() {
    let path = Path::new("results/junit-001.xml");
    proptest!(config("junit"), |(bytes in input("junit"))| {
        if let Err(e) = team_testing::testing::junit::parse_junit_str(&text(&bytes), path) {
            names(e, "junit-001.xml")?;
        }
    });
}

#[test]
fn lcov_parser() {
    let path = Path::new("results/lcov-001.info");
    proptest!(config("lcov"), |(bytes in input("lcov"))| {
        match team_testing::testing::lcov::parse_lcov_str(&text(&bytes), path) {
            Ok(report) => {
                for f in &report.files {
                    prop_assert!(f.lines_covered <= f.lines_total, "{f:?}");
                }
            }
            Err(e) => names(e, "lcov-001.info")?,
        }
    });
}

#[test]
fn cobertura_parser() {
    let path = Path::new("results/coverage-001.xml");
    proptest!(config("cobertura"), |(bytes in input("cobertura"))| {
        match team_testing::testing::cobertura::parse_cobertura_str(&text(&bytes), path) {
            Ok(report) => {
                for f in &report.files {
                    prop_assert!(f.lines_covered <= f.lines_total, "{f:?}");
                }
            }
            Err(e) => names(e, "coverage-001.xml")?,
        }
    });
}

#[test]
fn coverage_json_parser() {
    let path = Path::new("results/coverage-001.json");
    proptest!(config("coverage-json"), |(bytes in input("coverage-json"))| {
        match team_testing::family::python::coveragepy::parse_coveragepy_json_str(&text(&bytes), path) {
            Ok(report) => {
                for f in &report.files {
                    prop_assert!(f.lines_covered <= f.lines_total, "{f:?}");
                }
            }
            Err(e) => names(e, "coverage-001.json")?,
        }
    });
}

#[test]
fn libtest_output_parser() {
    proptest!(config("libtest"), |(bytes in input("libtest"))| {
        let run = team_testing::family::rust::libtest::parse_libtest(&text(&bytes));
        let _ = format!("{run:?}");
    });
}

#[test]
fn role_frontmatter_parser() {
    let path = Path::new("roles/fuzzed/role.md");
    proptest!(config("frontmatter"), |(bytes in input("frontmatter"))| {
        let parsed = RoleSpec::parse(&text(&bytes), path, RoleSource::RolesDir(path.into()));
        if let Err(e) = parsed {
            names(e, "roles/fuzzed/role.md")?;
        }
    });
}

#[test]
fn jsonl_log_reader() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("messages.jsonl");
    proptest!(config("jsonl"), |(bytes in input("jsonl"))| {
        std::fs::write(&log, &bytes).unwrap();
        let (records, bad) = team_testing::bus::reader::read_all(&log).unwrap();
        // Every line is either a record or reported by number; none is lost silently.
        // Blank as the reader counts it: ASCII whitespace only (a vertical tab is no JSON
        // whitespace, so a line of one is garbage).
        let lines = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
            .count();
        prop_assert_eq!(records.len() + bad.len(), lines);
        let mut last = 0;
        for b in &bad {
            prop_assert!(b.line > last);
            last = b.line;
        }
    });
}

/// (id, blockedBy) graphs: ids T0..Tn, edges to any id (some dangling), duplicates now and then.
fn graph() -> impl Strategy<Value = Vec<(String, Vec<String>)>> {
    (1usize..24).prop_flat_map(|n| {
        prop::collection::vec((0..n + 2, prop::collection::vec(0..n + 3, 0..4)), n).prop_map(
            move |rows| {
                rows.into_iter()
                    .enumerate()
                    .map(|(i, (dup, deps))| {
                        // Now and then a duplicate id.
                        let id = if dup == n + 1 {
                            "T0".to_string()
                        } else {
                            format!("T{i}")
                        };
                        (id, deps.into_iter().map(|d| format!("T{d}")).collect())
                    })
                    .collect()
            },
        )
    })
}

/// What the validator must say, computed the slow, obvious way.
fn reference(rows: &[(String, Vec<String>)]) -> &'static str {
    let ids: Vec<&String> = rows.iter().map(|r| &r.0).collect();
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            return "duplicate";
        }
    }
    if rows
        .iter()
        .any(|(_, deps)| deps.iter().any(|d| !ids.contains(&d)))
    {
        return "dangling";
    }
    // A cycle: some task reaches itself.
    let index = |id: &str| ids.iter().position(|i| i.as_str() == id).unwrap();
    for start in 0..rows.len() {
        let mut seen = vec![false; rows.len()];
        let mut stack: Vec<usize> = rows[start].1.iter().map(|d| index(d)).collect();
        while let Some(i) = stack.pop() {
            if i == start {
                return "cycle";
            }
            if !std::mem::replace(&mut seen[i], true) {
                stack.extend(rows[i].1.iter().map(|d| index(d)));
            }
        }
    }
    "ok"
}

#[test]
fn task_graph_validator_agrees_with_a_reference() {
    proptest!(config("graph"), |(rows in graph())| {
        let tasks = rows
            .iter()
            .map(|(id, deps)| Task::new(id, id, "r", deps.clone()))
            .collect();
        let verdict = match TaskGraph::new(tasks).validate(|_| true) {
            Ok(()) => "ok",
            Err(GraphError::Duplicate(_)) => "duplicate",
            Err(GraphError::Dangling { .. }) => "dangling",
            Err(GraphError::Cycle { .. }) => "cycle",
            Err(other) => panic!("unexpected {other}"),
        };
        prop_assert_eq!(verdict, reference(&rows));
    });
}
