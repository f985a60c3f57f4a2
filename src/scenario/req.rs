//! `REQ-*.md` requirement files: a title, acceptance criteria with ids like `AC-1` (as a list or
//! as Given/When/Then blocks), optional priorities, and the concrete examples a criterion states.
//!
//! What is recognised, line by line (code fences are skipped):
//!
//! - **Id**: `REQ-NNN` from the file name (`REQ-001-login.md` is `REQ-001`), else a front-matter
//!   `id:`, else the first heading naming one, else the file's stem.
//! - **Title**: a front-matter `title:`, else the first `#` heading (else the first heading that
//!   is not "Acceptance Criteria"), its `REQ-NNN:` prefix dropped; else the id.
//! - **A criterion starts** at a line holding an `AC-N` id at its front: a list item
//!   (`- AC-1: text`, `1. **AC-2** text`, `- [ ] AC-3 — text`), a heading (`### AC-4: title`), a
//!   bold id (`**AC-5**`, `**AC-5:** text`) or a bare `AC-6: text` (a bare id needs a separator).
//!   It ends at the next criterion or heading. Lines right after it (or indented under it) add to
//!   its text; after a blank line only a heading criterion keeps taking prose.
//! - **Given/When/Then** lines in a criterion (case-insensitive, optionally listed or bold) fill
//!   its clauses; `And`/`But` continue the previous clause. A criterion with no text of its own
//!   gets `Given …, when …, then …` as its text. (A lower-case `when …` continuing a list
//!   criterion's sentence is text, not a clause.)
//! - **Priority**: `Priority: high` / `**Priority:** critical` before the first criterion (or in
//!   front matter) is the file's; inside a heading or bold criterion, or indented under a list
//!   criterion, it is the criterion's; so is a `(priority: critical)` suffix on a criterion line.
//!
//! Examples (see [`EXAMPLE_PHRASINGS`]) are read from a criterion's lines; nothing is evaluated.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use super::plan::Priority;

/// One `REQ-*.md` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// `REQ-001`.
    pub id: String,
    pub title: String,
    /// The file's own priority; a criterion's overrides it.
    pub priority: Option<Priority>,
    pub criteria: Vec<Criterion>,
    pub file: PathBuf,
}

/// One acceptance criterion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Criterion {
    /// `AC-1`.
    pub id: String,
    pub text: String,
    pub given: Option<String>,
    pub when: Option<String>,
    pub then: Option<String>,
    /// 1-based line of the criterion's id.
    pub line: usize,
    pub priority: Option<Priority>,
    pub examples: Vec<Example>,
}

/// A concrete check a criterion states: a call and what it must give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// `name(args)` or `module.name(args)`, as written.
    pub call: String,
    pub expect: Expect,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// The result equals this literal, as written.
    Equals(String),
    /// The call raises this exception (type name as written).
    Raises(String),
    Truthy,
    Falsy,
}

/// The phrasings recognised as examples: (pattern, what it gives). `CALL` is a backticked
/// `name(args)` or `module.name(args)`; `V` a backticked literal, or a bare number,
/// `None`/`null`; `E` a backticked name or a bare capitalised one (`ValueError`). An optional
/// `should`/`must`/`will`/`shall` may precede the verb; any words may precede `CALL` (e.g.
/// "calling").
pub const EXAMPLE_PHRASINGS: &[(&str, &str)] = &[
    ("`CALL` returns `V`  (also: return, should return)", "Equals(V)"),
    ("`CALL` gives `V`  (also: give, yields)", "Equals(V)"),
    ("`CALL` equals `V`  (also: is equal to)", "Equals(V)"),
    ("`CALL` is `V`  (also: should be)", "Equals(V)"),
    ("`CALL` == `V`, or `CALL == V` in one pair of backticks", "Equals(V)"),
    ("`CALL` raises `E`  (also: throws)", "Raises(E)"),
    (
        "`CALL` is true  (also: returns true, is truthy, should be true)",
        "Truthy",
    ),
    (
        "`CALL` is false  (also: returns false, is falsy, should be false)",
        "Falsy",
    ),
    (
        "When-clause with exactly one `CALL`, Then-clause `... is/returns/gives/be V` or `raises E` or `E is raised`",
        "as above",
    ),
];

/// A requirement file that cannot be used. Display is `path:line: problem`.
#[derive(Debug, thiserror::Error)]
pub enum ReqError {
    #[error("{}:1: no acceptance criterion (expected lines like \"- AC-1: ...\" or a Given/When/Then block under \"### AC-1\")", path.display())]
    NoCriterion { path: PathBuf },
    #[error("{}:{line}: duplicate {id} (first at line {first})", path.display())]
    DuplicateId {
        path: PathBuf,
        line: usize,
        id: String,
        first: usize,
    },
    #[error("{}:{line}: {id}: Given without Then", path.display())]
    GivenWithoutThen {
        path: PathBuf,
        line: usize,
        id: String,
    },
    #[error("{}:{line}: unknown priority '{word}' (expected critical, high, medium or low)", path.display())]
    UnknownPriority {
        path: PathBuf,
        line: usize,
        word: String,
    },
    #[error("{}:{line}: {id} has no text", path.display())]
    EmptyCriterion {
        path: PathBuf,
        line: usize,
        id: String,
    },
    #[error("{}:{line}: {id} is also the id of {}", path.display(), other.display())]
    DuplicateRequirement {
        path: PathBuf,
        line: usize,
        id: String,
        other: PathBuf,
    },
    // No line to name: the file or folder could not be read at all.
    #[error("{}:0: cannot read: {cause}", path.display())]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// A link could point anywhere (outside the repository): requirement files are read as
    /// regular files only.
    #[error("{}:0: is a symbolic link; requirement files are read only as regular files (put the file itself here)", path.display())]
    Symlink { path: PathBuf },
}

impl ReqError {
    pub fn path(&self) -> &Path {
        match self {
            ReqError::NoCriterion { path }
            | ReqError::DuplicateId { path, .. }
            | ReqError::GivenWithoutThen { path, .. }
            | ReqError::UnknownPriority { path, .. }
            | ReqError::EmptyCriterion { path, .. }
            | ReqError::DuplicateRequirement { path, .. }
            | ReqError::Read { path, .. }
            | ReqError::Symlink { path } => path,
        }
    }

    /// The 1-based line the problem is on (0 when the file could not be read).
    pub fn line(&self) -> usize {
        match self {
            ReqError::NoCriterion { .. } => 1,
            ReqError::DuplicateId { line, .. }
            | ReqError::GivenWithoutThen { line, .. }
            | ReqError::UnknownPriority { line, .. }
            | ReqError::EmptyCriterion { line, .. }
            | ReqError::DuplicateRequirement { line, .. } => *line,
            ReqError::Read { .. } | ReqError::Symlink { .. } => 0,
        }
    }
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("static regex")
}

static HEADING: LazyLock<Regex> = LazyLock::new(|| re(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$"));
/// A list marker (and checkbox) at the front of a line: its indent and its length.
static LIST: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?"));
/// An AC id at the front of what follows the list marker or heading hashes.
static AC: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?P<open>[*_`]*)(?P<id>AC-\d+(?:\.\d+)*)(?P<close>[*_`]*)\s*(?P<sep>[:.)\u{2014}\u{2013}-])?\s*(?:\*\*|__)?\s*(?P<rest>.*)$",
    )
});
static PRIORITY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^\s*(?:[-*+]\s+)?[*_]*priority[*_]*\s*:\s*[*_]*\s*(?P<word>[A-Za-z0-9]+)[*_]*(?:\W.*)?$",
    )
});
static PRIORITY_SUFFIX: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\s*[(\[]\s*priority\s*:\s*(?P<word>[^)\]\s]+)\s*[)\]]"));
static CLAUSE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^\s*(?:(?:[-*+]|\d{1,3}[.)])\s+)?[*_]*(?P<kw>given|when|then|and|but)\b[*_]*\s*[:,]?\s*[*_]*\s*(?P<rest>.*)$",
    )
});
static FRONT: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*(?P<key>[A-Za-z_]+)\s*:\s*(?P<value>.*?)\s*$"));
static REQ_ID: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\bREQ-\d+"));
static REQ_PREFIX: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^REQ-\d+\s*(?:[:.\u{2014}\u{2013}-]\s*)?"));

/// `` `CALL` verb `V` `` and its variants.
static EXAMPLE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)`(?P<call>[^`]+)`\s*(?:(?:should|must|will|shall)\s+)?(?P<verb>(?:returns?|gives?|yields?|equals?|is\s+equal\s+to|is|be|raises?|throws?)\b|==)\s*(?:`(?P<val>[^`]*)`|(?P<word>-?\d+(?:\.\d+)?|[A-Za-z_][\w.]*))",
    )
});
/// `` `CALL == V` `` in one pair of backticks.
static EXAMPLE_INLINE: LazyLock<Regex> =
    LazyLock::new(|| re(r"`(?P<call>[^`=]+?)\s*==\s*(?P<val>[^`]+?)\s*`"));
/// A Then-clause's expectation, for a When-clause's call.
static THEN_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?P<verb>\b(?:returns?|gives?|yields?|equals?|is\s+equal\s+to|is|be|raises?|throws?)\b|==)\s*(?:`(?P<val>[^`]*)`|(?P<word>-?\d+(?:\.\d+)?|[A-Za-z_][\w.]*))",
    )
});
static THEN_PASSIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)`?(?P<exc>[A-Za-z_][\w.]*)`?\s+(?:is|should\s+be|must\s+be|will\s+be)\s+(?:raised|thrown)\b",
    )
});
static CALL: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*\(.*\)$"));
static BACKTICKED: LazyLock<Regex> = LazyLock::new(|| re(r"`([^`]+)`"));

#[derive(Debug, Clone, Copy, PartialEq)]
enum Form {
    /// `### AC-4: title`: takes every line up to the next heading.
    Heading,
    /// A list item; its marker's indent.
    List(usize),
    /// `**AC-5**` or `AC-6: text` at the start of a line.
    Bare,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Clause {
    Given,
    When,
    Then,
}

/// A criterion being read.
struct Open {
    id: String,
    line: usize,
    form: Form,
    text: Vec<String>,
    own_text: bool,
    given: Vec<String>,
    given_line: Option<usize>,
    when: Vec<String>,
    then: Vec<String>,
    last: Option<Clause>,
    blank_seen: bool,
    priority: Option<Priority>,
    /// Every line that belongs to it, for examples.
    lines: Vec<String>,
}

struct Parser<'a> {
    path: &'a Path,
    criteria: Vec<Criterion>,
    first_line: HashMap<String, usize>,
    open: Option<Open>,
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn priority_at(path: &Path, line: usize, word: &str) -> Result<Priority, ReqError> {
    word.parse().map_err(|_| ReqError::UnknownPriority {
        path: path.to_path_buf(),
        line,
        word: word.to_string(),
    })
}

impl Parser<'_> {
    /// Takes a `(priority: x)` suffix off `text`, setting the open criterion's priority.
    fn strip_suffix(&mut self, text: &str, line: usize) -> Result<String, ReqError> {
        let Some(m) = PRIORITY_SUFFIX.captures(text) else {
            return Ok(text.to_string());
        };
        let p = priority_at(self.path, line, &m["word"])?;
        if let Some(open) = self.open.as_mut() {
            open.priority = Some(p);
        }
        Ok(PRIORITY_SUFFIX.replace(text, "").trim().to_string())
    }

    fn start(&mut self, id: &str, line: usize, form: Form, rest: &str) -> Result<(), ReqError> {
        self.close()?;
        let id = id.to_ascii_uppercase();
        if let Some(&first) = self.first_line.get(&id) {
            return Err(ReqError::DuplicateId {
                path: self.path.to_path_buf(),
                line,
                id,
                first,
            });
        }
        self.first_line.insert(id.clone(), line);
        self.open = Some(Open {
            id,
            line,
            form,
            text: Vec::new(),
            own_text: false,
            given: Vec::new(),
            given_line: None,
            when: Vec::new(),
            then: Vec::new(),
            last: None,
            blank_seen: false,
            priority: None,
            lines: Vec::new(),
        });
        let rest = self.strip_suffix(rest.trim_end_matches(['*', '_']).trim(), line)?;
        if !rest.is_empty() {
            let open = self.open.as_mut().expect("just opened");
            open.own_text = true;
            open.text.push(rest.clone());
            open.lines.push(rest);
        }
        Ok(())
    }

    fn close(&mut self) -> Result<(), ReqError> {
        let Some(o) = self.open.take() else {
            return Ok(());
        };
        let join = |parts: &[String]| -> Option<String> {
            let s = parts.join(" and ");
            (!s.trim().is_empty()).then(|| s.trim().to_string())
        };
        let (given, when, then) = (join(&o.given), join(&o.when), join(&o.then));
        if given.is_some() && then.is_none() {
            return Err(ReqError::GivenWithoutThen {
                path: self.path.to_path_buf(),
                line: o.given_line.unwrap_or(o.line),
                id: o.id,
            });
        }
        let mut text = o.text.join(" ").trim().to_string();
        if text.is_empty() {
            let parts: Vec<String> = [("Given", &given), ("when", &when), ("then", &then)]
                .into_iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v}")))
                .collect();
            text = parts.join(", ");
            if let Some(first) = text.get(..1) {
                text = first.to_uppercase() + &text[1..];
            }
        }
        if text.is_empty() {
            return Err(ReqError::EmptyCriterion {
                path: self.path.to_path_buf(),
                line: o.line,
                id: o.id,
            });
        }
        let mut examples = Vec::new();
        for line in &o.lines {
            for ex in examples_in(line) {
                if !examples.contains(&ex) {
                    examples.push(ex);
                }
            }
        }
        if examples.is_empty() {
            if let (Some(w), Some(t)) = (&when, &then) {
                examples.extend(when_then_example(w, t));
            }
        }
        self.criteria.push(Criterion {
            id: o.id,
            text,
            given,
            when,
            then,
            line: o.line,
            priority: o.priority,
            examples,
        });
        Ok(())
    }

    /// A Given/When/Then/And/But line inside the open criterion; false when it is not one.
    fn clause(&mut self, raw: &str, line: usize) -> Result<bool, ReqError> {
        let Some(c) = CLAUSE.captures(raw) else {
            return Ok(false);
        };
        let Some(open) = self.open.as_ref() else {
            return Ok(false);
        };
        let kw = c["kw"].to_string();
        let lower_start = kw.starts_with(|ch: char| ch.is_lowercase());
        // "- AC-1: The discount applies\n  when the total ..." continues a sentence.
        if lower_start
            && open.form != Form::Heading
            && open.own_text
            && open.last.is_none()
            && !raw.contains("**")
        {
            return Ok(false);
        }
        let which = match kw.to_ascii_lowercase().as_str() {
            "given" => Some(Clause::Given),
            "when" => Some(Clause::When),
            "then" => Some(Clause::Then),
            _ => open.last,
        };
        let Some(which) = which else {
            // An `And` before any clause continues the text.
            return Ok(false);
        };
        let rest = self.strip_suffix(c["rest"].trim_end_matches(['*', '_']).trim(), line)?;
        let open = self.open.as_mut().expect("checked above");
        match which {
            Clause::Given => {
                open.given_line.get_or_insert(line);
                open.given.push(rest.clone());
            }
            Clause::When => open.when.push(rest.clone()),
            Clause::Then => open.then.push(rest.clone()),
        }
        open.last = Some(which);
        open.lines.push(rest);
        Ok(true)
    }
}

/// Parses one requirement file.
pub fn parse(path: &Path, text: &str) -> Result<Requirement, ReqError> {
    let mut p = Parser {
        path,
        criteria: Vec::new(),
        first_line: HashMap::new(),
        open: None,
    };
    let mut file_priority: Option<Priority> = None;
    let mut front_id: Option<String> = None;
    let mut front_title: Option<String> = None;
    let mut heading_id: Option<String> = None;
    let mut h1: Option<String> = None;
    let mut first_heading: Option<String> = None;
    let mut fence: Option<&str> = None;
    let mut in_front = false;

    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        // Front matter.
        if i == 0 && trimmed == "---" {
            in_front = true;
            continue;
        }
        if in_front {
            if trimmed == "---" || trimmed == "..." {
                in_front = false;
            } else if let Some(c) = FRONT.captures(raw) {
                let value = c["value"].trim_matches(['"', '\'']).to_string();
                match c["key"].to_ascii_lowercase().as_str() {
                    "id" if !value.is_empty() => front_id = Some(value),
                    "title" if !value.is_empty() => front_title = Some(value),
                    "priority" if !value.is_empty() => {
                        file_priority = Some(priority_at(path, line, &value)?)
                    }
                    _ => {}
                }
            }
            continue;
        }
        // Code fences.
        if let Some(marker) = fence {
            if trimmed.starts_with(marker) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            continue;
        }
        if trimmed.is_empty() {
            if let Some(o) = p.open.as_mut() {
                o.blank_seen = true;
            }
            continue;
        }

        if let Some(h) = HEADING.captures(raw) {
            let content = h[2].to_string();
            if let Some(ac) = AC.captures(&content) {
                p.start(&ac["id"], line, Form::Heading, &ac["rest"])?;
                continue;
            }
            p.close()?;
            if heading_id.is_none() {
                heading_id = REQ_ID
                    .find(&content)
                    .map(|m| m.as_str().to_ascii_uppercase());
            }
            let title = REQ_PREFIX.replace(&content, "").trim().to_string();
            let generic = {
                let t = title.to_ascii_lowercase();
                t.is_empty() || t.contains("acceptance criteria") || t == "criteria"
            };
            if !generic {
                if h[1].len() == 1 && h1.is_none() {
                    h1 = Some(title.clone());
                }
                first_heading.get_or_insert(title);
            }
            continue;
        }

        // A criterion starting on this line.
        let (prefix_len, list_indent) = match LIST.captures(raw) {
            Some(m) => (m[0].len(), Some(m[1].len())),
            None => (indent(raw), None),
        };
        let after = &raw[prefix_len..];
        if let Some(ac) = AC.captures(after) {
            let decorated = !ac["open"].is_empty() || !ac["close"].is_empty();
            // A bare id needs a separator: "AC-9 is mentioned ..." is prose.
            let bare_ok = ac.name("sep").is_some();
            if list_indent.is_some() || decorated || bare_ok {
                let form = match list_indent {
                    Some(n) => Form::List(n),
                    None => Form::Bare,
                };
                p.start(&ac["id"], line, form, &ac["rest"])?;
                continue;
            }
        }

        if let Some(c) = PRIORITY.captures(raw) {
            let word = c["word"].to_string();
            let prio = priority_at(path, line, &word)?;
            let mine = match p.open.as_ref().map(|o| o.form) {
                Some(Form::Heading | Form::Bare) => true,
                Some(Form::List(n)) => indent(raw) > n,
                None => false,
            };
            if mine {
                p.open.as_mut().expect("open").priority = Some(prio);
            } else {
                p.close()?;
                file_priority.get_or_insert(prio);
            }
            continue;
        }

        if p.clause(raw, line)? {
            continue;
        }

        // Any other line: text of the open criterion, or prose.
        let Some(form) = p.open.as_ref().map(|o| o.form) else {
            continue;
        };
        let blank_seen = p.open.as_ref().is_some_and(|o| o.blank_seen);
        let takes = match form {
            Form::Heading => true,
            Form::List(n) => {
                let sibling = list_indent.is_some_and(|i| i <= n);
                if sibling {
                    p.close()?;
                    continue;
                }
                indent(raw) > n || !blank_seen
            }
            Form::Bare => indent(raw) > 0 || !blank_seen,
        };
        if takes {
            let text = p.strip_suffix(trimmed, line)?;
            let o = p.open.as_mut().expect("open");
            o.text.push(text.clone());
            o.lines.push(text);
        }
    }
    p.close()?;

    if p.criteria.is_empty() {
        return Err(ReqError::NoCriterion {
            path: path.to_path_buf(),
        });
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let id = REQ_ID
        .find(&stem)
        .filter(|m| m.start() == 0)
        .map(|m| m.as_str().to_ascii_uppercase())
        .or(front_id)
        .or(heading_id)
        .unwrap_or(stem);
    let title = front_title
        .or(h1)
        .or(first_heading)
        .unwrap_or_else(|| id.clone());
    Ok(Requirement {
        id,
        title,
        priority: file_priority,
        criteria: p.criteria,
        file: path.to_path_buf(),
    })
}

/// The examples stated on one line.
fn examples_in(line: &str) -> Vec<Example> {
    let mut out = Vec::new();
    for c in EXAMPLE.captures_iter(line) {
        let call = c["call"].trim();
        if !CALL.is_match(call) {
            continue;
        }
        if let Some(expect) = expectation(
            &c["verb"],
            c.name("val").map(|m| m.as_str()),
            c.name("word").map(|m| m.as_str()),
        ) {
            out.push(Example {
                call: call.to_string(),
                expect,
            });
        }
    }
    for c in EXAMPLE_INLINE.captures_iter(line) {
        let call = c["call"].trim();
        if CALL.is_match(call) {
            out.push(Example {
                call: call.to_string(),
                expect: Expect::Equals(c["val"].to_string()),
            });
        }
    }
    out
}

/// What `verb` followed by a backticked `val` or a bare `word` expects, if it is one of the
/// recognised phrasings.
fn expectation(verb: &str, val: Option<&str>, word: Option<&str>) -> Option<Expect> {
    let verb = verb.to_ascii_lowercase();
    if verb.starts_with("raise") || verb.starts_with("throw") {
        return match (val, word) {
            (Some(v), _) if !v.trim().is_empty() => Some(Expect::Raises(v.trim().to_string())),
            (None, Some(w)) if w.starts_with(|c: char| c.is_ascii_uppercase()) => {
                Some(Expect::Raises(w.to_string()))
            }
            _ => None,
        };
    }
    if let Some(v) = val {
        return Some(Expect::Equals(v.to_string()));
    }
    let w = word?;
    match w.to_ascii_lowercase().as_str() {
        "true" | "truthy" => Some(Expect::Truthy),
        "false" | "falsy" | "falsey" => Some(Expect::Falsy),
        "none" | "null" | "nil" | "undefined" => Some(Expect::Equals(w.to_string())),
        _ if w.parse::<f64>().is_ok() => Some(Expect::Equals(w.to_string())),
        _ => None,
    }
}

/// "When `f(1)` is called / Then the result is `2`".
fn when_then_example(when: &str, then: &str) -> Option<Example> {
    let calls: Vec<&str> = BACKTICKED
        .captures_iter(when)
        .map(|c| c.get(1).expect("group").as_str().trim())
        .filter(|s| CALL.is_match(s))
        .collect();
    let [call] = calls[..] else {
        return None;
    };
    let expect = if let Some(c) = THEN_PASSIVE.captures(then) {
        Expect::Raises(c["exc"].to_string())
    } else {
        THEN_VALUE.captures_iter(then).find_map(|c| {
            expectation(
                &c["verb"],
                c.name("val").map(|m| m.as_str()),
                c.name("word").map(|m| m.as_str()),
            )
        })?
    };
    Some(Example {
        call: call.to_string(),
        expect,
    })
}

/// Folders never searched for requirement files.
fn skipped_dir(dir: &Path, name: &str) -> bool {
    matches!(
        name,
        ".git"
            | ".hg"
            | ".svn"
            | "node_modules"
            | ".workflow"
            | "target"
            | ".venv"
            | "venv"
            | ".tox"
            | ".nox"
            | "__pycache__"
            | ".pytest_cache"
            | ".mypy_cache"
            | "site-packages"
    ) || dir.join("pyvenv.cfg").is_file()
}

fn is_req_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("req-") && lower.ends_with(".md")
}

/// The requirement files under `spec_dir` (relative to `root` unless absolute) or, without
/// one, anywhere in the repository outside VCS data, dependencies, build output, virtual
/// environments and our sessions; parsed and sorted by id (`REQ-2` before `REQ-10`). Two files
/// with the same id are an error, and so is a requirement file that is a symbolic link.
/// Symlinked folders are not followed.
pub fn load_dir(root: &Path, spec_dir: Option<&Path>) -> Result<Vec<Requirement>, ReqError> {
    let start = match spec_dir {
        Some(d) if d.is_absolute() => d.to_path_buf(),
        Some(d) => root.join(d),
        None => root.to_path_buf(),
    };
    let mut files = Vec::new();
    let mut stack = vec![start];
    while let Some(dir) = stack.pop() {
        let read_err = |cause| ReqError::Read {
            path: dir.clone(),
            cause,
        };
        for entry in std::fs::read_dir(&dir).map_err(read_err)? {
            let entry = entry.map_err(read_err)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                if !skipped_dir(&path, &name) {
                    stack.push(path);
                }
            } else if is_req_file(&name) {
                if kind.is_symlink() {
                    return Err(ReqError::Symlink { path });
                }
                if kind.is_file() {
                    files.push(path);
                }
            }
        }
    }
    let mut reqs = Vec::new();
    for file in files {
        // No-follow: a file swapped for a link since the listing is refused too.
        let bytes = crate::util::read_regular_nofollow(&file).map_err(|cause| ReqError::Read {
            path: file.clone(),
            cause,
        })?;
        reqs.push(parse(&file, &String::from_utf8_lossy(&bytes))?);
    }
    reqs.sort_by(|a, b| {
        sort_key(&a.id)
            .cmp(&sort_key(&b.id))
            .then(a.file.cmp(&b.file))
    });
    for pair in reqs.windows(2) {
        if pair[0].id == pair[1].id {
            return Err(ReqError::DuplicateRequirement {
                path: pair[1].file.clone(),
                line: 1,
                id: pair[1].id.clone(),
                other: pair[0].file.clone(),
            });
        }
    }
    Ok(reqs)
}

/// `REQ-2` before `REQ-10`: the number, then the text.
fn sort_key(id: &str) -> (u64, String) {
    let digits: String = id
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit())
        .collect();
    (digits.parse().unwrap_or(u64::MAX), id.to_string())
}

#[cfg(test)]
mod tests;
