//! `--dry-run`: the strategist writes the strategy (no project code runs), and the plan says
//! which tasks will run and which will have nothing to do. The session stays paused for `resume`.

use std::path::Path;

use crate::error::Result;
use crate::pipeline::config::TeamConfig;
use crate::roles::Registry;
use crate::session::{SessionDir, SessionState, SessionStatus};
use crate::tasks::{Outcome, OutcomeStatus, Task, TaskGraph};
use crate::util::now_ts;

/// What a dry run found.
pub struct Planned {
    /// Where the strategy was written (and its summary), or why not.
    pub strategy_note: String,
    /// The graph with the tasks foreseen not applicable marked so.
    pub plan: TaskGraph,
}

pub fn dry_run(
    session: &SessionDir,
    state: &mut SessionState,
    config: &TeamConfig,
    registry: &Registry,
    graph: &TaskGraph,
    repo: &Path,
) -> Result<Planned> {
    state.status = SessionStatus::Paused;
    state.pid = None;
    session.save_state(state)?;
    let mut plan = graph.clone();
    let Some(task) = graph
        .tasks
        .iter()
        .find(|t| t.owner == "strategist")
        .cloned()
    else {
        return Ok(Planned {
            strategy_note: "no strategist task in this pipeline".into(),
            plan,
        });
    };
    let body = registry
        .get("strategist")
        .map(|r| r.body.clone())
        .unwrap_or_default();
    let progress = |_: &str, _: Option<f64>, _: Option<String>| {};
    let ctx = crate::team::RoleContext {
        session,
        repo,
        task: &task,
        instance: "strategist",
        config,
        deadline: std::time::Instant::now() + std::time::Duration::from_secs(300),
        progress: &progress,
        sandbox: &state.sandbox,
        agents: &state.agents,
        role_body: &body,
        plan_only: true,
        shards: None,
    };
    let out = crate::team::run_builtin("strategist", &ctx);
    let strategy_note = match out.status {
        OutcomeStatus::Completed => format!(
            "{} ({})",
            session.root.join("strategy/test-strategy.md").display(),
            out.summary
        ),
        _ => format!("not written: {}", out.summary),
    };
    // Layers the built-in generator will find nothing to do for, as the run would mark them.
    let builtin_generator = registry
        .get("generator")
        .is_some_and(|r| matches!(r.backend, crate::roles::Backend::Builtin));
    let generator_tasks: Vec<Task> = graph
        .tasks
        .iter()
        .filter(|t| builtin_generator && t.owner == "generator" && t.layer.is_some())
        .cloned()
        .collect();
    let owners = [config.gc.generator.as_str(), config.gc.critic.as_str()];
    let framework = crate::session::framework::session_framework(session, repo);
    for t in &generator_tasks {
        let ctx = crate::team::RoleContext { task: t, ..ctx };
        let layer = t.layer.as_deref().unwrap_or_default();
        if let Some(why) = crate::team::generator::foreseen_not_applicable(&ctx, &framework, layer)
        {
            let _ = plan.not_applicable(&t.id, Outcome::not_applicable(why), &owners, &now_ts());
        }
    }
    Ok(Planned {
        strategy_note,
        plan,
    })
}
