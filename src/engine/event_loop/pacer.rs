//! Arrival pacing: when this engine's next arrival is due and whether it may start.
//!
//! Arrival k of the engine's stripe is due at `t0 + offset_k`, the schedule's absolute
//! offset (`workload::rate::Schedule`: t0 + Σ draws, exact), never at "the previous
//! start + a draw": a late start does not move any later arrival (no drift). An
//! arrival due at `at` starts at the first `admit` with `now ≥ at`, unless the engine
//! holds it (stopping, `--max-connections`), `--runtime` ends before it (an arrival
//! due at the end is not started: httperf's 2.5 s at 50/s is 125 connections), or
//! the catch-up bound of an engine that is behind defers it (`catchup`, scheduled
//! arrivals of connections and sessions only: the closed loop has no schedule, and
//! the call-rate pool only queues due calls). A deferred arrival keeps its scheduled
//! time, so its lateness is measured from it.
//!
//! Pure: every decision takes `now`. The engine asks `admit` for each arrival in
//! turn (reading its clock before each one: an arrival's lateness is from the moment
//! it starts, not from the start of a burst), calls `begin` and `schedule_next`
//! around starting it, and asks `wake` when to set its timer; the closed loop sets
//! the next arrival itself (`insert`). Figures go to `stats::pacing`.

use std::time::{Duration, Instant};

use super::catchup::{CatchUp, Gate};
use crate::model::workload::rate::Schedule;

/// The arrival schedule of one engine, and where it is in it.
#[derive(Debug, Clone)]
pub(super) struct Pacer {
    schedule: Schedule,
    t0: Instant,
    /// Arrivals this engine makes (its plan).
    arrivals: u64,
    /// Arrivals started (units of the closed loop included).
    started: u64,
    /// When the next arrival is due (None: no arrival is pending).
    next: Option<Instant>,
    /// `--runtime`'s end.
    runtime_end: Option<Instant>,
    /// The overload policy's bound on catch-up.
    pub(super) catchup: CatchUp,
    /// Whether the catch-up bound applies (scheduled connections and sessions).
    bounded: bool,
}

impl Pacer {
    /// Pacing of `arrivals` arrivals on `schedule` from `t0`, ending at `runtime_end`,
    /// with the catch-up bound `catchup` (applied when `bounded`).
    pub(super) fn new(
        schedule: Schedule,
        t0: Instant,
        arrivals: u64,
        runtime_end: Option<Instant>,
        catchup: CatchUp,
        bounded: bool,
    ) -> Pacer {
        Pacer {
            schedule,
            t0,
            arrivals,
            started: 0,
            next: None,
            runtime_end,
            catchup,
            bounded,
        }
    }

    /// The first scheduled arrival becomes pending (none when the plan has none).
    pub(super) fn start(&mut self) {
        self.next = None;
        if self.arrivals > 0 {
            self.next = self.next_scheduled();
        }
    }

    /// `--runtime`'s end (moved with the schedule by `delay`).
    pub(super) fn runtime_end(&self) -> Option<Instant> {
        self.runtime_end
    }

    /// Where the schedule's offsets count from.
    pub(super) fn origin(&self) -> Instant {
        self.t0
    }

    /// The schedule begins `by` later (the pool's warm-up, before any arrival has
    /// started): every arrival, the pending one included, and `--runtime`'s end
    /// move with it.
    pub(super) fn delay(&mut self, by: Duration) {
        fn later(t: Instant, by: Duration) -> Instant {
            t.checked_add(by).unwrap_or(t)
        }
        self.t0 = later(self.t0, by);
        self.runtime_end = self.runtime_end.map(|t| later(t, by));
        self.next = self.next.map(|t| later(t, by));
    }

    /// When the pending arrival is due (None: none is pending).
    pub(super) fn next(&self) -> Option<Instant> {
        self.next
    }

    /// An arrival is pending from `at` unless one already is (the closed loop: a
    /// user became free).
    pub(super) fn insert(&mut self, at: Instant) {
        self.next.get_or_insert(at);
    }

    /// Arrivals started so far.
    pub(super) fn started(&self) -> u64 {
        self.started
    }

    /// A new loop turn begins (the catch-up bound counts per turn).
    pub(super) fn turn(&mut self) {
        self.catchup.turn();
    }

    /// Whether the pending arrival, due at `at`, starts at `now` with `open`
    /// connections open (`held`: the engine holds arrivals back, stopping or at
    /// `--max-connections`). If it does, it is no longer pending: the caller starts
    /// it (`begin`) and then makes the next one pending (`schedule_next`).
    pub(super) fn admit(&mut self, at: Instant, now: Instant, open: u64, held: bool) -> bool {
        if at > now || held || self.runtime_end.is_some_and(|end| at >= end) {
            return false;
        }
        if self.bounded && self.catchup.admit(at, now, open) != Gate::Go {
            return false;
        }
        self.next = None;
        true
    }

    /// An arrival starts: counts it; returns how many have started, this one
    /// included.
    pub(super) fn begin(&mut self) -> u64 {
        self.started += 1;
        self.started
    }

    /// After an arrival started: the next of the schedule becomes pending, if the
    /// plan has more.
    pub(super) fn schedule_next(&mut self) {
        if self.started < self.arrivals {
            self.next = self.next_scheduled();
        }
    }

    /// Whether the arrival due at `at` waits for a connection to close (`open` are
    /// open): an engine behind its schedule at the catch-up cap, or a full table.
    pub(super) fn waits_for_close(&self, at: Instant, now: Instant, open: u64) -> bool {
        self.bounded && self.catchup.gate(at, now, open) == Gate::Full
    }

    /// When the engine must wake for the pending arrival, as of `now`: `window`
    /// before it is due (to spin the rest, `spin`). None when there is none, or it
    /// waits for something other than time (`held`, or a close).
    pub(super) fn wake(
        &self,
        now: Instant,
        window: Duration,
        open: u64,
        held: bool,
    ) -> Option<Instant> {
        match self.next {
            Some(at) if !held && !self.waits_for_close(at, now, open) => {
                Some(at.checked_sub(window).unwrap_or(at))
            }
            _ => None,
        }
    }

    /// The arrivals of the plan due before the run ended at `end` (or `--runtime`'s
    /// end, if sooner) that never started; the schedule is consumed.
    pub(super) fn unstarted(&mut self, end: Instant) -> u64 {
        let end = self.runtime_end.map_or(end, |r| r.min(end));
        let mut left = self.arrivals.saturating_sub(self.started);
        let mut next = self.next;
        let mut n = 0;
        while left > 0 {
            match next {
                Some(at) if at < end => {
                    n += 1;
                    left -= 1;
                    next = self.next_scheduled();
                }
                _ => break,
            }
        }
        n
    }

    /// The schedule's next arrival of this stripe, absolute.
    fn next_scheduled(&mut self) -> Option<Instant> {
        self.schedule
            .next_offset()
            .and_then(|o| self.t0.checked_add(o))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::clock::{Clock, Sim};
    use crate::model::pacing::Overload;
    use crate::model::workload::rate::Period;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A pacer for `period`, stripe 0 of 1, `arrivals` arrivals, under `policy`.
    fn pacer(period: &Period, t0: Instant, arrivals: u64, policy: Overload) -> Pacer {
        let catchup = CatchUp::new(policy, period.mean(), 20_000);
        let mut p = Pacer::new(
            Schedule::new(period, 0, 0, 1),
            t0,
            arrivals,
            None,
            catchup,
            true,
        );
        p.start();
        p
    }

    /// One loop turn as `Engine::on_arrivals` runs it: every arrival `admit`ted in
    /// turn, the clock read before each but the first; `open` grows by one per
    /// start. Returns (scheduled, started) of each.
    fn turn(p: &mut Pacer, clock: &Sim, open: &mut u64) -> Vec<(Instant, Instant)> {
        p.turn();
        let mut now = clock.now();
        let mut first = true;
        let mut out = Vec::new();
        while let Some(at) = p.next() {
            if !first {
                now = clock.now();
            }
            first = false;
            if !p.admit(at, now, *open, false) {
                break;
            }
            p.begin();
            out.push((at, now));
            *open += 1;
            p.schedule_next();
        }
        out
    }

    #[test]
    fn arrivals_start_exactly_on_an_absolute_schedule_that_late_starts_do_not_move() {
        let t0 = Instant::now();
        // 1,000/s: due every millisecond.
        let mut p = pacer(&Period::Deterministic(0.001), t0, 10, Overload::Queue);
        let clock = Sim::new(t0);
        let mut open = 0;
        let mut started = Vec::new();
        // Woken on time for arrivals 0–2.
        for k in 0..3 {
            clock.set(t0 + ms(k));
            started.extend(turn(&mut p, &clock, &mut open));
        }
        // Not due yet 1 µs before arrival 3.
        clock.set(t0 + ms(3) - us(1));
        assert!(turn(&mut p, &clock, &mut open).is_empty());
        // Woken 3.4 ms late: arrivals 3–6 start now, each late from its own time...
        clock.set(t0 + us(6_400));
        let burst = turn(&mut p, &clock, &mut open);
        assert_eq!(burst.len(), 4);
        started.extend(burst);
        // ...and arrival 7 is still due at 7 ms, not 1 ms after the late start.
        assert_eq!(p.next(), Some(t0 + ms(7)));
        for k in 7..10 {
            clock.set(t0 + ms(k));
            started.extend(turn(&mut p, &clock, &mut open));
        }
        let scheduled: Vec<Instant> = started.iter().map(|s| s.0).collect();
        let want: Vec<Instant> = (0..10).map(|k| t0 + ms(k)).collect();
        assert_eq!(scheduled, want);
        let late: Vec<Duration> = started.iter().map(|s| s.1 - s.0).collect();
        let mut want_late = vec![Duration::ZERO; 10];
        want_late[3..7].copy_from_slice(&[us(3_400), us(2_400), us(1_400), us(400)]);
        assert_eq!(late, want_late);
        assert_eq!(p.next(), None, "the plan's 10 arrivals are made");
        assert_eq!(p.started(), 10);
    }

    #[test]
    fn the_kth_arrival_is_at_t0_plus_the_sum_of_draws_without_drift() {
        let t0 = Instant::now();
        // 3,000/s: a period of 333,333.33 ns, not a whole number of nanoseconds.
        // Arrival 3,000 is at exactly 1 s (adding rounded periods would give
        // 999,999,000 ns: 1 µs of drift).
        let mut p = pacer(
            &Period::Deterministic(1.0 / 3000.0),
            t0,
            3001,
            Overload::Queue,
        );
        let clock = Sim::new(t0 + Duration::from_secs(2));
        let mut open = 0;
        let all = turn(&mut p, &clock, &mut open);
        assert_eq!(all.len(), 3001);
        assert_eq!(all[3000].0, t0 + Duration::from_secs(1));
        assert_eq!(all[1].0, t0 + Duration::from_nanos(333_333));
        assert_eq!(all[2].0, t0 + Duration::from_nanos(666_667));
        // Exponential draws: exactly the schedule's offsets from t0.
        let period = Period::Exponential(0.002);
        let mut p = pacer(&period, t0, 500, Overload::Queue);
        let mut reference = Schedule::new(&period, 0, 0, 1);
        let mut open = 0;
        let all = turn(&mut p, &clock, &mut open);
        assert_eq!(all.len(), 500);
        for (k, (at, _)) in all.iter().enumerate() {
            let want = t0 + reference.next_offset().expect("an offset");
            assert_eq!(*at, want, "arrival {k}");
        }
    }

    #[test]
    fn each_arrival_of_a_burst_is_late_from_the_clock_as_it_starts() {
        let t0 = Instant::now();
        let mut p = pacer(&Period::Deterministic(0.001), t0, 5, Overload::Queue);
        // Each start costs 30 µs of clock.
        let clock = Sim::stepping(t0 + ms(10), us(30));
        let mut open = 0;
        let got = turn(&mut p, &clock, &mut open);
        let started: Vec<Duration> = got.iter().map(|s| s.1 - t0).collect();
        assert_eq!(
            started,
            [
                ms(10),
                ms(10) + us(30),
                ms(10) + us(60),
                ms(10) + us(90),
                ms(10) + us(120)
            ]
        );
    }

    #[test]
    fn a_striped_engine_takes_every_nth_arrival() {
        let t0 = Instant::now();
        let period = Period::Deterministic(0.001);
        let catchup = CatchUp::new(Overload::Queue, 0.003, 100);
        // Stripe 1 of 3: global arrivals 1, 4, 7, 10.
        let mut p = Pacer::new(Schedule::new(&period, 0, 1, 3), t0, 4, None, catchup, true);
        p.start();
        let clock = Sim::new(t0 + Duration::from_secs(1));
        let mut open = 0;
        let at: Vec<Instant> = turn(&mut p, &clock, &mut open)
            .iter()
            .map(|s| s.0)
            .collect();
        assert_eq!(at, [1, 4, 7, 10].map(|k| t0 + ms(k)));
    }

    #[test]
    fn runtime_ends_before_an_arrival_due_at_its_end_and_counts_the_unstarted() {
        let t0 = Instant::now();
        let period = Period::Deterministic(0.02);
        let catchup = CatchUp::new(Overload::Degrade, 0.02, 100);
        // 50/s for 2.5 s of a plan of 1,000: 125 arrivals (0 … 2.48 s).
        let end = t0 + ms(2500);
        let sched = Schedule::new(&period, 0, 0, 1);
        let mut p = Pacer::new(sched, t0, 1000, Some(end), catchup, true);
        p.start();
        let clock = Sim::new(t0);
        let mut open = 0;
        let mut n = 0;
        for k in 0..=200 {
            clock.set(t0 + ms(20 * k));
            n += turn(&mut p, &clock, &mut open).len();
            open = 0;
        }
        assert_eq!(n, 125);
        assert_eq!(p.next(), Some(end), "due at the end: never started");
        // None was due before the end and left unstarted...
        assert_eq!(p.clone().unstarted(t0 + ms(4000)), 0);
        // ...but a run stopped at 1 s after only 25 leaves 25 due before it.
        let sched = Schedule::new(&period, 0, 0, 1);
        let mut q = Pacer::new(sched, t0, 1000, Some(end), queue(0.02), true);
        q.start();
        let clock = Sim::new(t0 + ms(490));
        assert_eq!(turn(&mut q, &clock, &mut 0).len(), 25);
        assert_eq!(q.unstarted(t0 + ms(1000)), 25);
    }

    #[test]
    fn a_delayed_schedule_moves_every_arrival_and_the_runtime_end() {
        // 50/s for 1 s, delayed 7 ms before any arrival started (the pool's warm-up):
        // the same 50 arrivals, each 7 ms later, the runtime's end too.
        let t0 = Instant::now();
        let period = Period::Deterministic(0.02);
        let catchup = CatchUp::new(Overload::Degrade, 0.02, 100);
        let sched = Schedule::new(&period, 0, 0, 1);
        let mut p = Pacer::new(sched, t0, 1000, Some(t0 + ms(1000)), catchup, true);
        p.start();
        assert_eq!(p.next(), Some(t0));
        p.delay(ms(7));
        assert_eq!((p.origin(), p.next()), (t0 + ms(7), Some(t0 + ms(7))));
        let clock = Sim::new(t0);
        let mut due = Vec::new();
        for k in 0..=120 {
            clock.set(t0 + ms(10 * k));
            due.extend(turn(&mut p, &clock, &mut 0).into_iter().map(|(at, _)| at));
        }
        assert_eq!(due.len(), 50);
        assert!(due
            .iter()
            .enumerate()
            .all(|(k, &at)| at == t0 + ms(7 + 20 * k as u64)));
        assert_eq!(
            p.next(),
            Some(t0 + ms(1007)),
            "due at the moved end: never started"
        );
    }

    /// No catch-up bound (`--overload=queue`).
    fn queue(period: f64) -> CatchUp {
        CatchUp::new(Overload::Queue, period, 100)
    }

    #[test]
    fn held_arrivals_wait_and_keep_their_scheduled_time() {
        let t0 = Instant::now();
        let mut p = pacer(&Period::Deterministic(0.001), t0, 3, Overload::Degrade);
        // `--max-connections` reached: the arrival waits, and needs no timer.
        assert!(!p.admit(t0, t0 + ms(5), 1, true));
        assert_eq!(p.wake(t0 + ms(5), us(50), 1, true), None);
        // A close lets it in, 5 ms late from its own time.
        assert!(p.admit(t0, t0 + ms(5), 0, false));
        p.begin();
        p.schedule_next();
        // The next wakes the engine the spin window before it is due.
        assert_eq!(
            p.wake(t0 + ms(5), us(50), 0, false),
            Some(t0 + ms(1) - us(50))
        );
    }

    #[test]
    fn degrade_spreads_a_backlog_over_turns_and_queue_releases_it_at_once() {
        let t0 = Instant::now();
        let rate = 17_000.0;
        // 50 ms behind at 17,000/s: 851 arrivals due (0 … 50 ms).
        let now = t0 + ms(50);
        let mut degrade = pacer(
            &Period::Deterministic(1.0 / rate),
            t0,
            2000,
            Overload::Degrade,
        );
        let clock = Sim::new(now);
        let mut open = 0;
        let mut turns = Vec::new();
        loop {
            let n = turn(&mut degrade, &clock, &mut open).len();
            if n == 0 {
                break;
            }
            turns.push(n);
        }
        // Arrivals more than 1 ms late (k ≤ 832) go 34 per turn (2 ms of the
        // schedule); the last 18 are on schedule (due within 1 ms) and go with the
        // last 17 late ones.
        assert_eq!(turns.len(), 25, "{turns:?}");
        assert!(turns[..24].iter().all(|&n| n == 34), "{turns:?}");
        assert_eq!(turns[24], 17 + 18);
        // Late arrivals held back by the bound, and those behind them, are counted.
        assert_eq!(degrade.catchup.deferred, 833 - 34);
        let mut queue = pacer(
            &Period::Deterministic(1.0 / rate),
            t0,
            2000,
            Overload::Queue,
        );
        let mut open = 0;
        assert_eq!(turn(&mut queue, &clock, &mut open).len(), 851);
        assert_eq!(queue.catchup.deferred, 0);
    }

    #[test]
    fn behind_at_the_cap_the_engine_waits_for_a_close_without_a_timer() {
        let t0 = Instant::now();
        let mut p = pacer(&Period::Deterministic(0.001), t0, 100, Overload::Degrade);
        let now = t0 + ms(30);
        // Fell behind with 10 open: the cap is a quarter of the 20,000 table.
        assert!(p.admit(t0, now, 10, false));
        p.begin();
        p.schedule_next();
        let at = t0 + ms(1);
        assert!(p.waits_for_close(at, now, 5_000));
        assert_eq!(p.wake(now, Duration::ZERO, 5_000, false), None);
        assert!(!p.admit(at, now, 5_000, false));
        // A close lets it in.
        assert!(!p.waits_for_close(at, now, 4_999));
        assert!(p.admit(at, now, 4_999, false));
        // Not without the bound (the pool, the closed loop).
        let unbounded = Pacer::new(
            Schedule::new(&Period::Deterministic(0.001), 0, 0, 1),
            t0,
            100,
            None,
            CatchUp::new(Overload::Degrade, 0.001, 20_000),
            false,
        );
        assert!(!unbounded.waits_for_close(t0, now, 20_000));
    }

    #[test]
    fn the_closed_loop_inserts_its_own_arrivals() {
        let t0 = Instant::now();
        let catchup = CatchUp::new(Overload::Degrade, 0.0, 100);
        let sched = Schedule::new(&Period::Sequential, 0, 0, 1);
        let mut p = Pacer::new(sched, t0, 0, None, catchup, false);
        p.start();
        assert_eq!(p.next(), None);
        p.insert(t0 + ms(2));
        p.insert(t0 + ms(5));
        assert_eq!(p.next(), Some(t0 + ms(2)), "the earlier stays");
        assert!(p.admit(t0 + ms(2), t0 + ms(3), 10_000, false));
        assert_eq!(p.next(), None);
    }
}
