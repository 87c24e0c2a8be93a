//! The `--call-rate` pool's decisions: the FIFO of due calls, which connection takes
//! the next one, what a closed connection's calls and slot become, the batch tick.
//!
//! A due call joins the back of the FIFO; calls are offered oldest first to the next
//! connection, round-robin from where the last one went, that has room (fewer than
//! `--burst-length` calls unanswered, `Conn::has_room`); when none has, the rest wait
//! and the number waiting is the figure "most calls waiting". Each call's lateness is
//! counted once, from its own scheduled time, when a connection first takes it.
//! Calls unanswered on a connection the server closed cleanly go back to the front of
//! the FIFO in order, keeping their scheduled times; after a failure they are lost. A
//! connection that fails without a reply is replaced after a back-off (`backoff`: 1
//! ms, doubled for each such failure in a row, at most 1 s), and a slot whose
//! connection fails `SLOT_FAILURES` times in a row without a reply is given up. Above 4,000 calls/s per engine a periodic tick on the grid t0 + k ×
//! `BATCH_TICK` paces the calls instead of a timer per call.
//!
//! Pure: every decision takes `now` and a view of the connections (`has_room`);
//! the engine half (`pool`) opens connections, issues calls and counts. Called by
//! `pool` only.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::model::call::{Call, CallRef};
use crate::model::pacing::Spin;
use crate::model::workload::stripe_share;
use crate::wire::net::TimerFd;
use crate::wire::table::ConnId;

/// A call due but not yet on a connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Waiting {
    /// Its scheduled time.
    pub(super) due: Instant,
    /// What it requests.
    pub(super) what: CallRef,
    /// Taken back from a connection the server closed: already counted as issued.
    pub(super) again: bool,
}

/// One connection slot of the pool.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// Its current connection (None once given up, or while it waits to reopen).
    conn: Option<ConnId>,
    /// Connections of this slot that failed in a row without a reply.
    failures: u8,
    /// When it gets a new connection, after a back-off.
    reopen_at: Option<Instant>,
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
    /// The periodic timer of the batch tick, once armed (held here; the engine
    /// arms and reads it).
    pub(super) pace: Option<TimerFd>,
}

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

/// How many times a slot's connection may fail in a row without a reply before the
/// slot is given up.
pub(super) const SLOT_FAILURES: u8 = 2;

/// The first back-off before a connection that failed without a reply is replaced.
pub(super) const BACKOFF_FIRST: Duration = Duration::from_millis(1);
/// The longest back-off.
pub(super) const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// How long a slot waits before its next connection after `failures` failures in a
/// row without a reply: none after a reply or a clean close, else `BACKOFF_FIRST`
/// doubled for each failure after the first, at most `BACKOFF_MAX` (a server that
/// closes or refuses every connection gets a bounded number of them, not a storm).
pub(super) fn backoff(failures: u8) -> Duration {
    match failures {
        0 => Duration::ZERO,
        k => BACKOFF_FIRST
            .checked_mul(1u32 << u32::from(k - 1).min(20))
            .map_or(BACKOFF_MAX, |d| d.min(BACKOFF_MAX)),
    }
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

    /// The batch tick (None: calls are paced one by one).
    pub(super) fn tick(&self) -> Option<Duration> {
        self.tick
    }

    /// Connection slots.
    pub(super) fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Slot `slot`'s connection.
    pub(super) fn conn(&self, slot: usize) -> Option<ConnId> {
        self.slots.get(slot).and_then(|s| s.conn)
    }

    /// Slot `slot`'s connection is now `conn`.
    pub(super) fn set_conn(&mut self, slot: usize, conn: Option<ConnId>) {
        if let Some(s) = self.slots.get_mut(slot) {
            s.conn = conn;
        }
    }

    /// A call scheduled at `due` is due: it joins the back of the FIFO.
    pub(super) fn call_due(&mut self, due: Instant, what: CallRef) {
        self.waiting.push_back(Waiting {
            due,
            what,
            again: false,
        });
    }

    /// Whether calls wait for a connection.
    pub(super) fn has_waiting(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// How many calls wait for a connection.
    pub(super) fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Offers the oldest waiting call to the next connection with room at `now`;
    /// `has_room(conn, depth)` says whether `conn` has fewer than `depth` calls
    /// unanswered (and can take one at once). The engine offers until it gets
    /// `Empty` or `Full`.
    pub(super) fn offer(
        &mut self,
        now: Instant,
        mut has_room: impl FnMut(ConnId, usize) -> bool,
    ) -> Offer {
        if self.waiting.is_empty() {
            return Offer::Empty;
        }
        let depth = self.depth;
        let Some(conn) = self.next_conn(|id| has_room(id, depth)) else {
            // The rest wait for a connection.
            return Offer::Full {
                waiting: self.waiting.len() as u64,
            };
        };
        match self.take_front(now) {
            Some((call, late)) => Offer::Issue { conn, call, late },
            None => Offer::Empty,
        }
    }

    /// `n` more calls are answered or lost; true once the budget is spent (the run
    /// ends).
    pub(super) fn ended(&mut self, n: u64) -> bool {
        self.ended = self.ended.saturating_add(n);
        self.ended >= self.budget
    }

    /// Puts the unanswered `calls` of a closed connection back at the front of the
    /// FIFO in order, keeping their scheduled times (a clean close), or returns how
    /// many are lost (`failed`).
    pub(super) fn take_back(&mut self, calls: &[Call], failed: bool) -> u64 {
        if failed {
            return calls.len() as u64;
        }
        // `calls` lists them oldest first.
        for c in calls.iter().rev() {
            self.waiting.push_front(Waiting {
                due: c.due,
                what: c.what,
                again: true,
            });
        }
        0
    }

    /// Slot `slot`'s connection is gone at `now` (`failed`, after `replies`
    /// replies): whether the slot gets a new connection at once, after a back-off
    /// (then `reopen_due` names it), or is given up (None: no such slot).
    pub(super) fn slot_closed(
        &mut self,
        slot: usize,
        failed: bool,
        replies: u64,
        now: Instant,
    ) -> Option<Fate> {
        let s = self.slots.get_mut(slot)?;
        s.conn = None;
        s.failures = if failed && replies == 0 {
            s.failures.saturating_add(1)
        } else {
            0
        };
        if s.failures < SLOT_FAILURES {
            let wait = backoff(s.failures);
            if wait.is_zero() {
                return Some(Fate::Reopen);
            }
            s.reopen_at = Some(now + wait);
            return Some(Fate::Later);
        }
        self.alive -= 1;
        Some(Fate::GiveUp {
            last: self.alive == 0,
        })
    }

    /// When the next slot waiting out a back-off is due to reopen.
    pub(super) fn next_reopen(&self) -> Option<Instant> {
        self.slots.iter().filter_map(|s| s.reopen_at).min()
    }

    /// The next slot whose back-off is over by `now` (no longer waiting).
    pub(super) fn reopen_due(&mut self, now: Instant) -> Option<usize> {
        let k = self
            .slots
            .iter()
            .position(|s| s.reopen_at.is_some_and(|t| t <= now))?;
        self.slots[k].reopen_at = None;
        Some(k)
    }

    /// At the end of the run: the calls still waiting, now unsent, oldest first: each
    /// call's scheduled time, whether it was never taken by a connection, and what it
    /// requests.
    pub(super) fn take_unsent(&mut self) -> impl Iterator<Item = (Instant, bool, CallRef)> + '_ {
        self.waiting.drain(..).map(|w| (w.due, !w.again, w.what))
    }
}

/// What `PoolState::offer` decided.
#[derive(Debug, Clone, Copy)]
pub(super) enum Offer {
    /// Issue `call` on `conn`; `late` is its lateness, to count (None: counted when
    /// it was first taken).
    Issue {
        /// The connection with room.
        conn: ConnId,
        /// The call.
        call: Waiting,
        /// Its lateness from its scheduled time.
        late: Option<Duration>,
    },
    /// No call waits.
    Empty,
    /// Every connection is full (or gone): this many calls wait.
    Full {
        /// Calls waiting.
        waiting: u64,
    },
}

/// What happens to a slot whose connection closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fate {
    /// It gets a new connection now.
    Reopen,
    /// It gets a new connection after a back-off (`PoolState::reopen_due`).
    Later,
    /// Failed twice in a row without a reply: given up (`last`: it was the last slot
    /// alive, and the run ends).
    GiveUp {
        /// No slot is left.
        last: bool,
    },
}

/// The first point of the grid `t0` + k × `tick` (k ≥ 0) at or after `t`.
pub(super) fn grid_after(t0: Instant, t: Instant, tick: Duration) -> Instant {
    let step = tick.as_nanos().max(1);
    let since = t.saturating_duration_since(t0).as_nanos();
    let k = since.div_ceil(step);
    t0.checked_add(nanos(k * step)).unwrap_or(t)
}

/// The last point of the grid `t0` + k × `tick` (k ≥ 0) at or before `t`.
pub(super) fn grid_before(t0: Instant, t: Instant, tick: Duration) -> Instant {
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

    /// Connections of a test pool: (ids, calls unanswered on each).
    fn conns(n: usize) -> (Vec<ConnId>, Vec<usize>) {
        let mut table: Table<()> = Table::new(16);
        let ids = (0..n)
            .map(|_| table.alloc(|| ()).expect("room").0)
            .collect();
        (ids, vec![0; n])
    }

    /// Offers calls at `now` until the pool says Empty or Full: (call due offsets in
    /// µs after `t`, connection index, late µs) of each issued, and the final offer.
    fn offer_all(
        p: &mut PoolState,
        ids: &[ConnId],
        busy: &mut [usize],
        t: Instant,
        now: Instant,
    ) -> (Vec<(u64, usize, Option<u64>)>, Offer) {
        let mut out = Vec::new();
        loop {
            let offer = p.offer(now, |id, depth| {
                let k = ids.iter().position(|&i| i == id).expect("a pool conn");
                busy[k] < depth
            });
            match offer {
                Offer::Issue { conn, call, late } => {
                    let k = ids.iter().position(|&i| i == conn).expect("a pool conn");
                    busy[k] += 1;
                    let due = (call.due - t).as_micros() as u64;
                    out.push((due, k, late.map(|l| l.as_micros() as u64)));
                }
                other => return (out, other),
            }
        }
    }

    #[test]
    fn calls_go_oldest_first_round_robin_to_connections_with_room() {
        let (ids, mut busy) = conns(2);
        // Two connections of depth 2 (`--burst-length 2`).
        let mut p = PoolState::new(2, 2, u64::MAX, (0, 1), None);
        for (k, id) in ids.iter().enumerate() {
            p.set_conn(k, Some(*id));
        }
        let t = Instant::now();
        for k in 0..5 {
            p.call_due(t + us(k), CallRef::Fixed);
        }
        let now = t + us(100);
        let (got, last) = offer_all(&mut p, &ids, &mut busy, t, now);
        assert_eq!(
            got,
            [
                (0, 0, Some(100)),
                (1, 1, Some(99)),
                (2, 0, Some(98)),
                (3, 1, Some(97))
            ]
        );
        // Both full: the fifth waits.
        assert!(matches!(last, Offer::Full { waiting: 1 }), "{last:?}");
        // A reply on the first makes room: the waiting call goes there, late from
        // its own time.
        busy[0] -= 1;
        let (got, last) = offer_all(&mut p, &ids, &mut busy, t, t + us(300));
        assert_eq!(got, [(4, 0, Some(296))]);
        assert!(matches!(last, Offer::Empty));
        assert!(!p.has_waiting());
    }

    #[test]
    fn calls_of_a_cleanly_closed_connection_go_back_first_and_count_late_once() {
        let (ids, mut busy) = conns(1);
        let mut p = PoolState::new(1, 2, u64::MAX, (0, 1), None);
        p.set_conn(0, Some(ids[0]));
        let t = Instant::now();
        for k in 0..3 {
            p.call_due(t + us(10 * k), CallRef::Fixed);
        }
        let (got, _) = offer_all(&mut p, &ids, &mut busy, t, t + us(50));
        assert_eq!(got, [(0, 0, Some(50)), (10, 0, Some(40))]);
        // The server closes with both unanswered: back to the front, in order.
        let call = |due: Instant| Call {
            id: 0,
            what: CallRef::Fixed,
            len: 0,
            head_len: 0,
            head: false,
            send_start: due,
            written: None,
            due,
            retries: 0,
            stream: 0,
            sent: 0,
            begun: false,
        };
        let left = [call(t), call(t + us(10))];
        assert_eq!(p.take_back(&left, false), 0);
        assert_eq!(p.slot_closed(0, false, 1, t), Some(Fate::Reopen));
        p.set_conn(0, Some(ids[0]));
        busy[0] = 0;
        let (got, _) = offer_all(&mut p, &ids, &mut busy, t, t + us(900));
        // Their lateness was counted when first taken; the third's is new.
        assert_eq!(got, [(0, 0, None), (10, 0, None)]);
        busy[0] = 0;
        let (got, _) = offer_all(&mut p, &ids, &mut busy, t, t + us(900));
        assert_eq!(got, [(20, 0, Some(880))]);
        // After a failure they are lost.
        assert_eq!(p.take_back(&left, true), 2);
        assert!(!p.has_waiting());
    }

    #[test]
    fn a_slot_failing_twice_in_a_row_without_a_reply_is_given_up() {
        let mut p = PoolState::new(2, 1, u64::MAX, (0, 1), None);
        let t = Instant::now();
        // A failure without a reply: the slot reopens after the first back-off.
        assert_eq!(p.slot_closed(0, true, 0, t), Some(Fate::Later));
        assert_eq!(p.next_reopen(), Some(t + BACKOFF_FIRST));
        assert_eq!(p.reopen_due(t + us(999)), None);
        assert_eq!(p.reopen_due(t + BACKOFF_FIRST), Some(0));
        assert_eq!(p.next_reopen(), None);
        assert_eq!(
            p.slot_closed(0, true, 0, t),
            Some(Fate::GiveUp { last: false })
        );
        // A reply in between, or a clean close, starts the count again and reopens
        // at once.
        assert_eq!(p.slot_closed(1, true, 0, t), Some(Fate::Later));
        assert_eq!(p.slot_closed(1, true, 3, t), Some(Fate::Reopen));
        assert_eq!(p.slot_closed(1, true, 0, t), Some(Fate::Later));
        assert_eq!(p.slot_closed(1, false, 0, t), Some(Fate::Reopen));
        assert_eq!(p.slot_closed(1, true, 0, t), Some(Fate::Later));
        assert_eq!(
            p.slot_closed(1, true, 0, t),
            Some(Fate::GiveUp { last: true })
        );
        assert_eq!(p.slot_closed(7, true, 0, t), None);
    }

    #[test]
    fn the_back_off_doubles_from_1_ms_to_at_most_1_s() {
        let ms = Duration::from_millis;
        let got: Vec<Duration> = (0..=13).map(backoff).collect();
        assert_eq!(
            got,
            [
                ms(0),
                ms(1),
                ms(2),
                ms(4),
                ms(8),
                ms(16),
                ms(32),
                ms(64),
                ms(128),
                ms(256),
                ms(512),
                ms(1000),
                ms(1000),
                ms(1000)
            ]
        );
        assert_eq!(backoff(u8::MAX), BACKOFF_MAX);
    }

    #[test]
    fn calls_waiting_at_the_end_are_unsent_and_say_whether_they_were_counted() {
        let mut p = PoolState::new(1, 1, u64::MAX, (0, 1), None);
        let t = Instant::now();
        p.call_due(t, CallRef::Fixed);
        p.waiting.push_front(Waiting {
            due: t - us(5),
            what: CallRef::Fixed,
            again: true,
        });
        let got: Vec<(Instant, bool)> = p
            .take_unsent()
            .map(|(due, fresh, _)| (due, fresh))
            .collect();
        assert_eq!(got, [(t - us(5), false), (t, true)]);
        assert!(!p.has_waiting());
    }

    #[test]
    fn the_budget_of_calls_ends_the_run() {
        let mut p = PoolState::new(1, 1, 5, (0, 1), None);
        assert!(!p.ended(3));
        assert!(p.ended(2));
        // Striped: engine 1 of 2 gets its share of 5 connections.
        assert_eq!(PoolState::new(5, 1, 5, (1, 2), None).slots(), 2);
        assert_eq!(PoolState::new(5, 1, 5, (0, 2), None).slots(), 3);
    }

    #[test]
    fn a_batched_rate_issues_each_ticks_due_calls_late_from_their_own_time() {
        use super::super::catchup::CatchUp;
        use super::super::pacer::Pacer;
        use crate::model::pacing::Overload;
        use crate::model::workload::rate::{Period, Schedule};
        // 20,000 calls/s: 50 µs apart, batched on the 250 µs tick.
        let tick = batch_tick(1.0 / 20_000.0, Spin::Auto).expect("batched");
        let t0 = Instant::now();
        let period = Period::Deterministic(1.0 / 20_000.0);
        let catchup = CatchUp::new(Overload::Degrade, period.mean(), 100);
        let schedule = Schedule::new(&period, 0, 0, 1);
        let mut pacer = Pacer::new(schedule, t0, 21, None, catchup, false);
        pacer.start();
        let (ids, mut busy) = conns(4);
        let mut p = PoolState::new(4, 100, u64::MAX, (0, 1), Some(tick));
        for (k, id) in ids.iter().enumerate() {
            p.set_conn(k, Some(*id));
        }
        let mut wakes = Vec::new();
        let mut late = Vec::new();
        let mut now = t0;
        while pacer.next().is_some() {
            // The engine wakes on the tick's grid only (no timer per call).
            wakes.push((now - t0).as_micros() as u64);
            while let Some(at) = pacer.next() {
                if !pacer.admit(at, now, 0, false) {
                    break;
                }
                pacer.begin();
                p.call_due(at, CallRef::Fixed);
                pacer.schedule_next();
            }
            let (got, _) = offer_all(&mut p, &ids, &mut busy, t0, now);
            late.push(got.iter().map(|g| g.2.expect("late")).collect::<Vec<_>>());
            now = grid_after(t0, now + us(1), tick);
        }
        assert_eq!(wakes, [0, 250, 500, 750, 1000]);
        assert_eq!(late[0], [0]);
        for l in &late[1..] {
            assert_eq!(l, &[200, 150, 100, 50, 0]);
        }
    }
}
