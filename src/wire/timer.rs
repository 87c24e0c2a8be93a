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
mod tests;
