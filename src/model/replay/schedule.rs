//! The replay schedule: when each logged request goes out, as an offset from the
//! run's start, computed while the log is read (never the whole log in memory).
//!
//! Timing rules: a request's time is its log time minus its duration when the log
//! has both a sub-second time and `$request_time` (an access log writes a request
//! when it ends); a sub-second time is used as it is; the requests of one whole
//! second (the combined format's `[10/Oct/2000:13:55:36 -0700]`) are spread evenly
//! over that second in log order, the k-th of n at k/n s. Requests are then put in
//! time order (log order breaks ties), and offset i is (tᵢ − t₀) / `--speed`,
//! rounded to the nanosecond.
//!
//! Two passes over the log. The first (`Survey`, fed every entry by
//! `front::replay`) counts the requests, of each whole second and of each stripe
//! (`stripe_of`: engines and partitions split a log by client),
//! and finds t₀ and the span; it keeps one counter a second of the log, not the
//! requests. The second (`Calls`, one per engine) turns the entries, in log order,
//! into calls in time order through a reorder window of `WINDOW` requests: a log
//! is nearly in time order (its lines are written as requests end), and a request
//! that began before one already given out (more than `WINDOW` lines late) goes at
//! that one's time instead. Pure; called by
//! `front::replay` and `feed`.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use super::Entry;

const NS: i64 = 1_000_000_000;

/// Requests held to put a log in time order (a few MB).
pub(crate) const WINDOW: usize = 8192;

/// One request of the schedule.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Call {
    /// When it is due, from the run's start.
    pub(crate) offset: Duration,
    /// The request.
    pub(crate) entry: Entry,
}

/// What a replay's second pass needs to know of the whole log.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timing {
    /// The earliest request's time, ns since the epoch.
    t0: i64,
    /// Requests with one-second times, by second.
    per_second: HashMap<i64, u64>,
    /// `--speed`, > 0.
    speed: f64,
}

/// The first pass: counts and bounds of a log's requests.
#[derive(Debug, Clone, Default)]
pub(crate) struct Survey {
    /// Requests seen.
    pub(crate) requests: u64,
    /// Requests of each stripe (`stripe_of`).
    pub(crate) per_stripe: Vec<u64>,
    /// Requests with one-second times, by second.
    per_second: HashMap<i64, u64>,
    /// Earliest and latest sub-second start, ns.
    precise: Option<(i64, i64)>,
}

/// The stripe of `stripes` a request of `client` goes to: a stable hash of the
/// client (64-bit FNV-1a of its bytes) mod `stripes`, so that all of a client's
/// requests go to one engine and one partition, and `--partition I/N` with
/// `--threads T` splits as N alone does (stripe I + jN of NT ≡ I mod N).
pub(crate) fn stripe_of(client: &str, stripes: u32) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in client.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % u64::from(stripes.max(1))) as u32
}

impl Survey {
    /// An empty survey counting the requests of each of `stripes` stripes.
    pub(crate) fn new(stripes: u32) -> Survey {
        Survey {
            per_stripe: vec![0; stripes.max(1) as usize],
            ..Survey::default()
        }
    }

    /// Counts the next entry (log order).
    pub(crate) fn add(&mut self, e: &Entry) {
        self.requests += 1;
        let n = self.per_stripe.len() as u32;
        if let Some(c) = self.per_stripe.get_mut(stripe_of(&e.client, n) as usize) {
            *c += 1;
        }
        if e.at.precise {
            let t = start_of(e);
            self.precise = Some(self.precise.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        } else {
            *self.per_second.entry(e.at.ns.div_euclid(NS)).or_default() += 1;
        }
    }

    /// Whether some requests had one-second times (they are spread over their second).
    pub(crate) fn spread(&self) -> bool {
        !self.per_second.is_empty()
    }

    /// The earliest and the latest request time, ns (None: no request).
    fn bounds(&self) -> Option<(i64, i64)> {
        let whole = self
            .per_second
            .iter()
            .fold(None, |acc: Option<(i64, i64)>, (&s, &n)| {
                let first = s * NS;
                let last = s * NS + place(n - 1, n);
                Some(acc.map_or((first, last), |(a, b)| (a.min(first), b.max(last))))
            });
        match (whole, self.precise) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, None) | (None, x) => x,
        }
    }

    /// The last request's offset at `speed`: the length of the schedule.
    pub(crate) fn span(&self, speed: f64) -> Duration {
        self.bounds()
            .map_or(Duration::ZERO, |(a, b)| offset(b - a, speed))
    }

    /// What the second pass needs, at `speed` (> 0).
    pub(crate) fn timing(&self, speed: f64) -> Arc<Timing> {
        Arc::new(Timing {
            t0: self.bounds().map_or(0, |(a, _)| a),
            per_second: self.per_second.clone(),
            speed,
        })
    }
}

/// When a request with a sub-second time began: its time less its duration.
fn start_of(e: &Entry) -> i64 {
    let took = e.request_time.map_or(0, |s| (s * 1e9).round() as i64);
    e.at.ns.saturating_sub(took)
}

/// Where the k-th of n requests of a second goes in it, ns.
fn place(k: u64, n: u64) -> i64 {
    (i128::from(NS) * i128::from(k) / i128::from(n.max(1))) as i64
}

/// `ns` of log time at `speed`, rounded to the nanosecond.
fn offset(ns: i64, speed: f64) -> Duration {
    Duration::from_nanos((ns.max(0) as f64 / speed).round() as u64)
}

/// An entry held in the reorder window, ordered by (time, log order).
#[derive(Debug)]
struct Held {
    t: i64,
    seq: u64,
    entry: Entry,
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        (self.t, self.seq) == (other.t, other.seq)
    }
}

impl Eq for Held {}

impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Held {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.t, self.seq).cmp(&(other.t, other.seq))
    }
}

/// The second pass: the calls of `entries` (log order), in time order.
#[derive(Debug)]
pub(crate) struct Calls<I> {
    entries: I,
    timing: Arc<Timing>,
    /// Requests of each whole second placed so far.
    placed: HashMap<i64, u64>,
    window: BinaryHeap<Reverse<Held>>,
    /// Its size.
    room: usize,
    seq: u64,
    /// The time of the last call given out (a request that began before it, more
    /// than the window late, goes at it).
    last: i64,
}

impl<I: Iterator<Item = Entry>> Calls<I> {
    /// The calls of `entries` under `timing`, reordered within `room` requests.
    pub(crate) fn new(entries: I, timing: Arc<Timing>, room: usize) -> Calls<I> {
        let last = timing.t0;
        Calls {
            entries,
            timing,
            placed: HashMap::new(),
            window: BinaryHeap::new(),
            room: room.max(1),
            seq: 0,
            last,
        }
    }

    /// The time of `e`, the next entry in log order.
    fn time_of(&mut self, e: &Entry) -> i64 {
        if e.at.precise {
            return start_of(e);
        }
        let second = e.at.ns.div_euclid(NS);
        let n = self.timing.per_second.get(&second).copied().unwrap_or(1);
        let k = self.placed.entry(second).or_default();
        let t = second * NS + place(*k, n);
        *k += 1;
        t
    }
}

impl<I: Iterator<Item = Entry>> Calls<I> {
    /// Reads the log until the window is full (or the log ends).
    pub(crate) fn fill(&mut self) {
        while self.window.len() < self.room {
            let Some(entry) = self.entries.next() else {
                break;
            };
            let t = self.time_of(&entry);
            self.seq += 1;
            self.window.push(Reverse(Held {
                t,
                seq: self.seq,
                entry,
            }));
        }
    }
}

impl<I: Iterator<Item = Entry>> Iterator for Calls<I> {
    type Item = Call;

    fn next(&mut self) -> Option<Call> {
        self.fill();
        let Reverse(held) = self.window.pop()?;
        self.last = self.last.max(held.t);
        Some(Call {
            offset: offset(self.last - self.timing.t0, self.timing.speed),
            entry: held.entry,
        })
    }
}

/// A whole schedule held in memory (tests).
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct Schedule {
    /// The calls, in time order.
    pub(crate) calls: Vec<Call>,
    /// Whether some requests were spread over their second.
    pub(crate) spread: bool,
}

/// The whole schedule of `entries` (log order) at `speed`, with a window as large as
/// the log (tests).
#[cfg(test)]
pub(crate) fn build(entries: Vec<Entry>, speed: f64) -> Schedule {
    let mut survey = Survey::new(1);
    entries.iter().for_each(|e| survey.add(e));
    let n = entries.len();
    let calls = Calls::new(entries.into_iter(), survey.timing(speed), n).collect();
    Schedule {
        calls,
        spread: survey.spread(),
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::replay::time::Stamp;

    fn entry(ns: i64, precise: bool, uri: &str) -> Entry {
        Entry {
            at: Stamp { ns, precise },
            request_time: None,
            client: "c".into(),
            method: "GET".into(),
            uri: uri.into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    fn offsets(s: &Schedule) -> Vec<u64> {
        s.calls.iter().map(|c| c.offset.as_nanos() as u64).collect()
    }

    #[test]
    fn sub_second_times_are_used_as_they_are_and_divided_by_the_speed() {
        // A burst of three within 2 ms, an idle gap of 10 s, another burst.
        let base = 1_796_515_198 * NS;
        let ms = 1_000_000;
        let at = [0, ms, 2 * ms, 10_000 * ms, 10_000 * ms, 10_000 * ms + 1];
        let entries: Vec<Entry> = at.iter().map(|&d| entry(base + d, true, "/")).collect();
        let one = build(entries.clone(), 1.0);
        assert!(!one.spread);
        assert_eq!(offsets(&one), at.map(|d| d as u64));
        let four = build(entries, 4.0);
        assert_eq!(
            offsets(&four),
            [
                0,
                250_000,
                500_000,
                2_500_000_000,
                2_500_000_000,
                2_500_000_000
            ]
        );
    }

    #[test]
    fn request_time_moves_a_request_to_its_start_and_reorders() {
        let base = 100 * NS;
        let mut slow = entry(base + NS, true, "/slow");
        slow.request_time = Some(0.75);
        let fast = entry(base + NS / 2, true, "/fast");
        let s = build(vec![fast, slow], 1.0);
        let uris: Vec<&str> = s.calls.iter().map(|c| c.entry.uri.as_str()).collect();
        assert_eq!(uris, ["/slow", "/fast"]);
        assert_eq!(offsets(&s), [0, 250_000_000]);
    }

    #[test]
    fn whole_seconds_are_spread_evenly_in_log_order() {
        let s0 = 971_211_336 * NS;
        // Four in the first second, none in the next, one in the third, two in the fourth.
        let entries = vec![
            entry(s0, false, "/a"),
            entry(s0, false, "/b"),
            entry(s0, false, "/c"),
            entry(s0, false, "/d"),
            entry(s0 + 2 * NS, false, "/e"),
            entry(s0 + 3 * NS, false, "/f"),
            entry(s0 + 3 * NS, false, "/g"),
        ];
        let s = build(entries.clone(), 1.0);
        assert!(s.spread);
        let uris: String = s.calls.iter().map(|c| &c.entry.uri[1..]).collect();
        assert_eq!(uris, "abcdefg");
        let q = NS as u64 / 4;
        assert_eq!(
            offsets(&s),
            [
                0,
                q,
                2 * q,
                3 * q,
                2 * NS as u64,
                3 * NS as u64,
                3 * NS as u64 + 2 * q
            ]
        );
        let fast = build(entries, 4.0);
        assert_eq!(
            offsets(&fast),
            [0, q / 4, q / 2, 3 * q / 4, q * 2, q * 3, q * 3 + q / 2]
        );
    }

    #[test]
    fn a_small_window_streams_in_order_and_clamps_what_comes_too_late() {
        let base = 500 * NS;
        let ms = 1_000_000;
        // Log order: 0, 3, 1, 2 ms, then 5 ms with a 4.5 ms duration (began at 0.5).
        let mut entries: Vec<Entry> = [0, 3, 1, 2]
            .iter()
            .map(|&d| entry(base + d * ms, true, &format!("/{d}")))
            .collect();
        let mut late = entry(base + 5 * ms, true, "/late");
        late.request_time = Some(0.0045);
        entries.push(late);
        let mut survey = Survey::new(1);
        entries.iter().for_each(|e| survey.add(e));
        assert_eq!(survey.requests, 5);
        assert_eq!(survey.span(1.0), Duration::from_millis(3));
        // A window of 2: /3 waits for /1 and /2; /late began before /1 was given out
        // and goes at /2's time.
        let calls = Calls::new(entries.clone().into_iter(), survey.timing(1.0), 2);
        let got: Vec<(String, u64)> = calls
            .map(|c| (c.entry.uri, c.offset.as_nanos() as u64))
            .collect();
        let want = [
            ("/0", 0),
            ("/1", ms),
            ("/2", 2 * ms),
            ("/late", 2 * ms),
            ("/3", 3 * ms),
        ];
        assert_eq!(got, want.map(|(u, t)| (u.to_string(), t as u64)));
        // A window as large as the log puts it back in place.
        let whole = build(entries, 1.0);
        let uris: Vec<&str> = whole.calls.iter().map(|c| c.entry.uri.as_str()).collect();
        assert_eq!(uris, ["/0", "/late", "/1", "/2", "/3"]);
        assert_eq!(offsets(&whole)[1], ms as u64 / 2);
    }

    #[test]
    fn the_span_of_whole_seconds_is_their_last_placed_request() {
        let s0 = 10 * NS;
        let entries = [
            entry(s0, false, "/a"),
            entry(s0 + 2 * NS, false, "/b"),
            entry(s0 + 2 * NS, false, "/c"),
        ];
        let mut survey = Survey::new(1);
        entries.iter().for_each(|e| survey.add(e));
        assert!(survey.spread());
        assert_eq!(survey.span(1.0), Duration::from_millis(2500));
        assert_eq!(survey.span(2.0), Duration::from_millis(1250));
        assert_eq!(Survey::new(1).span(1.0), Duration::ZERO);
    }

    #[test]
    fn an_empty_log_is_an_empty_schedule() {
        assert_eq!(build(Vec::new(), 1.0).calls, []);
    }
}
