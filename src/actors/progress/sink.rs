//! Where the plain progress lines go: a thread of their own writes them to stdout or stderr, a
//! few at a time. The actors' thread only appends a line to a buffer, so a slow terminal, a
//! CI log collector or a pipe nobody reads never holds up a beat; the writes the run would
//! have made on its way from one task to the next (a terminal's write costs about 10 µs here)
//! happen beside it.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the thread lets lines gather after the first: one write for all of them.
const GATHER: Duration = Duration::from_millis(2);

#[derive(Default)]
struct Pending {
    lines: Vec<u8>,
    /// The thread waits for a line: the next one must wake it (a wake crosses cores; a thread
    /// still writing or gathering takes the line without one).
    asleep: bool,
    closed: bool,
}

type Shared = Arc<(Mutex<Pending>, Condvar)>;

fn lock(m: &Mutex<Pending>) -> MutexGuard<'_, Pending> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Lines written in order by a thread of their own; everything pushed is written by
/// [`LineSink::finish`] (or the drop), before the caller prints what follows the run.
pub struct LineSink {
    shared: Shared,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl LineSink {
    /// Lines to `out` (stdout or stderr); None when the thread cannot start: the caller then
    /// writes its lines itself.
    pub fn start(out: Box<dyn Write + Send>) -> Option<LineSink> {
        let shared: Shared = Arc::default();
        let thread = std::thread::Builder::new()
            .name("progress-lines".into())
            .spawn({
                let shared = shared.clone();
                move || run(&shared, out)
            })
            .ok()?;
        Some(LineSink {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Queues `line` (its `\n` added here).
    pub fn push(&self, line: &str) {
        let (pending, wake) = &*self.shared;
        let mut p = lock(pending);
        p.lines.extend_from_slice(line.as_bytes());
        p.lines.push(b'\n');
        if std::mem::take(&mut p.asleep) {
            wake.notify_one();
        }
    }

    /// Writes every line pushed so far and stops the thread (lines pushed later are dropped).
    pub fn finish(&self) {
        let taken = self.thread.lock().map(|mut t| t.take());
        let Ok(Some(thread)) = taken else {
            return;
        };
        let (pending, wake) = &*self.shared;
        lock(pending).closed = true;
        wake.notify_one();
        let _ = thread.join();
    }
}

impl Drop for LineSink {
    fn drop(&mut self) {
        self.finish();
    }
}

fn run(shared: &Shared, mut out: Box<dyn Write + Send>) {
    let (pending, wake) = &**shared;
    let mut batch = Vec::new();
    loop {
        {
            let mut p = lock(pending);
            while p.lines.is_empty() && !p.closed {
                p.asleep = true;
                p = wake.wait(p).unwrap_or_else(PoisonError::into_inner);
            }
            if p.lines.is_empty() {
                return; // closed, and everything written
            }
            if !p.closed {
                drop(p);
                std::thread::sleep(GATHER);
                p = lock(pending);
            }
            std::mem::swap(&mut batch, &mut p.lines);
        }
        // A failed write (a closed pipe) loses progress lines only; the run goes on.
        let _ = out.write_all(&batch).and_then(|()| out.flush());
        batch.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// What the thread wrote; each write first waits for a go when `gate` is set.
    #[derive(Clone, Default)]
    struct Screen {
        text: Arc<Mutex<Vec<u8>>>,
        gate: Option<Arc<Mutex<mpsc::Receiver<()>>>>,
    }

    impl Write for Screen {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if let Some(gate) = &self.gate {
                let _ = gate.lock().unwrap().recv();
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

    #[test]
    fn every_line_is_written_once_in_order_by_the_time_finish_returns() {
        let screen = Screen::default();
        let sink = LineSink::start(Box::new(screen.clone())).expect("thread");
        let want: Vec<String> = (0..2000).map(|i| format!("line {i}")).collect();
        for (i, line) in want.iter().enumerate() {
            sink.push(line);
            if i % 500 == 0 {
                // Let the thread fall asleep between bursts: the next line must wake it.
                std::thread::sleep(GATHER * 3);
            }
        }
        sink.finish();
        assert_eq!(lines(&screen), want);
    }

    #[test]
    fn a_stuck_output_holds_up_no_caller() {
        let (go, gate) = mpsc::channel();
        let screen = Screen {
            gate: Some(Arc::new(Mutex::new(gate))),
            ..Screen::default()
        };
        let sink = LineSink::start(Box::new(screen.clone())).expect("thread");
        sink.push("first");
        std::thread::sleep(GATHER * 3); // the thread is now stuck in its write
        for i in 0..100 {
            sink.push(&format!("while stuck {i}"));
        }
        assert!(lines(&screen).is_empty(), "the output is still stuck");
        // Unstick every write the thread may make, then everything is there, in order.
        for _ in 0..1000 {
            let _ = go.send(());
        }
        sink.finish();
        let got = lines(&screen);
        assert_eq!(got.len(), 101);
        assert_eq!(got[0], "first");
        assert_eq!(got[100], "while stuck 99");
    }
}
