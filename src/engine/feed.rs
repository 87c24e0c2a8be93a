//! `SecondFeed`: the engines' seconds handed, as each ends, to a writer that streams
//! them (`--timeline`'s CSV, written while the run lasts).
//!
//! Each engine pushes the interval of every second it rolls over (`push`, once a
//! second: one lock, no work on the request path); the writer takes the seconds in
//! order (`next`), each the sum of every engine's same second, as soon as every engine
//! has ended it, and the rest once the runner says the engines are done (`finish`).
//! The engines' timelines may coarsen after the first hour; what passes here is always
//! one second. Does no I/O (the writer is the front end's). Used by `execute` (the
//! engines' side) and the classic runner (the writer's side).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::model::stats::timeline::Interval;

/// One second of one engine: its interval and when it ended (seconds since the start;
/// less than the next whole second for an engine's last, partial second).
type Ended = (Interval, f64);

/// The queues, one per engine, and whether the engines are done.
#[derive(Debug, Default)]
struct Queues {
    engines: Vec<VecDeque<Ended>>,
    done: bool,
    /// Seconds taken so far (the next one's start).
    taken: u64,
}

/// Seconds from the engines of one run to the timeline's writer.
#[derive(Debug, Default)]
pub(crate) struct SecondFeed {
    queues: Mutex<Queues>,
    ready: Condvar,
}

/// One second of the whole run: when it starts (seconds since the start), how long it
/// lasted (1, or less for the run's last), and the sum of the engines' intervals.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FedSecond {
    /// Its start, whole seconds since the start of the run.
    pub(crate) start: u64,
    /// Its length in seconds (at most 1).
    pub(crate) seconds: f64,
    /// Every engine's figures of it, added.
    pub(crate) interval: Interval,
}

impl SecondFeed {
    /// A feed for `engines` engines.
    pub(crate) fn new(engines: usize) -> SecondFeed {
        SecondFeed {
            queues: Mutex::new(Queues {
                engines: vec![VecDeque::new(); engines],
                done: false,
                taken: 0,
            }),
            ready: Condvar::new(),
        }
    }

    /// The queues (a writer or engine that panicked holding the lock left them whole:
    /// every change is one push or pop).
    fn lock(&self) -> MutexGuard<'_, Queues> {
        self.queues.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Engine `engine` ended a second at `end_s` with `interval`.
    pub(crate) fn push(&self, engine: usize, interval: Interval, end_s: f64) {
        let mut q = self.lock();
        if let Some(queue) = q.engines.get_mut(engine) {
            queue.push_back((interval, end_s));
        }
        drop(q);
        self.ready.notify_one();
    }

    /// Every engine has returned: the writer takes what is left, then stops.
    pub(crate) fn finish(&self) {
        self.lock().done = true;
        self.ready.notify_one();
    }

    /// The next second, once every engine has ended it (or, after `finish`, once any
    /// engine has); None when the engines are done and every second was taken. Waits
    /// until then.
    pub(crate) fn next(&self) -> Option<FedSecond> {
        let mut q = self.lock();
        loop {
            let all = q.engines.iter().all(|e| !e.is_empty());
            let any = q.engines.iter().any(|e| !e.is_empty());
            if all || (q.done && any) {
                break;
            }
            if q.done {
                return None;
            }
            q = self.ready.wait(q).unwrap_or_else(|p| p.into_inner());
        }
        let start = q.taken;
        q.taken += 1;
        let mut sum: Option<Interval> = None;
        let mut end_s = start as f64;
        for (iv, end) in q.engines.iter_mut().filter_map(VecDeque::pop_front) {
            end_s = end_s.max(end);
            match &mut sum {
                Some(s) => s.add_engine(&iv),
                None => sum = Some(iv),
            }
        }
        let interval = sum.expect("one engine at least had this second");
        Some(FedSecond {
            start,
            seconds: (end_s - start as f64).clamp(0.0, 1.0),
            interval,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stats::timeline::{Timeline, Totals};
    use crate::model::stats::ERROR_KINDS;

    /// A second with `replies` 2xx replies, `open` connections open at its end.
    fn second(t: &mut Timeline, replies: u64, open: u64, end_s: f64) -> Interval {
        let base = t.intervals.iter().map(|iv| iv.replies[1]).sum::<u64>();
        t.on_response(1000 * replies);
        t.roll(
            Totals {
                connections: 0,
                replies: [0, base + replies, 0, 0, 0],
                errors: [0; ERROR_KINDS],
            },
            open,
            end_s,
        )
    }

    #[test]
    fn seconds_come_out_summed_once_every_engine_ended_them() {
        let feed = SecondFeed::new(2);
        let (mut a, mut b) = (Timeline::default(), Timeline::default());
        feed.push(0, second(&mut a, 3, 1, 1.0), 1.0);
        feed.push(0, second(&mut a, 4, 2, 2.0), 2.0);
        // Engine 1 ended no second yet: nothing is ready (a second thread would wait).
        assert!(feed.lock().engines[1].is_empty());
        feed.push(1, second(&mut b, 5, 10, 1.0), 1.0);
        let s0 = feed.next().expect("second 0");
        assert_eq!((s0.start, s0.seconds), (0, 1.0));
        assert_eq!(s0.interval.replies[1], 8);
        assert_eq!(s0.interval.open, 11);
        assert_eq!(s0.interval.response.count(), 2);
        // Engine 1 stops at 1.25 s, engine 0 at 1.5 s: the last second is 0.5 s long.
        feed.push(1, second(&mut b, 1, 0, 1.25), 1.25);
        let s1 = feed.next().expect("second 1");
        assert_eq!((s1.start, s1.interval.replies[1]), (1, 5));
        assert_eq!(s1.seconds, 1.0);
        feed.push(0, second(&mut a, 2, 0, 2.5), 2.5);
        feed.finish();
        let s2 = feed.next().expect("engine 0's last second");
        assert_eq!((s2.start, s2.seconds, s2.interval.replies[1]), (2, 0.5, 2));
        assert_eq!(feed.next(), None);
    }

    #[test]
    fn the_writer_waits_for_the_slowest_engine() {
        let feed = SecondFeed::new(2);
        std::thread::scope(|s| {
            let writer = s.spawn(|| {
                let mut got = Vec::new();
                while let Some(sec) = feed.next() {
                    got.push(sec.interval.replies[1]);
                }
                got
            });
            let (mut a, mut b) = (Timeline::default(), Timeline::default());
            for k in 0..50u64 {
                feed.push(0, second(&mut a, k, 0, (k + 1) as f64), (k + 1) as f64);
            }
            for k in 0..50u64 {
                feed.push(1, second(&mut b, 1, 0, (k + 1) as f64), (k + 1) as f64);
            }
            feed.finish();
            let got = writer.join().expect("writer");
            assert_eq!(got, (0..50u64).map(|k| k + 1).collect::<Vec<_>>());
        });
    }
}
