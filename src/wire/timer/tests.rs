//! Tests of the timing wheel (`timer.rs`): firing order, never early, cancels and
//! stale ids, the capacity limit, deadlines many revolutions away, long idle gaps and
//! catch-ups bounded in work, and random schedules against a reference model.

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
