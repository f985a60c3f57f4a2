//! The session's findings as SARIF 2.1.0 (`analysis/report.sarif`, `report --format sarif`), the
//! format code-scanning alerts and review annotations read: one result per code defect, broken
//! contract, side effect and behaviour change, each at a place in the repository (relative to
//! it), with the shortest input in its message and a fingerprint that two runs finding the same
//! thing share (no session id, time, or generated test name's hash in it).

use std::path::Path;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::locate::{Locator, Place};
use super::{CodeDefect, Report};
use crate::gen::behaviour::{BehaviourChange, Verdict};

/// The tool's rules, described once in the driver: (id, name, short description, level).
const RULES: [(&str, &str, &str, &str); 5] = [
    (
        "code-defect",
        "CodeDefect",
        "A test fails because the code is wrong: it crashes or returns what the test rules out on input its public API accepts.",
        "error",
    ),
    (
        "broken-contract",
        "BrokenContract",
        "The code breaks what it states: a docstring example, an annotation, a documented exception.",
        "error",
    ),
    (
        "side-effect",
        "SideEffect",
        "A call or a test changes something outside its own temporary folder: a file, a socket, a process.",
        "warning",
    ),
    (
        "likely-regression",
        "LikelyRegression",
        "The change altered a behaviour: the base returned, HEAD raises.",
        "error",
    ),
    (
        "behaviour-change",
        "BehaviourChange",
        "The change altered a behaviour on an input: likely intended (its documentation changed with it) or for review.",
        "note",
    ),
];

/// The schema the file names (SARIF 2.1.0's, as published).
const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The key of the fingerprint in `partialFingerprints`.
const FINGERPRINT: &str = "teamTesting/v1";

/// One finding at its place: a SARIF result before it is JSON.
pub(super) struct Found {
    pub rule: &'static str,
    /// Its words, the shortest input in them; paths of the session's copies made the user's.
    pub message: String,
    pub place: Place,
    /// What identifies the finding across runs, fingerprinted.
    identity: Vec<String>,
    /// The level, when it is not the rule's.
    level: Option<&'static str>,
}

impl Found {
    /// error, warning or note.
    pub fn level(&self) -> &'static str {
        self.level.unwrap_or_else(|| {
            RULES
                .iter()
                .find(|r| r.0 == self.rule)
                .map_or("warning", |r| r.3)
        })
    }
}

/// Every finding of the report at its place in the repository: code defects, broken contracts,
/// side effects, then behaviour changes (the SARIF results and the pull-request summary).
pub(super) fn found(report: &Report, session_root: &Path) -> Vec<Found> {
    let repo = report.repo.as_deref().unwrap_or(".");
    let at = Locator::new(Path::new(repo));
    let fallback = fallback_place(report, &at);
    let mut found: Vec<Found> = Vec::new();
    for d in &report.findings.code_defects {
        found.push(code_defect(d, (&at, session_root), &fallback));
    }
    for f in &report.findings.contract_findings {
        found.push(generator_finding(f, "broken-contract", &at, &fallback));
    }
    for f in &report.findings.side_effects {
        found.push(generator_finding(f, "side-effect", &at, &fallback));
    }
    if let Some(behaviour) = &report.behaviour {
        found.extend(
            behaviour
                .changes
                .iter()
                .map(|c| behaviour_change(c, &at, &fallback)),
        );
    }
    for f in &mut found {
        f.message = without_session_paths(&f.message, repo);
        // A place chosen for want of one is no part of what the finding is.
        if f.place == fallback {
            f.identity[0].clear();
        }
    }
    found
}

/// The report's findings as one SARIF log.
pub fn sarif(report: &Report, session_root: &Path) -> Value {
    let found = found(report, session_root);
    let results: Vec<Value> = found.iter().map(result).collect();
    let rules: Vec<Value> = RULES
        .iter()
        .map(|(id, name, text, level)| {
            json!({
                "id": id,
                "name": name,
                "shortDescription": {"text": text},
                "defaultConfiguration": {"level": level},
            })
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "team-testing",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "automationDetails": {"id": format!("team-testing/{}", report.session_id)},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

fn result(f: &Found) -> Value {
    let index = RULES.iter().position(|r| r.0 == f.rule).unwrap_or(0);
    let mut region = json!({});
    if let Some(line) = f.place.line {
        region = json!({"startLine": line});
    }
    let mut location = json!({
        "artifactLocation": {"uri": uri(&f.place.file), "uriBaseId": "%SRCROOT%"},
    });
    if f.place.line.is_some() {
        location["region"] = region;
    }
    json!({
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": f.level(),
        // SARIF reads `[text](id)` in a message as a link: the project's brackets are escaped.
        "message": {"text": f.message.replace('[', "\\[").replace(']', "\\]")},
        "locations": [{"physicalLocation": location}],
        "partialFingerprints": {FINGERPRINT: fingerprint(f)},
    })
}

/// Where a finding goes when nothing better is known: the first file of the change's scope,
/// else the first file the layers measured, else the repository's first file.
fn fallback_place(report: &Report, at: &Locator) -> Place {
    let from_files = report
        .baseline
        .iter()
        .flat_map(|b| &b.files)
        .map(|f| f.file.clone())
        .chain(report.coverage_gaps.iter().map(|g| g.module.clone()))
        .find_map(|p| at.path(&p));
    from_files.unwrap_or_else(|| Place {
        file: at.first_file().unwrap_or_else(|| "README.md".into()),
        line: None,
    })
}

fn code_defect(d: &CodeDefect, (at, session): (&Locator, &Path), fallback: &Place) -> Found {
    let evidence = |key: &str| d.evidence[key].as_str().unwrap_or_default().to_string();
    // Fault localisation first, then the failure's innermost frame when it is the code's, then
    // the code the test file tests.
    let place = d
        .suspects
        .iter()
        .find_map(|s| at.path(s))
        .or_else(|| at.path(&evidence("location")).filter(|p| !is_test(&p.file)))
        .or_else(|| {
            // The test's file: the record's, else the one its failure points into.
            let location = evidence("location");
            let file = d
                .file
                .clone()
                .or_else(|| Some(location.rsplit_once(':')?.0.to_string()))?;
            tested_function(at, &file, &d.test)
        })
        .unwrap_or_else(|| fallback.clone());
    // node's JUnit reporter escapes a title's quotes once more than XML undoes.
    let name = unescape(d.test.rsplit("::").next().unwrap_or(&d.test));
    // doctest's message is a rule of asterisks; the excerpt below says what failed.
    let headline = d
        .message
        .as_deref()
        .map(|m| first_line(m).trim_end_matches(['*', ' ', ':']))
        .filter(|m| !m.is_empty())
        .unwrap_or("the test fails");
    let mut message = format!(
        "{headline}: shown by the generated test {name} ({})",
        d.layer
    );
    let location = evidence("location");
    let test_file = d.file.clone().or_else(|| {
        let path = location.rsplit_once(':')?.0;
        Some(path.rsplit('/').next()?.to_string())
    });
    if let Some(body) = test_body(session, &d.layer, test_file.as_deref(), &name) {
        message.push_str(&format!(": `{body}`"));
    }
    if d.hits > 1 {
        message.push_str(&format!(", and {} more with the same cause", d.hits - 1));
    }
    let excerpt = evidence("excerpt");
    if !excerpt.is_empty() {
        message.push_str(&format!(
            ".\n{}",
            excerpt.lines().take(12).collect::<Vec<_>>().join("\n")
        ));
    }
    Found {
        rule: "code-defect",
        message,
        // No line: moving the code must not make it a new alert.
        identity: vec![place.file.clone(), evidence("error"), without_hash(&name)],
        place,
        level: None,
    }
}

fn generator_finding(f: &Value, rule: &'static str, at: &Locator, fallback: &Place) -> Found {
    let text = |key: &str| match &f[key] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let (module, function, call) = (text("module"), text("function"), text("call"));
    // A test the executor took out names its layer's file (`L1-unit/test_m.py`) and its id:
    // the code that file tests, at the function the test is named after.
    let by_executor = f["found_by"] == "executor";
    let place = at
        .function(&module, &function)
        .or_else(|| tested_function(at, module.rsplit('/').next()?, &function))
        .unwrap_or_else(|| fallback.clone());
    let short = function.rsplit(['.', ':']).next().unwrap_or(&function);
    let call = if by_executor {
        without_hash(&call)
    } else {
        call
    };
    let message = if by_executor {
        format!(
            "the generated test {short} {}; it was taken out and is never delivered",
            first_line(&text("actual"))
        )
    } else if rule == "side-effect" {
        format!("{short}: `{call}` {}", first_line(&text("actual")))
    } else {
        let mut m = format!(
            "{short} breaks its {}: `{call}`",
            contract_words(&text("kind"))
        );
        let (expected, actual) = (text("expected"), text("actual"));
        if !expected.is_empty() {
            m.push_str(&format!(": expected {}", first_line(&expected)));
        }
        if !actual.is_empty() {
            m.push_str(&format!(", got {}", first_line(&actual)));
        }
        m
    };
    Found {
        rule,
        message,
        identity: vec![place.file.clone(), function, text("kind"), call],
        place,
        level: None,
    }
}

fn behaviour_change(c: &BehaviourChange, at: &Locator, fallback: &Place) -> Found {
    let place = at
        .module(&c.module)
        .map(|file| Place {
            line: c.lines.map(|l| l[0]),
            file,
        })
        .unwrap_or_else(|| fallback.clone());
    let regression = c.verdict == Verdict::LikelyRegression;
    let short = c.function.rsplit(['.', ':']).next().unwrap_or(&c.function);
    let mut message = format!(
        "{} ({}): `{}` {} on the base, {} now",
        short,
        c.verdict.words(),
        c.input,
        first_line(&c.before),
        first_line(&c.after)
    );
    if c.more_inputs > 0 {
        message.push_str(&format!(
            " ({} more input(s) changed the same way)",
            c.more_inputs
        ));
    }
    message.push_str(&format!(
        "; `team-testing apply --keep-new {0}` or `--keep-old {0}` delivers the test of either side",
        c.id
    ));
    Found {
        rule: if regression {
            "likely-regression"
        } else {
            "behaviour-change"
        },
        message,
        identity: vec![
            place.file.clone(),
            c.function.clone(),
            c.input.clone(),
            c.before.clone(),
            c.after.clone(),
        ],
        place,
        level: (c.verdict == Verdict::ForReview).then_some("warning"),
    }
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The statements of a generated test (its input and what it asserts) on one line: the lines
/// under the line that names it, indented deeper, at most five.
fn test_body(session: &Path, layer: &str, file: Option<&str>, name: &str) -> Option<String> {
    let dir = session.join("tests").join(layer);
    // The test's file, else every file of the layer (a record may not name it).
    let mut files: Vec<std::path::PathBuf> = file.map(|f| dir.join(f)).into_iter().collect();
    let mut others: Vec<_> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    others.sort();
    files.extend(others);
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .find_map(|text| body_in(&text, name))
}

fn body_in(text: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let title = name.rsplit(" > ").next().unwrap_or(name);
    let quoted = serde_json::to_string(title).ok()?;
    let at = lines
        .iter()
        .position(|l| l.contains(&format!("def {title}(")) || l.contains(&quoted))?;
    let indent = |l: &str| l.len() - l.trim_start().len();
    let depth = indent(lines[at]);
    let body: Vec<&str> = lines[at + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || indent(l) > depth)
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("//"))
        .take(5)
        .collect();
    (!body.is_empty()).then(|| body.join("; ").replace('`', "'"))
}

/// The code a generated test file tests, at the function its test is named after
/// (`test_perimeter_doctest_2ebf6a` tests `perimeter`: the longest defined name its words start
/// with).
fn tested_function(at: &Locator, test_file: &str, test: &str) -> Option<Place> {
    let file = at.tested_by(test_file)?;
    let name = test.rsplit("::").next().unwrap_or(test);
    // Python's `test_<function>_<input words>`: the longest prefix of words that is defined.
    let words: Vec<&str> = name
        .strip_prefix("test_")
        .unwrap_or(name)
        .split('_')
        .collect();
    let identifier = regex::Regex::new(r"[A-Za-z_$][A-Za-z0-9_$]*").expect("a valid pattern");
    let line = (1..=words.len())
        .rev()
        .find_map(|n| at.definition_line(&file, &words[..n].join("_")))
        // JavaScript's and Go's titles name the call: `formatPrice(1999) [f7087d]`.
        .or_else(|| {
            identifier
                .find_iter(name)
                .find_map(|m| at.definition_line(&file, m.as_str()))
        });
    Some(Place { file, line })
}

fn contract_words(kind: &str) -> &str {
    match kind {
        "doctest" => "docstring example",
        "builtin_exception" => "promise not to crash on its declared types",
        "annotation" | "return_type" => "annotation",
        _ => "stated contract",
    }
}

/// The fingerprint: the rule and what identifies the finding, hashed.
fn fingerprint(f: &Found) -> String {
    let mut h = Sha256::new();
    h.update(f.rule.as_bytes());
    for part in &f.identity {
        h.update([0]);
        h.update(part.as_bytes());
    }
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A repository-relative path as a URI reference: every byte outside the unreserved set and `/`
/// percent-encoded (a space, `%`, `#`, a non-ASCII letter).
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A generated test's name without the hash of its input at the end (`test_f_3_a1b2c3`).
fn without_hash(name: &str) -> String {
    // JavaScript's and Go's titles end in ` [f7087d]`.
    if let Some((head, tail)) = name.rsplit_once(" [") {
        let hash = tail.strip_suffix(']').unwrap_or_default();
        if hash.len() >= 6 && hash.chars().all(|c| c.is_ascii_hexdigit()) {
            return head.to_string();
        }
    }
    match name.rsplit_once('_') {
        Some((head, tail)) if tail.len() >= 6 && tail.chars().all(|c| c.is_ascii_hexdigit()) => {
            head.to_string()
        }
        _ => name.to_string(),
    }
}

/// Paths of the session's mirrors (`…/workspace/<mirror>/rel`) and of the repository itself
/// (`<repo>/rel`) as the repository-relative `rel`: the user's files, not this machine's copies.
fn without_session_paths(text: &str, repo: &str) -> String {
    let mirrors = regex::Regex::new(r"/\S*/workspace/[^/\s]+/").expect("a valid pattern");
    let text = mirrors.replace_all(text, "");
    let repo = format!("{}/", repo.trim_end_matches('/'));
    text.replace(&repo, "")
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default().trim()
}

fn is_test(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.starts_with("tests/") || name.starts_with("test_") || name.contains(".test.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_leave_out_what_changes_between_runs() {
        assert_eq!(
            without_hash("test_last_side_contract_5f98fb"),
            "test_last_side_contract"
        );
        assert_eq!(without_hash("test_total"), "test_total");
        assert_eq!(
            without_hash("formatPrice(1999) [f7087d]"),
            "formatPrice(1999)"
        );
        assert_eq!(uri("a b/ü#1.py"), "a%20b/%C3%BC%231.py");
        let text = "writes /home/u/p/.workflow/.team/TST-x-2026-12-06/workspace/gen-L1-unit/nasty/created.txt and /home/u/p/data.db";
        assert_eq!(
            without_session_paths(text, "/home/u/p"),
            "writes nasty/created.txt and data.db"
        );
    }
}
