//! The arithmetic every section shares: means, ratios with a stated value for an empty whole,
//! and rounding to the places report.json keeps.

pub(super) fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// `part / whole`, or `empty` when there is no whole (what "nothing to measure" scores).
pub(super) fn share(part: usize, whole: usize, empty: f64) -> f64 {
    if whole == 0 {
        empty
    } else {
        part as f64 / whole as f64
    }
}

pub(super) fn round_to(v: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (v * f).round() / f
}
