//! Growing a session's graph to run it again in the same session: `deepen` (the next layer, or a
//! raised target), `revise` (a task again with feedback), `rerun` (what failed), and what the
//! user can run next on a finished session.

use super::complete::log_message;
use super::open::Opened;
use super::team::session_team;
use crate::bus::message::Progress;
use crate::bus::{Message, Payload};
use crate::error::{Error, Result};
use crate::pipeline::extend::{self, Describe, Extension};
use crate::session::SessionDir;
use crate::util::{now_ts, read_json};

/// Adds the next layer (or raises `layer`'s target) to the opened session; returns what was added.
pub fn deepen(opened: &mut Opened, layer: Option<&str>, target: Option<f64>) -> Result<String> {
    let ext = {
        let ctx = DescribeCtx::of(&opened.session);
        let d = ctx.describe();
        extend::deepen(&opened.config, &opened.graph, layer, target, &d)
    };
    let ext = ext.map_err(|e| match e {
        // Every layer ran: say how to raise one (by 10 points, the default), pasteable.
        Error::Usage(m) if layer.is_none() && m.starts_with(extend::EVERY_LAYER_RAN) => {
            let raise = first_raisable_layer(opened).unwrap_or_else(|| "L1".into());
            Error::Usage(format!(
                "{m}, e.g. {}",
                crate::hint::quoted(&opened.session, "deepen", &["--layer", &raise])
            ))
        }
        other => other,
    })?;
    apply(opened, ext, "deepen")
}

/// The first layer that ran (was not "not applicable") with a target below 100: the one a raise
/// can go to.
fn first_raisable_layer(opened: &Opened) -> Option<String> {
    let critic = &opened.config.gc.critic;
    opened
        .graph
        .tasks
        .iter()
        .filter(|t| &t.owner == critic && t.status == crate::tasks::TaskStatus::Completed)
        .filter_map(|t| Some((t.layer.clone()?, t.coverage_target())))
        .find(|(_, target)| target.is_none_or(|t| t < 100.0))
        .map(|(layer, _)| crate::tasks::layer_code(&layer).to_string())
}

/// Adds a revision of `task` with the user's feedback; returns what was added.
pub fn revise(opened: &mut Opened, task: &str, feedback: &str) -> Result<String> {
    let ext = {
        let ctx = DescribeCtx::of(&opened.session);
        let d = ctx.describe();
        extend::revise(&opened.config, &opened.graph, task, feedback, &d)
    };
    apply(opened, ext?, "revise")
}

/// Adds the test-fix cycle to the opened session (its iterations capped at `max_iterations`
/// when given); returns what was added.
pub fn fix(opened: &mut Opened, max_iterations: Option<u32>) -> Result<String> {
    if let Some(why) = crate::team::fixer::cannot_run_on(&opened.state.repo) {
        return Err(Error::Usage(why));
    }
    // A fixer that cannot run stops here, before a worktree or branch is made.
    if opened.state.agents.replay.is_none() {
        super::team::check_chain("fixer", &opened.state.agents.chain("fixer"))?;
    }
    if let Some(n) = max_iterations {
        opened.state.controls.max_iterations = Some(n);
        opened.session.save_state(&opened.state)?;
    }
    let ext = {
        let ctx = DescribeCtx::of(&opened.session);
        let d = ctx.describe();
        extend::fix(&opened.config, &opened.graph, &d)
    };
    apply(opened, ext?, "fix")
}

/// Reopens the failed and skipped tasks, and adds a run of only the tests that failed in each
/// layer's last run (the executor keeps that run's passes); returns what it reopened and added.
pub fn rerun(opened: &mut Opened) -> Result<String> {
    let ctx = DescribeCtx::of(&opened.session);
    let d = ctx.describe();
    let registry = &opened.registry;
    let (reopened, added) = extend::rerun(
        &opened.config,
        &mut opened.graph,
        |r| registry.contains(r),
        &d,
    )?;
    if reopened.is_empty() && added.is_empty() {
        return Err(Error::Session(format!(
            "session {}: nothing failed or was blocked, and every layer's tests passed; nothing to rerun",
            opened.session.id
        )));
    }
    for id in &reopened {
        let _ = std::fs::remove_file(opened.session.outcome_file(id));
    }
    let failed = super::scenarios::failed_scenarios(&opened.session);
    if !failed.is_empty() {
        let _ = super::scenarios::note_route(
            &opened.session,
            crate::scenario::route::Route::Rerun,
            &format!(
                "a rerun with {} failed or blocked scenario(s) of the last run: {}",
                failed.len(),
                failed.join(", ")
            ),
        );
    }
    let mut all = reopened;
    all.extend(added);
    let summary = format!("rerun: {}", all.join(", "));
    note(&opened.session, &summary, &all)?;
    opened.session.save_tasks(&opened.graph)?;
    Ok(summary)
}

/// Deepen from the completion menu: the session is locked by this process already.
pub fn deepen_in_place(
    session: &SessionDir,
    layer: Option<&str>,
    target: Option<f64>,
) -> Result<String> {
    let state = session.load_state()?;
    let (config, registry) = session_team(session, &state)?;
    let mut graph = session.load_tasks()?;
    let ctx = DescribeCtx::of(session);
    let d = ctx.describe();
    let ext = extend::deepen(&config, &graph, layer, target, &d)?;
    let summary = ext.summary.clone();
    let ids: Vec<String> = ext.tasks.iter().map(|t| t.id.clone()).collect();
    extend::apply(&mut graph, ext, |r| registry.contains(r))
        .map_err(|e| Error::Usage(e.to_string()))?;
    note(session, &summary, &ids)?;
    session.save_tasks(&graph)?;
    Ok(summary)
}

/// Inserts the new tasks (validated), logs the change, saves tasks.json; returns the summary.
fn apply(opened: &mut Opened, ext: Extension, what: &str) -> Result<String> {
    let ids: Vec<String> = ext.tasks.iter().map(|t| t.id.clone()).collect();
    let summary = ext.summary.clone();
    let registry = &opened.registry;
    extend::apply(&mut opened.graph, ext, |r| registry.contains(r))
        .map_err(|e| Error::Usage(format!("{what}: {e}")))?;
    note(&opened.session, &summary, &ids)?;
    opened.session.save_tasks(&opened.graph)?;
    Ok(summary)
}

/// The graph change, as a message in the log before tasks.json changes.
fn note(session: &SessionDir, summary: &str, ids: &[String]) -> Result<()> {
    log_message(
        session,
        Message::new(
            "coordinator",
            "coordinator",
            format!("[coordinator] {summary}"),
            Payload::Progress(Progress {
                task_id: ids.first().cloned().unwrap_or_default(),
                phase: "graph_extended".into(),
                progress_pct: None,
                detail: Some(format!("{summary} [{}]", ids.join(", "))),
            }),
        ),
    )
}

/// The session folder, the scope line and the time for new tasks' descriptions.
/// What every new task's description names: the session folder, the change scope, the time.
struct DescribeCtx {
    session_dir: String,
    scope_text: String,
    now: String,
}

impl DescribeCtx {
    fn of(session: &SessionDir) -> Self {
        let analysis: serde_json::Value = read_json(&session.analysis_json()).unwrap_or_default();
        let files: Vec<&str> = analysis["scope"]["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["path"].as_str())
            .collect();
        let scope_text = if files.is_empty() {
            "see task-analysis.json".to_string()
        } else {
            format!("{} file(s): {}", files.len(), files.join(", "))
        };
        DescribeCtx {
            session_dir: session.root.display().to_string(),
            scope_text,
            now: now_ts(),
        }
    }

    fn describe(&self) -> Describe<'_> {
        Describe {
            session_dir: &self.session_dir,
            scope_text: &self.scope_text,
            now: &self.now,
        }
    }
}

/// What the user can run next on a session whose tasks are done, each a command that works
/// pasted and would not be refused: apply (when there are tests), report (when one was
/// written), deepen (when a layer is left), rerun (when something failed).
pub fn next_steps(session: &SessionDir) -> Vec<String> {
    let hint = |verb: &str| crate::hint::quoted(session, verb, &[]);
    let mut steps = Vec::new();
    let has_tests = crate::session::LAYER_DIRS.iter().any(|l| {
        std::fs::read_dir(session.root.join("tests").join(l))
            .is_ok_and(|mut rd| rd.any(|e| e.is_ok_and(|e| e.path().is_file())))
    });
    // apply writes into the checkout the user stands in; from anywhere else the hint names the
    // session's repository, or pasting it would be refused.
    let repo = session
        .load_state()
        .ok()
        .map(|s| s.repo)
        .filter(|repo| crate::app::apply_target::refuses_cwd(repo));
    let repo_arg = repo.as_ref().map(|r| {
        std::path::absolute(r)
            .unwrap_or_else(|_| r.clone())
            .to_string_lossy()
            .into_owned()
    });
    let apply = |extra: &[&str]| {
        let mut args = extra.to_vec();
        if let Some(r) = &repo_arg {
            args.extend(["--repo", r.as_str()]);
        }
        crate::hint::quoted(session, "apply", &args)
    };
    if has_tests {
        steps.push(format!("{} puts the tests into the project", apply(&[])));
    }
    if session
        .root
        .join(crate::artifacts::FIXES_MANIFEST)
        .is_file()
    {
        steps.push(format!("{} applies the code fixes", apply(&["--fixes"])));
    }
    if session.root.join("analysis/quality-report.md").is_file() {
        steps.push(format!("{} prints the report", hint("report")));
    }
    let (Ok(state), Ok(mut graph)) = (session.load_state(), session.load_tasks()) else {
        return steps;
    };
    let Ok((config, registry)) = session_team(session, &state) else {
        return steps;
    };
    let ctx = DescribeCtx::of(session);
    let d = ctx.describe();
    // A test-fix session tests no layer: deepening it means nothing.
    let layered = graph.tasks.iter().any(|t| t.layer.is_some());
    if layered && extend::deepen(&config, &graph, None, None, &d).is_ok() {
        steps.push(format!("{} adds the next layer", hint("deepen")));
    }
    if crate::artifacts::IterationState::load(&session.root)
        .is_some_and(|s| s.status == crate::artifacts::CycleStatus::NeedsAgent)
    {
        steps.push(format!(
            "{} fixes the code with an agent CLI",
            crate::hint::quoted(session, "fix", &["--backend", "fixer=claude"])
        ));
    }
    if extend::rerun(&config, &mut graph, |r| registry.contains(r), &d)
        .is_ok_and(|(reopened, added)| !reopened.is_empty() || !added.is_empty())
    {
        steps.push(format!("{} runs again what failed", hint("rerun")));
    }
    steps
}
