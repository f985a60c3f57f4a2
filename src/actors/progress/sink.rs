//! Where the plain progress lines go: a thread of their own writes them to stdout or stderr, a
//! few at a time. The actors' thread only appends a line to a buffer, so a slow terminal or a
//! CI log collector never holds up a beat; the writes the run would have made on its way from
//! one task to the next (a terminal's write costs about 10 µs here) happen beside it. An
//! output that stops taking lines (a pipe nobody reads) costs lines, never the run: the buffer
//! is capped, and the end of the run waits for it only while it moves.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the thread lets lines gather after the first: one write for all of them.
const GATHER: Duration = Duration::from_millis(2);

/// Lines waiting beyond this are dropped (and counted) rather than held.
const MAX_PENDING: usize = 16 << 20;

/// How long the end of a run waits for an output that takes nothing.
const PATIENCE: Duration = Duration::from_secs(5);

/// A write's unit: the thread notes its progress after each, so an output that reads slowly
/// but steadily is waited for.
const CHUNK: usize = 4096;

#[derive(Default)]
struct Pending {
    lines: Vec<u8>,
    /// Lines dropped because the output did not keep up.
    dropped: usize,
    /// The thread waits for a line: the next one must wake it (a wake crosses cores; a thread
    /// still writing or gathering takes the line without one).
    asleep: bool,
    closed: bool,
    /// The thread has written everything and ended.
    done: bool,
    /// When the output last took bytes (or the thread last found nothing to write).
    moved: Option<Instant>,
}

struct Shared {
    pending: Mutex<Pending>,
    wake: Condvar,
    /// Held by whoever writes, so the lines leave in the order they came.
    out: Mutex<Box<dyn Write + Send>>,
}

fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The sinks alive in this process, for [`write_pending_lines`].
static LIVE: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());

/// Lines written in order by a thread of their own; everything pushed is written by
/// [`LineSink::finish`] (or the drop) before the caller prints what follows the run.
pub struct LineSink {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
    patience: Duration,
}

impl LineSink {
    /// Lines to `out` (stdout or stderr); None when the thread cannot start: the caller then
    /// writes its lines itself.
    pub fn start(out: Box<dyn Write + Send>) -> Option<LineSink> {
        Self::start_with(out, PATIENCE)
    }

    fn start_with(out: Box<dyn Write + Send>, patience: Duration) -> Option<LineSink> {
        let shared = Arc::new(Shared {
            pending: Mutex::default(),
            wake: Condvar::new(),
            out: Mutex::new(out),
        });
        let thread = std::thread::Builder::new()
            .name("progress-lines".into())
            .spawn({
                let shared = shared.clone();
                move || run(&shared)
            })
            .ok()?;
        let mut live = lock(&LIVE);
        live.retain(|s| s.strong_count() > 0);
        live.push(Arc::downgrade(&shared));
        Some(LineSink {
            shared,
            thread: Mutex::new(Some(thread)),
            patience,
        })
    }

    /// Queues `line` (its `\n` added here).
    pub fn push(&self, line: &str) {
        let mut p = lock(&self.shared.pending);
        if p.lines.len() + line.len() >= MAX_PENDING {
            p.dropped += 1;
            return;
        }
        p.lines.extend_from_slice(line.as_bytes());
        p.lines.push(b'\n');
        if std::mem::take(&mut p.asleep) {
            self.shared.wake.notify_one();
        }
    }

    /// Writes every line pushed so far and stops the thread (lines pushed later are dropped).
    /// Gives up on an output that took nothing for the sink's patience: its lines are lost.
    pub fn finish(&self) {
        let taken = lock(&self.thread).take();
        let Some(thread) = taken else {
            return;
        };
        let mut p = lock(&self.shared.pending);
        p.closed = true;
        self.shared.wake.notify_all();
        loop {
            if p.done {
                drop(p);
                let _ = thread.join();
                return;
            }
            let still = p.moved.map_or(Duration::ZERO, |t| t.elapsed());
            if still >= self.patience {
                return; // the thread stays blocked in its write until the process ends
            }
            let wait = (self.patience - still).min(Duration::from_millis(100));
            p = self
                .shared
                .wake
                .wait_timeout(p, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Drop for LineSink {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Writes what every live sink holds, here and now, for a process about to exit without
/// returning (a panic, a second Ctrl-C). Waits at most a moment for an output in use.
pub fn write_pending_lines() {
    let live: Vec<Arc<Shared>> = lock(&LIVE).iter().filter_map(Weak::upgrade).collect();
    for shared in live {
        let deadline = Instant::now() + Duration::from_millis(500);
        let mut out = loop {
            match shared.out.try_lock() {
                Ok(out) => break Some(out),
                Err(std::sync::TryLockError::Poisoned(e)) => break Some(e.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Err(std::sync::TryLockError::WouldBlock) => break None,
            }
        };
        if let Some(out) = out.as_mut() {
            let lines = std::mem::take(&mut lock(&shared.pending).lines);
            let _ = out.write_all(&lines).and_then(|()| out.flush());
        }
    }
}

fn run(shared: &Shared) {
    let mut batch = Vec::new();
    loop {
        {
            let mut p = lock(&shared.pending);
            p.moved = Some(Instant::now());
            while p.lines.is_empty() && !p.closed {
                p.asleep = true;
                p = shared.wake.wait(p).unwrap_or_else(PoisonError::into_inner);
            }
            if p.lines.is_empty() {
                p.done = true; // closed, and everything written
                shared.wake.notify_all();
                return;
            }
            if !p.closed {
                drop(p);
                std::thread::sleep(GATHER);
            }
        }
        // The output, then the lines: whoever writes takes both in this order, so the lines
        // leave in the order they came.
        let mut out = lock(&shared.out);
        let dropped = {
            let mut p = lock(&shared.pending);
            std::mem::swap(&mut batch, &mut p.lines);
            std::mem::take(&mut p.dropped)
        };
        if dropped > 0 {
            let note = format!(
                "team-testing: {dropped} progress line(s) dropped: the output did not keep up\n"
            );
            batch.extend_from_slice(note.as_bytes());
        }
        for chunk in batch.chunks(CHUNK) {
            // A failed write (a closed pipe) loses progress lines only; the run goes on.
            if out.write_all(chunk).is_err() {
                break;
            }
            lock(&shared.pending).moved = Some(Instant::now());
        }
        let _ = out.flush();
        batch.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A write says it began on the first channel and waits for a go on the second.
    type Gate = Arc<Mutex<(mpsc::Sender<()>, mpsc::Receiver<()>)>>;

    /// What the thread wrote, each write through the gate when there is one.
    #[derive(Clone, Default)]
    struct Screen {
        text: Arc<Mutex<Vec<u8>>>,
        gate: Option<Gate>,
    }

    impl Write for Screen {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if let Some(gate) = &self.gate {
                let gate = gate.lock().unwrap();
                let _ = gate.0.send(());
                let _ = gate.1.recv();
            }
            self.text.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn lines(screen: &Screen) -> Vec<String> {
        let text = screen.text.lock().unwrap();
        String::from_utf8_lossy(&text)
            .lines()
            .map(String::from)
            .collect()
    }

    /// Waits (at most 10 s) until the screen shows `n` lines.
    fn until_shown(screen: &Screen, n: usize) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let shown = lines(screen);
            if shown.len() >= n || Instant::now() > deadline {
                return shown;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn lines_reach_the_output_while_the_run_goes_on_in_order_and_once() {
        let screen = Screen::default();
        let sink = LineSink::start(Box::new(screen.clone())).expect("thread");
        let mut want = Vec::new();
        for burst in 0..4 {
            for i in 0..500 {
                want.push(format!("burst {burst} line {i}"));
                sink.push(want.last().unwrap());
            }
            // Written without finish(): a burst after the thread fell asleep woke it.
            assert_eq!(until_shown(&screen, want.len()), want);
            std::thread::sleep(GATHER * 3);
        }
        sink.finish();
        assert_eq!(lines(&screen), want);
    }

    #[test]
    fn a_stuck_output_holds_up_no_caller_and_its_lines_follow_in_order() {
        let (began_tx, began) = mpsc::channel();
        let (go, go_rx) = mpsc::channel();
        let screen = Screen {
            gate: Some(Arc::new(Mutex::new((began_tx, go_rx)))),
            ..Screen::default()
        };
        let sink = Arc::new(LineSink::start(Box::new(screen.clone())).expect("thread"));
        sink.push("first");
        began
            .recv_timeout(Duration::from_secs(10))
            .expect("the thread is in its write");
        let pushed = {
            let (sink, (tx, rx)) = (sink.clone(), mpsc::channel());
            std::thread::spawn(move || {
                for i in 0..100 {
                    sink.push(&format!("while stuck {i}"));
                }
                let _ = tx.send(());
            });
            rx.recv_timeout(Duration::from_secs(10))
        };
        assert!(pushed.is_ok(), "a push waited for the stuck output");
        assert!(lines(&screen).is_empty(), "the output is still stuck");
        for _ in 0..1000 {
            let _ = go.send(());
        }
        sink.finish();
        let got = lines(&screen);
        assert_eq!(got.len(), 101);
        assert_eq!(got[0], "first");
        assert_eq!(got[100], "while stuck 99");
    }

    #[test]
    fn the_end_of_a_run_gives_up_on_an_output_that_takes_nothing() {
        let (began_tx, _began) = mpsc::channel();
        let (_go, go_rx) = mpsc::channel(); // never says go
        let screen = Screen {
            gate: Some(Arc::new(Mutex::new((began_tx, go_rx)))),
            ..Screen::default()
        };
        let patience = Duration::from_millis(200);
        let sink = LineSink::start_with(Box::new(screen.clone()), patience).expect("thread");
        sink.push("never shown");
        let start = Instant::now();
        sink.finish();
        let waited = start.elapsed();
        assert!(waited >= patience, "gave up after {waited:?}");
        assert!(waited < Duration::from_secs(5), "gave up after {waited:?}");
        assert!(lines(&screen).is_empty());
    }

    #[test]
    fn lines_beyond_the_cap_are_dropped_and_counted_not_held() {
        let mut p = Pending::default();
        p.lines.resize(MAX_PENDING - 1, b'x');
        let shared = Arc::new(Shared {
            pending: Mutex::new(p),
            wake: Condvar::new(),
            out: Mutex::new(Box::new(std::io::sink())),
        });
        let sink = LineSink {
            shared,
            thread: Mutex::new(None),
            patience: PATIENCE,
        };
        sink.push("over the cap");
        let p = lock(&sink.shared.pending);
        assert_eq!((p.lines.len(), p.dropped), (MAX_PENDING - 1, 1));
    }
}
