//! Which route feeds the plan, and why, in the seed's order: an active session is resumed; a
//! rerun with failures re-runs them; requirement files give the spec route; an earlier session
//! with coverage gaps the gap route; otherwise the code is explored.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::req::Requirement;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    Resume,
    Rerun,
    Spec,
    Gap,
    Code,
}

impl Route {
    pub fn as_str(self) -> &'static str {
        match self {
            Route::Resume => "resume",
            Route::Rerun => "rerun",
            Route::Spec => "spec",
            Route::Gap => "gap",
            Route::Code => "code",
        }
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the route is decided from.
#[derive(Debug, Clone, Copy)]
pub struct RouteInput<'a> {
    /// The id of a session of this repository that is still running (or paused mid-run).
    pub active_session: Option<&'a str>,
    pub rerun_requested: bool,
    /// Failed or blocked scenarios of the last run.
    pub previous_failures: usize,
    pub requirements: &'a [Requirement],
    /// The latest earlier session and how many coverage gaps it left.
    pub previous_gaps: Option<(&'a str, usize)>,
}

/// Files named in a reason before "and N more".
const NAMED_FILES: usize = 3;

/// The route and one sentence saying why, naming the session or files it rests on.
pub fn detect(input: &RouteInput) -> (Route, String) {
    if let Some(session) = input.active_session {
        return (
            Route::Resume,
            format!("session {session} is still active, so it is resumed"),
        );
    }
    // A rerun asked for with nothing to rerun says so in whichever reason follows.
    let note = if input.rerun_requested && input.previous_failures == 0 {
        " (a rerun was asked for, but the last run left no failed or blocked scenario)"
    } else {
        ""
    };
    if input.rerun_requested && input.previous_failures > 0 {
        return (
            Route::Rerun,
            format!(
                "a rerun was asked for and the last run left {} failed or blocked scenario(s)",
                input.previous_failures
            ),
        );
    }
    if !input.requirements.is_empty() {
        let criteria: usize = input.requirements.iter().map(|r| r.criteria.len()).sum();
        let mut files: Vec<String> = input
            .requirements
            .iter()
            .take(NAMED_FILES)
            .map(|r| r.file.display().to_string())
            .collect();
        if input.requirements.len() > NAMED_FILES {
            files.push(format!(
                "and {} more",
                input.requirements.len() - NAMED_FILES
            ));
        }
        return (
            Route::Spec,
            format!(
                "{} requirement file(s) with {criteria} acceptance criteria: {}{note}",
                input.requirements.len(),
                files.join(", ")
            ),
        );
    }
    match input.previous_gaps {
        Some((session, gaps)) if gaps > 0 => (
            Route::Gap,
            format!("no REQ-*.md file, and session {session} left {gaps} coverage gap(s){note}"),
        ),
        Some((session, _)) => (
            Route::Code,
            format!(
                "no REQ-*.md file, and session {session} left no coverage gap: the code's module boundaries are explored{note}"
            ),
        ),
        None => (
            Route::Code,
            format!(
                "no REQ-*.md file and no earlier session: the code's module boundaries are explored{note}"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::req::parse;
    use std::path::Path;

    fn input<'a>(reqs: &'a [Requirement]) -> RouteInput<'a> {
        RouteInput {
            active_session: Some("TT-1"),
            rerun_requested: true,
            previous_failures: 2,
            requirements: reqs,
            previous_gaps: Some(("TT-0", 4)),
        }
    }

    #[test]
    fn routes_follow_the_seed_order() {
        let reqs = vec![
            parse(Path::new("REQ-001.md"), "- AC-1: a\n- AC-2: b\n").unwrap(),
            parse(Path::new("docs/REQ-002.md"), "- AC-1: c\n").unwrap(),
        ];
        let mut i = input(&reqs);
        assert_eq!(
            detect(&i),
            (
                Route::Resume,
                "session TT-1 is still active, so it is resumed".into()
            )
        );
        i.active_session = None;
        let (route, why) = detect(&i);
        assert_eq!(route, Route::Rerun);
        assert!(why.contains("2 failed or blocked"), "{why}");

        i.previous_failures = 0;
        assert_eq!(
            detect(&i),
            (
                Route::Spec,
                "2 requirement file(s) with 3 acceptance criteria: REQ-001.md, docs/REQ-002.md \
                 (a rerun was asked for, but the last run left no failed or blocked scenario)"
                    .into()
            )
        );
        i.rerun_requested = false;
        i.requirements = &[];
        assert_eq!(
            detect(&i),
            (
                Route::Gap,
                "no REQ-*.md file, and session TT-0 left 4 coverage gap(s)".into()
            )
        );
        i.previous_gaps = Some(("TT-0", 0));
        let (route, why) = detect(&i);
        assert_eq!(route, Route::Code);
        assert!(why.contains("TT-0 left no coverage gap"), "{why}");
        i.previous_gaps = None;
        assert_eq!(detect(&i).0, Route::Code);
        assert_eq!(Route::Rerun.as_str(), "rerun");
    }

    #[test]
    fn many_requirement_files_are_summarised() {
        let reqs: Vec<Requirement> = (1..=5)
            .map(|n| parse(Path::new(&format!("REQ-00{n}.md")), "- AC-1: a\n").unwrap())
            .collect();
        let mut i = input(&reqs);
        i.active_session = None;
        i.rerun_requested = false;
        let (route, why) = detect(&i);
        assert_eq!(route, Route::Spec);
        assert!(
            why.ends_with("REQ-001.md, REQ-002.md, REQ-003.md, and 2 more"),
            "{why}"
        );
    }
}
