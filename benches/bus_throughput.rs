//! Bus throughput: durable messages per second into messages.jsonl through the writer thread's
//! group commit, with 1, 4 and 16 publishers; and the file's raw sequential write speed for the
//! same bytes (one buffered write stream and one fdatasync), the physical limit.
//!
//! `cargo bench --bench bus_throughput`

use std::io::Write;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use team_testing::bus::message::Progress;
use team_testing::bus::{Message, Payload, Writer};

const MESSAGES: usize = 64_000;

fn message(publisher: usize, i: usize) -> Message {
    Message::new(
        &format!("executor-{publisher}"),
        "coordinator",
        format!("[executor-{publisher}] TESTRUN-{i:03}: running tests/L1-unit (step {i})"),
        Payload::Progress(Progress {
            task_id: format!("TESTRUN-{:03}", i % 1000),
            phase: "running".into(),
            progress_pct: Some((i % 100) as f64),
            detail: Some("pytest -q tests/L1-unit".into()),
        }),
    )
}

/// Publishes MESSAGES from `publishers` threads, then waits until all are on disk.
fn durable_append(publishers: usize) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let writer = Writer::open(
        &dir.path().join("messages.jsonl"),
        &dir.path().join("meta.json"),
    )
    .unwrap();
    let per = MESSAGES / publishers;
    let messages: Vec<Vec<Message>> = (0..publishers)
        .map(|p| (0..per).map(|i| message(p, i)).collect())
        .collect();
    let start = Instant::now();
    std::thread::scope(|s| {
        for batch in messages {
            let handle = writer.handle();
            s.spawn(move || {
                for m in batch {
                    handle.append(&m);
                }
                handle.sync().unwrap();
            });
        }
    });
    let took = start.elapsed();
    writer.close();
    took
}

/// The same number of lines of the same size, written as one stream and fdatasynced once.
fn raw_write() -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let line = {
        let mut l = serde_json::to_vec(&serde_json::json!({
            "id": "MSG-000001", "ts": "2026-12-03T10:00:00.000+00:00", "from": "executor-0",
            "to": "coordinator", "type": "progress",
            "summary": "[executor-0] TESTRUN-001: running tests/L1-unit (step 1)",
            "data": {"task_id": "TESTRUN-001", "phase": "running", "progress_pct": 1.0,
                     "detail": "pytest -q tests/L1-unit"}
        }))
        .unwrap();
        l.push(b'\n');
        l
    };
    let start = Instant::now();
    let file = std::fs::File::create(dir.path().join("raw.jsonl")).unwrap();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    for _ in 0..MESSAGES {
        out.write_all(&line).unwrap();
    }
    let file = out.into_inner().unwrap();
    file.sync_data().unwrap();
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("bus");
    group.throughput(Throughput::Elements(MESSAGES as u64));
    group.sample_size(10);
    for publishers in [1, 4, 16] {
        group.bench_with_input(
            BenchmarkId::new("durable_append", publishers),
            &publishers,
            |b, &p| b.iter_custom(|iters| (0..iters).map(|_| durable_append(p)).sum()),
        );
    }
    group.bench_function("raw_sequential_write", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| raw_write()).sum())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
