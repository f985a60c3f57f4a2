//! `team-testing sandbox [--allow-network] [--json]`: what the sandbox protects on this machine,
//! and what it cannot, before any run. `sandbox --watch -- CMD…` runs a command under the
//! file-system watch and lists what it would have changed.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::args::SandboxArgs;
use crate::sandbox::watch::{self, WatchReport};
use crate::sandbox::Sandbox;

#[derive(Args, Debug)]
pub struct SandboxCheckArgs {
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// Print the protections and the mechanisms found as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Run COMMAND (after `--`) in the current folder under the file-system watch: every write
    /// goes to a throwaway layer, and what it created, wrote, removed or changed is listed.
    #[arg(long, requires = "command")]
    pub watch: bool,
    /// How long the watched command may run, in seconds.
    #[arg(long, default_value_t = 600, requires = "watch")]
    pub timeout: u64,
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

pub fn sandbox(args: SandboxCheckArgs) -> anyhow::Result<i32> {
    let settings = args.sandbox.settings()?;
    if args.watch {
        return watch_command(&settings, &args.command, args.timeout, args.json);
    }
    let protections = settings.protections();
    let watching = watch::support();
    if args.json {
        let out = serde_json::json!({
            "protections": protections,
            "capabilities": crate::sandbox::capabilities(),
            "watch": match watching { Ok(()) => serde_json::Value::Null, Err(e) => e.to_string().into() },
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(0);
    }
    println!("filesystem:  {}", protections.filesystem);
    println!("network:     {}", protections.network);
    println!("limits:      {}", protections.limits);
    println!("environment: {}", protections.environment);
    match watching {
        Ok(()) => println!(
            "watch:       overlay file system in a private mount namespace: a checked test's \
             writes go to a throwaway layer, and every file it created, wrote, removed or \
             changed is listed"
        ),
        Err(why) => println!("watch:       not available: {why}"),
    }
    if protections.missing.is_empty() {
        println!("missing:     none");
    } else {
        for m in &protections.missing {
            println!("missing:     {m}");
        }
    }
    if !protections.filesystem_contained && settings.enabled {
        println!("\nThe built-in generator will refuse to run here without --unsafe-no-sandbox.");
    }
    Ok(0)
}

/// `sandbox --watch -- CMD…`: the command's own output, then what it changed; its exit code.
fn watch_command(
    settings: &crate::sandbox::SandboxSettings,
    command: &[String],
    timeout: u64,
    json: bool,
) -> anyhow::Result<i32> {
    if let Err(why) = watch::support() {
        anyhow::bail!(crate::error::Error::Environment(format!(
            "the file-system watch is not available here: {why}"
        )));
    }
    let scratch = tempfile_dir()?;
    let root = scratch.join("sandbox");
    let sandbox = Sandbox::watching(settings, &root, &[], &[])
        .with_context(|| format!("preparing the watch in {}", scratch.display()))?;
    let cwd = std::env::current_dir()?;
    let argv: Vec<&str> = command.iter().map(String::as_str).collect();
    let ran = crate::proc::run_sandboxed(
        Some(&sandbox),
        &argv,
        &cwd,
        &[],
        None,
        Duration::from_secs(timeout),
    );
    let reports = sandbox.take_watch_reports();
    drop(sandbox);
    let _ = std::fs::remove_dir_all(&scratch);
    let ran = ran?;
    print!("{}", ran.stdout);
    eprint!("{}", ran.stderr);
    let report = reports.into_iter().next().unwrap_or_default();
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(ran.status.unwrap_or(1))
}

fn print_report(report: &WatchReport) {
    if let Some(e) = &report.error {
        println!("watch: did not run: {e}");
        return;
    }
    if report.changes.is_empty() {
        println!("watch: changed nothing outside its own folders");
    }
    for change in &report.changes {
        println!("watch: {}", change.describe());
    }
    if report.more > 0 {
        println!("watch: … and {} more changes", report.more);
    }
    for place in &report.unwatched {
        println!("watch: not watched: {place}");
    }
}

/// A fresh folder of our own under the system's temporary folder.
fn tempfile_dir() -> anyhow::Result<PathBuf> {
    let base = std::env::temp_dir().join(format!(
        "team-testing-watch-{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0)
    ));
    std::fs::create_dir_all(&base).with_context(|| format!("creating {}", base.display()))?;
    Ok(base)
}

/// The hidden `__watch CONFIG REPORT -- CMD…` the watching sandbox runs its children through.
pub fn watch_wrapper(args: &[OsString]) -> anyhow::Result<i32> {
    let usage = || {
        anyhow::anyhow!(
            "usage: team-testing {} CONFIG REPORT -- COMMAND…",
            watch::WRAPPER_COMMAND
        )
    };
    let (config, report) = (
        args.first().ok_or_else(usage)?,
        args.get(1).ok_or_else(usage)?,
    );
    if args.get(2).is_none_or(|a| a != "--") {
        return Err(usage());
    }
    Ok(watch::run::wrapper_main(
        Path::new(config),
        Path::new(report),
        &args[3..],
    ))
}
