//! SIGINT and SIGTERM for a whole run: one stop however many copies of the signal come,
//! and a way out when the stop itself hangs.
//!
//! `install` (called by every front end that runs the engines — the classic run, `demo`,
//! `sweep`, `ab`, `lb` — before it reads its workload) catches both for the rest of the
//! process. What a signal does depends on the ones before it (`Escalation`):
//! * the first stops the run: `caught` turns true, which `execute` and each engine look
//!   at before their first connection (the engines also have their own signal pipe that
//!   wakes their poll), and the report and every output are written as after a normal
//!   end;
//! * another within `WINDOW` of the first is the same stop. GNU `timeout` signals
//!   rshperf and then its process group, systemd and container inits (`tini -g`) stop a
//!   process group the same way, a shell may forward the terminal's Ctrl-C: one stop
//!   arrives twice, a few microseconds apart (GNU parallel repeats it for 300 ms);
//! * one `WINDOW` or more after the first is deliberate: a forced exit. The signal
//!   thread (`watch`) abandons the output files still being written (the front end's
//!   `install` argument: their temporary files are removed, the files they would have
//!   replaced are kept as they were; outputs already complete stay), says so on stderr
//!   and ends the process by the signal's default action (status 128 + its number in a
//!   shell). A run stuck before its engines (a `--wlog` FIFO nobody writes) ends so;
//! * should the forced exit not finish (its thread blocked on a full stderr), a signal
//!   `WINDOW` or more after the forcing one takes the default action at once, in the
//!   signal handler itself.
//!
//! The arrival times are taken in the handler, not when a thread gets to them: a loaded
//! machine could delay a thread past the window and turn a duplicate into a forced exit.
//! Uses `signal-hook`; the handler is registered with its `unsafe` low-level call, the
//! one `unsafe` here, because no safe form runs code of ours in the handler.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGINT, SIGTERM};

/// How long after a signal further ones are copies of it. Copies of one stop come
/// microseconds apart (one sender's consecutive `kill` calls: `timeout`, systemd); even
/// a sender descheduled between its two calls on a loaded machine resumes within tens
/// of milliseconds; GNU parallel's default termination sequence repeats SIGTERM to a
/// job's process group 200 and 300 ms after the first (and sends SIGKILL at 350 ms). A
/// second is above all of these, about the time a person takes to see that a Ctrl-C had
/// no visible effect and press it again, and short enough that a stuck run is left
/// after one.
pub(crate) const WINDOW: Duration = Duration::from_secs(1);

/// What a signal means, given the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// The first: stop the run and write the report.
    Stop,
    /// A copy of the first or of the forcing one (within `WINDOW` of it): nothing more.
    Same,
    /// A deliberate second: exit at once, keeping the outputs already complete.
    Force,
    /// A signal after a forced exit that did not finish: the default action, now.
    Kill,
}

/// The signals so far: when the first and the forcing one came (nanoseconds on the
/// monotonic clock, plus 1 so that 0 means none yet) and which they were. Lock-free:
/// `on_signal` runs in the signal handler.
#[derive(Debug)]
pub(crate) struct Escalation {
    first: AtomicU64,
    first_sig: AtomicI32,
    forced: AtomicU64,
    forced_sig: AtomicI32,
}

/// A forced exit: the signal that stopped the run, the one that forced the exit, and
/// the time between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Forced {
    /// The first signal.
    pub(crate) first: i32,
    /// The forcing signal.
    pub(crate) second: i32,
    /// From the first to the forcing one.
    pub(crate) after: Duration,
}

impl Escalation {
    /// No signal yet.
    pub(crate) const fn new() -> Escalation {
        Escalation {
            first: AtomicU64::new(0),
            first_sig: AtomicI32::new(0),
            forced: AtomicU64::new(0),
            forced_sig: AtomicI32::new(0),
        }
    }

    /// Records signal `sig` arriving at `now` (ns on a monotonic clock, above 0) and
    /// says what it means.
    pub(crate) fn on_signal(&self, sig: i32, now: u64) -> Action {
        let window = u64::try_from(WINDOW.as_nanos()).unwrap_or(u64::MAX);
        match self
            .first
            .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => {
                self.first_sig.store(sig, Ordering::Release);
                return Action::Stop;
            }
            Err(first) if now.saturating_sub(first) < window => return Action::Same,
            Err(_) => {}
        }
        match self
            .forced
            .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => {
                self.forced_sig.store(sig, Ordering::Release);
                Action::Force
            }
            Err(forced) if now.saturating_sub(forced) < window => Action::Same,
            Err(_) => Action::Kill,
        }
    }

    /// The first signal, once one came.
    pub(crate) fn first(&self) -> Option<i32> {
        (self.first.load(Ordering::Acquire) != 0)
            .then(|| self.first_sig.load(Ordering::Acquire))
            .filter(|&s| s != 0)
    }

    /// The forced exit, once a signal asked for one.
    pub(crate) fn forced(&self) -> Option<Forced> {
        let at = self.forced.load(Ordering::Acquire);
        let second = self.forced_sig.load(Ordering::Acquire);
        if at == 0 || second == 0 {
            return None;
        }
        let first = self.first.load(Ordering::Acquire);
        Some(Forced {
            first: self.first_sig.load(Ordering::Acquire),
            second,
            after: Duration::from_nanos(at.saturating_sub(first)),
        })
    }
}

/// The process's signals.
static SIGNALS: Escalation = Escalation::new();

/// The zero of the handler's clock (set by `install` before any handler runs).
static BASE: OnceLock<Instant> = OnceLock::new();

/// What a forced exit abandons: set by `install`, it stops the output files being
/// written and returns those not written, each with whether it was written in place
/// (and is now incomplete) rather than to a temporary file (and is left as it was).
pub(crate) type Abandon = fn() -> Vec<(PathBuf, bool)>;

/// The front end's `Abandon`.
static ABANDON: OnceLock<Abandon> = OnceLock::new();

/// Catches SIGINT and SIGTERM for the rest of the process (idempotent); a forced exit
/// calls `abandon` first.
pub(crate) fn install(abandon: Abandon) -> io::Result<()> {
    if BASE.get().is_some() {
        return Ok(());
    }
    let _ = ABANDON.set(abandon);
    BASE.get_or_init(Instant::now);
    let (rx, tx) = UnixStream::pair()?;
    tx.set_nonblocking(true)?;
    for sig in [SIGINT, SIGTERM] {
        // Registered first, so the watcher woken below finds the signal classified.
        register(sig)?;
        signal_hook::low_level::pipe::register(sig, tx.try_clone()?)?;
    }
    std::thread::Builder::new()
        .name("rshperf-signals".into())
        .spawn(move || watch(rx))?;
    Ok(())
}

/// Registers the classifying handler for `sig`.
#[allow(unsafe_code)]
fn register(sig: i32) -> io::Result<()> {
    // SAFETY: the action is async-signal-safe: it reads the monotonic clock
    // (clock_gettime, through `Instant::now` and a `OnceLock` already set), updates
    // atomics in a static and, for `Kill`, restores the default action and raises the
    // signal (sigaction, sigprocmask, raise). It allocates nothing and takes no lock.
    unsafe { signal_hook::low_level::register(sig, move || on_signal(sig)) }.map(drop)
}

/// The handler: classifies the signal; `Kill` ends the process now.
fn on_signal(sig: i32) {
    let now = BASE.get().map_or(1, |base| {
        u64::try_from(base.elapsed().as_nanos())
            .unwrap_or(u64::MAX - 1)
            .saturating_add(1)
    });
    if SIGNALS.on_signal(sig, now) == Action::Kill {
        let _ = signal_hook::low_level::emulate_default_handler(sig);
    }
}

/// The signal thread: woken by each signal, carries out a forced exit.
fn watch(mut rx: UnixStream) {
    let mut buf = [0u8; 16];
    loop {
        match rx.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
        if let Some(forced) = SIGNALS.forced() {
            force_exit(forced);
        }
    }
}

/// Abandons the unfinished outputs, says so, and ends the process by the forcing
/// signal (its default action; a status of 128 + its number should that not end it).
fn force_exit(forced: Forced) -> ! {
    let abandoned = ABANDON.get().map(|f| f()).unwrap_or_default();
    let text = forced_text(forced, &abandoned);
    let _ = io::stderr().lock().write_all(text.as_bytes());
    let _ = signal_hook::low_level::emulate_default_handler(forced.second);
    std::process::exit(128 + forced.second)
}

/// The stderr lines of a forced exit that abandoned `abandoned` (path, written in
/// place).
pub(crate) fn forced_text(forced: Forced, abandoned: &[(PathBuf, bool)]) -> String {
    let mut text = format!(
        "rshperf: interrupted by {}; {} again {:.1} s later: exiting now (the outputs already \
         complete are kept)\n",
        name(forced.first),
        name(forced.second),
        forced.after.as_secs_f64()
    );
    for (path, in_place) in abandoned {
        let path = path.display();
        text.push_str(&if *in_place {
            format!("rshperf: {path} is incomplete: the exit came while writing it\n")
        } else {
            format!(
                "rshperf: {path} not written: the exit came while writing it (the file is as \
                 it was)\n"
            )
        });
    }
    text
}

/// Whether a SIGINT or SIGTERM came since `install` (false when not installed).
pub(crate) fn caught() -> bool {
    SIGNALS.first().is_some()
}

/// The first SIGINT or SIGTERM since `install`, by name (`SIGTERM`).
pub(crate) fn signal_name() -> Option<&'static str> {
    SIGNALS.first().map(name)
}

/// `SIGINT` or `SIGTERM` (the only signals caught here).
fn name(sig: i32) -> &'static str {
    if sig == SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    }
}

/// Waits `d`, or less when a signal comes (checked every 20 ms); true when one came.
pub(crate) fn sleep(d: Duration) -> bool {
    let end = Instant::now() + d;
    while !caught() {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `s` seconds on the simulated clock (its zero is 1 ns, as in the handler).
    fn at(s: f64) -> u64 {
        1 + (s * 1e9) as u64
    }

    #[test]
    fn copies_within_the_window_are_one_stop_and_a_later_signal_forces_the_exit() {
        let e = Escalation::new();
        assert_eq!(e.first(), None);
        assert_eq!(e.on_signal(SIGTERM, at(5.0)), Action::Stop);
        assert_eq!(e.first(), Some(SIGTERM));
        // `timeout`'s copy to the process group, microseconds later, and anything
        // until the window ends.
        assert_eq!(e.on_signal(SIGTERM, at(5.000_002)), Action::Same);
        assert_eq!(e.on_signal(SIGINT, at(5.999_999)), Action::Same);
        assert_eq!(e.forced(), None);
        // Exactly a window later: deliberate.
        assert_eq!(e.on_signal(SIGINT, at(6.0)), Action::Force);
        assert_eq!(
            e.forced(),
            Some(Forced {
                first: SIGTERM,
                second: SIGINT,
                after: Duration::from_secs(1),
            })
        );
        // The forcing signal's own copies are the same forced exit; a signal a window
        // after it ends the process.
        assert_eq!(e.on_signal(SIGINT, at(6.5)), Action::Same);
        assert_eq!(e.on_signal(SIGTERM, at(7.0)), Action::Kill);
        assert_eq!(e.on_signal(SIGTERM, at(100.0)), Action::Kill);
        // The first signal stays the one that stopped the run.
        assert_eq!(e.first(), Some(SIGTERM));
    }

    #[test]
    fn gnu_parallels_repeated_terms_are_one_stop() {
        // Its default --termseq: TERM, 200 ms, TERM, 100 ms, TERM, 50 ms, KILL.
        let e = Escalation::new();
        assert_eq!(e.on_signal(SIGTERM, at(0.0)), Action::Stop);
        assert_eq!(e.on_signal(SIGTERM, at(0.2)), Action::Same);
        assert_eq!(e.on_signal(SIGTERM, at(0.3)), Action::Same);
        assert_eq!(e.forced(), None);
    }

    #[test]
    fn a_signal_long_after_the_first_forces_the_exit_at_once() {
        let e = Escalation::new();
        assert_eq!(e.on_signal(SIGINT, at(0.0)), Action::Stop);
        assert_eq!(e.on_signal(SIGINT, at(3600.0)), Action::Force);
        assert_eq!(e.forced().map(|f| f.after), Some(Duration::from_secs(3600)));
        assert_eq!(e.on_signal(SIGINT, at(3600.0)), Action::Same);
        assert_eq!(e.on_signal(SIGINT, at(3601.0)), Action::Kill);
    }

    #[test]
    fn a_forced_exit_names_both_signals_and_every_abandoned_output() {
        let forced = Forced {
            first: SIGTERM,
            second: SIGINT,
            after: Duration::from_millis(2345),
        };
        assert_eq!(
            forced_text(forced, &[]),
            "rshperf: interrupted by SIGTERM; SIGINT again 2.3 s later: exiting now (the \
             outputs already complete are kept)\n"
        );
        let text = forced_text(
            forced,
            &[
                (PathBuf::from("/d/r.html"), false),
                (PathBuf::from("/d/fifo"), true),
            ],
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1..],
            [
                "rshperf: /d/r.html not written: the exit came while writing it (the file is \
                 as it was)",
                "rshperf: /d/fifo is incomplete: the exit came while writing it",
            ]
        );
    }

    #[test]
    fn a_sleep_without_a_signal_lasts_its_whole_time() {
        // (No signal is ever sent to the unit-test process; the signal's side is in
        // tests/integration/signals.rs.)
        assert!(!caught());
        assert_eq!(signal_name(), None);
        let began = Instant::now();
        assert!(!sleep(Duration::from_millis(50)));
        assert!(began.elapsed() >= Duration::from_millis(50));
    }
}
