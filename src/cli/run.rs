//! `team-testing run TASK`: analyse, select the pipeline, create the session, run it.

use std::path::PathBuf;

use clap::Args;

use super::args::{DriveArgs, Location, SandboxArgs};
use super::drive::drive;
use crate::actors::coordinator::Begin;
use crate::app::create::{create, Created, NewSession};
use crate::app::open::Opened;
use crate::app::plan::{dry_run, Planned};
use crate::app::team::check_sandbox;
use crate::bus::message::PipelineSelected;
use crate::pipeline::config::TeamConfig;
use crate::session::{SessionDir, SessionState, SessionStatus};
use crate::tasks::TaskGraph;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// What to test, in words ("test the new tokenizer").
    pub task: String,
    #[command(flatten)]
    pub location: Location,
    /// auto (by change scope and task keywords), targeted, standard, comprehensive, or test-fix
    /// (fix the code the failing tests point at; needs an agent backend for the fixer).
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
    /// The GC rounds' strategy: conservative, aggressive or surgical to start with (then chosen
    /// per round), or reflective (a reflection each iteration in reflection-log.md decides the
    /// next, and a layer whose only failures are code defects stops at once).
    #[arg(long, value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(crate::pipeline::controls::STRATEGIES))]
    pub strategy: Option<String>,
    /// Where the requirement files (REQ-*.md) are, for the spec route of the scenario plan
    /// (default: anywhere in the repository).
    #[arg(long, value_name = "DIR")]
    pub spec_dir: Option<PathBuf>,
    /// Iterations of the test-fix loop (`--pipeline test-fix`; default 10).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_iterations: Option<u32>,
    /// Mutants the mutation analysis samples at most (default: the config's
    /// mutation_max_mutants, 300): fewer gives a faster, rougher mutation score.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_mutants: Option<u64>,
    /// Search every module again: reuse no tests from earlier sessions of this repository
    /// (the cache under the sessions root; `sessions gc` prunes it).
    #[arg(long)]
    pub no_cache: bool,
}

impl RunArgs {
    fn new_session(&self) -> anyhow::Result<NewSession> {
        Ok(NewSession {
            task: self.task.clone(),
            repo: self.location.repo(),
            sessions_root: self.location.root(),
            base: self.base.clone(),
            pipeline: self.pipeline.clone(),
            seed: self.seed,
            roles_dir: self.roles_dir.clone(),
            spec: self.spec.clone(),
            max_rounds: self.max_rounds,
            coverage_preset: self.coverage_preset.clone(),
            targets: self.targets.clone(),
            layer: self.layer.clone(),
            concurrency: self.concurrency.map(|n| n as usize),
            max_roles: self.drive.max_roles.map(|n| n as usize),
            max_iterations: self.max_iterations,
            spec_dir: self.spec_dir.clone(),
            strategy: self.strategy.clone(),
            max_mutants: self.max_mutants.map(|n| n as usize),
            no_cache: self.no_cache,
            agents: self.drive.agents.choice(),
            sandbox: self.sandbox.settings()?,
            completion: self.drive.completion_action(),
        })
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<i32> {
    let Created {
        session,
        lock,
        mut state,
        config,
        registry,
        graph,
        selection,
        warnings,
        git_exclude,
    } = create(&args.new_session()?)?;
    if args.drive.json {
        eprintln!("{}", session.id);
    } else {
        println!("Session {} ({})", session.id, session.root.display());
    }
    for w in &warnings {
        eprintln!("team-testing: warning: {w}");
    }
    // Said once: the line is there from then on, and git ignores the folder.
    match git_exclude {
        Ok(Some(file)) => eprintln!(
            "team-testing: added the sessions folder to {} so sessions stay out of `git status` \
             (a local file git does not track)",
            file.display()
        ),
        Ok(None) => {}
        Err(e) => eprintln!("team-testing: warning: {e}"),
    }
    let note = check_sandbox(&mut state, &registry, &graph)?;
    if !args.drive.json {
        eprintln!("team-testing: {}", note.description);
    }
    for warning in &note.missing {
        eprintln!("team-testing: warning: {warning}");
    }
    if args.dry_run {
        let repo = state.repo.clone();
        let planned = dry_run(&session, &mut state, &config, &registry, &graph, &repo)?;
        print_dry_run(&session, &state, &config, &graph, &planned);
        return Ok(0);
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
        swept: Vec::new(),
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
    print_scenarios(session);
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

/// The scenario plan: its route, scenarios per layer, priorities and sample rows.
fn print_scenarios(session: &SessionDir) {
    let lines = crate::scenario::gate::session_gate_lines(&session.root);
    if let Some((first, rest)) = lines.split_first() {
        println!("Scenario plan ({}), {first}", crate::scenario::plan::FILE);
        for l in rest {
            println!("  {l}");
        }
    }
}

/// The dry run's plan: what will run, and what will have nothing to do.
fn print_dry_run(
    session: &SessionDir,
    state: &SessionState,
    config: &TeamConfig,
    graph: &TaskGraph,
    planned: &Planned,
) {
    print_plan("Plan (dry run)", state, config, graph);
    print_scenarios(session);
    println!("  strategy: {}", planned.strategy_note);
    let (skipped, to_run): (Vec<_>, Vec<_>) = planned
        .plan
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
}
