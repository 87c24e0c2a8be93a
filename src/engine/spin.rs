//! Precise pacing (`--spin`): wake a little before the next arrival through the
//! timerfd, then spin to its scheduled time.
//!
//! A sleeping thread on a virtual CPU wakes tens to hundreds of microseconds after
//! its timer; that delay would become every arrival's lateness. The engine
//! therefore arms its timer `window()` before the next arrival and, when it wakes
//! with no I/O to handle, spins (reading the monotonic clock) until the arrival is
//! due; with I/O to handle, it handles it and polls without sleeping until then.
//! `--spin=auto` sizes the window from how late this machine's recent timer
//! wake-ups were (a peak that decays by 1/64 per wake-up), at most
//! `pacing::SPIN_AUTO_MAX` (100 µs) and at most a quarter of the mean
//! inter-arrival time, so spinning stays a small share of the engine's time;
//! `--spin=USEC` fixes it; `--spin=off` sleeps until the arrival.
//!
//! Owns the window and the spin itself; the engine decides when to call them.

use std::time::{Duration, Instant};

use crate::pacing::{Spin, SPIN_AUTO_MAX};

/// Added to the measured wake-up delay (the wake-up itself and the clock reads).
const MARGIN: Duration = Duration::from_micros(10);

/// The early-wake window of one engine.
#[derive(Debug, Clone)]
pub(super) struct Spinner {
    /// The window's upper bound (zero: never spin).
    max: Duration,
    /// Whether the window follows the measured wake-up delays.
    auto: bool,
    /// Decaying peak of the measured wake-up delays.
    peak: Duration,
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
            peak: max,
        }
    }

    /// How long before an arrival the engine wakes.
    pub(super) fn window(&self) -> Duration {
        if self.auto {
            (self.peak + MARGIN).min(self.max)
        } else {
            self.max
        }
    }

    /// A timer wake-up came `late` after its deadline.
    pub(super) fn on_wakeup(&mut self, late: Duration) {
        self.peak = late.max(self.peak - self.peak / 64);
    }

    /// Spins until `at` if it lies within the window from now; returns the time spun
    /// (None: nothing to wait for, or too far away to spin).
    pub(super) fn spin_until(&self, at: Instant) -> Option<Duration> {
        let start = Instant::now();
        let wait = at.checked_duration_since(start)?;
        if wait.is_zero() || wait > self.window() {
            return None;
        }
        while Instant::now() < at {
            std::hint::spin_loop();
        }
        Some(start.elapsed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_window_follows_wakeups_within_its_bounds() {
        // 600/s: the quarter period (417 µs) is above 100 µs, so 100 µs bounds it.
        let mut s = Spinner::new(Spin::Auto, 1.0 / 600.0);
        assert_eq!(s.window(), SPIN_AUTO_MAX);
        for _ in 0..2000 {
            s.on_wakeup(Duration::from_micros(20));
        }
        assert_eq!(s.window(), Duration::from_micros(30));
        s.on_wakeup(Duration::from_micros(500));
        assert_eq!(s.window(), SPIN_AUTO_MAX);
        // 20,000/s: a quarter of 50 µs.
        let fast = Spinner::new(Spin::Auto, 1.0 / 20_000.0);
        assert_eq!(fast.window(), Duration::from_nanos(12_500));
    }

    #[test]
    fn off_fixed_and_unscheduled() {
        assert_eq!(Spinner::new(Spin::Off, 0.01).window(), Duration::ZERO);
        let fixed = Spinner::new(Spin::Fixed(Duration::from_micros(300)), 0.0001);
        assert_eq!(fixed.window(), Duration::from_micros(300));
        assert_eq!(Spinner::new(Spin::Auto, 0.0).window(), Duration::ZERO);
    }

    #[test]
    fn spins_only_within_the_window_and_reaches_the_arrival() {
        let s = Spinner::new(Spin::Fixed(Duration::from_millis(5)), 1.0);
        let start = Instant::now();
        let at = start + Duration::from_millis(2);
        let spun = s.spin_until(at).expect("within the window");
        assert!(Instant::now() >= at);
        // (No upper bound in wall time: a loaded machine may preempt the spin.)
        assert!(spun <= start.elapsed(), "{spun:?}");
        assert_eq!(s.spin_until(Instant::now() + Duration::from_secs(1)), None);
        assert_eq!(s.spin_until(Instant::now()), None);
    }
}
