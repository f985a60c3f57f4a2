//! `team-testing run TASK`: analyse, select the pipeline, create the session, run it.

use std::path::PathBuf;

use clap::Args;

use super::drive::{drive, DriveArgs, Opened};
use super::Location;
use crate::actors::coordinator::Begin;
use std::collections::BTreeMap;

use crate::agents::backends::{parse_overrides, AgentSettings, BackendConfig};
use crate::bus::message::PipelineSelected;
use crate::error::Error;
use crate::pipeline::config::TeamConfig;
use crate::pipeline::controls::{restrict_to_layer, RunControls};
use crate::pipeline::scope;
use crate::pipeline::select::{build_tasks, select_mode, task_analysis, Selection, MODES};
use crate::roles::Registry;
use crate::sandbox::SandboxSettings;
use crate::session::{SessionDir, SessionLock, SessionState, SessionStatus};
use crate::tasks::TaskGraph;
use crate::util::{atomic_write_json, now_ts, today};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// What to test, in words ("test the new tokenizer").
    pub task: String,
    #[command(flatten)]
    pub location: Location,
    /// auto (by change scope and task keywords), targeted, standard or comprehensive.
    #[arg(long, default_value = "auto")]
    pub pipeline: String,
    /// Measure the change against REV's merge base with HEAD (a branch's whole change) instead
    /// of against HEAD.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Seed of the built-in generator's random choices (the same seed gives the same tests).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Extra or overriding role files: DIR/<role>/role.md.
    #[arg(long, value_name = "DIR")]
    pub roles_dir: Option<PathBuf>,
    /// Team config to use instead of the built-in specs/team-config.json.
    #[arg(long, value_name = "FILE")]
    pub spec: Option<PathBuf>,
    #[command(flatten)]
    pub drive: DriveArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// GC rounds per layer (default: the config's max_gc_rounds, 3).
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,
    /// Coverage targets L1/L2/L3: standard 80/60/40, strict 90/75/60, minimum 60/40/20.
    #[arg(long, value_name = "NAME")]
    pub coverage_preset: Option<String>,
    /// One layer's coverage target in percent, after the preset: --target L1=85.
    #[arg(long = "target", value_name = "LAYER=PERCENT")]
    pub targets: Vec<String>,
    /// Test one layer only (L1, L2 or L3): the pipeline's tasks of other layers are left out.
    #[arg(long, value_name = "LAYER")]
    pub layer: Option<String>,
    /// Plan only: write task-analysis.json, tasks.json and the strategy, print the plan, run
    /// nothing else (the session is left paused: `resume` runs it).
    #[arg(long)]
    pub dry_run: bool,
    /// Most tasks running at once (default: every ready task, the pipeline's parallel width).
    #[arg(short = 'c', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub concurrency: Option<u64>,
}

/// Which agent backends do a role's creative work (see README, Agent backends).
#[derive(Args, Debug, Default)]
pub struct AgentArgs {
    /// A role's backend, or fallback chain: --backend generator=claude or generator=local,builtin.
    #[arg(long = "backend", value_name = "ROLE=NAME")]
    pub backends: Vec<String>,
    /// Backend config instead of <repo>/team-testing.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Answer every agent call whose prompt matches one recorded in SESSION from that recording.
    #[arg(long, value_name = "SESSION")]
    pub replay: Option<String>,
}

impl AgentArgs {
    /// Every role's chain, resolved once for the whole session.
    pub fn settings(
        &self,
        repo: &std::path::Path,
        registry: &Registry,
        sessions_root: &std::path::Path,
    ) -> Result<AgentSettings, Error> {
        let config = BackendConfig::load(self.config.as_deref(), repo)?;
        let overrides = parse_overrides(&self.backends)?;
        for role in overrides.keys() {
            if !registry.contains(role) {
                return Err(Error::Usage(format!(
                    "--backend {role}=…: no role named {role}"
                )));
            }
        }
        let mut chains = std::collections::BTreeMap::new();
        for role in registry.iter() {
            let mut chain = config.chain_for(&role.name, &overrides, role.agent.as_deref())?;
            if chain.len() == 1 && chain[0].is_builtin() {
                continue;
            }
            // The built-in implementation stays the fallback of last resort.
            if !chain.iter().any(|b| b.is_builtin()) {
                chain.extend(config.chain_for("", &BTreeMap::new(), Some(&["builtin".into()]))?);
            }
            chains.insert(role.name.clone(), chain);
        }
        let Some(arg) = &self.replay else {
            return Ok(AgentSettings {
                chains,
                replay: None,
            });
        };
        let session = crate::session::resolve(sessions_root, Some(arg))?;
        let agents = session.root.join("agents");
        if !agents.is_dir() {
            return Err(Error::Usage(format!(
                "--replay {arg}: {} has no recorded agent calls",
                agents.display()
            )));
        }
        // Without backends named anew, the replay uses the recorded session's own chains.
        if self.backends.is_empty() && self.config.is_none() {
            chains = session.load_state()?.agents.chains;
        }
        Ok(AgentSettings {
            chains,
            replay: Some(agents),
        })
    }
}

/// How the children that run the project's code are sandboxed (see README, Security).
#[derive(Args, Debug, Default)]
pub struct SandboxArgs {
    /// Let generated calls and test runs use the network (off by default).
    #[arg(long)]
    pub allow_network: bool,
    /// Run the project's code with your full rights: no filesystem, network or resource limits.
    #[arg(long)]
    pub unsafe_no_sandbox: bool,
    /// Pass this variable to the children although its name looks like a credential.
    #[arg(long = "allow-env", value_name = "NAME")]
    pub allow_env: Vec<String>,
    /// A per-child limit: cpu_s, memory_mb, address_space_mb, file_size_mb, open_files or
    /// processes (0 switches it off), e.g. --limit memory_mb=2048.
    #[arg(long = "limit", value_name = "KEY=VALUE")]
    pub limits: Vec<String>,
}

impl SandboxArgs {
    pub fn settings(&self) -> Result<SandboxSettings, Error> {
        let mut settings = SandboxSettings {
            enabled: !self.unsafe_no_sandbox,
            allow_network: self.allow_network,
            allow_env: self.allow_env.clone(),
            ..Default::default()
        };
        for l in &self.limits {
            settings.limits.set(l).map_err(Error::Usage)?;
        }
        Ok(settings)
    }
}

/// Says what the sandbox protects (and what not), records it in `state`, and refuses to let the
/// built-in generator call the project's functions with no filesystem sandbox. `json` keeps the
/// description off the terminal; `shown` says this process printed it all already.
pub fn check_sandbox(
    state: &mut SessionState,
    registry: &Registry,
    graph: &TaskGraph,
    json: bool,
    shown: bool,
) -> Result<(), Error> {
    let protections = state.sandbox.protections();
    let builtin_generator = graph.tasks.iter().any(|t| {
        t.owner == "generator"
            && registry
                .get("generator")
                .is_some_and(|r| matches!(r.backend, crate::roles::Backend::Builtin))
    });
    if state.sandbox.enabled && !protections.filesystem_contained && builtin_generator {
        return Err(Error::Environment(format!(
            "the built-in generator calls the project's functions with made-up arguments, and this \
             machine offers no filesystem sandbox ({}). Run team-testing in a container or VM, or \
             pass --unsafe-no-sandbox to accept that the project's code may change any file you can.",
            protections.missing.join("; ")
        )));
    }
    if !json && !shown {
        eprintln!(
            "team-testing: sandbox: filesystem: {}; network: {}",
            protections.filesystem, protections.network
        );
    }
    for m in &protections.missing {
        let warning = format!("sandbox: missing protection: {m}");
        if !shown {
            eprintln!("team-testing: warning: {warning}");
        }
        if !state.warnings.contains(&warning) {
            state.warnings.push(warning);
        }
    }
    state.protections = Some(protections);
    Ok(())
}

/// Config and role registry, validated together.
pub fn load_team(
    spec: Option<&std::path::Path>,
    roles_dir: Option<&std::path::Path>,
) -> crate::error::Result<(TeamConfig, Registry)> {
    let config = match spec {
        Some(p) => TeamConfig::load(p)?,
        None => TeamConfig::builtin()?,
    };
    let registry = Registry::load(roles_dir)?;
    registry.check_config(&config)?;
    Ok((config, registry))
}

pub fn run(args: RunArgs) -> anyhow::Result<i32> {
    if args.task.trim().is_empty() {
        return Err(Error::Session("the task text is empty: say what to test".into()).into());
    }
    let repo = args.location.repo();
    if !repo.is_dir() {
        return Err(Error::MissingRepo { path: repo }.into());
    }
    // Absolute, because command roles run with the session folder as their cwd.
    let roles_dir = args
        .roles_dir
        .as_ref()
        .map(|p| {
            p.canonicalize()
                .map_err(|e| Error::io(format!("roles dir {}", p.display()), e))
        })
        .transpose()?;
    let spec = args
        .spec
        .as_ref()
        .map(|p| {
            p.canonicalize()
                .map_err(|e| Error::io(format!("reading {}", p.display()), e))
        })
        .transpose()?;
    let (mut config, registry) = load_team(spec.as_deref(), roles_dir.as_deref())?;
    let mut controls = RunControls::from_args(
        args.max_rounds,
        args.coverage_preset.as_deref(),
        &args.targets,
        args.layer.as_deref(),
        &config,
    )?;
    controls.concurrency = args.concurrency.map(|n| n as usize);
    controls.max_roles = args.drive.max_roles.map(|n| n as usize);
    controls.apply(&mut config);
    let scope = scope::analyse(&repo, args.base.as_deref())?;
    let selection = if args.pipeline == "auto" {
        select_mode(&args.task, &scope)
    } else if MODES.contains(&args.pipeline.as_str())
        || config.pipelines.contains_key(&args.pipeline)
    {
        Selection {
            mode: args.pipeline.clone(),
            reason: "named with --pipeline".into(),
        }
    } else {
        return Err(Error::UnknownPipeline(args.pipeline.clone()).into());
    };
    let role_spec_of = |role: &str| {
        registry
            .get(role)
            .map(|r| r.source_label())
            .unwrap_or_else(|| format!("roles/{role}/role.md"))
    };
    let scope_text = scope_summary(&scope);
    // Build and validate the graph before anything is written.
    let for_layer = |tasks: Vec<crate::tasks::Task>| match &controls.layer {
        Some(layer) => restrict_to_layer(tasks, layer),
        None => tasks,
    };
    let probe = TaskGraph::new(for_layer(build_tasks(
        &config,
        &selection.mode,
        "<session>",
        &scope_text,
        role_spec_of,
        "",
    )?));
    probe
        .validate(|r| registry.contains(r))
        .map_err(|e| Error::BadTask {
            path: config.source.clone(),
            task: e.task().to_string(),
            problem: e.to_string(),
        })?;

    let root = args.location.root();
    let agents = args.drive.agents.settings(&scope.repo, &registry, &root)?;
    let session = SessionDir::create(&root, &config.session_prefix, &args.task, &today())?;
    let lock = SessionLock::acquire(&session.lock_file(), &session.id)?;
    if args.drive.json {
        eprintln!("{}", session.id);
    } else {
        println!("Session {} ({})", session.id, session.root.display());
    }
    for w in &scope.warnings {
        eprintln!("team-testing: warning: {w}");
    }
    // Said once: the line is there from then on, and git ignores the folder.
    match crate::session::git_exclude::exclude_sessions(&scope.repo, &root) {
        Ok(Some(file)) => eprintln!(
            "team-testing: added the sessions folder to {} so sessions stay out of `git status` \
             (a local file git does not track)",
            file.display()
        ),
        Ok(None) => {}
        Err(e) => eprintln!("team-testing: warning: {e}"),
    }
    let now = now_ts();
    let session_path = session.root.display().to_string();
    let tasks = for_layer(build_tasks(
        &config,
        &selection.mode,
        &session_path,
        &scope_text,
        role_spec_of,
        &now,
    )?);
    let graph = TaskGraph::new(tasks);
    atomic_write_json(
        &session.analysis_json(),
        &task_analysis(&config, &args.task, &selection, &scope, &graph.tasks),
    )?;
    session.save_tasks(&graph)?;
    let mut roles: Vec<String> = Vec::new();
    for t in &graph.tasks {
        if !roles.contains(&t.owner) {
            roles.push(t.owner.clone());
        }
    }
    let mut state = SessionState {
        version: 1,
        session_id: session.id.clone(),
        status: SessionStatus::Active,
        task_description: args.task.clone(),
        pipeline_mode: selection.mode.clone(),
        team_name: config.team_name.clone(),
        repo: scope.repo.clone(),
        base_commit: scope.base_commit.clone(),
        completion_action: args.drive.completion_label().into(),
        gc_rounds: Default::default(),
        max_gc_rounds: config.max_gc_rounds,
        seed: args.seed,
        active_workers: vec![],
        roles,
        spec_file: spec,
        roles_dir,
        tasks_total: graph.len(),
        warnings: scope.warnings.clone(),
        sandbox: {
            let mut s = args.sandbox.settings()?;
            s.secret_env = agents.secret_env();
            s
        },
        protections: None,
        agents: agents.clone(),
        controls,
        pending_gaps: Vec::new(),
        created_at: now.clone(),
        updated_at: now,
        pid: Some(std::process::id()),
        beat: 0,
    };
    check_sandbox(&mut state, &registry, &graph, args.drive.json, false)?;
    if args.dry_run {
        return dry_run(&session, state, &config, &registry, &graph, &scope.repo);
    }
    if args.drive.can_ask() && !confirm_plan(&session, &state, &config, &graph)? {
        state.status = SessionStatus::Paused;
        state.pid = None;
        session.save_state(&state)?;
        println!(
            "Cancelled before anything ran; the plan is kept: {} runs it",
            crate::hint::quoted(&session, "resume", &[])
        );
        return Ok(0);
    }
    session.save_state(&state)?;
    let selected = PipelineSelected {
        pipeline: selection.mode.clone(),
        task_count: graph.len(),
        reason: selection.reason.clone(),
    };
    let opened = Opened {
        session,
        lock,
        state,
        config,
        registry,
        graph,
        sandbox_shown: true,
    };
    drive(
        opened,
        Begin {
            resume: false,
            selected: Some(selected),
        },
        &args.drive,
    )
}

/// The confirmation gate: on a terminal without -y, the plan (tasks per layer, targets, backends)
/// and a question: proceed, review (the strategy's task list), or cancel.
fn confirm_plan(
    session: &SessionDir,
    state: &SessionState,
    config: &TeamConfig,
    graph: &TaskGraph,
) -> anyhow::Result<bool> {
    print_plan("Plan", state, config, graph);
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stderr();
    loop {
        let picked = super::drive::ask(
            "Run this plan?",
            &[
                ("p", "Proceed"),
                ("r", "Review: list every task"),
                ("c", "Cancel: keep the plan, run nothing"),
            ],
            0,
            &mut input,
            &mut out,
        );
        match picked {
            Some(0) => return Ok(true),
            Some(1) => {
                for line in task_lines(graph) {
                    eprintln!("{line}");
                }
                eprintln!("  tasks: {}", session.tasks_json().display());
            }
            _ => return Ok(false),
        }
    }
}

/// One line per task, in order: id, role, layer, what it waits for.
fn task_lines(graph: &TaskGraph) -> Vec<String> {
    graph
        .tasks
        .iter()
        .map(|t| {
            format!(
                "  {:<22} {:<11} {:<15} after: {}",
                t.id,
                t.owner,
                t.layer.as_deref().unwrap_or("-"),
                if t.blocked_by.is_empty() {
                    "-".to_string()
                } else {
                    t.blocked_by.join(", ")
                }
            )
        })
        .collect()
}

/// The stages without a layer (strategy, analysis), then tasks per layer with their coverage
/// targets, GC rounds, and the backends of each worker role that has a task.
fn print_plan(title: &str, state: &SessionState, config: &TeamConfig, graph: &TaskGraph) {
    println!(
        "{title}: {} pipeline, {} tasks",
        state.pipeline_mode,
        graph.len()
    );
    let mut layers: Vec<(String, usize)> = Vec::new();
    for t in &graph.tasks {
        match &t.layer {
            None => println!("  {}: {} ({})", t.owner, t.id, t.subject),
            Some(l) => match layers.iter_mut().find(|(name, _)| name == l) {
                Some((_, n)) => *n += 1,
                None => layers.push((l.clone(), 1)),
            },
        }
    }
    for (layer, n) in &layers {
        let target = config
            .coverage_target(layer)
            .map_or(String::new(), |t| format!(", coverage target {t:.0}%"));
        println!("  {layer}: {n} task(s){target}");
    }
    if !layers.is_empty() {
        println!("  GC rounds per layer: at most {}", config.max_gc_rounds);
    }
    for role in ["generator", "executor", "analyst"] {
        if !graph.tasks.iter().any(|t| t.owner == role) {
            continue;
        }
        let chain: Vec<String> = state
            .agents
            .chain(role)
            .into_iter()
            .map(|b| b.name)
            .collect();
        println!("  {role}: {}", chain.join(" → "));
    }
}

fn scope_summary(scope: &scope::ChangeScope) -> String {
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

/// `--dry-run`: the strategist writes the strategy (no project code runs), the plan is printed,
/// and the session stays paused for `resume`.
fn dry_run(
    session: &SessionDir,
    mut state: SessionState,
    config: &TeamConfig,
    registry: &Registry,
    graph: &TaskGraph,
    repo: &std::path::Path,
) -> anyhow::Result<i32> {
    state.status = SessionStatus::Paused;
    state.pid = None;
    session.save_state(&state)?;
    let strategy_task = graph
        .tasks
        .iter()
        .find(|t| t.owner == "strategist")
        .cloned();
    let mut strategy_note = "no strategist task in this pipeline".to_string();
    let mut plan = graph.clone();
    if let Some(task) = strategy_task {
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
        };
        let out = crate::team::run_builtin("strategist", &ctx);
        strategy_note = match out.status {
            crate::tasks::OutcomeStatus::Completed => {
                format!(
                    "{} ({})",
                    session.root.join("strategy/test-strategy.md").display(),
                    out.summary
                )
            }
            _ => format!("not written: {}", out.summary),
        };
        // Layers the built-in generator will find nothing to do for, as the run would mark them.
        let builtin_generator = registry
            .get("generator")
            .is_some_and(|r| matches!(r.backend, crate::roles::Backend::Builtin));
        let generator_tasks: Vec<crate::tasks::Task> = graph
            .tasks
            .iter()
            .filter(|t| builtin_generator && t.owner == "generator" && t.layer.is_some())
            .cloned()
            .collect();
        for t in &generator_tasks {
            let ctx = crate::team::RoleContext { task: t, ..ctx };
            let layer = t.layer.as_deref().unwrap_or_default();
            if let Some(why) = crate::team::generator::foreseen_not_applicable(&ctx, layer) {
                let owners = [config.gc.generator.as_str(), config.gc.critic.as_str()];
                let _ = plan.not_applicable(
                    &t.id,
                    crate::tasks::Outcome::not_applicable(why),
                    &owners,
                    &now_ts(),
                );
            }
        }
    }
    print_plan("Plan (dry run)", &state, config, graph);
    println!("  strategy: {strategy_note}");
    let (skipped, to_run): (Vec<_>, Vec<_>) = plan
        .tasks
        .iter()
        .cloned()
        .partition(|t| t.status == crate::tasks::TaskStatus::NotApplicable);
    println!("Tasks that will run, in order:");
    for line in task_lines(&TaskGraph::new(to_run)) {
        println!("{line}");
    }
    if !skipped.is_empty() {
        println!("Not applicable (nothing for them to do; no GC rounds):");
        for t in &skipped {
            println!("  {:<22} {}", t.id, t.reason.as_deref().unwrap_or(""));
        }
    }
    println!(
        "Nothing else ran. Run it with: {}",
        crate::hint::quoted(session, "resume", &[])
    );
    Ok(0)
}
