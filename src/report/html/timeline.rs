//! The timeline (Gantt) of the session's tasks with their workers, from the message log: a task
//! starts when its worker says so (its `started` progress, else its dispatch) and ends at its
//! `task_complete`; tasks.json fills in what the log lacks. Overlapping bars are the parallel
//! windows.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chrono::{DateTime, FixedOffset};

use super::escape::esc;
use crate::bus::message::Record;
use crate::tasks::TaskGraph;

/// One task's bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub task_id: String,
    pub worker: String,
    /// The role, for the bar's colour.
    pub role: String,
    /// Seconds since the first record.
    pub start: f64,
    pub end: f64,
    /// completed, failed, …; `running` when the log has no end for it (the analyst's own task
    /// while it writes this report).
    pub status: String,
}

fn ts(s: &str) -> Option<DateTime<FixedOffset>> {
    DateTime::parse_from_rfc3339(s).ok()
}

struct Open {
    worker: Option<String>,
    dispatched: Option<DateTime<FixedOffset>>,
    started: Option<DateTime<FixedOffset>>,
    ended: Option<(DateTime<FixedOffset>, String)>,
    order: usize,
}

/// The spans of every task the log (or tasks.json) shows with a start, in order of start.
pub fn spans(records: &[Record], graph: &TaskGraph) -> Vec<Span> {
    let mut open: BTreeMap<String, Open> = BTreeMap::new();
    let mut first: Option<DateTime<FixedOffset>> = None;
    let mut last: Option<DateTime<FixedOffset>> = None;
    for r in records {
        let Some(t) = ts(&r.ts) else { continue };
        first = Some(first.map_or(t, |f| f.min(t)));
        last = Some(last.map_or(t, |l| l.max(t)));
        let Some(id) = r.task_id() else { continue };
        let n = open.len();
        let o = open.entry(id.to_string()).or_insert(Open {
            worker: None,
            dispatched: None,
            started: None,
            ended: None,
            order: n,
        });
        match r.kind.as_str() {
            "task_unblocked" => {
                o.dispatched.get_or_insert(t);
                if let Some(w) = r.data.get("worker").and_then(|w| w.as_str()) {
                    o.worker = Some(w.to_string());
                }
            }
            "progress" => {
                if r.data.get("phase").and_then(|p| p.as_str()) == Some("started") {
                    o.started.get_or_insert(t);
                }
                o.worker.get_or_insert_with(|| r.from.clone());
            }
            "task_complete" => {
                let status = r.data["outcome"]["status"]
                    .as_str()
                    .unwrap_or("completed")
                    .to_string();
                o.ended = Some((t, status));
            }
            _ => {}
        }
    }
    // What the log lacks (an older log, a lost line): tasks.json's own times.
    for task in &graph.tasks {
        let started = task.started_at.as_deref().and_then(ts);
        let ended = task.completed_at.as_deref().and_then(ts);
        if started.is_none() {
            continue;
        }
        let n = open.len();
        let o = open.entry(task.id.clone()).or_insert(Open {
            worker: None,
            dispatched: None,
            started: None,
            ended: None,
            order: n,
        });
        if o.started.is_none() && o.dispatched.is_none() {
            o.started = started;
        }
        if o.ended.is_none() {
            if let Some(e) = ended {
                let status = serde_json::to_value(task.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| "completed".into());
                o.ended = Some((e, status));
            }
        }
        if o.worker.is_none() {
            o.worker = task.worker.clone().or_else(|| Some(task.owner.clone()));
        }
        for t in [started, ended].into_iter().flatten() {
            first = Some(first.map_or(t, |f| f.min(t)));
            last = Some(last.map_or(t, |l| l.max(t)));
        }
    }
    let (Some(first), Some(last)) = (first, last) else {
        return Vec::new();
    };
    let secs = |t: DateTime<FixedOffset>| (t - first).num_milliseconds() as f64 / 1000.0;
    let mut out: Vec<(usize, Span)> = open
        .into_iter()
        .filter_map(|(id, o)| {
            let start = o.started.or(o.dispatched)?;
            let (end, status) = o
                .ended
                .unwrap_or_else(|| (last.max(start), "running".to_string()));
            let worker = o.worker.unwrap_or_else(|| "?".into());
            let role = graph
                .get(&id)
                .map(|t| t.owner.clone())
                .unwrap_or_else(|| role_of(&worker));
            Some((
                o.order,
                Span {
                    task_id: id,
                    worker,
                    role,
                    start: secs(start),
                    end: secs(end.max(start)),
                    status,
                },
            ))
        })
        .collect();
    out.sort_by(|a, b| a.1.start.total_cmp(&b.1.start).then(a.0.cmp(&b.0)));
    out.into_iter().map(|(_, s)| s).collect()
}

/// `generator-2` → `generator`.
fn role_of(worker: &str) -> String {
    match worker.rsplit_once('-') {
        Some((role, n)) if n.chars().all(|c| c.is_ascii_digit()) => role.to_string(),
        _ => worker.to_string(),
    }
}

/// The colour class of a role: the four built-in ones fixed, any other the fifth.
fn role_class(role: &str) -> usize {
    match role {
        "strategist" => 0,
        "generator" => 1,
        "executor" => 2,
        "analyst" => 3,
        _ => 4,
    }
}

/// A round tick step for a span of `total` seconds (about six ticks).
fn step(total: f64) -> f64 {
    let raw = (total / 6.0).max(0.001);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

fn seconds(v: f64) -> String {
    if v >= 120.0 {
        format!("{:.0}m{:02.0}s", (v / 60.0).floor(), v % 60.0)
    } else if v >= 10.0 || v == 0.0 {
        format!("{v:.0}s")
    } else {
        format!("{v:.1}s")
    }
}

/// The Gantt chart as `<svg id="timeline">`, with a legend of the roles.
pub fn svg(spans: &[Span]) -> String {
    let row = 20.0;
    let label_w = 260.0;
    let plot_w = 680.0;
    let w = label_w + plot_w + 20.0;
    let h = row * spans.len() as f64 + 34.0;
    let total = spans.iter().map(|s| s.end).fold(0.0, f64::max).max(0.001);
    let x = |v: f64| label_w + v / total * plot_w;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg id=\"timeline\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"Timeline of the tasks\"><title>Timeline of the tasks</title>"
    );
    let axis_y = row * spans.len() as f64 + 4.0;
    let step = step(total);
    let mut t = 0.0;
    while t <= total + 1e-9 {
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"0\" y2=\"{axis_y:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            x(t),
            x(t),
            x(t),
            axis_y + 16.0,
            seconds(t)
        );
        t += step;
    }
    for (i, sp) in spans.iter().enumerate() {
        let top = row * i as f64;
        let width = (x(sp.end) - x(sp.start)).max(2.0);
        let running = if sp.status == "running" {
            " running"
        } else {
            ""
        };
        let _ = write!(
            s,
            "<text x=\"0\" y=\"{:.1}\">{} <tspan class=\"muted\">({})</tspan></text><rect class=\"bar s{}{running}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{width:.1}\" height=\"{:.1}\" rx=\"2\"><title>{} on {}: {} → {}, {} ({})</title></rect>",
            top + 14.0,
            esc(&sp.task_id),
            esc(&sp.worker),
            role_class(&sp.role),
            x(sp.start),
            top + 3.0,
            row - 6.0,
            esc(&sp.task_id),
            esc(&sp.worker),
            seconds(sp.start),
            seconds(sp.end),
            seconds(sp.end - sp.start),
            esc(&sp.status)
        );
    }
    s.push_str("</svg><div class=\"legend\">");
    let mut roles: Vec<&str> = spans.iter().map(|s| s.role.as_str()).collect();
    roles.sort_by_key(|r| (role_class(r), r.to_string()));
    roles.dedup();
    for r in roles {
        let _ = write!(
            s,
            "<span><i class=\"k{}\"></i>{}</span>",
            role_class(r),
            esc(r)
        );
    }
    s.push_str("</div>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(ts: &str, from: &str, kind: &str, data: serde_json::Value) -> Record {
        Record {
            id: "MSG-001".into(),
            ts: ts.into(),
            from: from.into(),
            to: "coordinator".into(),
            kind: kind.into(),
            summary: String::new(),
            data,
        }
    }

    #[test]
    fn a_task_spans_from_its_start_to_its_completion_and_an_open_one_runs_to_the_end() {
        let records = vec![
            rec(
                "2026-01-01T00:00:00+00:00",
                "coordinator",
                "task_unblocked",
                json!({"task_id": "A", "worker": "generator-1"}),
            ),
            rec(
                "2026-01-01T00:00:01+00:00",
                "generator-1",
                "progress",
                json!({"task_id": "A", "phase": "started"}),
            ),
            rec(
                "2026-01-01T00:00:02+00:00",
                "analyst",
                "progress",
                json!({"task_id": "B", "phase": "started"}),
            ),
            rec(
                "2026-01-01T00:00:04+00:00",
                "generator-1",
                "task_complete",
                json!({"task_id": "A", "outcome": {"status": "completed"}}),
            ),
        ];
        let spans = spans(&records, &TaskGraph::new(Vec::new()));
        assert_eq!(spans.len(), 2);
        assert_eq!((spans[0].start, spans[0].end), (1.0, 4.0));
        assert_eq!(spans[0].role, "generator");
        assert_eq!(
            (spans[1].start, spans[1].end, spans[1].status.as_str()),
            (2.0, 4.0, "running")
        );
        let svg = svg(&spans);
        assert!(svg.starts_with("<svg id=\"timeline\""), "{svg}");
    }
}
