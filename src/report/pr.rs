//! `report --format pr`: a Markdown summary made for a pull-request comment. What a reviewer
//! reads first comes first: the behaviour the change altered, then the defects with their
//! inputs, then each layer against its gate and coverage before -> after of the files in scope
//! (the changed ones in a change-scoped run), then what `apply` would add. It
//! stays under GitHub's 65,536 characters for a comment (long tables are cut with a count of
//! what was left out), and nothing from the project reaches it as HTML or as Markdown syntax:
//! the renderer escapes `<`, `>` and `&`, and the project's words are code or backslash-escaped.

use std::path::Path;

use super::document::{Block, Document, Section, Table, Text};
use super::Report;

/// GitHub's limit for a comment, in characters.
pub const COMMENT_LIMIT: usize = 65_536;

/// Rows a table shows before it says how many more there are.
const MAX_ROWS: usize = 40;

/// Characters of a cell before it is cut.
const MAX_CELL: usize = 240;

/// The summary of `report` for a pull request; `session_root` holds the tests `apply` delivers.
pub fn pr_summary(report: &Report, session_root: &Path) -> String {
    let found = super::sarif::found(report, session_root);
    let mut sections = Vec::new();
    if let Some(b) = report.behaviour.as_ref().filter(|b| !b.changes.is_empty()) {
        sections.push(behaviour(b, &report.session_id));
    }
    let defects: Vec<_> = found
        .iter()
        .filter(|f| !matches!(f.rule, "likely-regression" | "behaviour-change"))
        .collect();
    if !defects.is_empty() {
        sections.push(defects_section(&defects));
    }
    if let Some(s) = coverage(report, session_root) {
        sections.push(s);
    }
    sections.push(apply_section(report, session_root));
    let doc = Document {
        title: title(report, defects.len()),
        sections,
    };
    let mut md = super::markdown::render_document(&doc);
    if md.chars().count() > COMMENT_LIMIT {
        // The tables are cut already; a pathological cell count is what is left.
        let note = "\n\n… cut to fit a pull-request comment: `team-testing report` has the rest.\n";
        let keep = COMMENT_LIMIT - note.chars().count() - 1;
        let cut: String = md.chars().take(keep).collect();
        // At a line's end: a row cut inside a code span would let its text be read as Markdown.
        let whole_lines = cut.rfind('\n').map_or("", |i| &cut[..i]);
        md = format!("{whole_lines}{note}");
    }
    md
}

fn title(report: &Report, defects: usize) -> String {
    let mut parts = Vec::new();
    if let Some(b) = report.behaviour.as_ref().filter(|b| !b.changes.is_empty()) {
        parts.push(format!("{} behaviour change(s)", b.changes.len()));
    }
    parts.push(format!("{defects} finding(s)"));
    // The project's own tests, then with the first layer's (the one every pipeline has).
    if let Some(l) = report.baseline.as_ref().and_then(|b| b.layers.first()) {
        parts.push(format!(
            "{} coverage {:.1}% → {:.1}%",
            l.layer, l.before, l.after
        ));
    }
    format!("team-testing: {}", parts.join(", "))
}

fn behaviour(b: &crate::gen::behaviour::BehaviourReport, session: &str) -> Section {
    let mut out = Section::new("Behaviour the change altered", "pr-behaviour");
    out.para(Text::default().plain(inert(&b.headline())).plain("."));
    let rows: Vec<Vec<Text>> = b
        .changes
        .iter()
        .map(|c| {
            vec![
                Text::from(c.id.as_str()),
                code(&c.function),
                code(&c.input),
                code(&c.before),
                code(&c.after),
                Text::from(c.verdict.words()),
            ]
        })
        .collect();
    out.push(table(
        &["Id", "Function", "Input", "Before", "After", "Verdict"],
        rows,
    ));
    out.para(
        Text::default()
            .plain("Keep the new behaviour's test with ")
            .code(format!("team-testing apply {session} --keep-new B1"))
            .plain(
                ", or the old one's (a regression test that fails until the code is fixed) with ",
            )
            .code("--keep-old B1")
            .plain("."),
    );
    out
}

fn defects_section(found: &[&super::sarif::Found]) -> Section {
    let mut out = Section::new("Defects and side effects", "pr-defects");
    let rows = found
        .iter()
        .map(|f| {
            let place = match f.place.line {
                Some(line) => format!("{}:{line}", f.place.file),
                None => f.place.file.clone(),
            };
            // The message up to its excerpt; its `call` parts are code already.
            let words = f.message.lines().next().unwrap_or_default();
            vec![
                Text::from(f.level()),
                Text::from(f.rule),
                code(&place),
                backquoted(words),
            ]
        })
        .collect();
    out.push(table(
        &["Level", "Kind", "Where", "What, with its input"],
        rows,
    ));
    out
}

/// Each layer's figures against its gate, then each file in scope: the project's own tests'
/// coverage (when it has a suite) and with the generated tests (the best layer's last run).
fn coverage(report: &Report, session_root: &Path) -> Option<Section> {
    let percent = |v: Option<f64>| v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.1}%"));
    let layers: Vec<Vec<Text>> = report
        .layers
        .iter()
        .filter(|l| l.not_applicable.is_none())
        .map(|l| {
            let gate = match l.gate.as_str() {
                "Met" => "met".to_string(),
                _ => format!("below after {} GC round(s)", l.gc_rounds_used),
            };
            vec![
                Text::from(l.layer.as_str()),
                Text::from(percent(l.final_pass_rate.map(|p| p * 100.0))),
                Text::from(percent(l.final_coverage)),
                Text::from(percent(l.target)),
                Text::from(gate),
            ]
        })
        .collect();
    let files: Vec<(String, Option<f64>, Option<f64>)> = match &report.baseline {
        Some(b) if !b.files.is_empty() => b
            .files
            .iter()
            .map(|f| (f.file.clone(), f.before, f.after))
            .collect(),
        // No suite of the project's own: what the layers' last runs measured.
        _ => files_after(session_root)
            .into_iter()
            .map(|(file, after)| (file, None, Some(after)))
            .collect(),
    };
    if layers.is_empty() && files.is_empty() {
        return None;
    }
    let mut out = Section::new("Coverage", "pr-coverage");
    if !layers.is_empty() {
        out.push(table(
            &["Layer", "Pass rate", "Coverage", "Target", "Gate"],
            layers,
        ));
    }
    if !files.is_empty() {
        let before = if report.baseline.is_some() {
            "the project's own tests"
        } else {
            "no tests of the project's own"
        };
        out.para(format!("Line coverage of the files in scope: before ({before}), then with the generated tests."));
        let rows = files
            .into_iter()
            .map(|(file, b, a)| vec![code(&file), Text::from(percent(b)), Text::from(percent(a))])
            .collect();
        out.push(table(&["File", "Before", "After"], rows));
    }
    Some(out)
}

/// Each file's best line coverage over the layers' last runs.
fn files_after(session_root: &Path) -> Vec<(String, f64)> {
    let results = crate::artifacts::runs(session_root);
    let mut best: std::collections::BTreeMap<String, f64> = Default::default();
    for layer in crate::session::LAYER_DIRS {
        let Some(record) = results
            .of_layer(layer)
            .last()
            .and_then(|r| r.coverage_file())
            .and_then(|f| {
                crate::util::read_json::<crate::artifacts::CoverageRecord>(&session_root.join(f))
                    .ok()
            })
        else {
            continue;
        };
        for f in record.files.iter().filter(|f| f.lines_total > 0) {
            let p = 100.0 * f.lines_covered as f64 / f.lines_total as f64;
            let entry = best.entry(f.path.clone()).or_insert(p);
            *entry = entry.max(p);
        }
    }
    best.into_iter().collect()
}

/// The test files a run judged with their present content, per layer: what `apply` delivers
/// (less the tests it cuts out of them).
fn apply_section(report: &Report, session_root: &Path) -> Section {
    let mut out = Section::new("What `apply` would add", "pr-apply");
    let mut rows = Vec::new();
    for layer in crate::session::LAYER_DIRS {
        for file in crate::artifacts::layer_files(session_root, layer) {
            if file.unjudged.is_none() {
                rows.push(vec![Text::from(layer), code(&file.name)]);
            }
        }
    }
    if rows.is_empty() {
        out.para("Nothing: no generated test file was judged by a run.");
        return out;
    }
    out.para(
        Text::default()
            .plain(format!("{} test file(s); ", rows.len()))
            .code(format!("team-testing apply {}", report.session_id))
            .plain(
                " copies them into the project, where its own test command runs them \
                 (less any test the session's runs took out, which it names).",
            ),
    );
    out.push(table(&["Layer", "File"], rows));
    out
}

/// A table of at most [`MAX_ROWS`] rows, and a line saying how many more there were.
fn table(head: &[&str], mut rows: Vec<Vec<Text>>) -> Block {
    let more = rows.len().saturating_sub(MAX_ROWS);
    rows.truncate(MAX_ROWS);
    if more > 0 {
        let mut last = vec![Text::from(format!("… and {more} more"))];
        last.resize(head.len(), Text::default());
        rows.push(last);
    }
    Block::Table(Table::new(head, rows))
}

/// The project's words as a code span, cut to [`MAX_CELL`] characters.
fn code(s: &str) -> Text {
    Text::default().code(cut(s))
}

/// Our words with the project's `quoted` parts as code, the rest [`inert`].
fn backquoted(s: &str) -> Text {
    s.split('`')
        .enumerate()
        .filter(|(_, part)| !part.is_empty())
        .fold(Text::default(), |t, (i, part)| {
            if i % 2 == 1 {
                t.code(cut(part))
            } else {
                t.plain(inert(&cut(part)))
            }
        })
}

fn cut(s: &str) -> String {
    // One line: a lone `\r` ends a line in Markdown too, and ends a table row with it.
    let s: String = s
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if s.chars().count() <= MAX_CELL {
        s
    } else {
        s.chars().take(MAX_CELL).collect::<String>() + "…"
    }
}

/// Markdown's active characters backslash-escaped, so a name like `[x](javascript:…)` or
/// `**bold**` shows as written (`<`, `>` and `&` the renderer turns into entities); a zero-width
/// space after `@`, and inside `://` and `www.`, so GitHub neither mentions a user nor links an
/// address the project's text holds.
fn inert(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '!' | '#' | '~' | '(' | ')'
        ) {
            out.push('\\');
        }
        out.push(c);
        if c == '@' {
            out.push('\u{200b}');
        }
    }
    out.replace("://", ":\u{200b}//")
        .replace("www.", "www\u{200b}.")
}
