//! The tests of a layer's scenarios (scenarios.csv) the built-in Python generator writes beside
//! its search: each scenario whose test cases state a concrete check (`apply_discount(100, 10)
//! returns 90`, `take(1, 2) raises ValueError`, `can_fulfil(5, 5) is true`) gets its own file, at
//! the row's `test_file`, one test per case named after the scenario (`test_at_001_case_1`).
//! A case is written only when its call and value are plain literals: requirement text never
//! becomes code that could do anything but call the function under test.

use std::collections::BTreeSet;
use std::path::{Component, Path};

use crate::scenario::plan::{self, Scenario};
use crate::tasks::layer_code;
use crate::team::error::RoleError;
use crate::util::atomic_write;

/// Python's built-in exceptions a case may name without an import.
const BUILTIN_EXCEPTIONS: [&str; 16] = [
    "Exception",
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "ZeroDivisionError",
    "ArithmeticError",
    "LookupError",
    "RuntimeError",
    "AssertionError",
    "AttributeError",
    "NotImplementedError",
    "OverflowError",
    "PermissionError",
    "FileNotFoundError",
    "StopIteration",
];

/// One checkable case.
#[derive(Debug, Clone, PartialEq)]
enum Check {
    Equals(String),
    Raises(String),
    Truthy,
    Falsy,
}

#[derive(Debug, Clone, PartialEq)]
struct Case {
    /// The function's name as called (`apply_discount`).
    function: String,
    /// `apply_discount(100, 10)`.
    call: String,
    check: Check,
}

/// Writes the scenario tests of `layer` into `dir` (the session's `tests/<layer>/`); returns the
/// session-relative files written and the number of tests. `searched` are the file names the
/// generator's search wrote there: a scenario's file never replaces one of them.
pub(crate) fn write(
    session: &Path,
    layer: &str,
    dir: &Path,
    searched: &BTreeSet<String>,
) -> Result<(Vec<String>, usize), RoleError> {
    let path = session.join(plan::FILE);
    if !path.is_file() {
        return Ok((Vec::new(), 0));
    }
    let write = |rows: &mut Vec<Scenario>| write_rows(layer, dir, rows, searched);
    plan::update(&path, write).map_err(|e| RoleError::Io {
        action: "update",
        path: path.clone(),
        cause: std::io::Error::other(e.to_string()),
    })?
}

/// Writes the layer's scenario files and records them in the rows.
fn write_rows(
    layer: &str,
    dir: &Path,
    rows: &mut [Scenario],
    searched: &BTreeSet<String>,
) -> Result<(Vec<String>, usize), RoleError> {
    let code = layer_code(layer);
    let mut written = Vec::new();
    let mut tests = 0;
    for row in rows
        .iter_mut()
        .filter(|r| r.layer == code && plan::is_scenario_id(&r.id))
    {
        let Some(module) = module_of(&row.target_file) else {
            continue;
        };
        let cases: Vec<Case> = row
            .test_cases
            .iter()
            .filter_map(|c| parse_case(c))
            .collect();
        let own = if cases.is_empty() {
            None
        } else {
            file_name(row, layer)
                .filter(|name| !searched.contains(name))
                .or_else(|| id_file_name(row))
        };
        if let Some(name) = own {
            let source = render(row, &module, &cases);
            atomic_write(&dir.join(&name), source.as_bytes())?;
            written.push(format!("tests/{layer}/{name}"));
            tests += cases.len();
            row.test_file = format!("tests/{layer}/{name}");
            row.status = "written".into();
        } else {
            // No stated check: the search's tests of the target module stand for the scenario.
            let searched = format!("test_{}.py", module.replace('.', "_"));
            if dir.join(&searched).is_file() {
                row.test_file = format!("tests/{layer}/{searched}");
                row.status = "written".into();
            }
        }
    }
    Ok((written, tests))
}

/// The row's test file name inside the layer's folder: its `test_file` when that is a plain
/// `tests/<layer>/test_*.py` path, else one made from its id.
fn file_name(row: &Scenario, layer: &str) -> Option<String> {
    let given = Path::new(&row.test_file);
    let prefix = Path::new("tests").join(layer);
    let ok = given.starts_with(&prefix)
        && given
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        && given.parent() == Some(prefix.as_path());
    let name = given.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if ok && name.starts_with("test_") && name.ends_with(".py") {
        return Some(name.to_string());
    }
    id_file_name(row)
}

/// `test_at_001.py`: a name only the scenario's own tests have.
fn id_file_name(row: &Scenario) -> Option<String> {
    let id = row.id.to_ascii_lowercase().replace('-', "_");
    is_identifier(&id).then(|| format!("test_{id}.py"))
}

/// The file name in its layer's folder the built-in writer gives a row's own tests (a row with
/// a checkable case and a Python target), as the plan names it; None when the row gets none.
pub(crate) fn own_file(row: &Scenario) -> Option<String> {
    module_of(&row.target_file)?;
    if !row.test_cases.iter().any(|c| parse_case(c).is_some()) {
        return None;
    }
    file_name(row, &crate::scenario::build::layer_dir(&row.layer))
}

/// `shop/pricing.py` -> `shop.pricing` (a `src/` layout's prefix dropped).
fn module_of(target: &str) -> Option<String> {
    let stem = target.strip_suffix(".py")?;
    let stem = stem.strip_prefix("src/").unwrap_or(stem);
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    let module = stem.replace('/', ".");
    module.split('.').all(is_identifier).then_some(module)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// A test case as the plan writes it (`CALL returns V`, `CALL raises E`, `CALL is true`,
/// `CALL is false`), when its call and value are literals only.
fn parse_case(case: &str) -> Option<Case> {
    let case = case.trim();
    let (call, check) = if let Some(call) = case.strip_suffix(" is true") {
        (call, Check::Truthy)
    } else if let Some(call) = case.strip_suffix(" is false") {
        (call, Check::Falsy)
    } else if let Some((call, e)) = case.rsplit_once(" raises ") {
        (call, Check::Raises(e.trim().to_string()))
    } else if let Some((call, v)) = case.rsplit_once(" returns ") {
        (call, Check::Equals(v.trim().to_string()))
    } else {
        return None;
    };
    let call = call.trim();
    let (function, args) = call.split_once('(')?;
    let args = args.strip_suffix(')')?;
    let function = function.trim();
    if !is_identifier(function) || !literals(args) {
        return None;
    }
    match &check {
        Check::Equals(v) if !literals(v) || v.is_empty() => return None,
        Check::Raises(e) if !is_identifier(e) => return None,
        _ => {}
    }
    Some(Case {
        function: function.to_string(),
        call: call.to_string(),
        check,
    })
}

/// Whether `text` is only Python literals: numbers, simple strings (no backslash), True, False,
/// None, and the brackets, commas and colons of lists, tuples and dicts.
fn literals(text: &str) -> bool {
    // Python reads three quotes as one triple-quoted string where a token-by-token reading
    // sees an empty string and another: no triple quotes, ever.
    if text.contains("'''") || text.contains("\"\"\"") {
        return false;
    }
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | ',' | ':' | '[' | ']' | '(' | ')' | '{' | '}' | '-' | '+' | '.' => {}
            '0'..='9' => {}
            'e' | 'E' | 'j' | '_' => {}
            '\'' | '"' => {
                let quote = c;
                loop {
                    match chars.next() {
                        Some(q) if q == quote => break,
                        Some('\\') | None => return false,
                        Some(_) => {}
                    }
                }
            }
            c if c.is_ascii_alphabetic() => {
                let mut word = c.to_string();
                while let Some(&n) = chars.peek() {
                    if n.is_ascii_alphanumeric() || n == '_' {
                        word.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                if !matches!(word.as_str(), "True" | "False" | "None") {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

fn render(row: &Scenario, module: &str, cases: &[Case]) -> String {
    let mut names: Vec<&str> = cases.iter().map(|c| c.function.as_str()).collect();
    for c in cases {
        if let Check::Raises(e) = &c.check {
            if !BUILTIN_EXCEPTIONS.contains(&e.as_str()) {
                names.push(e);
            }
        }
    }
    names.sort();
    names.dedup();
    let id = row.id.to_ascii_lowercase().replace('-', "_");
    let reference = if row.req_ref.is_empty() {
        String::new()
    } else {
        format!(" ({})", row.req_ref)
    };
    let mut out = format!(
        "\"\"\"Scenario {}{}: {}. Written by team-testing from the scenario's test cases.\"\"\"\n",
        doc_safe(&row.id),
        doc_safe(&reference),
        doc_safe(&row.name)
    );
    out.push_str("import tempfile\n\nimport pytest\n\n");
    out.push_str(&format!("from {module} import {}\n", names.join(", ")));
    out.push_str("\n\n");
    out.push_str(isolation_fixture());
    for (i, c) in cases.iter().enumerate() {
        let doc = doc_safe(&format!("{}: {}", row.id, describe(c)));
        out.push_str(&format!(
            "\n\ndef test_{id}_case_{}():\n    \"\"\"{doc}\"\"\"\n",
            i + 1
        ));
        match &c.check {
            Check::Equals(v) => out.push_str(&format!("    assert ({}) == ({v})\n", c.call)),
            Check::Truthy => out.push_str(&format!("    assert {}\n", c.call)),
            Check::Falsy => out.push_str(&format!("    assert not {}\n", c.call)),
            Check::Raises(e) => out.push_str(&format!(
                "    with pytest.raises({e}):\n        {}\n",
                c.call
            )),
        }
    }
    out
}

/// Text for a docstring: no quote, backslash or line break can end it or escape from it.
fn doc_safe(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' => '\'',
            '\\' => '/',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

fn describe(c: &Case) -> String {
    match &c.check {
        Check::Equals(v) => format!("{} returns {v}", c.call),
        Check::Raises(e) => format!("{} raises {e}", c.call),
        Check::Truthy => format!("{} is true", c.call),
        Check::Falsy => format!("{} is false", c.call),
    }
}

/// The isolation fixture every test team-testing writes carries: the one `testing/python/tt_isolation.py`
/// defines, from its decorator on.
fn isolation_fixture() -> &'static str {
    let at = crate::family::python::isolation::ISOLATION
        .find("@pytest.fixture")
        .expect("tt_isolation.py defines the fixture");
    &crate::family::python::isolation::ISOLATION[at..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_with_literal_calls_and_values_become_checks() {
        let c = parse_case("apply_discount(100, 10) returns 90").unwrap();
        assert_eq!(c.function, "apply_discount");
        assert_eq!(c.check, Check::Equals("90".into()));
        assert_eq!(
            parse_case("take(1, 2) raises ValueError").unwrap().check,
            Check::Raises("ValueError".into())
        );
        assert_eq!(
            parse_case("can_fulfil(5, 5) is true").unwrap().check,
            Check::Truthy
        );
        assert_eq!(
            parse_case("f([1, 'a b', None], {'k': -1.5}) returns (1, 2)")
                .unwrap()
                .check,
            Check::Equals("(1, 2)".into())
        );
    }

    #[test]
    fn anything_but_literals_is_left_out() {
        for bad in [
            "f(__import__('os').system('x')) returns 1",
            "f(1) returns open('/etc/passwd')",
            "f('a\\'b') returns 1",
            "os.system('x') returns 0",
            "f(1) raises os.error",
            "the total is right",
            "f(x) returns 1",
            "f(\'\'\' \' \'\'\'+str(1)+\'\'\' \' \'\'\', 1) raises ValueError",
            "f(1) returns \'\'\' \'\'\'",
        ] {
            assert!(parse_case(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_scenario_file_imports_what_it_calls_and_names_its_tests_after_the_scenario() {
        let row = Scenario {
            id: "AT-004".into(),
            name: "Taking the whole stock".into(),
            req_ref: "REQ-002:AC-1".into(),
            ..Scenario::default()
        };
        let cases = vec![
            parse_case("take(3, 3) returns 0").unwrap(),
            parse_case("take(1, 2) raises OutOfStock").unwrap(),
        ];
        let src = render(&row, "shop.inventory", &cases);
        assert!(
            src.contains("from shop.inventory import OutOfStock, take\n"),
            "{src}"
        );
        assert!(src.contains("def test_at_004_case_1():\n    \"\"\"AT-004: take(3, 3) returns 0\"\"\"\n    assert (take(3, 3)) == (0)\n"), "{src}");
        assert!(src.contains("    with pytest.raises(OutOfStock):\n        take(1, 2)\n"));
        assert!(src.starts_with("\"\"\"Scenario AT-004 (REQ-002:AC-1)"));
        // A reference or a name cannot end the docstring.
        let hostile = Scenario {
            req_ref: "X\"\"\"; import os #".into(),
            name: "n\\\"\"\"\nimport os".into(),
            ..row
        };
        let src = render(&hostile, "shop.inventory", &cases);
        // The module docstring, the fixture's, one per test: none ended early.
        assert_eq!(src.matches("\"\"\"").count(), 4 + 2 * cases.len(), "{src}");
        assert_eq!(module_of("src/pkg/mod.py").as_deref(), Some("pkg.mod"));
        assert_eq!(module_of("README.md"), None);
    }

    #[test]
    fn a_scenario_file_never_replaces_a_file_the_search_wrote() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("test_shop_pricing.py"), "# the search's\n").unwrap();
        let mut rows = vec![Scenario {
            id: "AT-001".into(),
            name: "Discount".into(),
            layer: "L1".into(),
            target_file: "shop/pricing.py".into(),
            test_file: "tests/L1-unit/test_shop_pricing.py".into(),
            test_cases: vec!["apply_discount(100, 10) returns 90".into()],
            ..Scenario::default()
        }];
        assert_eq!(own_file(&rows[0]).as_deref(), Some("test_shop_pricing.py"));
        let searched = BTreeSet::from(["test_shop_pricing.py".to_string()]);
        let (files, tests) = write_rows("L1-unit", dir.path(), &mut rows, &searched).unwrap();
        assert_eq!(files, ["tests/L1-unit/test_at_001.py"]);
        assert_eq!(tests, 1);
        assert_eq!(rows[0].test_file, "tests/L1-unit/test_at_001.py");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("test_shop_pricing.py")).unwrap(),
            "# the search's\n"
        );
        // No checkable case: no file of its own, nothing to clash with.
        rows[0].test_cases = vec!["the discount is right".into()];
        assert_eq!(own_file(&rows[0]), None);
    }
}
