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
//! failed are lost (the failure is counted once, as for any connection). A slot whose
//! connection fails twice in a row without a reply is given up; when every slot is
//! given up the run ends. The run ends at `--runtime`, or once this engine's share of
//! `--num-conns` × `--num-calls` calls is answered or lost. Part of the engine (`impl
//! Engine`); figures go to `stats::pool`. The FIFO grows to the most calls ever
//! waiting and is reused: the steady state allocates nothing.

use std::collections::VecDeque;
use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Interest, Token};

use super::Engine;
use crate::engine::conn::{Completion, Owner};
use crate::model::call::{Call, CallRef};
use crate::model::pacing::Spin;
use crate::model::stats::ErrorKind;
use crate::model::workload::stripe_share;
use crate::wire::net::TimerFd;
use crate::wire::table::ConnId;

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
    /// The batch tick (None: the engine wakes for each call, `spin`).
    tick: Option<Duration>,
    /// The periodic timer of the batch tick, once armed.
    pace: Option<TimerFd>,
}

/// The poll token of the batch tick's timer.
pub(super) const PACE_TOKEN: Token = Token(usize::MAX - 2);

/// The batch tick: a schedule with calls closer together than `BATCH_BELOW` (more
/// than 4,000/s per engine) is not paced call by call. A periodic timer wakes the
/// engine every `BATCH_TICK` instead, and each loop turn (that wake-up, or a reply
/// before it) issues every call due by then in one pass: one timer expiry, no
/// re-arming system call, per tick instead of a wake-up per call. A call is then
/// late by at most about one tick plus the wake-up's own delay, measured, as always,
/// from its own scheduled time.
pub(super) const BATCH_TICK: Duration = Duration::from_micros(250);
/// Mean time between calls below which they are batched (see `BATCH_TICK`).
/// (One tick: slower schedules have at most one call per tick, and pacing each costs
/// no more wake-ups than the tick would.)
pub(super) const BATCH_BELOW: Duration = BATCH_TICK;

/// The batch tick for an engine whose calls come `mean_period` seconds apart on
/// average, with `--spin` `spin` (None: slow enough to pace each call, or an explicit
/// `--spin` asks for that).
pub(super) fn batch_tick(mean_period: f64, spin: Spin) -> Option<Duration> {
    (spin == Spin::Auto && mean_period > 0.0 && mean_period < BATCH_BELOW.as_secs_f64())
        .then_some(BATCH_TICK)
}

impl PoolState {
    /// The pool of engine `stripe` of `stripes`: its share of `conns` connections,
    /// `depth` calls each, `budget` calls in all.
    /// `tick`: the batch tick (`batch_tick`), if any.
    pub(super) fn new(
        conns: u64,
        depth: u64,
        budget: u64,
        (stripe, stripes): (u32, u32),
        tick: Option<Duration>,
    ) -> Self {
        let n = usize::try_from(stripe_share(conns, stripe, stripes)).unwrap_or(usize::MAX);
        PoolState {
            slots: vec![Slot::default(); n],
            waiting: VecDeque::new(),
            depth: usize::try_from(depth.max(1)).unwrap_or(usize::MAX),
            cursor: 0,
            budget,
            ended: 0,
            alive: n,
            tick,
            pace: None,
        }
    }

    /// The next connection, round-robin from the cursor, that `has_room` (None: every
    /// connection is full, or gone).
    fn next_conn(&mut self, mut has_room: impl FnMut(ConnId) -> bool) -> Option<ConnId> {
        let n = self.slots.len();
        for _ in 0..n {
            let s = self.cursor;
            self.cursor = if s + 1 >= n { 0 } else { s + 1 };
            if let Some(id) = self.slots[s].conn.filter(|&id| has_room(id)) {
                return Some(id);
            }
        }
        None
    }

    /// Takes the oldest waiting call as a connection takes it at `now`, with its
    /// lateness from its own scheduled time (None for a call taken back from a closed
    /// connection: its lateness was counted when it was first taken).
    fn take_front(&mut self, now: Instant) -> Option<(Waiting, Option<Duration>)> {
        let call = self.waiting.pop_front()?;
        let late = (!call.again).then(|| now.saturating_duration_since(call.due));
        Some((call, late))
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

    /// A call is due (scheduled at `at`): it joins the FIFO. The engine issues the
    /// calls due in one loop turn together (`pool_issue_due`).
    pub(super) fn pool_call_due(&mut self, now: Instant, at: Instant) {
        let index = self.arrival_index();
        let Some(what) = self.next_call_ref(now, index) else {
            return;
        };
        self.stats.pool.scheduled += 1;
        if let Some(p) = self.pool.as_mut() {
            p.waiting.push_back(Waiting {
                due: at,
                what,
                again: false,
            });
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
        self.pool.as_ref().is_some_and(|p| p.tick.is_some())
    }

    /// Starts the batch tick, if the rate calls for one: a periodic timer on the
    /// schedule's grid (`t0` + k × tick), registered with the poll.
    pub(super) fn pool_pace_start(&mut self, now: Instant) -> io::Result<()> {
        let Some(tick) = self.pool.as_ref().and_then(|p| p.tick) else {
            return Ok(());
        };
        let timer = TimerFd::new()?;
        self.poll.registry().register(
            &mut SourceFd(&timer.as_raw_fd()),
            PACE_TOKEN,
            Interest::READABLE,
        )?;
        let first = grid_after(self.t0, now, tick).saturating_duration_since(now);
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
        let (Some(tick), Some(timer)) = (p.tick, p.pace.as_ref()) else {
            return;
        };
        if self.pacer.next().is_none() {
            // No call is due any more: the tick stops.
            let _ = timer.set(None);
            return;
        }
        timer.drain();
        if let Some(woke) = woke {
            let last = grid_before(self.t0, woke, tick);
            self.on_wakeup(woke.saturating_duration_since(last));
        }
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
            if p.waiting.is_empty() {
                return;
            }
            let table = &mut self.table;
            let depth = p.depth;
            let Some(id) = p.next_conn(|id| table.get_mut(id).is_some_and(|c| c.has_room(depth)))
            else {
                // The rest wait for a connection.
                let waiting = p.waiting.len() as u64;
                self.stats.pool.max_waiting = self.stats.pool.max_waiting.max(waiting);
                return;
            };
            let Some((call, late)) = p.take_front(now) else {
                return;
            };
            if let Some(late) = late {
                self.stats.pool.on_issued(late);
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

/// The first point of the grid `t0` + k × `tick` (k ≥ 0) at or after `t`.
fn grid_after(t0: Instant, t: Instant, tick: Duration) -> Instant {
    let step = tick.as_nanos().max(1);
    let since = t.saturating_duration_since(t0).as_nanos();
    let k = since.div_ceil(step);
    t0.checked_add(nanos(k * step)).unwrap_or(t)
}

/// The last point of the grid `t0` + k × `tick` (k ≥ 0) at or before `t`.
fn grid_before(t0: Instant, t: Instant, tick: Duration) -> Instant {
    let step = tick.as_nanos().max(1);
    let since = t.saturating_duration_since(t0).as_nanos();
    t0.checked_add(nanos(since / step * step)).unwrap_or(t)
}

/// `n` nanoseconds (saturating at u64::MAX ns, about 584 years).
fn nanos(n: u128) -> Duration {
    Duration::from_nanos(u64::try_from(n).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::table::Table;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn only_fast_auto_paced_rates_are_batched() {
        // 20,000/s, 10,000/s and 5,000/s per engine: batched; 4,000/s (250 µs, one
        // tick) and slower: paced call by call; an explicit --spin keeps per-call
        // pacing; no schedule: nothing to batch.
        assert_eq!(batch_tick(1.0 / 20_000.0, Spin::Auto), Some(BATCH_TICK));
        assert_eq!(batch_tick(1.0 / 10_000.0, Spin::Auto), Some(BATCH_TICK));
        assert_eq!(batch_tick(1.0 / 5_000.0, Spin::Auto), Some(BATCH_TICK));
        assert_eq!(batch_tick(1.0 / 4_000.0, Spin::Auto), None);
        assert_eq!(batch_tick(1.0 / 600.0, Spin::Auto), None);
        assert_eq!(batch_tick(1.0 / 20_000.0, Spin::Off), None);
        assert_eq!(batch_tick(1.0 / 20_000.0, Spin::Fixed(us(5))), None);
        assert_eq!(batch_tick(0.0, Spin::Auto), None);
    }

    #[test]
    fn the_tick_grid_starts_at_t0() {
        let t0 = Instant::now();
        let tick = us(250);
        assert_eq!(grid_after(t0, t0, tick), t0);
        assert_eq!(grid_after(t0, t0 + us(1), tick), t0 + us(250));
        assert_eq!(grid_after(t0, t0 + us(250), tick), t0 + us(250));
        assert_eq!(grid_after(t0, t0 + us(251), tick), t0 + us(500));
        assert_eq!(grid_before(t0, t0 + us(249), tick), t0);
        assert_eq!(grid_before(t0, t0 + us(250), tick), t0 + us(250));
        assert_eq!(
            grid_before(t0, t0 + us(1_000_100), tick),
            t0 + us(1_000_000)
        );
        // Before t0 (a clock read earlier than the engine's start): t0 itself.
        assert_eq!(grid_after(t0 + us(10), t0, tick), t0 + us(10));
    }

    #[test]
    fn calls_issued_in_one_pass_are_late_from_their_own_schedule() {
        // Four calls due 50 µs apart, all taken by connections in one pass 250 µs
        // after the first was due: 250, 200, 150, 100 µs late. A call taken back from
        // a closed connection was counted when first taken.
        let mut p = PoolState::new(4, 1, u64::MAX, (0, 1), Some(BATCH_TICK));
        let t = Instant::now();
        for k in 0..4 {
            p.waiting.push_back(Waiting {
                due: t + us(50 * k),
                what: CallRef::Fixed,
                again: false,
            });
        }
        p.waiting.push_back(Waiting {
            due: t,
            what: CallRef::Fixed,
            again: true,
        });
        let now = t + us(250);
        let mut late = Vec::new();
        while let Some((call, l)) = p.take_front(now) {
            assert!(call.due >= t);
            late.push(l);
        }
        assert_eq!(
            late,
            [
                Some(us(250)),
                Some(us(200)),
                Some(us(150)),
                Some(us(100)),
                None
            ]
        );
    }

    #[test]
    fn connections_are_taken_round_robin_among_those_with_room() {
        let mut table: Table<()> = Table::new(8);
        let ids: Vec<ConnId> = (0..3)
            .map(|_| table.alloc(|| ()).expect("room").0)
            .collect();
        let mut p = PoolState::new(3, 1, u64::MAX, (0, 1), None);
        for (slot, id) in p.slots.iter_mut().zip(&ids) {
            slot.conn = Some(*id);
        }
        let all = |_: ConnId| true;
        assert_eq!(p.next_conn(all), Some(ids[0]));
        assert_eq!(p.next_conn(all), Some(ids[1]));
        assert_eq!(p.next_conn(all), Some(ids[2]));
        assert_eq!(p.next_conn(all), Some(ids[0]));
        // Only the third has room: found from wherever the cursor is.
        let third = |id: ConnId| id == ids[2];
        assert_eq!(p.next_conn(third), Some(ids[2]));
        assert_eq!(p.next_conn(third), Some(ids[2]));
        // A given-up slot is skipped; none with room: None.
        p.slots[2].conn = None;
        assert_eq!(p.next_conn(third), None);
        assert_eq!(p.next_conn(|_| false), None);
    }
}
