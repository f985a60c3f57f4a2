//! What the plan gate, the strategy and `status` show of a scenario plan: its route and why,
//! the scenarios per layer, the priority distribution, sample rows.

use std::collections::BTreeMap;
use std::path::Path;

use super::plan::{self, Priority, Scenario};

/// The plan gate's lines for a session (its route from task-analysis.json, its rows from
/// scenarios.csv as they are now); empty when the session has no plan.
pub fn session_gate_lines(session: &Path) -> Vec<String> {
    let Ok(rows) = plan::read_csv(&session.join(plan::FILE)) else {
        return Vec::new();
    };
    let analysis: serde_json::Value =
        crate::util::read_json(&session.join("task-analysis.json")).unwrap_or_default();
    let p = &analysis["scenario_plan"];
    gate_lines(
        p["route"].as_str().unwrap_or("-"),
        p["why"].as_str().unwrap_or("-"),
        &rows,
    )
}

/// What the plan gate shows: scenarios per layer, the priority distribution, sample rows.
pub fn gate_lines(route: &str, why: &str, rows: &[Scenario]) -> Vec<String> {
    let mut per_layer: BTreeMap<&str, usize> = BTreeMap::new();
    let mut per_priority: BTreeMap<Priority, usize> = BTreeMap::new();
    for r in rows {
        *per_layer.entry(r.layer.as_str()).or_default() += 1;
        *per_priority.entry(r.priority).or_default() += 1;
    }
    let why: String = why.chars().filter(|c| !c.is_control()).collect();
    let mut out = vec![
        format!("route: {route} ({why})"),
        format!(
            "scenarios: {} ({})",
            rows.len(),
            per_layer
                .iter()
                .map(|(l, n)| format!("{l} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!(
            "priorities: {}",
            per_priority
                .iter()
                .map(|(p, n)| format!("{} {n}", p.as_str()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ];
    // Requirement text reaches a terminal here: no control characters (escape sequences).
    let plain = |t: &str| -> String { t.chars().filter(|c| !c.is_control()).collect() };
    for r in rows.iter().take(5) {
        out.push(format!(
            "  {} [{} {}] {} -> {} ({})",
            r.id,
            r.layer,
            r.priority.as_str(),
            plain(&r.name),
            if r.target_file.is_empty() {
                "target to find".to_string()
            } else {
                plain(&r.target_file)
            },
            plain(if r.req_ref.is_empty() {
                &r.source
            } else {
                &r.req_ref
            })
        ));
    }
    if rows.len() > 5 {
        out.push(format!("  … and {} more in scenarios.csv", rows.len() - 5));
    }
    out
}
