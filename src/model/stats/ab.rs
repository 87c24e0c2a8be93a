//! `AbStats`: what `rshperf ab` and `rshperf lb` report, per server, beyond the classic
//! statistics: ab's request counts and failure classes, byte totals, and the four
//! per-request times of ab's `Connection Times (ms)` table.
//!
//! Owns the counters, their exact merge and the order statistics at ab's resolution.
//! ab keeps every request's times and sorts them; here memory does not grow with the
//! number of requests: `AbTimes` keeps counts per rounded millisecond (ab prints
//! `(µs + 500) / 1000`) together with the smallest and largest µs value seen in each,
//! which is enough to give every figure ab prints exactly (see `AbTimes::median_ms`).
//! The percentile CSV (`-e`, µs precision) comes from an HdrHistogram of the total
//! times. Fed by the engine (`engine/event_loop/closed.rs`); formatted by `output/ab.rs`. One
//! field of `Stats` (`ab`), serde-derived and merged by `merge_fields!` like the rest.

use hdrhistogram::Histogram;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::merge::{merge_fields, Merge, MergeError};
use super::{new_histogram, record, serial};

/// Rounded-millisecond bins kept at most (10 minutes); longer times share the last
/// bin (their exact values still count in sum, min and max).
const MAX_BINS: usize = 600_001;

/// ab's rounding of µs to printed milliseconds (`ap_round_ms`).
pub(crate) fn round_ms(us: u64) -> u64 {
    us.saturating_add(500) / 1000
}

/// Why a request failed, in ab's classes (`Failed requests` and its breakdown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AbFailure {
    /// The connection failed before it was established (refused, unreachable,
    /// connect timeout, no descriptor or port, TLS handshake).
    Connect,
    /// The established connection failed while sending or receiving (reset, EOF in
    /// the middle of a reply).
    Receive,
    /// Anything else: no reply before the timeout, an unparsable reply.
    Exception,
}

/// The times of one request, µs, as ab measures them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CallTimes {
    /// Connect time (0 for later requests on a keep-alive connection).
    pub(crate) connect_us: u64,
    /// Connection (or keep-alive request) start to the reply's end.
    pub(crate) total_us: u64,
    /// Request written to the first byte of the reply.
    pub(crate) wait_us: u64,
}

/// One rounded millisecond: how many values, and the extremes as offsets from its
/// start (value = ms × 1000 − 500 + offset). Empty: `lo` above `hi`, so that merging
/// takes the other side's extremes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bin {
    n: u64,
    lo: u16,
    hi: u16,
}

const EMPTY: Bin = Bin {
    n: 0,
    lo: u16::MAX,
    hi: 0,
};

impl Merge for Bin {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        self.n.merge(&o.n)?;
        self.lo = self.lo.min(o.lo);
        self.hi = self.hi.max(o.hi);
        Ok(())
    }
}

/// Count, sum, sum of squares, extremes and rounded-millisecond bins of one time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AbTimes {
    /// Values recorded.
    pub(crate) n: u64,
    /// Their sum, µs.
    pub(crate) sum_us: u64,
    /// Sum of squares, µs².
    pub(crate) sumsq_us: u128,
    /// Smallest value, µs (`u64::MAX` when none).
    pub(crate) min_us: u64,
    /// Largest value, µs.
    pub(crate) max_us: u64,
    bins: Vec<Bin>,
}

impl Default for AbTimes {
    fn default() -> Self {
        AbTimes {
            n: 0,
            sum_us: 0,
            sumsq_us: 0,
            min_us: u64::MAX,
            max_us: 0,
            bins: Vec::new(),
        }
    }
}

impl Merge for AbTimes {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        merge_fields!(AbTimes, self, o;
            n: sum,
            sum_us: sum,
            sumsq_us: sum,
            min_us: min,
            max_us: max,
            bins: sum,
        )
    }
}

impl AbTimes {
    /// Records one value.
    pub(crate) fn record(&mut self, us: u64) {
        self.min_us = self.min_us.min(us);
        self.max_us = self.max_us.max(us);
        self.n += 1;
        self.sum_us = self.sum_us.saturating_add(us);
        self.sumsq_us = self
            .sumsq_us
            .saturating_add(u128::from(us) * u128::from(us));
        let k = usize::try_from(round_ms(us))
            .unwrap_or(usize::MAX)
            .min(MAX_BINS - 1);
        // Offsets of values beyond the last bin are clamped: it is the overflow bin.
        let off = u16::try_from((us.saturating_add(500) - 1000 * k as u64).min(999))
            .expect("an offset below 1000 fits in u16");
        if self.bins.len() <= k {
            self.bins.resize(k + 1, EMPTY);
        }
        let b = &mut self.bins[k];
        b.lo = b.lo.min(off);
        b.hi = b.hi.max(off);
        b.n += 1;
    }

    /// The smallest value, µs (0 when none).
    pub(crate) fn min(&self) -> u64 {
        if self.n == 0 {
            0
        } else {
            self.min_us
        }
    }

    /// ab's mean: the µs sum divided by the count (integer division), µs.
    pub(crate) fn mean_us(&self) -> u64 {
        self.sum_us.checked_div(self.n).unwrap_or(0)
    }

    /// ab's `[+/-sd]`, ms: the sample standard deviation around the integer mean
    /// (0 for fewer than two values).
    pub(crate) fn sd_ms(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let (n, m) = (i128::from(self.n), i128::from(self.mean_us()));
        let sum = i128::from(self.sum_us);
        let sumsq = i128::try_from(self.sumsq_us).unwrap_or(i128::MAX);
        let squares = (sumsq - 2 * m * sum + n * m * m).max(0);
        (squares as f64 / (n - 1) as f64).sqrt() / 1000.0
    }

    /// The bin of the value of rank `r` (0-based, ascending).
    fn bin_of_rank(&self, r: u64) -> (usize, Bin) {
        let mut seen = 0u64;
        for (k, b) in self.bins.iter().enumerate() {
            seen = seen.saturating_add(b.n);
            if r < seen {
                return (k, *b);
            }
        }
        (0, EMPTY)
    }

    /// The value of rank `r` printed by ab: in ms, rounded.
    pub(crate) fn rank_ms(&self, r: u64) -> u64 {
        self.bin_of_rank(r).0 as u64
    }

    /// ab's median, ms: for an odd count above one the mean of the values of ranks
    /// n/2 and n/2+1, else the value of rank n/2. Exact: two neighbouring ranks in
    /// one bin average into that bin; in different bins they are that bin's largest
    /// and the next one's smallest value, both kept.
    pub(crate) fn median_ms(&self) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let i = self.n / 2;
        let odd = self.n % 2 == 1;
        if self.n == 1 || !odd {
            return self.rank_ms(i);
        }
        let (ki, bi) = self.bin_of_rank(i);
        let (kj, bj) = self.bin_of_rank(i + 1);
        if ki == kj {
            return ki as u64;
        }
        let value = |k: usize, off: u16| (k as u64 * 1000 + u64::from(off)).saturating_sub(500);
        round_ms((value(ki, bi.hi) + value(kj, bj.lo)) / 2)
    }
}

/// The serialized form of `AbTimes`: only the bins that hold values, as
/// `[ms, count, lo, hi]`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AbTimesDoc {
    n: u64,
    sum_us: u64,
    #[serde(with = "serial::decimal_u128")]
    sumsq_us: u128,
    #[serde(with = "serial::max_is_null")]
    min_us: u64,
    max_us: u64,
    bins: Vec<[u64; 4]>,
}

impl Serialize for AbTimes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        AbTimesDoc {
            n: self.n,
            sum_us: self.sum_us,
            sumsq_us: self.sumsq_us,
            min_us: self.min_us,
            max_us: self.max_us,
            bins: self
                .bins
                .iter()
                .enumerate()
                .filter(|(_, b)| b.n > 0)
                .map(|(k, b)| [k as u64, b.n, u64::from(b.lo), u64::from(b.hi)])
                .collect(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for AbTimes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let doc = AbTimesDoc::deserialize(d)?;
        let mut t = AbTimes {
            n: doc.n,
            sum_us: doc.sum_us,
            sumsq_us: doc.sumsq_us,
            min_us: doc.min_us,
            max_us: doc.max_us,
            bins: Vec::new(),
        };
        for [k, n, lo, hi] in doc.bins {
            let k = usize::try_from(k)
                .ok()
                .filter(|k| *k < MAX_BINS)
                .ok_or_else(|| D::Error::custom(format!("ab bin {k} out of range")))?;
            let (lo, hi) = match (u16::try_from(lo), u16::try_from(hi)) {
                (Ok(lo), Ok(hi)) if lo <= hi && hi < 1000 => (lo, hi),
                _ => return Err(D::Error::custom("ab bin offsets out of range")),
            };
            if t.bins.len() <= k {
                t.bins.resize(k + 1, EMPTY);
            }
            t.bins[k] = Bin { n, lo, hi };
        }
        Ok(t)
    }
}

/// Failed requests by class (ab's `Connect`, `Receive`, `Length`, `Exceptions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AbFailed {
    /// Connection not established.
    pub(crate) connect: u64,
    /// Connection failed afterwards.
    pub(crate) receive: u64,
    /// Body length differs from the first reply's (counted always; `-l` hides it).
    pub(crate) length: u64,
    /// Timeouts and unparsable replies.
    pub(crate) exceptions: u64,
}

impl Merge for AbFailed {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        merge_fields!(AbFailed, self, o;
            connect: sum,
            receive: sum,
            length: sum,
            exceptions: sum,
        )
    }
}

/// Everything ab prints about one server.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AbServer {
    /// The `Server:` header of its first reply (up to the first blank, as ab).
    pub(crate) software: Option<String>,
    /// ab's `SSL/TLS Protocol:` value, from the first TLS connection.
    pub(crate) tls_protocol: Option<String>,
    /// ab's `Server Temp Key:` value.
    pub(crate) tls_temp_key: Option<String>,
    /// Body length of the first completed reply (ab's `Document Length`).
    pub(crate) doc_length: Option<u64>,
    /// Requests with a complete reply (`Complete requests`).
    pub(crate) complete: u64,
    /// Failed requests by class.
    pub(crate) failed: AbFailed,
    /// Complete replies with a status outside 2xx.
    pub(crate) non_2xx: u64,
    /// Complete replies after which the connection stayed open (`Keep-Alive requests`).
    pub(crate) keep_alive: u64,
    /// Reply bytes (header, body, trailers) of complete replies (`Total transferred`).
    pub(crate) bytes_read: u64,
    /// Body bytes of complete replies (`HTML transferred`).
    pub(crate) body_read: u64,
    /// Request bytes of complete requests (`Total body sent`).
    pub(crate) bytes_sent: u64,
    /// When its first request started, µs after the start of the run (`u64::MAX`
    /// before).
    #[serde(with = "serial::max_is_null")]
    pub(crate) first_start_us: u64,
    /// When its last request ended, µs after the start of the run.
    pub(crate) last_end_us: u64,
    /// Connect times.
    pub(crate) connect: AbTimes,
    /// Total minus connect time.
    pub(crate) processing: AbTimes,
    /// Request written to first reply byte.
    pub(crate) waiting: AbTimes,
    /// Start to end of each request.
    pub(crate) total: AbTimes,
    /// The total times again, µs, for the percentile CSV.
    #[serde(with = "serial::histogram")]
    pub(crate) total_hist: Histogram<u64>,
}

impl Default for AbServer {
    fn default() -> Self {
        AbServer {
            software: None,
            tls_protocol: None,
            tls_temp_key: None,
            doc_length: None,
            complete: 0,
            failed: AbFailed::default(),
            non_2xx: 0,
            keep_alive: 0,
            bytes_read: 0,
            body_read: 0,
            bytes_sent: 0,
            first_start_us: u64::MAX,
            last_end_us: 0,
            connect: AbTimes::default(),
            processing: AbTimes::default(),
            waiting: AbTimes::default(),
            total: AbTimes::default(),
            total_hist: new_histogram(),
        }
    }
}

/// A complete reply, as `AbServer::on_complete` needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Completed {
    /// Its times.
    pub(crate) times: CallTimes,
    /// Status code.
    pub(crate) status: u16,
    /// Header bytes.
    pub(crate) header_bytes: u64,
    /// Body bytes.
    pub(crate) body_bytes: u64,
    /// Trailer bytes (chunked).
    pub(crate) footer_bytes: u64,
    /// Request bytes.
    pub(crate) sent_bytes: u64,
    /// The connection stays open after it.
    pub(crate) keep_alive: bool,
    /// When it ended, µs after the start of the run.
    pub(crate) end_us: u64,
}

impl AbServer {
    /// A request completed.
    pub(crate) fn on_complete(&mut self, c: &Completed) {
        self.complete += 1;
        match self.doc_length {
            None => self.doc_length = Some(c.body_bytes),
            Some(len) if len != c.body_bytes => self.failed.length += 1,
            Some(_) => {}
        }
        if c.status / 100 != 2 {
            self.non_2xx += 1;
        }
        if c.keep_alive {
            self.keep_alive += 1;
        }
        self.bytes_read += c.header_bytes + c.body_bytes + c.footer_bytes;
        self.body_read += c.body_bytes;
        self.bytes_sent += c.sent_bytes;
        self.last_end_us = self.last_end_us.max(c.end_us);
        let t = &c.times;
        self.connect.record(t.connect_us);
        self.processing
            .record(t.total_us.saturating_sub(t.connect_us));
        self.waiting.record(t.wait_us);
        self.total.record(t.total_us);
        record(&mut self.total_hist, t.total_us);
    }

    /// A request (a connection) started at `at_us`.
    pub(crate) fn on_start(&mut self, at_us: u64) {
        self.first_start_us = self.first_start_us.min(at_us);
    }

    /// The time ab reports (`Time taken for tests`), seconds: from the first request's
    /// start to the last one's end, or to `end_us` when given (a run cut short).
    pub(crate) fn seconds(&self, end_us: Option<u64>) -> f64 {
        let start = if self.first_start_us == u64::MAX {
            0
        } else {
            self.first_start_us
        };
        end_us.unwrap_or(self.last_end_us).saturating_sub(start) as f64 / 1e6
    }

    /// `n` requests failed with `why`, the last at `end_us`.
    pub(crate) fn on_failure(&mut self, why: AbFailure, n: u64, end_us: u64) {
        match why {
            AbFailure::Connect => self.failed.connect += n,
            AbFailure::Receive => self.failed.receive += n,
            AbFailure::Exception => self.failed.exceptions += n,
        }
        self.last_end_us = self.last_end_us.max(end_us);
    }

    /// Failed requests: every class, Length ones only when lengths are checked.
    pub(crate) fn failed_total(&self, check_length: bool) -> u64 {
        let f = &self.failed;
        f.connect + f.receive + f.exceptions + if check_length { f.length } else { 0 }
    }

    /// The total time of rank `r` (0-based), µs, from the histogram (µs precision up
    /// to 2 ms, 0.1 % above); the smallest and largest are exact.
    pub(crate) fn total_rank_us(&self, r: u64) -> u64 {
        let n = self.total.n;
        if n == 0 {
            return 0;
        }
        if r == 0 {
            return self.total.min();
        }
        if r + 1 >= n {
            return self.total.max_us;
        }
        let v = self
            .total_hist
            .value_at_quantile((r as f64 + 0.5) / n as f64);
        v.clamp(self.total.min(), self.total.max_us)
    }
}

impl Merge for AbServer {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        merge_fields!(AbServer, self, o;
            software: first,
            tls_protocol: first,
            tls_temp_key: first,
            doc_length: first,
            complete: sum,
            failed: sum,
            non_2xx: sum,
            keep_alive: sum,
            bytes_read: sum,
            body_read: sum,
            bytes_sent: sum,
            first_start_us: min,
            last_end_us: max,
            connect: sum,
            processing: sum,
            waiting: sum,
            total: sum,
            total_hist: sum,
        )
    }
}

/// ab's figures per server (indexed like the run's targets); empty unless an ab or
/// lb run recorded them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AbStats {
    /// One entry per target.
    pub(crate) servers: Vec<AbServer>,
}

/// Server by server. Length failures were counted by each engine against its own
/// first reply (ab and lb run one engine); the first known server name is kept.
impl Merge for AbStats {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        merge_fields!(AbStats, self, o; servers: sum)
    }
}

impl AbStats {
    /// The figures of target `i` (created on first use).
    pub(crate) fn server(&mut self, i: usize) -> &mut AbServer {
        if self.servers.len() <= i {
            self.servers.resize_with(i + 1, AbServer::default);
        }
        &mut self.servers[i]
    }

    /// Whether nothing was recorded (a classic run).
    pub(crate) fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }
}

#[cfg(test)]
#[path = "ab_tests.rs"]
mod tests;
