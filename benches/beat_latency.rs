//! Beat latency: from a worker's task_complete to the successor's dispatch (its worker starting),
//! through the durable bus append and the beat's journal line. A linear chain of 1,000 no-op
//! tasks, with in-process roles and with command roles (`echo`), five runs each; and, as the
//! limit, the disk's fdatasync measured the same way on the same folder.
//!
//! `cargo bench --bench beat_latency` (BENCHMARKS.md has the figures).

mod common;

use std::io::Write;
use std::time::{Duration, Instant};

use common::*;

const CHAIN: usize = 1000;

fn chain_len() -> usize {
    std::env::var("TT_BENCH_CHAIN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CHAIN)
}
const RUNS: usize = 5;

fn chain(role: RoleKind) -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    let n = chain_len();
    let mut s = Synthetic::new(dir.path(), Shape::Deep, n, role, 1);
    let (line, observer) = timeline();
    s.run(Some(observer));
    let line = line.lock().unwrap();
    let mut beats = chain_beats(&line);
    assert_eq!(beats.len(), n - 1, "every link was timed");
    beats.sort();
    beats
}

fn fdatasync_latency() -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    let mut f = std::fs::File::create(dir.path().join("probe.jsonl")).unwrap();
    let line = [b'x'; 300];
    let mut samples: Vec<Duration> = (0..chain_len())
        .map(|_| {
            f.write_all(&line).unwrap();
            let start = Instant::now();
            f.sync_data().unwrap();
            start.elapsed()
        })
        .collect();
    samples.sort();
    samples
}

/// The journal's own write: 8 KiB over zeros already on disk, `O_DIRECT | O_DSYNC` (the floor
/// of a beat where the file system takes direct I/O). None where it does not.
fn direct_overwrite_latency() -> Option<Vec<Duration>> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probe.jsonl");
    let n = chain_len();
    let len = 8192usize;
    std::fs::write(&path, vec![0u8; n * len]).unwrap();
    std::fs::File::open(&path).unwrap().sync_all().unwrap();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT | libc::O_DSYNC)
        .open(&path)
        .ok()?;
    let mut raw = vec![b'x'; len + 4096];
    let at = raw.as_ptr().align_offset(4096);
    let block = &mut raw[at..at + len];
    block[len - 1] = b'\n';
    let mut samples: Vec<Duration> = (0..n)
        .map(|i| {
            let start = Instant::now();
            f.write_all_at(block, (i * len) as u64).ok()?;
            Some(start.elapsed())
        })
        .collect::<Option<_>>()?;
    samples.sort();
    Some(samples)
}

fn report(label: &str, runs: Vec<Vec<Duration>>) {
    let stat = |p: f64| {
        let mut v: Vec<f64> = runs.iter().map(|r| ms(percentile(r, p))).collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    let (p50, p50_lo, p50_hi) = stat(50.0);
    let (p99, p99_lo, p99_hi) = stat(99.0);
    println!(
        "{label:<34} p50 {p50:6.3} ms ({p50_lo:.3}-{p50_hi:.3})   p99 {p99:6.3} ms ({p99_lo:.3}-{p99_hi:.3})"
    );
}

fn main() {
    println!(
        "median over {RUNS} runs of a {}-task chain (min-max of the runs in brackets)",
        chain_len()
    );
    report(
        "fdatasync of a 300-byte append",
        (0..RUNS).map(|_| fdatasync_latency()).collect(),
    );
    match (0..RUNS).map(|_| direct_overwrite_latency()).collect() {
        Some(runs) => report("8 KiB O_DIRECT|O_DSYNC overwrite", runs),
        None => println!("8 KiB O_DIRECT|O_DSYNC overwrite: refused by this file system"),
    }
    report(
        "beat, in-process no-op roles",
        (0..RUNS).map(|_| chain(RoleKind::InProcess)).collect(),
    );
    report(
        "beat, command roles (`echo`)",
        (0..RUNS).map(|_| chain(RoleKind::Command)).collect(),
    );
}
