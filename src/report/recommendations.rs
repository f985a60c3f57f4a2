//! The recommendations section: what to do next, in the order the report's sections raise it.

use super::model::Report;

/// The recommendations from every earlier section of `r`: layers below their gate (with their
/// modules with a coverage gap), code defects, contract findings, flaky and quarantined tests,
/// GC rounds that gained little, the environment, and missing results.
pub(super) fn recommendations(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(m) = &r.missing_dependencies {
        out.push(format!(
            "The project's dependencies could not be fetched (the sandbox has no network, so runs that need them fail): run `{}` in the repository where the network is reachable, then run again. It said: {}",
            m.command,
            m.problem.lines().last().unwrap_or("")
        ));
    }
    for l in r.layers.iter().filter(|l| l.gate == "Below") {
        let modules: Vec<&str> = r
            .coverage_gaps
            .iter()
            .filter(|g| g.layer == l.layer && g.gap > 0.0)
            .map(|g| g.module.as_str())
            .collect();
        let cov = l
            .final_coverage
            .map_or("unknown".into(), |c| format!("{c:.1}%"));
        let pass = l
            .final_pass_rate
            .map_or("no run".into(), |p| format!("{:.1}%", p * 100.0));
        let stopped = l.loop_stopped.as_deref().map_or(String::new(), |why| {
            format!("; its GC loop stopped early ({why}): more rounds would buy little, a raised budget or an agent backend may")
        });
        out.push(format!(
            "{}: below its gate (pass {pass}, coverage {cov}, target {}){stopped}{}",
            l.layer,
            l.target.map_or("none".into(), |t| format!("{t:.0}%")),
            if modules.is_empty() {
                String::new()
            } else {
                format!("; focus on {}", modules.join(", "))
            }
        ));
    }
    if !r.findings.code_defects.is_empty() {
        let names: Vec<&str> = r
            .findings
            .code_defects
            .iter()
            .map(|d| d.test.as_str())
            .collect();
        out.push(format!(
            "Fix {} code defect(s) the tests found (see analysis/issues.jsonl): {}",
            names.len(),
            names.join(", ")
        ));
    }
    if !r.findings.contract_findings.is_empty() {
        out.push(format!(
            "Review {} contract finding(s) of the generator",
            r.findings.contract_findings.len()
        ));
    }
    if !r.flaky_tests.is_empty() {
        out.push(format!(
            "Stabilise {} flaky test(s): look for order dependence or shared state",
            r.flaky_tests.len()
        ));
    }
    if !r.quarantined.is_empty() {
        out.push(format!(
            "Repair or remove {} quarantined test(s)",
            r.quarantined.len()
        ));
    }
    for g in r.gc_effectiveness.iter().filter(|g| g.rating == "LOW") {
        out.push(format!(
            "{}: GC rounds gained {:.1} point(s) per round; change the generation strategy rather than add rounds",
            g.layer,
            g.gain_per_round.unwrap_or(0.0)
        ));
    }
    if r.confidence.infrastructure_fitness < 1.0 {
        out.push(
            "Fix the test environment: env_issue failures or an environment problem stopped a run"
                .into(),
        );
    }
    if !r.missing.is_empty() {
        out.push("Complete the session: parts of its results are missing (see Missing)".into());
    }
    out
}
