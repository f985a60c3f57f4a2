//! Go projects: `gofmt -e` parses each changed file (it reads, never builds or runs anything).
//! Types are not checked here: `go vet` needs the module's dependencies, the test run builds the
//! packages anyway.

use std::sync::LazyLock;

use regex::Regex;

use crate::testing::code_check::{
    exec, relative, tool_note, CheckInput, CodeCheck, IssueKind, Severity,
};

static GOFMT_ERROR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(.+?\.go):(\d+):(?:\d+:)?\s*(.*)$").unwrap());

pub fn check(input: &CheckInput, changed: &[String], out: &mut CodeCheck) {
    out.notes.push(
        "Go: types are not checked here (go vet needs the module's dependencies; the test run builds the packages)"
            .into(),
    );
    let files: Vec<String> = changed
        .iter()
        .filter(|f| f.ends_with(".go") && !f.split('/').any(|d| d == "testdata" || d == "vendor"))
        .cloned()
        .collect();
    if files.is_empty() {
        return;
    }
    // -l lists the files gofmt would reformat (on stdout, ignored): nothing is written.
    let mut argv = vec!["gofmt".to_string(), "-l".to_string(), "-e".to_string()];
    argv.extend(files.iter().cloned());
    let ran = match exec(input, Vec::new()).run(&argv) {
        Ok(ran) => ran,
        Err(e) => return out.notes.push(tool_note("syntax (gofmt -e)", &e)),
    };
    // The first error of a file: the rest of gofmt's list follows from it.
    let mut seen: Vec<String> = Vec::new();
    for c in ran.stderr.lines().filter_map(|l| GOFMT_ERROR.captures(l)) {
        if seen.iter().any(|f| *f == c[1]) {
            continue;
        }
        seen.push(c[1].to_string());
        out.push(
            Severity::Critical,
            IssueKind::DoesNotCompile,
            &relative(input.root, &c[1]),
            c[2].parse().ok(),
            c[3].trim().to_string(),
        );
    }
    out.checked.push(format!(
        "syntax: gofmt -e on {} changed Go files",
        files.len()
    ));
}
