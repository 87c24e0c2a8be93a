//! `Windows`: a run cut into short windows of equal length, each with its own counts
//! and fine latency histograms: the batches `rshperf compare` estimates a run's
//! sampling noise from (`model::compare::estimate`).
//!
//! Owns the windows (connections started, replies of classes 1xx–5xx, errors, and
//! the response, connect and lateness times in `LogHist<9>`: 512 buckets per power of
//! two, each at most 1/512 of its values wide, near the HdrHistograms' 1/1000) and
//! their coarsening. The engine ends
//! a tick every `TICK_MS` (100 ms) and at its end (`Stats::roll_window`); a window is
//! `width_ms / TICK_MS` ticks. Bounded at any run length: when `MAX_WINDOWS` windows
//! are complete, neighbours are merged in pairs and the width doubles, so a run holds
//! 32–63 windows once it is longer than 6.4 s (30 for a 3-s run, 35 of 102.4 s for
//! an hour). Counts come from `Stats` totals at each roll, like the timeline's; the
//! histograms are dense working arrays (allocated at the first value) compacted to
//! their non-zero buckets when a window ends. No per-request records.
//!
//! Merged exactly across engines, partitions and `rshperf merge` (they share their
//! start): the finer side is coarsened to the coarser width, then windows add index
//! by index. Documents written before windows existed have none (`Windows::default`).
//! No I/O; no clock (the engine passes the time).

use serde::{Deserialize, Serialize};

use crate::model::stats::merge::{Merge, MergeError};
use crate::model::stats::timeline::{bucket_of_bits, buckets, LogHist, Totals};

/// Sub-bucket bits of the windows' histograms.
pub(crate) const FINE_BITS: u32 = 9;

/// The windows' histograms: 512 buckets per power of two.
pub(crate) type FineHist = LogHist<FINE_BITS>;

/// The engine's tick, ms: the shortest window.
pub(crate) const TICK_MS: u64 = 100;

/// Windows kept at most: reaching it merges neighbours in pairs.
pub(crate) const MAX_WINDOWS: usize = 64;

/// One window of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Window {
    /// Connections that reached the connecting stage.
    pub(crate) connections: u64,
    /// Completed replies of status classes 1xx–5xx.
    pub(crate) replies: u64,
    /// Failures of every kind.
    pub(crate) errors: u64,
    /// Response times (send start → status line), µs.
    pub(crate) response: FineHist,
    /// Connect times, µs.
    pub(crate) connect: FineHist,
    /// Arrival lateness, µs.
    pub(crate) lateness: FineHist,
}

impl Window {
    /// Adds another window's counts and histograms.
    fn add(&mut self, o: &Window) {
        self.connections = self.connections.saturating_add(o.connections);
        self.replies = self.replies.saturating_add(o.replies);
        self.errors = self.errors.saturating_add(o.errors);
        self.response.merge(&o.response);
        self.connect.merge(&o.connect);
        self.lateness.merge(&o.lateness);
    }

    /// The count `name` (`connections`, `replies`, `errors`: the timeline's
    /// columns of the same names), if windows keep it.
    pub(crate) fn count(&self, name: &str) -> Option<u64> {
        match name {
            "connections" => Some(self.connections),
            "replies" => Some(self.replies),
            "errors" => Some(self.errors),
            _ => None,
        }
    }

    /// The histogram `name` (`response`, `connect`, `lateness`), if windows keep it.
    pub(crate) fn hist(&self, name: &str) -> Option<&FineHist> {
        match name {
            "response" => Some(&self.response),
            "connect" => Some(&self.connect),
            "lateness" => Some(&self.lateness),
            _ => None,
        }
    }
}

/// A dense histogram being filled: its counts (empty until the first value) and the
/// range of buckets touched since it was last taken.
#[derive(Debug, Clone, Default)]
struct Dense {
    counts: Vec<u32>,
    touched: std::ops::Range<usize>,
}

impl Dense {
    /// Adds one value, allocating the counts at the first.
    fn count(&mut self, us: u64) {
        if self.counts.is_empty() {
            self.counts = vec![0; buckets(FINE_BITS)];
        }
        let b = bucket_of_bits(us, FINE_BITS);
        let c = &mut self.counts[b];
        *c = c.saturating_add(1);
        self.touched = if self.touched.is_empty() {
            b..b + 1
        } else {
            self.touched.start.min(b)..self.touched.end.max(b + 1)
        };
    }

    /// The compact form of the values since the last take; the counts are cleared.
    fn take(&mut self) -> FineHist {
        let range = std::mem::take(&mut self.touched);
        let Some(part) = self.counts.get_mut(range.clone()) else {
            return FineHist::default();
        };
        let pairs = part
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c != 0)
            .map(|(i, &c)| ((range.start + i) as u16, c))
            .collect();
        part.iter_mut().for_each(|c| *c = 0);
        LogHist(pairs)
    }
}

/// The window being recorded: dense histograms and the totals at its start.
#[derive(Debug, Clone, Default)]
struct Working {
    response: Dense,
    connect: Dense,
    lateness: Dense,
    base: Totals,
    /// Ticks ended since the start.
    ticks: u64,
}

/// A run's windows.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Windows {
    /// Length of every window but the last, ms (`TICK_MS` times a power of two).
    pub(crate) width_ms: u64,
    /// Seconds from the start to the end of the last window (the run's end).
    pub(crate) end_s: f64,
    /// The windows, in order, contiguous from the start.
    pub(crate) windows: Vec<Window>,
    #[serde(skip)]
    working: Working,
}

impl Default for Windows {
    fn default() -> Self {
        Windows {
            width_ms: TICK_MS,
            end_s: 0.0,
            windows: Vec::new(),
            working: Working::default(),
        }
    }
}

impl PartialEq for Windows {
    fn eq(&self, o: &Windows) -> bool {
        self.width_ms == o.width_ms && self.end_s == o.end_s && self.windows == o.windows
    }
}

impl Merge for Windows {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        self.add(o);
        Ok(())
    }
}

impl Windows {
    /// A response time, µs.
    pub(crate) fn on_response(&mut self, us: u64) {
        self.working.response.count(us);
    }

    /// A connect time, µs.
    pub(crate) fn on_connect(&mut self, us: u64) {
        self.working.connect.count(us);
    }

    /// An arrival's lateness, µs.
    pub(crate) fn on_lateness(&mut self, us: u64) {
        self.working.lateness.count(us);
    }

    /// Ends a tick at `at_s` seconds since the start (`now`: the running totals);
    /// `last` ends the run, and with it the window, however short. A window ends
    /// when its ticks are complete.
    pub(crate) fn tick(&mut self, now: Totals, at_s: f64, last: bool) {
        if !last {
            self.working.ticks += 1;
        }
        let ticks_per_window = self.width_ms / TICK_MS;
        let complete = self.working.ticks >= (self.windows.len() as u64 + 1) * ticks_per_window;
        let started = (self.windows.len() as u64) * ticks_per_window < self.working.ticks
            || at_s > self.end_s;
        if !(complete || (last && started)) {
            return;
        }
        let w = &mut self.working;
        let sum = |a: &[u64]| a.iter().fold(0u64, |t, &x| t.saturating_add(x));
        let window = Window {
            connections: now.connections.saturating_sub(w.base.connections),
            replies: sum(&now.replies).saturating_sub(sum(&w.base.replies)),
            errors: sum(&now.errors).saturating_sub(sum(&w.base.errors)),
            response: w.response.take(),
            connect: w.connect.take(),
            lateness: w.lateness.take(),
        };
        w.base = now;
        self.windows.push(window);
        self.end_s = at_s;
        if self.windows.len() >= MAX_WINDOWS {
            self.coarsen_to(self.width_ms * 2);
        }
    }

    /// Merges neighbours until the width is `width_ms` (a power-of-two multiple of
    /// the current one).
    fn coarsen_to(&mut self, width_ms: u64) {
        while self.width_ms < width_ms {
            let old = std::mem::take(&mut self.windows);
            let mut pairs = old.chunks(2);
            self.windows = pairs
                .by_ref()
                .map(|pair| {
                    let mut w = pair[0].clone();
                    if let Some(second) = pair.get(1) {
                        w.add(second);
                    }
                    w
                })
                .collect();
            self.width_ms *= 2;
        }
    }

    /// Adds another run part's windows (same start): both at the coarser width,
    /// window by window.
    pub(crate) fn add(&mut self, o: &Windows) {
        if o.windows.is_empty() {
            return;
        }
        let width = self.width_ms.max(o.width_ms);
        self.coarsen_to(width);
        let mut other = o.clone();
        other.coarsen_to(width);
        for (a, b) in self.windows.iter_mut().zip(&other.windows) {
            a.add(b);
        }
        if other.windows.len() > self.windows.len() {
            self.windows
                .extend_from_slice(&other.windows[self.windows.len()..]);
        }
        self.end_s = self.end_s.max(other.end_s);
        while self.windows.len() >= MAX_WINDOWS {
            let w = self.width_ms * 2;
            self.coarsen_to(w);
        }
    }

    /// Each window with its length in seconds (the last one ends at `end_s`).
    pub(crate) fn spans(&self) -> impl Iterator<Item = (f64, &Window)> {
        let width_s = self.width_ms as f64 / 1000.0;
        let last = self.windows.len().saturating_sub(1);
        let end_s = self.end_s;
        self.windows.iter().enumerate().map(move |(i, w)| {
            let len = if i == last {
                (end_s - i as f64 * width_s).clamp(0.0, width_s)
            } else {
                width_s
            };
            (len, w)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` ticks of `per_tick` responses of `us` µs and as many replies.
    fn feed(w: &mut Windows, n: u64, per_tick: u64, us: u64, totals: &mut Totals) {
        for _ in 0..n {
            for _ in 0..per_tick {
                w.on_response(us);
                totals.replies[1] += 1;
                totals.connections += 1;
            }
            let at = (w.working.ticks + 1) as f64 * TICK_MS as f64 / 1000.0;
            w.tick(*totals, at, false);
        }
    }

    #[test]
    fn ticks_make_windows_and_the_last_may_be_short() {
        let mut w = Windows::default();
        let mut t = Totals::default();
        feed(&mut w, 30, 40, 2_000, &mut t);
        assert_eq!((w.windows.len(), w.width_ms), (30, 100));
        assert!(w
            .windows
            .iter()
            .all(|x| x.replies == 40 && x.connections == 40));
        assert_eq!(w.windows[3].response.count(), 40);
        // The run ends 30 ms into the next tick with 5 more replies.
        for _ in 0..5 {
            w.on_response(2_100);
            t.replies[1] += 1;
        }
        t.errors[2] += 2;
        w.tick(t, 3.03, true);
        assert_eq!(w.windows.len(), 31);
        assert_eq!((w.windows[30].replies, w.windows[30].errors), (5, 2));
        let lens: Vec<f64> = w.spans().map(|(l, _)| l).collect();
        assert_eq!(lens[0], 0.1);
        assert!((lens[30] - 0.03).abs() < 1e-9, "{lens:?}");
        // Ending exactly on a tick that already closed adds nothing.
        let mut v = Windows::default();
        let mut t = Totals::default();
        feed(&mut v, 3, 1, 10, &mut t);
        v.tick(t, 0.3, true);
        assert_eq!(v.windows.len(), 3);
    }

    #[test]
    fn windows_stay_bounded_and_keep_every_count() {
        let mut w = Windows::default();
        let mut t = Totals::default();
        // An hour of 100-ms ticks with 3 replies each.
        feed(&mut w, 36_000, 3, 500, &mut t);
        assert!(w.windows.len() < MAX_WINDOWS && w.windows.len() >= MAX_WINDOWS / 2);
        assert_eq!(w.width_ms, 102_400);
        // Full windows hold 1,024 ticks; the last, open one is not pushed yet.
        assert_eq!(w.windows[0].replies, 3 * 1_024);
        assert_eq!(w.windows.len(), 36_000 / 1_024);
        w.tick(t, 3_600.0, true);
        assert_eq!(w.windows.len(), 36_000 / 1_024 + 1);
        let replies: u64 = w.windows.iter().map(|x| x.replies).sum();
        let responses: u64 = w.windows.iter().map(|x| x.response.count()).sum();
        assert_eq!((replies, responses), (108_000, 108_000));
    }

    #[test]
    fn merging_aligns_widths_and_adds_window_by_window() {
        let (mut a, mut b) = (Windows::default(), Windows::default());
        let (mut ta, mut tb) = (Totals::default(), Totals::default());
        feed(&mut a, 70, 1, 100, &mut ta); // coarsened once: 200 ms windows
        feed(&mut b, 10, 2, 200, &mut tb); // 100 ms windows
        assert_eq!((a.width_ms, b.width_ms), (200, 100));
        let mut m = a.clone();
        m.add(&b);
        assert_eq!(m.width_ms, 200);
        assert_eq!(m.windows.len(), a.windows.len());
        assert_eq!(m.windows[0].replies, 2 + 4);
        assert_eq!(m.windows[4].replies, 2 + 4);
        assert_eq!(m.windows[5].replies, 2);
        let total: u64 = m.windows.iter().map(|x| x.response.count()).sum();
        assert_eq!(total, 70 + 20);
        // The other way round gives the same.
        let mut n = b.clone();
        n.add(&a);
        assert_eq!(n, m);
        let text = serde_json::to_string(&m).expect("serialize");
        let back: Windows = serde_json::from_str(&text).expect("deserialize");
        assert_eq!(back, m);
    }

    #[test]
    fn fine_histograms_count_below_a_value() {
        let mut w = Windows::default();
        for us in [1_000, 2_000, 3_000, 3_000] {
            w.on_response(us);
        }
        w.tick(Totals::default(), 0.1, false);
        let h = &w.windows[0].response;
        assert_eq!(h.count(), 4);
        assert_eq!(h.count_at_or_below(2_999.0), 2.0);
        assert_eq!(h.count_at_or_below(5_000.0), 4.0);
        // Buckets at 3 ms are 4 µs wide (1/512 of 2048): 3,000 lies in 3,000..=3,003,
        // and 3,000..=3,001 is half of it.
        assert_eq!(h.count_at_or_below(3_001.5), 2.0 + 2.0 * 2.0 / 4.0);
        // At 2 ms buckets are 2 µs wide: 2,000 lies in 2,000..=2,001.
        assert_eq!(h.quantile_us(0.5), 2_001);
    }
}
