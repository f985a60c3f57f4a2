//! `--fail-on`: which results of a finished session make the command exit non-zero, for CI. The
//! conditions are read from the session's report (the analyst's figures, built again from the
//! session's files), so `run --fail-on …` and `report --fail-on …` on the same session agree.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use crate::gen::behaviour::BehaviourReport;
use crate::report::{Findings, LayerReport, Report};
use crate::session::SessionDir;

/// A result that can fail a CI job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FailOn {
    /// Nothing fails the job (today's behaviour; the default).
    None,
    /// A test the executor classified as a code defect, or a stated contract the code breaks.
    CodeDefect,
    /// A behaviour change judged a likely regression (the base returned, HEAD raises).
    Regression,
    /// A layer below its gate after its last GC round.
    Gate,
    /// A side effect: a function or a test that changed something outside its own folders.
    Unsafe,
}

impl FailOn {
    /// Every value, as `--fail-on` spells it.
    pub const NAMES: [&'static str; 5] = ["none", "code-defect", "regression", "gate", "unsafe"];

    pub fn name(self) -> &'static str {
        match self {
            FailOn::None => "none",
            FailOn::CodeDefect => "code-defect",
            FailOn::Regression => "regression",
            FailOn::Gate => "gate",
            FailOn::Unsafe => "unsafe",
        }
    }
}

impl fmt::Display for FailOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FailOn {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| {
                [
                    FailOn::None,
                    FailOn::CodeDefect,
                    FailOn::Regression,
                    FailOn::Gate,
                    FailOn::Unsafe,
                ][i]
            })
            .ok_or_else(|| format!("{s:?} is not one of {}", Self::NAMES.join(", ")))
    }
}

/// One result that met a `--fail-on` condition, in words that name it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Failure {
    pub condition: &'static str,
    pub reason: String,
}

/// What the conditions read of a report.
pub struct Results<'a> {
    pub findings: &'a Findings,
    pub layers: &'a [LayerReport],
    pub behaviour: Option<&'a BehaviourReport>,
    /// A fraction (0.95).
    pub pass_rate_target: f64,
}

impl<'a> Results<'a> {
    pub fn of(report: &'a Report) -> Self {
        Results {
            findings: &report.findings,
            layers: &report.layers,
            behaviour: report.behaviour.as_ref(),
            pass_rate_target: report.pass_rate_target,
        }
    }
}

/// The results that meet one of `conditions`, in the order of [`FailOn`] (each condition once).
/// Empty: the job passes.
pub fn failures(report: &Results, conditions: &[FailOn]) -> Vec<Failure> {
    let mut wanted = conditions.to_vec();
    wanted.sort();
    wanted.dedup();
    let mut out = Vec::new();
    for condition in wanted {
        let reasons = match condition {
            FailOn::None => Vec::new(),
            FailOn::CodeDefect => code_defects(report),
            FailOn::Regression => regressions(report),
            FailOn::Gate => gates(report),
            FailOn::Unsafe => side_effects(report),
        };
        out.extend(reasons.into_iter().map(|reason| Failure {
            condition: condition.name(),
            reason,
        }));
    }
    out
}

/// The session's results that meet `conditions`: its report built again from its files, with
/// the team it ran with.
pub fn check(session: &SessionDir, conditions: &[FailOn]) -> crate::error::Result<Vec<Failure>> {
    if conditions.iter().all(|c| *c == FailOn::None) {
        return Ok(Vec::new());
    }
    let state = session.load_state()?;
    let (config, _) =
        super::team::load_team(state.spec_file.as_deref(), state.roles_dir.as_deref())?;
    let report = crate::report::build(session, &config);
    Ok(failures(&Results::of(&report), conditions))
}

/// `module.function` of a finding.
fn qualified(f: &Value) -> String {
    qualify(&text(f, "module"), &text(f, "function"))
}

/// A function already qualified (`pkg.mod.f`, Go's `stats.Median`, Rust's `words::count`) as it
/// is; a bare name with its module.
fn qualify(module: &str, function: &str) -> String {
    if module.is_empty() || function.contains('.') || function.contains("::") {
        function.to_string()
    } else {
        format!("{module}.{function}")
    }
}

fn text(v: &Value, key: &str) -> String {
    match &v[key] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Each defect once: a failing test that asserts a broken contract is named by the contract
/// (its call, what was expected and what came), not by the test.
fn code_defects(report: &Results) -> Vec<String> {
    let contracts = &report.findings.contract_findings;
    let asserts_a_contract = |test: &str| {
        let name = test.rsplit("::").next().unwrap_or(test);
        contracts.iter().any(|f| f["test"].as_str() == Some(name))
    };
    let mut out: Vec<String> = report
        .findings
        .code_defects
        .iter()
        .filter(|d| !asserts_a_contract(&d.test))
        .map(|d| {
            let mut line = format!("{} ({})", d.test, d.layer);
            if let Some(m) = d.message.as_deref().filter(|m| !m.is_empty()) {
                line.push_str(&format!(": {}", first_line(m)));
            }
            if let Some(at) = d.suspects.first() {
                line.push_str(&format!(", most likely at {at}"));
            }
            line
        })
        .collect();
    out.extend(contracts.iter().map(|f| {
        let mut line = format!(
            "{}: {} ({})",
            qualified(f),
            text(f, "call"),
            text(f, "kind")
        );
        let (expected, actual) = (text(f, "expected"), text(f, "actual"));
        if !expected.is_empty() {
            line.push_str(&format!(": expected {}", first_line(&expected)));
        }
        if !actual.is_empty() {
            line.push_str(&format!(", got {}", first_line(&actual)));
        }
        line
    }));
    out
}

fn regressions(report: &Results) -> Vec<String> {
    let Some(behaviour) = report.behaviour else {
        return Vec::new();
    };
    behaviour
        .changes
        .iter()
        .filter(|c| c.verdict == crate::gen::behaviour::Verdict::LikelyRegression)
        .map(|c| {
            format!(
                "{} {}: {}: before {}, now {}",
                c.id,
                qualify(&c.module, &c.function),
                c.input,
                first_line(&c.before),
                first_line(&c.after)
            )
        })
        .collect()
}

fn gates(report: &Results) -> Vec<String> {
    let percent = |v: Option<f64>| v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.1}%"));
    report
        .layers
        .iter()
        .filter(|l| l.gate == "Below")
        .map(|l| {
            let mut line = format!(
                "{} below its gate: pass {} (target {:.0}%), coverage {}",
                l.layer,
                percent(l.final_pass_rate.map(|p| p * 100.0)),
                report.pass_rate_target * 100.0,
                percent(l.final_coverage)
            );
            if let Some(t) = l.target {
                line.push_str(&format!(" (target {t:.0}%)"));
            }
            line.push_str(&format!(" after {} GC round(s)", l.gc_rounds_used));
            line
        })
        .collect()
}

fn side_effects(report: &Results) -> Vec<String> {
    report
        .findings
        .side_effects
        .iter()
        .map(|s| {
            let what = first_line(&text(s, "actual"));
            // A test the executor took out: its layer's file and its id.
            if s["found_by"] == "executor" {
                return format!(
                    "{}: test {}: {what}",
                    text(s, "module"),
                    text(s, "function")
                );
            }
            format!("{}: {}: {what}", qualified(s), text(s, "call"))
        })
        .collect()
}

/// A message's first line: one failure, one line.
fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default().trim();
    if line.chars().count() > 200 {
        let cut: String = line.chars().take(200).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_condition_names_what_met_it_and_none_fails_nothing() {
        let mut findings = Findings::default();
        findings.contract_findings.push(json!({
            "module": "shapes.geometry", "function": "shapes.geometry.perimeter", "kind": "doctest",
            "test": "test_perimeter_doctest_2ebf6a",
            "call": "perimeter(2, 3)", "expected": "10", "actual": "8",
        }));
        findings.side_effects.push(json!({
            "module": "tools", "function": "clean", "call": "clean('/x')", "actual": "removed /x",
        }));
        findings.code_defects.push(crate::report::CodeDefect {
            test: "test_shapes_geometry::test_perimeter_doctest_2ebf6a".into(),
            layer: "L1-unit".into(),
            file: None,
            task_id: "TESTRUN-001".into(),
            round: 0,
            criticality: None,
            criticality_rule: None,
            hits: 1,
            same_cause: Vec::new(),
            suspects: Vec::new(),
            message: Some("AssertionError: ****".into()),
            evidence: Value::Null,
        });
        let layers = [LayerReport {
            layer: "L1-unit".into(),
            target: Some(80.0),
            gate: "Below".into(),
            final_pass_rate: Some(1.0),
            final_coverage: Some(61.5),
            gc_rounds_used: 3,
            ..Default::default()
        }];
        let report = Results {
            findings: &findings,
            layers: &layers,
            behaviour: None,
            pass_rate_target: 0.95,
        };
        let all = [
            FailOn::Unsafe,
            FailOn::CodeDefect,
            FailOn::Gate,
            FailOn::CodeDefect,
        ];
        let found = failures(&report, &all);
        let lines: Vec<String> = found
            .iter()
            .map(|f| format!("{}: {}", f.condition, f.reason))
            .collect();
        assert_eq!(
            lines,
            [
                "code-defect: shapes.geometry.perimeter: perimeter(2, 3) (doctest): expected 10, got 8",
                "gate: L1-unit below its gate: pass 100.0% (target 95%), coverage 61.5% (target 80%) after 3 GC round(s)",
                "unsafe: tools.clean: clean('/x'): removed /x",
            ]
        );
        assert!(failures(&report, &[FailOn::None]).is_empty());
        assert!(failures(&report, &[FailOn::Regression]).is_empty());
        assert_eq!("code-defect".parse::<FailOn>(), Ok(FailOn::CodeDefect));
        assert!("defects"
            .parse::<FailOn>()
            .unwrap_err()
            .contains("none, code-defect"));
    }
}
