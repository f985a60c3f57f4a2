//! `team-testing sandbox [--allow-network] [--json]`: what the sandbox protects on this machine,
//! and what it cannot, before any run.

use clap::Args;

use super::args::SandboxArgs;

#[derive(Args, Debug)]
pub struct SandboxCheckArgs {
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// Print the protections and the mechanisms found as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn sandbox(args: SandboxCheckArgs) -> anyhow::Result<i32> {
    let settings = args.sandbox.settings()?;
    let protections = settings.protections();
    if args.json {
        let out = serde_json::json!({
            "protections": protections,
            "capabilities": crate::sandbox::capabilities(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(0);
    }
    println!("filesystem:  {}", protections.filesystem);
    println!("network:     {}", protections.network);
    println!("limits:      {}", protections.limits);
    println!("environment: {}", protections.environment);
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
