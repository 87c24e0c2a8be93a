//! `Timeline`: what happened in each second of a run, mergeable across engines.
//!
//! Owns the per-second intervals (offered arrivals by scheduled second, connections
//! started, replies per status class, errors per kind, open connections, and compact
//! response-time and lateness histograms) and the compact log histogram `LogHist`.
//! State is bounded per interval and independent of the request count: counters come
//! from `Stats` deltas at each roll-over, and the two histograms are one dense working
//! array each (528 `u32` buckets, allocated once) that is compacted to its non-zero
//! buckets when the second ends. No per-request records.
//!
//! Fed by `Stats` (`on_response`, `on_lateness`) and by the engine (`offered` at each
//! arrival, `Stats::roll_timeline` from its deadline handling once a second and at the
//! end). Merged interval by interval (engines share their start, so their seconds
//! align). Formatting is in `report::timeline`; this file does no I/O.

use serde::{Deserialize, Serialize};

use crate::model::stats::merge::{Merge, MergeError};
use crate::model::stats::ERROR_KINDS;

/// Sub-buckets per power of two: bucket widths are at most 1/16 of their values.
const SUB: u64 = 16;
/// log2(SUB).
const SUB_BITS: u32 = 4;
/// Values are clamped to 2^36 µs (19 hours).
const MAX_EXP: u32 = 36;
/// Number of buckets: exact below 16 µs, then 16 per power of two up to 2^36.
pub(crate) const BUCKETS: usize = ((MAX_EXP - SUB_BITS + 1) as usize) * SUB as usize;

/// The bucket of a value in µs.
pub(crate) fn bucket_of(us: u64) -> usize {
    let v = us.min((1u64 << MAX_EXP) - 1);
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
    ((e - SUB_BITS + 1) as usize) * SUB as usize + sub as usize
}

/// The highest value (µs) that falls into bucket `i`.
pub(crate) fn bucket_high(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let e = i / SUB + u64::from(SUB_BITS) - 1;
    let sub = i % SUB;
    let shift = e - u64::from(SUB_BITS);
    ((SUB + sub) << shift) + (1u64 << shift) - 1
}

/// A compact histogram of µs values: its non-zero buckets as `(bucket, count)` pairs,
/// ascending. Quantiles are bucket highs (at most 1/16 above the true value).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LogHist(pub Vec<(u16, u32)>);

impl Merge for Timeline {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        self.add(o);
        Ok(())
    }
}

impl LogHist {
    /// The non-zero buckets of a dense array.
    fn from_dense(dense: &[u32]) -> LogHist {
        LogHist(
            dense
                .iter()
                .enumerate()
                .filter(|&(_, &c)| c != 0)
                .map(|(i, &c)| (i as u16, c))
                .collect(),
        )
    }

    /// Number of values.
    pub(crate) fn count(&self) -> u64 {
        self.0.iter().map(|&(_, c)| u64::from(c)).sum()
    }

    /// The value at quantile `q` (0 < q ≤ 1) in µs, 0 when empty.
    pub(crate) fn quantile_us(&self, q: f64) -> u64 {
        let total = self.count();
        if total == 0 {
            return 0;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0u64;
        for &(i, c) in &self.0 {
            seen += u64::from(c);
            if seen >= rank {
                return bucket_high(usize::from(i));
            }
        }
        self.0
            .last()
            .map_or(0, |&(i, _)| bucket_high(usize::from(i)))
    }

    /// Adds another histogram's counts (both ascending; the result too).
    pub(crate) fn merge(&mut self, o: &LogHist) {
        if o.0.is_empty() {
            return;
        }
        let mut out = Vec::with_capacity(self.0.len() + o.0.len());
        let (mut a, mut b) = (self.0.iter().peekable(), o.0.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (Some(&&(i, c)), Some(&&(j, d))) if i == j => {
                    out.push((i, c.saturating_add(d)));
                    a.next();
                    b.next();
                }
                (Some(&&x), Some(&&y)) => {
                    if x.0 < y.0 {
                        out.push(x);
                        a.next();
                    } else {
                        out.push(y);
                        b.next();
                    }
                }
                (Some(&&x), None) => {
                    out.push(x);
                    a.next();
                }
                (None, Some(&&y)) => {
                    out.push(y);
                    b.next();
                }
                (None, None) => break,
            }
        }
        self.0 = out;
    }
}

/// One second of the run (the last one may be shorter: see `Timeline::end_s`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Interval {
    /// Arrivals (connections or sessions) scheduled in this second and issued.
    pub(crate) offered: u64,
    /// Connections that reached the connecting stage.
    pub(crate) connections: u64,
    /// Completed replies by status class 1xx..=5xx.
    pub(crate) replies: [u64; 5],
    /// Failures by kind (`ErrorKind` order).
    pub(crate) errors: [u64; ERROR_KINDS],
    /// Connections open when the second ended.
    pub(crate) open: u64,
    /// Response times (send start → status line), µs.
    pub(crate) response: LogHist,
    /// Longest response time, µs (exact).
    pub(crate) response_max_us: u64,
    /// Arrival lateness of the arrivals issued in this second, µs.
    pub(crate) lateness: LogHist,
}

impl Interval {
    /// Completed replies of all status classes 1–5.
    #[cfg(test)]
    pub(crate) fn replies_total(&self) -> u64 {
        self.replies.iter().sum()
    }

    /// Sum of the error counters.
    #[cfg(test)]
    pub(crate) fn errors_total(&self) -> u64 {
        self.errors.iter().sum()
    }

    fn merge(&mut self, o: &Interval) {
        self.offered += o.offered;
        self.connections += o.connections;
        for (a, b) in self.replies.iter_mut().zip(o.replies) {
            *a += b;
        }
        for (a, b) in self.errors.iter_mut().zip(o.errors) {
            *a += b;
        }
        self.open += o.open;
        self.response.merge(&o.response);
        self.response_max_us = self.response_max_us.max(o.response_max_us);
        self.lateness.merge(&o.lateness);
    }
}

/// The running totals a roll-over takes its deltas from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    /// `Stats::connections`.
    pub(crate) connections: u64,
    /// `Stats::replies_by_class[1..=5]`.
    pub(crate) replies: [u64; 5],
    /// `Stats::errors`.
    pub(crate) errors: [u64; ERROR_KINDS],
}

/// The second being recorded: dense histograms and the totals at its start.
#[derive(Debug, Clone)]
struct Working {
    response: Vec<u32>,
    response_max_us: u64,
    lateness: Vec<u32>,
    /// Offered arrivals of the current second.
    offered: u64,
    /// Totals when the current second began.
    base: Totals,
}

impl Default for Working {
    fn default() -> Self {
        Working {
            response: vec![0; BUCKETS],
            response_max_us: 0,
            lateness: vec![0; BUCKETS],
            offered: 0,
            base: Totals::default(),
        }
    }
}

/// The per-second record of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Timeline {
    /// One element per second since the start, in order.
    pub(crate) intervals: Vec<Interval>,
    /// Seconds from the start to the end of the last interval (the run's end).
    pub(crate) end_s: f64,
    #[serde(skip)]
    working: Working,
}

impl PartialEq for Timeline {
    fn eq(&self, o: &Timeline) -> bool {
        self.intervals == o.intervals && self.end_s == o.end_s
    }
}

impl Timeline {
    /// An arrival scheduled `scheduled_s` seconds after the start was issued. An
    /// arrival of a second that has not been rolled over yet counts in the current one.
    pub(crate) fn offered(&mut self, scheduled_s: u64) {
        match usize::try_from(scheduled_s)
            .ok()
            .and_then(|i| self.intervals.get_mut(i))
        {
            Some(past) => past.offered += 1,
            None => self.working.offered += 1,
        }
    }

    /// A response time, µs.
    pub(crate) fn on_response(&mut self, us: u64) {
        self.working.response[bucket_of(us)] += 1;
        self.working.response_max_us = self.working.response_max_us.max(us);
    }

    /// An arrival's lateness, µs.
    pub(crate) fn on_lateness(&mut self, us: u64) {
        self.working.lateness[bucket_of(us)] += 1;
    }

    /// Ends the current second: `now` are the running totals, `open` the connections
    /// open, `at_s` the time since the start (the end of this interval).
    pub(crate) fn roll(&mut self, now: Totals, open: u64, at_s: f64) {
        let w = &mut self.working;
        let sub = |a: u64, b: u64| a.saturating_sub(b);
        let mut replies = [0; 5];
        for (i, r) in replies.iter_mut().enumerate() {
            *r = sub(now.replies[i], w.base.replies[i]);
        }
        let mut errors = [0; ERROR_KINDS];
        for (i, e) in errors.iter_mut().enumerate() {
            *e = sub(now.errors[i], w.base.errors[i]);
        }
        self.intervals.push(Interval {
            offered: w.offered,
            connections: sub(now.connections, w.base.connections),
            replies,
            errors,
            open,
            response: LogHist::from_dense(&w.response),
            response_max_us: w.response_max_us,
            lateness: LogHist::from_dense(&w.lateness),
        });
        w.response.iter_mut().for_each(|c| *c = 0);
        w.lateness.iter_mut().for_each(|c| *c = 0);
        w.response_max_us = 0;
        w.offered = 0;
        w.base = now;
        self.end_s = at_s;
    }

    /// Adds another timeline (same start) interval by interval (`Merge::merge`).
    pub(crate) fn add(&mut self, o: &Timeline) {
        if self.intervals.len() < o.intervals.len() {
            self.intervals
                .resize_with(o.intervals.len(), Interval::default);
        }
        for (a, b) in self.intervals.iter_mut().zip(&o.intervals) {
            a.merge(b);
        }
        self.end_s = self.end_s.max(o.end_s);
    }

    /// Length of interval `i` in seconds: 1, except for the last one, which ends at
    /// `end_s`.
    pub(crate) fn seconds(&self, i: usize) -> f64 {
        if i + 1 == self.intervals.len() {
            (self.end_s - i as f64).clamp(0.0, 1.0)
        } else {
            1.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_cover_their_values() {
        assert_eq!(BUCKETS, 528);
        let mut last = 0;
        for v in (0..100_000u64).chain([1 << 20, (1 << 36) - 1, u64::MAX]) {
            let b = bucket_of(v);
            assert!(b >= last || v > 100_000, "{v}");
            last = b;
            assert!(b < BUCKETS);
            let high = bucket_high(b);
            let clamped = v.min((1 << MAX_EXP) - 1);
            assert!(high >= clamped, "{v}: high {high}");
            // Width at most 1/16 of the value.
            assert!((high - clamped) * 16 <= clamped.max(1), "{v}: high {high}");
            if b > 0 {
                assert!(bucket_high(b - 1) < clamped, "{v}");
            }
        }
        assert_eq!(bucket_of(15), 15);
        assert_eq!(bucket_of(16), 16);
        assert_eq!(bucket_high(16), 16);
        assert_eq!(bucket_of(32), 32);
        assert_eq!(bucket_high(32), 33);
    }

    #[test]
    fn quantiles_and_merge() {
        let mut t = Timeline::default();
        for us in 1..=100 {
            t.on_response(us * 100);
        }
        t.on_lateness(5);
        t.roll(Totals::default(), 3, 1.0);
        let i = &t.intervals[0];
        assert_eq!(i.response.count(), 100);
        let p50 = i.response.quantile_us(0.5);
        assert!((5000..=5000 + 5000 / 16).contains(&p50), "{p50}");
        assert_eq!(i.response_max_us, 10_000);
        assert_eq!(i.lateness.quantile_us(0.99), 5);
        assert_eq!(i.open, 3);
        let mut other = Timeline::default();
        other.on_response(1);
        other.on_response(1_000_000);
        other.roll(Totals::default(), 2, 1.0);
        other.on_response(7);
        other.roll(Totals::default(), 0, 1.5);
        t.add(&other);
        assert_eq!(t.intervals.len(), 2);
        assert_eq!(t.intervals[0].response.count(), 102);
        assert_eq!(t.intervals[0].response_max_us, 1_000_000);
        assert_eq!(t.intervals[0].open, 5);
        assert_eq!(t.intervals[1].response.count(), 1);
        assert_eq!(t.end_s, 1.5);
        assert_eq!(t.seconds(0), 1.0);
        assert_eq!(t.seconds(1), 0.5);
        let ascending = t.intervals[0]
            .response
            .0
            .windows(2)
            .all(|w| w[0].0 < w[1].0);
        assert!(ascending);
        assert_eq!(LogHist::default().quantile_us(0.99), 0);
    }

    #[test]
    fn counters_are_deltas_of_the_totals_and_offered_goes_by_schedule() {
        let mut t = Timeline::default();
        t.offered(0);
        let mut now = Totals {
            connections: 5,
            replies: [0, 4, 0, 1, 0],
            errors: [0, 0, 1, 0, 0, 0, 0, 0],
        };
        t.roll(now, 2, 1.0);
        now.connections = 8;
        now.replies[1] = 6;
        t.offered(0); // a late arrival of second 0
        t.offered(1);
        t.offered(7); // not rolled over yet: counts now
        t.roll(now, 0, 2.0);
        assert_eq!(t.intervals[0].offered, 2);
        assert_eq!(t.intervals[1].offered, 2);
        assert_eq!(t.intervals[0].connections, 5);
        assert_eq!(t.intervals[1].connections, 3);
        assert_eq!(t.intervals[0].replies_total(), 5);
        assert_eq!(t.intervals[1].replies, [0, 2, 0, 0, 0]);
        assert_eq!(t.intervals[0].errors_total(), 1);
        assert_eq!(t.intervals[1].errors_total(), 0);
    }

    #[test]
    fn serde_round_trip_keeps_the_intervals() {
        let mut t = Timeline::default();
        t.on_response(1234);
        t.roll(Totals::default(), 1, 0.25);
        let text = serde_json::to_string(&t).expect("serialize");
        let back: Timeline = serde_json::from_str(&text).expect("deserialize");
        assert_eq!(back, t);
    }
}
