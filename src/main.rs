use std::process::ExitCode;

fn main() -> ExitCode {
    // A panic is a bug in team-testing: report it and exit instead of leaving the actor system
    // hanging. Every beat persisted the session, so `resume` continues from the last one.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // The progress lines of the messages before the bug come before its report.
        team_testing::actors::progress::write_pending_lines();
        default_hook(info);
        eprintln!("team-testing: internal error (a bug); the session is kept as of its last beat, and the resume command continues it");
        std::process::exit(101);
    }));
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TEAM_TESTING_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match team_testing::cli::main() {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("team-testing: error: {e:#}");
            let code = e
                .downcast_ref::<team_testing::error::Error>()
                .map(|e| e.exit_code())
                .unwrap_or(team_testing::error::EXIT_BAD_INPUT);
            ExitCode::from(code as u8)
        }
    }
}
