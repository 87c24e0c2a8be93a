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
//! Bounded at any run length: the first hour is kept a second per interval, later
//! seconds are merged exactly (counts add, histograms add) into coarser intervals as
//! each group completes (`TIERS`: 10 s from the first hour, 60 s from 6 h, 600 s from
//! 24 h, 3600 s from a week, a day from 30 days), so a 24-hour run holds 6,480
//! intervals. An interval's `width` says how many seconds it covers.
//!
//! Fed by `Stats` (`on_response`, `on_lateness`) and by the engine (`offered` at each
//! arrival, `Stats::roll_timeline` from its deadline handling once a second and at the
//! end). Merged span by span (engines share their start, so their intervals align;
//! a coarser interval absorbs the finer ones it covers). Formatting is in
//! `output::timeline`; this file does no I/O.

use serde::{Deserialize, Serialize};

use crate::model::profile::{parse_rate_profile, RateProfile, TimeChange};
use crate::model::stats::merge::{Merge, MergeError};
use crate::model::stats::ERROR_KINDS;

/// Sub-bucket bits of the timeline's histograms: 16 buckets per power of two, so
/// bucket widths are at most 1/16 of their values.
const SUB_BITS: u32 = 4;
/// Values are clamped to 2^36 µs (19 hours).
const MAX_EXP: u32 = 36;
/// Number of buckets of the timeline's histograms: exact below 16 µs, then 16 per
/// power of two up to 2^36.
pub(crate) const BUCKETS: usize = buckets(SUB_BITS);

/// Number of buckets of a `LogHist<B>`: exact below 2^B µs, then 2^B per power of
/// two up to 2^36.
pub(crate) const fn buckets(b: u32) -> usize {
    ((MAX_EXP - b + 1) as usize) << b
}

/// The bucket of a value in µs, with `b` sub-bucket bits.
pub(crate) fn bucket_of_bits(us: u64, b: u32) -> usize {
    let sub_n = 1u64 << b;
    let v = us.min((1u64 << MAX_EXP) - 1);
    if v < sub_n {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let sub = (v >> (e - b)) & (sub_n - 1);
    ((e - b + 1) as usize) * sub_n as usize + sub as usize
}

/// The highest value (µs) that falls into bucket `i`, with `b` sub-bucket bits.
pub(crate) fn bucket_high_bits(i: usize, b: u32) -> u64 {
    let (i, sub_n) = (i as u64, 1u64 << b);
    if i < sub_n {
        return i;
    }
    let e = i / sub_n + u64::from(b) - 1;
    let sub = i % sub_n;
    let shift = e - u64::from(b);
    ((sub_n + sub) << shift) + (1u64 << shift) - 1
}

/// The bucket of a value in µs (the timeline's histograms).
pub(crate) fn bucket_of(us: u64) -> usize {
    bucket_of_bits(us, SUB_BITS)
}

/// The highest value (µs) that falls into bucket `i` (the timeline's histograms).
#[cfg(test)]
pub(crate) fn bucket_high(i: usize) -> u64 {
    bucket_high_bits(i, SUB_BITS)
}

/// Coarser intervals: from `.0` seconds on, groups of `.1` seconds (aligned on `.0`)
/// are merged into one interval as soon as they are complete. Each width divides the
/// next tier's start offset, so the groups nest.
pub(crate) const TIERS: [(u64, u64); 5] = [
    (3_600, 10),
    (21_600, 60),
    (86_400, 600),
    (604_800, 3_600),
    (2_592_000, 86_400),
];

/// A compact histogram of µs values: its non-zero buckets as `(bucket, count)` pairs,
/// ascending, with `B` sub-bucket bits (the timeline's 4: quantiles are bucket highs,
/// at most 1/16 above the true value; `stats::windows` uses finer ones).
/// Serialized as one string `"bucket:count,…"` (a pretty-printed array of pairs costs
/// ~50 bytes a bucket); the older `[[bucket, count], …]` form is read too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogHist<const B: u32 = SUB_BITS>(pub Vec<(u16, u32)>);

impl<const B: u32> Default for LogHist<B> {
    fn default() -> Self {
        LogHist(Vec::new())
    }
}

impl<const B: u32> Serialize for LogHist<B> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut text = String::with_capacity(self.0.len() * 8);
        for (n, (b, c)) in self.0.iter().enumerate() {
            if n > 0 {
                text.push(',');
            }
            text.push_str(&format!("{b}:{c}"));
        }
        s.serialize_str(&text)
    }
}

/// The two accepted forms of a `LogHist`.
#[derive(Deserialize)]
#[serde(untagged)]
enum LogHistRepr {
    Text(String),
    Pairs(Vec<(u16, u32)>),
}

impl<'de, const B: u32> Deserialize<'de> for LogHist<B> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let pairs = match LogHistRepr::deserialize(d)? {
            LogHistRepr::Pairs(p) => p,
            LogHistRepr::Text(t) if t.is_empty() => Vec::new(),
            LogHistRepr::Text(t) => t
                .split(',')
                .map(|pair| {
                    let (b, c) = pair.split_once(':')?;
                    Some((b.parse().ok()?, c.parse().ok()?))
                })
                .collect::<Option<Vec<(u16, u32)>>>()
                .ok_or_else(|| {
                    D::Error::custom("bad log histogram: expected \"bucket:count,…\"")
                })?,
        };
        let ascending = pairs.windows(2).all(|w| w[0].0 < w[1].0);
        if !ascending || pairs.iter().any(|&(b, _)| usize::from(b) >= buckets(B)) {
            return Err(D::Error::custom(format!(
                "bad log histogram: buckets must be ascending and below {}",
                buckets(B)
            )));
        }
        Ok(LogHist(pairs))
    }
}

impl Merge for Timeline {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        self.add(o);
        if self.target.is_none() {
            self.target = o.target.clone();
        }
        Ok(())
    }
}

impl<const B: u32> LogHist<B> {
    /// The non-zero buckets of a dense array.
    fn from_dense(dense: &[u32]) -> LogHist<B> {
        // Sized exactly: a run keeps thousands of these.
        let mut pairs = Vec::with_capacity(dense.iter().filter(|&&c| c != 0).count());
        pairs.extend(
            dense
                .iter()
                .enumerate()
                .filter(|&(_, &c)| c != 0)
                .map(|(i, &c)| (i as u16, c)),
        );
        LogHist(pairs)
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
                return bucket_high_bits(usize::from(i), B);
            }
        }
        self.0
            .last()
            .map_or(0, |&(i, _)| bucket_high_bits(usize::from(i), B))
    }

    /// The number of values at or below `us` µs, counting the bucket that holds `us`
    /// in proportion to the part of its range at or below it (values spread evenly
    /// over a bucket).
    pub(crate) fn count_at_or_below(&self, us: f64) -> f64 {
        let mut below = 0.0;
        for &(i, c) in &self.0 {
            let i = usize::from(i);
            let high = bucket_high_bits(i, B) as f64;
            let low = if i == 0 {
                0.0
            } else {
                bucket_high_bits(i - 1, B) as f64 + 1.0
            };
            if high <= us {
                below += f64::from(c);
            } else {
                // A bucket holds the integers low..=high.
                let part = ((us.floor() - low + 1.0) / (high - low + 1.0)).clamp(0.0, 1.0);
                below += f64::from(c) * part;
                break;
            }
        }
        below
    }

    /// Adds another histogram's counts (both ascending; the result too).
    pub(crate) fn merge(&mut self, o: &LogHist<B>) {
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

/// One interval of the run: a second, or `width` seconds once coarsened (the last one
/// may be shorter: see `Timeline::end_s`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Interval {
    /// Seconds covered (1 unless coarsened; absent from JSON when 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub(crate) width: u64,
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

/// `Interval::width`'s default.
fn one() -> u64 {
    1
}

/// Whether a width is the default one (left out of JSON).
fn is_one(w: &u64) -> bool {
    *w == 1
}

impl Default for Interval {
    fn default() -> Self {
        Interval {
            width: 1,
            offered: 0,
            connections: 0,
            replies: [0; 5],
            errors: [0; ERROR_KINDS],
            open: 0,
            response: LogHist::default(),
            response_max_us: 0,
            lateness: LogHist::default(),
        }
    }
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

    /// Adds the same second of another engine (`o`): counts, histograms and `open`.
    pub(crate) fn add_engine(&mut self, o: &Interval) {
        self.add_counts(o);
        self.open += o.open;
    }

    /// Adds `o`'s counts and histograms (not `open` nor `width`, which depend on how
    /// the two relate: see `Timeline::coarsen` and `Timeline::add`).
    fn add_counts(&mut self, o: &Interval) {
        self.offered += o.offered;
        self.connections += o.connections;
        for (a, b) in self.replies.iter_mut().zip(o.replies) {
            *a += b;
        }
        for (a, b) in self.errors.iter_mut().zip(o.errors) {
            *a += b;
        }
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
    /// The intervals since the start, in order, contiguous (a second each for the
    /// first hour, then coarser: `TIERS`).
    pub(crate) intervals: Vec<Interval>,
    /// Seconds from the start to the end of the last interval (the run's end).
    pub(crate) end_s: f64,
    /// `--rate-profile`: the rate the run aimed at (absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) target: Option<Target>,
    #[serde(skip)]
    working: Working,
    /// Whole seconds the intervals cover (the sum of their widths).
    #[serde(skip)]
    covered: u64,
}

impl PartialEq for Timeline {
    fn eq(&self, o: &Timeline) -> bool {
        self.intervals == o.intervals && self.end_s == o.end_s && self.target == o.target
    }
}

/// A run's rate profile, as the timeline keeps it: stored as the profile's text,
/// with its Λ for the arrivals each interval was meant to have.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Target {
    /// The profile as typed.
    text: String,
    /// Its Λ.
    change: TimeChange,
}

impl Target {
    /// The target of `profile`.
    pub(crate) fn new(profile: &RateProfile) -> Target {
        Target {
            text: profile.text().to_string(),
            change: TimeChange::new(profile),
        }
    }

    /// Arrivals the profile asks for in second `start` (the whole second, Λ being
    /// flat past the profile's end): what every arrival scheduled in it adds up to,
    /// however early the run's last interval ended.
    pub(crate) fn arrivals_in_second(&self, start: u64) -> f64 {
        let t = start as f64;
        self.change.lambda(t + 1.0) - self.change.lambda(t)
    }
}

impl Serialize for Target {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let profile = parse_rate_profile(&text).map_err(serde::de::Error::custom)?;
        Ok(Target::new(&profile))
    }
}

impl Timeline {
    /// An arrival scheduled `scheduled_s` seconds after the start was issued. An
    /// arrival of a second that has not been rolled over yet counts in the current one.
    pub(crate) fn offered(&mut self, scheduled_s: u64) {
        if scheduled_s >= self.covered {
            self.working.offered += 1;
            return;
        }
        // A late arrival: its second is recent, so search from the end.
        let mut end = self.covered;
        for iv in self.intervals.iter_mut().rev() {
            let start = end.saturating_sub(iv.width);
            if scheduled_s >= start {
                iv.offered += 1;
                return;
            }
            end = start;
        }
    }

    /// Whole seconds the intervals cover.
    pub(crate) fn covered_s(&self) -> u64 {
        self.covered
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
    /// open, `at_s` the time since the start (the end of this interval). Returns the
    /// second's interval as it was recorded (before any coarsening).
    pub(crate) fn roll(&mut self, now: Totals, open: u64, at_s: f64) -> Interval {
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
            width: 1,
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
        let second = self
            .intervals
            .last()
            .cloned()
            .expect("an interval was just pushed");
        self.end_s = at_s;
        self.covered += 1;
        self.coarsen();
        second
    }

    /// Whether every interval is a single second (nothing coarsened yet).
    pub(crate) fn full_resolution(&self) -> bool {
        self.intervals.iter().all(|iv| iv.width == 1)
    }

    /// Merges each group of `TIERS` that the last roll-over completed into one
    /// interval (finer tiers first, so a 60-s group is made of 10-s ones).
    fn coarsen(&mut self) {
        let end = self.covered;
        for &(from, width) in &TIERS {
            if end <= from || !(end - from).is_multiple_of(width) {
                continue;
            }
            let mut span = 0;
            let mut n = 0;
            for iv in self.intervals.iter().rev() {
                if span >= width {
                    break;
                }
                span += iv.width;
                n += 1;
            }
            if n < 2 || span != width {
                continue;
            }
            let tail = self.intervals.split_off(self.intervals.len() - n);
            let mut group = tail[0].clone();
            for later in &tail[1..] {
                group.add_counts(later);
                group.open = later.open;
            }
            group.width = width;
            group.response.0.shrink_to_fit();
            group.lateness.0.shrink_to_fit();
            self.intervals.push(group);
        }
    }

    /// Adds another timeline with the same start (`Merge::merge`). Overlapping
    /// intervals become one that spans both: counts and histograms add, `open` is
    /// the sum of each side's value at the end of the span. Intervals of the same
    /// layout pair up one to one; a coarser one absorbs the finer ones it covers.
    pub(crate) fn add(&mut self, o: &Timeline) {
        let mine = std::mem::take(&mut self.intervals);
        let sides = [mine.as_slice(), o.intervals.as_slice()];
        let (mut at, mut start) = ([0usize; 2], [0u64; 2]);
        let mut out: Vec<Interval> = Vec::with_capacity(mine.len().max(o.intervals.len()));
        // The interval being built: its start, end, counts and each side's last `open`.
        let mut cur: Option<(u64, u64, Interval, [u64; 2])> = None;
        loop {
            let next = (0..2)
                .filter(|&s| at[s] < sides[s].len())
                .min_by_key(|&s| (start[s], u64::MAX - sides[s][at[s]].width));
            let Some(side) = next else { break };
            let iv = &sides[side][at[side]];
            let (s0, s1) = (start[side], start[side] + iv.width.max(1));
            at[side] += 1;
            start[side] = s1;
            match cur.as_mut() {
                Some((_, end, acc, open)) if s0 < *end => {
                    acc.add_counts(iv);
                    *end = (*end).max(s1);
                    open[side] = iv.open;
                }
                _ => {
                    if let Some(done) = cur.take() {
                        out.push(Self::close(done));
                    }
                    let mut open = [0; 2];
                    open[side] = iv.open;
                    cur = Some((s0, s1, iv.clone(), open));
                }
            }
        }
        if let Some(done) = cur.take() {
            out.push(Self::close(done));
        }
        self.covered = out.iter().map(|iv| iv.width).sum();
        self.intervals = out;
        self.end_s = self.end_s.max(o.end_s);
    }

    /// The interval `add` built over `[start, end)`.
    fn close((start, end, mut iv, open): (u64, u64, Interval, [u64; 2])) -> Interval {
        iv.width = end - start;
        iv.open = open[0] + open[1];
        iv
    }

    /// Each interval with its start (s) and its length in seconds: `width`, except
    /// for the last one, which ends at `end_s`.
    pub(crate) fn spans(&self) -> impl Iterator<Item = (u64, f64, &Interval)> {
        let last = self.intervals.len().saturating_sub(1);
        let end_s = self.end_s;
        self.intervals
            .iter()
            .enumerate()
            .scan(0u64, move |start, (i, iv)| {
                let s0 = *start;
                *start += iv.width;
                let len = if i == last {
                    (end_s - s0 as f64).clamp(0.0, iv.width as f64)
                } else {
                    iv.width as f64
                };
                Some((s0, len, iv))
            })
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
    fn each_roll_returns_its_own_second_also_once_the_timeline_coarsens() {
        let mut t = Timeline::default();
        let mut replies = 0;
        for k in 0..3_610u64 {
            assert!(t.full_resolution(), "at {k}");
            // Second k has k % 7 replies and k µs of response time.
            t.on_response(k);
            replies += k % 7;
            let second = t.roll(
                Totals {
                    connections: 0,
                    replies: [0, replies, 0, 0, 0],
                    errors: [0; ERROR_KINDS],
                },
                k,
                (k + 1) as f64,
            );
            assert_eq!(second.width, 1);
            assert_eq!((second.replies[1], second.open), (k % 7, k));
            assert_eq!(second.response_max_us, k);
        }
        // The first 10 seconds after the hour became one interval (at 3,610 s, when
        // their group was complete); the seconds the rolls returned did not.
        assert!(!t.full_resolution());
        assert_eq!(t.intervals.len(), 3_601);
        assert_eq!(t.intervals[3_600].width, 10);
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
        let lens: Vec<(u64, f64)> = t.spans().map(|(s, len, _)| (s, len)).collect();
        assert_eq!(lens, [(0, 1.0), (1, 0.5)]);
        let ascending = t.intervals[0]
            .response
            .0
            .windows(2)
            .all(|w| w[0].0 < w[1].0);
        assert!(ascending);
        assert_eq!(LogHist::<4>::default().quantile_us(0.99), 0);
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

    /// Feeds `seconds` seconds of `per_s` responses each (log-uniform 50 µs – 0.5 s from
    /// a fixed LCG, so about every bucket of that range is used) and one connection
    /// and reply per response.
    fn soak(seconds: u64, per_s: u64) -> Timeline {
        let mut t = Timeline::default();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut now = Totals::default();
        for s in 0..seconds {
            for _ in 0..per_s {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let octaves = (x >> 40) as f64 / (1u64 << 24) as f64 * 13.3;
                t.on_response((50.0 * octaves.exp2()) as u64);
                t.on_lateness((x >> 58) * 10);
                t.offered(s);
            }
            now.connections += per_s;
            now.replies[1] += per_s;
            t.roll(now, s % 7, (s + 1) as f64);
        }
        t
    }

    /// Bytes the timeline holds on the heap (vectors at their capacity).
    fn heap_bytes(t: &Timeline) -> usize {
        let pair = std::mem::size_of::<(u16, u32)>();
        t.intervals.capacity() * std::mem::size_of::<Interval>()
            + t.intervals
                .iter()
                .map(|iv| (iv.response.0.capacity() + iv.lateness.0.capacity()) * pair)
                .sum::<usize>()
            + 2 * BUCKETS * std::mem::size_of::<u32>()
    }

    #[test]
    fn a_day_stays_bounded_in_memory_and_json_and_keeps_every_count() {
        let t = soak(86_400, 200);
        // 3600 seconds, then 10-s intervals to 6 h, then 60-s ones.
        assert_eq!(t.intervals.len(), 3_600 + 1_800 + 1_080);
        assert_eq!(t.covered_s(), 86_400);
        let widths: Vec<u64> = t.intervals.iter().map(|iv| iv.width).collect();
        assert!(widths[..3_600].iter().all(|&w| w == 1));
        assert!(widths[3_600..5_400].iter().all(|&w| w == 10));
        assert!(widths[5_400..].iter().all(|&w| w == 60));
        let starts: Vec<u64> = t.spans().map(|(s, _, _)| s).collect();
        assert_eq!(starts[3_600], 3_600);
        assert_eq!(starts[5_400], 21_600);
        assert_eq!(starts[6_479], 86_340);
        let responses: u64 = t.intervals.iter().map(|iv| iv.response.count()).sum();
        let offered: u64 = t.intervals.iter().map(|iv| iv.offered).sum();
        let replies: u64 = t.intervals.iter().map(|iv| iv.replies[1]).sum();
        assert_eq!(
            (responses, offered, replies),
            (17_280_000, 17_280_000, 17_280_000)
        );
        // A 60-s interval keeps its last second's open count.
        assert_eq!(t.intervals[6_479].open, 86_399 % 7);
        let heap = heap_bytes(&t);
        let raw = serde_json::to_string_pretty(&t).expect("serialize").len();
        let seconds = serde_json::to_string_pretty(&crate::model::figure::second::json(&t))
            .expect("serialize")
            .len();
        eprintln!("a day: heap {heap} B, raw JSON {raw} B, timeline JSON {seconds} B");
        assert!(heap < 20_000_000, "heap {heap}");
        assert!(raw + seconds < 20_000_000, "JSON {raw} + {seconds}");
    }

    #[test]
    fn coarse_intervals_merge_with_finer_ones_and_round_trip() {
        let (a, b) = (soak(3_605, 3), soak(3_610, 2));
        assert_eq!(a.intervals.len(), 3_605);
        assert_eq!(b.intervals.len(), 3_601);
        let mut m = Timeline::default();
        m.add(&a);
        m.add(&b);
        assert_eq!(m.intervals.len(), 3_601);
        assert_eq!(m.covered_s(), 3_610);
        let last = &m.intervals[3_600];
        assert_eq!(last.width, 10);
        assert_eq!(last.response.count(), 5 * 3 + 10 * 2);
        assert_eq!(last.connections, 5 * 3 + 10 * 2);
        // Each side's open count at the end of the span: a's second 3604, b's 3609.
        assert_eq!(last.open, 3_604 % 7 + 3_609 % 7);
        assert_eq!(m.intervals[7].response.count(), 5);
        assert_eq!(m.intervals[8].open, 1 + 1); // 8 % 7 on each side
        let text = serde_json::to_string(&m).expect("serialize");
        assert!(
            text.contains(r#""width":10"#),
            "{}",
            &text[text.len() - 300..]
        );
        let mut back: Timeline = serde_json::from_str(&text).expect("deserialize");
        assert_eq!(back, m);
        let mut again = Timeline::default();
        again.add(&back);
        assert_eq!(again.covered_s(), 3_610);
        back.end_s = 3_605.5;
        let lens: Vec<(u64, f64)> = back.spans().skip(3_599).map(|(s, l, _)| (s, l)).collect();
        assert_eq!(lens, [(3_599, 1.0), (3_600, 5.5)]);
    }

    #[test]
    fn log_histograms_read_both_forms_and_refuse_bad_ones() {
        let h = LogHist(vec![(3, 1), (40, 7)]);
        assert_eq!(serde_json::to_string(&h).expect("ser"), r#""3:1,40:7""#);
        let text: LogHist = serde_json::from_str(r#""3:1,40:7""#).expect("text");
        let pairs: LogHist = serde_json::from_str("[[3,1],[40,7]]").expect("pairs");
        assert_eq!((text.clone(), pairs), (h.clone(), h));
        let empty: LogHist = serde_json::from_str(r#""""#).expect("empty");
        assert_eq!(empty, LogHist::default());
        for bad in [
            r#""40:1,3:1""#,
            r#""3:1,3:1""#,
            r#""528:1""#,
            r#""3-1""#,
            r#""3:x""#,
        ] {
            assert!(serde_json::from_str::<LogHist>(bad).is_err(), "{bad}");
        }
    }
}
