//! Bounded catch-up: what an open-loop engine does when it falls behind its schedule
//! (`--overload=degrade`, the default; `--overload=queue` is httperf's behaviour).
//!
//! An engine that is late by more than `late_after` (the larger of 1 ms and one
//! mean inter-arrival time) is *behind*. While behind it
//! - starts at most `per_turn` overdue arrivals per loop turn (about 2 ms of the
//!   schedule's arrivals, at least 16), so the replies and closes of the
//!   connections already open are handled between bursts instead of after one
//!   unbounded burst that makes the engine later still;
//! - starts no arrival while `cap` connections are open (a quarter of the
//!   connection table, or twice as many as were open when it fell behind, if that
//!   is more), so the table and the source addresses' port ranges never fill up; a
//!   close lets the next arrival in. (The second bound keeps a hiccup of a client
//!   that holds many connections for a slow server, or sessions thinking, from
//!   turning into a cap that keeps it behind for good.)
//!
//! And at any time, an arrival that finds the connection table full waits for a
//! close instead of failing (httperf counts it as `fd-unavail`).
//!
//! Deferred arrivals are not dropped: each is started as soon as the bound allows,
//! and its lateness is measured from its scheduled time. Only a run that ends
//! (`--runtime`, a signal) leaves arrivals unstarted, and counts them
//! (`stats.pacing.unstarted`). An engine on schedule is held back only by a full
//! table, however many connections it has open (a slow server is not the client's
//! overload).
//!
//! Pure logic: the engine asks `admit` before each arrival and calls `turn` once per
//! loop turn. Owns no I/O; its figures go to `stats::pacing`.

use std::time::{Duration, Instant};

use crate::model::pacing::Overload;

/// Shortest lateness that counts as being behind.
const LATE_AFTER_MIN: Duration = Duration::from_millis(1);
/// Catch-up per loop turn: the arrivals of this much of the schedule…
const TURN_SPAN: Duration = Duration::from_millis(2);
/// …but at least this many.
const PER_TURN_MIN: u64 = 16;
/// Connections in flight while behind: this fraction (1/n) of the table…
const CAP_FRACTION: usize = 4;
/// …but at least this many.
const CAP_MIN: usize = 64;

/// Whether an arrival may start now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Gate {
    /// Start it.
    Go,
    /// Behind, and this turn's catch-up is used up: next turn.
    Turn,
    /// Behind, and `cap` connections are open: when one closes.
    Full,
}

/// The catch-up bound of one engine.
#[derive(Debug, Clone)]
pub(super) struct CatchUp {
    /// False under `--overload=queue`: every arrival goes.
    bounded: bool,
    late_after: Duration,
    per_turn: u64,
    cap: u64,
    /// The connection table's size.
    table: u64,
    /// Arrivals started in the current loop turn.
    started: u64,
    /// The policy has held arrivals back since the engine was last on schedule.
    engaged: bool,
    /// Connections open when the engine fell behind (None: on schedule).
    fell_behind_at: Option<u64>,
    /// Arrivals started behind schedule after the policy held arrivals back (they
    /// waited for it, or queued behind one that did).
    pub(super) deferred: u64,
    /// The policy held arrivals back because connections were full (`Gate::Full`)
    /// since the engine was last on schedule.
    full: bool,
    /// Deferred arrivals started after such a wait for a close.
    pub(super) waited: u64,
    /// The arrival now due found the connection table full (`Gate::Full` with
    /// `open >= table`) and waits for a close.
    held_by_table: bool,
    /// Arrivals that waited for a close because the connection table (sized from
    /// the descriptor limit) was full, on schedule or not.
    pub(super) table_waited: u64,
}

impl CatchUp {
    /// The bound for `policy`, a schedule with `mean_period` seconds between arrivals
    /// (0: no schedule) and a table of `capacity` connections.
    pub(super) fn new(policy: Overload, mean_period: f64, capacity: usize) -> CatchUp {
        let period = Duration::try_from_secs_f64(mean_period.max(0.0)).unwrap_or(Duration::MAX);
        let per_turn = if mean_period > 0.0 {
            (TURN_SPAN.as_secs_f64() / mean_period).ceil() as u64
        } else {
            0
        };
        CatchUp {
            bounded: policy == Overload::Degrade && mean_period > 0.0,
            late_after: period.max(LATE_AFTER_MIN),
            per_turn: per_turn.max(PER_TURN_MIN),
            cap: (capacity / CAP_FRACTION).max(CAP_MIN).min(capacity) as u64,
            table: capacity as u64,
            started: 0,
            engaged: false,
            fell_behind_at: None,
            deferred: 0,
            full: false,
            waited: 0,
            held_by_table: false,
            table_waited: 0,
        }
    }

    /// The cap on connections in flight while behind (0 when unbounded).
    pub(super) fn cap(&self) -> u64 {
        if self.bounded {
            self.cap
        } else {
            0
        }
    }

    /// The cap while behind: `cap`, or twice the connections open when the engine
    /// fell behind (`open` now, if it has only just), within the table.
    fn cap_behind(&self, open: u64) -> u64 {
        let base = self.fell_behind_at.unwrap_or(open);
        self.cap.max(base.saturating_mul(2)).min(self.table)
    }

    /// A new loop turn begins.
    pub(super) fn turn(&mut self) {
        self.started = 0;
    }

    /// Whether the arrival scheduled at `at` may start at `now` with `open`
    /// connections open; an arrival that goes counts as started in this turn, and
    /// as deferred when the policy has held arrivals back while it was due.
    pub(super) fn admit(&mut self, at: Instant, now: Instant, open: u64) -> Gate {
        let on_schedule = now.saturating_duration_since(at) <= self.late_after;
        if on_schedule {
            self.fell_behind_at = None;
        } else if self.fell_behind_at.is_none() {
            self.fell_behind_at = Some(open);
        }
        let gate = self.gate(at, now, open);
        match gate {
            Gate::Go => {
                self.started += 1;
                if std::mem::take(&mut self.held_by_table) {
                    self.table_waited += 1;
                }
                if on_schedule {
                    self.engaged = false;
                    self.full = false;
                } else if self.engaged {
                    self.deferred += 1;
                    self.waited += u64::from(self.full);
                }
            }
            Gate::Turn => self.engaged = true,
            Gate::Full => {
                self.engaged = true;
                self.full = true;
                self.held_by_table |= open >= self.table;
            }
        }
        gate
    }

    /// `admit` without counting: whether the engine waits for a close (`Full`) before
    /// the arrival at `at` may start.
    pub(super) fn gate(&self, at: Instant, now: Instant, open: u64) -> Gate {
        if !self.bounded {
            Gate::Go
        } else if open >= self.table {
            Gate::Full
        } else if now.saturating_duration_since(at) <= self.late_after {
            Gate::Go
        } else if open >= self.cap_behind(open) {
            Gate::Full
        } else if self.started >= self.per_turn {
            Gate::Turn
        } else {
            Gate::Go
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn on_schedule_only_a_full_table_holds_arrivals_back() {
        let t0 = Instant::now();
        let mut c = CatchUp::new(Overload::Degrade, 1.0 / 17_000.0, 20_000);
        // 0.5 ms late is on schedule; 19,999 connections open do not matter then.
        for _ in 0..1000 {
            assert_eq!(
                c.admit(t0, t0 + Duration::from_micros(500), 19_999),
                Gate::Go
            );
        }
        assert_eq!(c.deferred, 0);
        // A full table: wait for a close rather than fail; on schedule when it goes,
        // so not counted.
        assert_eq!(c.admit(t0, t0, 20_000), Gate::Full);
        assert_eq!(c.admit(t0, t0, 20_000), Gate::Full);
        assert_eq!(c.admit(t0, t0, 19_999), Gate::Go);
        assert_eq!(c.deferred, 0);
        // It waited for the table, once however often it was asked.
        assert_eq!(c.table_waited, 1);
        assert_eq!(c.admit(t0, t0, 19_999), Gate::Go);
        assert_eq!(c.table_waited, 1);
    }

    #[test]
    fn a_table_of_one_connection_runs_one_connection_at_a_time_and_counts_the_waits() {
        // A descriptor limit that leaves one connection: every arrival after the
        // first waits for the previous one to close.
        let t0 = Instant::now();
        let mut c = CatchUp::new(Overload::Degrade, 0.001, 1);
        assert_eq!(c.admit(t0, t0, 0), Gate::Go);
        for k in 1..=5u64 {
            let at = t0 + ms(k);
            assert_eq!(c.admit(at, at + ms(3), 1), Gate::Full);
            assert_eq!(c.admit(at, at + ms(4), 0), Gate::Go);
        }
        assert_eq!(c.table_waited, 5);
        // Behind with a roomy table, the cap on connections in flight is no table wait.
        let mut roomy = CatchUp::new(Overload::Degrade, 0.001, 1000);
        assert_eq!(roomy.admit(t0, t0 + ms(50), 10), Gate::Go);
        assert_eq!(roomy.admit(t0 + ms(1), t0 + ms(50), 250), Gate::Full);
        assert_eq!(roomy.admit(t0 + ms(1), t0 + ms(50), 0), Gate::Go);
        assert_eq!((roomy.waited, roomy.table_waited), (1, 0));
    }

    #[test]
    fn behind_the_catch_up_per_turn_is_bounded_and_deferred_arrivals_counted() {
        let t0 = Instant::now();
        // 17,000/s: 2 ms of arrivals is 34 per turn.
        let mut c = CatchUp::new(Overload::Degrade, 1.0 / 17_000.0, 20_000);
        let now = t0 + ms(50);
        let mut go = 0;
        for k in 0..100u64 {
            let at = t0 + Duration::from_micros(k * 59);
            if c.admit(at, now, 10) == Gate::Go {
                go += 1;
            } else {
                assert_eq!(c.admit(at, now, 10), Gate::Turn);
                break;
            }
        }
        assert_eq!(go, 34);
        assert_eq!(c.deferred, 0);
        // Next turn: the held-back arrival and those behind it are deferred ones…
        c.turn();
        assert_eq!(c.admit(t0 + ms(2), now, 10), Gate::Go);
        assert_eq!(c.admit(t0 + ms(3), now, 10), Gate::Go);
        assert_eq!(c.deferred, 2);
        // …until the engine is back on schedule.
        assert_eq!(c.admit(now, now, 10), Gate::Go);
        assert_eq!(c.admit(t0 + ms(4), now, 10), Gate::Go);
        assert_eq!(c.deferred, 2);
        // The per-turn bound held them, not full connections.
        assert_eq!(c.waited, 0);
    }

    #[test]
    fn arrivals_held_by_full_connections_count_as_waited() {
        let t0 = Instant::now();
        let mut c = CatchUp::new(Overload::Degrade, 0.001, 100);
        let now = t0 + ms(30);
        assert_eq!(c.admit(t0, now, 100), Gate::Full);
        assert_eq!(c.admit(t0, now, 99), Gate::Go);
        assert_eq!(c.admit(t0 + ms(1), now, 99), Gate::Go);
        assert_eq!((c.deferred, c.waited), (2, 2));
        // Back on schedule: a later per-turn hold is not a wait for a close.
        assert_eq!(c.admit(now, now, 10), Gate::Go);
        c.turn();
        for k in 0..16 {
            assert_eq!(c.admit(t0 + ms(10 + k), now, 10), Gate::Go);
        }
        assert_eq!(c.admit(t0 + ms(26), now, 10), Gate::Turn);
        c.turn();
        assert_eq!(c.admit(t0 + ms(26), now, 10), Gate::Go);
        assert_eq!((c.deferred, c.waited), (3, 2));
    }

    #[test]
    fn behind_the_connections_in_flight_are_capped_at_a_quarter_of_the_table() {
        let t0 = Instant::now();
        let mut c = CatchUp::new(Overload::Degrade, 0.001, 20_000);
        assert_eq!(c.cap(), 5_000);
        let now = t0 + ms(30);
        // Fell behind with 10 open: the quarter of the table binds.
        assert_eq!(c.admit(t0, now, 10), Gate::Go);
        assert_eq!(c.admit(t0, now, 5_000), Gate::Full);
        assert_eq!(c.gate(t0, now, 4_999), Gate::Go);
        // Late by less than one period (here 1 ms) is on schedule.
        assert_eq!(c.gate(now - ms(1), now, 6_000), Gate::Go);
        // Fell behind with 6,000 open (a slow server, sessions thinking): twice that.
        let mut busy = CatchUp::new(Overload::Degrade, 0.001, 20_000);
        assert_eq!(busy.admit(t0, now, 6_000), Gate::Go);
        assert_eq!(busy.admit(t0, now, 11_999), Gate::Go);
        assert_eq!(busy.admit(t0, now, 12_000), Gate::Full);
        // Back on schedule, then behind again with few open: the quarter again.
        assert_eq!(busy.admit(now, now, 100), Gate::Go);
        busy.turn();
        assert_eq!(busy.admit(t0, now, 100), Gate::Go);
        assert_eq!(busy.admit(t0, now, 5_000), Gate::Full);
        // Small tables keep a floor, never above the table itself.
        assert_eq!(CatchUp::new(Overload::Degrade, 0.001, 100).cap(), 64);
        assert_eq!(CatchUp::new(Overload::Degrade, 0.001, 10).cap(), 10);
        // Slow schedules: behind means later than one period.
        let mut slow = CatchUp::new(Overload::Degrade, 0.5, 20_000);
        assert_eq!(slow.admit(t0, t0 + ms(400), 1), Gate::Go);
        assert_eq!(slow.admit(t0, t0 + ms(600), 1), Gate::Go);
        assert_eq!(slow.gate(t0, t0 + ms(400), 6_000), Gate::Go);
        assert_eq!(slow.gate(t0, t0 + ms(600), 6_000), Gate::Full);
        // At most 16 per turn at low rates.
        assert_eq!(slow.per_turn, 16);
    }

    #[test]
    fn queue_and_closed_loops_are_unbounded() {
        let t0 = Instant::now();
        for c in [
            CatchUp::new(Overload::Queue, 1.0 / 17_000.0, 20_000),
            CatchUp::new(Overload::Degrade, 0.0, 20_000),
        ] {
            let mut c = c;
            assert_eq!(c.cap(), 0);
            for _ in 0..1000 {
                assert_eq!(c.admit(t0, t0 + ms(500), 19_999), Gate::Go);
            }
        }
    }
}
