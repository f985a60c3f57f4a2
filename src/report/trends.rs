//! The trends section: this session's figures against the latest earlier session of the same
//! repository under the same sessions root.

use std::collections::BTreeMap;

use serde_json::Value;

use super::model::{LayerReport, PreviousSession, Trend, Trends};
use super::numbers::round_to;
use crate::pipeline::config::TeamConfig;
use crate::session::{SessionDir, SessionState};
use crate::util::{parse_ts, read_json};

/// Trend thresholds: a change within these is "stable".
pub const TREND_COVERAGE_POINTS: f64 = 2.0;
pub const TREND_SCORE_POINTS: f64 = 3.0;

/// This session's figures the trends compare.
pub(super) struct Current<'a> {
    pub layers: &'a [LayerReport],
    pub quality_score: f64,
    /// Failing test records over every defect pattern.
    pub defect_occurrences: usize,
}

/// Trends with their thresholds and nothing to compare (no session.json, or an earlier
/// session's own figures).
pub(super) fn no_trends() -> Trends {
    Trends {
        thresholds: [
            ("coverage_points".to_string(), TREND_COVERAGE_POINTS),
            ("score_points".to_string(), TREND_SCORE_POINTS),
        ]
        .into_iter()
        .collect(),
        ..Trends::default()
    }
}

/// Compares `cur` with the earlier sessions of the same repository under the same sessions
/// root (archived ones too), listed oldest first; the latest of them is the comparison.
pub(super) fn trends(
    session: &SessionDir,
    state: &SessionState,
    config: &TeamConfig,
    cur: &Current,
) -> Trends {
    let mut t = no_trends();
    let root = session.sessions_root();
    let earlier = |other: &str| match (parse_ts(other), parse_ts(&state.created_at)) {
        (Some(a), Some(b)) => a < b,
        _ => other < state.created_at.as_str(),
    };
    let mut prev: Vec<PreviousSession> = Vec::new();
    // Archived sessions count: they are earlier sessions like any other.
    for other in crate::session::list_all(&root) {
        if other.root == session.root {
            continue;
        }
        let Ok(os) = other.load_state() else { continue };
        if os.repo != state.repo || !earlier(&os.created_at) {
            continue;
        }
        prev.push(previous_of(&other, &os, config));
    }
    prev.sort_by(|a, b| {
        a.created_at
            .cmp(&b.created_at)
            .then_with(|| a.session_id.cmp(&b.session_id))
    });
    if let Some(last) = prev.last() {
        for l in cur.layers {
            if let (Some(Some(p)), Some(c)) = (last.layers.get(&l.layer), l.final_coverage) {
                t.coverage
                    .push(trend(&l.layer, *p, c, TREND_COVERAGE_POINTS, true));
            }
        }
        if let Some(p) = last.quality_score {
            t.score = Some(trend(
                "score",
                p,
                cur.quality_score,
                TREND_SCORE_POINTS,
                true,
            ));
        }
        t.defect_patterns = Some(trend(
            "defect_patterns",
            last.defect_patterns as f64,
            cur.defect_occurrences as f64,
            0.0,
            false,
        ));
    }
    t.previous = prev;
    t
}

pub(super) fn direction(delta: f64, threshold: f64, higher_is_better: bool) -> &'static str {
    let d = if higher_is_better { delta } else { -delta };
    if d > threshold {
        "improving"
    } else if d < -threshold {
        "declining"
    } else {
        "stable"
    }
}

fn trend(subject: &str, previous: f64, current: f64, threshold: f64, up: bool) -> Trend {
    let delta = round_to(current - previous, 2);
    Trend {
        subject: subject.into(),
        previous,
        current,
        delta,
        direction: direction(delta, threshold, up).into(),
    }
}

/// A previous session's figures: its own analysis/report.json when present, else computed now.
fn previous_of(dir: &SessionDir, state: &SessionState, config: &TeamConfig) -> PreviousSession {
    let saved = read_json::<Value>(&dir.root.join("analysis/report.json")).ok();
    let fresh = super::build_without_trends(dir, config);
    let layers: BTreeMap<String, Option<f64>> = fresh
        .layers
        .iter()
        .map(|l| (l.layer.clone(), l.final_coverage))
        .collect();
    PreviousSession {
        session_id: dir.id.clone(),
        created_at: state.created_at.clone(),
        quality_score: if fresh.scored {
            saved
                .as_ref()
                .and_then(|v| v["quality_score"].as_f64())
                .or((!fresh.layers.is_empty()).then_some(fresh.quality_score))
        } else {
            None
        },
        layers,
        defect_patterns: fresh.defect_patterns.iter().map(|d| d.count).sum(),
    }
}
