//! Creating a session: analyse the change, select the pipeline, build and validate the task
//! graph, then write the session folder (task-analysis.json, tasks.json) and its first state.

use std::path::PathBuf;

use super::team::{load_team, AgentChoice};
use crate::error::{Error, Result};
use crate::pipeline::config::TeamConfig;
use crate::pipeline::controls::{restrict_to_layer, RunControls};
use crate::pipeline::scope::{self, ChangeScope};
use crate::pipeline::select::{build_tasks, select_mode, task_analysis, Selection, MODES};
use crate::roles::Registry;
use crate::sandbox::SandboxSettings;
use crate::session::{CompletionAction, SessionDir, SessionLock, SessionState, SessionStatus};
use crate::tasks::{Task, TaskGraph};
use crate::util::{atomic_write_json, now_ts, today};

/// Everything `run` was asked, parsed.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub task: String,
    pub repo: PathBuf,
    pub sessions_root: PathBuf,
    pub base: Option<String>,
    /// auto, targeted, standard, comprehensive, or a pipeline of the config.
    pub pipeline: String,
    pub seed: u64,
    pub roles_dir: Option<PathBuf>,
    pub spec: Option<PathBuf>,
    pub max_rounds: Option<u32>,
    pub coverage_preset: Option<String>,
    pub targets: Vec<String>,
    pub layer: Option<String>,
    pub concurrency: Option<usize>,
    pub max_roles: Option<usize>,
    /// `--max-iterations N` of the test-fix loop.
    pub max_iterations: Option<u32>,
    /// `--spec-dir DIR`: where the requirement files are.
    pub spec_dir: Option<PathBuf>,
    /// `--strategy NAME` of the GC rounds.
    pub strategy: Option<String>,
    /// `--max-mutants N` of the mutation analysis.
    pub max_mutants: Option<usize>,
    /// `--no-cache`: no generated tests reused from earlier sessions.
    pub no_cache: bool,
    pub agents: AgentChoice,
    pub sandbox: SandboxSettings,
    /// The completion action to record.
    pub completion: CompletionAction,
}

/// A session just written, locked, not yet run.
pub struct Created {
    pub session: SessionDir,
    pub lock: SessionLock,
    pub state: SessionState,
    pub config: TeamConfig,
    pub registry: Registry,
    pub graph: TaskGraph,
    pub selection: Selection,
    /// What the change analysis warns about (no git, no commits yet…).
    pub warnings: Vec<String>,
    /// The sessions folder kept out of `git status`: the exclude file when a line was added
    /// (once per repository), or why it could not be.
    pub git_exclude: Result<Option<PathBuf>>,
}

/// Validates the request, builds the graph (validated before anything is written), then creates
/// and locks the session folder and writes its files.
pub fn create(new: &NewSession) -> Result<Created> {
    if new.task.trim().is_empty() {
        return Err(Error::Session(
            "the task text is empty: say what to test".into(),
        ));
    }
    if !new.repo.is_dir() {
        return Err(Error::MissingRepo {
            path: new.repo.clone(),
        });
    }
    // Absolute, because command roles run with the session folder as their cwd.
    let absolute = |p: &Option<PathBuf>, what: &str| {
        p.as_ref()
            .map(|p| {
                p.canonicalize()
                    .map_err(|e| Error::io(format!("{what} {}", p.display()), e))
            })
            .transpose()
    };
    let roles_dir = absolute(&new.roles_dir, "roles dir")?;
    let spec = absolute(&new.spec, "reading")?;
    let (mut config, registry) = load_team(spec.as_deref(), roles_dir.as_deref())?;
    let mut controls = RunControls::from_args(
        new.max_rounds,
        new.coverage_preset.as_deref(),
        &new.targets,
        new.layer.as_deref(),
        &config,
    )?;
    controls.concurrency = new.concurrency;
    controls.max_roles = new.max_roles;
    controls.max_iterations = new.max_iterations;
    controls.spec_dir = absolute(&new.spec_dir, "spec dir")?;
    controls.strategy = new.strategy.clone();
    controls.max_mutants = new.max_mutants;
    controls.no_cache = new.no_cache;
    controls.apply(&mut config);
    let scope = scope::analyse(&new.repo, new.base.as_deref())?;
    let selection = select(new, &config, &scope)?;
    // A pipeline with the test-fix cycle on a project it cannot fix: said before any session.
    let fixes = config
        .pipelines
        .get(&selection.mode)
        .is_some_and(|p| p.tasks.iter().any(|t| t.owner == "fixer"));
    if fixes {
        if let Some(why) = crate::team::fixer::cannot_run_on(&new.repo) {
            return Err(Error::Usage(why));
        }
    }
    let scope_text = scope_summary(&scope);
    let tasks = |session_path: &str, now: &str| -> Result<Vec<Task>> {
        let role_spec_of = |role: &str| {
            registry
                .get(role)
                .map(|r| r.source_label())
                .unwrap_or_else(|| format!("roles/{role}/role.md"))
        };
        let all = build_tasks(
            &config,
            &selection.mode,
            session_path,
            &scope_text,
            role_spec_of,
            now,
        )?;
        Ok(match &controls.layer {
            Some(layer) => restrict_to_layer(all, layer),
            None => all,
        })
    };
    // Build and validate the graph before anything is written.
    TaskGraph::new(tasks("<session>", "")?)
        .validate(|r| registry.contains(r))
        .map_err(|e| Error::BadTask {
            path: config.source.clone(),
            task: e.task().to_string(),
            problem: e.to_string(),
        })?;

    // The scenario plan, before anything is written: a malformed requirement file stops here.
    let layers: Vec<String> = {
        let graph = TaskGraph::new(tasks("<session>", "")?);
        let mut codes: Vec<String> = graph
            .tasks
            .iter()
            .filter(|t| t.owner == config.gc.generator)
            .filter_map(|t| {
                t.layer
                    .as_deref()
                    .map(|l| crate::tasks::layer_code(l).to_string())
            })
            .collect();
        codes.sort();
        codes.dedup();
        codes
    };
    let scenarios = if layers.is_empty() {
        None
    } else {
        Some(super::scenarios::plan(
            &scope.repo,
            &new.sessions_root,
            controls.spec_dir.as_deref(),
            &scope,
            &layers,
        )?)
    };
    let mut warnings = scope.warnings.clone();
    if let Some(active) = scenarios.as_ref().and_then(|p| p.active.clone()) {
        warnings.push(active);
    }
    // The agents of the roles this pipeline runs are checked before anything is written.
    let pipeline_roles: std::collections::BTreeSet<&str> = config
        .pipelines
        .get(&selection.mode)
        .map(|p| p.tasks.iter().map(|t| t.owner.as_str()).collect())
        .unwrap_or_default();
    let mut agent_notes = Vec::new();
    let agents = new.agents.settings(
        &scope.repo,
        &registry,
        &new.sessions_root,
        &|role| pipeline_roles.contains(role),
        &mut agent_notes,
    )?;
    warnings.extend(agent_notes.iter().cloned());
    let session = SessionDir::create(
        &new.sessions_root,
        &config.session_prefix,
        &new.task,
        &today(),
    )?;
    let lock = SessionLock::acquire(&session.lock_file(), &session.id)?;
    let git_exclude =
        crate::session::git_exclude::exclude_sessions(&scope.repo, &new.sessions_root);
    let now = now_ts();
    let graph = TaskGraph::new(tasks(&session.root.display().to_string(), &now)?);
    let mut analysis = task_analysis(&config, &new.task, &selection, &scope, &graph.tasks);
    if let Some(planned) = &scenarios {
        super::scenarios::write(&session, planned)?;
        analysis["scenario_plan"] = serde_json::json!({
            "route": planned.route.as_str(),
            "why": planned.why,
            "scenarios": planned.rows.len(),
            "file": crate::scenario::plan::FILE,
        });
    }
    atomic_write_json(&session.analysis_json(), &analysis)?;
    session.save_tasks(&graph)?;
    let mut roles: Vec<String> = Vec::new();
    for t in &graph.tasks {
        if !roles.contains(&t.owner) {
            roles.push(t.owner.clone());
        }
    }
    let mut sandbox = new.sandbox.clone();
    sandbox.secret_env = agents.secret_env();
    let state = SessionState {
        version: 1,
        session_id: session.id.clone(),
        status: SessionStatus::Active,
        task_description: new.task.clone(),
        pipeline_mode: selection.mode.clone(),
        team_name: config.team_name.clone(),
        repo: scope.repo.clone(),
        base_commit: scope.base_commit.clone(),
        completion_action: new.completion,
        gc_rounds: Default::default(),
        max_gc_rounds: config.max_gc_rounds,
        seed: new.seed,
        active_workers: vec![],
        roles,
        spec_file: spec,
        roles_dir,
        tasks_total: graph.len(),
        warnings: scope.warnings.iter().chain(&agent_notes).cloned().collect(),
        sandbox,
        protections: None,
        agents,
        controls,
        pending_gaps: Vec::new(),
        created_at: now.clone(),
        updated_at: now,
        pid: Some(std::process::id()),
        beat: 0,
    };
    Ok(Created {
        session,
        lock,
        state,
        config,
        registry,
        graph,
        selection,
        warnings,
        git_exclude,
    })
}

/// The pipeline: chosen by the change and the task's words (`auto`), or named.
fn select(new: &NewSession, config: &TeamConfig, scope: &ChangeScope) -> Result<Selection> {
    if new.pipeline == "auto" {
        Ok(select_mode(&new.task, scope))
    } else if MODES.contains(&new.pipeline.as_str()) || config.pipelines.contains_key(&new.pipeline)
    {
        Ok(Selection {
            mode: new.pipeline.clone(),
            reason: "named with --pipeline".into(),
        })
    } else {
        Err(Error::unknown_pipeline(
            &new.pipeline,
            config.pipelines.keys(),
        ))
    }
}

/// The scope line every task's description carries.
fn scope_summary(scope: &ChangeScope) -> String {
    let n = scope.files.len();
    if scope.whole_project {
        match &scope.whole_project_reason {
            Some(why) => format!("whole project ({n} files): {why}"),
            None => format!("whole project ({n} files)"),
        }
    } else {
        let shown: Vec<&str> = scope
            .files
            .iter()
            .take(10)
            .map(|f| f.path.as_str())
            .collect();
        let more = if n > 10 {
            format!(" and {} more", n - 10)
        } else {
            String::new()
        };
        format!("{n} changed file(s): {}{more}", shown.join(", "))
    }
}
