//! A hashed timing wheel for connection watchdogs and think times.
//!
//! Owns deadlines and their payloads; O(1) schedule and cancel, no allocation after
//! construction (entries live in a fixed-capacity slab with intrusive lists). Timers
//! never fire early: a deadline fires at the first `expire(now)` with `now >= deadline`.
//! Stale `TimerId`s (already fired or cancelled) are inert thanks to a generation
//! counter. Arrival pacing does not use the wheel (it needs sub-millisecond precision
//! and has its own absolute schedule); called by the engine.

use std::time::{Duration, Instant};

/// Handle to a scheduled timer: slab slot plus generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimerId {
    slot: u32,
    generation: u32,
}

/// The timing wheel, carrying a `Copy` payload per timer.
pub struct TimerWheel<T: Copy> {
    _p: std::marker::PhantomData<T>,
}

impl<T: Copy> TimerWheel<T> {
    /// A wheel starting at `start`, with `tick` resolution and room for `capacity`
    /// simultaneous timers (the slab never grows beyond it).
    pub fn new(start: Instant, tick: Duration, capacity: usize) -> Self {
        todo!()
    }

    /// Schedules `payload` at `deadline` (a past deadline fires at the next `expire`).
    /// Returns None only when `capacity` timers are already pending.
    pub fn schedule(&mut self, deadline: Instant, payload: T) -> Option<TimerId> {
        todo!()
    }

    /// Cancels a pending timer; returns false if it already fired or was cancelled.
    pub fn cancel(&mut self, id: TimerId) -> bool {
        todo!()
    }

    /// Number of pending timers.
    pub fn len(&self) -> usize {
        todo!()
    }

    /// True when no timer is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A time at or before the earliest pending deadline, at most one tick early,
    /// never later than it; None when nothing is pending. The engine sleeps until then.
    pub fn next_deadline(&self) -> Option<Instant> {
        todo!()
    }

    /// Removes every timer whose deadline is <= `now` and calls `fire` with its payload,
    /// in deadline order within tick resolution. `fire` may not touch the wheel; collect
    /// follow-up work and schedule it after `expire` returns.
    pub fn expire(&mut self, now: Instant, fire: impl FnMut(T)) {
        todo!()
    }
}
