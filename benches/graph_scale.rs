//! Graph scale: synthetic pipelines of 1k, 10k and 100k no-op tasks, wide (independent, 16 at a
//! time) and deep (a chain), run to the end by the real coordinator. Each size runs in a fresh
//! child process so its peak memory is its own. Prints total time, time per task, peak RSS and
//! the 100k/10k ratio (linear growth: 10).
//!
//! `cargo bench --bench graph_scale` (TT_BENCH_MAX_TASKS=10000 skips the 100k runs).

mod common;

use common::*;

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
const CONCURRENCY: usize = 16;

fn one(shape: Shape, n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Synthetic::new(dir.path(), shape, n, RoleKind::InProcess, CONCURRENCY);
    let took = s.run(None);
    let graph = s.session.load_tasks().unwrap();
    assert_eq!(graph.count(team_testing::tasks::TaskStatus::Completed), n);
    println!("{} {}", took.as_secs_f64(), peak_rss_mib());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--one") {
        let shape = if args[i + 1] == "wide" {
            Shape::Wide
        } else {
            Shape::Deep
        };
        one(shape, args[i + 2].parse().unwrap());
        return;
    }
    let max: usize = std::env::var("TT_BENCH_MAX_TASKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX);
    let exe = std::env::current_exe().unwrap();
    for shape in ["wide", "deep"] {
        let mut secs = Vec::new();
        for n in SIZES.into_iter().filter(|&n| n <= max) {
            let out = std::process::Command::new(&exe)
                .args(["--one", shape, &n.to_string()])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8_lossy(&out.stdout);
            let mut fields = text.split_whitespace().map(|f| f.parse::<f64>().unwrap());
            let (took, rss) = (fields.next().unwrap(), fields.next().unwrap());
            println!(
                "{shape:<5} {n:>7} tasks: {took:8.2} s  {:7.1} µs/task  peak RSS {rss:7.1} MiB",
                took / n as f64 * 1e6
            );
            secs.push((n, took));
        }
        let at = |n: usize| secs.iter().find(|s| s.0 == n).map(|s| s.1);
        if let (Some(a), Some(b)) = (at(10_000), at(100_000)) {
            println!("{shape:<5} time 100k/10k = {:.2} (linear: 10)", b / a);
        }
    }
}
