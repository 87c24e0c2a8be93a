//! The replay schedule: when each logged request goes out, as an offset from the
//! run's start, and what it sends.
//!
//! Timing rules: a request's time is its log time minus its duration when the log
//! has both a sub-second time and `$request_time` (an access log writes a request
//! when it ends); a sub-second time is used as it is; the requests of one whole
//! second (the combined format's `[10/Oct/2000:13:55:36 -0700]`) are spread evenly
//! over that second in log order, the k-th of n at k/n s (`Schedule::spread` says
//! that happened). Requests are then sorted by time (stably: log order breaks ties),
//! and offset i is (tᵢ − t₀) / `--speed`, rounded to the nanosecond. Pure; called by
//! `front::replay`.

use std::collections::HashMap;
use std::time::Duration;

use super::Entry;

const NS: i64 = 1_000_000_000;

/// One request of the schedule.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Call {
    /// When it is due, from the run's start.
    pub(crate) offset: Duration,
    /// The request.
    pub(crate) entry: Entry,
}

/// The whole schedule, in time order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Schedule {
    /// The calls, offsets non-decreasing.
    pub(crate) calls: Vec<Call>,
    /// Whether some requests had one-second times and were spread over their second.
    pub(crate) spread: bool,
}

/// The schedule of `entries` (log order) at `speed` (> 0).
pub(crate) fn build(entries: Vec<Entry>, speed: f64) -> Schedule {
    // How many whole-second requests each second has, and how many were placed.
    let mut per_second: HashMap<i64, (u64, u64)> = HashMap::new();
    for e in entries.iter().filter(|e| !e.at.precise) {
        per_second.entry(e.at.ns.div_euclid(NS)).or_default().0 += 1;
    }
    let spread = !per_second.is_empty();
    let mut timed: Vec<(i64, Entry)> = entries
        .into_iter()
        .map(|e| {
            let t = if e.at.precise {
                let took = e.request_time.map_or(0, |s| (s * 1e9).round() as i64);
                e.at.ns.saturating_sub(took)
            } else {
                let second = e.at.ns.div_euclid(NS);
                let (n, placed) = per_second.get_mut(&second).map_or((1, 0), |c| {
                    let k = c.1;
                    c.1 += 1;
                    (c.0, k)
                });
                second * NS + (i128::from(NS) * i128::from(placed) / i128::from(n.max(1))) as i64
            };
            (t, e)
        })
        .collect();
    timed.sort_by_key(|(t, _)| *t);
    let t0 = timed.first().map_or(0, |(t, _)| *t);
    let calls = timed
        .into_iter()
        .map(|(t, entry)| {
            let ns = (t - t0) as f64 / speed;
            Call {
                offset: Duration::from_nanos(ns.round() as u64),
                entry,
            }
        })
        .collect();
    Schedule { calls, spread }
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
    fn an_empty_log_is_an_empty_schedule() {
        assert_eq!(build(Vec::new(), 1.0).calls, []);
    }
}
