//! `--call-rate R`: an open-loop call rate over a fixed pool of connections (wrk2's
//! model in httperf's engine).
//!
//! Owns this engine's pool: its share of `--num-conns` connections (slots), opened at
//! the start and reopened when the server closes one (`Connection: close`, GOAWAY) or
//! it fails, so the pool stays full; and the FIFO of calls that are due but found no
//! connection with room. Arrivals are calls, on the engine's absolute schedule
//! (`--period`'s distribution, striped like every arrival: engine j of N takes calls
//! k ≡ j mod N). A due call goes to the next connection, round-robin, that has room
//! (`Conn::has_room`: fewer than `--burst-length` calls unanswered, pipelined on
//! HTTP/1.1; a free stream on HTTP/2); otherwise it waits. Lateness and response time
//! are measured from the call's scheduled time (`Call::due`), so time spent waiting
//! for a connection counts (no coordinated omission). The calls due in one loop turn
//! join the FIFO together and are then given out in one pass, each connection's new
//! calls leaving in one write; above 4,000 calls/s per engine a periodic tick, not a
//! timer per call, wakes the engine for them (`BATCH_TICK`).
//!
//! Calls unanswered on a connection the server closed cleanly go back to the front of
//! the FIFO (in order, keeping their scheduled time); calls on a connection that
//! failed are lost (the failure is counted once, as for any connection). A connection
//! the server closes before its first reply has failed (`connreset`, whether or not a
//! call was on it: see `events::after_step`). A connection that failed without a reply
//! is replaced after a back-off (`dispatch::backoff`), and a slot whose connection
//! fails twice in a row without a reply is given up; when every slot is given up the
//! run ends. The run ends at `--runtime`, or once this engine's share of `--num-conns`
//! × `--num-calls` calls is answered or lost; calls still waiting then are unsent,
//! those on a connection abandoned, both counted up to the end. Part of the engine (`impl
//! Engine`); figures go to `stats::pool`. The FIFO grows to the most calls ever
//! waiting and is reused: the steady state allocates nothing. The decisions (FIFO,
//! round-robin, slots, the tick's grid) are `dispatch::PoolState`'s; this half does
//! the opening, issuing and counting. A replay's calls take their requests from the
//! engine's `replay` store, and give them back when answered or lost. A replay per
//! client or per request (`--replay-connections`) has no slots: its calls and
//! connections are `affinity::Affinity`'s (opened when a call needs one, its slot
//! the connection's `Owner::Pool`), carried out by the `affinity_*` half here, with
//! the same figures; nothing backs off or is given up (each client's next call
//! opens a new connection).

use std::io;
use std::os::fd::AsRawFd;
use std::time::Instant;

use mio::Token;

use super::affinity::Action;
use super::dispatch::{grid_after, grid_before, Fate, Offer};
use super::Engine;
use crate::engine::conn::{Completion, Owner};
use crate::model::stats::ErrorKind;
use crate::wire::net::TimerFd;
use crate::wire::table::ConnId;

/// The poll token of the batch tick's timer.
pub(super) const PACE_TOKEN: Token = Token(usize::MAX - 2);

impl Engine<'_> {
    /// Opens every connection of the pool (at the start of the run; per client or
    /// per request, none: each opens when its call is due, and the pool's
    /// connections figure is the most open at once).
    pub(super) fn pool_open_all(&mut self, now: Instant) {
        if self.affinity.is_some() {
            return;
        }
        let n = self.pool.as_ref().map_or(0, |p| p.slots());
        self.stats.pool.connections += n as u64;
        for slot in 0..n {
            self.pool_open(slot, now);
        }
    }

    /// Opens a connection for `slot` (a failure at once comes back through
    /// `pool_on_closed`).
    fn pool_open(&mut self, slot: usize, now: Instant) {
        let owner = Owner::Pool {
            slot: u32::try_from(slot).unwrap_or(u32::MAX),
        };
        // A connection that fails at once has been replaced (or its slot given up)
        // through `pool_on_closed` by the time `open_conn` returns None.
        if let Some(id) = self.open_conn(now, owner) {
            if let Some(p) = self.pool.as_mut() {
                p.set_conn(slot, Some(id));
            }
        }
    }

    /// Global number of `slot`'s connections (targets are chosen round-robin by it).
    pub(super) fn pool_arrival(&self, slot: u32) -> u64 {
        u64::from(self.plan.stripe) + u64::from(slot) * u64::from(self.plan.stripes)
    }

    /// A call is due (scheduled at `at`): it joins the FIFO. The engine issues the
    /// calls due in one loop turn together (`pool_issue_due`).
    pub(super) fn pool_call_due(&mut self, now: Instant, at: Instant) {
        let (what, client) = match self.replay.as_mut() {
            // A replay's call: the request the feed read with its offset.
            Some(r) => match r.take(self.cfg) {
                Some((what, client)) => (what, Some(client)),
                None => return,
            },
            None => {
                let index = self.arrival_index();
                match self.next_call_ref(now, index) {
                    Some(what) => (what, None),
                    None => return,
                }
            }
        };
        self.stats.pool.scheduled += 1;
        if let Some(a) = self.affinity.as_mut() {
            a.call_due(client.as_deref(), at, what);
        } else if let Some(p) = self.pool.as_mut() {
            p.call_due(at, what);
        }
    }

    /// After a loop turn's due calls joined the FIFO: gives them to connections (each
    /// late from its own scheduled time) and writes each connection's new calls in
    /// one write.
    pub(super) fn pool_issue_due(&mut self, now: Instant) {
        self.pool_dispatch(now);
        self.flush();
    }

    /// Whether the batch tick paces the calls (the engine's timer then leaves them
    /// alone).
    pub(super) fn pool_batched(&self) -> bool {
        self.pool.as_ref().is_some_and(|p| p.tick().is_some())
    }

    /// Starts the batch tick, if the rate calls for one: a periodic timer on the
    /// schedule's grid (`t0` + k × tick), registered with the poll.
    pub(super) fn pool_pace_start(&mut self, now: Instant) -> io::Result<()> {
        let Some(tick) = self.pool.as_ref().and_then(|p| p.tick()) else {
            return Ok(());
        };
        let timer = TimerFd::new()?;
        self.io.watch(timer.as_raw_fd(), PACE_TOKEN)?;
        let first = grid_after(self.pacer.origin(), now, tick).saturating_duration_since(now);
        timer.set_every(first, tick)?;
        if let Some(p) = self.pool.as_mut() {
            p.pace = Some(timer);
        }
        Ok(())
    }

    /// The batch tick expired (`woke`: the engine slept until then): how late after
    /// the tick it slept to is measured as for any timer wake-up. Reading the timer
    /// re-arms it for the next tick (the kernel restarts a periodic timerfd only
    /// once its expirations are read).
    pub(super) fn pool_on_pace(&mut self, woke: Option<Instant>) {
        let Some(p) = self.pool.as_ref() else {
            return;
        };
        let (Some(tick), Some(timer)) = (p.tick(), p.pace.as_ref()) else {
            return;
        };
        if self.pacer.next().is_none() {
            // No call is due any more: the tick stops.
            let _ = timer.set(None);
            return;
        }
        timer.drain();
        if let Some(woke) = woke {
            let last = grid_before(self.pacer.origin(), woke, tick);
            self.on_wakeup(woke.saturating_duration_since(last));
        }
    }

    /// Whether calls wait for a connection.
    pub(super) fn pool_has_waiting(&self) -> bool {
        match self.affinity.as_ref() {
            Some(a) => a.has_work(),
            None => self.pool.as_ref().is_some_and(|p| p.has_waiting()),
        }
    }

    /// Calls waiting for a connection.
    pub(super) fn pool_waiting(&self) -> usize {
        match self.affinity.as_ref() {
            Some(a) => a.waiting(),
            None => self.pool.as_ref().map_or(0, |p| p.waiting()),
        }
    }

    /// Gives waiting calls, oldest first, to connections with room, round-robin (per
    /// client or per request: `affinity_dispatch`).
    pub(super) fn pool_dispatch(&mut self, now: Instant) {
        if self.stop.is_some() {
            return;
        }
        if self.affinity.is_some() {
            self.affinity_dispatch(now);
            return;
        }
        loop {
            let Some(p) = self.pool.as_mut() else {
                return;
            };
            let table = &mut self.table;
            let offer = p.offer(now, |id, depth| {
                table.get_mut(id).is_some_and(|c| c.has_room(depth))
            });
            match offer {
                Offer::Issue { conn, call, late } => {
                    if let Some(late) = late {
                        self.stats.pool.on_issued(late);
                    }
                    self.issue_at(conn, call.what, None, 0, now, call.due);
                }
                Offer::Empty => return,
                Offer::Full { waiting } => {
                    self.stats.pool.max_waiting = self.stats.pool.max_waiting.max(waiting);
                    return;
                }
            }
        }
    }

    /// A call of pool connection `slot` was answered.
    pub(super) fn pool_on_completion(&mut self, c: &Completion, slot: u32, now: Instant) {
        self.stats
            .pool
            .on_response(c.first_byte.saturating_duration_since(c.call.due));
        if let Some(r) = self.replay.as_mut() {
            r.release(c.call.what);
        }
        if let Some(a) = self.affinity.as_mut() {
            // Idle again unless the server asked to close; per request, closed.
            let reusable = self.table.get_mut(c.conn).is_some_and(|k| k.has_room(1));
            a.replied(slot as usize, reusable);
            if a.per_request() {
                self.to_close.push(c.conn);
            }
        }
        self.pool_ended(1, now);
        self.pool_dispatch(now);
    }

    /// Pool connection `slot` is established.
    pub(super) fn pool_on_connected(&mut self, slot: u32, now: Instant) {
        if let Some(a) = self.affinity.as_mut() {
            a.connected(slot as usize);
        }
        self.pool_dispatch(now);
    }

    /// `n` more calls are answered or lost: the run ends with the budget.
    fn pool_ended(&mut self, n: u64, now: Instant) {
        let Some(p) = self.pool.as_mut() else {
            return;
        };
        if p.ended(n) {
            self.stop.get_or_insert(now);
        }
    }

    /// A pool connection is gone (`self.leftovers` holds its unanswered calls): they
    /// go back to the FIFO after a clean close and are lost after a failure; the slot
    /// gets a new connection (after a back-off if it failed without a reply) unless
    /// it failed twice in a row without a reply, or the run is ending (calls put back
    /// then are unsent).
    pub(super) fn pool_on_closed(
        &mut self,
        slot: u32,
        fail: Option<ErrorKind>,
        replies: u64,
        now: Instant,
    ) {
        if self.affinity.is_some() {
            self.affinity_on_closed(slot, fail, now);
            return;
        }
        let leftovers = std::mem::take(&mut self.leftovers);
        let lost = self
            .pool
            .as_mut()
            .map_or(0, |p| p.take_back(&leftovers, fail.is_some()));
        if let (Some(r), true) = (self.replay.as_mut(), lost > 0) {
            // Lost calls are over; calls put back keep their templates.
            leftovers.iter().for_each(|c| r.release(c.what));
        }
        self.leftovers = leftovers;
        if lost > 0 {
            self.stats.pool.lost += lost;
            self.pool_ended(lost, now);
        }
        if self.stop.is_some() {
            if let Some(p) = self.pool.as_mut() {
                p.set_conn(slot as usize, None);
            }
            return;
        }
        let Some(p) = self.pool.as_mut() else {
            return;
        };
        match p.slot_closed(slot as usize, fail.is_some(), replies, now) {
            None | Some(Fate::Later) => {}
            Some(Fate::GiveUp { last }) => {
                self.stats.pool.given_up += 1;
                if last {
                    self.stop.get_or_insert(now);
                }
            }
            Some(Fate::Reopen) => self.pool_reopen(slot as usize, now),
        }
    }

    /// Gives `slot` a new connection and offers it the waiting calls.
    fn pool_reopen(&mut self, slot: usize, now: Instant) {
        self.stats.pool.reconnects += 1;
        self.pool_open(slot, now);
        self.pool_dispatch(now);
    }

    /// When the next slot waiting out a back-off reopens (a deadline of the engine).
    pub(super) fn pool_next_reopen(&self) -> Option<Instant> {
        self.pool.as_ref().and_then(|p| p.next_reopen())
    }

    /// Reopens the slots whose back-off is over by `now`.
    pub(super) fn pool_reopen_due(&mut self, now: Instant) {
        if self.stop.is_some() {
            return;
        }
        while let Some(slot) = self.pool.as_mut().and_then(|p| p.reopen_due(now)) {
            self.pool_reopen(slot, now);
        }
    }

    /// At the end of the run (`end`): calls still waiting are unsent, each counted in
    /// the lateness (if no connection ever took it) and response figures up to the
    /// end. The pool's idle connections (no call unanswered) are closed by the client
    /// (successful: the pool is the client's, and its work is done); those with calls
    /// in flight are abandoned with every other connection still open
    /// (`abandon_open`): their calls are the abandoned calls.
    pub(super) fn pool_finish(&mut self, end: Instant) {
        if self.affinity.is_some() {
            self.affinity_finish(end);
            return;
        }
        let Some(p) = self.pool.as_mut() else {
            return;
        };
        let stats = &mut self.stats;
        for (due, fresh, what) in p.take_unsent() {
            let waited = end.saturating_duration_since(due);
            stats.pool.on_unsent(waited, fresh);
            stats.ends_mut().on_waited(crate::model::stats::us(waited));
            if let Some(log) = self.log.as_mut() {
                let id = self.next_call_id;
                self.next_call_id += u64::from(self.plan.stripes.max(1));
                log.unsent(id, what, due, end, self.replay.as_ref());
            }
        }
        let slots = p.slots();
        // No slot reopens once the run has ended.
        self.stop.get_or_insert(end);
        for k in 0..slots {
            let Some(id) = self.pool.as_ref().and_then(|p| p.conn(k)) else {
                continue;
            };
            if self.table.get_mut(id).is_some_and(|c| c.outstanding() == 0) {
                if let Some(p) = self.pool.as_mut() {
                    p.set_conn(k, None);
                }
                self.finish(id, None, end);
            }
        }
    }

    /// Per client or per request: carries out the affinity's decisions until it has
    /// none (calls issued on idle connections, connections opened, the least
    /// recently used idle one closed first at the cap). A close or connect that
    /// happens inside one of them (`open_conn` failing at once, or connecting at
    /// once) only updates the affinity; this loop takes up what it changed.
    fn affinity_dispatch(&mut self, now: Instant) {
        match self.affinity.as_mut() {
            Some(a) if !a.dispatching => a.dispatching = true,
            _ => return,
        }
        loop {
            let Some(a) = self.affinity.as_mut() else {
                return;
            };
            let table = &mut self.table;
            let next = a.next(now, |id| table.get_mut(id).is_some_and(|c| c.has_room(1)));
            match next {
                Some(Action::Issue { conn, call, late }) => {
                    if let Some(late) = late {
                        self.stats.pool.on_issued(late);
                    }
                    self.issue_at(conn, call.what, None, 0, now, call.due);
                }
                Some(Action::Open { slot, reopen }) => {
                    let open = a.open() as u64;
                    let peak = &mut self.stats.pool.connections;
                    *peak = (*peak).max(open);
                    self.affinity_open(slot, reopen, now);
                }
                Some(Action::Evict { slot, old, reopen }) => {
                    // Closed by the client, its work done; its slot is already the
                    // new client's, so nobody is told.
                    if let Some(c) = self.table.get_mut(old) {
                        c.owner = Owner::Orphan;
                    }
                    self.finish(old, None, now);
                    self.stats.pool.evicted += 1;
                    self.affinity_open(slot, reopen, now);
                }
                None => break,
            }
        }
        if let Some(a) = self.affinity.as_mut() {
            a.dispatching = false;
            let waiting = a.waiting() as u64;
            self.stats.pool.max_waiting = self.stats.pool.max_waiting.max(waiting);
        }
    }

    /// Opens a connection for affinity slot `slot` (`reopen`: it replaces one the
    /// server closed with calls waiting). A failure at once comes back through
    /// `pool_on_closed`.
    fn affinity_open(&mut self, slot: usize, reopen: bool, now: Instant) {
        if reopen {
            self.stats.pool.reconnects += 1;
        }
        let owner = Owner::Pool {
            slot: u32::try_from(slot).unwrap_or(u32::MAX),
        };
        if let Some(id) = self.open_conn(now, owner) {
            if let Some(a) = self.affinity.as_mut() {
                a.set_conn(slot, id);
            }
        }
    }

    /// Affinity slot `slot`'s connection is gone (`self.leftovers` holds its
    /// unanswered calls): after a clean close they wait again, first, for the
    /// client's next connection; after a failure they are lost, and so are the
    /// client's calls waiting for it (each counted lost, logged as failed).
    fn affinity_on_closed(&mut self, slot: u32, fail: Option<ErrorKind>, now: Instant) {
        let leftovers = std::mem::take(&mut self.leftovers);
        let lost_waiting = self.affinity.as_mut().map_or_else(Vec::new, |a| {
            a.closed(slot as usize, fail.is_some(), &leftovers)
        });
        let mut lost = 0;
        if let Some(kind) = fail {
            lost = leftovers.len() as u64;
            if let Some(r) = self.replay.as_mut() {
                leftovers.iter().for_each(|c| r.release(c.what));
            }
            for w in &lost_waiting {
                self.stats
                    .pool
                    .on_lost_waiting(now.saturating_duration_since(w.due), !w.again);
                if let Some(log) = self.log.as_mut() {
                    let id = self.next_call_id;
                    self.next_call_id += u64::from(self.plan.stripes.max(1));
                    log.lost_waiting(id, w.what, (w.due, now), kind, self.replay.as_ref());
                }
                if let Some(r) = self.replay.as_mut() {
                    r.release(w.what);
                }
            }
        }
        self.leftovers = leftovers;
        self.stats.pool.lost += lost;
        let ended = lost + lost_waiting.len() as u64;
        if ended > 0 {
            self.pool_ended(ended, now);
        }
        self.pool_dispatch(now);
    }

    /// `pool_finish` per client or per request: the calls still waiting are unsent,
    /// and the connections with no call unanswered are closed by the client.
    fn affinity_finish(&mut self, end: Instant) {
        let unsent = self
            .affinity
            .as_mut()
            .map_or_else(Vec::new, |a| a.take_unsent());
        for w in unsent {
            let waited = end.saturating_duration_since(w.due);
            self.stats.pool.on_unsent(waited, !w.again);
            self.stats
                .ends_mut()
                .on_waited(crate::model::stats::us(waited));
            if let Some(log) = self.log.as_mut() {
                let id = self.next_call_id;
                self.next_call_id += u64::from(self.plan.stripes.max(1));
                log.unsent(id, w.what, w.due, end, self.replay.as_ref());
            }
        }
        // Nothing reopens once the run has ended.
        self.stop.get_or_insert(end);
        let open: Vec<ConnId> = self
            .affinity
            .as_ref()
            .map_or_else(Vec::new, |a| a.conns().collect());
        for id in open {
            if self.table.get_mut(id).is_some_and(|c| c.outstanding() == 0) {
                self.finish(id, None, end);
            }
        }
    }
}
