//! SIGINT and SIGTERM for a whole run: caught from the moment the process starts a run
//! (`install`, called by `crate::run` before the command line is read), so a signal at
//! any moment — reading the workload files, the `--start-at` wait, starting the
//! engines — ends the run with a report instead of killing the process.
//!
//! The first signal sets a process-wide flag (`caught`) that `execute` and each
//! engine look at before their first connection; the engines also have their own
//! signal pipe to wake their poll. A second signal while the first is not yet acted
//! on (a process stuck before its engines, e.g. on a FIFO) has the default action:
//! it ends the process, as it would without rshperf's handling. Uses `signal-hook`.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::{SIGINT, SIGTERM};

/// The flag the handlers set (present once `install` ran).
static CAUGHT: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Catches SIGINT and SIGTERM for the rest of the process (idempotent).
pub(crate) fn install() -> io::Result<()> {
    if CAUGHT.get().is_some() {
        return Ok(());
    }
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag as it was before this signal: only a
        // second signal takes the default action.
        signal_hook::flag::register_conditional_default(sig, Arc::clone(&flag))?;
        signal_hook::flag::register(sig, Arc::clone(&flag))?;
    }
    // Two callers at once cannot happen (one call at process start); a lost race
    // would only leave the second set of handlers unused.
    let _ = CAUGHT.set(flag);
    Ok(())
}

/// Whether a SIGINT or SIGTERM came since `install` (false when not installed).
pub(crate) fn caught() -> bool {
    CAUGHT.get().is_some_and(|f| f.load(Ordering::Acquire))
}
