//! The engine's loop: poll, hand each turn's events out, meet the deadlines, stop.
//!
//! Owns `Engine::run` (sleep in the backend's wait until the earliest deadline,
//! or nap while HTTP/2 replies stream in; due arrivals before the turn's I/O; the
//! end-of-run accounting and final publication), the choice of that deadline
//! (`next_deadline`, `arm_timer`), what falls due (`on_deadlines`: arrivals, timers,
//! the timeline's seconds, progress and metrics), and the wake-up measurements and
//! spinning (`spin`). Readiness goes to `events`, arrivals to `arrivals`.

use std::io;
use std::time::{Duration, Instant};

use mio::Token;

use crate::engine::clock::Monotonic;
use crate::wire::table::ConnId;

use super::{
    nap, pool, Engine, Outcome, Ready, SIGNAL_TOKEN, TIMELINE_INTERVAL, TIMER_TOKEN, WINDOW_TICK,
};

impl<'c> Engine<'c> {
    /// Handles one ready token of a poll: the timerfd's expiry, a signal (which stops
    /// the run), the pace tick (nothing: its calls go out with the due arrivals), or
    /// a connection's I/O.
    #[inline]
    pub(super) fn on_ready(&mut self, token: Token, ready: Ready) {
        match token {
            TIMER_TOKEN => {
                self.timer_armed = None;
                self.io.timer_fired();
            }
            SIGNAL_TOKEN => {
                self.interrupted = true;
                self.stop.get_or_insert_with(Instant::now);
            }
            pool::PACE_TOKEN => {}
            t => self.on_event(ConnId::from_token(t), ready),
        }
    }

    /// Runs until the end condition, `--runtime` or a signal.
    pub(crate) fn run(mut self) -> io::Result<Outcome> {
        let mut events = self.io.batch();
        let now = Instant::now();
        if crate::engine::interrupt::caught() {
            // A signal before this engine's pipe was registered (`new`): nothing is
            // sent; one after it wakes the first poll.
            self.interrupted = true;
            self.stop = Some(now);
        }
        if self.stop.is_none() {
            match &self.closed {
                Some(c) if c.can_start() => self.pacer.insert(now),
                Some(_) => {}
                None => self.pacer.start(),
            }
            let mut now = now;
            if self.pacer.next().is_some() && self.pool.is_some() {
                self.pool_open_all(now);
                // The schedule begins once the pool is connected (`warmup`).
                self.pool_warm_up(&mut events)?;
                now = Instant::now();
                self.pool_pace_start(now)?;
            }
            // (A signal during the warm-up has stopped the run.)
            if self.stop.is_none() {
                if self.pacer.next().is_some() {
                    self.on_arrivals(now);
                } else {
                    self.stop = Some(now);
                }
            }
        }
        while self.stop.is_none() {
            let nap = if self.nap.wanted() {
                let now = Instant::now();
                // A batched call rate's next call is due too (its own timer wakes a
                // poll, not a nap).
                let call = self.pacer.next().filter(|_| self.pool_batched());
                let due = nap::sooner(self.next_deadline(now), call);
                self.nap.next(now, due)
            } else {
                None
            };
            let timeout = match nap {
                Some(nap) => {
                    // Off the poll's wait queue: arriving replies wake nobody (`nap`).
                    std::thread::sleep(nap);
                    Some(Duration::ZERO)
                }
                None => self.arm_timer()?,
            };
            // The deadline the engine sleeps until (the timerfd's), if it sleeps.
            let sleeps_until = if timeout.is_none() {
                self.timer_armed
            } else {
                None
            };
            match self.io.wait(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            self.iteration += 1;
            self.pacer.turn();
            let woke = Instant::now();
            let mut io_events = 0;
            for (token, _) in events.iter() {
                match token {
                    TIMER_TOKEN => {
                        if let Some(deadline) = sleeps_until {
                            self.on_wakeup(woke.saturating_duration_since(deadline));
                        }
                    }
                    pool::PACE_TOKEN => self.pool_on_pace(timeout.is_none().then_some(woke)),
                    _ => io_events += 1,
                }
            }
            let io_ready = io_events > 0;
            self.nap.after_turn(io_events);
            if !io_ready {
                self.spin_to_arrival();
            }
            // Due arrivals first: pacing should not wait behind this batch's I/O.
            if self.stop.is_none() {
                self.on_arrivals(Instant::now());
            }
            self.h2.hold(true);
            // When the previous I/O event's handling began (`spin`).
            let mut handling = None;
            for (token, ready) in events.iter() {
                if !matches!(token, TIMER_TOKEN | SIGNAL_TOKEN | pool::PACE_TOKEN)
                    && self.stop.is_none()
                {
                    handling = Some(self.arrival_before_event(handling));
                }
                // (The pace tick's calls were issued with this turn's due arrivals.)
                self.on_ready(token, ready);
                if self.stop.is_some() {
                    break;
                }
            }
            self.h2.hold(false);
            self.flush_held();
            if self.stop.is_none() {
                self.on_deadlines(Instant::now());
            }
            self.tally.publish(&self.stats);
        }
        let end = self.stop.unwrap_or_else(Instant::now);
        self.count_unstarted(end);
        self.pool_finish(end);
        self.stats.pacing.deferred = self.pacer.catchup.deferred;
        self.stats.pacing.waited = self.pacer.catchup.waited;
        self.stats.pacing.table_waited = self.pacer.catchup.table_waited;
        self.stats.pacing.conn_table = self.plan.capacity as u64;
        self.stats.pacing.ports_peak = self.portuse.peak();
        self.stats.pacing.port_range = crate::wire::net::port_range();
        self.on_tick(end);
        // Streams still open now end here (not cut), and the connections open now
        // neither ended well nor failed: abandoned, so
        // connections = successful + failed + abandoned.
        for conn in self.table.live_mut() {
            conn.end_stream(end, true, &mut self.stats);
        }
        self.abandon_open(end);
        self.flush_log();
        self.stats.interrupted |= self.interrupted;
        let at = end.saturating_duration_since(self.t0).as_secs_f64();
        if at > self.stats.timeline.covered_s() as f64 {
            let second = self.stats.roll_timeline(self.live, at);
            self.feed_second(second, at);
        }
        self.stats.roll_window(at, true);
        if let Some(m) = self.metrics.as_mut() {
            m.publish(&self.stats, self.live, Instant::now(), true);
        }
        self.tally.stop(&self.stats);
        if self.cfg.output().debug() > 0 && self.nap.taken > 0 {
            crate::wire::note::note!(
                "rshperf: {} naps in {} poll turns",
                self.nap.taken,
                self.iteration
            );
        }
        if self.cfg.output().debug() > 0 {
            let s = &self.bufs.send;
            crate::wire::note::note!(
                "rshperf: buffer pool: {} send queues made, at most {} in use, {} idle",
                s.made(),
                s.peak_out(),
                s.idle()
            );
        }
        for id in self.signal_ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        Ok(Outcome {
            stats: self.stats,
            stopped: self.stop.unwrap_or_else(Instant::now),
            interrupted: self.interrupted,
        })
    }

    /// Arms the timerfd for the earliest deadline; returns the poll timeout (zero when
    /// something is already due, else None: the timerfd wakes the poll).
    fn arm_timer(&mut self) -> io::Result<Option<Duration>> {
        let now = Instant::now();
        let Some(deadline) = self.next_deadline(now) else {
            return Ok(None);
        };
        if deadline <= now {
            return Ok(Some(Duration::ZERO));
        }
        if self.timer_armed != Some(deadline) {
            self.io.set_timer(now, deadline)?;
            self.timer_armed = Some(deadline);
        }
        Ok(None)
    }

    /// The earliest thing the engine must wake for (as of `now`), if any.
    pub(super) fn next_deadline(&self, now: Instant) -> Option<Instant> {
        // An arrival held back until a connection closes needs no timer; the others
        // wake the engine early enough to spin to them (`spin`).
        let arrival = if self.pool_batched() {
            // A batched call rate has its own periodic timer (`pool`).
            None
        } else {
            let window = self.spinner.window();
            self.pacer
                .wake(now, window, self.live, self.arrivals_capped())
        };
        [
            arrival,
            self.wheel.next_deadline(),
            Some(self.next_tick),
            Some(self.next_window),
            self.pacer.runtime_end(),
            self.next_progress,
            self.pool_next_reopen(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn on_deadlines(&mut self, now: Instant) {
        self.on_arrivals(now);
        self.on_timers(now);
        self.pool_reopen_due(now);
        self.on_tick(now);
        if let Some(t) = self.next_progress.filter(|t| now >= *t) {
            if let Some(slot) = self.progress {
                slot.publish(&self.stats);
            }
            if let Some(m) = self.metrics.as_mut() {
                m.publish(&self.stats, self.live, now, false);
            }
            self.next_progress = Some(t + crate::engine::progress::INTERVAL);
        }
        if self.pacer.runtime_end().is_some_and(|end| now >= end) {
            self.stop.get_or_insert(now);
        }
    }

    /// Ends every window tick and timeline second that is over by `now`.
    pub(super) fn on_tick(&mut self, now: Instant) {
        while now >= self.next_window {
            let at = self
                .next_window
                .saturating_duration_since(self.t0)
                .as_secs_f64();
            self.stats.roll_window(at, false);
            self.next_window += WINDOW_TICK;
        }
        while now >= self.next_tick {
            let at = self
                .next_tick
                .saturating_duration_since(self.t0)
                .as_secs_f64();
            let second = self.stats.roll_timeline(self.live, at);
            self.feed_second(second, at);
            self.next_tick += TIMELINE_INTERVAL;
        }
    }

    /// Hands the second that ended at `at` s to the `--timeline` stream, if any.
    fn feed_second(&self, second: crate::model::stats::timeline::Interval, at: f64) {
        if let Some((feed, j)) = self.feed {
            feed.push(j, second, at);
        }
    }

    /// A timer wake-up came `late` after its deadline: measured, and the spin window
    /// follows it (`--spin=auto`).
    pub(super) fn on_wakeup(&mut self, late: Duration) {
        self.spinner.on_wakeup(late);
        self.stats
            .pacing
            .on_wakeup(u64::try_from(late.as_micros()).unwrap_or(u64::MAX));
    }

    /// With nothing else to do, spins to the next arrival when it is due within the
    /// spin window (`--spin`).
    pub(super) fn spin_to_arrival(&mut self) {
        let Some(at) = self.pacer.next() else {
            return;
        };
        if self.closed.is_some() || self.arrivals_capped() || self.stop.is_some() {
            return;
        }
        if let Some(spun) = self.spinner.spin_until(&Monotonic, at) {
            let p = &mut self.stats.pacing;
            p.spins += 1;
            p.spin_us = p
                .spin_us
                .saturating_add(u64::try_from(spun.as_micros()).unwrap_or(u64::MAX));
        }
    }

    /// Counts the arrivals due before the run ended (at `end`, or `--runtime`'s end)
    /// that it never started; the policy defers arrivals but drops none otherwise.
    fn count_unstarted(&mut self, end: Instant) {
        if self.closed.is_some() {
            return;
        }
        self.stats.pacing.unstarted += self.pacer.unstarted(end);
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use crate::engine::clock::{Clock, Sim};

    use super::super::rig;

    #[test]
    fn the_timeline_rolls_each_second_that_is_over_once() {
        let cfg = rig::config(10.0, 5);
        let clock = Sim::new(Instant::now());
        let t0 = clock.now();
        rig::with_engine(&cfg, 0, 1, t0, |e| {
            clock.advance(Duration::from_millis(999));
            e.on_tick(clock.now());
            assert_eq!(e.stats.timeline.intervals.len(), 0);
            assert_eq!(e.next_tick, t0 + Duration::from_secs(1));
            // ... but 9 window ticks.
            assert_eq!(e.stats.windows.windows.len(), 9);
            assert_eq!(e.next_window, t0 + Duration::from_millis(1_000));
            clock.advance(Duration::from_millis(1501));
            e.on_tick(clock.now());
            assert_eq!(e.stats.timeline.intervals.len(), 2);
            assert_eq!(e.next_tick, t0 + Duration::from_secs(3));
            assert_eq!(e.stats.windows.windows.len(), 25);
            // The same instant again rolls nothing.
            e.on_tick(clock.now());
            assert_eq!(e.stats.timeline.intervals.len(), 2);
            assert_eq!(e.stats.windows.windows.len(), 25);
        });
    }

    #[test]
    fn the_engine_wakes_for_the_earliest_deadline_and_stops_at_the_runtime() {
        let cfg = rig::config(10.0, 5);
        let clock = Sim::new(Instant::now());
        let t0 = clock.now();
        // No arrival pending (the pacer is not started): the windows' tick.
        rig::with_engine(&cfg, 0, 1, t0, |e| {
            assert_eq!(e.next_deadline(t0), Some(t0 + Duration::from_millis(100)));
            e.pacer.start();
            // The first arrival (at t0) comes first, less the spin window; once it
            // has started, the second (at t0 + 0.1 s).
            let window = e.spinner.window();
            assert_eq!(e.next_deadline(t0), Some(t0 - window));
            e.pacer.begin();
            e.pacer.schedule_next();
            assert_eq!(
                e.next_deadline(t0),
                Some(t0 + Duration::from_millis(100) - window)
            );
        });
        let mut b = cfg.to_builder();
        b.runtime(0.5);
        let cfg = b.build().expect("a valid configuration").config;
        rig::with_engine(&cfg, 0, 1, t0, |e| {
            e.next_window = t0 + Duration::from_secs(1);
            assert_eq!(e.next_deadline(t0), Some(t0 + Duration::from_millis(500)));
            clock.advance(Duration::from_millis(499));
            e.on_deadlines(clock.now());
            assert_eq!(e.stop, None);
            clock.advance(Duration::from_millis(1));
            e.on_deadlines(clock.now());
            assert_eq!(e.stop, Some(t0 + Duration::from_millis(500)));
        });
    }
}
