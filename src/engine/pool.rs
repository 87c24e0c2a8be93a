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
//! for a connection counts (no coordinated omission).
//!
//! Calls unanswered on a connection the server closed cleanly go back to the front of
//! the FIFO (in order, keeping their scheduled time); calls on a connection that
//! failed are lost (the failure is counted once, as for any connection). A slot whose
//! connection fails twice in a row without a reply is given up; when every slot is
//! given up the run ends. The run ends at `--runtime`, or once this engine's share of
//! `--num-conns` × `--num-calls` calls is answered or lost. Part of the engine (`impl
//! Engine`); figures go to `stats::pool`. The FIFO grows to the most calls ever
//! waiting and is reused: the steady state allocates nothing.

use std::collections::VecDeque;
use std::time::Instant;

use super::Engine;
use crate::call::{Call, CallRef};
use crate::conn::{Completion, Owner};
use crate::runner::stripe_share;
use crate::stats::ErrorKind;
use crate::table::ConnId;

/// A call due but not yet on a connection.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    /// Its scheduled time.
    due: Instant,
    /// What it requests.
    what: CallRef,
    /// Taken back from a connection the server closed: already counted as issued.
    again: bool,
}

/// One connection slot of the pool.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// Its current connection (None once given up).
    conn: Option<ConnId>,
    /// Connections of this slot that failed in a row without a reply.
    failures: u8,
}

/// This engine's pool.
#[derive(Debug)]
pub(super) struct PoolState {
    slots: Vec<Slot>,
    waiting: VecDeque<Waiting>,
    /// Calls in flight per connection at most (`--burst-length`).
    depth: usize,
    /// Round-robin position over the slots.
    cursor: usize,
    /// Calls this engine makes (`u64::MAX`: until `--runtime`).
    budget: u64,
    /// Calls answered or lost.
    ended: u64,
    /// Slots not given up.
    alive: usize,
}

impl PoolState {
    /// The pool of engine `stripe` of `stripes`: its share of `conns` connections,
    /// `depth` calls each, `budget` calls in all.
    pub(super) fn new(conns: u64, depth: u64, budget: u64, stripe: u32, stripes: u32) -> Self {
        let n = usize::try_from(stripe_share(conns, stripe, stripes)).unwrap_or(usize::MAX);
        PoolState {
            slots: vec![Slot::default(); n],
            waiting: VecDeque::new(),
            depth: usize::try_from(depth.max(1)).unwrap_or(usize::MAX),
            cursor: 0,
            budget,
            ended: 0,
            alive: n,
        }
    }
}

/// How many times a slot's connection may fail in a row without a reply before the
/// slot is given up.
const SLOT_FAILURES: u8 = 2;

impl Engine<'_> {
    /// Opens every connection of the pool (at the start of the run).
    pub(super) fn pool_open_all(&mut self, now: Instant) {
        let n = self.pool.as_ref().map_or(0, |p| p.slots.len());
        if let Some(p) = self.pool.as_mut() {
            self.stats.pool.connections += p.slots.len() as u64;
        }
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
            if let Some(s) = self.pool.as_mut().and_then(|p| p.slots.get_mut(slot)) {
                s.conn = Some(id);
            }
        }
    }

    /// Global number of `slot`'s connections (targets are chosen round-robin by it).
    pub(super) fn pool_arrival(&self, slot: u32) -> u64 {
        u64::from(self.plan.stripe) + u64::from(slot) * u64::from(self.plan.stripes)
    }

    /// A call is due (scheduled at `at`): it goes to a connection or waits.
    pub(super) fn pool_call_due(&mut self, now: Instant, at: Instant) {
        let index = self.arrival_index();
        let Some(what) = self.next_call_ref(now, index) else {
            return;
        };
        self.stats.pool.scheduled += 1;
        let Some(p) = self.pool.as_mut() else {
            return;
        };
        p.waiting.push_back(Waiting {
            due: at,
            what,
            again: false,
        });
        let waiting = p.waiting.len() as u64;
        self.stats.pool.max_waiting = self.stats.pool.max_waiting.max(waiting);
        self.pool_dispatch(now);
    }

    /// Whether calls wait for a connection.
    pub(super) fn pool_has_waiting(&self) -> bool {
        self.pool.as_ref().is_some_and(|p| !p.waiting.is_empty())
    }

    /// Gives waiting calls, oldest first, to connections with room, round-robin.
    pub(super) fn pool_dispatch(&mut self, now: Instant) {
        if self.stop.is_some() {
            return;
        }
        loop {
            let Some(p) = self.pool.as_mut() else {
                return;
            };
            let Some(&call) = p.waiting.front() else {
                return;
            };
            let n = p.slots.len();
            let mut found = None;
            for _ in 0..n {
                let s = p.cursor;
                p.cursor = if s + 1 >= n { 0 } else { s + 1 };
                let Some(id) = p.slots[s].conn else {
                    continue;
                };
                if self.table.get_mut(id).is_some_and(|c| c.has_room(p.depth)) {
                    found = Some(id);
                    break;
                }
            }
            let Some(id) = found else {
                return;
            };
            p.waiting.pop_front();
            if !call.again {
                self.stats
                    .pool
                    .on_issued(now.saturating_duration_since(call.due));
            }
            self.issue_at(id, call.what, None, 0, now, call.due);
        }
    }

    /// A call of a pool connection was answered.
    pub(super) fn pool_on_completion(&mut self, c: &Completion, now: Instant) {
        self.stats
            .pool
            .on_response(c.first_byte.saturating_duration_since(c.call.due));
        self.pool_ended(1, now);
        self.pool_dispatch(now);
    }

    /// `n` more calls are answered or lost: the run ends with the budget.
    fn pool_ended(&mut self, n: u64, now: Instant) {
        let Some(p) = self.pool.as_mut() else {
            return;
        };
        p.ended = p.ended.saturating_add(n);
        if p.ended >= p.budget {
            self.stop.get_or_insert(now);
        }
    }

    /// A pool connection is gone (`self.leftovers` holds its unanswered calls): they
    /// go back to the FIFO after a clean close and are lost after a failure; the slot
    /// gets a new connection unless it failed twice in a row without a reply.
    pub(super) fn pool_on_closed(
        &mut self,
        slot: u32,
        fail: Option<ErrorKind>,
        replies: u64,
        now: Instant,
    ) {
        if self.stop.is_some() {
            // The end of the run closes the pool: calls in flight are abandoned.
            if let Some(s) = self
                .pool
                .as_mut()
                .and_then(|p| p.slots.get_mut(slot as usize))
            {
                s.conn = None;
            }
            return;
        }
        let leftovers = std::mem::take(&mut self.leftovers);
        let lost = self.pool_take_back(&leftovers, fail.is_some());
        self.leftovers = leftovers;
        if lost > 0 {
            self.stats.pool.lost += lost;
            self.pool_ended(lost, now);
        }
        let Some(p) = self.pool.as_mut() else {
            return;
        };
        let Some(s) = p.slots.get_mut(slot as usize) else {
            return;
        };
        s.conn = None;
        s.failures = match (fail, replies) {
            (Some(_), 0) => s.failures.saturating_add(1),
            _ => 0,
        };
        if s.failures >= SLOT_FAILURES {
            p.alive -= 1;
            self.stats.pool.given_up += 1;
            if p.alive == 0 {
                self.stop.get_or_insert(now);
            }
            return;
        }
        self.stats.pool.reconnects += 1;
        self.pool_open(slot as usize, now);
        self.pool_dispatch(now);
    }

    /// Puts the unanswered `calls` of a closed connection back at the front of the
    /// FIFO in order (clean close), or returns how many are lost (`failed`).
    fn pool_take_back(&mut self, calls: &[Call], failed: bool) -> u64 {
        if failed {
            return calls.len() as u64;
        }
        let Some(p) = self.pool.as_mut() else {
            return 0;
        };
        // `leftovers` lists them oldest first.
        for c in calls.iter().rev() {
            p.waiting.push_front(Waiting {
                due: c.due,
                what: c.what,
                again: true,
            });
        }
        0
    }

    /// At the end of the run (`end`): calls still waiting are unsent, and the pool's
    /// connections are closed, so that their lifetimes and calls per connection are
    /// in the classic report (calls still in flight are abandoned, as at the end of
    /// any run).
    pub(super) fn pool_finish(&mut self, end: Instant) {
        let Some(p) = self.pool.as_mut() else {
            return;
        };
        self.stats.pool.unsent += p.waiting.len() as u64;
        p.waiting.clear();
        for k in 0..p.slots.len() {
            let Some(id) = self.pool.as_mut().and_then(|p| p.slots[k].conn.take()) else {
                continue;
            };
            self.finish(id, None, end);
        }
    }
}
