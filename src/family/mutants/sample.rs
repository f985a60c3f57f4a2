//! Which mutants run when there are more than the session allows: a seeded sample, stratified
//! over files, so a large file cannot crowd out a small one and the same seed picks the same
//! mutants in every run.

use std::path::PathBuf;

use crate::util::Rng;

/// Up to `max` (file, index) pairs of `counts` (each file's number of mutation points): every
/// file's points in a seeded order, taken round-robin over the files (sorted), then the whole
/// choice in a seeded order, so that a budget that runs out stops at a fair cut too.
pub fn stratified(counts: &[(PathBuf, usize)], max: usize, seed: u64) -> Vec<(PathBuf, usize)> {
    let mut rng = Rng(seed);
    let mut files: Vec<(PathBuf, Vec<usize>)> = counts
        .iter()
        .map(|(f, n)| {
            let mut order: Vec<usize> = (0..*n).collect();
            rng.shuffle(&mut order);
            (f.clone(), order)
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut chosen = Vec::new();
    let mut round = 0;
    while chosen.len() < max {
        let mut any = false;
        for (file, order) in &files {
            if let Some(&i) = order.get(round) {
                any = true;
                if chosen.len() < max {
                    chosen.push((file.clone(), i));
                }
            }
        }
        if !any {
            break;
        }
        round += 1;
    }
    rng.shuffle(&mut chosen);
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_gets_its_share_and_the_seed_decides_the_rest() {
        let counts = vec![
            (PathBuf::from("big.rs"), 100),
            (PathBuf::from("small.rs"), 3),
        ];
        let chosen = stratified(&counts, 10, 7);
        assert_eq!(chosen.len(), 10);
        let small = chosen
            .iter()
            .filter(|(f, _)| f.ends_with("small.rs"))
            .count();
        assert_eq!(small, 3, "the small file's every point is in: {chosen:?}");
        assert_eq!(chosen, stratified(&counts, 10, 7));
        assert_ne!(chosen, stratified(&counts, 10, 8));
        let all = stratified(&counts, 1000, 1);
        assert_eq!(all.len(), 103);
    }
}
