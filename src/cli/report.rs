//! `team-testing report [SESSION] [--format md|json|csv|html|sarif|pr]`: prints a session's quality report.

use clap::Args;

use super::Location;
use crate::app::team::load_team;
use crate::error::Error;
use crate::session;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Session id under the sessions root, or its path (default: the one active or paused).
    pub session: Option<String>,
    #[command(flatten)]
    pub location: Location,
    /// md (the quality report), json (report.json), csv (one row per test), html (the
    /// self-contained page: charts, timeline, per-file coverage with sources), sarif (SARIF
    /// 2.1.0: code defects, broken contracts, side effects and behaviour changes, for code
    /// scanning) or pr (Markdown for a pull-request comment, also appended to
    /// $GITHUB_STEP_SUMMARY when it is set).
    #[arg(long, default_value = "md", value_parser = ["md", "json", "csv", "html", "sarif", "pr"])]
    pub format: String,
    /// After the report, exit 4 when the session has one of these results (see `run --help`).
    #[command(flatten)]
    pub fail_on: super::args::FailOnArgs,
}

pub fn report(args: ReportArgs) -> anyhow::Result<i32> {
    let root = args.location.root();
    let session = session::resolve(&root, args.session.as_deref())?;
    let state = session.load_state()?;
    let (config, _) = load_team(state.spec_file.as_deref(), state.roles_dir.as_deref())?;
    let text = crate::report::render(&session, &config, &args.format)
        .map_err(|e| Error::Session(format!("report of {}: {e}", session.id)))?;
    print!("{text}");
    if args.format == "pr" {
        append_step_summary(&text)?;
    }
    let failed_on = crate::app::exit_policy::check(&session, &args.fail_on.conditions)?;
    Ok(super::drive::fail_on_code(&failed_on).unwrap_or(0))
}

/// GitHub Actions shows what a step appends to `$GITHUB_STEP_SUMMARY` on the run's page.
fn append_step_summary(text: &str) -> anyhow::Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    use std::io::Write;
    let path = std::path::PathBuf::from(path);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| {
            Error::io(
                format!("opening $GITHUB_STEP_SUMMARY {}", path.display()),
                e,
            )
        })?;
    file.write_all(format!("{text}\n").as_bytes())
        .map_err(|e| Error::io(format!("appending to {}", path.display()), e))?;
    Ok(())
}
