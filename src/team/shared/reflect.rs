//! The reflective strategy (`--strategy reflective`): after each run of a layer the orchestrator
//! (`team::merge`) writes a reflection into `reflection-log.md` (what changed since the layer's last run, what
//! the pass rate did, which hypothesis the next iteration tests) and the plan it leads to into
//! `results/reflection-<layer>.json`, which the generator's next round follows.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::artifacts::{RecordedStatus, RunRecord};
use crate::team::error::RoleError;
use crate::testing::classify::Classification;
use crate::util::{atomic_write_json, read_json};

/// Relative to the session.
pub const LOG: &str = "reflection-log.md";

/// What the next iteration does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Next {
    /// Targeted additions at the missing lines.
    Conservative,
    /// Drop the failing tests as a batch and search wider.
    Aggressive,
    /// Back to the best earlier round.
    Surgical,
    /// Nothing more a revision can do: the gate decides.
    Stop,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reflection {
    pub iteration: usize,
    pub layer: String,
    pub task_id: String,
    pub changed: String,
    pub pass_rate: String,
    pub hypothesis: String,
    pub next: Next,
}

fn plan_file(session: &Path, layer: &str) -> std::path::PathBuf {
    session
        .join("results")
        .join(format!("reflection-{layer}.json"))
}

/// The plan the last reflection on `layer` left for the next round, if any.
pub(crate) fn next_for(session: &Path, layer: &str) -> Option<Next> {
    read_json::<Reflection>(&plan_file(session, layer))
        .ok()
        .map(|r| r.next)
}

fn failing(run: &RunRecord) -> BTreeSet<String> {
    run.tests()
        .iter()
        .filter(|t| matches!(t.status, RecordedStatus::Failed | RecordedStatus::Error))
        .map(|t| t.id.clone())
        .collect()
}

/// Reflects on the layer's latest run (`runs`: the layer's runs, oldest first, the latest last)
/// against the gate's targets, appends the reflection to the log, and leaves its plan.
pub(crate) fn reflect(
    session: &Path,
    layer: &str,
    task_id: &str,
    runs: &[&RunRecord],
    coverage_target: Option<f64>,
) -> Result<Reflection, RoleError> {
    let Some(now) = runs.last() else {
        return Err(RoleError::Io {
            action: "reflect on",
            path: session.join("results"),
            cause: std::io::Error::other("the layer has no run"),
        });
    };
    let previous = runs.len().checked_sub(2).map(|i| runs[i]);
    let rate = |r: &RunRecord| r.pass_rate.unwrap_or(0.0) * 100.0;
    let failing_now = failing(now);
    let defects: BTreeSet<String> = now
        .tests()
        .iter()
        .filter(|t| t.classification == Some(Classification::CodeDefect))
        .map(|t| t.id.clone())
        .collect();
    let others: Vec<&String> = failing_now
        .iter()
        .filter(|t| !defects.contains(*t))
        .collect();
    let coverage = now.coverage();
    let short_of = coverage
        .zip(coverage_target)
        .is_some_and(|(c, target)| c < target);
    let changed = match previous {
        None => format!(
            "the layer's first run: {} tests, {} failing",
            now.total,
            failing_now.len()
        ),
        Some(p) => {
            let before = failing(p);
            let fixed = before.difference(&failing_now).count();
            let new = failing_now.difference(&before).count();
            format!(
                "{} tests (was {}); {fixed} failure(s) gone, {new} new",
                now.total, p.total
            )
        }
    };
    let trend: Vec<String> = runs.iter().map(|r| format!("{:.1}%", rate(r))).collect();
    let best = runs.iter().map(|r| rate(r)).fold(0.0, f64::max);
    let (hypothesis, next) = if !defects.is_empty() && others.is_empty() {
        (
            format!(
                "every remaining failure ({}) is a code defect: the tests are right, the code is wrong, and no revision of the tests changes that",
                defects.len()
            ),
            Next::Stop,
        )
    } else if best - rate(now) > 10.0 {
        (
            "the last round broke more than it fixed: going back to the best round's tests tells whether its additions were the cause".into(),
            Next::Surgical,
        )
    } else if previous.is_some_and(|p| !others.is_empty() && failing(p).is_superset(&failing_now))
        && !others.is_empty()
    {
        (
            format!(
                "{} failure(s) survived a revision: they fail for a reason the targeted fixes do not reach, so they go as a batch and the search widens",
                others.len()
            ),
            Next::Aggressive,
        )
    } else if !others.is_empty() {
        (
            format!(
                "{} failing test(s) are test defects: targeted repairs of those tests should lift the pass rate",
                others.len()
            ),
            Next::Conservative,
        )
    } else if short_of {
        (
            format!(
                "the tests pass but coverage {:.1}% is short of {:.0}%: the missing lines need inputs the search has not tried",
                coverage.unwrap_or(0.0),
                coverage_target.unwrap_or(0.0)
            ),
            Next::Conservative,
        )
    } else {
        (
            "the gate's targets are met: nothing left for a revision".into(),
            Next::Stop,
        )
    };
    let reflection = Reflection {
        iteration: runs.len() - 1,
        layer: layer.to_string(),
        task_id: task_id.to_string(),
        changed,
        pass_rate: trend.join(" -> "),
        hypothesis,
        next,
    };
    let log = session.join(LOG);
    let mut text = std::fs::read_to_string(&log).unwrap_or_else(|_| {
        "# Reflection Log\n\nOne entry per iteration of a layer (`--strategy reflective`).\n".into()
    });
    // A run merged again (a resume after a kill) leaves one entry, not two.
    let heading = format!(
        "\n## Iteration {} of {layer} ({task_id})\n",
        reflection.iteration
    );
    if text.contains(&heading) {
        atomic_write_json(&plan_file(session, layer), &reflection)?;
        return Ok(reflection);
    }
    text.push_str(&format!(
        "{heading}\n- What changed: {}\n- Pass rate: {}\n- Hypothesis: {}\n- Next: {}\n",
        reflection.changed,
        reflection.pass_rate,
        reflection.hypothesis,
        match next {
            Next::Stop => "stop revising (the gate decides)".to_string(),
            other => format!("a {} round", format!("{other:?}").to_ascii_lowercase()),
        }
    ));
    crate::util::atomic_write(&log, text.as_bytes())?;
    atomic_write_json(&plan_file(session, layer), &reflection)?;
    Ok(reflection)
}
