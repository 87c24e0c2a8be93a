//! Where the engine's decisions get the time from.
//!
//! The engine's decisions (pacing, catch-up, spinning, watchdogs, naps, the call-rate
//! pool) are pure: they take `now: Instant` as an argument, or a `Clock` when they
//! read the time more than once while deciding (a spin to an arrival). The engine
//! passes `Monotonic`, the system's monotonic clock (a zero-sized type: the
//! generic is monomorphised, nothing is dispatched at run time); unit tests pass
//! `Sim`, simulated time that moves only when the test moves it (or by a fixed step
//! at every read), so every decision can be stepped through deterministically,
//! without sleeping. Owns nothing else.

use std::time::Instant;

/// A source of monotonic time.
pub(crate) trait Clock {
    /// The current time.
    fn now(&self) -> Instant;
}

/// The system's monotonic clock (`Instant::now`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Monotonic;

impl Clock for Monotonic {
    #[inline]
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// Simulated time for unit tests: `now` returns the current value, then moves it on
/// by `step` (zero: time stands still until `advance` or `set`).
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct Sim {
    now: std::cell::Cell<Instant>,
    step: std::time::Duration,
}

#[cfg(test)]
impl Sim {
    /// Simulated time starting at `t0`, standing still.
    pub(crate) fn new(t0: Instant) -> Sim {
        Sim::stepping(t0, std::time::Duration::ZERO)
    }

    /// Simulated time starting at `t0` that moves on by `step` at every read (the
    /// cost of the work between two reads).
    pub(crate) fn stepping(t0: Instant, step: std::time::Duration) -> Sim {
        Sim {
            now: std::cell::Cell::new(t0),
            step,
        }
    }

    /// Moves time on by `d`.
    pub(crate) fn advance(&self, d: std::time::Duration) {
        self.now.set(self.now.get() + d);
    }

    /// Sets the time to `t` (never backwards: a monotonic clock).
    pub(crate) fn set(&self, t: Instant) {
        assert!(t >= self.now.get(), "simulated time goes forward only");
        self.now.set(t);
    }

    /// The current time, without moving it.
    pub(crate) fn peek(&self) -> Instant {
        self.now.get()
    }
}

#[cfg(test)]
impl Clock for Sim {
    fn now(&self) -> Instant {
        let t = self.now.get();
        self.now.set(t + self.step);
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn simulated_time_moves_only_when_told() {
        let t0 = Instant::now();
        let still = Sim::new(t0);
        assert_eq!((still.now(), still.now()), (t0, t0));
        still.advance(Duration::from_millis(3));
        assert_eq!(still.now(), t0 + Duration::from_millis(3));
        still.set(t0 + Duration::from_secs(1));
        assert_eq!(still.peek(), t0 + Duration::from_secs(1));
        let step = Sim::stepping(t0, Duration::from_micros(5));
        assert_eq!(step.now(), t0);
        assert_eq!(step.now(), t0 + Duration::from_micros(5));
        assert_eq!(step.peek(), t0 + Duration::from_micros(10));
        assert!(Monotonic.now() >= t0);
    }
}
