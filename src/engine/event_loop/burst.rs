//! httperf's "Maximum connect burst length": the most connects started within one
//! event-loop iteration.
//!
//! A burst is the run of connects made in one loop iteration (arrivals released
//! together after a late wake-up, a session's connections, a pool's reconnects).
//! As in httperf, a burst is compared with the maximum only when a connect happens in
//! a later iteration, so a run of one connection reports 0 and the last burst of a
//! run is not counted. Pure: the engine passes the iteration number it is in;
//! the maximum goes to `Stats::max_burst`.

/// The burst of connects being counted.
#[derive(Debug, Clone, Default)]
pub(super) struct Bursts {
    /// The loop iteration of the current burst.
    iteration: u64,
    /// Connects in it so far (0: none yet in this run).
    len: u64,
}

impl Bursts {
    /// A connect starts in loop iteration `iteration`; `max` is the maximum burst
    /// length so far, raised when a burst of an earlier iteration was longer.
    pub(super) fn connect(&mut self, iteration: u64, max: &mut u64) {
        if iteration == self.iteration && self.len > 0 {
            self.len += 1;
        } else {
            *max = (*max).max(self.len);
            self.len = 1;
            self.iteration = iteration;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::super::catchup::CatchUp;
    use super::super::pacer::Pacer;
    use super::*;
    use crate::engine::clock::{Clock, Sim};
    use crate::model::pacing::Overload;
    use crate::model::workload::rate::{Period, Schedule};

    /// The maximum burst of connects made `per_iteration[i]` in iteration i.
    fn max_of(per_iteration: &[u64]) -> u64 {
        let mut b = Bursts::default();
        let mut max = 0;
        for (i, &n) in per_iteration.iter().enumerate() {
            for _ in 0..n {
                b.connect(i as u64 + 1, &mut max);
            }
        }
        max
    }

    #[test]
    fn a_burst_counts_once_a_later_iteration_connects() {
        assert_eq!(max_of(&[1]), 0, "one connection: 0, as in httperf");
        assert_eq!(max_of(&[5]), 0, "the last burst is never compared");
        assert_eq!(max_of(&[1, 1, 1]), 1);
        assert_eq!(max_of(&[3, 0, 0, 1]), 3);
        assert_eq!(max_of(&[2, 7, 4, 1]), 7);
        assert_eq!(max_of(&[2, 7, 9]), 7);
    }

    /// The maximum burst of a run at `rate`/s under `policy` whose engine wakes on
    /// time except once, `stall` late, with one loop iteration per wake-up.
    fn run(rate: f64, policy: Overload, stall: Duration) -> u64 {
        let t0 = Instant::now();
        let period = Period::Deterministic(1.0 / rate);
        let catchup = CatchUp::new(policy, 1.0 / rate, 20_000);
        let schedule = Schedule::new(&period, 0, 0, 1);
        let mut p = Pacer::new(schedule, t0, 5_000, None, catchup, true);
        p.start();
        let clock = Sim::new(t0);
        let (mut bursts, mut max, mut iteration) = (Bursts::default(), 0, 0);
        let mut stalled = false;
        while let Some(at) = p.next() {
            // Wake for the next arrival, or `stall` after it once (at 10 ms).
            let late = !stalled && at >= t0 + Duration::from_millis(10);
            stalled |= late;
            let wake = if late { at + stall } else { at };
            clock.set(wake.max(clock.peek()));
            iteration += 1;
            p.turn();
            while let Some(at) = p.next() {
                if !p.admit(at, clock.now(), 0, false) {
                    break;
                }
                p.begin();
                bursts.connect(iteration, &mut max);
                p.schedule_next();
            }
        }
        max
    }

    #[test]
    fn on_time_arrivals_are_bursts_of_one_and_a_stall_releases_a_longer_one() {
        assert_eq!(run(1000.0, Overload::Degrade, Duration::ZERO), 1);
        // 1,000/s, 20 ms late: 21 arrivals due (16 per turn at most while behind,
        // the on-schedule ones with them).
        assert_eq!(run(1000.0, Overload::Queue, Duration::from_millis(20)), 21);
        assert_eq!(
            run(1000.0, Overload::Degrade, Duration::from_millis(20)),
            16
        );
        // 17,000/s, 50 ms late: 851 due; degrade releases 34 a turn.
        assert_eq!(
            run(17_000.0, Overload::Queue, Duration::from_millis(50)),
            851
        );
        assert_eq!(
            run(17_000.0, Overload::Degrade, Duration::from_millis(50)),
            35
        );
    }
}
