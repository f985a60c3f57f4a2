//! Go projects: `gofmt -e` parses each changed file, then `go vet ./...` type-checks the module
//! offline (a module whose dependencies are not in the cache is said, not failed).

use std::sync::LazyLock;

use regex::Regex;

use crate::testing::code_check::{
    exec, relative, tool_note, CheckInput, CodeCheck, IssueKind, Severity,
};

static GOFMT_ERROR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(.+?\.go):(\d+):(?:\d+:)?\s*(.*)$").unwrap());

pub fn check(input: &CheckInput, changed: &[String], out: &mut CodeCheck) {
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
    // A file that does not parse is enough said: vet would only say it again.
    if seen.is_empty() {
        vet(input, &files, out);
    }
}

/// `vet: ./pricing.go:8:9: undefined: x`: go vet's type check failed (the code does not build);
/// `./pricing.go:10:2: …` without the prefix is one of vet's findings.
static VET_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(vet: )?(.+?\.go):(\d+):(?:\d+:)?\s*(.*)$").unwrap());

/// `go vet ./...` on the module: what does not type-check is critical, vet's findings are
/// warnings. Offline: a module whose dependencies are not downloaded is said, not failed.
fn vet(input: &CheckInput, changed: &[String], out: &mut CodeCheck) {
    if !input.root.join("go.mod").is_file() {
        return;
    }
    // The toolchain's go when it names one, else go on PATH.
    let go = match input.tools.interpreter.as_str() {
        g if g.rsplit('/').next() == Some("go") => g.to_string(),
        _ => "go".to_string(),
    };
    let env = vec![
        (
            "GOCACHE".to_string(),
            input.scratch.join("go-cache").display().to_string(),
        ),
        ("GOWORK".to_string(), "off".to_string()),
        ("GOTOOLCHAIN".to_string(), "local".to_string()),
        ("GOPROXY".to_string(), "off".to_string()),
        ("GOFLAGS".to_string(), "-mod=readonly".to_string()),
    ];
    let argv = vec![go, "vet".to_string(), "./...".to_string()];
    let ran = match exec(input, env).run(&argv) {
        Ok(ran) => ran,
        Err(e) => return out.notes.push(tool_note("types (go vet)", &e)),
    };
    let mut found = 0;
    let mut elsewhere = Vec::new();
    for c in ran
        .stderr
        .lines()
        .filter_map(|l| VET_LINE.captures(l.trim()))
    {
        found += 1;
        let file = relative(input.root, c[2].trim_start_matches("./"));
        // Only what the change touched is its fault: a problem already elsewhere is said.
        if !changed.contains(&file) {
            elsewhere.push(format!("{file}:{}: {}", &c[3], c[4].trim()));
            continue;
        }
        let (severity, kind) = if c.get(1).is_some() {
            (Severity::Critical, IssueKind::DoesNotCompile)
        } else {
            (Severity::Warning, IssueKind::TypeError)
        };
        out.push(
            severity,
            kind,
            &file,
            c[3].parse().ok(),
            c[4].trim().to_string(),
        );
    }
    if !elsewhere.is_empty() {
        out.notes.push(format!(
            "types (go vet): outside the changed files: {}",
            elsewhere.join("; ")
        ));
    }
    if !ran.success() && found == 0 {
        out.notes.push(format!(
            "types (go vet): not checked ({})",
            crate::util::tail_lines(&ran.stderr, 3).trim()
        ));
        return;
    }
    out.checked
        .push("types: go vet ./... on the module".to_string());
}
