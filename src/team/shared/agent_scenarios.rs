//! A layer's scenarios written by an agent backend, one call per scenario (the seed's test
//! writer): its row, the infrastructure hints with two or three of the project's tests as style
//! examples, the previous layer's findings (`prev_context`), the shared board and the code under
//! test. The calls run in waves of up to `-c` at a time (5 by default). A file is kept when it
//! loads and stays inside its own temporary folders; whether it passes is the executor's to
//! judge, since a failure may be the very defect the scenario is for.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use super::accept::{accept_filter, file_name, Demand};
use crate::agents::answer::AnswerFile;
use crate::agents::backends::Backend;
use crate::agents::call::{self, WorkDir};
use crate::family::agent::Conventions;
use crate::scenario::plan::{self, Scenario};
use crate::tasks::Outcome;
use crate::team::error::{Result, RoleError};
use crate::team::util::{agent_input, to_map};
use crate::team::RoleContext;
use crate::util::{atomic_write, mkdirs};

/// Most scenarios of a layer written one call each; a bigger plan's layer gets the layer's call.
pub(crate) const MAX_CALLS: usize = 50;
/// The seed's default width of a wave.
const DEFAULT_WAVE: usize = 5;
/// Bytes of a file quoted in a prompt.
const QUOTE_MAX: usize = 16 * 1024;

/// The layer's scenarios of the plan (none: the session has no plan or none for this layer).
pub(crate) fn rows_for(session: &Path, layer: &str) -> Vec<Scenario> {
    let code = crate::tasks::layer_code(layer);
    plan::read_csv(&session.join(plan::FILE))
        .map(|rows| rows.into_iter().filter(|r| r.layer == code).collect())
        .unwrap_or_default()
}

/// One call per scenario of `rows` through `backend`; Err when no file was accepted (the chain
/// then tries its next backend).
pub(crate) fn scenario_round(
    ctx: &RoleContext,
    layer: &str,
    backend: &Backend,
    rows: &[Scenario],
) -> Result<Outcome> {
    let wave = ctx
        .session
        .load_state()
        .ok()
        .and_then(|s| s.controls.concurrency)
        .unwrap_or(DEFAULT_WAVE)
        .max(1);
    let conventions = scenario_conventions(ctx)?;
    let conventions = &conventions;
    let workspace = ctx.session.root.join("workspace");
    let mut answers: Vec<(usize, AnswerFile)> = Vec::new();
    let mut failures: Vec<(usize, String)> = Vec::new();
    for (w, chunk) in rows.chunks(wave).enumerate() {
        (ctx.progress)(
            "agent_call",
            Some(20.0 + 40.0 * (w * wave) as f64 / rows.len().max(1) as f64),
            Some(format!(
                "{}: scenarios {} (wave {} of up to {wave})",
                backend.name,
                chunk
                    .iter()
                    .map(|r| r.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                w + 1
            )),
        );
        let results: Vec<(usize, Result<Vec<AnswerFile>>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = chunk
                .iter()
                .enumerate()
                .map(|(i, row)| {
                    let index = w * wave + i;
                    let folder =
                        workspace.join(format!("agent-{layer}-{}", row.id.to_ascii_lowercase()));
                    scope.spawn(move || {
                        let prompt = prompt(ctx, layer, row, conventions);
                        let got = agent_input(ctx, "generator", &prompt, &folder, WorkDir::Empty)
                            .and_then(|input| Ok(call::call(backend, &input)?))
                            .map(|called| called.files);
                        (index, got)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a scenario call does not panic"))
                .collect()
        });
        for (index, got) in results {
            match got {
                Ok(files) => {
                    let want = expected_name(&rows[index], conventions);
                    // The file named as asked, else the answer's only file, under that name.
                    let chosen = files
                        .iter()
                        .find(|f| file_name(&f.path) == want)
                        .or_else(|| (files.len() == 1).then(|| &files[0]));
                    match chosen {
                        Some(f) => answers.push((
                            index,
                            AnswerFile {
                                path: want.into(),
                                content: f.content.clone(),
                            },
                        )),
                        None => failures.push((index, "the answer has no test file".into())),
                    }
                }
                Err(e) => failures.push((index, e.to_string())),
            }
        }
    }
    let files: Vec<AnswerFile> = answers.iter().map(|(_, f)| f.clone()).collect();
    let scope: Vec<String> = rows.iter().map(|r| r.target_file.clone()).collect();
    let judged = accept_filter(ctx, layer, &files, &scope, Demand::Scenario)?;
    let dir = ctx.session.root.join("tests").join(layer);
    mkdirs(&dir)?;
    let mut written = Vec::new();
    let mut rejected = Vec::new();
    // (scenario, its file, why it has none) for the plan.
    let mut marks: Vec<(String, Option<String>, Option<String>)> = Vec::new();
    for ((index, _), (file, verdict)) in answers.iter().zip(&judged) {
        let id = &rows[*index].id;
        match verdict {
            None => {
                let name = file_name(&file.path);
                atomic_write(&dir.join(&name), file.content.as_bytes())?;
                let rel = format!("tests/{layer}/{name}");
                marks.push((id.clone(), Some(rel.clone()), None));
                written.push(rel);
            }
            Some(why) => {
                marks.push((id.clone(), None, Some(why.clone())));
                rejected.push(json!({"scenario": id, "file": file.path, "reason": why}));
            }
        }
    }
    for (index, why) in &failures {
        marks.push((rows[*index].id.clone(), None, Some(why.clone())));
        rejected.push(json!({"scenario": rows[*index].id, "reason": why}));
    }
    let path = ctx.session.root.join(plan::FILE);
    plan::update(&path, |all: &mut Vec<Scenario>| {
        for (id, file, why) in &marks {
            let Some(row) = all.iter_mut().find(|r| &r.id == id) else {
                continue;
            };
            if let Some(file) = file {
                row.test_file = file.clone();
                row.status = "written".into();
                row.error.clear();
            } else if let Some(why) = why {
                row.status = "blocked".into();
                row.error = why.clone();
            }
        }
    })
    .map_err(|e| RoleError::Io {
        action: "update",
        path: path.clone(),
        cause: std::io::Error::other(e.to_string()),
    })?;
    if written.is_empty() {
        return Err(RoleError::NothingAccepted {
            backend: backend.name.clone(),
            reasons: rejected.iter().map(|r| r.to_string()).collect(),
        });
    }
    let mut out = Outcome::completed(format!(
        "{layer}: {} scenario file(s) from {}, one call per scenario in waves of up to {wave}; {} not written",
        written.len(),
        backend.name,
        rejected.len()
    ));
    out.artifacts = written.clone();
    out.data = to_map(json!({
        "layer": layer, "test_files": written, "round": null, "is_revision": false,
        "backend": backend.name, "rejected": rejected, "scenarios": rows.len(), "wave": wave,
    }));
    Ok(out)
}

/// How the session's framework writes tests.
fn scenario_conventions(ctx: &RoleContext) -> Result<Conventions> {
    let framework = crate::session::framework::session_framework(ctx.session, ctx.repo)?;
    Ok(crate::family::agent::conventions(framework, ctx.repo))
}

/// The file name the row asks for (`test_at_001_….py`), when it is a test file name of the
/// project's framework; else one made from the scenario's id in the framework's form.
fn expected_name(row: &Scenario, conventions: &Conventions) -> String {
    Path::new(&row.test_file)
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| (conventions.is_test_file)(n))
        .map(str::to_string)
        .unwrap_or_else(|| {
            let id = row.id.to_ascii_lowercase().replace('-', "_");
            conventions.file_name.replace("<name>", &id)
        })
}

/// The writer's prompt for one scenario.
fn prompt(ctx: &RoleContext, layer: &str, row: &Scenario, conventions: &Conventions) -> String {
    let mut p = String::new();
    let name = expected_name(row, conventions);
    let fence = conventions.fence;
    let _ = writeln!(
        p,
        "PURPOSE: write the {layer} test file for scenario {} | Success: each test case is one test, named after the scenario, that passes on correct code\n",
        row.id
    );
    let _ = writeln!(p, "SCENARIO:");
    for (k, v) in [
        ("id", row.id.clone()),
        ("name", row.name.clone()),
        ("priority", row.priority.as_str().to_string()),
        ("category", row.category.clone()),
        ("target_file", row.target_file.clone()),
        ("test_file", name.clone()),
        ("description", row.description.clone()),
        ("test_cases", row.test_cases.join("; ")),
        ("fixtures", row.fixtures.join("; ")),
        ("req_ref", row.req_ref.clone()),
    ] {
        let _ = writeln!(p, "  {k}: {v}");
    }
    let _ = writeln!(p, "\nINFRASTRUCTURE: {}", row.infrastructure_hints);
    let examples: Vec<&str> = row
        .infrastructure_hints
        .split_once("see ")
        .map(|(_, files)| files.split(", ").take(3).collect())
        .unwrap_or_default();
    for file in examples {
        if let Some(text) = quote(ctx.repo, file) {
            let _ = writeln!(p, "\nStyle example `{file}`:\n```{fence}\n{text}```");
        }
    }
    if !row.prev_context.is_empty() {
        let _ = writeln!(
            p,
            "\nPREV_CONTEXT (the previous layer's findings): {}",
            row.prev_context
        );
    }
    p.push('\n');
    p.push_str(&super::discoveries::prompt_section(&ctx.session.root));
    if let Some(text) = quote(ctx.repo, &row.target_file) {
        let _ = writeln!(p, "CODE `{}`:\n```{fence}\n{text}```\n", row.target_file);
    }
    let _ = writeln!(
        p,
        "HOW THIS PROJECT'S TESTS ARE WRITTEN ({}):",
        conventions.framework
    );
    for idiom in &conventions.idioms {
        let _ = writeln!(p, "- {idiom}");
    }
    let _ = writeln!(
        p,
        "\nANSWER: one {} file, as a fenced block whose first line is `{} path: {name}`. Name every test after the scenario (`{}`) and put {} in its description or docstring. Do not change the code under test; a test that fails because the code is wrong is what this scenario is for.",
        conventions.framework,
        conventions.comment,
        row.id.to_ascii_lowercase().replace('-', "_"),
        row.id
    );
    p
}

/// A repository file's text for a prompt: plain relative paths inside the repository only.
fn quote(repo: &Path, rel: &str) -> Option<String> {
    let path = Path::new(rel);
    if rel.is_empty()
        || !path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
    {
        return None;
    }
    let real = repo.join(path).canonicalize().ok()?;
    if !real.starts_with(repo.canonicalize().ok()?) {
        return None;
    }
    let text = std::fs::read_to_string(real).ok()?;
    Some(text.chars().take(QUOTE_MAX).collect())
}
