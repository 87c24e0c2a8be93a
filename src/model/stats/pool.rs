//! `PoolStats`: what only a `--call-rate` run measures — calls scheduled, taken by a
//! connection, answered, lost, never sent, or abandoned in flight at the end; the
//! connections reopened to keep the pool full, or closed for another client (a
//! replay's cap); and two histograms measured from each
//! call's scheduled time (wrk2's rule, no coordinated omission): lateness (scheduled →
//! taken by a connection, queueing for a free connection included) and response
//! (scheduled → first byte of the reply). A call still unanswered at the end of the
//! run counts in them up to the end (a lower bound of what it would have been): an
//! unsent call in both, an abandoned one in response. So every scheduled call ends
//! once: `scheduled = completed + lost + unsent + abandoned`, and lateness holds
//! every scheduled call, response every one but the lost.
//!
//! Owns the figures and their merge; `Stats` holds one (`Stats::pool`). Fed by the
//! engine's pool (`engine/event_loop/pool.rs`); all zero otherwise. Carried in JSON through
//! `Stats`' serde schema; the report's `call_rate` figures are derived from it
//! (`model::report`) and printed by `output::extras`.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::merge::{merge_fields, Merge, MergeError};
use super::{new_histogram, record, serial, us};

/// Call-rate figures of one engine (or merged from several).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PoolStats {
    /// Connections the pool keeps open (`--num-conns`; a replay per client or per
    /// request: the most open at once), summed over engines.
    pub(crate) connections: u64,
    /// Calls whose scheduled time came before the end of the run.
    pub(crate) scheduled: u64,
    /// Calls taken by a connection (queued on it for sending).
    pub(crate) issued: u64,
    /// Calls answered (a complete reply, or a stream reset by the server).
    pub(crate) completed: u64,
    /// Calls lost with a connection that failed before their reply.
    pub(crate) lost: u64,
    /// Calls still waiting for a connection when the run ended.
    pub(crate) unsent: u64,
    /// Calls taken by a connection and still unanswered when the run ended (absent
    /// from documents written before it).
    #[serde(default)]
    pub(crate) abandoned: u64,
    /// Most calls waiting for a connection at once.
    pub(crate) max_waiting: u64,
    /// Connections opened to replace one the server closed or that failed.
    pub(crate) reconnects: u64,
    /// Connections given up after failing twice in a row without a reply.
    pub(crate) given_up: u64,
    /// Idle connections of a replay's clients closed to open one for another client
    /// (at the cap of connections per client or per request; absent from documents
    /// written before it: 0).
    #[serde(default)]
    pub(crate) evicted: u64,
    /// How long after the run's start the schedule began (the pool's warm-up,
    /// `engine::event_loop::warmup`), µs; the longest of the engines' (absent from
    /// documents written before it: 0).
    #[serde(default)]
    pub(crate) warm_up_us: u64,
    /// Scheduled time → taken by a connection (unsent calls: → the end), µs.
    #[serde(with = "serial::histogram")]
    pub(crate) lateness: Histogram<u64>,
    /// Scheduled time → first byte of the reply (unsent and abandoned calls: → the
    /// end), µs.
    #[serde(with = "serial::histogram")]
    pub(crate) response: Histogram<u64>,
}

impl Default for PoolStats {
    fn default() -> Self {
        PoolStats {
            connections: 0,
            scheduled: 0,
            issued: 0,
            completed: 0,
            lost: 0,
            unsent: 0,
            abandoned: 0,
            max_waiting: 0,
            reconnects: 0,
            given_up: 0,
            evicted: 0,
            warm_up_us: 0,
            lateness: new_histogram(),
            response: new_histogram(),
        }
    }
}

impl Merge for PoolStats {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        merge_fields!(PoolStats, self, o;
            connections: sum,
            scheduled: sum,
            issued: sum,
            completed: sum,
            lost: sum,
            unsent: sum,
            abandoned: sum,
            max_waiting: sum,
            reconnects: sum,
            given_up: sum,
            evicted: sum,
            warm_up_us: max,
            lateness: sum,
            response: sum,
        )
    }
}

impl PoolStats {
    /// A call was taken by a connection `late` after its scheduled time.
    pub(crate) fn on_issued(&mut self, late: Duration) {
        self.issued += 1;
        record(&mut self.lateness, us(late));
    }

    /// The first byte of a call's reply came `d` after its scheduled time.
    pub(crate) fn on_response(&mut self, d: Duration) {
        self.completed += 1;
        record(&mut self.response, us(d));
    }

    /// A call was still waiting for a connection at the end, `waited` after its
    /// scheduled time; `fresh`: it had never been taken by one (its lateness was not
    /// counted yet).
    pub(crate) fn on_unsent(&mut self, waited: Duration, fresh: bool) {
        self.unsent += 1;
        if fresh {
            record(&mut self.lateness, us(waited));
        }
        record(&mut self.response, us(waited));
    }

    /// A call waiting for a connection was lost with it (a replay's client whose
    /// connection failed), `waited` after its scheduled time; `fresh` as for
    /// `on_unsent`.
    pub(crate) fn on_lost_waiting(&mut self, waited: Duration, fresh: bool) {
        self.lost += 1;
        if fresh {
            record(&mut self.lateness, us(waited));
        }
    }

    /// A call was unanswered on a connection at the end, `waited` after its
    /// scheduled time.
    pub(crate) fn on_abandoned(&mut self, waited: Duration) {
        self.abandoned += 1;
        record(&mut self.response, us(waited));
    }

    /// Whether this run used `--call-rate`.
    pub(crate) fn is_used(&self) -> bool {
        self.connections > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds() {
        let mut a = PoolStats {
            connections: 2,
            scheduled: 10,
            issued: 8,
            max_waiting: 3,
            ..PoolStats::default()
        };
        a.on_issued(Duration::from_micros(1500));
        a.on_response(Duration::from_micros(1800));
        assert!(!PoolStats::default().is_used());
        a.merge(&a.clone()).expect("no overflow");
        assert_eq!(a.issued, 18);
        assert_eq!(a.lateness.len(), 2);
        assert_eq!((a.connections, a.max_waiting, a.response.len()), (4, 6, 2));
    }

    #[test]
    fn calls_unanswered_at_the_end_count_to_the_end() {
        let mut p = PoolStats::default();
        p.on_issued(Duration::from_millis(1));
        p.on_abandoned(Duration::from_millis(3_900));
        p.on_unsent(Duration::from_millis(2_000), true);
        // Taken back from a closed connection: its lateness was counted then.
        p.on_unsent(Duration::from_millis(3_000), false);
        assert_eq!((p.issued, p.abandoned, p.unsent), (1, 1, 2));
        assert_eq!(p.lateness.len(), 2);
        assert_eq!(p.response.len(), 3);
        assert_eq!(p.response.max(), p.response.highest_equivalent(3_900_000));
    }

    #[test]
    fn a_call_lost_while_waiting_counts_its_lateness_once_and_no_response() {
        let mut p = PoolStats::default();
        p.on_lost_waiting(Duration::from_millis(2), true);
        p.on_issued(Duration::from_millis(1));
        // Taken back from a closed connection, then lost: counted when first taken.
        p.on_lost_waiting(Duration::from_millis(5), false);
        assert_eq!((p.lost, p.issued), (2, 1));
        assert_eq!((p.lateness.len(), p.response.len()), (2, 0));
    }
}
