//! The Generator-Critic checkpoint: after a TESTRUN task, go on or open a revision round.

/// `L1-unit` -> `L1`; a layer without a dash is its own code.
pub fn layer_code(layer: &str) -> &str {
    layer.split('-').next().unwrap_or(layer)
}

#[derive(Debug, Clone, PartialEq)]
pub enum GcDecision {
    /// The gate is met: go on.
    Pass,
    /// Below the gate and rounds are left: open round `round` (1-based).
    Revise { round: u32, reason: String },
    /// Below the gate but every round is used: go on with a warning.
    GiveUp { reason: String },
}

/// The seed's rule: (pass_rate >= target AND coverage >= layer target) OR rounds used up -> go on.
/// Unknown coverage (no tool) is judged on pass rate alone.
pub fn gc_decision(
    pass_rate: f64,
    coverage: Option<f64>,
    pass_rate_target: f64,
    coverage_target: Option<f64>,
    rounds_used: u32,
    max_rounds: u32,
) -> GcDecision {
    let mut misses = Vec::new();
    if pass_rate < pass_rate_target {
        misses.push(format!(
            "pass rate {:.1}% < {:.1}%",
            pass_rate * 100.0,
            pass_rate_target * 100.0
        ));
    }
    if let (Some(cov), Some(target)) = (coverage, coverage_target) {
        if cov < target {
            misses.push(format!("coverage {cov:.1}% < {target:.0}%"));
        }
    }
    if misses.is_empty() {
        return GcDecision::Pass;
    }
    let reason = misses.join(", ");
    if rounds_used >= max_rounds {
        GcDecision::GiveUp {
            reason: format!("{reason} after {rounds_used} GC rounds"),
        }
    } else {
        GcDecision::Revise {
            round: rounds_used + 1,
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_met_passes() {
        assert_eq!(
            gc_decision(0.97, Some(85.0), 0.95, Some(80.0), 0, 3),
            GcDecision::Pass
        );
    }

    #[test]
    fn low_coverage_opens_round() {
        match gc_decision(1.0, Some(50.0), 0.95, Some(80.0), 1, 3) {
            GcDecision::Revise { round, reason } => {
                assert_eq!(round, 2);
                assert!(reason.contains("coverage 50.0%"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_coverage_judged_on_pass_rate() {
        assert_eq!(
            gc_decision(0.96, None, 0.95, Some(80.0), 0, 3),
            GcDecision::Pass
        );
    }

    #[test]
    fn rounds_used_up_gives_up() {
        assert!(matches!(
            gc_decision(0.5, None, 0.95, Some(80.0), 3, 3),
            GcDecision::GiveUp { .. }
        ));
    }
}
