//! Crash points for the crash-torture test. `TEAM_TESTING_CRASH_AT=<point>:<n>` kills the process
//! with SIGKILL the n-th time it passes `<point>` — a kill -9 at an exact place (during a bus
//! write, between a state file's write and its rename, between a claim and its dispatch), so the
//! test is deterministic. Unset, as always outside that test, a point costs one atomic load.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

pub const ENV: &str = "TEAM_TESTING_CRASH_AT";

/// `<point>:<n>` kills; `<point>:<n>:enospc` makes that write fail with "No space left on device"
/// instead (a full disk, where no small filesystem can be mounted).
struct Plan {
    point: String,
    n: u64,
    enospc: bool,
}

static PLAN: OnceLock<Option<Plan>> = OnceLock::new();
static PASSED: AtomicU64 = AtomicU64::new(0);

fn plan() -> &'static Option<Plan> {
    PLAN.get_or_init(|| {
        let value = std::env::var(ENV).ok()?;
        let (rest, enospc) = match value.strip_suffix(":enospc") {
            Some(r) => (r.to_string(), true),
            None => (value, false),
        };
        let (point, n) = rest.rsplit_once(':')?;
        Some(Plan {
            point: point.to_string(),
            n: n.parse().ok().filter(|&n| n > 0)?,
            enospc,
        })
    })
}

/// True the n-th time `point` is passed in kill mode (the caller does its partial work, then
/// [`crash`]).
pub fn due(point: &str) -> bool {
    matches!(plan(), Some(p) if !p.enospc && passes(p, point))
}

fn passes(p: &Plan, point: &str) -> bool {
    p.point == point && PASSED.fetch_add(1, Ordering::SeqCst) + 1 == p.n
}

/// Passes `point`: dies here when it is due.
pub fn hit(point: &str) {
    if due(point) {
        crash();
    }
}

/// A write at `point`: dies when due in kill mode, fails with ENOSPC when due in that mode.
pub fn write(point: &str) -> std::io::Result<()> {
    match plan() {
        Some(p) if passes(p, point) => {
            if p.enospc {
                Err(std::io::Error::from_raw_os_error(libc::ENOSPC))
            } else {
                crash()
            }
        }
        _ => Ok(()),
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
