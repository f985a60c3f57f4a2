//! The plan's rows and `scenarios.csv`: written with the `csv` crate in the seed's column order,
//! read back tolerantly (a user may edit the file between `--dry-run` and `resume`), and
//! validated with every problem named by its row.

use std::collections::HashMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::util::{csv_text, csv_text_read, FileError};

/// The file name problems are reported against.
pub const FILE: &str = "scenarios.csv";

/// The columns, in the order they are written: the seed's, then `source`.
pub const COLUMNS: [&str; 20] = [
    "id",
    "name",
    "layer",
    "priority",
    "category",
    "target_file",
    "test_file",
    "description",
    "test_cases",
    "fixtures",
    "req_ref",
    "infrastructure_hints",
    "prev_context",
    "status",
    "red_result",
    "classification",
    "evidence",
    "findings",
    "error",
    "source",
];

/// Columns a hand-edited file must keep; every other one is defaulted when missing.
pub const REQUIRED_COLUMNS: [&str; 3] = ["id", "name", "layer"];

/// How much a scenario matters. Ordered most important first, so an ascending sort puts
/// critical scenarios at the front.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    Critical,
    High,
    #[default]
    Medium,
    Low,
}

impl Priority {
    pub const ALL: [Priority; 4] = [
        Priority::Critical,
        Priority::High,
        Priority::Medium,
        Priority::Low,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Critical => "critical",
            Priority::High => "high",
            Priority::Medium => "medium",
            Priority::Low => "low",
        }
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A priority word that is none of critical, high, medium, low.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown priority '{0}' (expected critical, high, medium or low)")]
pub struct UnknownPriority(pub String);

impl FromStr for Priority {
    type Err = UnknownPriority;

    /// Case-insensitive, surrounding whitespace ignored.
    fn from_str(s: &str) -> Result<Priority, UnknownPriority> {
        let word = s.trim();
        Priority::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(word))
            .ok_or_else(|| UnknownPriority(word.to_string()))
    }
}

/// One row of `scenarios.csv`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scenario {
    /// `AT-NNN`.
    pub id: String,
    pub name: String,
    /// `L1`, `L2`, `L3`: the wave the scenario runs in.
    pub layer: String,
    pub priority: Priority,
    /// `api_contract`, `business_rule`, `state_transition`, `user_flow`, …
    pub category: String,
    /// The source file under test, relative to the repository; empty when not known yet.
    pub target_file: String,
    /// The test file to create, relative to the session's tests folder.
    pub test_file: String,
    pub description: String,
    /// One test per case (`;`-separated in the file).
    pub test_cases: Vec<String>,
    /// Mocks and fixtures the tests need (`;`-separated in the file).
    pub fixtures: Vec<String>,
    /// `REQ-001:AC-1`, `gap:<file>:<function>`, … or empty.
    pub req_ref: String,
    pub infrastructure_hints: String,
    pub prev_context: String,
    /// `pending` -> `written` -> `passed` | `failed` | `blocked`.
    pub status: String,
    /// `expected_fail`, `unexpected_fail`, `pass` or empty.
    pub red_result: String,
    /// `test_defect`, `code_defect`, `env_issue` or empty.
    pub classification: String,
    pub evidence: String,
    pub findings: String,
    pub error: String,
    /// Where the scenario came from: `spec`, `gap`, `code`, `debug_root_cause`,
    /// `fault_localisation`.
    pub source: String,
    /// The line of the file the row was read from (1-based, its first line when a field spans
    /// several); 0 for a row built in memory. Not a column.
    #[serde(skip)]
    pub line: usize,
}

impl Default for Scenario {
    fn default() -> Scenario {
        Scenario {
            id: String::new(),
            name: String::new(),
            layer: String::new(),
            priority: Priority::default(),
            category: String::new(),
            target_file: String::new(),
            test_file: String::new(),
            description: String::new(),
            test_cases: Vec::new(),
            fixtures: Vec::new(),
            req_ref: String::new(),
            infrastructure_hints: String::new(),
            prev_context: String::new(),
            status: "pending".to_string(),
            red_result: String::new(),
            classification: String::new(),
            evidence: String::new(),
            findings: String::new(),
            error: String::new(),
            source: String::new(),
            line: 0,
        }
    }
}

impl Scenario {
    /// The cell of `column` as written to the file (lists `;`-joined); None for an unknown
    /// column.
    pub fn cell(&self, column: &str) -> Option<String> {
        let s = |v: &String| Some(v.clone());
        match column {
            "id" => s(&self.id),
            "name" => s(&self.name),
            "layer" => s(&self.layer),
            "priority" => Some(self.priority.as_str().to_string()),
            "category" => s(&self.category),
            "target_file" => s(&self.target_file),
            "test_file" => s(&self.test_file),
            "description" => s(&self.description),
            "test_cases" => Some(self.test_cases.join(";")),
            "fixtures" => Some(self.fixtures.join(";")),
            "req_ref" => s(&self.req_ref),
            "infrastructure_hints" => s(&self.infrastructure_hints),
            "prev_context" => s(&self.prev_context),
            "status" => s(&self.status),
            "red_result" => s(&self.red_result),
            "classification" => s(&self.classification),
            "evidence" => s(&self.evidence),
            "findings" => s(&self.findings),
            "error" => s(&self.error),
            "source" => s(&self.source),
            _ => None,
        }
    }

    /// The line problems name: where it was read from, else where `write_csv` puts row
    /// `index` (header on line 1) when no field spans lines.
    fn line_or(&self, index: usize) -> usize {
        if self.line > 0 {
            self.line
        } else {
            index + 2
        }
    }
}

/// What is wrong with one row.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("unknown layer '{layer}' (expected {})", expected.join(", "))]
    UnknownLayer {
        layer: String,
        expected: Vec<String>,
    },
    #[error("duplicate id (first at line {first_line})")]
    DuplicateId { first_line: usize },
    #[error("bad id '{0}' (expected AT- and digits, like AT-001)")]
    BadId(String),
    #[error("{0}")]
    UnknownPriority(UnknownPriority),
    #[error("target_file '{0}' does not exist in the repository")]
    MissingTarget(String),
    #[error("{column} '{path}' must be a relative path inside the repository")]
    PathOutside { column: &'static str, path: String },
    #[error("empty name")]
    EmptyName,
    #[error("{fields} fields where the header has {columns} (a stray quote or separator?)")]
    ExtraFields { fields: usize, columns: usize },
    /// The scenario's own tests would be written over a file the generator's search writes.
    #[error("test_file '{path}' is the file the generator writes for {what}: the scenario's tests would replace the generator's (name a file of the scenario's own, like {suggested})")]
    GeneratorFile {
        path: String,
        what: String,
        suggested: String,
    },
}

/// A problem with the row on `line` of `file`, whose id is `id`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line} ({}): {problem}", if id.is_empty() { "no id" } else { id.as_str() })]
pub struct RowProblem {
    pub file: String,
    pub line: usize,
    pub id: String,
    pub problem: Problem,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("reading {}: {cause}", path.display())]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// Not CSV at all (bad UTF-8, a broken quote); the csv error names the record and line.
    #[error("{}: {cause}", path.display())]
    Csv { path: PathBuf, cause: csv::Error },
    #[error(transparent)]
    Write(#[from] FileError),
    #[error("{}:1: missing column(s) {} in the header", path.display(), columns.join(", "))]
    MissingColumns { path: PathBuf, columns: Vec<String> },
    /// Every problem found, one per line.
    #[error("{} problem(s) in the scenarios:\n{}", problems.len(), lines(problems))]
    Invalid { problems: Vec<RowProblem> },
}

fn lines(problems: &[RowProblem]) -> String {
    problems
        .iter()
        .map(|p| format!("  {p}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes `rows` to `path` (header in [`COLUMNS`] order, lists `;`-joined) so that a reader
/// sees the old file or the new one, never half of one.
pub fn write_csv(path: &Path, rows: &[Scenario]) -> Result<(), PlanError> {
    let csv_err = |cause| PlanError::Csv {
        path: path.to_path_buf(),
        cause,
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(COLUMNS).map_err(csv_err)?;
    for row in rows {
        // Every cell is text; one a spreadsheet would run as a formula is neutralised.
        let cells = COLUMNS.iter().map(|c| row.cell(c).unwrap_or_default());
        w.write_record(cells.map(|c| csv_text(&c).into_owned()))
            .map_err(csv_err)?;
    }
    let bytes = w.into_inner().map_err(|e| csv_err(e.into_error().into()))?;
    crate::util::atomic_write(path, &bytes)?;
    Ok(())
}

/// Reads the plan, changes it and writes it back under an exclusive lock (a `.lock` file beside
/// it), so layers that run at once (the comprehensive pipeline) never lose each other's updates.
pub fn update<T>(
    path: &Path,
    change: impl FnOnce(&mut Vec<Scenario>) -> T,
) -> Result<T, PlanError> {
    let lock_path = path.with_extension("csv.lock");
    let lock_err = |cause| PlanError::Read {
        path: lock_path.clone(),
        cause,
    };
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(lock_err)?;
    lock.lock().map_err(lock_err)?;
    let mut rows = read_csv(path)?;
    let out = change(&mut rows);
    write_csv(path, &rows)?;
    Ok(out)
}

/// Reads `scenarios.csv` as a user may have left it: columns found by header name in any order
/// (case and surrounding whitespace ignored), unknown columns ignored, missing optional columns
/// and short rows defaulted, cells trimmed, empty lines skipped, `id` and `layer` upper-cased.
/// Rows with an unknown priority are all reported at once.
pub fn read_csv(path: &Path) -> Result<Vec<Scenario>, PlanError> {
    let (rows, problems) = read_rows(path)?;
    if problems.is_empty() {
        Ok(rows)
    } else {
        Err(PlanError::Invalid { problems })
    }
}

/// [`read_csv`] then [`validate`], the problems of both reported together.
pub fn load(path: &Path, repo: &Path, layers: &[&str]) -> Result<Vec<Scenario>, PlanError> {
    load_checked(path, repo, layers, |_| None)
}

/// [`load`] with one more check of each row, by what knows more than the plan (the files the
/// generator writes).
pub fn load_checked(
    path: &Path,
    repo: &Path,
    layers: &[&str],
    more: impl Fn(&Scenario) -> Option<Problem>,
) -> Result<Vec<Scenario>, PlanError> {
    let (rows, mut problems) = read_rows(path)?;
    let file = display_name(path);
    problems.extend(check(&rows, repo, layers, &file));
    for (index, row) in rows.iter().enumerate() {
        if let Some(problem) = more(row) {
            problems.push(RowProblem {
                file: file.clone(),
                line: row.line_or(index),
                id: row.id.clone(),
                problem,
            });
        }
    }
    problems.sort_by_key(|p| p.line);
    if problems.is_empty() {
        Ok(rows)
    } else {
        Err(PlanError::Invalid { problems })
    }
}

fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| FILE.to_string())
}

fn read_rows(path: &Path) -> Result<(Vec<Scenario>, Vec<RowProblem>), PlanError> {
    let bytes = crate::util::read_regular(path).map_err(|cause| PlanError::Read {
        path: path.to_path_buf(),
        cause,
    })?;
    let csv_err = |cause| PlanError::Csv {
        path: path.to_path_buf(),
        cause,
    };
    let mut rd = csv::ReaderBuilder::new()
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes.as_slice());
    let columns = rd.headers().map_err(csv_err)?.len();
    let header: HashMap<String, usize> = {
        let mut map = HashMap::new();
        for (i, h) in rd.headers().map_err(csv_err)?.iter().enumerate() {
            let name = h.trim_start_matches('\u{feff}').trim().to_ascii_lowercase();
            // The first of two same-named columns wins.
            map.entry(name).or_insert(i);
        }
        map
    };
    let missing: Vec<String> = REQUIRED_COLUMNS
        .iter()
        .filter(|c| !header.contains_key(**c))
        .map(|c| c.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(PlanError::MissingColumns {
            path: path.to_path_buf(),
            columns: missing,
        });
    }
    let file = display_name(path);
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    // Lines are counted as the records go (counting from the start each time is quadratic).
    let (mut counted_to, mut newlines) = (0usize, 0usize);
    for record in rd.records() {
        let record = record.map_err(csv_err)?;
        if record.iter().all(str::is_empty) {
            continue;
        }
        // The csv crate's position is where it began reading, before the empty lines it
        // skipped (and its line count leaves them out): count lines up to the record's text.
        let line = record.position().map_or(0, |p| {
            let mut at = (p.byte() as usize).min(bytes.len());
            while at < bytes.len() && matches!(bytes[at], b'\n' | b'\r') {
                at += 1;
            }
            if at >= counted_to {
                newlines += bytes[counted_to..at]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
                counted_to = at;
            }
            1 + newlines
        });
        if record.len() > columns {
            problems.push(RowProblem {
                file: file.clone(),
                line,
                id: record
                    .get(header.get("id").copied().unwrap_or(0))
                    .unwrap_or("")
                    .to_string(),
                problem: Problem::ExtraFields {
                    fields: record.len(),
                    columns,
                },
            });
        }
        // The `'` writing put before a formula-like cell comes off again.
        let get = |column: &str| -> String {
            let cell = header
                .get(column)
                .and_then(|&i| record.get(i))
                .unwrap_or_default();
            csv_text_read(cell).to_string()
        };
        let list = |column: &str| -> Vec<String> {
            get(column)
                .split(';')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        };
        let id = get("id").to_ascii_uppercase();
        let priority = match get("priority") {
            p if p.is_empty() => Priority::default(),
            p => p.parse().unwrap_or_else(|e| {
                problems.push(RowProblem {
                    file: file.clone(),
                    line,
                    id: id.clone(),
                    problem: Problem::UnknownPriority(e),
                });
                Priority::default()
            }),
        };
        let status = match get("status") {
            s if s.is_empty() => "pending".to_string(),
            s => s,
        };
        rows.push(Scenario {
            id,
            name: get("name"),
            layer: get("layer").to_ascii_uppercase(),
            priority,
            category: get("category"),
            target_file: get("target_file"),
            test_file: get("test_file"),
            description: get("description"),
            test_cases: list("test_cases"),
            fixtures: list("fixtures"),
            req_ref: get("req_ref"),
            infrastructure_hints: get("infrastructure_hints"),
            prev_context: get("prev_context"),
            status,
            red_result: get("red_result"),
            classification: get("classification"),
            evidence: get("evidence"),
            findings: get("findings"),
            error: get("error"),
            source: get("source"),
            line,
        });
    }
    Ok((rows, problems))
}

/// Checks rows (as read, or as built) against the repository and the pipeline's layers; every
/// problem is reported, each naming its row's line and id.
pub fn validate(rows: &[Scenario], repo: &Path, layers: &[&str]) -> Result<(), PlanError> {
    let problems = check(rows, repo, layers, FILE);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(PlanError::Invalid { problems })
    }
}

fn check(rows: &[Scenario], repo: &Path, layers: &[&str], file: &str) -> Vec<RowProblem> {
    let mut problems = Vec::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (index, row) in rows.iter().enumerate() {
        let line = row.line_or(index);
        let mut problem = |problem| {
            problems.push(RowProblem {
                file: file.to_string(),
                line,
                id: row.id.clone(),
                problem,
            })
        };
        if !is_scenario_id(&row.id) {
            problem(Problem::BadId(row.id.clone()));
        } else if let Some(&first_line) = seen.get(row.id.as_str()) {
            problem(Problem::DuplicateId { first_line });
        } else {
            seen.insert(&row.id, line);
        }
        if row.name.trim().is_empty() {
            problem(Problem::EmptyName);
        }
        if !layers.contains(&row.layer.as_str()) {
            problem(Problem::UnknownLayer {
                layer: row.layer.clone(),
                expected: layers.iter().map(|l| l.to_string()).collect(),
            });
        }
        let target = row.target_file.trim();
        if !target.is_empty() {
            if !is_inside(target) {
                problem(Problem::PathOutside {
                    column: "target_file",
                    path: target.to_string(),
                });
            } else if !repo.join(target).exists() {
                problem(Problem::MissingTarget(target.to_string()));
            }
        }
        let test = row.test_file.trim();
        if !test.is_empty() && !is_inside(test) {
            problem(Problem::PathOutside {
                column: "test_file",
                path: test.to_string(),
            });
        }
    }
    problems
}

/// `AT-` and one or more ASCII digits.
pub fn is_scenario_id(id: &str) -> bool {
    id.strip_prefix("AT-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A relative path that stays below its root (no `..`, no root, no prefix).
fn is_inside(path: &str) -> bool {
    Path::new(path)
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, name: &str, layer: &str, target: &str) -> Scenario {
        Scenario {
            id: id.into(),
            name: name.into(),
            layer: layer.into(),
            priority: Priority::High,
            category: "business_rule".into(),
            target_file: target.into(),
            test_file: format!("tests/L1-unit/test_{}.py", id.to_lowercase()),
            description: "d, with a comma and \"quotes\"".into(),
            test_cases: vec!["case one".into(), "case two".into()],
            fixtures: vec!["stock".into()],
            req_ref: "REQ-001:AC-1".into(),
            source: "spec".into(),
            ..Scenario::default()
        }
    }

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/shop.py"), "").unwrap();
        dir
    }

    #[test]
    fn priority_parses_case_insensitively_and_names_the_bad_word() {
        assert_eq!(" High ".parse::<Priority>().unwrap(), Priority::High);
        assert_eq!("CRITICAL".parse::<Priority>().unwrap(), Priority::Critical);
        let e = "urgent".parse::<Priority>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown priority 'urgent' (expected critical, high, medium or low)"
        );
        assert_eq!(serde_json::to_string(&Priority::Low).unwrap(), "\"low\"");
        let mut ps = [Priority::Low, Priority::Critical, Priority::Medium];
        ps.sort();
        assert_eq!(ps[0], Priority::Critical);
    }

    #[test]
    fn csv_round_trip_in_the_seed_column_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let rows = vec![
            row("AT-001", "Discount", "L1", "src/shop.py"),
            row("AT-002", "Checkout flow", "L2", ""),
        ];
        write_csv(&path, &rows).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(
            "id,name,layer,priority,category,target_file,test_file,description,test_cases,\
             fixtures,req_ref,infrastructure_hints,prev_context,status,red_result,\
             classification,evidence,findings,error,source\n"
        ));
        assert!(text.contains("case one;case two"));
        let back = read_csv(&path).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!((back[0].line, back[1].line), (2, 3));
        for (a, b) in back.iter().zip(&rows) {
            assert_eq!(
                Scenario {
                    line: 0,
                    ..a.clone()
                },
                *b
            );
        }
        // No temp file left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_hand_edited_file_reads_back_tolerantly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        write_csv(&path, &[row("AT-001", "Discount", "L1", "src/shop.py")]).unwrap();
        // The user bumps the priority by hand.
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replacen(",high,", ",Critical,", 1)).unwrap();
        assert_eq!(read_csv(&path).unwrap()[0].priority, Priority::Critical);

        // Reordered and unknown columns, missing optional ones, whitespace, an empty line, a
        // short row, a field spanning two lines.
        std::fs::write(
            &path,
            "\u{feff} Layer , notes,ID,name,priority,test_cases\n\
             l2, mine , at-007 ,  Checkout  , low, a ; b ;\n\
             \n\
             L1,,AT-008,\"Two\nlines\",,\n\
             L1,,AT-009,Short\n",
        )
        .unwrap();
        let rows = read_csv(&path).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].id, "AT-007");
        assert_eq!(rows[0].layer, "L2");
        assert_eq!(rows[0].name, "Checkout");
        assert_eq!(rows[0].priority, Priority::Low);
        assert_eq!(rows[0].test_cases, vec!["a", "b"]);
        assert_eq!(rows[0].status, "pending");
        assert_eq!(rows[0].line, 2);
        assert_eq!(rows[1].name, "Two\nlines");
        assert_eq!(rows[1].priority, Priority::Medium);
        assert_eq!(rows[1].line, 4);
        assert_eq!((rows[2].name.as_str(), rows[2].line), ("Short", 6));
        assert!(rows[2].test_cases.is_empty());
    }

    #[test]
    fn unknown_priorities_are_all_reported_at_read_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(
            &path,
            "id,name,layer,priority\nAT-001,a,L1,urgent\nAT-002,b,L1,high\nAT-003,c,L1,p0\n",
        )
        .unwrap();
        let PlanError::Invalid { problems } = read_csv(&path).unwrap_err() else {
            panic!("not Invalid")
        };
        let shown: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            shown,
            [
                "scenarios.csv:2 (AT-001): unknown priority 'urgent' (expected critical, high, medium or low)",
                "scenarios.csv:4 (AT-003): unknown priority 'p0' (expected critical, high, medium or low)",
            ]
        );
    }

    #[test]
    fn a_missing_required_column_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, "id,title,priority\nAT-001,a,high\n").unwrap();
        let e = read_csv(&path).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("scenarios.csv:1: missing column(s) name, layer in the header"),
            "{e}"
        );
    }

    #[test]
    fn validation_names_every_bad_row() {
        let repo = repo();
        let mut rows = vec![
            row("AT-001", "ok", "L1", "src/shop.py"),
            row("AT-002", "bad layer", "L9", "src/shop.py"),
            row("AT-001", "dup", "L1", ""),
            row("AT-3", "", "L2", "src/gone.py"),
            row("T-4", "bad id", "L1", "../outside.py"),
        ];
        rows[1].test_file = "/etc/passwd".into();
        let e = validate(&rows, repo.path(), &["L1", "L2", "L3"]).unwrap_err();
        let PlanError::Invalid { problems } = &e else {
            panic!("not Invalid")
        };
        let shown: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            shown,
            [
                "scenarios.csv:3 (AT-002): unknown layer 'L9' (expected L1, L2, L3)",
                "scenarios.csv:3 (AT-002): test_file '/etc/passwd' must be a relative path inside the repository",
                "scenarios.csv:4 (AT-001): duplicate id (first at line 2)",
                "scenarios.csv:5 (AT-3): empty name",
                "scenarios.csv:5 (AT-3): target_file 'src/gone.py' does not exist in the repository",
                "scenarios.csv:6 (T-4): bad id 'T-4' (expected AT- and digits, like AT-001)",
                "scenarios.csv:6 (T-4): target_file '../outside.py' must be a relative path inside the repository",
            ]
        );
        assert!(e
            .to_string()
            .starts_with("7 problem(s) in the scenarios:\n  scenarios.csv:3"));
        assert!(validate(&rows[..1], repo.path(), &["L1"]).is_ok());
    }

    #[test]
    fn load_reports_read_and_validation_problems_together_by_file_line() {
        let repo = repo();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(
            &path,
            "id,name,layer,priority,target_file\n\
             AT-001,a,L1,high,src/shop.py\n\
             \n\
             AT-002,b,L1,someday,src/shop.py\n\
             AT-001,c,L4,low,\n",
        )
        .unwrap();
        let e = load(&path, repo.path(), &["L1", "L2"]).unwrap_err();
        let PlanError::Invalid { problems } = &e else {
            panic!("not Invalid")
        };
        let shown: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            shown,
            [
                "scenarios.csv:4 (AT-002): unknown priority 'someday' (expected critical, high, medium or low)",
                "scenarios.csv:5 (AT-001): duplicate id (first at line 2)",
                "scenarios.csv:5 (AT-001): unknown layer 'L4' (expected L1, L2)",
            ]
        );
    }

    #[test]
    fn a_row_with_more_fields_than_the_header_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(
            &path,
            "id,name,layer\nAT-001,one,L1\nAT-002,\"two\",L1,stray\n",
        )
        .unwrap();
        let err = load(&path, dir.path(), &["L1"]).unwrap_err().to_string();
        assert!(
            err.contains("scenarios.csv:3 (AT-002): 4 fields where the header has 3"),
            "{err}"
        );
    }

    #[test]
    fn updates_from_two_layers_at_once_are_both_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(
            &path,
            "id,name,layer,findings\nAT-001,one,L1,\nAT-002,two,L2,\n",
        )
        .unwrap();
        std::thread::scope(|s| {
            for (id, layer) in [("AT-001", "L1"), ("AT-002", "L2")] {
                let path = &path;
                s.spawn(move || {
                    for n in 0..40 {
                        update(path, |rows| {
                            let row = rows.iter_mut().find(|r| r.id == id).unwrap();
                            row.findings = format!("{layer} {n}");
                        })
                        .unwrap();
                    }
                });
            }
        });
        let rows = read_csv(&path).unwrap();
        assert_eq!(rows[0].findings, "L1 39");
        assert_eq!(rows[1].findings, "L2 39");
    }
}
