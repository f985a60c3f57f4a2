//! The summary a person reads at the end of a run.

use crate::actors::coordinator::RunEnd;
use crate::app::summary::{deliverables, final_layer_results, first_tests_s, quality_score};
use crate::error::Result;
use crate::session::{SessionDir, SessionStatus};

/// The summary a person reads: tasks, each layer's result and GC rounds, the quality score, the
/// deliverables, and what went wrong.
pub fn print_summary(session: &SessionDir, end: &RunEnd) -> Result<()> {
    let graph = session.load_tasks()?;
    let state = session.load_state()?;
    let layers = final_layer_results(&graph, &state);
    let na = graph.count(crate::tasks::TaskStatus::NotApplicable);
    println!(
        "Pipeline {} ({}): {}/{} tasks completed{}",
        end.status.as_str(),
        state.pipeline_mode,
        graph.count(crate::tasks::TaskStatus::Completed),
        graph.len(),
        if na > 0 {
            format!(", {na} not applicable")
        } else {
            String::new()
        }
    );
    if let Ok(scope) = crate::session::scope::load_scope(session) {
        if let (true, Some(why)) = (scope.whole_project, &scope.whole_project_reason) {
            println!("  scope: the whole project, because {why}");
        }
    }
    if let Some(b) = crate::gen::behaviour::BehaviourReport::load(&session.root) {
        println!(
            "  {}; {} test(s) pin behaviour it did not alter",
            b.headline(),
            b.unchanged_tests
        );
        for line in b.lines() {
            println!("    {line}");
        }
    }
    let change = crate::artifacts::coverage_change(&session.root);
    for (layer, v) in layers.as_object().into_iter().flatten() {
        if let Some(why) = v["not_applicable"].as_str() {
            println!("  {layer}: not applicable: {why}");
            continue;
        }
        let before = change
            .iter()
            .flat_map(|c| &c.layers)
            .find(|l| l.layer == *layer)
            .map_or(String::new(), |l| {
                format!(
                    " ({:.1}% -> {:.1}% with the project's own tests, {:+.1} points)",
                    l.before,
                    l.after,
                    l.points()
                )
            });
        println!(
            "  {layer}: pass {} cov {}{before} (GC rounds {})",
            v["pass_rate"]
                .as_f64()
                .map(|p| format!("{:.1}%", p * 100.0))
                .unwrap_or("-".into()),
            v["coverage"]
                .as_f64()
                .map(|c| format!("{c:.1}%"))
                .unwrap_or("n/a".into()),
            v["gc_rounds"]
        );
    }
    if let Some(c) = &change {
        // Per file too, the least covered first; a long list is cut (status has every file).
        let mut files: Vec<&crate::artifacts::FileChange> = c.files.iter().collect();
        files.sort_by(|a, b| a.after.unwrap_or(0.0).total_cmp(&b.after.unwrap_or(0.0)));
        let pct = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{p:.1}%"));
        let shown: Vec<String> = files
            .iter()
            .take(8)
            .map(|f| format!("{} {} -> {}", f.file, pct(f.before), pct(f.after)))
            .collect();
        // Without generated tests (a test-fix session) there is no "after" to show.
        if !shown.is_empty() && files.iter().any(|f| f.after.is_some()) {
            let more = files.len().saturating_sub(shown.len());
            println!(
                "  coverage per file (the project's own tests -> with the generated ones): {}{}",
                shown.join(", "),
                if more > 0 {
                    format!(" (and {more} more: `status` lists them)")
                } else {
                    String::new()
                }
            );
        }
    }
    if let Some(cycle) = crate::artifacts::IterationState::load(&session.root) {
        println!("  test-fix: {}", cycle.summary);
        if let Ok(m) = crate::util::read_json::<crate::artifacts::FixManifest>(
            &session.root.join(crate::artifacts::FIXES_MANIFEST),
        ) {
            println!(
                "  fixes: {} file(s) ({}), commits on branch {}",
                m.files.len(),
                m.files
                    .iter()
                    .map(|f| f.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                m.branch
            );
        }
    }
    if let Some(s) = first_tests_s(&graph, &state) {
        println!("  first tests: written {s:.1} s after the start");
    }
    match quality_score(session) {
        Some((_, band)) if band == crate::report::NOT_SCORED => {
            println!("  quality score: not scored (no layer had anything to test)")
        }
        Some((score, band)) => println!("  quality score: {score:.1} ({band})"),
        None => {}
    }
    for t in graph.tasks.iter().filter(|t| t.status.is_dead()) {
        println!(
            "  {} {}: {}",
            t.id,
            t.status.as_str(),
            t.reason.as_deref().unwrap_or("")
        );
    }
    let files = deliverables(session);
    if !files.is_empty() {
        println!("  deliverables: {}", files.join(", "));
    }
    for w in &end.warnings {
        eprintln!("team-testing: warning: {w}");
    }
    println!("Session: {}", session.root.display());
    if end.status == SessionStatus::Completed {
        let report = session.root.join("analysis/quality-report.md");
        if report.is_file() {
            println!("Report: {}", report.display());
        }
        let next = crate::app::extend::next_steps(session);
        if !next.is_empty() {
            println!("Next: {}", next.join("; "));
        }
    }
    Ok(())
}
