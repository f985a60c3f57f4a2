//! The Generator-Critic checkpoint: after a TESTRUN task, go on or open a revision round.

/// `L1-unit` -> `L1`; a layer without a dash is its own code.
pub fn layer_code(layer: &str) -> &str {
    layer.split('-').next().unwrap_or(layer)
}

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq)]
pub enum GcDecision {
    /// The gate is met: go on.
    Pass,
    /// Met as a partial success: the pass rate is at its target but below 100 %, and every
    /// failure that counts is of low criticality (the seed's criticality-aware gate).
    Partial { note: String },
    /// Below the gate and rounds are left: open round `round` (1-based).
    Revise { round: u32, reason: String },
    /// Below the gate but every round is used: go on with a warning.
    GiveUp { reason: String },
    /// Below the gate, and the round just run gained too little to pay for another: go on with
    /// a warning that says what it gained.
    Plateau { reason: String },
}

/// How a layer's warning says its GC loop stopped before its last round (after the layer's
/// name; the report reads it back).
pub const LOOP_STOPPED: &str = "below its gate, GC loop stopped: ";

/// What a layer's earlier run measured, for the gain of the round after it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunFigures {
    pub pass_rate: f64,
    pub coverage: Option<f64>,
    pub branch_coverage: Option<f64>,
}

/// What the gate judges of an executor's run, beyond the raw pass rate: code defects are real
/// bugs the tests found, so they are reported and never held against the tests; test defects,
/// environment issues and flaky tests are.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GateFigures {
    /// Tests that count: every test that ran (flaky ones too) but those failing on a code defect.
    pub counted: usize,
    /// Of those, the ones that passed.
    pub passed: usize,
    /// Failures classified code_defect (left out of `counted`).
    pub code_defects: usize,
    /// Whether every failure that counts is of low criticality.
    pub all_low: bool,
    /// Branch coverage of the files the gate judges, when the run measured branches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_coverage: Option<f64>,
}

impl GateFigures {
    /// Passed over counted; 1.0 when nothing counts (every failure a code defect, or no test).
    pub fn pass_rate(&self) -> f64 {
        if self.counted == 0 {
            1.0
        } else {
            self.passed as f64 / self.counted as f64
        }
    }
}

/// One run's figures and the layer's targets.
#[derive(Debug, Clone)]
pub struct GateInput {
    /// The run's raw pass rate (used when the run has no `figures`: command roles, older runs).
    pub pass_rate: f64,
    pub coverage: Option<f64>,
    pub figures: Option<GateFigures>,
    pub pass_rate_target: f64,
    pub coverage_target: Option<f64>,
    /// Branch coverage target (the sibling workflow's 70 %), judged when branches were measured.
    pub branch_target: Option<f64>,
    pub rounds_used: u32,
    pub max_rounds: u32,
    /// The reflective strategy's convergence: when every remaining failure is a code defect, no
    /// round is spent (revising tests cannot fix the code).
    pub converge_on_code_defects: bool,
    /// The layer's run before this one, when this one is a GC round's.
    pub previous: Option<RunFigures>,
    /// A round that gains fewer points of line coverage than this, and no branch coverage and
    /// no pass rate, ends the loop (0: never).
    pub plateau_points: f64,
}

/// The seed's rule: (pass rate >= target AND coverage >= layer target) OR rounds used up -> go
/// on. The pass rate is the gate's (code defects left out); at or above its target but below
/// 100 % it passes only as a partial success, when every failure that counts is low criticality.
/// Unknown coverage (no tool) is judged on pass rate alone.
pub fn gc_decision(input: &GateInput) -> GcDecision {
    let decision = decide(input);
    let only_defects = input
        .figures
        .as_ref()
        .is_some_and(|f| f.code_defects > 0 && f.passed == f.counted);
    match decision {
        GcDecision::Revise { .. } if input.converge_on_code_defects && only_defects => {
            GcDecision::Partial {
                note: "converged: every remaining failure is a code defect, which revising the tests cannot change (reflective strategy)".into(),
            }
        }
        other => other,
    }
}

fn decide(input: &GateInput) -> GcDecision {
    let pass_rate = input
        .figures
        .as_ref()
        .map_or(input.pass_rate, GateFigures::pass_rate);
    let mut misses = Vec::new();
    let mut partial = None;
    if pass_rate < input.pass_rate_target {
        misses.push(format!(
            "pass rate {:.1}% < {:.1}%",
            pass_rate * 100.0,
            input.pass_rate_target * 100.0
        ));
    } else if let Some(f) = input.figures.as_ref().filter(|_| pass_rate < 1.0) {
        if f.all_low {
            partial = Some(format!(
                "partial success: pass rate {:.1}%, every failure of low criticality",
                pass_rate * 100.0
            ));
        } else {
            misses.push(format!(
                "pass rate {:.1}% with failures of medium or high criticality (below 100 % only low ones are accepted)",
                pass_rate * 100.0
            ));
        }
    }
    if let (Some(cov), Some(target)) = (input.coverage, input.coverage_target) {
        if cov < target {
            misses.push(format!("coverage {cov:.1}% < {target:.0}%"));
        }
    }
    let branch = input.figures.as_ref().and_then(|f| f.branch_coverage);
    if let (Some(cov), Some(target)) = (branch, input.branch_target) {
        if cov < target {
            misses.push(format!("branch coverage {cov:.1}% < {target:.0}%"));
        }
    }
    if misses.is_empty() {
        return match partial {
            Some(note) => GcDecision::Partial { note },
            None => GcDecision::Pass,
        };
    }
    let reason = misses.join(", ");
    if let Some(gain) = plateau(input, pass_rate, branch) {
        return GcDecision::Plateau {
            reason: format!("{reason}; plateau: {gain} in round {}", input.rounds_used),
        };
    }
    if input.rounds_used >= input.max_rounds {
        GcDecision::GiveUp {
            reason: format!("{reason} after {} GC rounds", input.rounds_used),
        }
    } else {
        GcDecision::Revise {
            round: input.rounds_used + 1,
            reason,
        }
    }
}

/// What the round just run gained ("+0.4 points"), when that is too little for another: under
/// `plateau_points` of line coverage, with no branch coverage and no pass rate gained. Only a GC
/// round's run is judged, against the layer's run before it; coverage neither run measured is
/// judged on the pass rate alone.
fn plateau(input: &GateInput, pass_rate: f64, branch: Option<f64>) -> Option<String> {
    let before = input.previous.filter(|_| input.rounds_used > 0)?;
    if input.plateau_points <= 0.0 {
        return None;
    }
    let gained = |now: Option<f64>, then: Option<f64>| match (now, then) {
        (Some(now), Some(then)) => Some(now - then),
        _ => None,
    };
    let line = gained(input.coverage, before.coverage);
    let branch = gained(branch, before.branch_coverage).unwrap_or(0.0);
    let pass = pass_rate - before.pass_rate;
    let enough = line.is_some_and(|g| g >= input.plateau_points) || branch > 0.0 || pass > 1e-9;
    if enough {
        return None;
    }
    Some(match line {
        Some(g) => format!("{g:+.1} points of line coverage"),
        None => format!("pass rate {:+.1} points", pass * 100.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(pass_rate: f64, coverage: Option<f64>, rounds_used: u32) -> GateInput {
        GateInput {
            pass_rate,
            coverage,
            figures: None,
            pass_rate_target: 0.95,
            coverage_target: Some(80.0),
            branch_target: Some(70.0),
            rounds_used,
            max_rounds: 3,
            converge_on_code_defects: false,
            previous: None,
            plateau_points: 1.0,
        }
    }

    fn after(coverage: f64, round: u32, before: f64) -> GateInput {
        GateInput {
            previous: Some(RunFigures {
                pass_rate: 1.0,
                coverage: Some(before),
                branch_coverage: None,
            }),
            ..input(1.0, Some(coverage), round)
        }
    }

    #[test]
    fn a_round_that_gains_under_a_point_ends_the_loop_and_says_what_it_gained() {
        match gc_decision(&after(79.6, 2, 79.2)) {
            GcDecision::Plateau { reason } => assert_eq!(
                reason,
                "coverage 79.6% < 80%; plateau: +0.4 points of line coverage in round 2"
            ),
            other => panic!("{other:?}"),
        }
        // A point or more, a branch or a better pass rate pays for the next round.
        assert!(matches!(
            gc_decision(&after(79.0, 1, 74.8)),
            GcDecision::Revise { round: 2, .. }
        ));
        let mut branch = after(79.6, 2, 79.2);
        branch.figures = Some(GateFigures {
            branch_coverage: Some(61.0),
            ..figures(10, 10, 0, true)
        });
        branch.branch_target = Some(60.0);
        branch.previous.as_mut().unwrap().branch_coverage = Some(58.0);
        assert!(matches!(gc_decision(&branch), GcDecision::Revise { .. }));
        // The first run is never a plateau, and 0 turns the rule off.
        assert!(matches!(
            gc_decision(&after(79.6, 0, 79.2)),
            GcDecision::Revise { .. }
        ));
        let off = GateInput {
            plateau_points: 0.0,
            ..after(79.6, 2, 79.2)
        };
        assert!(matches!(gc_decision(&off), GcDecision::Revise { .. }));
    }

    fn figures(counted: usize, passed: usize, code_defects: usize, all_low: bool) -> GateFigures {
        GateFigures {
            counted,
            passed,
            code_defects,
            all_low,
            branch_coverage: None,
        }
    }

    #[test]
    fn gate_met_passes() {
        assert_eq!(gc_decision(&input(0.97, Some(85.0), 0)), GcDecision::Pass);
    }

    #[test]
    fn low_coverage_opens_round() {
        match gc_decision(&input(1.0, Some(50.0), 1)) {
            GcDecision::Revise { round, reason } => {
                assert_eq!(round, 2);
                assert!(reason.contains("coverage 50.0%"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_coverage_judged_on_pass_rate() {
        assert_eq!(gc_decision(&input(0.96, None, 0)), GcDecision::Pass);
    }

    #[test]
    fn rounds_used_up_gives_up() {
        assert!(matches!(
            gc_decision(&input(0.5, None, 3)),
            GcDecision::GiveUp { .. }
        ));
    }

    #[test]
    fn code_defects_are_not_held_against_the_tests() {
        // 8 tests, 2 fail on real bugs: the raw pass rate is 75 %, the gate's 100 %.
        let mut i = input(0.75, Some(90.0), 0);
        i.figures = Some(figures(6, 6, 2, true));
        assert_eq!(gc_decision(&i), GcDecision::Pass);
    }

    #[test]
    fn below_100_only_low_criticality_failures_are_a_partial_success() {
        let mut i = input(0.97, Some(90.0), 0);
        i.figures = Some(figures(100, 97, 0, true));
        assert!(matches!(gc_decision(&i), GcDecision::Partial { .. }));
        i.figures = Some(figures(100, 97, 0, false));
        match gc_decision(&i) {
            GcDecision::Revise { reason, .. } => {
                assert!(reason.contains("criticality"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn branch_coverage_has_its_own_gate() {
        let mut i = input(1.0, Some(90.0), 0);
        let mut f = figures(10, 10, 0, true);
        f.branch_coverage = Some(50.0);
        i.figures = Some(f);
        match gc_decision(&i) {
            GcDecision::Revise { reason, .. } => {
                assert_eq!(reason, "branch coverage 50.0% < 70%")
            }
            other => panic!("{other:?}"),
        }
        i.branch_target = None;
        assert_eq!(gc_decision(&i), GcDecision::Pass);
    }

    #[test]
    fn the_reflective_loop_converges_when_every_remaining_failure_is_a_code_defect() {
        let mut i = input(0.8, Some(60.0), 0);
        i.figures = Some(figures(8, 8, 2, true));
        assert!(
            matches!(gc_decision(&i), GcDecision::Revise { .. }),
            "coverage is short"
        );
        i.converge_on_code_defects = true;
        match gc_decision(&i) {
            GcDecision::Partial { note } => assert!(note.contains("code defect"), "{note}"),
            other => panic!("{other:?}"),
        }
        // A test defect left: revising can still help.
        i.figures = Some(figures(9, 8, 2, true));
        assert!(matches!(gc_decision(&i), GcDecision::Revise { .. }));
    }
}
