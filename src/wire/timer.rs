//! A hashed timing wheel for connection watchdogs and think times.
//!
//! Owns deadlines and their payloads; O(1) schedule and cancel, no allocation after
//! construction (entries live in a fixed-capacity slab with intrusive lists). Deadlines
//! are rounded up to the tick, and timers never fire early: a timer fires at the first
//! `expire(now)` with `now >=` its rounded-up deadline. Stale `TimerId`s (already fired
//! or cancelled) are inert thanks to a generation counter. Arrival pacing does not use
//! the wheel (it needs sub-millisecond precision and has its own absolute schedule);
//! called by the engine.
//!
//! Layout: `SLOTS` wheel slots, each an intrusive doubly-linked list (u32 indices into
//! the slab) holding the entries whose deadline tick is ≡ slot (mod `SLOTS`); each entry
//! keeps its absolute deadline tick, so entries more than one revolution away simply
//! stay in their slot until the wheel reaches their tick (an implicit `rounds` count).
//! One extra list holds timers scheduled in the past, fired by the next `expire`. An
//! occupancy bitmap finds the next non-empty slot in at most 17 word tests, which keeps
//! `next_deadline` cheap and lets `expire` jump over empty stretches; a gap of several
//! revolutions jumps straight to the earliest pending tick.

use std::time::{Duration, Instant};

/// Number of wheel slots (a power of two; 1024 ticks = about 1 s at 1 ms ticks).
const SLOTS: usize = 1024;
/// Words in the occupancy bitmap.
const WORDS: usize = SLOTS / 64;
/// The list of timers scheduled with a deadline already passed.
const DUE: usize = SLOTS;
/// "No entry" in the intrusive lists.
const NIL: u32 = u32::MAX;
/// Deadlines are clamped to this many nanoseconds after `start` (about 146 years), so
/// tick arithmetic never overflows and `start + deadline` is always a valid `Instant`.
const MAX_NS: u64 = 1 << 62;

/// Handle to a scheduled timer: slab slot plus generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimerId {
    slot: u32,
    generation: u32,
}

/// One slab entry: a pending timer when `payload` is `Some`, else on the free list.
#[derive(Debug, Clone, Copy)]
struct Entry<T> {
    /// Absolute deadline tick (deadline rounded up to the tick).
    tick: u64,
    /// Previous entry in the same list (NIL at the head).
    prev: u32,
    /// Next entry in the same list, or in the free list when free.
    next: u32,
    /// Which list holds the entry: a slot index, or `DUE`.
    list: u32,
    /// Bumped every time the entry is freed, so old `TimerId`s stop matching.
    generation: u32,
    /// The payload; `None` marks a free entry.
    payload: Option<T>,
}

/// Head and tail of one intrusive list.
#[derive(Debug, Clone, Copy)]
struct List {
    first: u32,
    last: u32,
}

impl List {
    /// An empty list.
    const EMPTY: List = List {
        first: NIL,
        last: NIL,
    };
}

/// The timing wheel, carrying a `Copy` payload per timer.
pub(crate) struct TimerWheel<T: Copy> {
    /// Time of tick 0.
    start: Instant,
    /// Tick length in nanoseconds, ≥ 1.
    tick_ns: u64,
    /// Ticks `0..done` have been processed; the next `expire` starts at tick `done`.
    done: u64,
    /// The slab, allocated once.
    entries: Box<[Entry<T>]>,
    /// `SLOTS` wheel lists plus the `DUE` list.
    lists: Box<[List; SLOTS + 1]>,
    /// Bit s set ⇔ wheel list s is non-empty (the `DUE` list is not in the bitmap).
    occupied: [u64; WORDS],
    /// Head of the free list (linked through `next`).
    free: u32,
    /// Number of pending timers.
    len: usize,
}

impl<T: Copy> TimerWheel<T> {
    /// A wheel starting at `start`, with `tick` resolution and room for `capacity`
    /// simultaneous timers (the slab never grows beyond it; at most `u32::MAX - 1`).
    pub(crate) fn new(start: Instant, tick: Duration, capacity: usize) -> Self {
        let capacity = capacity.min(NIL as usize - 1);
        let tick_ns = u64::try_from(tick.as_nanos()).unwrap_or(u64::MAX).max(1);
        let entries: Box<[Entry<T>]> = (0..capacity)
            .map(|i| Entry {
                tick: 0,
                prev: NIL,
                // Free list initially links every entry in order; capacity < NIL.
                next: if i + 1 < capacity { i as u32 + 1 } else { NIL },
                list: 0,
                generation: 0,
                payload: None,
            })
            .collect();
        TimerWheel {
            start,
            tick_ns,
            done: 0,
            entries,
            lists: Box::new([List::EMPTY; SLOTS + 1]),
            occupied: [0; WORDS],
            free: if capacity > 0 { 0 } else { NIL },
            len: 0,
        }
    }

    /// Schedules `payload` at `deadline` (a past deadline fires at the next `expire`).
    /// Returns None only when `capacity` timers are already pending.
    pub(crate) fn schedule(&mut self, deadline: Instant, payload: T) -> Option<TimerId> {
        if self.free == NIL {
            return None;
        }
        let index = self.free;
        let ns = self.ns_since_start(deadline);
        let tick = ns.div_ceil(self.tick_ns);
        let list = if tick < self.done {
            DUE
        } else {
            (tick % SLOTS as u64) as usize
        };
        let entry = &mut self.entries[index as usize];
        self.free = entry.next;
        entry.tick = tick;
        entry.payload = Some(payload);
        let generation = entry.generation;
        self.push_back(list, index);
        self.len += 1;
        Some(TimerId {
            slot: index,
            generation,
        })
    }

    /// Cancels a pending timer; returns false if it already fired or was cancelled.
    pub(crate) fn cancel(&mut self, id: TimerId) -> bool {
        match self.entries.get(id.slot as usize) {
            Some(e) if e.payload.is_some() && e.generation == id.generation => {
                self.remove(id.slot);
                true
            }
            _ => false,
        }
    }

    /// Number of pending timers.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// True when no timer is pending.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A time at or before the earliest pending (rounded-up) deadline, never later than
    /// it; None when nothing is pending. It is exact unless the first non-empty slot
    /// only holds timers one or more revolutions away, in which case it is that slot's
    /// time: the engine wakes, calls `expire` (which moves past the slot) and sleeps
    /// again. Past-deadline timers make it return `start`, a time already passed.
    /// `expire` at the returned time always makes progress, so there is no busy loop.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        if self.len == 0 {
            return None;
        }
        if self.lists[DUE].first != NIL {
            // Already due; `start` is at or before any (clamped) deadline.
            return Some(self.start);
        }
        let distance = self.next_occupied(self.done, SLOTS as u64)?;
        Some(self.instant_of(self.done + distance))
    }

    /// Removes every timer whose rounded-up deadline is <= `now` and calls `fire` with
    /// its payload, in deadline order within tick resolution (past-deadline timers
    /// first, in scheduling order; equal ticks in scheduling order). `fire` may not
    /// touch the wheel; collect follow-up work and schedule it after `expire` returns.
    pub(crate) fn expire(&mut self, now: Instant, mut fire: impl FnMut(T)) {
        while self.lists[DUE].first != NIL {
            let index = self.lists[DUE].first;
            if let Some(payload) = self.remove(index) {
                fire(payload);
            }
        }
        if now < self.start {
            return;
        }
        // Ticks t with start + t·tick <= now are due.
        let target = (self.ns_since_start(now) / self.tick_ns).saturating_add(1);
        // Next tick at which a long gap may look for the earliest pending tick again.
        let mut rescan_at = 0;
        while self.done < target {
            if target - self.done > 2 * SLOTS as u64 && self.done >= rescan_at {
                // A long gap: nothing is due before the earliest pending tick, so skip
                // straight to it rather than sweeping revolution after revolution. The
                // O(pending) scan runs at most once per revolution swept.
                let Some(min) = self.min_tick() else {
                    self.done = target;
                    break;
                };
                if min > self.done {
                    self.done = min.min(target);
                    continue;
                }
                rescan_at = self.done + SLOTS as u64;
            }
            let limit = (target - self.done).min(SLOTS as u64);
            let Some(distance) = self.next_occupied(self.done, limit) else {
                self.done += limit;
                continue;
            };
            let tick = self.done + distance;
            self.fire_slot(tick, &mut fire);
            self.done = tick + 1;
        }
    }

    /// Fires, in list order, the entries of `tick`'s slot whose deadline is `tick` or
    /// earlier; entries of later revolutions stay.
    fn fire_slot(&mut self, tick: u64, fire: &mut impl FnMut(T)) {
        let list = (tick % SLOTS as u64) as usize;
        let mut index = self.lists[list].first;
        while index != NIL {
            let entry = &self.entries[index as usize];
            let next = entry.next;
            if entry.tick <= tick {
                if let Some(payload) = self.remove(index) {
                    fire(payload);
                }
            }
            index = next;
        }
    }

    /// The smallest deadline tick of any entry in the wheel lists (O(pending)).
    fn min_tick(&self) -> Option<u64> {
        let mut min = None;
        for (w, &word) in self.occupied.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let list = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let mut index = self.lists[list].first;
                while index != NIL {
                    let entry = &self.entries[index as usize];
                    min = Some(min.map_or(entry.tick, |m: u64| m.min(entry.tick)));
                    index = entry.next;
                }
            }
        }
        min
    }

    /// Distance d < `limit` (≤ SLOTS) from tick `from` to the first tick whose slot is
    /// non-empty, found with the occupancy bitmap.
    fn next_occupied(&self, from: u64, limit: u64) -> Option<u64> {
        let start = (from % SLOTS as u64) as usize;
        let mut distance = 0u64;
        let mut pos = start;
        // At most WORDS + 1 word tests: the first word may be visited twice.
        while distance < limit {
            let word = self.occupied[pos / 64] >> (pos % 64);
            if word != 0 {
                let d = distance + u64::from(word.trailing_zeros());
                return (d < limit).then_some(d);
            }
            let step = 64 - (pos % 64);
            distance += step as u64;
            pos = (pos + step) % SLOTS;
        }
        None
    }

    /// Appends entry `index` to `list`.
    fn push_back(&mut self, list: usize, index: u32) {
        let last = self.lists[list].last;
        {
            let entry = &mut self.entries[index as usize];
            entry.prev = last;
            entry.next = NIL;
            entry.list = list as u32;
        }
        if last == NIL {
            self.lists[list].first = index;
            if list != DUE {
                self.occupied[list / 64] |= 1 << (list % 64);
            }
        } else {
            self.entries[last as usize].next = index;
        }
        self.lists[list].last = index;
    }

    /// Unlinks pending entry `index`, frees it and returns its payload.
    fn remove(&mut self, index: u32) -> Option<T> {
        let entry = self.entries[index as usize];
        let list = entry.list as usize;
        if entry.prev == NIL {
            self.lists[list].first = entry.next;
        } else {
            self.entries[entry.prev as usize].next = entry.next;
        }
        if entry.next == NIL {
            self.lists[list].last = entry.prev;
        } else {
            self.entries[entry.next as usize].prev = entry.prev;
        }
        if self.lists[list].first == NIL && list != DUE {
            self.occupied[list / 64] &= !(1 << (list % 64));
        }
        let slot = &mut self.entries[index as usize];
        slot.generation = slot.generation.wrapping_add(1);
        slot.payload = None;
        slot.prev = NIL;
        slot.next = self.free;
        self.free = index;
        self.len -= 1;
        entry.payload
    }

    /// Nanoseconds from `start` to `t` (0 before start), clamped to `MAX_NS`.
    fn ns_since_start(&self, t: Instant) -> u64 {
        let ns = t.saturating_duration_since(self.start).as_nanos();
        u64::try_from(ns).unwrap_or(MAX_NS).min(MAX_NS)
    }

    /// The instant of tick `tick`.
    fn instant_of(&self, tick: u64) -> Instant {
        let ns = tick.saturating_mul(self.tick_ns).min(MAX_NS);
        self.start
            .checked_add(Duration::from_nanos(ns))
            .expect("MAX_NS (146 years) after a monotonic instant is representable")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const MS: Duration = Duration::from_millis(1);

    fn wheel(capacity: usize) -> (Instant, TimerWheel<u32>) {
        let t0 = Instant::now();
        (t0, TimerWheel::new(t0, MS, capacity))
    }

    fn collect(w: &mut TimerWheel<u32>, now: Instant) -> Vec<u32> {
        let mut v = Vec::new();
        w.expire(now, |p| v.push(p));
        v
    }

    #[test]
    fn fires_in_deadline_order() {
        let (t0, mut w) = wheel(16);
        for (p, ms) in [(3, 30), (1, 10), (2, 20), (4, 30), (0, 5)] {
            w.schedule(t0 + ms * MS, p).expect("room");
        }
        assert_eq!(w.len(), 5);
        assert_eq!(collect(&mut w, t0 + 100 * MS), vec![0, 1, 2, 3, 4]);
        assert!(w.is_empty());
        assert_eq!(w.next_deadline(), None);
    }

    #[test]
    fn never_fires_early() {
        let (t0, mut w) = wheel(16);
        let deadline = t0 + Duration::from_micros(10_500);
        w.schedule(deadline, 7).expect("room");
        // Rounded up to 11 ms.
        assert_eq!(w.next_deadline(), Some(t0 + 11 * MS));
        assert!(collect(&mut w, t0 + 10 * MS).is_empty());
        assert!(collect(&mut w, deadline).is_empty());
        assert!(collect(&mut w, t0 + 11 * MS - Duration::from_nanos(1)).is_empty());
        assert_eq!(collect(&mut w, t0 + 11 * MS), vec![7]);
        // Exactly on a tick is not rounded.
        w.schedule(t0 + 20 * MS, 8).expect("room");
        assert!(collect(&mut w, t0 + 20 * MS - Duration::from_nanos(1)).is_empty());
        assert_eq!(collect(&mut w, t0 + 20 * MS), vec![8]);
    }

    #[test]
    fn cancel_and_stale_ids() {
        let (t0, mut w) = wheel(4);
        let a = w.schedule(t0 + 5 * MS, 1).expect("room");
        let b = w.schedule(t0 + 5 * MS, 2).expect("room");
        assert!(w.cancel(a));
        assert!(!w.cancel(a), "double cancel");
        assert_eq!(w.len(), 1);
        assert_eq!(collect(&mut w, t0 + 5 * MS), vec![2]);
        assert!(!w.cancel(b), "already fired");
        // The slot of `a` is reused; the old id must not cancel the new timer.
        let c = w.schedule(t0 + 9 * MS, 3).expect("room");
        assert!(!w.cancel(a));
        assert!(!w.cancel(b));
        assert_eq!(w.len(), 1);
        assert!(w.cancel(c));
        assert!(w.is_empty());
        assert!(collect(&mut w, t0 + 50 * MS).is_empty());
        // Out-of-range ids are inert too.
        assert!(!w.cancel(TimerId {
            slot: 99,
            generation: 0
        }));
    }

    #[test]
    fn capacity_limit() {
        let (t0, mut w) = wheel(3);
        let ids: Vec<TimerId> = (0..3)
            .map(|i| w.schedule(t0 + MS, i).expect("room"))
            .collect();
        assert_eq!(w.schedule(t0 + MS, 9), None);
        assert!(w.cancel(ids[1]));
        assert!(w.schedule(t0 + MS, 9).is_some());
        assert_eq!(w.schedule(t0 + MS, 10), None);
        let (_, mut empty) = wheel(0);
        assert_eq!(empty.schedule(t0, 1), None);
        assert_eq!(empty.next_deadline(), None);
    }

    #[test]
    fn long_deadlines_span_many_revolutions() {
        let (t0, mut w) = wheel(8);
        let far = 5 * SLOTS as u32 + 17; // ticks
        w.schedule(t0 + far * MS, 1).expect("room");
        w.schedule(t0 + 17 * MS, 2).expect("room");
        assert_eq!(w.next_deadline(), Some(t0 + 17 * MS));
        assert_eq!(collect(&mut w, t0 + 17 * MS), vec![2]);
        // Step through revolution by revolution, waking at next_deadline each time.
        let mut wakes = 0;
        while let Some(at) = w.next_deadline() {
            assert!(at <= t0 + far * MS, "next_deadline later than the deadline");
            let fired = collect(&mut w, at);
            wakes += 1;
            if at < t0 + far * MS {
                assert!(fired.is_empty(), "fired early at {:?}", at - t0);
            } else {
                assert_eq!(fired, vec![1]);
            }
            assert!(wakes < 20, "too many wake-ups");
        }
        assert!(w.is_empty());
    }

    #[test]
    fn past_deadlines_fire_at_next_expire() {
        let (t0, mut w) = wheel(8);
        assert!(collect(&mut w, t0 + 100 * MS).is_empty());
        w.schedule(t0 + 50 * MS, 1).expect("room");
        w.schedule(t0, 2).expect("room");
        w.schedule(t0 + 100 * MS, 3).expect("room"); // tick 100 already processed
        let nd = w.next_deadline().expect("pending");
        assert!(nd <= t0 + 100 * MS);
        // Fires even when expire is called with the same `now` again (or earlier).
        assert_eq!(collect(&mut w, t0 + 100 * MS), vec![1, 2, 3]);
        // Before start.
        let (t0, mut w) = wheel(8);
        w.schedule(t0 - Duration::from_secs(1), 4).expect("room");
        assert_eq!(w.next_deadline(), Some(t0));
        assert_eq!(collect(&mut w, t0), vec![4]);
    }

    #[test]
    fn next_deadline_bounds_earliest() {
        let (t0, mut w) = wheel(64);
        assert_eq!(w.next_deadline(), None);
        w.schedule(t0 + 700 * MS, 1).expect("room");
        assert_eq!(w.next_deadline(), Some(t0 + 700 * MS));
        w.schedule(t0 + 3 * MS, 2).expect("room");
        assert_eq!(w.next_deadline(), Some(t0 + 3 * MS));
        collect(&mut w, t0 + 5 * MS);
        assert_eq!(w.next_deadline(), Some(t0 + 700 * MS));
        // Wrapping around the end of the wheel.
        collect(&mut w, t0 + 1000 * MS);
        w.schedule(t0 + 1030 * MS, 3).expect("room");
        assert_eq!(w.next_deadline(), Some(t0 + 1030 * MS));
    }

    #[test]
    fn long_idle_gaps_are_fast() {
        let (t0, mut w) = wheel(SLOTS * 2);
        // Every slot occupied by a timer an hour away, plus one due in 10 minutes.
        let hour = 3_600_000u32;
        for i in 0..SLOTS as u32 * 2 {
            w.schedule(t0 + (hour + i) * MS, i).expect("room");
        }
        let started = Instant::now();
        assert!(collect(&mut w, t0 + 600 * 1000 * MS).is_empty());
        assert!(collect(&mut w, t0 + (hour - 1) * MS).is_empty());
        let fired = collect(&mut w, t0 + (hour + 10_000) * MS);
        assert_eq!(fired, (0..SLOTS as u32 * 2).collect::<Vec<_>>());
        // An empty wheel idle for ten minutes.
        let (t0, mut e) = wheel(4);
        assert!(collect(&mut e, t0 + 600 * 1000 * MS).is_empty());
        e.schedule(t0 + 600_001 * MS, 5).expect("room");
        assert_eq!(collect(&mut e, t0 + 600_001 * MS), vec![5]);
        // Generous bound: sweeping tick by tick would be millions of list walks.
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn long_catch_up_with_dense_timers_is_fast() {
        // 20,000 timers spread over 20 s, all fired by one late expire.
        let (t0, mut w) = wheel(20_000);
        for i in 0..20_000u32 {
            w.schedule(t0 + i * MS, i).expect("room");
        }
        let started = Instant::now();
        let fired = collect(&mut w, t0 + Duration::from_secs(30));
        assert_eq!(fired, (0..20_000).collect::<Vec<_>>());
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    /// xorshift64*: deterministic test randomness.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[test]
    fn matches_reference_model() {
        let tick = Duration::from_micros(250);
        let tick_ns = 250_000u64;
        let (mut fired_total, mut full, mut cancelled) = (0usize, 0usize, 0usize);
        for seed in 1..=8u64 {
            let mut rng = XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let t0 = Instant::now();
            let cap = if seed % 2 == 0 { 8 } else { 300 };
            let mut w: TimerWheel<u32> = TimerWheel::new(t0, tick, cap);
            // Model: (effective tick, sequence) → (payload, id); done = processed ticks.
            let mut model: BTreeMap<(u64, u64), (u32, TimerId)> = BTreeMap::new();
            let mut ids: Vec<(TimerId, (u64, u64))> = Vec::new();
            let mut stale: Vec<TimerId> = Vec::new();
            let mut now_ns = 0u64;
            let mut done = 0u64;
            let mut seq = 0u64;
            for step in 0..20_000 {
                match rng.below(10) {
                    0..=4 => {
                        // Deadlines from the past to several revolutions ahead.
                        let ns = match rng.below(8) {
                            0 => now_ns.saturating_sub(rng.below(5_000_000)),
                            1 => now_ns + rng.below(SLOTS as u64 * 6 * tick_ns),
                            _ => now_ns + rng.below(200 * tick_ns),
                        };
                        let payload = seq as u32;
                        let got = w.schedule(t0 + Duration::from_nanos(ns), payload);
                        if model.len() == cap {
                            assert_eq!(got, None, "seed {seed} step {step}");
                            full += 1;
                            continue;
                        }
                        let id = got.expect("room in the model");
                        let t = ns.div_ceil(tick_ns);
                        let key = (if t < done { 0 } else { t }, seq);
                        seq += 1;
                        model.insert(key, (payload, id));
                        ids.push((id, key));
                    }
                    5..=6 => {
                        if !ids.is_empty() && rng.below(4) != 0 {
                            let i = rng.below(ids.len() as u64) as usize;
                            let (id, key) = ids.swap_remove(i);
                            let live = model.remove(&key).is_some();
                            assert_eq!(w.cancel(id), live, "seed {seed} step {step}");
                            cancelled += usize::from(live);
                            stale.push(id);
                        } else if !stale.is_empty() {
                            let i = rng.below(stale.len() as u64) as usize;
                            assert!(!w.cancel(stale[i]), "stale id cancelled");
                        }
                    }
                    _ => {
                        now_ns += match rng.below(20) {
                            0 => rng.below(SLOTS as u64 * 10 * tick_ns),
                            1 => 0,
                            _ => rng.below(40 * tick_ns),
                        };
                        let mut fired = Vec::new();
                        w.expire(t0 + Duration::from_nanos(now_ns), |p| fired.push(p));
                        done = now_ns / tick_ns + 1;
                        let mut want = Vec::new();
                        while let Some(entry) = model.first_entry() {
                            if entry.key().0 >= done {
                                break;
                            }
                            let (payload, id) = entry.remove();
                            want.push(payload);
                            stale.push(id);
                        }
                        // Past-deadline entries (key 0) stay in the model keyed by
                        // scheduling order, like the wheel's due list.
                        assert_eq!(fired, want, "seed {seed} step {step}");
                        fired_total += fired.len();
                        ids.retain(|(_, key)| model.contains_key(key));
                    }
                }
                assert_eq!(w.len(), model.len());
                match model.keys().next() {
                    None => assert_eq!(w.next_deadline(), None),
                    Some(&(t, _)) => {
                        let nd = w.next_deadline().expect("pending timers");
                        let earliest = t0 + Duration::from_nanos(t * tick_ns);
                        assert!(nd <= earliest, "seed {seed} step {step}");
                    }
                }
            }
        }
        // The run exercised firing, cancelling and the capacity limit.
        assert!(fired_total > 10_000 && cancelled > 1_000 && full > 100);
    }
}
