//! The timer wheel's side of the engine: arming a connection's watchdog, expiring
//! timers, and a watchdog that fires (timed out, re-armed or idle); an HTTP/3
//! connection's QUIC timer shares its watchdog timer (`Conn::timer_due`).
//!
//! The decisions are `timers`' (pure, tested on the simulated clock); think-time
//! timers go to `session`, timed-out connections to `finish`. Called by `run`,
//! `events` and the workload halves.

use std::time::Instant;

use crate::engine::conn::Step;
use crate::wire::table::ConnId;

use super::{timers, Engine, Timer};

impl<'c> Engine<'c> {
    /// Makes sure a timer is pending no later than the connection's deadline. A later
    /// deadline leaves the earlier timer in place: it re-arms itself when it fires.
    pub(super) fn arm_watchdog(&mut self, id: ConnId) {
        if let Some(conn) = self.table.get_mut(id) {
            // HTTP/3: QUIC's own timer shares the connection's one timer.
            let deadline = conn.timer_due();
            timers::arm(
                &mut self.wheel,
                &mut conn.armed,
                deadline,
                Timer::Watchdog(id),
            );
        }
    }

    pub(super) fn on_timers(&mut self, now: Instant) {
        let mut fired = std::mem::take(&mut self.fired);
        self.wheel.expire(now, |t| fired.push(t));
        for &t in &fired {
            match t {
                Timer::Watchdog(id) => self.on_watchdog(id, now),
                Timer::Think(sess) => self.session_on_think(sess, now),
            }
        }
        fired.clear();
        self.fired = fired;
        self.flush();
    }

    fn on_watchdog(&mut self, id: ConnId, now: Instant) {
        if self.table.get_mut(id).is_some_and(|c| c.is_h3()) {
            // QUIC's timer (acks, loss detection) if it is due; then the watchdog.
            let (table, mut ctx, _) = self.ctx();
            let step = table
                .get_mut(id)
                .map_or(Step::Continue, |c| c.on_timer_h3(now, &mut ctx));
            self.process_completions(now);
            if step != Step::Continue {
                self.after_step(id, step, now);
                return;
            }
        }
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        let deadline = conn.deadline();
        match timers::fired(&mut conn.armed, deadline, now) {
            timers::Fired::TimedOut => {
                let fail = conn.timed_out();
                if conn.unanswered_connect() {
                    self.stats.connect_timeouts += 1;
                }
                if self.cfg.output().debug() > 0 {
                    crate::wire::note::note!("rshperf: connection {} timed out", id.index());
                }
                self.finish(id, fail, now);
            }
            timers::Fired::Rearm => self.arm_watchdog(id),
            // No watchdog deadline; HTTP/3's QUIC timer may still need one.
            timers::Fired::Idle => self.arm_watchdog(id),
        }
    }
}
