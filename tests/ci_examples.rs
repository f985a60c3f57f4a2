//! The example CI pipelines in docs/ci/ parse as YAML, and every team-testing command in them
//! exists: its subcommand, each of its options, and each option value the help lists.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::BIN;

/// The shell text of a pipeline: GitHub's `steps[].run`, GitLab's `script[]`.
fn shell_lines(pipeline: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |text: &str| out.extend(text.lines().map(|l| l.trim().to_string()));
    if let Some(jobs) = pipeline["jobs"].as_object() {
        for job in jobs.values() {
            for step in job["steps"].as_array().into_iter().flatten() {
                if let Some(run) = step["run"].as_str() {
                    push(run);
                }
            }
        }
    } else if let Some(jobs) = pipeline.as_object() {
        for job in jobs.values() {
            for line in job["script"].as_array().into_iter().flatten() {
                push(line.as_str().unwrap_or_default());
            }
        }
    }
    out
}

/// The variables a pipeline sets for its commands: GitHub's workflow `env`, GitLab's job
/// `variables`.
fn variables(pipeline: &Value) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut add = |map: &Value| {
        for (k, v) in map.as_object().into_iter().flatten() {
            if let Some(v) = v.as_str() {
                out.insert(k.clone(), v.to_string());
            }
        }
    };
    add(&pipeline["env"]);
    for job in pipeline.as_object().into_iter().flatten().map(|(_, j)| j) {
        add(&job["variables"]);
    }
    out
}

fn help(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .arg("--help")
        .env("COLUMNS", "10000")
        .output()
        .unwrap();
    assert!(out.status.success(), "team-testing {args:?} --help failed");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_example_ci_pipelines_parse_and_name_only_commands_that_exist() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci");
    let mut checked = 0;
    for name in ["github-actions.yml", "gitlab-ci.yml"] {
        let text = std::fs::read_to_string(docs.join(name)).unwrap();
        let pipeline: Value =
            serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let vars = variables(&pipeline);
        let commands: Vec<Vec<String>> = shell_lines(&pipeline)
            .iter()
            .filter(|l| l.starts_with("team-testing "))
            .map(|l| {
                shlex::split(l)
                    .unwrap_or_else(|| panic!("{name}: unbalanced quotes in {l}"))
                    .into_iter()
                    .take_while(|t| !matches!(t.as_str(), ">" | "|" | "||" | ";" | "&&" | "2>&1"))
                    // `$NAME` as the pipeline sets it, so its value is checked too.
                    .map(|t| match t.strip_prefix('$').and_then(|n| vars.get(n)) {
                        Some(value) => value.clone(),
                        None => t,
                    })
                    .collect()
            })
            .collect();
        let subcommands: Vec<&str> = commands.iter().map(|c| c[1].as_str()).collect();
        assert!(
            subcommands.contains(&"run") && subcommands.contains(&"report"),
            "{name}: {subcommands:?}"
        );
        for command in &commands {
            let sub = command[1].as_str();
            let text = help(&[sub]);
            for (i, token) in command.iter().enumerate().skip(2) {
                if !token.starts_with('-') {
                    continue;
                }
                let flag = token.split('=').next().unwrap();
                let line = text
                    .lines()
                    .find(|l| {
                        // The option column: `-y, --yes <X>` before the description.
                        let head = l.trim_start().split("  ").next().unwrap_or_default();
                        head.starts_with('-') && head.split([' ', ',']).any(|w| w == flag)
                    })
                    .unwrap_or_else(|| panic!("{name}: `{sub}` has no {flag}:\n{text}"));
                // A value the help lists the possible ones of must be one of them.
                let value = command.get(i + 1).filter(|v| !v.starts_with(['-', '$']));
                if let (Some(value), Some(list)) = (value, line.split("[possible values: ").nth(1))
                {
                    let possible: Vec<&str> = list.trim_end_matches(']').split(", ").collect();
                    for v in value.split(',') {
                        assert!(
                            possible.contains(&v),
                            "{name}: {flag} {v}: not in {possible:?}"
                        );
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "only {checked} options checked");
}
