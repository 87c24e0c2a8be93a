//! A replay as the engines read it: `Replay` (in `Workload`) opens a fresh pass
//! over the log for each engine, and `Feed` is one engine's pass, its stripe's
//! calls in time order, read as the run goes.
//!
//! The log's entries come from `Opener`, a function the front end gives (it reads the
//! file: this layer does no I/O), through `schedule::Calls` (time order within its
//! window). Engine j of N takes the calls of the clients whose stripe
//! (`schedule::stripe_of`, a hash of the client) is j, so each client's requests go out
//! from one engine (and one `--partition`) in their order. The pacer asks `next_offset`
//! (one call ahead) and the engine `take`s the request of each call as it becomes due,
//! so a feed holds the reorder window and the call the pacer looked ahead to, never the
//! log. `Replay` also holds the cap of connections per client or per request (the
//! mode is the Config's `replay`), which the engine follows
//! (`engine::event_loop::affinity`). Shared by an engine's pacer
//! (`workload::rate::Schedule`) and its call store (`engine::event_loop::replay`)
//! behind one uncontended lock.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::schedule::{stripe_of, Calls, Timing, WINDOW};
use super::Entry;

/// A pass over a log's entries, in log order.
pub(crate) type Entries = Box<dyn Iterator<Item = Entry> + Send>;

/// Opens a new pass over the log (the front end's reader).
#[derive(Clone)]
pub(crate) struct Opener(pub(crate) Arc<dyn Fn() -> Entries + Send + Sync>);

impl fmt::Debug for Opener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Opener")
    }
}

/// A replay of a log, as `Workload` holds it.
#[derive(Debug, Clone)]
pub(crate) struct Replay {
    /// Opens the log again.
    pub(crate) open: Opener,
    /// What the schedule needs of the whole log (the first pass).
    pub(crate) timing: Arc<Timing>,
    /// Requests of the whole log.
    pub(crate) requests: u64,
    /// Requests of each stripe, for the run's stripes (partitions × threads).
    pub(crate) per_stripe: Arc<[u64]>,
    /// Passes opened and primed before the run (`prepare`), by stripe.
    pub(crate) ready: Arc<Mutex<Vec<(u32, SharedFeed)>>>,
    /// Per client or per request (the Config's `replay`): the most connections this
    /// process keeps open at once, split over its engines (`--threads`).
    pub(crate) cap: u64,
}

impl Replay {
    /// The calls of the whole run (all stripes).
    pub(crate) fn arrivals(&self) -> u64 {
        self.requests
    }

    /// The calls of stripe `stripe` of `stripes` (the survey's stripes; 0 for
    /// another split, which the front end never asks for).
    pub(crate) fn stripe_arrivals(&self, stripe: u32, stripes: u32) -> u64 {
        if self.per_stripe.len() != stripes.max(1) as usize {
            return 0;
        }
        self.per_stripe.get(stripe as usize).copied().unwrap_or(0)
    }

    /// The replay of `entries` (log order) at `speed` over `stripes`, held in
    /// memory (tests).
    #[cfg(test)]
    pub(crate) fn of_entries(entries: Vec<Entry>, speed: f64, stripes: u32) -> Replay {
        let mut survey = super::schedule::Survey::new(stripes);
        entries.iter().for_each(|e| survey.add(e));
        Replay {
            open: Opener(Arc::new(move || {
                Box::new(entries.clone().into_iter()) as Entries
            })),
            timing: survey.timing(speed),
            requests: survey.requests,
            per_stripe: survey.per_stripe.into(),
            ready: Arc::default(),
            cap: 0,
        }
    }

    /// Opens the passes of `mine` (this process's stripes of `stripes`) and reads
    /// each one's first window, before the run starts: filling a window parses
    /// thousands of lines, which would make the first calls late.
    pub(crate) fn prepare(&self, mine: &[u32], stripes: u32) {
        let made: Vec<(u32, SharedFeed)> = mine
            .iter()
            .map(|&j| {
                let feed = self.open_feed(j, stripes);
                lock(&feed).calls.fill();
                (j, feed)
            })
            .collect();
        *self.ready.lock().unwrap_or_else(|p| p.into_inner()) = made;
    }

    /// The pass of stripe `stripe` of `stripes`: the one `prepare` made, else a new
    /// one.
    pub(crate) fn feed(&self, stripe: u32, stripes: u32) -> SharedFeed {
        let mut ready = self.ready.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = ready.iter().position(|(j, _)| *j == stripe) {
            return ready.swap_remove(i).1;
        }
        drop(ready);
        self.open_feed(stripe, stripes)
    }

    /// A new pass for stripe `stripe` of `stripes`.
    fn open_feed(&self, stripe: u32, stripes: u32) -> SharedFeed {
        let stripes = stripes.max(1);
        Arc::new(Mutex::new(Feed {
            calls: Calls::new((self.open.0)(), self.timing.clone(), WINDOW),
            stripe: stripe % stripes,
            stripes,
            pending: VecDeque::new(),
        }))
    }
}

/// One engine's pass, shared by its pacer and its call store.
pub(crate) type SharedFeed = Arc<Mutex<Feed>>;

/// Locks `feed` (each change under the lock is whole: a panic leaves it usable).
pub(crate) fn lock(feed: &SharedFeed) -> MutexGuard<'_, Feed> {
    feed.lock().unwrap_or_else(|p| p.into_inner())
}

/// One engine's pass over the log.
pub(crate) struct Feed {
    calls: Calls<Entries>,
    stripe: u32,
    stripes: u32,
    /// The requests of calls offered to the pacer and not yet taken, in order.
    pending: VecDeque<Entry>,
}

impl fmt::Debug for Feed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Feed")
            .field("stripe", &self.stripe)
            .field("stripes", &self.stripes)
            .field("pending", &self.pending.len())
            .finish()
    }
}

impl Feed {
    /// The offset of this stripe's next call (its request is kept for `take`); None
    /// at the end of the log.
    pub(crate) fn next_offset(&mut self) -> Option<Duration> {
        loop {
            let call = self.calls.next()?;
            if stripe_of(&call.entry.client, self.stripes) == self.stripe {
                self.pending.push_back(call.entry);
                return Some(call.offset);
            }
        }
    }

    /// The request of the oldest call `next_offset` gave and nobody took.
    pub(crate) fn take(&mut self) -> Option<Entry> {
        self.pending.pop_front()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::replay::time::Stamp;

    pub(crate) fn entries(n: u64) -> Vec<Entry> {
        (0..n)
            .map(|k| Entry {
                at: Stamp {
                    ns: 1_000_000_000_000 + k as i64 * 1_000_000,
                    precise: true,
                },
                request_time: None,
                client: format!("10.0.0.{}", k % 7),
                method: String::new(),
                uri: format!("/{k}"),
                headers: Vec::new(),
                body: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn stripes_take_each_clients_calls_once_in_order_at_their_offsets() {
        let n = 70;
        let r = Replay::of_entries(entries(n), 1.0, 3);
        assert_eq!(r.arrivals(), n);
        let mut seen = Vec::new();
        let mut stripe_of_client = std::collections::HashMap::new();
        let mut counts = Vec::new();
        for j in 0..3 {
            let feed = r.feed(j, 3);
            let mut f = lock(&feed);
            let mut taken = 0;
            let mut last = None;
            while let Some(offset) = f.next_offset() {
                let e = f.take().expect("the request of the offset given");
                let k: u64 = e.uri[1..].parse().expect("a number");
                assert_eq!(offset, Duration::from_millis(k));
                assert!(last < Some(k), "in order");
                last = Some(k);
                // A client's calls all go to one stripe.
                assert_eq!(*stripe_of_client.entry(e.client).or_insert(j), j);
                seen.push(k);
                taken += 1;
            }
            assert_eq!(taken, r.stripe_arrivals(j, 3));
            assert_eq!(f.take(), None);
            counts.push(taken);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..n).collect::<Vec<_>>());
        // Seven clients over three stripes: none is empty with this hash.
        assert_eq!(stripe_of_client.len(), 7);
        assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
        assert_eq!(r.stripe_arrivals(0, 2), 0, "not the survey's split");
    }

    #[test]
    fn the_stripe_of_a_client_is_a_stable_hash() {
        // FNV-1a 64 of the bytes: fixed values, so partitions agree across machines.
        assert_eq!(stripe_of("", 1), 0);
        assert_eq!(
            stripe_of("10.0.0.1", 1_000_003),
            (0x87f7_ef5d_e06f_f78d_u64 % 1_000_003) as u32
        );
        for n in 1..9 {
            assert!(stripe_of("::1", n) < n);
        }
    }

    #[test]
    fn a_prepared_pass_is_the_one_its_engine_gets() {
        let r = Replay::of_entries(entries(30), 1.0, 3);
        r.prepare(&[0, 2], 3);
        let mut all = 0;
        for j in [2, 0, 1] {
            let feed = r.feed(j, 3);
            let mut f = lock(&feed);
            std::iter::from_fn(|| f.next_offset()).for_each(|_| all += 1);
        }
        assert_eq!(all, 30);
        assert!(r.ready.lock().expect("not poisoned").is_empty());
    }

    #[test]
    fn the_pacer_may_look_ahead_of_the_calls_taken() {
        let r = Replay::of_entries(entries(4), 1.0, 1);
        let feed = r.feed(0, 1);
        let mut f = lock(&feed);
        assert_eq!(f.next_offset(), Some(Duration::ZERO));
        assert_eq!(f.next_offset(), Some(Duration::from_millis(1)));
        assert_eq!(f.take().map(|e| e.uri), Some("/0".to_string()));
        assert_eq!(f.take().map(|e| e.uri), Some("/1".to_string()));
        assert_eq!(f.take(), None);
    }
}
