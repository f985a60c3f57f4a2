//! From kept candidates to the files the layer delivers: tests named and grouped by module,
//! then built and run together as one more test target of the copy (each file a module of
//! it). A test that does not compile, a test that fails, and a defect test that passes are
//! dropped, until every test holds; the last run measures the files' line coverage.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use super::coverage::LlvmTools;
use super::model::Api;
use super::probe::{Probe, ProbeError, Source};
use super::render::{self, Test, Verdict};
use super::search::Kept;
use crate::testing::report::{CoverageReport, TestStatus};

/// Each module's tests (display name -> tests), in the order they were found.
pub type Files = BTreeMap<String, Vec<Test>>;

/// What a layer delivers.
pub struct Delivered {
    pub files: Files,
    pub coverage: Option<CoverageReport>,
    /// Tests dropped by the check, with why.
    pub dropped: Vec<String>,
}

/// A module's display name: its path, or `lib` for the crate's root.
pub fn module_name(path: &str) -> String {
    if path.is_empty() {
        "lib".to_string()
    } else {
        path.to_string()
    }
}

/// Names the tests and groups them by the module whose file holds what they call.
pub fn files(api: &Api, kept: &[Kept]) -> Files {
    let mut order: Vec<&Kept> = kept.iter().collect();
    order.sort_by(|a, b| {
        (a.candidate.source, &a.candidate.id).cmp(&(b.candidate.source, &b.candidate.id))
    });
    let mut out: Files = BTreeMap::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for k in order {
        let (file, base) = match k.candidate.source {
            Source::Callable(i) => {
                let c = &api.callables[i];
                let owner = match &c.owner {
                    Some(super::ty::Ty::Named(n, _)) => format!("{}_", snake(n)),
                    _ => String::new(),
                };
                (c.file.clone(), format!("{owner}{}", snake(&c.name)))
            }
            Source::Example(i) => {
                let e = &api.examples[i];
                let item = e.item.rsplit("::").next().unwrap_or(&e.item);
                (e.file.clone(), format!("{}_doc_example", snake(item)))
            }
            Source::Value(i) | Source::Sequence(i) | Source::Compare(i) => {
                match api.types.values().nth(i) {
                    Some(decl) => {
                        let what = match k.candidate.source {
                            Source::Value(_) => "value",
                            Source::Compare(_) => "order",
                            _ => "sequence",
                        };
                        (decl.file.clone(), format!("{}_{what}", snake(&decl.name)))
                    }
                    None => continue,
                }
            }
        };
        let module = api
            .modules
            .iter()
            .find(|m| m.file == file)
            .map(|m| module_name(&m.path))
            .unwrap_or_else(|| "lib".to_string());
        let Some(mut test) = render::test(&k.candidate, &k.seen, &k.verdict, api) else {
            continue;
        };
        let kind = match k.verdict {
            Verdict::Returns => "",
            Verdict::Panics(_) => "_panics",
            Verdict::Defect { .. } => "_defect",
        };
        let stem = format!("{base}{kind}");
        // Numbered across the layer: a name is the test's own in every file of it (the
        // executor's feedback names tests without their file).
        let n = counts.entry(stem.clone()).or_insert(0);
        *n += 1;
        test.name = format!("{stem}_{n}");
        out.entry(module).or_default().push(test);
    }
    out
}

/// The test file of each module.
pub fn texts(api: &Api, files: &Files, layer: &str, seed: u64) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(module, tests)| {
            (
                module.clone(),
                render::file(api, module, layer, seed, tests),
            )
        })
        .collect()
}

/// Builds and runs the files as one target until every test holds.
pub fn check(
    probe: &mut Probe,
    api: &Api,
    mut files: Files,
    layer: &str,
    seed: u64,
    tools: Option<&LlvmTools>,
    scratch: &Path,
) -> Result<Delivered, ProbeError> {
    let target = probe.target.replace("tt_probe_", "tt_check_");
    let mut dropped = Vec::new();
    for _ in 0..5 {
        files.retain(|_, tests| !tests.is_empty());
        if files.is_empty() {
            break;
        }
        let (text, places) = joined(api, &files, layer, seed);
        let path = probe.file(&target);
        crate::util::write_nofollow(&path, text.as_bytes())
            .map_err(|cause| ProbeError::Write { path, cause })?;
        let binary = match probe.compile(&target)? {
            Ok(binary) => binary,
            Err(problems) => {
                let mut bad = BTreeSet::new();
                for p in &problems {
                    let at = p.line.and_then(|l| {
                        places
                            .iter()
                            .find(|(_, _, from, to)| (*from..=*to).contains(&l))
                    });
                    match at {
                        Some((m, t, _, _)) => {
                            bad.insert((m.clone(), t.clone()));
                        }
                        None => return Err(ProbeError::Unattributed(p.message.clone())),
                    }
                }
                drop_tests(&mut files, &bad, "does not compile", &mut dropped);
                continue;
            }
        };
        let profile = scratch.join("profiles").join("check.profraw");
        let _ = std::fs::remove_file(&profile);
        let args = ["--include-ignored", "--test-threads=2"];
        let home = scratch.join("profiles").join("check.home");
        let run = probe
            .run_binary(&binary, &args, &profile, &home, Duration::from_secs(600))
            .map_err(ProbeError::Cargo)?;
        let parsed =
            crate::family::rust::libtest::parse_libtest(&format!("{}\n{}", run.stdout, run.stderr));
        let mut bad = BTreeSet::new();
        for (module, tests) in &files {
            for t in tests {
                let id = format!("{}::{}", wrapper(module), t.name);
                let status = parsed.cases.iter().find(|c| c.id == id).map(|c| c.status);
                let defect = t.attrs.iter().any(|a| a.starts_with("#[ignore"));
                let holds = match status {
                    Some(TestStatus::Passed) => !defect,
                    Some(TestStatus::Failed | TestStatus::Error) => defect,
                    _ => false,
                };
                if !holds {
                    bad.insert((module.clone(), t.name.clone()));
                }
            }
        }
        if bad.is_empty() {
            // The delivered run: what plain `cargo test` runs (defect tests stay ignored).
            let _ = std::fs::remove_file(&profile);
            let _ = probe.run_binary(
                &binary,
                &["--test-threads=2"],
                &profile,
                &home,
                Duration::from_secs(600),
            );
            let coverage = tools.and_then(|t| {
                t.lines(
                    std::slice::from_ref(&profile),
                    &binary,
                    scratch,
                    &probe.copy,
                )
            });
            return Ok(Delivered {
                files,
                coverage,
                dropped,
            });
        }
        drop_tests(
            &mut files,
            &bad,
            "does not hold when run again",
            &mut dropped,
        );
    }
    Ok(Delivered {
        files,
        coverage: None,
        dropped,
    })
}

fn drop_tests(
    files: &mut Files,
    bad: &BTreeSet<(String, String)>,
    why: &str,
    dropped: &mut Vec<String>,
) {
    for (module, tests) in files.iter_mut() {
        tests.retain(|t| {
            let out = bad.contains(&(module.clone(), t.name.clone()));
            if out {
                dropped.push(format!("{module}::{}: {why}", t.name));
            }
            !out
        });
    }
}

/// The module each file becomes in the check target.
fn wrapper(module: &str) -> String {
    format!("m_{}", module.replace("::", "_"))
}

/// The check target's source, and where each test is in it: (module, test, first, last line).
fn joined(
    api: &Api,
    files: &Files,
    layer: &str,
    seed: u64,
) -> (String, Vec<(String, String, u32, u32)>) {
    let mut text = String::from("#![allow(unused)]\n");
    let mut places = Vec::new();
    let mut line = 1u32;
    for (module, tests) in files {
        text.push_str(&format!("mod {} {{\n", wrapper(module)));
        line += 1;
        let file = render::file(api, module, layer, seed, tests);
        let mut start = None;
        let mut names = tests.iter();
        for l in file.lines() {
            line += 1;
            if start.is_none() && (l.starts_with("///") || l.starts_with("#[")) {
                start = Some(line);
            }
            if l == "}" {
                if let (Some(from), Some(t)) = (start.take(), names.next()) {
                    places.push((module.clone(), t.name.clone(), from, line));
                }
            }
            text.push_str(l);
            text.push('\n');
        }
        text.push_str("}\n");
        line += 1;
    }
    (text, places)
}

/// `LineBuffer` -> `line_buffer`.
pub fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else if c.is_alphanumeric() || c == '_' {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_snake_case() {
        assert_eq!(snake("LineBuffer"), "line_buffer");
        assert_eq!(snake("from_str"), "from_str");
        assert_eq!(snake("Point"), "point");
    }
}
