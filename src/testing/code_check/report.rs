//! The `## L0 code validation` section of a report.

use std::fmt::Write;

use super::{CodeCheck, Severity};

/// A Markdown table cell: one line, no pipe that would end the cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

pub(super) fn markdown(check: &CodeCheck) -> String {
    let mut md = String::from("## L0 code validation\n\n");
    let critical = check.critical().len();
    let warnings = check.issues.len() - critical;
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let _ = writeln!(
        md,
        "{} critical, {}; type checker: {}.\n",
        critical,
        plural(warnings, "warning"),
        check.type_checker.as_deref().unwrap_or("none")
    );
    if check.issues.is_empty() {
        md.push_str("No issue found.\n\n");
    }
    for (severity, title) in [
        (Severity::Critical, "Critical (blocks the loop)"),
        (Severity::Warning, "Warnings"),
    ] {
        let issues: Vec<_> = check
            .issues
            .iter()
            .filter(|i| i.severity == severity)
            .collect();
        if issues.is_empty() {
            continue;
        }
        let _ = writeln!(
            md,
            "### {title}\n\n| Where | Kind | Message |\n|---|---|---|"
        );
        for i in issues {
            let place = match i.line {
                Some(line) => format!("{}:{line}", i.file),
                None => i.file.clone(),
            };
            let _ = writeln!(
                md,
                "| `{}` | {} | {} |",
                cell(&place),
                i.kind.label(),
                cell(&i.message)
            );
        }
        md.push('\n');
    }
    if !check.checked.is_empty() {
        md.push_str("Checked:\n\n");
        for c in &check.checked {
            let _ = writeln!(md, "- {c}");
        }
        md.push('\n');
    }
    if !check.notes.is_empty() {
        md.push_str("Not checked:\n\n");
        for n in &check.notes {
            let _ = writeln!(md, "- {n}");
        }
        md.push('\n');
    }
    md
}
