//! Crash points for the crash-torture test. `TEAM_TESTING_CRASH_AT=<point>:<n>` kills the process
//! with SIGKILL the n-th time it passes `<point>` — a kill -9 at an exact place (during a bus
//! write, between a state file's write and its rename, between a claim and its dispatch), so the
//! test is deterministic. Unset, as always outside that test, a point costs one atomic load.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

pub const ENV: &str = "TEAM_TESTING_CRASH_AT";

static PLAN: OnceLock<Option<(String, u64)>> = OnceLock::new();
static PASSED: AtomicU64 = AtomicU64::new(0);

fn plan() -> &'static Option<(String, u64)> {
    PLAN.get_or_init(|| {
        let value = std::env::var(ENV).ok()?;
        let (point, n) = value.rsplit_once(':')?;
        Some((point.to_string(), n.parse().ok().filter(|&n| n > 0)?))
    })
}

/// True the n-th time `point` is passed (the caller does its partial work, then [`crash`]).
pub fn due(point: &str) -> bool {
    match plan() {
        Some((name, n)) if name == point => PASSED.fetch_add(1, Ordering::SeqCst) + 1 == *n,
        _ => false,
    }
}

/// Passes `point`: dies here when it is due.
pub fn hit(point: &str) {
    if due(point) {
        crash();
    }
}

/// kill -9 of this process: no destructor, no flush, no unwinding.
pub fn crash() -> ! {
    // SAFETY: sending a signal to ourselves.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    // The signal may land a moment after kill returns in a threaded process: wait for it.
    loop {
        std::thread::park();
    }
}
