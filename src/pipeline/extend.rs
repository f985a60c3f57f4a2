//! Growing a session's graph after (or between) runs: `deepen` adds the next layer or raises a
//! layer's target with a fresh budget of GC rounds, `revise` adds a revision task with the user's
//! feedback, `rerun` reopens what failed or was blocked. Plain functions on the graph; the CLI
//! saves the result and runs it.

use serde_json::json;

use super::config::TeamConfig;
use super::controls::layer_key;
use super::select::{describe, gc_fix_tasks};
use crate::error::Error;
use crate::tasks::{layer_code, meta, Task, TaskGraph, TaskStatus};

/// New tasks for the graph, the rewiring they need, and a line saying what was done.
#[derive(Debug)]
pub struct Extension {
    pub tasks: Vec<Task>,
    /// Pending tasks that waited on `.0` wait on `.1` instead.
    pub rewire: Option<(String, String)>,
    /// A failed task the new ones replace: it is marked deleted, and what it caused to be
    /// skipped waits again.
    pub supersede: Option<String>,
    pub summary: String,
}

/// Puts an extension into the graph (validated; on error nothing changes).
pub fn apply(
    graph: &mut TaskGraph,
    ext: Extension,
    role_exists: impl Fn(&str) -> bool,
) -> Result<(), crate::tasks::GraphError> {
    let mut next = graph.clone();
    if let Some(old) = &ext.supersede {
        let by = ext.tasks.first().map(|t| t.id.clone()).unwrap_or_default();
        if let Some(t) = next.get_mut(old) {
            t.status = TaskStatus::Deleted;
            t.reason = Some(format!("superseded by {by}"));
        }
        // Skips are derived: the next beat skips again whatever still waits on a dead task.
        for t in next.tasks.iter_mut() {
            if t.status == TaskStatus::Skipped {
                t.status = TaskStatus::Pending;
                t.reason = None;
            }
        }
    }
    next.insert(
        ext.tasks,
        ext.rewire.as_ref().map(|(a, b)| (a.as_str(), b.as_str())),
        role_exists,
    )?;
    *graph = next;
    Ok(())
}

/// What a new task's description is filled with.
pub struct Describe<'a> {
    pub session_dir: &'a str,
    pub scope_text: &'a str,
    pub now: &'a str,
}

/// How `deepen` says there is no next layer (the CLI adds a command that raises a target).
pub const EVERY_LAYER_RAN: &str = "every layer has run";

/// `PREFIX-NNN` one past the highest number the graph holds for `prefix` (`PREFIX-001` first).
pub fn next_id(graph: &TaskGraph, prefix: &str) -> String {
    let highest = graph
        .tasks
        .iter()
        .filter_map(|t| {
            t.id.strip_prefix(prefix)?
                .strip_prefix('-')?
                .parse::<u32>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    format!("{prefix}-{:03}", highest + 1)
}

fn prefix_of(config: &TeamConfig, role: &str) -> String {
    config
        .role(role)
        .and_then(|r| r.prefix.clone())
        .unwrap_or_else(|| role.to_ascii_uppercase())
}

/// The layers the generator has tasks for, in the config's order.
fn layers_run(config: &TeamConfig, graph: &TaskGraph) -> Vec<String> {
    let mut out: Vec<String> = graph
        .tasks
        .iter()
        .filter(|t| t.owner == config.gc.generator && t.status != TaskStatus::Deleted)
        .filter_map(|t| t.layer.clone())
        .collect();
    out.sort_by(|a, b| layer_code(a).cmp(layer_code(b)));
    out.dedup();
    out
}

/// Why `layer` had nothing to do, when its generator said so.
fn not_applicable(config: &TeamConfig, graph: &TaskGraph, layer: &str) -> Option<String> {
    graph
        .tasks
        .iter()
        .filter(|t| t.owner == config.gc.generator && t.layer.as_deref() == Some(layer))
        .find(|t| t.status == TaskStatus::NotApplicable)
        .map(|t| t.reason.clone().unwrap_or_default())
}

/// The config's layers, L1 first.
fn all_layers(config: &TeamConfig) -> Vec<String> {
    let mut out: Vec<String> = config.coverage_targets.keys().cloned().collect();
    out.sort_by(|a, b| layer_code(a).cmp(layer_code(b)));
    out
}

/// The last executor task of `layer`, in creation order.
fn last_run<'a>(config: &TeamConfig, graph: &'a TaskGraph, layer: &str) -> Option<&'a Task> {
    graph
        .tasks
        .iter()
        .rev()
        .find(|t| t.owner == config.gc.critic && t.layer.as_deref() == Some(layer))
}

/// An analyst task after `after`, when the pipeline has an analyst: the report is written anew.
fn analyst_after(
    config: &TeamConfig,
    graph: &TaskGraph,
    after: &str,
    d: &Describe,
) -> Option<Task> {
    let analyst = graph.tasks.iter().find(|t| t.owner == "analyst")?;
    let id = next_id(graph, &prefix_of(config, &analyst.owner));
    let mut task = Task {
        created_at: d.now.to_string(),
        ..Task::new(
            &id,
            "Quality analysis and report",
            "analyst",
            vec![after.to_string()],
        )
    };
    task.description = describe(
        config,
        &task,
        d.session_dir,
        d.scope_text,
        "roles/analyst/role.md",
    );
    Some(task)
}

/// `fix`: the test-fix cycle after what the session has done: the fixer's L0 validation, then
/// its loop, then a new report when the pipeline has an analyst.
pub fn fix(config: &TeamConfig, graph: &TaskGraph, d: &Describe) -> Result<Extension, Error> {
    let prefix = prefix_of(config, "fixer");
    let last = graph
        .tasks
        .iter()
        .rev()
        .find(|t| t.status != TaskStatus::Deleted)
        .map(|t| t.id.clone())
        .ok_or_else(|| Error::Usage("fix: the session has no task to follow".into()))?;
    let validate_id = next_id(graph, &prefix);
    let n: u32 = validate_id
        .rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let cycle_id = format!("{prefix}-{:03}", n + 1);
    let step = |id: &str, subject: &str, step: &str, after: &str| {
        let mut task = Task {
            created_at: d.now.to_string(),
            inner_loop: true,
            ..Task::new(id, subject, "fixer", vec![after.to_string()])
        };
        task.meta.insert(meta::STEP.into(), json!(step));
        task.description = describe(
            config,
            &task,
            d.session_dir,
            d.scope_text,
            "roles/fixer/role.md",
        );
        task
    };
    let mut tasks = vec![
        step(
            &validate_id,
            "L0 code validation and quality gate",
            "validate",
            &last,
        ),
        step(&cycle_id, "Test-and-fix loop", "cycle", &validate_id),
    ];
    let mut with_cycle = graph.clone();
    with_cycle.tasks.extend(tasks.iter().cloned());
    if let Some(report) = analyst_after(config, &with_cycle, &cycle_id, d) {
        tasks.push(report);
    }
    let ids: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
    Ok(Extension {
        summary: format!("fix: the test-fix cycle added ({})", ids.join(" -> ")),
        tasks,
        rewire: None,
        supersede: None,
    })
}

/// `deepen [--layer L] [--target N]`: the next layer not yet run (or L), or, for a layer that has
/// run, its target raised (to N, else by 10 points) with a new revision round and a fresh budget
/// of GC rounds. A new report follows when the pipeline has an analyst.
pub fn deepen(
    config: &TeamConfig,
    graph: &TaskGraph,
    layer: Option<&str>,
    target: Option<f64>,
    d: &Describe,
) -> Result<Extension, Error> {
    if let Some(t) = target {
        if !(0.0..=100.0).contains(&t) {
            return Err(Error::Usage(format!(
                "--target {t}: a coverage target is a percentage from 0 to 100"
            )));
        }
    }
    let run = layers_run(config, graph);
    let layer = match layer {
        Some(l) => layer_key(config, l).ok_or_else(|| {
            Error::Usage(format!(
                "--layer {l}: no such layer (layers: {})",
                all_layers(config).join(", ")
            ))
        })?,
        None => match all_layers(config).into_iter().find(|l| !run.contains(l)) {
            Some(next) => next,
            None => {
                return Err(Error::Usage(format!(
                    "{EVERY_LAYER_RAN} ({}); raise one's target with --layer and --target",
                    run.join(", ")
                )))
            }
        },
    };
    if let Some(why) = not_applicable(config, graph, &layer) {
        return Err(Error::Usage(format!(
            "{layer} is not applicable in this session ({why}): there is nothing to raise"
        )));
    }
    if run.contains(&layer) {
        raise_target(config, graph, &layer, target, d)
    } else {
        add_layer(config, graph, &layer, target, d)
    }
}

fn add_layer(
    config: &TeamConfig,
    graph: &TaskGraph,
    layer: &str,
    target: Option<f64>,
    d: &Describe,
) -> Result<Extension, Error> {
    let target = target.or_else(|| config.coverage_target(layer));
    // After every layer that ran (their last runs), as the pipelines order layers.
    let after: Vec<String> = layers_run(config, graph)
        .iter()
        .filter_map(|l| last_run(config, graph, l).map(|t| t.id.clone()))
        .collect();
    let mut meta = serde_json::Map::new();
    meta.insert("layer".into(), json!(layer));
    meta.insert("deepened".into(), json!(true));
    let gen_id = next_id(graph, &prefix_of(config, &config.gc.generator));
    let run_id = next_id(graph, &prefix_of(config, &config.gc.critic));
    let mut generate = Task {
        layer: Some(layer.to_string()),
        inner_loop: true,
        meta: meta.clone(),
        created_at: d.now.to_string(),
        ..Task::new(
            &gen_id,
            &format!("Generate {layer} tests"),
            &config.gc.generator,
            after,
        )
    };
    let mut run = Task {
        layer: Some(layer.to_string()),
        inner_loop: true,
        meta,
        created_at: d.now.to_string(),
        ..Task::new(
            &run_id,
            &format!("Execute {layer} tests"),
            &config.gc.critic,
            vec![gen_id.clone()],
        )
    };
    if let Some(t) = target {
        run.meta.insert("coverage_target".into(), json!(t));
    }
    for t in [&mut generate, &mut run] {
        let spec = format!("roles/{}/role.md", t.owner);
        t.description = describe(config, t, d.session_dir, d.scope_text, &spec);
    }
    let mut tasks = vec![generate, run];
    let mut probe = graph.clone();
    probe.tasks.extend(tasks.iter().cloned());
    probe.reindex();
    tasks.extend(analyst_after(config, &probe, &run_id, d));
    let target_text = target.map_or(String::new(), |t| format!(", target {t:.0}%"));
    Ok(Extension {
        summary: format!(
            "deepen: {layer} added ({}{target_text})",
            tasks
                .iter()
                .map(|t| t.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        tasks,
        rewire: None,
        supersede: None,
    })
}

fn raise_target(
    config: &TeamConfig,
    graph: &TaskGraph,
    layer: &str,
    target: Option<f64>,
    d: &Describe,
) -> Result<Extension, Error> {
    let last = last_run(config, graph, layer).ok_or_else(|| {
        Error::Usage(format!(
            "{layer} has no executor task to raise the target of"
        ))
    })?;
    if matches!(last.status, TaskStatus::Pending | TaskStatus::InProgress) {
        return Err(Error::Usage(format!(
            "{layer} is still running ({} is {}); deepen it once it has run",
            last.id,
            last.status.as_str()
        )));
    }
    let current = last
        .coverage_target()
        .or_else(|| config.coverage_target(layer))
        .unwrap_or(0.0);
    let raised = target.unwrap_or_else(|| (current + 10.0).min(100.0));
    if raised <= current {
        return Err(Error::Usage(format!(
            "{layer}'s target is {current:.0}%: a deeper run needs a higher one (--target N above {current:.0})"
        )));
    }
    let code = layer_code(layer).to_string();
    let used = graph.gc_rounds().get(&code).copied().unwrap_or(0);
    let gen_instance = graph
        .tasks
        .iter()
        .rev()
        .find(|t| t.owner == config.gc.generator && t.layer.as_deref() == Some(layer))
        .and_then(|t| t.instance.clone());
    let (mut generate, mut run) =
        gc_fix_tasks(config, last, gen_instance, used + 1, d.session_dir, d.now);
    for t in [&mut generate, &mut run] {
        t.meta.insert(meta::ROUNDS_FROM.into(), json!(used));
        t.meta.insert("deepened".into(), json!(true));
    }
    run.meta.insert("coverage_target".into(), json!(raised));
    generate.description.push_str(&format!(
        "Deepen: the coverage target of {layer} is raised from {current:.0}% to {raised:.0}%; add tests for the lines still uncovered.\n"
    ));
    let run_id = run.id.clone();
    let mut tasks = vec![generate, run];
    let mut probe = graph.clone();
    probe.tasks.extend(tasks.iter().cloned());
    probe.reindex();
    tasks.extend(analyst_after(config, &probe, &run_id, d));
    Ok(Extension {
        summary: format!(
            "deepen: {layer} target {current:.0}% -> {raised:.0}%, {} new GC round(s) allowed ({})",
            config.max_gc_rounds,
            tasks
                .iter()
                .map(|t| t.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        rewire: Some((last.id.clone(), run_id)),
        supersede: None,
        tasks,
    })
}

/// `revise TASK --feedback TEXT`: a revision task for TASK's role with the feedback as context.
/// Pending tasks that waited on TASK wait on the revision. A revised generator task is followed
/// by a run of its layer (the tests changed), and a new report when the pipeline has an analyst.
pub fn revise(
    config: &TeamConfig,
    graph: &TaskGraph,
    task_id: &str,
    feedback: &str,
    d: &Describe,
) -> Result<Extension, Error> {
    let feedback = feedback.trim();
    if feedback.is_empty() {
        return Err(Error::Usage(
            "--feedback is empty: say what the revision should change".into(),
        ));
    }
    let target = graph
        .get(task_id)
        .ok_or_else(|| Error::Usage(format!("revise {task_id}: no such task in this session")))?;
    if target.status == TaskStatus::Deleted {
        return Err(Error::Usage(format!(
            "revise {task_id}: the task was deleted"
        )));
    }
    if target.status == TaskStatus::NotApplicable {
        return Err(Error::Usage(format!(
            "revise {task_id}: the task was not applicable ({}); there is nothing to revise",
            target.reason.as_deref().unwrap_or("no reason recorded")
        )));
    }
    let n = graph
        .tasks
        .iter()
        .filter(|t| t.meta.get("revises").and_then(|v| v.as_str()) == Some(task_id))
        .count()
        + 1;
    let rev_id = format!("{task_id}-rev-{n}");
    let mut meta = target.meta.clone();
    meta.remove(meta::GC_ROUND);
    meta.insert("revises".into(), json!(task_id));
    meta.insert("feedback".into(), json!(feedback));
    // A generator revision works from the tests it wrote (the revision path of the role).
    if target.owner == config.gc.generator {
        let used = target
            .layer
            .as_deref()
            .and_then(|l| graph.gc_rounds().get(layer_code(l)).copied())
            .unwrap_or(0);
        meta.insert(meta::GC_ROUND.into(), json!(used + 1));
        meta.insert(meta::ROUNDS_FROM.into(), json!(used + 1));
    }
    let mut revision = Task {
        layer: target.layer.clone(),
        inner_loop: target.inner_loop,
        instance: target.instance.clone(),
        meta,
        created_at: d.now.to_string(),
        ..Task::new(
            &rev_id,
            &format!("Revise {task_id}: {}", first_line(feedback, 60)),
            &target.owner,
            // After the task itself when it has yet to run; a finished one is revised at once.
            if target.status.is_done() || target.status.is_dead() {
                vec![]
            } else {
                vec![task_id.to_string()]
            },
        )
    };
    revision.description = format!(
        "{}\nREVISION of {task_id}. Feedback from the user:\n{feedback}\n",
        target.description.trim_end()
    );
    let mut tasks = vec![revision];
    let mut last = rev_id.clone();
    // The tests change: their layer runs again unless a run still waits on the task.
    let downstream: Vec<&Task> = graph
        .tasks
        .iter()
        .filter(|t| t.blocked_by.iter().any(|b| b == task_id))
        .collect();
    // (What a failed task skipped waits again once the revision supersedes it.)
    let waits_again = |t: &Task| {
        t.status == TaskStatus::Pending
            || (target.status.is_dead() && t.status == TaskStatus::Skipped)
    };
    let rerun_needed = downstream.is_empty() || !downstream.iter().all(|t| waits_again(t));
    if target.owner == config.gc.generator && rerun_needed {
        if let Some(layer) = target.layer.as_deref() {
            let mut probe = graph.clone();
            probe.tasks.extend(tasks.iter().cloned());
            probe.reindex();
            let run_id = next_id(&probe, &prefix_of(config, &config.gc.critic));
            let mut run = Task {
                layer: Some(layer.to_string()),
                inner_loop: true,
                meta: serde_json::Map::from_iter([
                    ("layer".to_string(), json!(layer)),
                    ("revises".to_string(), json!(task_id)),
                ]),
                created_at: d.now.to_string(),
                ..Task::new(
                    &run_id,
                    &format!("Execute {layer} tests after revising {task_id}"),
                    &config.gc.critic,
                    vec![rev_id.clone()],
                )
            };
            if let Some(t) = last_run(config, graph, layer).and_then(Task::coverage_target) {
                run.meta.insert("coverage_target".into(), json!(t));
            }
            run.meta.insert(
                meta::ROUNDS_FROM.into(),
                tasks[0]
                    .meta
                    .get(meta::ROUNDS_FROM)
                    .cloned()
                    .unwrap_or(json!(0)),
            );
            run.description = describe(
                config,
                &run,
                d.session_dir,
                d.scope_text,
                &format!("roles/{}/role.md", config.gc.critic),
            );
            last = run_id;
            tasks.push(run);
        }
    }
    if tasks.len() > 1 {
        let mut probe = graph.clone();
        probe.tasks.extend(tasks.iter().cloned());
        probe.reindex();
        tasks.extend(analyst_after(config, &probe, &last, d));
    }
    Ok(Extension {
        summary: format!(
            "revise: {} ({})",
            tasks
                .iter()
                .map(|t| t.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            first_line(feedback, 60)
        ),
        rewire: Some((task_id.to_string(), last)),
        supersede: target.status.is_dead().then(|| task_id.to_string()),
        tasks,
    })
}

fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    match line.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

/// `rerun`: what failed or was skipped runs again, and each layer whose last run had failing
/// tests gets a run of only those (`meta.rerun_of`; the executor keeps the passes). A report
/// follows the new runs when the pipeline has an analyst. Returns the ids reopened and added.
pub fn rerun(
    config: &TeamConfig,
    graph: &mut TaskGraph,
    role_exists: impl Fn(&str) -> bool,
    d: &Describe,
) -> Result<(Vec<String>, Vec<String>), Error> {
    let mut next = graph.clone();
    let reopened = reopen_failed(&mut next);
    let critic = &config.gc.critic;
    let mut runs: Vec<Task> = Vec::new();
    for layer in layers_run(config, &next) {
        // A layer with work still to do (reopened or pending) runs that instead.
        let busy = next.tasks.iter().any(|t| {
            t.layer.as_deref() == Some(&layer)
                && (t.owner == *critic || t.owner == config.gc.generator)
                && t.status == TaskStatus::Pending
        });
        let Some(last) = last_run(config, &next, &layer) else {
            continue;
        };
        let Some(outcome) = last.outcome.as_ref().filter(|_| !busy) else {
            continue;
        };
        if outcome.pass_rate.is_none_or(|p| p >= 1.0) || last.status != TaskStatus::Completed {
            continue;
        }
        let mut probe = next.clone();
        probe.tasks.extend(runs.iter().cloned());
        probe.reindex();
        let id = next_id(&probe, &prefix_of(config, critic));
        let used = next
            .gc_rounds()
            .get(layer_code(&layer))
            .copied()
            .unwrap_or(0);
        let mut meta = last.meta.clone();
        meta.remove(meta::GC_ROUND);
        meta.insert(meta::RERUN_OF.into(), json!(last.id));
        meta.insert(meta::ROUNDS_FROM.into(), json!(used));
        if let Some(failed) = outcome.data.get(crate::tasks::data::FAILED_TESTS) {
            meta.insert(crate::tasks::data::FAILED_TESTS.into(), failed.clone());
        }
        let mut task = Task {
            layer: Some(layer.clone()),
            inner_loop: last.inner_loop,
            instance: last.instance.clone(),
            meta,
            created_at: d.now.to_string(),
            ..Task::new(
                &id,
                &format!("Re-run the {layer} tests that failed in {}", last.id),
                critic,
                vec![],
            )
        };
        task.description = describe(
            config,
            &task,
            d.session_dir,
            d.scope_text,
            &format!("roles/{critic}/role.md"),
        );
        runs.push(task);
    }
    let added: Vec<String> = runs.iter().map(|t| t.id.clone()).collect();
    if !runs.is_empty() {
        let pending_analyst = next
            .tasks
            .iter()
            .position(|t| t.owner == "analyst" && t.status == TaskStatus::Pending);
        let mut probe = next.clone();
        probe.tasks.extend(runs.iter().cloned());
        probe.reindex();
        let report = match pending_analyst {
            Some(i) => {
                next.tasks[i].blocked_by.extend(added.iter().cloned());
                None
            }
            None => analyst_after(config, &probe, &added[0], d).map(|mut t| {
                t.blocked_by = added.clone();
                t
            }),
        };
        runs.extend(report);
        next.insert(runs, None, role_exists)
            .map_err(|e| Error::Usage(e.to_string()))?;
    }
    *graph = next;
    Ok((reopened, added))
}

/// Every failed or skipped task back to pending with a fresh budget of attempts.
/// Returns their ids.
pub fn reopen_failed(graph: &mut TaskGraph) -> Vec<String> {
    let mut reopened = Vec::new();
    for t in graph.tasks.iter_mut() {
        if t.status.is_dead() {
            t.status = TaskStatus::Pending;
            t.attempts = 0;
            t.reason = None;
            t.worker = None;
            t.claimed_at = None;
            reopened.push(t.id.clone());
        }
    }
    reopened
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::Outcome;

    /// The standard pipeline with `done` completed.
    fn standard_with(done: &[&str]) -> (TeamConfig, TaskGraph) {
        let config = TeamConfig::builtin().unwrap();
        let tasks = super::super::select::build_tasks(
            &config,
            "standard",
            "S",
            "scope",
            |_| "r".into(),
            "t",
        )
        .unwrap();
        let mut graph = TaskGraph::new(tasks);
        for id in done {
            graph.claim(id, "w", "t").unwrap();
            graph.complete(id, Outcome::completed("ok"), "t").unwrap();
        }
        (config, graph)
    }

    fn standard_done() -> (TeamConfig, TaskGraph) {
        standard_with(&[
            "STRATEGY-001",
            "TESTGEN-001",
            "TESTRUN-001",
            "TESTGEN-002",
            "TESTRUN-002",
            "TESTANA-001",
        ])
    }

    fn d() -> Describe<'static> {
        Describe {
            session_dir: "S",
            scope_text: "scope",
            now: "t",
        }
    }

    #[test]
    fn deepen_adds_the_next_layer_after_the_layers_that_ran_then_a_report() {
        let (config, mut graph) = standard_done();
        let ext = deepen(&config, &graph, None, None, &d()).unwrap();
        let ids: Vec<&str> = ext.tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["TESTGEN-003", "TESTRUN-003", "TESTANA-002"]);
        assert_eq!(ext.tasks[0].layer.as_deref(), Some("L3-e2e"));
        assert_eq!(ext.tasks[0].blocked_by, ["TESTRUN-001", "TESTRUN-002"]);
        assert_eq!(ext.tasks[1].coverage_target(), Some(40.0));
        graph.insert(ext.tasks, None, |_| true).unwrap();
        assert_eq!(graph.ready()[0].id, "TESTGEN-003");
        let err = deepen(&config, &graph, None, None, &d()).unwrap_err();
        assert!(err.to_string().contains("every layer has run"), "{err}");
    }

    #[test]
    fn deepen_of_a_layer_that_ran_raises_its_target_with_fresh_rounds() {
        let (config, graph) = standard_done();
        let ext = deepen(&config, &graph, Some("L1"), Some(95.0), &d()).unwrap();
        let run = &ext.tasks[1];
        assert_eq!(run.id, "TESTRUN-L1-fix-1");
        assert_eq!(run.coverage_target(), Some(95.0));
        assert_eq!(run.meta["rounds_from"], json!(0));
        let low = deepen(&config, &graph, Some("L1"), Some(50.0), &d()).unwrap_err();
        assert!(low.to_string().contains("needs a higher one"), "{low}");
    }

    #[test]
    fn revise_of_a_finished_generator_task_runs_its_layer_again_and_reports() {
        let (config, mut graph) = standard_done();
        let ext = revise(
            &config,
            &graph,
            "TESTGEN-001",
            "cover the error paths",
            &d(),
        )
        .unwrap();
        let ids: Vec<&str> = ext.tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["TESTGEN-001-rev-1", "TESTRUN-003", "TESTANA-002"]);
        assert!(ext.tasks[0].description.contains("cover the error paths"));
        assert_eq!(ext.tasks[1].blocked_by, ["TESTGEN-001-rev-1"]);
        let (from, to) = ext.rewire.clone().unwrap();
        graph
            .insert(ext.tasks, Some((&from, &to)), |_| true)
            .unwrap();
        assert!(revise(&config, &graph, "NOPE-1", "x", &d()).is_err());
        assert!(revise(&config, &graph, "TESTGEN-001", "  ", &d()).is_err());
    }

    #[test]
    fn revising_a_failed_task_supersedes_it_and_what_it_skipped_waits_on_the_revision() {
        let (config, mut graph) = standard_with(&["STRATEGY-001", "TESTGEN-001", "TESTRUN-001"]);
        graph.claim("TESTGEN-002", "w", "t").unwrap();
        graph
            .fail_attempt("TESTGEN-002", "boom", 1, None, "t")
            .unwrap();
        graph.propagate_skips();
        assert_eq!(
            graph.get("TESTANA-001").unwrap().status,
            TaskStatus::Skipped
        );
        let ext = revise(&config, &graph, "TESTGEN-002", "use the fixtures", &d()).unwrap();
        apply(&mut graph, ext, |_| true).unwrap();
        assert_eq!(
            graph.get("TESTGEN-002").unwrap().status,
            TaskStatus::Deleted
        );
        assert_eq!(
            graph.get("TESTRUN-002").unwrap().blocked_by,
            ["TESTGEN-002-rev-1"]
        );
        let ready: Vec<&str> = graph.ready().iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ready, ["TESTGEN-002-rev-1"]);
        assert!(graph.propagate_skips().is_empty());
    }

    #[test]
    fn rerun_runs_a_failing_layer_again_and_reports_after_it() {
        let (config, mut graph) = standard_done();
        let run = graph.get_mut("TESTRUN-001").unwrap();
        run.outcome = Some(Outcome {
            pass_rate: Some(0.5),
            ..Outcome::completed("half")
        });
        let (reopened, added) = rerun(&config, &mut graph, |_| true, &d()).unwrap();
        assert!(reopened.is_empty());
        assert_eq!(added, ["TESTRUN-003"]);
        let again = graph.get("TESTRUN-003").unwrap();
        assert_eq!(again.meta["rerun_of"], json!("TESTRUN-001"));
        assert_eq!(
            graph.get("TESTANA-002").unwrap().blocked_by,
            ["TESTRUN-003"]
        );
        // Every layer passing: nothing to run.
        let (_, mut clean) = standard_done();
        assert_eq!(
            rerun(&config, &mut clean, |_| true, &d()).unwrap(),
            (vec![], vec![])
        );
    }

    #[test]
    fn next_id_counts_past_the_highest() {
        let (_, graph) = standard_done();
        assert_eq!(next_id(&graph, "TESTRUN"), "TESTRUN-003");
        assert_eq!(next_id(&graph, "LINT"), "LINT-001");
    }
}
