//! Python: `ttl0.py` does the checks in the project's interpreter (compile, imports, placeholders,
//! mock leakage, the import of each changed module in a child); then mypy (or pyright) reads the
//! changed files when one is installed. What the project declares it depends on and where its
//! modules import from are read here, from its manifests, and handed to the helper.

use std::path::Path;
use std::sync::LazyLock;
use std::time::Instant;

use regex::Regex;
use serde::Deserialize;

use crate::testing::code_check::{
    exec, relative, tool_note, CheckInput, CodeCheck, CodeCheckError, CodeIssue, IssueKind,
    Severity,
};
use crate::util::tail_lines;

/// The helper program.
pub const HELPER: &str = include_str!("ttl0.py");

/// The share of the time left that the helper may use; the type checker gets the rest.
const HELPER_SHARE: f64 = 0.6;
/// The longest one module's import may take.
const IMPORT_TIMEOUT_S: f64 = 20.0;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct HelperResult {
    issues: Vec<CodeIssue>,
    checked: Vec<String>,
    notes: Vec<String>,
    /// `cpython 3.11 (/usr/bin/python3)`.
    python: String,
    /// mypy is importable by the project's interpreter.
    mypy: bool,
}

pub fn check(
    input: &CheckInput,
    changed: &[String],
    out: &mut CodeCheck,
) -> Result<(), CodeCheckError> {
    let python = if input.tools.interpreter.is_empty() {
        "python3".to_string()
    } else {
        input.tools.interpreter.clone()
    };
    let write = |name: &str, bytes: &[u8]| {
        let path = input.scratch.join(name);
        crate::util::write_nofollow(&path, bytes)
            .map(|()| path.clone())
            .map_err(|cause| CodeCheckError::Write { path, cause })
    };
    let helper = write("ttl0.py", HELPER.as_bytes())?;
    let result = input.scratch.join("l0-result.json");
    let _ = std::fs::remove_file(&result);
    let roots = import_roots(input.root);
    let deps = declared(input.root);
    let left = input.deadline.saturating_duration_since(Instant::now());
    let request = serde_json::json!({
        "root": input.root,
        "changed": changed,
        "roots": roots,
        "declared": deps.all,
        "runtime": deps.runtime,
        "budget_s": left.as_secs_f64() * HELPER_SHARE,
        "import_timeout_s": IMPORT_TIMEOUT_S,
    });
    let request = write("l0-request.json", request.to_string().as_bytes())?;
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let env = vec![("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string())];
    let argv = vec![python.clone(), s(&helper), s(&request), s(&result)];
    let program = format!("helper ttl0.py ({python})");
    let ran = exec(input, env)
        .run(&argv)
        .map_err(|cause| CodeCheckError::Exec {
            program: program.clone(),
            cause,
        })?;
    let text = std::fs::read_to_string(&result).map_err(|e| CodeCheckError::NoResult {
        program: program.clone(),
        problem: format!(
            "{e}; exit {:?}: {}",
            ran.status,
            tail_lines(&format!("{}{}", ran.stdout, ran.stderr), 8)
        ),
    })?;
    let found: HelperResult =
        serde_json::from_str(&text).map_err(|e| CodeCheckError::NoResult {
            program,
            problem: e.to_string(),
        })?;
    out.issues.extend(found.issues);
    out.checked.extend(found.checked);
    out.notes.extend(found.notes);
    type_check(
        input,
        &python,
        &found.python,
        found.mypy,
        &roots,
        changed,
        out,
    );
    Ok(())
}

/// Changed code files that are not tests and compiled: what the type checker reads.
fn typed_files(changed: &[String], out: &CodeCheck) -> Vec<String> {
    changed
        .iter()
        .filter(|f| f.ends_with(".py") && !is_test_path(f))
        .filter(|f| {
            !out.issues
                .iter()
                .any(|i| &i.file == *f && i.kind == IssueKind::DoesNotCompile)
        })
        .cloned()
        .collect()
}

/// Python test files, as the helper judges them.
fn is_test_path(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let name = parts.last().copied().unwrap_or("");
    name.starts_with("test_")
        || name.ends_with("_test.py")
        || name == "conftest.py"
        || parts[..parts.len() - 1]
            .iter()
            .any(|p| *p == "tests" || *p == "test")
}

fn type_check(
    input: &CheckInput,
    python: &str,
    python_name: &str,
    mypy: bool,
    roots: &[String],
    changed: &[String],
    out: &mut CodeCheck,
) {
    let files = typed_files(changed, out);
    let pyright = pyright(input.root);
    if !mypy && pyright.is_none() {
        let name = if python_name.is_empty() {
            python
        } else {
            python_name
        };
        out.notes.push(format!(
            "type check: no type checker is installed for {name} ({python} -m pip install mypy)"
        ));
        return;
    }
    if files.is_empty() {
        out.notes
            .push("type check: no changed Python code file to check".into());
        return;
    }
    if mypy {
        out.type_checker = Some("mypy".into());
        run_mypy(input, python, roots, &files, out);
    } else if let Some(program) = pyright {
        out.type_checker = Some("pyright".into());
        run_pyright(input, &program, &files, out);
    }
}

fn run_mypy(
    input: &CheckInput,
    python: &str,
    roots: &[String],
    files: &[String],
    out: &mut CodeCheck,
) {
    let cache = input.scratch.join("mypy-cache");
    let mut argv: Vec<String> = [
        python,
        "-m",
        "mypy",
        "--cache-dir",
        &cache.to_string_lossy(),
        "--no-error-summary",
        "--no-pretty",
        "--hide-error-context",
        "--no-color-output",
        "--show-error-codes",
        "--follow-imports=silent",
        // A module found nowhere is the hallucinated-import check's finding.
        "--ignore-missing-imports",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    argv.extend(files.iter().cloned());
    let mypypath: Vec<String> = roots
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| input.root.join(r).to_string_lossy().into_owned())
        .collect();
    let mut env = vec![("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string())];
    if !mypypath.is_empty() {
        env.push(("MYPYPATH".to_string(), mypypath.join(":")));
    }
    let ran = match exec(input, env).run(&argv) {
        Ok(ran) => ran,
        Err(e) => return out.notes.push(tool_note("type check (mypy)", &e)),
    };
    let errors = parse_mypy(input.root, &ran.stdout);
    if errors.is_empty() && !ran.success() {
        out.notes.push(format!(
            "type check (mypy) did not finish (exit {:?}): {}",
            ran.status,
            tail_lines(&format!("{}{}", ran.stdout, ran.stderr), 4)
        ));
    }
    out.checked
        .push(format!("type check: mypy on {} changed files", files.len()));
    out.issues.extend(errors);
}

static MYPY_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(.+?):(\d+):(?:\d+:)?\s*error:\s*(.*)$").unwrap());

/// `file:line: error: message` lines.
pub(crate) fn parse_mypy(root: &Path, output: &str) -> Vec<CodeIssue> {
    output
        .lines()
        .filter_map(|l| MYPY_LINE.captures(l))
        .map(|c| CodeIssue {
            severity: Severity::Warning,
            kind: IssueKind::TypeError,
            file: relative(root, &c[1]),
            line: c[2].parse().ok(),
            message: c[3].trim().to_string(),
        })
        .collect()
}

/// The project's pyright (node_modules) or one on PATH.
fn pyright(root: &Path) -> Option<String> {
    let local = root.join("node_modules/.bin/pyright");
    if local.is_file() {
        return Some(local.to_string_lossy().into_owned());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("pyright"))
        .find(|p| p.is_file())
        .map(|p| p.to_string_lossy().into_owned())
}

fn run_pyright(input: &CheckInput, program: &str, files: &[String], out: &mut CodeCheck) {
    let mut argv = vec![program.to_string(), "--outputjson".to_string()];
    argv.extend(files.iter().cloned());
    let ran = match exec(input, Vec::new()).run(&argv) {
        Ok(ran) => ran,
        Err(e) => return out.notes.push(tool_note("type check (pyright)", &e)),
    };
    #[derive(Deserialize)]
    struct Report {
        #[serde(rename = "generalDiagnostics", default)]
        diagnostics: Vec<Diagnostic>,
    }
    #[derive(Deserialize)]
    struct Diagnostic {
        file: String,
        severity: String,
        message: String,
        range: Option<serde_json::Value>,
    }
    let Ok(report) = serde_json::from_str::<Report>(&ran.stdout) else {
        return out.notes.push(format!(
            "type check (pyright) gave no report (exit {:?}): {}",
            ran.status,
            tail_lines(&ran.stderr, 4)
        ));
    };
    out.checked.push(format!(
        "type check: pyright on {} changed files",
        files.len()
    ));
    for d in report
        .diagnostics
        .into_iter()
        .filter(|d| d.severity == "error")
    {
        let line = d
            .range
            .as_ref()
            .and_then(|r| r.pointer("/start/line"))
            .and_then(|l| l.as_u64())
            .map(|l| l as u32 + 1);
        out.push(
            Severity::Warning,
            IssueKind::TypeError,
            &relative(input.root, &d.file),
            line,
            d.message.lines().next().unwrap_or("").to_string(),
        );
    }
}

/// Where the project's modules import from, relative to the root: the root, `src/` when it is a
/// folder, and the folders pytest's `pythonpath` option adds.
pub(crate) fn import_roots(root: &Path) -> Vec<String> {
    let mut roots = vec![String::new()];
    if root.join("src").is_dir() {
        roots.push("src".into());
    }
    for extra in pytest_pythonpath(root) {
        let extra = extra
            .trim_start_matches("./")
            .trim_end_matches('/')
            .to_string();
        if extra != "."
            && !extra.is_empty()
            && root.join(&extra).is_dir()
            && !roots.contains(&extra)
        {
            roots.push(extra);
        }
    }
    roots
}

fn pytest_pythonpath(root: &Path) -> Vec<String> {
    if let Ok(text) = std::fs::read_to_string(root.join("pyproject.toml")) {
        if let Ok(doc) = text.parse::<toml::Table>() {
            let value = doc
                .get("tool")
                .and_then(|t| t.get("pytest"))
                .and_then(|t| t.get("ini_options"))
                .and_then(|t| t.get("pythonpath"));
            match value {
                Some(toml::Value::String(s)) => {
                    return s.split_whitespace().map(String::from).collect()
                }
                Some(toml::Value::Array(a)) => {
                    return a
                        .iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                }
                _ => {}
            }
        }
    }
    for (file, section) in [
        ("pytest.ini", "pytest"),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ] {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        if let Some(value) = ini_value(&text, section, "pythonpath") {
            return value.split_whitespace().map(String::from).collect();
        }
    }
    Vec::new()
}

/// The value of `key` in `[section]` of an ini file, continuation lines joined.
fn ini_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut in_section = false;
    let mut value: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            if value.is_some() {
                break;
            }
            in_section = trimmed.trim_matches(|c| c == '[' || c == ']').trim() == section;
            continue;
        }
        if !in_section || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(v) = value.as_mut() {
            if line.starts_with(char::is_whitespace) && !trimmed.is_empty() {
                v.push('\n');
                v.push_str(trimmed);
                continue;
            }
            break;
        }
        if let Some((k, v)) = trimmed.split_once('=') {
            if k.trim() == key {
                value = Some(v.trim().to_string());
            }
        }
    }
    value
}

/// The distributions a project declares: all of them (extras, dev groups, every requirements
/// file) and the runtime ones (what its production code may import, test tools included when the
/// project is a pytest plugin).
#[derive(Debug, Default)]
pub(crate) struct Declared {
    pub all: Vec<String>,
    pub runtime: Vec<String>,
}

static REQUIREMENT_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)").unwrap());

fn requirement_name(req: &str) -> Option<String> {
    let req = req.trim();
    if req.starts_with('-') || req.starts_with('#') {
        return None;
    }
    REQUIREMENT_NAME.captures(req).map(|c| c[1].to_string())
}

pub(crate) fn declared(root: &Path) -> Declared {
    let mut d = Declared::default();
    let mut add = |name: Option<String>, runtime: bool| {
        if let Some(name) = name {
            if runtime {
                d.runtime.push(name.clone());
            }
            d.all.push(name);
        }
    };
    let mut requirement_files: Vec<(String, bool)> = Vec::new();
    for dir in ["", "requirements/"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let listed =
                (dir.is_empty() && name.starts_with("requirements") && name.ends_with(".txt"))
                    || (!dir.is_empty() && name.ends_with(".txt"));
            if listed {
                let runtime = if dir.is_empty() {
                    name == "requirements.txt"
                } else {
                    matches!(
                        name.as_str(),
                        "base.txt" | "prod.txt" | "production.txt" | "main.txt" | "runtime.txt"
                    )
                };
                requirement_files.push((format!("{dir}{name}"), runtime));
            }
        }
    }
    for (file, runtime) in requirement_files {
        if let Ok(text) = std::fs::read_to_string(root.join(file)) {
            for line in text.lines() {
                add(requirement_name(line), runtime);
            }
        }
    }
    if let Ok(text) = std::fs::read_to_string(root.join("pyproject.toml")) {
        if let Ok(doc) = text.parse::<toml::Table>() {
            pyproject(&doc, &mut add);
        }
    }
    if let Ok(text) = std::fs::read_to_string(root.join("setup.cfg")) {
        if let Some(v) = ini_value(&text, "options", "install_requires") {
            v.lines().for_each(|l| add(requirement_name(l), true));
        }
        let mut in_extras = false;
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with('[') {
                in_extras = t == "[options.extras_require]";
            } else if in_extras {
                let spec = t.split_once('=').map_or(t, |(_, v)| v);
                add(requirement_name(spec), false);
            }
        }
        if text.contains("pytest11") {
            add(Some("pytest".into()), true);
        }
    }
    if let Ok(text) = std::fs::read_to_string(root.join("setup.py")) {
        static INSTALL: LazyLock<Regex> =
            LazyLock::new(|| Regex::new(r"(?s)install_requires\s*=\s*\[(.*?)\]").unwrap());
        static QUOTED: LazyLock<Regex> =
            LazyLock::new(|| Regex::new(r#"["']([^"']+)["']"#).unwrap());
        if let Some(c) = INSTALL.captures(&text) {
            for q in QUOTED.captures_iter(&c[1]) {
                add(requirement_name(&q[1]), true);
            }
        }
        if text.contains("pytest11") {
            add(Some("pytest".into()), true);
        }
    }
    d.all.sort();
    d.all.dedup();
    d.runtime.sort();
    d.runtime.dedup();
    d
}

fn pyproject(doc: &toml::Table, add: &mut impl FnMut(Option<String>, bool)) {
    let strings = |v: Option<&toml::Value>| -> Vec<String> {
        v.and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let project = doc.get("project");
    for req in strings(project.and_then(|p| p.get("dependencies"))) {
        add(requirement_name(&req), true);
    }
    let tables = |v: Option<&toml::Value>| -> Vec<toml::Value> {
        v.and_then(|v| v.as_table())
            .map(|t| t.values().cloned().collect())
            .unwrap_or_default()
    };
    for group in tables(project.and_then(|p| p.get("optional-dependencies")))
        .into_iter()
        .chain(tables(doc.get("dependency-groups")))
    {
        for req in strings(Some(&group)) {
            add(requirement_name(&req), false);
        }
    }
    let plugin = |v: Option<&toml::Value>| v.and_then(|v| v.get("pytest11")).is_some();
    let poetry = doc.get("tool").and_then(|t| t.get("poetry"));
    if plugin(project.and_then(|p| p.get("entry-points")))
        || plugin(poetry.and_then(|p| p.get("plugins")))
    {
        add(Some("pytest".into()), true);
    }
    let keys = |v: Option<&toml::Value>| -> Vec<String> {
        v.and_then(|v| v.as_table())
            .map(|t| t.keys().filter(|k| *k != "python").cloned().collect())
            .unwrap_or_default()
    };
    for name in keys(poetry.and_then(|p| p.get("dependencies"))) {
        add(Some(name), true);
    }
    for name in keys(poetry.and_then(|p| p.get("dev-dependencies"))) {
        add(Some(name), false);
    }
    for group in tables(poetry.and_then(|p| p.get("group"))) {
        for name in keys(group.get("dependencies")) {
            add(Some(name), false);
        }
    }
}
