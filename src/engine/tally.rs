//! What the engines of one run share while it lasts: the count of open connections
//! (so "concurrent connections" is exact with `--threads N`), the figures each engine
//! publishes, and the clock that turns them into reply-rate samples, the `-v` and
//! `--periodic-stats` lines, and the early warning when every connection of the first
//! second was refused (a run aimed at a port nobody listens on would otherwise say so
//! only in its report).
//!
//! Owns the shared atomics and the clock loop, which the runner runs on a helper
//! thread for every run (one engine or several), so the samples and lines are those a
//! single engine would take and print for the same events: a sample at tick T counts
//! every reply completed by then, in whichever engine. Does not measure anything
//! itself (engines do, in their own `Stats`) and does not format the report.
//!
//! Costs on the engine side: one atomic add and one subtract per connection (the open
//! count, exact because every engine adds to the same counter), and a handful of
//! relaxed stores into the engine's own cache line per event-loop iteration; no
//! locks, no allocation. Called by the engine (`EngineTally`) and the runner
//! (`Tally::new`, `clock`, `finish`).

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::engine::clock::{Clock, Monotonic};
use crate::model::stats::{ErrorKind, RateSample, Stats};

/// Reply-rate sampling interval (httperf's RATE_INTERVAL).
pub(crate) const SAMPLE_INTERVAL: Duration = Duration::from_secs(5);

/// `--periodic-stats` interval.
pub(crate) const PERIODIC_INTERVAL: Duration = Duration::from_secs(1);

/// How often the clock looks whether every connection so far was refused, until the
/// first connection is established or refused.
const REFUSAL_CHECK: Duration = Duration::from_secs(1);

/// The figures one engine publishes, on a cache line of its own (written by that
/// engine only, read by the clock).
#[derive(Debug, Default)]
#[repr(align(64))]
struct Slot {
    /// Completed replies of every status class.
    replies: AtomicU64,
    /// Sessions completed successfully.
    sessions: AtomicU64,
    /// Completed replies with status 200 and 302.
    status: [AtomicU64; 2],
    /// Connections established.
    connects: AtomicU64,
    /// Connections refused (`connrefused`).
    refused: AtomicU64,
    /// The engine has left its event loop (its figures are final).
    stopped: AtomicBool,
}

/// The open-connection counter, on a cache line of its own (every engine writes it).
#[derive(Debug, Default)]
#[repr(align(64))]
struct Open {
    now: AtomicU64,
    peak: AtomicU64,
}

/// Shared state of the engines of one run.
#[derive(Debug)]
pub(crate) struct Tally {
    open: Open,
    slots: Vec<Slot>,
    /// Set by the runner when every engine has returned.
    done: AtomicBool,
}

/// The sums of the engines' published figures at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    replies: u64,
    sessions: u64,
    status: [u64; 2],
    connects: u64,
    refused: u64,
}

impl Tally {
    /// A tally for `engines` engines.
    pub(crate) fn new(engines: usize) -> Tally {
        Tally {
            open: Open::default(),
            slots: (0..engines).map(|_| Slot::default()).collect(),
            done: AtomicBool::new(false),
        }
    }

    /// Engine `j`'s handle (None when `j` is out of range).
    pub(crate) fn engine(&self, j: usize) -> Option<EngineTally<'_>> {
        self.slots
            .get(j)
            .map(|slot| EngineTally { tally: self, slot })
    }

    /// Most connection objects that existed at once, over all engines.
    pub(crate) fn peak(&self) -> u64 {
        self.open.peak.load(Ordering::Relaxed)
    }

    /// Tells the clock that every engine has returned (the caller then unparks the
    /// clock's thread so that it notices at once).
    pub(crate) fn finish(&self) {
        self.done.store(true, Ordering::Release);
    }

    /// Whether `finish` was called.
    pub(crate) fn finished(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for s in &self.slots {
            c.replies += s.replies.load(Ordering::Acquire);
            c.sessions += s.sessions.load(Ordering::Acquire);
            c.status[0] += s.status[0].load(Ordering::Acquire);
            c.status[1] += s.status[1].load(Ordering::Acquire);
            c.connects += s.connects.load(Ordering::Acquire);
            c.refused += s.refused.load(Ordering::Acquire);
        }
        c
    }

    /// Whether every engine has left its loop: the run is over.
    fn all_stopped(&self) -> bool {
        self.slots.iter().all(|s| s.stopped.load(Ordering::Acquire))
    }
}

/// One engine's view of the tally.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EngineTally<'t> {
    tally: &'t Tally,
    slot: &'t Slot,
}

impl EngineTally<'_> {
    /// A connection object was created; returns how many exist now in all engines.
    /// The counter is one atomic, so the values it returns are a total order of the
    /// engines' opens and closes and their maximum is the exact peak.
    pub(crate) fn opened(&self) -> u64 {
        let open = &self.tally.open;
        let n = open.now.fetch_add(1, Ordering::Relaxed) + 1;
        // Read first: the shared line is written only when the peak grows.
        if n > open.peak.load(Ordering::Relaxed) {
            open.peak.fetch_max(n, Ordering::Relaxed);
        }
        n
    }

    /// A connection object was destroyed.
    pub(crate) fn closed(&self) {
        self.tally.open.now.fetch_sub(1, Ordering::Relaxed);
    }

    /// Publishes the engine's figures (each event-loop iteration).
    pub(crate) fn publish(&self, stats: &Stats) {
        let s = self.slot;
        s.replies.store(stats.all_replies(), Ordering::Release);
        s.sessions.store(stats.sessions_ok, Ordering::Release);
        s.status[0].store(stats.status_200_302[0], Ordering::Release);
        s.status[1].store(stats.status_200_302[1], Ordering::Release);
        s.connects.store(stats.connects, Ordering::Release);
        let refused = stats.errors[ErrorKind::ConnRefused.index()];
        s.refused.store(refused, Ordering::Release);
    }

    /// Publishes the final figures: the engine has left its loop.
    pub(crate) fn stop(&self, stats: &Stats) {
        self.publish(stats);
        self.slot.stopped.store(true, Ordering::Release);
    }
}

/// What the clock prints on stdout (and stderr) while the run lasts.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClockOptions {
    /// When the first reply-rate sample is due after the start (httperf:
    /// (client id + 1) × 5 s / number of clients); later ones follow every 5 s.
    pub(crate) first_sample: Duration,
    /// `-v`: print `reply-rate = …` at each sample.
    pub(crate) rates: bool,
    /// With `rates`: also `session-rate = …` (session workloads).
    pub(crate) sessions: bool,
    /// `--periodic-stats`: print the 200/302 counts every second.
    pub(crate) periodic: bool,
    /// The target as the warning names it (`127.0.0.1:80`) when every connection of
    /// the first second is refused; None: no such warning.
    pub(crate) refused_target: Option<String>,
}

/// The clock: takes a reply-rate sample every 5 s and prints the `-v` and
/// `--periodic-stats` lines, from the figures the engines publish, until every engine
/// has stopped or `finish` is called; returns the samples (the last, partial
/// interval is dropped, as httperf does). Warns on `err` once when the connections of
/// the first second (or the first one that had any) were all refused, nothing
/// established and no reply. Runs on a helper thread; `out` is stdout, `err` stderr.
pub(crate) fn clock(
    tally: &Tally,
    t0: Instant,
    opts: ClockOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Vec<RateSample> {
    clock_on(
        tally,
        t0,
        opts,
        out,
        err,
        &Monotonic,
        std::thread::park_timeout,
    )
}

/// `clock` reading the time from `time` and waiting with `wait` (at most the given
/// duration; the runner's `finish` cuts it short by unparking): the system's clock
/// and parking in a run, simulated time in the unit tests.
pub(crate) fn clock_on<C: Clock>(
    tally: &Tally,
    t0: Instant,
    opts: ClockOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
    time: &C,
    mut wait: impl FnMut(Duration),
) -> Vec<RateSample> {
    let mut samples = Vec::new();
    let mut next_sample = t0 + opts.first_sample;
    let mut next_periodic = opts.periodic.then(|| t0 + PERIODIC_INTERVAL);
    let mut next_refusal = opts.refused_target.as_ref().map(|_| t0 + REFUSAL_CHECK);
    let (mut last_sample, mut at_sample) = (t0, Counts::default());
    let mut at_periodic = Counts::default();
    // An engine sets `stopped` when it leaves its loop: once all have, the run is over
    // and a tick that comes later is not sampled (a single engine stops sampling too).
    while !tally.done.load(Ordering::Acquire) && !tally.all_stopped() {
        let due = [next_periodic, next_refusal]
            .into_iter()
            .flatten()
            .fold(next_sample, Instant::min);
        let now = time.now();
        if now < due {
            wait(due - now);
            continue;
        }
        let counts = tally.counts();
        if now >= next_sample {
            let seconds = now.saturating_duration_since(last_sample).as_secs_f64();
            let sample = RateSample {
                replies: counts.replies.saturating_sub(at_sample.replies),
                sessions: counts.sessions.saturating_sub(at_sample.sessions),
                seconds,
            };
            if opts.rates {
                let _ = write_rates(out, &sample, opts.sessions);
            }
            samples.push(sample);
            (last_sample, at_sample) = (now, counts);
            next_sample += SAMPLE_INTERVAL;
        }
        if let Some(p) = next_periodic.filter(|p| now >= *p) {
            let since = now.saturating_duration_since(t0).as_secs_f64();
            let _ = write_periodic(out, since, &counts, &at_periodic);
            at_periodic = counts;
            next_periodic = Some(p + PERIODIC_INTERVAL);
        }
        if let Some(r) = next_refusal.filter(|r| now >= *r) {
            next_refusal = if counts.connects > 0 || counts.replies > 0 {
                None
            } else if counts.refused > 0 {
                let target = opts.refused_target.as_deref().unwrap_or("the server");
                let _ = write_refused(err, counts.refused, target);
                None
            } else {
                Some(r + REFUSAL_CHECK)
            };
        }
    }
    samples
}

/// The warning that every connection so far was refused; one write.
fn write_refused(err: &mut dyn Write, refused: u64, target: &str) -> io::Result<()> {
    let text = format!(
        "rshperf: warning: every connection so far was refused ({refused}, no reply): is \
         anything listening on {target}? (the run goes on; Ctrl-C ends it with the report, \
         and --fail-on 'errors_connrefused>0' fails it)\n"
    );
    err.write_all(text.as_bytes())?;
    err.flush()
}

/// `reply-rate = %-8.1f` (and `session-rate = %-8.1f`), as httperf's `-v`; one write,
/// so that no other thread's line comes between them.
fn write_rates(out: &mut dyn Write, s: &RateSample, sessions: bool) -> io::Result<()> {
    let mut text = format!("reply-rate = {:<8.1}\n", s.replies as f64 / s.seconds);
    if sessions {
        text += &format!("session-rate = {:<8.1}\n", s.sessions as f64 / s.seconds);
    }
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// `[%.6f s] 200=%lu, 302=%lu` with the counts since the last line (httperf master).
fn write_periodic(out: &mut dyn Write, since: f64, now: &Counts, last: &Counts) -> io::Result<()> {
    let text = format!(
        "[{since:.6} s] 200={}, 302={}\n",
        now.status[0].saturating_sub(last.status[0]),
        now.status[1].saturating_sub(last.status[1])
    );
    out.write_all(text.as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::clock::Sim;

    #[test]
    fn open_count_is_shared_and_its_peak_exact() {
        let t = Tally::new(2);
        let (a, b) = (t.engine(0).expect("0"), t.engine(1).expect("1"));
        assert!(t.engine(2).is_none());
        assert_eq!(a.opened(), 1);
        assert_eq!(b.opened(), 2);
        a.closed();
        assert_eq!(a.opened(), 2);
        a.closed();
        b.closed();
        // Each engine alone never had more than one open; together they had two.
        assert_eq!(b.opened(), 1);
        assert_eq!(t.peak(), 2);
    }

    #[test]
    fn peak_of_many_threads_is_the_most_open_at_once() {
        let t = Tally::new(4);
        std::thread::scope(|s| {
            for j in 0..4 {
                let e = t.engine(j).expect("engine");
                s.spawn(move || {
                    for _ in 0..10_000 {
                        e.opened();
                        e.closed();
                    }
                    e.opened();
                });
            }
        });
        assert_eq!(t.open.now.load(Ordering::Relaxed), 4);
        assert!((4..=8).contains(&t.peak()), "{}", t.peak());
    }

    fn stats_with(replies_200: u64, replies_302: u64, sessions: u64) -> Stats {
        let mut st = Stats::new();
        for _ in 0..replies_200 {
            st.on_reply(200, 0, 0, 0, Duration::ZERO);
        }
        for _ in 0..replies_302 {
            st.on_reply(302, 0, 0, 0, Duration::ZERO);
        }
        st.on_reply(404, 0, 0, 0, Duration::ZERO);
        st.sessions_ok = sessions;
        st
    }

    #[test]
    fn clock_adds_the_engines_figures_and_prints_httperf_lines() {
        let t = Tally::new(2);
        let opts = ClockOptions {
            first_sample: Duration::from_millis(300),
            rates: true,
            sessions: true,
            periodic: false,
            refused_target: None,
        };
        let (e0, e1) = (t.engine(0).expect("0"), t.engine(1).expect("1"));
        e0.publish(&stats_with(3, 1, 2));
        e1.publish(&stats_with(2, 0, 1));
        let t0 = Instant::now();
        let sim = Sim::new(t0);
        let mut out = Vec::new();
        let samples = clock_on(&t, t0, opts, &mut out, &mut io::sink(), &sim, |d| {
            // Every wake-up 2 ms late; both engines stop before the second sample
            // (due at 5.3 s): it is dropped.
            sim.advance(d + Duration::from_millis(2));
            if sim.peek() > t0 + Duration::from_secs(1) {
                e0.stop(&stats_with(10, 1, 2));
                e1.stop(&stats_with(2, 0, 1));
            }
        });
        assert_eq!(samples.len(), 1, "{samples:?}");
        // 3 + 1 + 1 and 2 + 1 replies of every class; 2 + 1 sessions; over the
        // 302 ms from the start to the late wake-up.
        assert_eq!((samples[0].replies, samples[0].sessions), (8, 3));
        assert_eq!(samples[0].seconds, 0.302);
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            format!(
                "reply-rate = {:<8.1}\nsession-rate = {:<8.1}\n",
                8.0 / 0.302,
                3.0 / 0.302
            )
        );
    }

    #[test]
    fn ticks_keep_to_their_grid_and_a_late_one_shows_its_time() {
        let t = Tally::new(1);
        let e = t.engine(0).expect("0");
        let opts = ClockOptions {
            first_sample: Duration::from_secs(5),
            rates: true,
            sessions: false,
            periodic: true,
            refused_target: None,
        };
        let t0 = Instant::now();
        let sim = Sim::new(t0);
        let mut out = Vec::new();
        let samples = clock_on(&t, t0, opts, &mut out, &mut io::sink(), &sim, |d| {
            sim.advance(d);
            // The tick at 3 s is woken 300 ms late.
            if sim.peek() == t0 + Duration::from_secs(3) {
                sim.advance(Duration::from_millis(300));
            }
            // Two 200s and one 302 every second, as far as the engine has come.
            let ms = (sim.peek() - t0).as_millis() as u64;
            let stats = stats_with(2 * ms / 1000, ms / 1000, 0);
            if ms > 5_500 {
                e.stop(&stats);
            } else {
                e.publish(&stats);
            }
        });
        // A late tick prints its own time; the next keeps to the grid (4 s, not
        // 4.3 s). At 5 s the sample comes first, then the periodic line.
        let want = "[1.000000 s] 200=2, 302=1\n\
                    [2.000000 s] 200=2, 302=1\n\
                    [3.300000 s] 200=2, 302=1\n\
                    [4.000000 s] 200=2, 302=1\n\
                    reply-rate = 3.2     \n\
                    [5.000000 s] 200=2, 302=1\n";
        assert_eq!(String::from_utf8(out).expect("utf-8"), want);
        // 10 + 5 + the one 404 of `stats_with`, over exactly 5 s.
        assert_eq!(samples.len(), 1);
        assert_eq!((samples[0].replies, samples[0].seconds), (16, 5.0));
    }

    #[test]
    fn periodic_lines_count_the_last_second_of_all_engines() {
        let t = Tally::new(2);
        let (e0, e1) = (t.engine(0).expect("0"), t.engine(1).expect("1"));
        e0.publish(&stats_with(2, 1, 0));
        e1.publish(&stats_with(1, 0, 0));
        let mut out = Vec::new();
        // 2 + 1 + 1 and 1 + 0 + 1 replies of every class.
        let now = Counts {
            replies: 6,
            sessions: 0,
            status: [3, 1],
            ..Counts::default()
        };
        assert_eq!(t.counts(), now);
        write_periodic(&mut out, 1.000_25, &now, &Counts::default()).expect("write");
        let later = Counts {
            replies: 9,
            sessions: 0,
            status: [6, 1],
            ..Counts::default()
        };
        write_periodic(&mut out, 2.0, &later, &now).expect("write");
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            "[1.000250 s] 200=3, 302=1\n[2.000000 s] 200=3, 302=0\n"
        );
    }

    #[test]
    fn finish_ends_a_clock_that_waits_for_its_first_sample() {
        let t = Tally::new(1);
        let opts = ClockOptions {
            first_sample: Duration::from_secs(3600),
            ..ClockOptions::default()
        };
        let started = Instant::now();
        let samples = std::thread::scope(|s| {
            let clock =
                s.spawn(|| clock(&t, Instant::now(), opts, &mut io::sink(), &mut io::sink()));
            t.finish();
            clock.thread().unpark();
            clock.join().expect("clock")
        });
        assert!(samples.is_empty());
        assert!(started.elapsed() < Duration::from_secs(60));
    }

    /// Stats with `refused` connections refused and `connects` established.
    fn refusals(refused: u64, connects: u64) -> Stats {
        let mut st = Stats::new();
        st.errors[ErrorKind::ConnRefused.index()] = refused;
        st.connects = connects;
        st
    }

    /// What the clock writes on stderr when the engine's figures at each wake-up are
    /// `at(seconds since the start)`, for a run the engine stops after `end_ms`.
    fn refusal_warning(end_ms: u64, at: impl Fn(u64) -> Stats) -> String {
        let t = Tally::new(1);
        let e = t.engine(0).expect("0");
        let opts = ClockOptions {
            first_sample: Duration::from_secs(5),
            refused_target: Some("127.0.0.1:80".into()),
            ..ClockOptions::default()
        };
        let t0 = Instant::now();
        let sim = Sim::new(t0);
        let (mut out, mut err) = (Vec::new(), Vec::new());
        clock_on(&t, t0, opts, &mut out, &mut err, &sim, |d| {
            sim.advance(d);
            let ms = (sim.peek() - t0).as_millis() as u64;
            if ms >= end_ms {
                e.stop(&at(ms));
            } else {
                e.publish(&at(ms));
            }
        });
        assert!(out.is_empty());
        String::from_utf8(err).expect("utf-8")
    }

    #[test]
    fn a_first_second_of_refusals_is_said_once_at_one_second() {
        // 600 refusals a second, for 30 s: one line, after the first second.
        let err = refusal_warning(30_000, |ms| refusals(600 * ms / 1000, 0));
        assert_eq!(
            err,
            "rshperf: warning: every connection so far was refused (600, no reply): is \
             anything listening on 127.0.0.1:80? (the run goes on; Ctrl-C ends it with the \
             report, and --fail-on 'errors_connrefused>0' fails it)\n"
        );
        // The first attempt only in the third second (--rate 0.4): said then.
        let err = refusal_warning(10_000, |ms| refusals(u64::from(ms >= 2_500), 0));
        assert!(err.contains("refused (1, no reply)"), "{err}");
    }

    #[test]
    fn refusals_beside_a_connection_or_a_short_run_say_nothing() {
        // One connection established among the refusals: the server is there.
        assert_eq!(refusal_warning(10_000, |ms| refusals(ms, 1)), "");
        // Established first, refused later (the server went away): not this warning.
        let late = |ms: u64| {
            if ms < 1_000 {
                refusals(0, 5)
            } else {
                refusals(ms, 5)
            }
        };
        assert_eq!(refusal_warning(10_000, late), "");
        // A run over before the first second: its report says it.
        assert_eq!(refusal_warning(500, |ms| refusals(ms, 0)), "");
        // No target: no check.
        let t = Tally::new(1);
        let e = t.engine(0).expect("0");
        let t0 = Instant::now();
        let sim = Sim::new(t0);
        let mut err = Vec::new();
        clock_on(
            &t,
            t0,
            ClockOptions::default(),
            &mut io::sink(),
            &mut err,
            &sim,
            |d| {
                sim.advance(d);
                e.stop(&refusals(100, 0));
            },
        );
        assert!(err.is_empty());
    }
}
