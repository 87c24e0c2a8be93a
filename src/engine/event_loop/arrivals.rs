//! Starting due arrivals: each scheduled arrival the pacer admits becomes a
//! connection, a session, a call-rate call or a closed-loop unit, with its lateness
//! and offered second recorded.
//!
//! Owns `on_arrivals`, the `--max-connections` hold (`arrivals_capped`), the connect
//! burst count, the global arrival index and the next call of the URI generator.
//! The schedule and overload policy are `pacer`'s; what an arrival sends is
//! `request`'s, `session`'s, `pool`'s or `closed`'s. Called by `run`.

use std::time::Instant;

use crate::model::call::CallRef;

use super::Engine;

impl<'c> Engine<'c> {
    pub(super) fn on_arrivals(&mut self, mut now: Instant) {
        let mut first = true;
        // Calls joined the pool's FIFO in this pass.
        let mut calls = false;
        while let Some(at) = self.pacer.next() {
            // Each arrival's lateness from the clock as it starts, not from the start
            // of a burst.
            if !first {
                now = Instant::now();
            }
            first = false;
            if now >= self.next_tick {
                // The second that ended first: an arrival after its end counts in
                // the next (issued, and offered when it is due there).
                self.on_tick(now);
            }
            let held = self.stop.is_some() || self.arrivals_capped();
            if !self.pacer.admit(at, now, self.live, held) {
                break;
            }
            if self.closed.is_some() {
                // A unit that fails at once frees its user in `unit_done`, which asks
                // for the next arrival instead of recursing.
                if !self.closed_start(now, at) {
                    break;
                }
                continue;
            }
            self.pacer.begin();
            self.stats.on_lateness(now.saturating_duration_since(at));
            let scheduled = at.saturating_duration_since(self.t0).as_secs();
            self.stats.timeline.offered(scheduled);
            if self.pool.is_some() {
                self.pool_call_due(now, at);
                calls = true;
            } else {
                // The arrival's connection (a session's first) records it.
                self.arrival_at = Some(at);
                if self.work.is_session() {
                    self.start_session(now);
                } else {
                    self.start_request_conn(now, self.arrival_index(), 0);
                }
                self.arrival_at = None;
            }
            if self.pool.is_none() {
                self.flush();
            }
            self.pacer.schedule_next();
        }
        if calls {
            // This turn's due calls, in one pass. (Calls that were already waiting
            // wait for room, and whatever makes room dispatches them.)
            self.pool_issue_due(now);
        }
        self.prepare_spare();
    }

    /// A unit of work (a request-oriented connection or a session) is finished.
    pub(super) fn on_unit_done(&mut self, now: Instant) {
        self.unit_done(now, 0);
    }

    /// Request-oriented `--max-connections N` (httperf master): an arrival that finds
    /// N connections open waits until one closes (it is then late, and its lateness
    /// is recorded). Never true for session workloads, where the option limits
    /// connections per session. A replay's calls wait, unread, while
    /// `replay::BACKLOG` calls wait for a connection (so memory does not grow with
    /// how far behind the server is); each is still late from its scheduled time.
    pub(super) fn arrivals_capped(&self) -> bool {
        if self.replay.is_some() {
            return self.pool_waiting() >= super::replay::BACKLOG;
        }
        let cap = self.cfg.load().max_connections();
        cap > 0 && !self.work.is_session() && self.live >= cap
    }

    /// `--overload=degrade`: the engine is behind schedule and holds the arrival due
    /// at `at` back until a connection closes (`catchup`).
    pub(super) fn waits_for_close(&self, at: Instant, now: Instant) -> bool {
        self.pacer.waits_for_close(at, now, self.live)
    }

    /// Records httperf's connect burst: connects made within one loop iteration. The
    /// running burst is compared with the maximum only when a connect happens in a
    /// later iteration (so one connection gives 0, as in httperf).
    pub(super) fn note_connect_burst(&mut self) {
        self.bursts
            .connect(self.iteration, &mut self.stats.max_burst);
    }

    /// The next URI-generator call (`--wlog`/`--wset`), or the fixed request. None when
    /// a non-looping `--wlog` is exhausted (the test then ends, as in httperf).
    pub(super) fn next_call_ref(&mut self, now: Instant, index: u64) -> Option<CallRef> {
        self.next_call_ref_to(now, index, 0)
    }

    /// `next_call_ref` for a connection to `target` (ab and lb: a URI per target).
    pub(super) fn next_call_ref_to(
        &mut self,
        now: Instant,
        index: u64,
        target: usize,
    ) -> Option<CallRef> {
        let r = self.work.call_ref_to(index, target);
        if r.is_none() {
            self.stop.get_or_insert(now);
        }
        r
    }

    /// The global number of the arrival just started (`pacer.started()` counts this
    /// engine's arrivals): k = stripe + (n − 1) × stripes.
    pub(super) fn arrival_index(&self) -> u64 {
        let started = self.pacer.started();
        u64::from(self.plan.stripe) + started.saturating_sub(1) * u64::from(self.plan.stripes)
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::clock::{Clock, Sim};

    use super::super::rig;

    #[test]
    fn arrival_indexes_follow_the_stripe() {
        let cfg = rig::config(10.0, 9);
        let clock = Sim::new(std::time::Instant::now());
        rig::with_engine(&cfg, 1, 3, clock.now(), |e| {
            let mut got = Vec::new();
            for _ in 0..3 {
                e.pacer.begin();
                got.push(e.arrival_index());
            }
            assert_eq!(got, [1, 4, 7]);
        });
    }
}
