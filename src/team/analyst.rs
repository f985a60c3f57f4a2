//! Analyst: builds the session's quality report from its own files (see [`crate::report`]) and
//! writes analysis/quality-report.md, report.html, report.json, report.schema.json, results.csv
//! and issues.jsonl, and for a session planned with scenarios analysis/traceability.md. A session
//! with missing or partial results still gets a report of what exists, with a Missing section.

use super::shared::mutation::{self, Mutation};
use super::util::to_map;
use super::RoleContext;
use crate::report;
use crate::tasks::Outcome;

pub fn run(ctx: &RoleContext) -> Outcome {
    (ctx.progress)("context_loaded", Some(10.0), None);
    (ctx.progress)(
        "mutation_analysis",
        Some(20.0),
        Some("the session's suites against mutants of the code".into()),
    );
    let mutation = match mutation::run(ctx) {
        Ok(Mutation::Done(r)) => {
            let dropped: usize = r.layers.iter().map(|l| l.dropped.len()).sum();
            let own = r.baseline.as_ref().map_or(String::new(), |b| {
                format!(", the project's own {:.1}%", b.score)
            });
            format!(
                "mutation score {:.1}% of {} mutants (generated {:.1}%{own}); {dropped} test(s) dropped by minimization",
                r.combined.score, r.mutants, r.generated.score
            )
        }
        Ok(Mutation::NotRun(why)) => format!("mutation analysis not run: {why}"),
        Err(e) => format!("mutation analysis failed: {e}"),
    };
    let rep = report::build(ctx.session, ctx.config);
    (ctx.progress)(
        "analysis_done",
        Some(60.0),
        Some(format!(
            "{} layer(s), {} run record(s), score {:.1}",
            rep.layers.len(),
            rep.runs.len(),
            rep.quality_score
        )),
    );
    let artifacts = match report::write(ctx.session, &rep) {
        Ok(a) => a,
        Err(e) => return Outcome::failed(format!("cannot write the report: {e}")),
    };
    let score = if rep.scored {
        format!("quality score {:.1} ({})", rep.quality_score, rep.band)
    } else {
        "not scored: no layer had anything to test".to_string()
    };
    let mut summary = format!(
        "{score}; {} layer(s) met their gate, {} GC round(s), {} code defect(s), {} flaky, {} quarantined",
        rep.gates().text(),
        rep.score.gc_rounds_used,
        rep.findings.code_defects.len(),
        rep.flaky_tests.len(),
        rep.quarantined.len()
    );
    if !rep.missing.is_empty() {
        summary.push_str(&format!("; {} missing item(s)", rep.missing.len()));
    }
    if let Some(t) = &rep.traceability {
        let s = &t.summary;
        summary.push_str(&format!(
            "; traceability: {} of {} criteria covered, {} violated, {} failing, {} not run, {} with no scenario",
            s.covered, s.criteria, s.violated, s.failing, s.not_run, s.no_scenario
        ));
    }
    summary.push_str(&format!("; {mutation}"));
    let mut out = Outcome::completed(summary);
    out.data = to_map(rep.outcome_data());
    out.artifacts = artifacts;
    narrative(ctx, &mut out);
    out
}

/// With agent backends for the analyst: a narrative of the report for people, written by the
/// first backend of the chain that answers, into analysis/narrative.md. The figures stay
/// team-testing's own; a chain that gives nothing leaves the report as it is.
fn narrative(ctx: &RoleContext, out: &mut Outcome) {
    let chain = ctx.agents.chain("analyst");
    if chain.iter().all(|b| b.is_builtin()) {
        return;
    }
    let report_path = ctx.session.root.join("analysis/quality-report.md");
    let Ok(report) = std::fs::read_to_string(&report_path) else {
        return;
    };
    let prompt = format!(
        "PURPOSE: write the narrative of this quality report for the team that owns the code.\n\n\
         TASK: in 5 to 10 sentences say what the figures mean, the biggest risks, and what to do next.\n\n\
         CONTEXT: the report:\n\n{report}\n\n\
         EXPECTED: plain prose, no code blocks, no headings.\n\n\
         CONSTRAINTS: use only facts in the report; never invent or change a number.\n"
    );
    let folder = ctx.session.root.join("workspace/agent-analyst");
    let mut failures = Vec::new();
    for backend in chain.iter().filter(|b| !b.is_builtin()) {
        let Ok(input) = super::util::agent_input(
            ctx,
            "analyst",
            &prompt,
            &folder,
            crate::agents::call::WorkDir::Empty,
        ) else {
            break;
        };
        match crate::agents::call::ask(backend, &input) {
            Ok((text, _)) => {
                let body = format!(
                    "# Narrative\n\n_Written by the {} backend from analysis/quality-report.md; every figure is team-testing's own._\n\n{}\n",
                    backend.name,
                    text.trim()
                );
                let path = ctx.session.root.join("analysis/narrative.md");
                if crate::util::atomic_write(&path, body.as_bytes()).is_ok() {
                    out.artifacts.push("analysis/narrative.md".into());
                    out.data
                        .insert("narrative_backend".into(), backend.name.clone().into());
                }
                return;
            }
            Err(e) => failures.push(format!("{}: {e}", backend.name)),
        }
    }
    out.data
        .insert("narrative_failed".into(), failures.join("; ").into());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::config::TeamConfig;
    use crate::session::SessionDir;
    use crate::tasks::{OutcomeStatus, Task, TaskGraph, TaskStatus};
    use serde_json::json;
    use std::time::{Duration, Instant};

    #[test]
    fn analyst_writes_every_artifact_and_reports_the_score() {
        let tmp = tempfile::tempdir().unwrap();
        let session = SessionDir::create(tmp.path(), "TST", "analyst test", "2026-12-03").unwrap();
        let config = TeamConfig::builtin().unwrap();
        // No session.json / tasks.json / runs: the report still comes, with its Missing section.
        let task = Task {
            status: TaskStatus::InProgress,
            attempts: 1,
            ..Task::new("TESTANA-001", "analyse", "analyst", vec![])
        };
        session
            .save_tasks(&TaskGraph::new(vec![task.clone()]))
            .unwrap();
        let progress = |_: &str, _: Option<f64>, _: Option<String>| {};
        let ctx = RoleContext {
            session: &session,
            repo: tmp.path(),
            task: &task,
            instance: "analyst",
            config: &config,
            deadline: Instant::now() + Duration::from_secs(60),
            progress: &progress,
            sandbox: &Default::default(),
            agents: &Default::default(),
            role_body: "",
            plan_only: false,
            shards: None,
        };
        let out = run(&ctx);
        assert_eq!(out.status, OutcomeStatus::Completed, "{}", out.summary);
        assert!(
            out.summary.contains("quality score 0.0 (concerning)"),
            "{}",
            out.summary
        );
        for a in &out.artifacts {
            assert!(session.root.join(a).is_file(), "{a} missing");
        }
        assert_eq!(out.artifacts.len(), 7);
        assert!(out.artifacts.iter().any(|a| a == "analysis/report.html"));
        assert!(out.artifacts.iter().any(|a| a == "analysis/report.sarif"));
        for key in [
            "quality_score",
            "band",
            "coverage_gaps",
            "top_defect_patterns",
            "gc_effectiveness",
            "recommendations",
            "confidence",
        ] {
            assert!(out.data.contains_key(key), "{key}");
        }
        assert_eq!(out.data["band"], json!("concerning"));
        let md = std::fs::read_to_string(session.root.join("analysis/quality-report.md")).unwrap();
        assert!(md.contains("## Missing"), "{md}");
    }
}
