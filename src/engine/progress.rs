//! Live progress on stderr: one line redrawn each second while a run lasts.
//!
//! Owns the shared board the engines publish their counters to (atomics, written once
//! a second by each engine, so the hot path is untouched) and the display loop run by
//! a helper thread of the runner. Shown when stderr is a terminal, or when forced with
//! `--progress`; `--no-progress` turns it off. stdout is never touched.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::model::stats::quantile_ms;
use crate::model::stats::Stats;

/// How often engines publish and the line is redrawn.
pub(crate) const INTERVAL: Duration = Duration::from_secs(1);

/// One engine's published counters.
#[derive(Debug, Default)]
pub(crate) struct Slot {
    connections: AtomicU64,
    replies: AtomicU64,
    errors: AtomicU64,
    /// p99 response time so far, µs.
    p99_us: AtomicU64,
}

impl Slot {
    /// Publishes the engine's current figures.
    pub(crate) fn publish(&self, stats: &Stats) {
        self.connections.store(stats.connections, Ordering::Relaxed);
        self.replies.store(stats.all_replies(), Ordering::Relaxed);
        self.errors.store(stats.total_errors(), Ordering::Relaxed);
        let p99 = (quantile_ms(&stats.hist.response, 0.99) * 1000.0) as u64;
        self.p99_us.store(p99, Ordering::Relaxed);
    }
}

/// The board: one slot per engine, and the "run is over" flag.
#[derive(Debug, Default)]
pub(crate) struct Board {
    /// Per-engine slots.
    pub(crate) slots: Vec<Slot>,
    /// Set by the runner when every engine has stopped.
    pub(crate) done: AtomicBool,
}

/// Whether to show progress: `--progress`/`--no-progress`, else when stderr is a
/// terminal.
pub(crate) fn wanted(forced: Option<bool>) -> bool {
    forced.unwrap_or_else(|| std::io::stderr().is_terminal())
}

/// The progress line for these totals.
pub(crate) fn line(
    elapsed: f64,
    conns: u64,
    replies: u64,
    rate: f64,
    errors: u64,
    p99_ms: f64,
) -> String {
    format!(
        "rshperf: {elapsed:.0} s  connections {conns}  replies {replies}  reply rate {rate:.1}/s  errors {errors}  p99 {p99_ms:.3} ms"
    )
}

/// Redraws the line every `INTERVAL` until `board.done`; clears it at the end. The
/// p99 shown is the largest of the engines' p99s (exact with one engine).
pub(crate) fn display(board: &Board, t0: Instant) {
    let mut err = std::io::stderr();
    let mut last_replies = 0u64;
    let mut last = t0;
    // Read a little after the engines' publishing tick, so the figures are fresh.
    let mut next = t0 + INTERVAL + Duration::from_millis(100);
    while !board.done.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(50)));
            continue;
        }
        next += INTERVAL;
        let sum = |f: fn(&Slot) -> &AtomicU64| {
            board
                .slots
                .iter()
                .map(|s| f(s).load(Ordering::Relaxed))
                .sum::<u64>()
        };
        let replies = sum(|s| &s.replies);
        let p99 = board
            .slots
            .iter()
            .map(|s| s.p99_us.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0);
        let secs = now.saturating_duration_since(last).as_secs_f64().max(1e-9);
        let rate = replies.saturating_sub(last_replies) as f64 / secs;
        let text = line(
            now.saturating_duration_since(t0).as_secs_f64(),
            sum(|s| &s.connections),
            replies,
            rate,
            sum(|s| &s.errors),
            p99 as f64 / 1000.0,
        );
        let _ = write!(err, "\r\x1b[2K{text}");
        let _ = err.flush();
        last_replies = replies;
        last = now;
    }
    let _ = write!(err, "\r\x1b[2K");
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_shows_every_figure() {
        assert_eq!(
            line(3.2, 300, 290, 99.95, 2, 1.5),
            "rshperf: 3 s  connections 300  replies 290  reply rate 100.0/s  errors 2  p99 1.500 ms"
        );
    }

    #[test]
    fn slots_publish_engine_figures() {
        let mut st = Stats::new();
        st.on_connecting();
        st.on_response(Duration::from_millis(2));
        st.on_reply(200, 1, 1, 0, Duration::ZERO);
        let slot = Slot::default();
        slot.publish(&st);
        assert_eq!(slot.connections.load(Ordering::Relaxed), 1);
        assert_eq!(slot.replies.load(Ordering::Relaxed), 1);
        let p99 = slot.p99_us.load(Ordering::Relaxed);
        assert!((1990..=2010).contains(&p99), "{p99}");
    }
}
