//! The report's figures re-computed from a per-request log: `Tally` takes the records
//! of a `--request-log` one by one and gathers the `Stats` they determine — the
//! connections that carried a call, requests, replies by status, response and transfer
//! times, connect times, request and reply bytes, and the errors of the connections
//! (and HTTP/2 or HTTP/3 streams) that failed with calls on them. What a log cannot
//! hold (CPU time, reply-rate samples, connection lifetimes, a connection refused
//! before any call) stays empty. Memory: two bits per connection number. Used by
//! `rshperf log --report` (`front::log`).

use std::time::Duration;

use crate::model::reqlog::{End, Record};
use crate::model::stats::Stats;

/// A growable set of connection numbers, a bit each (numbers are dense: engine j of
/// N numbers its connections j, j + N, …).
#[derive(Debug, Default)]
struct Bits(Vec<u64>);

impl Bits {
    /// Adds `n`; true when it was not there before.
    fn insert(&mut self, n: u64) -> bool {
        let (word, bit) = ((n / 64) as usize, n % 64);
        if word >= self.0.len() {
            self.0.resize(word + 1, 0);
        }
        let was = self.0[word] & (1 << bit) != 0;
        self.0[word] |= 1 << bit;
        !was
    }
}

/// The figures of the records seen so far.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    stats: Stats,
    seen: Bits,
    failed: Bits,
    /// The latest end of any record, µs since the run's start.
    last_us: u64,
    /// Records read.
    records: u64,
}

impl Tally {
    /// Counts one record.
    pub(crate) fn add(&mut self, r: &Record) {
        let s = &mut self.stats;
        self.records += 1;
        self.last_us = self.last_us.max(r.end_us);
        let since = |from: Option<u64>, to: Option<u64>| match (from, to) {
            (Some(a), Some(b)) => Some(Duration::from_micros(b.saturating_sub(a))),
            _ => None,
        };
        // An unsent call had no connection.
        if r.end != End::Unsent && self.seen.insert(r.conn) {
            s.on_connecting();
            if let Some(d) = since(r.connect_us, r.connected_us) {
                s.on_connected(d);
            }
        }
        if r.written_us.is_some() {
            s.on_request_started();
            s.on_request_bytes(r.bytes_out);
        }
        if let (Some(status), Some(response)) = (r.status, since(r.send_us, r.first_byte_us)) {
            s.on_response(response);
            let header = r.bytes_in.saturating_sub(r.content_bytes);
            let transfer = since(r.first_byte_us, Some(r.end_us)).unwrap_or_default();
            let status = u16::try_from(status).unwrap_or(u16::MAX);
            s.on_reply(status, header, r.content_bytes, 0, transfer);
        }
        if let End::Failed(kind) = r.end {
            // A connection's failure is one error however many calls it held; a reset
            // stream is one of its own.
            if r.stream.is_some() || self.failed.insert(r.conn) {
                s.on_error(kind);
            }
        }
    }

    /// The records counted.
    pub(crate) fn records(&self) -> u64 {
        self.records
    }

    /// The latest end of any record, in seconds since the run's start.
    pub(crate) fn last_end(&self) -> f64 {
        self.last_us as f64 / 1e6
    }

    /// The figures gathered.
    pub(crate) fn stats(&self) -> &Stats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stats::ErrorKind;

    fn reply(id: u64, conn: u64, send: u64, first: u64, end: u64, status: u64) -> Record {
        Record {
            id,
            conn,
            connect_us: Some(0),
            connected_us: Some(100),
            send_us: Some(send),
            written_us: Some(send + 1),
            first_byte_us: Some(first),
            end_us: end,
            status: Some(status),
            bytes_out: 70,
            bytes_in: 1_274,
            content_bytes: 1_024,
            ..Record::default()
        }
    }

    #[test]
    fn replies_requests_bytes_and_times_are_the_reports() {
        let mut t = Tally::default();
        t.add(&reply(0, 0, 200, 500, 700, 200));
        t.add(&reply(1, 0, 800, 1_800, 1_810, 404));
        t.add(&reply(2, 1, 300, 600, 600, 302));
        let s = t.stats();
        assert_eq!(s.connections, 2);
        assert_eq!(s.requests, 3);
        assert_eq!(s.request_bytes, 210);
        assert_eq!(s.replies_by_class[2..5], [1, 1, 1]);
        assert_eq!(s.status_200_302, [1, 1]);
        assert_eq!(s.response_sum_us, 300 + 1_000 + 300);
        assert_eq!(s.transfer_sum_us, 200 + 10);
        assert_eq!(s.reply_header_bytes, 3 * 250);
        assert_eq!(s.reply_content_bytes, 3 * 1_024);
        assert_eq!(s.hist.connect.len(), 2);
        assert_eq!(t.records(), 3);
        assert_eq!(t.last_end(), 1_810e-6);
    }

    #[test]
    fn a_failed_connection_is_one_error_a_reset_stream_one_each() {
        let mut t = Tally::default();
        for id in 0..3 {
            t.add(&Record {
                id,
                conn: 5,
                connect_us: Some(0),
                end: End::Failed(ErrorKind::ConnReset),
                ..Record::default()
            });
        }
        for id in 3..5 {
            t.add(&Record {
                id,
                conn: 6,
                stream: Some(2 * id + 1),
                end: End::Failed(ErrorKind::Other),
                ..Record::default()
            });
        }
        t.add(&Record {
            id: 9,
            end: End::Unsent,
            ..Record::default()
        });
        let s = t.stats();
        assert_eq!(s.errors[ErrorKind::ConnReset.index()], 1);
        assert_eq!(s.errors[ErrorKind::Other.index()], 2);
        // The unsent call had no connection; the failed ones never connected.
        assert_eq!(s.connections, 2);
        assert_eq!(s.hist.connect.len(), 0);
        assert_eq!(s.requests, 0);
    }

    #[test]
    fn connection_numbers_far_apart_are_each_counted_once() {
        let mut bits = Bits::default();
        for n in [0, 63, 64, 1_000_003, 63, 1_000_003] {
            bits.insert(n);
        }
        assert!(!bits.insert(1_000_003));
        assert!(bits.insert(1_000_004));
        assert_eq!(bits.0.iter().map(|w| w.count_ones()).sum::<u32>(), 5);
    }
}
