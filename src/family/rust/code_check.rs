//! Rust crates: `cargo check --all-targets --offline` in the check's copy, with a target folder
//! of the check's own, so a change that does not compile or type-check is refused before any
//! test runs. Only errors count; warnings are the crate's business.

use std::sync::LazyLock;

use regex::Regex;

use crate::testing::code_check::{
    exec, relative, tool_note, CheckInput, CodeCheck, IssueKind, Severity,
};

/// `src/lib.rs:16:5: error[E0425]: cannot find value `x` in this scope` (`--message-format=short`).
static CARGO_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(.+?\.rs):(\d+):\d+: (error(?:\[\w+\])?: .*)$").expect("a valid pattern")
});

pub fn check(input: &CheckInput, out: &mut CodeCheck) {
    if !input.root.join("Cargo.toml").is_file() {
        return out.notes.push(
            "Rust: no Cargo.toml in the checked folder, so the crate is not compiled".into(),
        );
    }
    // The toolchain's cargo when it names one, else cargo on PATH.
    let cargo = match input.tools.interpreter.as_str() {
        c if c.rsplit('/').next() == Some("cargo") => c.to_string(),
        _ => "cargo".to_string(),
    };
    let env = vec![
        (
            "CARGO_TARGET_DIR".to_string(),
            input.scratch.join("cargo-check").display().to_string(),
        ),
        ("CARGO_TERM_COLOR".to_string(), "never".to_string()),
    ];
    let argv: Vec<String> = [
        cargo.as_str(),
        "check",
        "--all-targets",
        "--offline",
        "--message-format=short",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    let ran = match exec(input, env).run(&argv) {
        Ok(ran) => ran,
        Err(e) => return out.notes.push(tool_note("compile (cargo check)", &e)),
    };
    let mut found = 0;
    let mut elsewhere = Vec::new();
    for c in ran
        .stderr
        .lines()
        .filter_map(|l| CARGO_ERROR.captures(l.trim()))
    {
        found += 1;
        let file = relative(input.root, &c[1]);
        // Only what the change touched is its fault: an error already in another target, or in
        // a dependency, is said and does not block.
        if !input.changed.contains(&file) {
            elsewhere.push(format!("{file}:{}: {}", &c[2], &c[3]));
            continue;
        }
        out.push(
            Severity::Critical,
            IssueKind::DoesNotCompile,
            &file,
            c[2].parse().ok(),
            c[3].to_string(),
        );
    }
    if !elsewhere.is_empty() {
        out.notes.push(format!(
            "compile (cargo check): errors outside the changed files: {}",
            elsewhere.join("; ")
        ));
    }
    if !ran.success() && found == 0 {
        // Not the code: a dependency missing offline, a toolchain problem. Said, not blocking.
        out.notes.push(format!(
            "compile (cargo check): not checked ({})",
            crate::util::tail_lines(&ran.stderr, 3).trim()
        ));
        return;
    }
    out.checked
        .push("compile: cargo check --all-targets on the crate".to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_line_is_read_and_a_warning_is_not() {
        let c = CARGO_ERROR
            .captures("src/lib.rs:16:17: error[E0425]: cannot find value `sidez` in this scope")
            .unwrap();
        assert_eq!((&c[1], &c[2]), ("src/lib.rs", "16"));
        assert!(c[3].starts_with("error[E0425]"));
        assert!(CARGO_ERROR
            .captures("src/lib.rs:3:9: warning: unused variable: `x`")
            .is_none());
    }
}
