//! The strategy engine of the test-fix loop, as the seed defines it, plus what it needs to
//! decide: regressions, stuck tests, how alike the failures are, and the criticality-aware gate.

use std::collections::BTreeMap;

use crate::artifacts::Iteration;
pub use crate::artifacts::Strategy;

/// A drop of more than this many points of pass rate is a regression (rolled back).
pub const REGRESSION_POINTS: f64 = 10.0;
/// A test failing in this many consecutive iterations is stuck.
pub const STUCK_AFTER: usize = 3;
/// Failures this alike (the share with the commonest signature) are fixed together.
const SIMILAR: f64 = 0.7;
/// Above this pass rate (percent), alike failures are worth an aggressive batch.
const AGGRESSIVE_ABOVE: f64 = 80.0;

/// What the engine looks at before iteration `next` (1-based).
pub struct Situation {
    pub next: u32,
    /// Percent, now.
    pub pass_rate: f64,
    /// How alike the remaining failures are, 0..=1.
    pub similarity: f64,
    /// The last iteration regressed and was rolled back.
    pub regressed: bool,
}

/// The seed's selection, with a regression first: after a rollback the next change is surgical
/// whatever the iteration number.
pub fn select(s: &Situation) -> Strategy {
    if s.regressed {
        Strategy::Surgical
    } else if s.next <= 2 {
        Strategy::Conservative
    } else if s.pass_rate > AGGRESSIVE_ABOVE && s.similarity > SIMILAR {
        Strategy::Aggressive
    } else {
        Strategy::Conservative
    }
}

/// Whether going from `before` to `after` (percent) is a regression.
pub fn is_regression(before: f64, after: f64) -> bool {
    before - after > REGRESSION_POINTS
}

/// Tests in the `failed_tests` of the last [`STUCK_AFTER`] or more iterations in a row, counting
/// iteration 0 (the suite before any fix).
pub fn stuck_tests(iterations: &[Iteration]) -> Vec<String> {
    if iterations.len() < STUCK_AFTER {
        return Vec::new();
    }
    let last = &iterations[iterations.len() - STUCK_AFTER..];
    let mut stuck: Vec<String> = last[0]
        .failed_tests
        .iter()
        .filter(|t| last.iter().all(|i| i.failed_tests.contains(t)))
        .cloned()
        .collect();
    stuck.sort();
    stuck
}

/// The share of failures with the commonest signature (the error and the file it points at).
pub fn similarity(signatures: &[String]) -> f64 {
    if signatures.is_empty() {
        return 0.0;
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in signatures {
        *counts.entry(s).or_default() += 1;
    }
    let top = counts.values().copied().max().unwrap_or(0);
    top as f64 / signatures.len() as f64
}

/// The loop's gate after an iteration (percent; whether every failure left is low criticality).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    Success,
    PartialSuccess,
    Continue,
}

pub fn gate(pass_rate: f64, target_percent: f64, all_low: bool) -> Gate {
    if pass_rate >= 100.0 - 1e-9 {
        Gate::Success
    } else if pass_rate >= target_percent && all_low {
        Gate::PartialSuccess
    } else {
        Gate::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn it(n: u32, failed: &[&str]) -> Iteration {
        Iteration {
            iteration: n,
            failed_tests: failed.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn the_first_two_iterations_are_conservative_then_alike_failures_above_80_go_aggressive() {
        let s = |next, pass_rate, similarity, regressed| {
            select(&Situation {
                next,
                pass_rate,
                similarity,
                regressed,
            })
        };
        assert_eq!(s(1, 90.0, 1.0, false), Strategy::Conservative);
        assert_eq!(s(2, 90.0, 1.0, false), Strategy::Conservative);
        assert_eq!(s(3, 90.0, 0.8, false), Strategy::Aggressive);
        assert_eq!(s(3, 80.0, 0.8, false), Strategy::Conservative);
        assert_eq!(s(3, 90.0, 0.5, false), Strategy::Conservative);
        assert_eq!(s(2, 90.0, 1.0, true), Strategy::Surgical);
        assert_eq!(s(5, 90.0, 1.0, true), Strategy::Surgical);
    }

    #[test]
    fn a_drop_of_more_than_ten_points_is_a_regression() {
        assert!(is_regression(84.6, 69.2));
        assert!(!is_regression(80.0, 70.0));
        assert!(!is_regression(70.0, 90.0));
    }

    #[test]
    fn a_test_failing_three_iterations_in_a_row_is_stuck() {
        let its = [it(0, &["a", "b"]), it(1, &["a", "b"]), it(2, &["b", "c"])];
        assert_eq!(stuck_tests(&its), vec!["b".to_string()]);
        assert!(stuck_tests(&its[..2]).is_empty());
        let its = [it(0, &["a"]), it(1, &[]), it(2, &["a"]), it(3, &["a"])];
        assert!(stuck_tests(&its).is_empty());
    }

    #[test]
    fn similarity_is_the_share_of_the_commonest_signature() {
        let sigs: Vec<String> = ["x", "x", "x", "y"].iter().map(|s| s.to_string()).collect();
        assert_eq!(similarity(&sigs), 0.75);
        assert_eq!(similarity(&[]), 0.0);
    }

    #[test]
    fn below_100_only_low_criticality_failures_pass_the_gate() {
        assert_eq!(gate(100.0, 95.0, false), Gate::Success);
        assert_eq!(gate(96.0, 95.0, true), Gate::PartialSuccess);
        assert_eq!(gate(96.0, 95.0, false), Gate::Continue);
        assert_eq!(gate(90.0, 95.0, true), Gate::Continue);
    }
}
