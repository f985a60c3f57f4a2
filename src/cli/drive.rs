//! Driving a session from the terminal: the app layer runs it; this answers for the person at
//! the terminal (the completion menu) and prints what they read.

use std::io::{BufRead, Write};

use super::args::{Completion, DriveArgs};
use super::summary::print_summary;
use crate::actors::coordinator::{Begin, RunEnd};
use crate::app::complete::{Choice, Done};
use crate::app::drive::DriveUi;
use crate::app::open::Opened;
use crate::app::summary::summary_json;
use crate::app::team::SandboxNote;
use crate::error::Error;
use crate::session::SessionDir;

/// The terminal side of a driven session, per the command's options.
struct Terminal<'a> {
    args: &'a DriveArgs,
    /// The session was archived before this command reopened it: with nobody to ask, it goes
    /// back to archived (no command un-archives a session as a side effect).
    was_archived: bool,
}

impl DriveUi for Terminal<'_> {
    fn sandbox(&mut self, note: &SandboxNote) {
        if !self.args.json {
            eprintln!("team-testing: {}", note.description);
        }
        for warning in &note.missing {
            eprintln!("team-testing: warning: {warning}");
        }
    }

    fn summary(&mut self, session: &SessionDir, end: &RunEnd) -> crate::error::Result<()> {
        if self.args.json {
            return Ok(());
        }
        print_summary(session, end)
    }

    fn completion(&mut self, _session: &SessionDir) -> Choice {
        match self.args.completion() {
            Completion::Archive => return Choice::Archive,
            Completion::Keep => return Choice::Keep,
            Completion::Interactive if !self.args.can_ask() && self.was_archived => {
                eprintln!(
                    "team-testing: no terminal to ask on: the session was archived, and is \
                     archived again; pass --completion keep to keep it paused"
                );
                return Choice::Archive;
            }
            Completion::Interactive if !self.args.can_ask() => {
                eprintln!(
                    "team-testing: no terminal to ask on: the session is kept (paused); \
                     pass -y or --completion archive to archive it"
                );
                return Choice::Keep;
            }
            Completion::Interactive => {}
        }
        let stdin = std::io::stdin();
        let picked = ask(
            "Pipeline complete. What next?",
            &[
                (
                    "a",
                    "Archive & Clean: mark archived, remove rebuildable copies",
                ),
                ("k", "Keep Active: leave it paused, resumable"),
                (
                    "d",
                    "Deepen Coverage: add the next layer, or raise a target",
                ),
            ],
            1,
            &mut stdin.lock(),
            &mut std::io::stderr(),
        );
        match picked {
            Some(0) => Choice::Archive,
            Some(2) => Choice::Deepen,
            _ => Choice::Keep,
        }
    }

    fn done(&mut self, session: &SessionDir, done: &Done) {
        match done {
            Done::Deepened(summary) => eprintln!("team-testing: {summary}"),
            _ if self.args.json => {}
            Done::Archived { freed } => println!(
                "Archived in place: {} (workspace copies removed, {} freed)",
                session.root.display(),
                human_bytes(*freed)
            ),
            // The summary above said what can be run next.
            Done::Kept => println!("Kept (paused)."),
        }
    }

    fn cannot_deepen(&mut self, error: &Error) {
        eprintln!("team-testing: cannot deepen: {error}");
    }
}

/// Runs the opened session to its end through the app layer; with `--json`, prints the result
/// as one object. Returns the exit code.
pub fn drive(opened: Opened, begin: Begin, args: &DriveArgs) -> anyhow::Result<i32> {
    for stale in &opened.swept {
        eprintln!(
            "team-testing: removed {}, left by an interrupted write",
            stale.display()
        );
    }
    let was_archived = opened.state.status == crate::session::SessionStatus::Archived;
    let mut ui = Terminal { args, was_archived };
    let cluster = args.cluster.settings()?;
    let driven = crate::app::drive::drive(opened, begin, args.json, cluster.as_ref(), &mut ui)?;
    // Only a run that completed is judged: a failed or paused one keeps its own code.
    let checked = if driven.end.exit_code == 0 {
        crate::app::exit_policy::check(&driven.session, &args.fail_on.conditions)
    } else {
        Ok(Vec::new())
    };
    // The run's JSON is printed either way; a policy that could not be read fails after it.
    let failed_on = checked.as_deref().unwrap_or_default().to_vec();
    if args.json {
        let mut out = summary_json(&driven.session, &driven.end)?;
        if let Some(done) = &driven.done {
            out["completion"] = serde_json::json!(done.label());
            out["session_dir"] = serde_json::json!(driven.session.root);
        }
        if !args.fail_on.conditions.is_empty() {
            out["failed_on"] = serde_json::json!(failed_on);
        }
        println!("{out}");
    }
    checked?;
    Ok(fail_on_code(&failed_on).unwrap_or(driven.end.exit_code))
}

/// Names each result that met `--fail-on` on stderr; the exit code when there is one.
pub fn fail_on_code(failed_on: &[crate::app::exit_policy::Failure]) -> Option<i32> {
    for f in failed_on {
        eprintln!("team-testing: --fail-on {}: {}", f.condition, f.reason);
    }
    (!failed_on.is_empty()).then(|| {
        eprintln!(
            "team-testing: exit {}: {} result(s) met --fail-on",
            crate::error::EXIT_FAIL_ON,
            failed_on.len()
        );
        crate::error::EXIT_FAIL_ON
    })
}

/// A session run again from where it is (deepen, revise, rerun, resume).
pub fn resume_begin() -> Begin {
    Begin {
        resume: true,
        selected: None,
    }
}

/// 1536 -> "1.5 KiB".
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// Asks one question with lettered options on `out`; an answer is the letter, the number or the
/// label's first word, and Enter alone takes `default`. None when the input ends.
pub fn ask(
    question: &str,
    options: &[(&str, &str)],
    default: usize,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Option<usize> {
    loop {
        let _ = writeln!(out, "{question}");
        for (i, (key, label)) in options.iter().enumerate() {
            let _ = writeln!(out, "  [{key}] {}. {label}", i + 1);
        }
        let keys: Vec<&str> = options.iter().map(|(k, _)| *k).collect();
        let _ = write!(out, "Choose {} [{}]: ", keys.join("/"), options[default].0);
        let _ = out.flush();
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        let answer = line.trim().to_ascii_lowercase();
        if answer.is_empty() {
            return Some(default);
        }
        let found = options.iter().position(|(key, label)| {
            answer == *key
                || label
                    .split([' ', ':'])
                    .next()
                    .is_some_and(|w| w.eq_ignore_ascii_case(&answer))
        });
        let by_number = answer
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=options.len()).contains(n))
            .map(|n| n - 1);
        if let Some(i) = by_number.or(found) {
            return Some(i);
        }
        let _ = writeln!(out, "'{}' is not one of the choices", line.trim());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ask_takes_a_letter_a_number_or_a_word_and_reasks_on_nonsense() {
        let options = [
            ("a", "Archive & Clean"),
            ("k", "Keep Active"),
            ("d", "Deepen"),
        ];
        let mut out = Vec::new();
        let mut pick = |text: &str| ask("Next?", &options, 1, &mut text.as_bytes(), &mut out);
        assert_eq!(pick("k\n"), Some(1));
        assert_eq!(pick("3\n"), Some(2));
        assert_eq!(pick("archive\n"), Some(0));
        assert_eq!(pick("zzz\nd\n"), Some(2));
        assert_eq!(pick(""), None);
        // Enter alone takes the default, whatever spaces came with it.
        assert_eq!(pick("\n"), Some(1));
        assert_eq!(pick("  \n"), Some(1));
        assert!(String::from_utf8_lossy(&out).contains("'zzz' is not one of the choices"));
    }
}
