//! `team-testing log [SESSION]`: the message log, filtered, formatted or raw, optionally followed.

use std::io::Write;
use std::time::Duration;

use clap::Args;

use super::Location;
use crate::bus::reader::{BadLine, Follower};
use crate::bus::Record;
use crate::session;

#[derive(Args, Debug)]
pub struct LogArgs {
    /// Session id under the sessions root, or its path (default: the one active or paused).
    pub session: Option<String>,
    #[command(flatten)]
    pub location: Location,
    /// Only messages of this type (task_complete, progress, …).
    #[arg(long = "type", value_name = "T")]
    pub kind: Option<String>,
    /// Only messages from this role or instance.
    #[arg(long, value_name = "R")]
    pub from: Option<String>,
    /// Only messages to this role or instance.
    #[arg(long, value_name = "R")]
    pub to: Option<String>,
    /// Only messages about this task.
    #[arg(long, value_name = "ID")]
    pub task: Option<String>,
    /// Only the last N matching messages (before following).
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
    /// Keep printing new messages until the session ends (or Ctrl-C).
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// Print the raw JSONL records.
    #[arg(long)]
    pub json: bool,
}

impl LogArgs {
    /// Byte strings every matching line contains: each filter value in quotes. A line without
    /// them cannot match and is not decoded. A value a JSON writer might escape gets no needle.
    fn needles(&self) -> Vec<memchr::memmem::Finder<'static>> {
        [&self.kind, &self.from, &self.to, &self.task]
            .into_iter()
            .flatten()
            .filter(|v| {
                v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_-.:".contains(&b))
            })
            .map(|v| memchr::memmem::Finder::new(format!("\"{v}\"").as_bytes()).into_owned())
            .collect()
    }

    fn matches(&self, r: &Record) -> bool {
        self.kind.as_deref().is_none_or(|k| r.kind == k)
            && self.from.as_deref().is_none_or(|f| r.from == f)
            && self.to.as_deref().is_none_or(|t| r.to == t)
            && self.task.as_deref().is_none_or(|t| r.task_id() == Some(t))
    }
}

pub fn format_record(r: &Record) -> String {
    // ts is 2026-12-02T10:00:01.000+00:00: the time of day is chars 11..19.
    let time = r.ts.get(11..19).unwrap_or(&r.ts);
    format!(
        "{} [{time}] {} → {} ({}) {}",
        r.id, r.from, r.to, r.kind, r.summary
    )
}

pub fn log(args: LogArgs) -> anyhow::Result<i32> {
    let root = args.location.root();
    let session = session::resolve(&root, args.session.as_deref())?;
    let path = session.messages();
    let mut follower = Follower::new(&path, 0, 0, &[&session.root])?;
    // Streamed: a log of any size is read in chunks and printed as it goes (with --last N only
    // the last N matches are held).
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut last: std::collections::VecDeque<Record> = Default::default();
    let mut failed: Option<std::io::Error> = None;
    let needles = args.needles();
    let wanted = |line: &[u8]| needles.iter().all(|n| n.find(line).is_some());
    follower.poll_each_where(wanted, |line| match line {
        Ok(r) if args.matches(&r) => match args.last {
            Some(n) => {
                if n > 0 {
                    if last.len() == n {
                        last.pop_front();
                    }
                    last.push_back(r);
                }
            }
            None => {
                if failed.is_none() {
                    failed = print_record(&mut out, &r, args.json).err();
                }
            }
        },
        Ok(_) => {}
        Err(b) => report_bad(&path, &[b]),
    })?;
    for r in &last {
        print_record(&mut out, r, args.json)?;
    }
    if let Some(e) = failed {
        return Err(e.into());
    }
    out.flush()?;
    drop(out);
    if !args.follow {
        return Ok(0);
    }
    loop {
        // Over when no coordinator is alive to write more, or the session is paused or failed.
        // A completed one waits for its process: the completion action's message comes last.
        let ended = crate::session::SessionLock::holder(&session.lock_file()).is_none()
            || session.load_state().is_ok_and(|s| {
                !matches!(
                    s.status,
                    crate::session::SessionStatus::Active
                        | crate::session::SessionStatus::Completed
                )
            });
        let (records, bad) = follower.poll_new()?;
        report_bad(&path, &bad);
        let mut out = std::io::stdout().lock();
        for r in records.iter().filter(|r| args.matches(r)) {
            print_record(&mut out, r, args.json)?;
        }
        out.flush()?;
        if ended && records.is_empty() {
            return Ok(0);
        }
        // notify wakes us on every write; the timeout only guards against a missed event.
        follower.wait(Duration::from_secs(2));
    }
}

fn print_record(out: &mut impl Write, r: &Record, json: bool) -> std::io::Result<()> {
    if json {
        writeln!(out, "{}", serde_json::to_string(r).unwrap_or_default())
    } else {
        writeln!(out, "{}", format_record(r))
    }
}

fn report_bad(path: &std::path::Path, bad: &[BadLine]) {
    for b in bad {
        eprintln!(
            "team-testing: warning: {} line {}: not a message ({}); skipped",
            path.display(),
            b.line,
            b.problem
        );
    }
}
