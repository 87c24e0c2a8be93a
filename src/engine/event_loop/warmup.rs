//! The pool's warm-up: a call-rate run (a replay through the pool too) opens its
//! connections before its schedule begins, so that its first calls are not late by
//! the connects (wrk2 starts each connection's schedule once it is connected; this
//! starts the whole schedule once the pool is). The engine handles I/O until each
//! pool connection is established or gone, for at most `WARM_UP_MAX`; the schedule
//! (every arrival, `--runtime`'s end, the batch tick's grid) then begins at that
//! moment instead of at the run's start. Lateness is still measured from each call's
//! scheduled time, and a connection still connecting after the bound makes its calls
//! late as before. A run with a shared start (`--start-at`, partitions) keeps its
//! schedule where it is: its partitions stay aligned.

use std::io;
use std::time::{Duration, Instant};

use super::backend::Batch;
use super::Engine;
use crate::engine::conn::Phase;

/// The longest the schedule waits for the pool's connections.
pub(super) const WARM_UP_MAX: Duration = Duration::from_secs(1);

impl Engine<'_> {
    /// Waits (handling I/O and connection timers) until no pool connection is still
    /// connecting, a signal stops the run, or `WARM_UP_MAX` has passed; then moves
    /// the schedule's start to now (unless the run has a shared start).
    pub(super) fn pool_warm_up(&mut self, events: &mut Batch) -> io::Result<()> {
        let bound = Instant::now() + WARM_UP_MAX;
        while self.stop.is_none() && self.pool_connecting() {
            let now = Instant::now();
            if now >= bound {
                break;
            }
            let wake = self.wheel.next_deadline().map_or(bound, |d| d.min(bound));
            match self
                .io
                .wait(events, Some(wake.saturating_duration_since(now)))
            {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            for (token, ready) in events.iter() {
                self.on_ready(token, ready);
            }
            self.on_timers(Instant::now());
        }
        if self.stop.is_none() && self.cfg.load().start_at().is_none() {
            let late = Instant::now().saturating_duration_since(self.pacer.origin());
            self.pacer.delay(late);
            self.stats.pool.warm_up_us = u64::try_from(late.as_micros()).unwrap_or(u64::MAX);
        }
        Ok(())
    }

    /// Whether a pool connection is still connecting (TCP or its TLS handshake).
    fn pool_connecting(&mut self) -> bool {
        let (Some(p), table) = (self.pool.as_ref(), &mut self.table) else {
            return false;
        };
        (0..p.slots())
            .filter_map(|s| p.conn(s))
            .any(|id| table.get_mut(id).is_some_and(|c| c.phase != Phase::Active))
    }
}
