//! Arrival schedules: `--rate` / `--period` (d, u, e, v) as absolute offsets from t0.
//!
//! Owns the inter-arrival distributions, httperf's `erand48` random numbers (seeded from
//! `--client`), and striping (engine j of N takes arrivals k ≡ j mod N of one global
//! sequence). Does not know about connections or time sources: it only yields offsets.
//! Called by the engine's arrival generator.
//!
//! Offsets are accumulated as integer attoseconds (10⁻¹⁸ s) in a `u128`: each draw is
//! rounded once to the nearest attosecond and the sum is exact, so a million arrivals
//! drift by at most 0.5 fs and the same draws always give the same offsets (which is
//! what makes N stripes together equal the single-stripe sequence bit for bit).
//!
//! Under a rate profile (`--rate-profile`) the same draws, divided by the period
//! distribution's mean, are unit-time increments s_k, and arrival k is at
//! Λ⁻¹(s_k) (`model::profile::TimeChange`): deterministic spacing puts arrivals
//! where Λ crosses each integer, exponential spacing is the non-homogeneous Poisson
//! process of the profile's rate (time change of a unit-rate process), uniform
//! spacing keeps its relative spread around the mean, and variable spacing its pattern
//! of periods (their durations counted in the pattern's own time). The s_k are exact
//! attosecond sums as above and Λ⁻¹ is a pure function, so striping keeps its
//! property; the schedule ends at the profile's end.

use std::sync::Arc;
use std::time::Duration;

use crate::model::profile::time::{attos_secs, to_attos};
use crate::model::profile::TimeChange;
use crate::model::replay::feed::{self, SharedFeed};

pub(crate) use crate::model::config::Period;

/// Multiplier of the `erand48` recurrence.
const ERAND48_A: u64 = 0x5_DEEC_E66D;
/// Increment of the `erand48` recurrence.
const ERAND48_C: u64 = 0xB;
/// The state is 48 bits wide.
const ERAND48_MASK: u64 = (1 << 48) - 1;

/// httperf's 48-bit linear congruential generator (`erand48`), bit-exact with glibc.
#[derive(Debug, Clone)]
pub(crate) struct Erand48 {
    state: u64,
}

impl Erand48 {
    /// The generator httperf seeds for client `id`: words `0x1234 ^ id`,
    /// `0x5678 ^ (id << 8)`, `0x9abc ^ !id` (id truncated to 16 bits).
    pub(crate) fn for_client(id: u32) -> Self {
        let id = u64::from(id as u16);
        let w0 = (0x1234 ^ id) & 0xffff;
        let w1 = (0x5678 ^ (id << 8)) & 0xffff;
        let w2 = (0x9abc ^ !id) & 0xffff;
        Erand48 {
            state: w0 | (w1 << 16) | (w2 << 32),
        }
    }

    /// The next value in [0, 1), exactly `x / 2^48`.
    pub(crate) fn next_f64(&mut self) -> f64 {
        self.state = ERAND48_A.wrapping_mul(self.state).wrapping_add(ERAND48_C) & ERAND48_MASK;
        // 48 bits fit in the 53-bit significand: the conversion and the division by a
        // power of two are both exact, like glibc's bit assembly of the double.
        self.state as f64 / (1u64 << 48) as f64
    }
}

/// Attoseconds per nanosecond.
const AS_PER_NS: u128 = 1_000_000_000;

/// The global arrival schedule, restricted to one stripe.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    /// The process; `Sequential` makes the schedule empty.
    period: Period,
    /// Random numbers for `u` and `e`.
    rng: Erand48,
    /// Offset of global arrival `k`, attoseconds.
    offset_as: u128,
    /// Index of the next global arrival.
    k: u64,
    /// This stripe's index, < `stripes`.
    stripe: u64,
    /// Number of stripes, ≥ 1.
    stripes: u64,
    /// `v`: index of the current (period, duration) pair.
    phase: usize,
    /// `v`: seconds of period emitted in the current phase.
    phase_elapsed: f64,
    /// The rate profile: offsets are unit time, mapped through Λ⁻¹.
    profile: Option<Arc<TimeChange>>,
    /// A replay's offsets, read from its feed (`rshperf replay`; the feed stripes).
    given: Option<SharedFeed>,
}

impl Schedule {
    /// Schedule for `period`, random numbers seeded for `client_id`, yielding only the
    /// arrivals k with k mod `stripes` == `stripe` (use 0/1 for all arrivals).
    /// Panics never; `Period::Sequential` yields nothing (the caller paces itself).
    /// `stripes == 0` is treated as 1 and `stripe` is taken mod `stripes`.
    pub(crate) fn new(period: &Period, client_id: u32, stripe: u32, stripes: u32) -> Self {
        let stripes = u64::from(stripes.max(1));
        Schedule {
            period: period.clone(),
            rng: Erand48::for_client(client_id),
            offset_as: 0,
            k: 0,
            stripe: u64::from(stripe) % stripes,
            stripes,
            phase: 0,
            phase_elapsed: 0.0,
            profile: None,
            given: None,
        }
    }

    /// The schedule of a replay's feed (one stripe's calls, in time order), which
    /// ends with the log.
    pub(crate) fn given(feed: SharedFeed) -> Self {
        Schedule {
            given: Some(feed),
            ..Schedule::new(&Period::Sequential, 0, 0, 1)
        }
    }

    /// The same schedule under the rate profile `profile`: the draws, scaled to mean 1,
    /// are unit time, and arrivals are where the profile's Λ reaches them.
    pub(crate) fn profiled(mut self, profile: Arc<TimeChange>) -> Self {
        self.profile = Some(profile);
        self
    }

    /// Offset from t0 of this stripe's next arrival (the first global arrival, k = 0,
    /// is at offset 0). Offsets are absolute (t0 + Σ draws), so they never drift.
    /// Returns None for `Period::Sequential`.
    pub(crate) fn next_offset(&mut self) -> Option<Duration> {
        if let Some(feed) = &self.given {
            return feed::lock(feed).next_offset();
        }
        if matches!(self.period, Period::Sequential) {
            return None;
        }
        if let Period::Variable(pairs) = &self.period {
            if pairs.is_empty() {
                return None;
            }
        }
        loop {
            let k = self.k;
            let offset = match &self.profile {
                // Past the profile's end for one arrival is past it for all later ones.
                Some(tc) => tc.inverse(attos_secs(self.offset_as))?,
                None => self.offset_as,
            };
            let draw = if self.profile.is_some() {
                self.unit_draw()
            } else {
                self.draw()
            };
            self.offset_as = self.offset_as.saturating_add(to_attos(draw));
            self.k += 1;
            if k % self.stripes == self.stripe {
                return Some(attos_to_duration(offset));
            }
        }
    }

    /// The next increment of unit time under a profile: httperf's draw divided by the
    /// distribution's mean (deterministic: exactly 1; exponential: −ln(1 − u), Exp(1)).
    fn unit_draw(&mut self) -> f64 {
        match &self.period {
            Period::Deterministic(_) => 1.0,
            Period::Exponential(_) => -(1.0 - self.rng.next_f64()).ln(),
            _ => {
                let mean = self.period.mean();
                let draw = self.draw();
                if mean > 0.0 {
                    draw / mean
                } else {
                    1.0
                }
            }
        }
    }

    /// The next inter-arrival time in seconds, as httperf draws it.
    fn draw(&mut self) -> f64 {
        match &self.period {
            Period::Sequential => 0.0,
            Period::Deterministic(p) => *p,
            Period::Uniform(a, b) => a + (b - a) * self.rng.next_f64(),
            Period::Exponential(m) => -m * (1.0 - self.rng.next_f64()).ln(),
            Period::Variable(pairs) => {
                let Some(&(period, duration)) = pairs.get(self.phase) else {
                    return 0.0;
                };
                self.phase_elapsed += period;
                if self.phase_elapsed >= duration {
                    self.phase = (self.phase + 1) % pairs.len();
                    self.phase_elapsed = 0.0;
                }
                period
            }
        }
    }
}

/// Rounds attoseconds to the nearest nanosecond; saturates at `u64::MAX` seconds.
fn attos_to_duration(attos: u128) -> Duration {
    let ns = attos.saturating_add(AS_PER_NS / 2) / AS_PER_NS;
    let secs = u64::try_from(ns / 1_000_000_000).unwrap_or(u64::MAX);
    let nanos = (ns % 1_000_000_000) as u32;
    Duration::new(secs, nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// First five `erand48` values with httperf's seeding, from a C program calling
    /// glibc's `erand48` for client ids 0, 1, 7 and 300, printed as `value · 2^48`
    /// (an exact integer, since glibc builds the double from the 48 state bits).
    const GLIBC: [(u32, [u64; 5]); 4] = [
        (
            0,
            [
                0xced9916a782f,
                0x46931fa3660e,
                0x16797f2b0801,
                0x6e9d0d6f4e78,
                0xa3f11f843923,
            ],
        ),
        (
            1,
            [
                0xd558dd575e9c,
                0x57553d037077,
                0x3121f135ccb6,
                0x6ed6959bad89,
                0x4b75597df960,
            ],
        ),
        (
            7,
            [
                0x14c0917d91c2,
                0xb5a75e435ba5,
                0xd0be3920434c,
                0xbce74142ef67,
                0x156bf18a78e6,
            ],
        ),
        (
            300,
            [
                0x52377067b143,
                0xd236892cab92,
                0x0c4750c23935,
                0x4b9d94f3f99c,
                0x895701f36f77,
            ],
        ),
    ];

    /// The glibc value `i` for client `c` (index into `GLIBC`) as a double in [0, 1).
    fn glibc(c: usize, i: usize) -> f64 {
        GLIBC[c].1[i] as f64 / (1u64 << 48) as f64
    }

    #[test]
    fn erand48_matches_glibc() {
        for (id, values) in GLIBC {
            let mut rng = Erand48::for_client(id);
            for (i, &want) in values.iter().enumerate() {
                let got = rng.next_f64();
                assert_eq!(
                    got * (1u64 << 48) as f64,
                    want as f64,
                    "client {id}, value {i}"
                );
            }
        }
    }

    #[test]
    fn erand48_truncates_id_to_16_bits() {
        let mut a = Erand48::for_client(1);
        let mut b = Erand48::for_client(0x1_0001);
        for _ in 0..10 {
            assert_eq!(a.next_f64(), b.next_f64());
        }
    }

    fn secs(d: Duration) -> f64 {
        d.as_secs_f64()
    }

    fn take(s: &mut Schedule, n: usize) -> Vec<Duration> {
        (0..n)
            .map(|_| s.next_offset().expect("not sequential"))
            .collect()
    }

    #[test]
    fn a_given_schedule_is_its_feeds_offsets_and_ends_with_it() {
        use crate::model::replay::feed::{tests::entries, Replay};
        // Fourteen calls 1 ms apart from seven clients, in one stripe.
        let r = Replay::of_entries(entries(14), 2.0, 1);
        let feed = r.feed(0, 1);
        let mut s = Schedule::given(feed.clone());
        let got: Vec<Duration> = std::iter::from_fn(|| s.next_offset()).collect();
        // At double speed.
        let want: Vec<Duration> = (0..14).map(|k| Duration::from_micros(500 * k)).collect();
        assert_eq!(got, want);
        let uris: Vec<String> = std::iter::from_fn(|| feed::lock(&feed).take())
            .map(|e| e.uri)
            .collect();
        assert_eq!(uris.len(), 14);
        assert_eq!((uris[0].as_str(), uris[13].as_str()), ("/0", "/13"));
    }

    #[test]
    fn sequential_yields_nothing() {
        let mut s = Schedule::new(&Period::Sequential, 0, 0, 1);
        assert_eq!(s.next_offset(), None);
        let mut s = Schedule::new(&Period::Variable(vec![]), 0, 0, 1);
        assert_eq!(s.next_offset(), None);
    }

    #[test]
    fn deterministic_sequence() {
        let mut s = Schedule::new(&Period::Deterministic(0.25), 0, 0, 1);
        let got = take(&mut s, 5);
        let want: Vec<Duration> = (0..5).map(|k| Duration::from_millis(250 * k)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn uniform_sequence_uses_erand48() {
        let mut s = Schedule::new(&Period::Uniform(0.1, 0.3), 1, 0, 1);
        let got = take(&mut s, 6);
        assert_eq!(got[0], Duration::ZERO);
        let mut sum = 0.0;
        for (k, offset) in got.iter().enumerate().skip(1) {
            sum += 0.1 + 0.2 * glibc(1, k - 1);
            assert!((secs(*offset) - sum).abs() < 1e-9, "arrival {k}");
        }
    }

    #[test]
    fn exponential_sequence_uses_erand48() {
        let mut s = Schedule::new(&Period::Exponential(0.5), 0, 0, 1);
        let got = take(&mut s, 6);
        assert_eq!(got[0], Duration::ZERO);
        let mut sum = 0.0;
        for (k, offset) in got.iter().enumerate().skip(1) {
            sum += -0.5 * (1.0 - glibc(0, k - 1)).ln();
            assert!((secs(*offset) - sum).abs() < 1e-9, "arrival {k}");
        }
    }

    #[test]
    fn exponential_mean() {
        let m = 0.02;
        let mut s = Schedule::new(&Period::Exponential(m), 3, 0, 1);
        let n = 100_000;
        let last = take(&mut s, n + 1)[n];
        let mean = secs(last) / n as f64;
        assert!((mean - m).abs() < 0.02 * m, "mean {mean}");
    }

    #[test]
    fn variable_phases_cycle() {
        // 0.1 s periods for 0.3 s, then 0.5 s periods for 1 s, then back.
        let p = Period::Variable(vec![(0.1, 0.3), (0.5, 1.0)]);
        let mut s = Schedule::new(&p, 0, 0, 1);
        let got: Vec<f64> = take(&mut s, 9).into_iter().map(secs).collect();
        let gaps = [0.1, 0.1, 0.1, 0.5, 0.5, 0.1, 0.1, 0.1];
        let mut sum = 0.0;
        assert_eq!(got[0], 0.0);
        for (k, gap) in gaps.iter().enumerate() {
            sum += gap;
            assert!(
                (got[k + 1] - sum).abs() < 1e-9,
                "arrival {}: {got:?}",
                k + 1
            );
        }
    }

    #[test]
    fn variable_zero_duration_emits_one_period() {
        let p = Period::Variable(vec![(1.0, 0.0), (2.0, 0.0)]);
        let mut s = Schedule::new(&p, 0, 0, 1);
        let got: Vec<f64> = take(&mut s, 5).into_iter().map(secs).collect();
        assert_eq!(got, vec![0.0, 1.0, 3.0, 4.0, 6.0]);
    }

    #[test]
    fn stripes_together_equal_one_stripe() {
        let periods = [
            Period::Deterministic(0.001),
            Period::Uniform(0.001, 0.003),
            Period::Exponential(0.002),
            Period::Variable(vec![(0.001, 0.01), (0.004, 0.02), (0.0005, 0.003)]),
        ];
        for period in &periods {
            for client in [0, 5] {
                let all = take(&mut Schedule::new(period, client, 0, 1), 1000);
                for n in [2u32, 3, 7] {
                    let mut stripes: Vec<Schedule> = (0..n)
                        .map(|j| Schedule::new(period, client, j, n))
                        .collect();
                    for (k, want) in all.iter().enumerate() {
                        let got = stripes[k % n as usize].next_offset();
                        assert_eq!(got, Some(*want), "{period:?} arrival {k} of {n}");
                    }
                }
            }
        }
    }

    #[test]
    fn degenerate_stripes_do_not_panic() {
        let p = Period::Deterministic(1.0);
        assert_eq!(
            Schedule::new(&p, 0, 0, 0).next_offset(),
            Some(Duration::ZERO)
        );
        let mut s = Schedule::new(&p, 0, 5, 2); // stripe 5 of 2 = stripe 1
        assert_eq!(s.next_offset(), Some(Duration::from_secs(1)));
    }

    #[test]
    fn no_drift_over_a_million_arrivals() {
        let mut s = Schedule::new(&Period::Deterministic(1.0 / 35000.0), 0, 0, 1);
        let mut last = Duration::ZERO;
        for _ in 0..=1_000_000 {
            last = s.next_offset().expect("deterministic");
        }
        let want = 1e6 / 35000.0;
        assert!((secs(last) - want).abs() < 1e-6, "{last:?} vs {want}");
    }

    #[test]
    fn mean_of_periods() {
        assert_eq!(Period::Sequential.mean(), 0.0);
        assert_eq!(Period::Deterministic(0.5).mean(), 0.5);
        assert_eq!(Period::Uniform(1.0, 3.0).mean(), 2.0);
        assert_eq!(Period::Exponential(0.25).mean(), 0.25);
        assert_eq!(Period::Variable(vec![(1.0, 5.0), (3.0, 1.0)]).mean(), 2.0);
    }
}
