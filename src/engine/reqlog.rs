//! `RecordFeed`: the per-request log's records handed, in batches, from the engines
//! to the writer thread (`--request-log`), and `Logger`, one engine's side of it.
//!
//! An engine fills a batch of `BATCH` records (no lock, no allocation once the
//! batches exist) and swaps it for an empty one from the feed's spares (one lock per
//! batch); the writer takes full batches (`next`) and gives them back emptied
//! (`recycle`). Memory is bounded: when `MAX_QUEUED` batches wait, the engine waits
//! for the writer, and the time it waited is kept (`held`) for the runner to report.
//! Does no I/O. Used by the engines (`event_loop`) and the classic runner (the
//! writer's side).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::model::reqlog::Record;

/// Records per batch.
pub(crate) const BATCH: usize = 1024;

/// Full batches that may wait for the writer before an engine waits (with `BATCH`
/// and about 150 bytes a record: 40 MB).
const MAX_QUEUED: usize = 256;

/// The batches between the engines and the writer.
#[derive(Debug, Default)]
struct Queue {
    full: VecDeque<Vec<Record>>,
    spare: Vec<Vec<Record>>,
    done: bool,
    /// Times an engine waited for the writer, and how long in all.
    held: (u64, Duration),
}

/// Records from the engines of one run to the log's writer.
#[derive(Debug, Default)]
pub(crate) struct RecordFeed {
    queue: Mutex<Queue>,
    /// A full batch is queued (or the engines are done).
    ready: Condvar,
    /// The writer took a batch.
    room: Condvar,
}

impl RecordFeed {
    /// An empty feed.
    pub(crate) fn new() -> RecordFeed {
        RecordFeed::default()
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Every change under the lock is one push or pop: a panic leaves it whole.
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `batch` (when it holds records) and leaves an empty one in its place;
    /// waits while `MAX_QUEUED` batches are queued.
    pub(crate) fn push(&self, batch: &mut Vec<Record>) {
        if batch.is_empty() {
            return;
        }
        let mut q = self.lock();
        if q.full.len() >= MAX_QUEUED {
            let start = Instant::now();
            while q.full.len() >= MAX_QUEUED && !q.done {
                q = self.room.wait(q).unwrap_or_else(|p| p.into_inner());
            }
            q.held.0 += 1;
            q.held.1 += start.elapsed();
        }
        let empty = q.spare.pop().unwrap_or_else(|| Vec::with_capacity(BATCH));
        q.full.push_back(std::mem::replace(batch, empty));
        drop(q);
        self.ready.notify_one();
    }

    /// Every engine has returned: the writer takes what is left, then stops.
    pub(crate) fn finish(&self) {
        self.lock().done = true;
        self.ready.notify_all();
    }

    /// The next full batch, waiting for one; None once the engines are done and
    /// every batch was taken.
    pub(crate) fn next(&self) -> Option<Vec<Record>> {
        let mut q = self.lock();
        loop {
            if let Some(b) = q.full.pop_front() {
                drop(q);
                self.room.notify_all();
                return Some(b);
            }
            if q.done {
                return None;
            }
            q = self.ready.wait(q).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Gives a written batch back for reuse.
    pub(crate) fn recycle(&self, mut batch: Vec<Record>) {
        batch.clear();
        let mut q = self.lock();
        if q.spare.len() < MAX_QUEUED {
            q.spare.push(batch);
        }
    }

    /// How often the engines waited for the writer, and how long in all.
    pub(crate) fn held(&self) -> (u64, Duration) {
        self.lock().held
    }
}

/// One engine's side of the log: its batch being filled and the run's start.
pub(crate) struct Logger<'a> {
    feed: &'a RecordFeed,
    batch: Vec<Record>,
    t0: Instant,
}

impl<'a> Logger<'a> {
    /// A logger into `feed` for a run that started at `t0`.
    pub(crate) fn new(feed: &'a RecordFeed, t0: Instant) -> Logger<'a> {
        Logger {
            feed,
            batch: Vec::with_capacity(BATCH),
            t0,
        }
    }

    /// Microseconds from the run's start to `t`.
    pub(crate) fn us(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.t0).as_micros()).unwrap_or(u64::MAX)
    }

    /// Adds a record.
    pub(crate) fn push(&mut self, r: Record) {
        self.batch.push(r);
        if self.batch.len() >= BATCH {
            self.feed.push(&mut self.batch);
        }
    }

    /// Hands the records so far to the writer (the engine is done).
    pub(crate) fn flush(&mut self) {
        self.feed.push(&mut self.batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: u64) -> Record {
        Record {
            id,
            ..Record::default()
        }
    }

    #[test]
    fn records_reach_the_writer_in_batches_and_all_of_them() {
        let feed = RecordFeed::new();
        let t0 = Instant::now();
        let ids = std::thread::scope(|s| {
            let writer = s.spawn(|| {
                let mut ids = Vec::new();
                while let Some(b) = feed.next() {
                    ids.extend(b.iter().map(|r| r.id));
                    feed.recycle(b);
                }
                ids
            });
            let engines: Vec<_> = (0..2u64)
                .map(|j| {
                    let feed = &feed;
                    s.spawn(move || {
                        let mut log = Logger::new(feed, t0);
                        for k in 0..5000u64 {
                            log.push(rec(j + 2 * k));
                        }
                        log.flush();
                    })
                })
                .collect();
            for e in engines {
                e.join().expect("engine");
            }
            feed.finish();
            writer.join().expect("writer")
        });
        let mut ids = ids;
        ids.sort_unstable();
        assert_eq!(ids, (0..10_000u64).collect::<Vec<_>>());
    }

    #[test]
    fn at_most_max_queued_batches_wait_for_the_writer() {
        let feed = RecordFeed::new();
        for k in 0..MAX_QUEUED as u64 {
            let mut b = vec![rec(k)];
            feed.push(&mut b);
            assert!(b.is_empty());
        }
        assert_eq!(feed.held().0, 0);
        std::thread::scope(|s| {
            // Returns only once the writer took a batch (whichever came first).
            let engine = s.spawn(|| feed.push(&mut vec![rec(999)]));
            let first = feed.next().expect("a batch");
            assert_eq!(first[0].id, 0);
            engine.join().expect("engine");
        });
        assert!(feed.held().0 <= 1);
        feed.finish();
        let mut ids = Vec::new();
        while let Some(b) = feed.next() {
            ids.push(b[0].id);
        }
        assert_eq!(ids.len(), MAX_QUEUED);
        assert_eq!(ids.last(), Some(&999));
    }
}
