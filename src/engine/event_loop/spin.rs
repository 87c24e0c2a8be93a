//! Precise pacing (`--spin`): wake a little before the next arrival through the
//! timerfd, then spin to its scheduled time; and, while handling a batch of I/O
//! events, start an arrival that falls due before the next event would be done.
//!
//! A sleeping thread on a virtual CPU wakes tens to hundreds of microseconds after
//! its timer; that delay would become every arrival's lateness. The engine
//! therefore arms its timer `window()` before the next arrival and, when it wakes
//! with no I/O to handle, spins (reading the monotonic clock) until the arrival is
//! due; with I/O to handle, it handles it and polls without sleeping until then.
//! `--spin=auto` sizes the window from this machine's recent timer wake-ups: the
//! 99th percentile of the last `RECENT` wake-up delays plus a margin, bounded by
//! `pacing::SPIN_AUTO_MAX` (300 µs) and a quarter of the mean inter-arrival time,
//! so spinning stays a small share of the engine's time (a single slow wake-up,
//! such as a preemption, does not widen it: a peak would). When that percentile is
//! beyond the bound (a machine busy with other work preempts the engine for
//! milliseconds), the 95th or else the 90th percentile, whichever fits: spinning
//! longer would not reach the slowest wake-ups, and the CPU it burns would make
//! the scheduler run the engine later still.
//! `--spin=USEC` fixes the window; `--spin=off` sleeps until the arrival.
//!
//! A busy engine (thousands of arrivals a second) rarely sleeps: an arrival falls
//! due while it handles a batch of events, each of which may cost tens of
//! microseconds (a reply, a close). Before each event the engine asks `first()`
//! whether the next arrival is due before that event would be handled (the 90th
//! percentile of recent event costs, at most the window); if so it spins to the
//! arrival and starts it first (`arrival_before_event`).
//!
//! Owns the window, the event-cost estimate and the spin itself; the engine decides
//! when to call them.

use std::time::{Duration, Instant};

use super::Engine;
use crate::engine::clock::Clock;
use crate::model::pacing::{Spin, SPIN_AUTO_MAX};

/// Added to the measured wake-up delay (the wake-up itself and the clock reads).
const MARGIN: Duration = Duration::from_micros(10);
/// Samples kept of recent wake-up delays and of recent event costs.
const RECENT: usize = 256;
/// Samples between two recomputations of a percentile.
const REFRESH: u32 = 16;
/// The window covers the first of these percentiles of the recent wake-up delays
/// that fits within its bound.
const WAKE_PERCENTILES: [u32; 3] = [99, 95, 90];
/// An arrival is started before an event when it falls due within this percentile
/// of the recent event costs.
const EVENT_PERCENTILES: [u32; 1] = [90];

/// The `p`-th percentile (nearest rank, 0 < p ≤ 100) of `samples`; 0 when empty.
/// Reorders `samples`.
pub(super) fn percentile(samples: &mut [u32], p: u32) -> u32 {
    if samples.is_empty() {
        return 0;
    }
    let n = samples.len();
    // Nearest rank: the smallest value with at least p % of the samples ≤ it.
    let rank = (n * p.clamp(1, 100) as usize).div_ceil(100).max(1);
    *samples.select_nth_unstable(rank - 1).1
}

/// The window for wake-up delay percentiles `ps` (highest first) and bound `max`:
/// the first that fits with the margin, else `max`.
pub(super) fn window_for(ps: &[Duration], max: Duration) -> Duration {
    ps.iter()
        .map(|&p| p + MARGIN)
        .find(|&w| w <= max)
        .unwrap_or(max)
}

/// The last `RECENT` samples (µs) and `N` cached percentiles of them.
#[derive(Debug, Clone)]
struct Recent<const N: usize> {
    samples: [u32; RECENT],
    len: usize,
    next: usize,
    /// Samples added since `cached` was computed.
    stale: u32,
    cached: [u32; N],
    p: [u32; N],
}

impl<const N: usize> Recent<N> {
    fn new(p: [u32; N]) -> Recent<N> {
        Recent {
            samples: [0; RECENT],
            len: 0,
            next: 0,
            stale: 0,
            cached: [0; N],
            p,
        }
    }

    /// Adds a sample; the percentile is recomputed after the first sample, then
    /// every `REFRESH` samples.
    fn push(&mut self, us: u32) {
        self.samples[self.next] = us;
        self.next = (self.next + 1) % RECENT;
        self.len = (self.len + 1).min(RECENT);
        self.stale += 1;
        if self.stale >= REFRESH || self.len == 1 {
            let mut scratch = self.samples;
            for (c, &p) in self.cached.iter_mut().zip(&self.p) {
                *c = percentile(&mut scratch[..self.len], p);
            }
            self.stale = 0;
        }
    }

    /// The percentiles of the samples, in the order asked for (None before the
    /// first sample).
    fn get(&self) -> Option<[Duration; N]> {
        (self.len > 0).then(|| self.cached.map(|us| Duration::from_micros(u64::from(us))))
    }
}

/// A duration in whole µs for `Recent` (saturating).
fn micros(d: Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

/// The early-wake window of one engine.
#[derive(Debug, Clone)]
pub(super) struct Spinner {
    /// The window's upper bound (zero: never spin).
    max: Duration,
    /// Whether the window follows the measured wake-up delays.
    auto: bool,
    /// Recent timer wake-up delays.
    wakeups: Recent<3>,
    /// Recent costs of handling one I/O event.
    events: Recent<1>,
}

impl Spinner {
    /// The spinner for `spin` and a schedule with `mean_period` seconds between
    /// arrivals (0: no schedule, no spinning).
    pub(super) fn new(spin: Spin, mean_period: f64) -> Spinner {
        let quarter =
            Duration::try_from_secs_f64(mean_period.max(0.0) / 4.0).unwrap_or(Duration::MAX);
        let (max, auto) = match spin {
            Spin::Off => (Duration::ZERO, false),
            Spin::Auto => (SPIN_AUTO_MAX.min(quarter), true),
            Spin::Fixed(d) => (d, false),
        };
        let max = if mean_period > 0.0 {
            max
        } else {
            Duration::ZERO
        };
        Spinner {
            max,
            auto,
            wakeups: Recent::new(WAKE_PERCENTILES),
            events: Recent::new(EVENT_PERCENTILES),
        }
    }

    /// How long before an arrival the engine wakes: the first of the 99th, 95th
    /// and 90th percentiles of the recent wake-up delays that fits (with the margin)
    /// within the bound, else the bound; before any wake-up was measured, the bound.
    /// (When the slowest wake-ups are far beyond the bound, a busy machine is
    /// preempting the engine: spinning the whole bound would not reach them, and
    /// the CPU it burns makes the scheduler run the engine later still.)
    pub(super) fn window(&self) -> Duration {
        match self.wakeups.get() {
            Some(ps) if self.auto => window_for(&ps, self.max),
            _ => self.max,
        }
    }

    /// A timer wake-up came `late` after its deadline.
    pub(super) fn on_wakeup(&mut self, late: Duration) {
        self.wakeups.push(micros(late));
    }

    /// Handling one I/O event took `cost`.
    pub(super) fn on_event(&mut self, cost: Duration) {
        self.events.push(micros(cost));
    }

    /// Whether an arrival due at `at` should be started before an I/O event is
    /// handled at `now`: it falls due within the usual cost of an event (bounded by
    /// the window: with `--spin=off`, only an arrival already due).
    pub(super) fn first(&self, at: Instant, now: Instant) -> bool {
        let lead = self.events.get().map_or(Duration::ZERO, |[p]| p);
        let lead = lead.min(self.window());
        at <= now + lead
    }

    /// Spins until `at` (reading `clock`) if it lies within the window from now;
    /// returns the time spun (None: nothing to wait for, or too far away to spin).
    pub(super) fn spin_until<C: Clock>(&self, clock: &C, at: Instant) -> Option<Duration> {
        let start = clock.now();
        let wait = at.checked_duration_since(start)?;
        if wait.is_zero() || wait > self.window() {
            return None;
        }
        while clock.now() < at {
            std::hint::spin_loop();
        }
        Some(clock.now().saturating_duration_since(start))
    }
}

impl Engine<'_> {
    /// Before an I/O event of a batch (`last`: when the previous event's handling
    /// began, None for the first): measures the previous event's cost and, when the
    /// next arrival falls due before this event would be handled, spins to it and
    /// starts it first. Returns when this event's handling begins.
    pub(super) fn arrival_before_event(&mut self, last: Option<Instant>) -> Instant {
        let now = Instant::now();
        if let Some(last) = last {
            self.spinner.on_event(now.saturating_duration_since(last));
        }
        let Some(at) = self.pacer.next() else {
            return now;
        };
        if self.closed.is_some() || self.stop.is_some() || !self.spinner.first(at, now) {
            return now;
        }
        if self.arrivals_capped() || self.waits_for_close(at, now) {
            return now;
        }
        self.spin_to_arrival();
        self.on_arrivals(Instant::now());
        Instant::now()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::clock::{Monotonic, Sim};

    #[test]
    fn percentile_is_the_nearest_rank() {
        assert_eq!(percentile(&mut [], 99), 0);
        assert_eq!(percentile(&mut [7], 99), 7);
        let mut v: Vec<u32> = (1..=100).rev().collect();
        assert_eq!(percentile(&mut v, 99), 99);
        assert_eq!(percentile(&mut v, 90), 90);
        assert_eq!(percentile(&mut v, 100), 100);
        assert_eq!(percentile(&mut v, 1), 1);
        // 256 samples: p99 is the 254th smallest (the 3rd largest).
        let mut w: Vec<u32> = (0..256).collect();
        assert_eq!(percentile(&mut w, 99), 253);
    }

    #[test]
    fn window_is_the_first_percentile_that_fits() {
        let us = Duration::from_micros;
        let max = us(300);
        assert_eq!(window_for(&[us(200), us(80), us(50)], max), us(210));
        assert_eq!(window_for(&[us(2000), us(280), us(50)], max), us(290));
        assert_eq!(window_for(&[us(2000), us(1500), us(50)], max), us(60));
        assert_eq!(window_for(&[us(2000), us(1500), us(400)], max), max);
        assert_eq!(window_for(&[], max), max);
    }

    #[test]
    fn auto_window_covers_the_99th_percentile_within_its_bounds() {
        // 600/s: the quarter period (417 µs) is above the 300 µs bound.
        let mut s = Spinner::new(Spin::Auto, 1.0 / 600.0);
        assert_eq!(s.window(), SPIN_AUTO_MAX);
        for _ in 0..RECENT {
            s.on_wakeup(Duration::from_micros(20));
        }
        assert_eq!(s.window(), Duration::from_micros(30));
        // One slow wake-up in 256 (a preemption) does not widen the window...
        s.on_wakeup(Duration::from_millis(3));
        for _ in 0..REFRESH {
            s.on_wakeup(Duration::from_micros(20));
        }
        assert_eq!(s.window(), Duration::from_micros(30));
        // ...2 % of them do: the window covers them.
        for i in 0..RECENT {
            let late = if i % 50 == 0 { 150 } else { 20 };
            s.on_wakeup(Duration::from_micros(late));
        }
        assert_eq!(s.window(), Duration::from_micros(160));
        // 5 % of them far beyond the bound (a busy machine): the 90th percentile.
        for i in 0..RECENT {
            let late = if i % 20 == 0 { 3000 } else { 50 };
            s.on_wakeup(Duration::from_micros(late));
        }
        assert_eq!(s.window(), Duration::from_micros(60));
        // All of them beyond: the bound.
        for _ in 0..RECENT {
            s.on_wakeup(Duration::from_millis(2));
        }
        assert_eq!(s.window(), SPIN_AUTO_MAX);
        // 5,000/s: a quarter of 200 µs.
        let busy = Spinner::new(Spin::Auto, 1.0 / 5000.0);
        assert_eq!(busy.window(), Duration::from_micros(50));
        // 20,000/s: a quarter of 50 µs.
        let fast = Spinner::new(Spin::Auto, 1.0 / 20_000.0);
        assert_eq!(fast.window(), Duration::from_nanos(12_500));
    }

    #[test]
    fn off_fixed_and_unscheduled() {
        assert_eq!(Spinner::new(Spin::Off, 0.01).window(), Duration::ZERO);
        let mut fixed = Spinner::new(Spin::Fixed(Duration::from_micros(300)), 0.0001);
        fixed.on_wakeup(Duration::from_micros(5));
        assert_eq!(fixed.window(), Duration::from_micros(300));
        assert_eq!(Spinner::new(Spin::Auto, 0.0).window(), Duration::ZERO);
    }

    #[test]
    fn an_arrival_goes_first_when_due_within_an_event_cost() {
        let now = Instant::now();
        let mut s = Spinner::new(Spin::Auto, 1.0 / 5000.0);
        // No event measured yet: only a due arrival goes first.
        assert!(s.first(now, now));
        assert!(!s.first(now + Duration::from_micros(1), now));
        for _ in 0..RECENT {
            s.on_event(Duration::from_micros(30));
        }
        assert!(s.first(now + Duration::from_micros(30), now));
        assert!(!s.first(now + Duration::from_micros(31), now));
        // The lead is bounded by the window (a quarter of 200 µs here).
        for _ in 0..RECENT {
            s.on_event(Duration::from_micros(400));
        }
        assert!(s.first(now + Duration::from_micros(50), now));
        assert!(!s.first(now + Duration::from_micros(51), now));
        // --spin=off: only a due arrival goes first (nothing is spun to).
        let mut off = Spinner::new(Spin::Off, 1.0 / 5000.0);
        off.on_event(Duration::from_micros(30));
        assert!(off.first(now, now));
        assert!(!off.first(now + Duration::from_micros(1), now));
    }

    #[test]
    fn spins_only_within_the_window_and_reaches_the_arrival() {
        let us = Duration::from_micros;
        let s = Spinner::new(Spin::Fixed(us(50)), 1.0);
        let t0 = Instant::now();
        // Each clock read costs 7 µs: reads at 0, 7, 14, 21 (due), then the end, 28.
        let clock = Sim::stepping(t0, us(7));
        assert_eq!(s.spin_until(&clock, t0 + us(20)), Some(us(28)));
        assert_eq!(clock.peek(), t0 + us(35));
        // Beyond the window: no spin (the timer wakes the engine nearer the time).
        let clock = Sim::new(t0);
        assert_eq!(s.spin_until(&clock, t0 + us(51)), None);
        // Due already, or now: nothing to wait for.
        assert_eq!(s.spin_until(&clock, t0), None);
        clock.advance(us(10));
        assert_eq!(s.spin_until(&clock, t0 + us(5)), None);
        // Exactly the window away: spun to it.
        let clock = Sim::stepping(t0, us(10));
        assert_eq!(s.spin_until(&clock, t0 + us(50)), Some(us(60)));
        // The real clock reaches the arrival (no bound in wall time: a loaded
        // machine may preempt the spin).
        let real = Spinner::new(Spin::Fixed(Duration::from_millis(5)), 1.0);
        let at = Instant::now() + us(200);
        assert!(real.spin_until(&Monotonic, at).is_some());
        assert!(Instant::now() >= at);
    }
}
