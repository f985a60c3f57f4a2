//! The command line: clap definitions and the thin glue to the library.

mod apply;
mod args;
mod doctor;
mod drive;
mod extend;
mod log;
mod mutate;
mod report;
mod resume;
mod roles;
mod run;
mod sandbox;
mod sessions;
mod status;
mod summary;
mod worker;

use clap::{Parser, Subcommand};

pub use args::Location;

#[derive(Parser, Debug)]
#[command(
    name = "team-testing",
    version,
    about = "Run a team of testing agents (strategist, generator, executor, analyst) against a repository",
    after_help = "Exit codes:\n  \
        0    the pipeline completed (or the command did what it was asked)\n  \
        1    the pipeline failed: a task failed after its retry\n  \
        2    bad input or environment: the error names the file or tool and the problem\n  \
        3    paused for you: the coordinator needs a decision it may not take (see the warning)\n  \
        4    the session has a result --fail-on names (each one on stderr)\n  \
        130  interrupted (Ctrl-C): the session is paused, and `resume` continues it"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Start a new session for TASK and run its pipeline to the end.
    Run(Box<run::RunArgs>),
    /// Reopen a paused, interrupted or failed session and run it to the end.
    Resume(resume::ResumeArgs),
    /// Show a session's pipeline: progress, GC rounds, graph, workers, ready tasks, blockers.
    Status(status::StatusArgs),
    /// Show (or follow) a session's message log.
    Log(log::LogArgs),
    /// List every session under the sessions root.
    Sessions(sessions::SessionsArgs),
    /// Copy a session's generated tests into the repository (only when you ask).
    Apply(apply::ApplyArgs),
    /// Print a session's quality report (md), report.json (json) or one row per test (csv).
    Report(report::ReportArgs),
    /// Show what the sandbox around the project's code protects on this machine.
    Sandbox(sandbox::SandboxCheckArgs),
    /// What team-testing can do for this repository here: framework, toolchain, each
    /// capability (ready, a tool missing with its install, or not built for the language yet),
    /// agents and endpoints, the sandbox.
    Doctor(doctor::DoctorArgs),
    /// The mutation score of the project's own suite, with no test generation: its tests
    /// against mutants of its code, sandboxed, in a folder of our own.
    Mutate(mutate::MutateArgs),
    /// The role registry: built-in roles, --roles-dir, a session's role-specs/; add a role.
    Roles(roles::RolesArgs),
    /// Add the next layer not yet run (or raise a layer's target with new GC rounds) and run it.
    Deepen(extend::DeepenArgs),
    /// Add a revision of TASK with your feedback; what waited on TASK waits on it. Then run.
    Revise(extend::ReviseArgs),
    /// Run again what failed or was blocked, and the layers whose tests failed.
    Rerun(extend::RerunArgs),
    /// Fix the code the session's failing tests point at, in a git worktree, iterating until the
    /// suite passes (needs an agent backend for the fixer; `apply --fixes` applies the result).
    Fix(extend::FixArgs),
    /// Run the cluster's tasks on this host: pull them from NATS JetStream, run them sandboxed,
    /// send back the results (until Ctrl-C).
    Worker(worker::WorkerArgs),
    /// List the cluster's live workers: their roles, slots and running tasks.
    Workers(worker::WorkersArgs),
}

/// Parses the arguments and runs the command; returns the process exit code.
pub fn main() -> anyhow::Result<i32> {
    // The file-system watch's wrapper (a child of team-testing, never typed by a user).
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args
        .get(1)
        .is_some_and(|a| a == crate::sandbox::watch::WRAPPER_COMMAND)
    {
        return sandbox::watch_wrapper(&args[2..]);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return Ok(clap_error(e)),
    };
    match cli.command {
        Command::Run(a) => run::run(*a),
        Command::Resume(a) => resume::resume(a),
        Command::Status(a) => status::status(a),
        Command::Log(a) => log::log(a),
        Command::Sessions(a) => sessions::sessions(a),
        Command::Apply(a) => apply::apply(a),
        Command::Report(a) => report::report(a),
        Command::Sandbox(a) => sandbox::sandbox(a),
        Command::Doctor(a) => doctor::doctor(a),
        Command::Mutate(a) => mutate::mutate(a),
        Command::Roles(a) => roles::roles(a),
        Command::Deepen(a) => extend::deepen(a),
        Command::Revise(a) => extend::revise(a),
        Command::Rerun(a) => extend::rerun(a),
        Command::Fix(a) => extend::fix(a),
        Command::Worker(a) => worker::worker(a),
        Command::Workers(a) => worker::workers(a),
    }
}

/// Prints clap's error (or help) with a "did you mean" for a mistyped command that clap's own
/// suggestion misses (`rnu`), and returns its exit code.
fn clap_error(e: clap::Error) -> i32 {
    use clap::CommandFactory;
    let rendered = e.render().to_string();
    let code = e.exit_code();
    if e.kind() == clap::error::ErrorKind::InvalidSubcommand && !rendered.contains("tip:") {
        let typed = std::env::args().nth(1).unwrap_or_default();
        let command = Cli::command();
        let names: Vec<&str> = command.get_subcommands().map(|c| c.get_name()).collect();
        if let Some(hint) = crate::util::closest(&typed, names) {
            let (first, rest) = rendered.split_once('\n').unwrap_or((&rendered, ""));
            eprint!("{first}\n\n  tip: a similar subcommand exists: '{hint}'\n{rest}");
            return code;
        }
    }
    let _ = e.print();
    code
}
