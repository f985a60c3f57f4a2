//! The score section: the quality score with its band and breakdown, and the confidence in the
//! report's figures.

use std::collections::{BTreeMap, BTreeSet};

use super::findings::FindingsSection;
use super::gaps::Gaps;
use super::model::{Confidence, LayerReport, ScoreBreakdown};
use super::numbers::{mean, round_to, share};

/// Score weights, in points out of 100.
pub const W_COVERAGE: f64 = 30.0;
pub const W_EFFECTIVENESS: f64 = 25.0;
pub const W_DETECTION: f64 = 25.0;
pub const W_GC: f64 = 20.0;
/// The band of a session none of whose layers had anything to test.
pub const NOT_SCORED: &str = "not scored";
/// The band of a score that would be good, but whose suite's strength was never measured (no
/// mutation analysis ran): passing tests with high coverage may still notice no bug.
pub const UNVERIFIED: &str = "unverified";

pub fn band(score: f64) -> &'static str {
    if score >= 80.0 {
        "good"
    } else if score >= 60.0 {
        "needs improvement"
    } else {
        "concerning"
    }
}

/// One layer's final figures, as the score formula takes them.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerFinal {
    pub pass_rate: f64,
    pub coverage: Option<f64>,
    pub target: Option<f64>,
}

/// What the detection term stands on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Detection {
    /// The combined suite's mutation score (0..1): the share of seeded bugs its tests notice.
    Mutation(f64),
    /// No mutation analysis ran: the term is left out, the others' weights scale up to 100,
    /// and the band cannot say "good".
    Unmeasured,
}

/// The weights of the four terms, in points: detection's goes to the others in proportion
/// when it was not measured.
pub fn weights(detection: Detection) -> [f64; 4] {
    match detection {
        Detection::Mutation(_) => [W_COVERAGE, W_EFFECTIVENESS, W_DETECTION, W_GC],
        Detection::Unmeasured => {
            let scale = 100.0 / (100.0 - W_DETECTION);
            [
                W_COVERAGE * scale,
                W_EFFECTIVENESS * scale,
                0.0,
                W_GC * scale,
            ]
        }
    }
}

/// The band of `score`: a good score whose detection was not measured is only "unverified".
pub fn band_of(score: f64, detection: Detection) -> &'static str {
    match (band(score), detection) {
        ("good", Detection::Unmeasured) => UNVERIFIED,
        (b, _) => b,
    }
}

/// The quality score (0..100, one decimal) and its four terms (each 0..1). No layer: 0.
pub fn quality_score(
    layers: &[LayerFinal],
    detection: Detection,
    rounds_used: u32,
    max_rounds: u32,
) -> (f64, [f64; 4]) {
    if layers.is_empty() {
        return (0.0, [0.0; 4]);
    }
    let cov = mean(
        &layers
            .iter()
            .map(|l| match (l.coverage, l.target.filter(|t| *t > 0.0)) {
                (Some(c), Some(t)) => (c / t).min(1.0),
                _ => l.pass_rate,
            })
            .collect::<Vec<_>>(),
    );
    let eff = mean(&layers.iter().map(|l| l.pass_rate).collect::<Vec<_>>());
    let det = match detection {
        Detection::Mutation(score) => score.clamp(0.0, 1.0),
        Detection::Unmeasured => 0.0,
    };
    let budget = f64::from(max_rounds) * layers.len() as f64;
    let gc = if budget > 0.0 {
        (1.0 - f64::from(rounds_used) / budget).clamp(0.0, 1.0)
    } else {
        1.0
    };
    let [wc, we, wd, wg] = weights(detection);
    let score = wc * cov + we * eff + wd * det + wg * gc;
    (round_to(score, 1), [cov, eff, det, gc])
}

/// What the score section computes.
pub(super) struct Score {
    pub quality_score: f64,
    pub band: String,
    /// False when every layer was not applicable.
    pub scored: bool,
    pub breakdown: ScoreBreakdown,
}

/// Scores the layers (layers section), the failing test records (findings section) and the
/// suite's mutation score (when mutation analysis ran) against a budget of `max_rounds` GC
/// rounds per layer.
pub(super) fn score(
    layers: &[LayerReport],
    findings: &FindingsSection,
    mutation: Option<&crate::artifacts::MutationRecord>,
    max_rounds: u32,
) -> Score {
    let failures = &findings.failures;
    // Layers with nothing to do are out of the score; one that never completed a run scores 0.
    let mut finals: Vec<LayerFinal> = layers
        .iter()
        .filter(|l| l.gate != "NotApplicable")
        .map(|l| LayerFinal {
            pass_rate: l.final_pass_rate.unwrap_or(0.0),
            coverage: l.final_coverage,
            target: l.target,
        })
        .collect();
    // No layer with a completed run: nothing was measured, the score is 0.
    if layers.iter().all(|l| l.final_pass_rate.is_none()) {
        finals.clear();
    }
    let rounds_used: u32 = layers.iter().map(|l| l.gc_rounds_used).sum();
    let detection = match mutation.filter(|m| m.mutants > 0) {
        Some(m) => Detection::Mutation(m.combined.score / 100.0),
        None => Detection::Unmeasured,
    };
    let (quality, [cov, eff, det, gc]) = quality_score(&finals, detection, rounds_used, max_rounds);
    let scored = layers.is_empty() || layers.iter().any(|l| l.not_applicable.is_none());
    let [wc, we, wd, wg] = weights(detection);
    let weights: BTreeMap<String, f64> = [
        ("coverage_achievement", wc),
        ("test_effectiveness", we),
        ("defect_detection", wd),
        ("gc_efficiency", wg),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), round_to(v, 2)))
    .collect();
    let breakdown = ScoreBreakdown {
        weights,
        coverage_achievement: round_to(cov, 4),
        test_effectiveness: round_to(eff, 4),
        defect_detection: round_to(det, 4),
        gc_efficiency: round_to(gc, 4),
        gc_rounds_used: rounds_used,
        gc_budget: max_rounds * layers.iter().filter(|l| l.not_applicable.is_none()).count() as u32,
        failing_tests: failures.failing,
        classified_failing_tests: failures.classified,
        detection_measured: matches!(detection, Detection::Mutation(_)),
    };
    Score {
        quality_score: quality,
        band: if scored {
            band_of(quality, detection).into()
        } else {
            NOT_SCORED.into()
        },
        scored,
        breakdown,
    }
}

/// The confidence in the report's figures, from the layers' gates (layers section), the tests
/// and failing records (findings section), the modules in scope and exercised (gaps section),
/// and whether a run stopped on an environment problem.
pub(super) fn confidence(
    layers: &[LayerReport],
    findings: &FindingsSection,
    gaps: &Gaps,
    env_problem: bool,
) -> Confidence {
    let failures = &findings.failures;
    let flaky_or_q: BTreeSet<&String> = findings
        .flaky_tests
        .iter()
        .map(|f| &f.test)
        .chain(findings.quarantined.iter().map(|q| &q.test))
        .collect();
    let all_tests: BTreeSet<&String> = findings
        .test_ids
        .iter()
        .chain(findings.quarantined.iter().map(|q| &q.test))
        .collect();
    let c = [
        share(
            gaps.scope
                .iter()
                .filter(|m| gaps.exercised.contains(*m))
                .count(),
            gaps.scope.len(),
            0.0,
        ),
        share(
            all_tests.len() - flaky_or_q.len().min(all_tests.len()),
            all_tests.len(),
            0.0,
        ),
        share(failures.diagnosed, failures.failing, 1.0),
        share(
            layers.iter().filter(|l| l.gate == "Met").count(),
            layers.iter().filter(|l| l.not_applicable.is_none()).count(),
            0.0,
        ),
        if env_problem {
            0.0
        } else {
            1.0 - share(failures.env_failures, failures.failing, 0.0)
        },
    ];
    Confidence {
        scenario_coverage: round_to(c[0], 4),
        test_quality: round_to(c[1], 4),
        diagnostic_accuracy: round_to(c[2], 4),
        strategy_effectiveness: round_to(c[3], 4),
        infrastructure_fitness: round_to(c[4], 4),
        overall: round_to(mean(&c), 4),
    }
}
