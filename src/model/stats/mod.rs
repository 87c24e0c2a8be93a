//! `Stats`: everything a run measures, fed by engine events, mergeable exactly, with
//! ONE schema.
//!
//! Owns counters, sums and latency histograms (µs, `hdrhistogram`), the 1-ms lifetime
//! bins behind httperf's median, reply-rate samples, and the errno → error-counter
//! classification. Does not format anything (see `report`) and does not read clocks:
//! callers pass durations. One `Stats` per engine; `merge` adds another engine's (or
//! another run's, for `rshperf merge`).
//!
//! One definition per field: the serde derives are the `raw` and `histograms` members
//! of the `--json` document and what `rshperf merge` reads back (`serial.rs` for the
//! fields JSON cannot carry as they are), and `merge` lists every field once with its
//! rule in `merge_fields!` (`merge.rs`), which the compiler checks is complete. Unknown
//! members are refused when reading, so a document is never merged with data dropped.
//! A new group of measurements is a struct of its own in its own file here, with the
//! same derives and a `Merge` impl, and one field (plus one line in `new` and `merge`).

pub(crate) mod ab;
mod check;
pub(crate) mod client;
pub(crate) mod ends;
pub(crate) mod h2;
pub(crate) mod h3;
pub(crate) mod merge;
pub(crate) mod pacing;
pub(crate) mod pool;
pub(crate) mod quantile;
pub(crate) mod serial;
pub(crate) mod stream;
pub(crate) mod timeline;
pub(crate) mod windows;

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use merge::merge_fields;
pub(crate) use merge::{Merge, MergeError};
pub(crate) use quantile::quantile_ms;

use client::ClientCpu;
use timeline::{Timeline, Totals};
use windows::Windows;

/// Per-connection failure classes, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// The client's own watchdog (`--timeout`) fired.
    ClientTimo,
    /// The kernel reported ETIMEDOUT.
    SocketTimo,
    /// ECONNREFUSED.
    ConnRefused,
    /// ECONNRESET, EPIPE, or EOF where a reply was still expected.
    ConnReset,
    /// Out of descriptors (EMFILE, EINVAL on Linux) or a full connection table.
    FdUnavail,
    /// No local address/port available (EADDRNOTAVAIL, exhausted `--hog` ports).
    AddrUnavail,
    /// ENFILE: the system file table is full.
    FtabFull,
    /// Anything else, including unparsable replies and surplus bytes.
    Other,
}

/// Number of `ErrorKind` variants.
pub(crate) const ERROR_KINDS: usize = 8;

impl ErrorKind {
    /// Every kind, in report order: the one list of error counters. Every output
    /// (classic text, JSON, CSV, timeline, `--fail-on`, Prometheus, HTML) names the
    /// counters from here.
    pub(crate) const ALL: [ErrorKind; ERROR_KINDS] = [
        ErrorKind::ClientTimo,
        ErrorKind::SocketTimo,
        ErrorKind::ConnRefused,
        ErrorKind::ConnReset,
        ErrorKind::FdUnavail,
        ErrorKind::AddrUnavail,
        ErrorKind::FtabFull,
        ErrorKind::Other,
    ];

    /// The name the classic report prints (`client-timo`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            ErrorKind::ClientTimo => "client-timo",
            ErrorKind::SocketTimo => "socket-timo",
            ErrorKind::ConnRefused => "connrefused",
            ErrorKind::ConnReset => "connreset",
            ErrorKind::FdUnavail => "fd-unavail",
            ErrorKind::AddrUnavail => "addrunavail",
            ErrorKind::FtabFull => "ftab-full",
            ErrorKind::Other => "other",
        }
    }

    /// The schema key (`client_timo`): `name` with `_` for `-`. JSON members, CSV
    /// and timeline columns, `--fail-on` metrics and Prometheus labels use it.
    pub(crate) fn key(self) -> String {
        self.name().replace('-', "_")
    }

    /// Classifies an errno from a failed socket operation (docs/compatibility.md §3.1,
    /// with EADDRNOTAVAIL as `addrunavail`: compatibility.md, bug 8).
    pub(crate) fn from_errno(errno: i32) -> ErrorKind {
        match errno {
            libc::EMFILE | libc::EINVAL => ErrorKind::FdUnavail,
            libc::ENFILE => ErrorKind::FtabFull,
            libc::ECONNREFUSED => ErrorKind::ConnRefused,
            libc::ETIMEDOUT => ErrorKind::SocketTimo,
            libc::ECONNRESET | libc::EPIPE => ErrorKind::ConnReset,
            libc::EADDRNOTAVAIL => ErrorKind::AddrUnavail,
            _ => ErrorKind::Other,
        }
    }

    /// Whether `errno` from a failed `connect` says there is no route to the server:
    /// no route to its network or host, or a blackhole route (EINVAL).
    pub(crate) fn is_unroutable(errno: i32) -> bool {
        matches!(errno, libc::ENETUNREACH | libc::EHOSTUNREACH | libc::EINVAL)
    }

    /// Index into `Stats::errors`.
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Number of 1-ms lifetime bins (0–100 s), as httperf.
pub(crate) const LIFETIME_BINS: usize = 100_000;

/// Lowest value the latency histograms tell apart, µs.
pub(crate) const HIST_LOW_US: u64 = 1;

/// Highest value tracked by the latency histograms, µs (1 hour).
pub(crate) const HIST_MAX_US: u64 = 3_600_000_000;

/// Significant decimal digits of the latency histograms.
pub(crate) const HIST_SIGFIG: u8 = 3;

/// Latency histograms in microseconds (each a base64 HdrHistogram V2 string in JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Histograms {
    /// Connect time (connecting → connected), successful connects.
    #[serde(with = "serial::histogram")]
    pub connect: Histogram<u64>,
    /// Response time (send start → final status line).
    #[serde(with = "serial::histogram")]
    pub response: Histogram<u64>,
    /// Transfer time (status line → reply complete).
    #[serde(with = "serial::histogram")]
    pub transfer: Histogram<u64>,
    /// Lifetime of connections with at least one reply.
    #[serde(with = "serial::histogram")]
    pub lifetime: Histogram<u64>,
    /// Arrival lateness: actual connect start minus scheduled time.
    #[serde(with = "serial::histogram")]
    pub lateness: Histogram<u64>,
}

/// An empty latency histogram with rshperf's bounds (every histogram of a `Stats` has
/// them, so adding two never fails).
pub(crate) fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(HIST_LOW_US, HIST_MAX_US, HIST_SIGFIG)
        .expect("static histogram bounds are valid")
}

impl Histograms {
    /// The histograms' names (the members of `histograms` and `percentiles`, the
    /// words of the percentile lines), in report order.
    pub(crate) const NAMES: [&'static str; 5] =
        ["connect", "response", "transfer", "lifetime", "lateness"];

    /// The histograms with their `NAMES`, in report order.
    pub(crate) fn named(&self) -> [(&'static str, &Histogram<u64>); 5] {
        let [c, r, t, li, la] = Self::NAMES;
        [
            (c, &self.connect),
            (r, &self.response),
            (t, &self.transfer),
            (li, &self.lifetime),
            (la, &self.lateness),
        ]
    }

    fn new() -> Self {
        Histograms {
            connect: new_histogram(),
            response: new_histogram(),
            transfer: new_histogram(),
            lifetime: new_histogram(),
            lateness: new_histogram(),
        }
    }
}

impl Merge for Histograms {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        merge_fields!(Histograms, self, o;
            connect: sum,
            response: sum,
            transfer: sum,
            lifetime: sum,
            lateness: sum,
        )
    }
}

/// Per-server figures of a `--servers` run (lb-style per-server report).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerStats {
    /// Connections that reached the connecting stage.
    pub connections: u64,
    /// Requests completely written.
    pub requests: u64,
    /// Completed replies by status class.
    pub(crate) replies_by_class: [u64; 10],
    /// Error counters, indexed by `ErrorKind::index`.
    pub(crate) errors: [u64; ERROR_KINDS],
    /// Response times (send start → status line), µs.
    #[serde(with = "serial::histogram")]
    pub response: Histogram<u64>,
    /// Sum of response times, µs.
    pub(crate) response_sum_us: u64,
}

impl Default for ServerStats {
    fn default() -> Self {
        ServerStats {
            connections: 0,
            requests: 0,
            replies_by_class: [0; 10],
            errors: [0; ERROR_KINDS],
            response: new_histogram(),
            response_sum_us: 0,
        }
    }
}

impl ServerStats {
    /// Completed replies with a status class 1–5.
    pub fn replies(&self) -> u64 {
        self.replies_by_class[1..=5].iter().sum()
    }
}

impl Merge for ServerStats {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        merge_fields!(ServerStats, self, o;
            connections: sum,
            requests: sum,
            replies_by_class: sum,
            errors: sum,
            response: sum,
            response_sum_us: sum,
        )
    }
}

/// One reply-rate sample: replies completed in the interval and its length.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RateSample {
    /// Replies completed during the interval.
    pub(crate) replies: u64,
    /// Completed (successful) sessions during the interval.
    pub(crate) sessions: u64,
    /// Interval length, seconds.
    pub(crate) seconds: f64,
}

/// Samples of several engines or runs are added interval by interval; the interval is
/// the same in all of them (the sampling clock is shared).
impl Merge for RateSample {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        merge_fields!(RateSample, self, o;
            replies: sum,
            sessions: sum,
            seconds: keep,
        )
    }
}

/// Everything measured by one engine (or merged from several). Serialized, it is the
/// `--json` document's `raw` member, except `hist`, which is its top-level
/// `histograms` member (docs/json.md §2.4–2.5).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stats {
    /// Connections that reached the connecting stage.
    pub(crate) connections: u64,
    /// Most connection objects alive at once in the whole process (the engines of one
    /// run share the count: `tally`).
    pub(crate) max_concurrent: u64,
    /// Most connects started in one event-loop iteration (see `note_connect_burst`);
    /// with several engines, the longest burst of any one of them.
    pub(crate) max_burst: u64,
    /// Successful connects ("connected" events).
    pub(crate) connects: u64,
    /// Sum of connect times, µs.
    pub(crate) connect_sum_us: u64,
    /// Requests completely written.
    pub(crate) requests: u64,
    /// Bytes of those requests.
    pub(crate) request_bytes: u64,
    /// Completed replies by status class (index = status / 100, 0..=9).
    pub(crate) replies_by_class: [u64; 10],
    /// Completed replies with status 200 and 302 (`--periodic-stats`).
    pub status_200_302: [u64; 2],
    /// Final status lines seen (response-time events).
    pub(crate) responses: u64,
    /// Sum of response times, µs.
    pub(crate) response_sum_us: u64,
    /// Sum of transfer times over completed replies, µs.
    pub(crate) transfer_sum_us: u64,
    /// Header bytes over completed replies.
    pub(crate) reply_header_bytes: u64,
    /// Content bytes over completed replies.
    pub(crate) reply_content_bytes: u64,
    /// Footer bytes over completed replies.
    pub(crate) reply_footer_bytes: u64,
    /// Connections with at least one reply, at their end.
    pub(crate) lifetimes: u64,
    /// Sum of their lifetimes, µs.
    pub(crate) lifetime_sum_us: u64,
    /// Sum of squared lifetimes, µs².
    #[serde(with = "serial::decimal_u128")]
    pub(crate) lifetime_sumsq_us: u128,
    /// Shortest lifetime, µs (u64::MAX when none).
    #[serde(with = "serial::max_is_null")]
    pub(crate) lifetime_min_us: u64,
    /// Longest lifetime, µs.
    pub(crate) lifetime_max_us: u64,
    /// Lifetimes per 1-ms bin; lifetimes of 100 s and more are in the last element.
    #[serde(with = "serial::sparse_bins")]
    pub lifetime_bins: Vec<u64>,
    /// Error counters, indexed by `ErrorKind::index`.
    pub(crate) errors: [u64; ERROR_KINDS],
    /// Reply-rate samples (every 5 s, the first offset by client id).
    pub(crate) rate_samples: Vec<RateSample>,
    /// Connects that failed for want of a route to the server (ENETUNREACH,
    /// EHOSTUNREACH, or EINVAL from `connect`: a blackhole route), counted under the
    /// error their errno maps to as well (absent from documents written before it).
    #[serde(default)]
    pub(crate) unroutable: u64,
    /// Connections whose `--timeout` watchdog fired before they were established
    /// (the connect, or the TLS or QUIC handshake, went unanswered), counted as
    /// `client-timo` as well (absent from documents written before it).
    #[serde(default)]
    pub(crate) connect_timeouts: u64,
    /// TLS connections whose server certificate `--ssl-verify` rejected (an unknown
    /// issuer, another name, expired), counted as `other` as well (absent from
    /// documents written before it).
    #[serde(default)]
    pub(crate) cert_rejected: u64,
    /// TLS handshakes completed in full / resumed.
    pub tls_handshakes: [u64; 2],
    /// Sessions that completed successfully.
    pub sessions_ok: u64,
    /// Sessions that failed.
    pub sessions_failed: u64,
    /// "Connected" events on connections of successful sessions.
    pub(crate) session_connects_ok: u64,
    /// Sum of lifetimes of successful sessions, µs.
    pub(crate) session_life_ok_us: u64,
    /// Sum of lifetimes of failed sessions, µs.
    pub(crate) session_life_failed_us: u64,
    /// Sessions (successful and failed) by number of completed replies.
    pub session_lengths: Vec<u64>,
    /// Per-server figures (`--servers` with more than one server; else empty).
    pub servers: Vec<ServerStats>,
    /// Latency histograms.
    /// What happened in each second (`--timeline`, the JSON `timeline`).
    #[serde(default)]
    pub(crate) timeline: Timeline,
    /// The run in short windows (`rshperf compare`'s batches; absent from documents
    /// written before them).
    #[serde(default)]
    pub(crate) windows: Windows,
    /// The engines' own CPU use (client-bound detection).
    #[serde(default)]
    pub(crate) client: ClientCpu,
    /// Connections still open when the run stopped (a signal, `--runtime`, the end of
    /// a `--call-rate` pool): neither ended well nor failed. `connections` =
    /// `ends.successful` + `ends.failed` + `abandoned`.
    #[serde(default)]
    pub(crate) abandoned: u64,
    /// Whether SIGINT or SIGTERM cut the run short.
    #[serde(default)]
    pub(crate) interrupted: bool,
    /// How the engines kept the schedule (overload policy, spinning).
    #[serde(default)]
    pub(crate) pacing: pacing::PacingStats,
    /// `rshperf ab` and `lb`: ab's per-server figures (absent from documents otherwise).
    #[serde(default, skip_serializing_if = "ab::AbStats::is_empty")]
    pub(crate) ab: ab::AbStats,
    /// Latency histograms (last: the document's `histograms` member is split off).
    #[serde(rename = "histograms")]
    pub hist: Histograms,
    /// HTTP/2 figures (all zero without `--http-version 2`; absent from documents
    /// written before HTTP/2).
    #[serde(default)]
    pub(crate) http2: h2::H2Stats,
    /// HTTP/3 figures (all zero without `--http-version 3`; absent from documents
    /// written before HTTP/3).
    #[serde(default)]
    pub(crate) http3: h3::H3Stats,
    /// `--call-rate` figures (all zero otherwise; absent from documents written
    /// before `--call-rate`).
    #[serde(default)]
    pub(crate) pool: pool::PoolStats,
    /// `--stream` figures (absent from documents of runs without `--stream`).
    #[serde(default, skip_serializing_if = "stream::StreamStats::is_empty")]
    pub(crate) stream: stream::StreamStats,
    /// How each connection ended (None in documents written before these counters:
    /// `connections.successful` is then httperf's population, `lifetimes`).
    #[serde(default)]
    pub(crate) ends: Option<ends::Ends>,
}

/// Records `v` µs, clamped into the histograms' range: a value beyond an hour counts as
/// an hour rather than being dropped (the histogram's count stays the event count).
pub(crate) fn record(h: &mut Histogram<u64>, v: u64) {
    h.record(v.clamp(HIST_LOW_US, HIST_MAX_US))
        .expect("a value clamped into the bounds the histogram was made with");
}

/// `d` in whole µs (saturating).
pub(crate) fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl Default for Stats {
    fn default() -> Self {
        Self::new()
    }
}

impl Stats {
    /// Empty statistics.
    pub(crate) fn new() -> Self {
        Stats {
            connections: 0,
            max_concurrent: 0,
            max_burst: 0,
            connects: 0,
            connect_sum_us: 0,
            requests: 0,
            request_bytes: 0,
            replies_by_class: [0; 10],
            status_200_302: [0; 2],
            responses: 0,
            response_sum_us: 0,
            transfer_sum_us: 0,
            reply_header_bytes: 0,
            reply_content_bytes: 0,
            reply_footer_bytes: 0,
            lifetimes: 0,
            lifetime_sum_us: 0,
            lifetime_sumsq_us: 0,
            lifetime_min_us: u64::MAX,
            lifetime_max_us: 0,
            lifetime_bins: vec![0; LIFETIME_BINS + 1],
            errors: [0; ERROR_KINDS],
            rate_samples: Vec::new(),
            unroutable: 0,
            connect_timeouts: 0,
            cert_rejected: 0,
            tls_handshakes: [0; 2],
            sessions_ok: 0,
            sessions_failed: 0,
            session_connects_ok: 0,
            session_life_ok_us: 0,
            session_life_failed_us: 0,
            session_lengths: Vec::new(),
            servers: Vec::new(),
            hist: Histograms::new(),
            timeline: Timeline::default(),
            windows: Windows::default(),
            client: ClientCpu::default(),
            abandoned: 0,
            interrupted: false,
            pacing: pacing::PacingStats::default(),
            ab: ab::AbStats::default(),
            http2: h2::H2Stats::default(),
            http3: h3::H3Stats::default(),
            pool: pool::PoolStats::default(),
            stream: stream::StreamStats::default(),
            ends: Some(ends::Ends::default()),
        }
    }

    /// Ends the timeline's current second (`open` connections are open, `at_s`
    /// seconds since the start); called by the engine once a second and at its end.
    /// Returns the second's interval (`Timeline::roll`).
    pub(crate) fn roll_timeline(&mut self, open: u64, at_s: f64) -> timeline::Interval {
        let now = self.totals();
        self.timeline.roll(now, open, at_s)
    }

    /// The running totals the timeline and the windows take their deltas from.
    fn totals(&self) -> Totals {
        let mut replies = [0; 5];
        replies.copy_from_slice(&self.replies_by_class[1..=5]);
        Totals {
            connections: self.connections,
            replies,
            errors: self.errors,
        }
    }

    /// Ends a tick of the windows (`windows::TICK_MS`) at `at_s` seconds since the
    /// start, or with `last` the run's last window; called by the engine.
    pub(crate) fn roll_window(&mut self, at_s: f64, last: bool) {
        let now = self.totals();
        self.windows.tick(now, at_s, last);
    }

    /// A connection reached the connecting stage.
    pub(crate) fn on_connecting(&mut self) {
        self.connections += 1;
    }

    /// A connection became established after `d` (TLS: handshake done).
    pub(crate) fn on_connected(&mut self, d: Duration) {
        let v = us(d);
        self.connects += 1;
        self.connect_sum_us += v;
        record(&mut self.hist.connect, v);
        self.windows.on_connect(v);
    }

    /// An arrival started `late` after its scheduled time.
    pub(crate) fn on_lateness(&mut self, late: Duration) {
        record(&mut self.hist.lateness, us(late));
        self.timeline.on_lateness(us(late));
        self.windows.on_lateness(us(late));
    }

    /// A request of `bytes` bytes was written (its head, then the rest).
    #[cfg(test)]
    pub(crate) fn on_request_sent(&mut self, bytes: u64) {
        self.on_request_started();
        self.on_request_bytes(bytes);
    }

    /// A call's header block was written: it counts as a request from now on, whether
    /// or not its body is ever finished.
    pub(crate) fn on_request_started(&mut self) {
        self.requests += 1;
    }

    /// `bytes` more request bytes were completely written.
    pub(crate) fn on_request_bytes(&mut self, bytes: u64) {
        self.request_bytes += bytes;
    }

    /// The final status line of a reply arrived `d` after its send start.
    pub(crate) fn on_response(&mut self, d: Duration) {
        let v = us(d);
        self.responses += 1;
        self.response_sum_us += v;
        record(&mut self.hist.response, v);
        self.timeline.on_response(v);
        self.windows.on_response(v);
    }

    /// A reply completed; `transfer` = status line → completion.
    pub(crate) fn on_reply(
        &mut self,
        status: u16,
        header: u64,
        content: u64,
        footer: u64,
        transfer: Duration,
    ) {
        let class = usize::from(status / 100).min(9);
        self.replies_by_class[class] += 1;
        match status {
            200 => self.status_200_302[0] += 1,
            302 => self.status_200_302[1] += 1,
            _ => {}
        }
        self.reply_header_bytes += header;
        self.reply_content_bytes += content;
        self.reply_footer_bytes += footer;
        let v = us(transfer);
        self.transfer_sum_us += v;
        record(&mut self.hist.transfer, v);
    }

    /// A connection that completed at least one reply ended after `d`.
    pub(crate) fn on_lifetime(&mut self, d: Duration) {
        let v = us(d);
        self.lifetimes += 1;
        self.lifetime_sum_us += v;
        self.lifetime_sumsq_us += u128::from(v) * u128::from(v);
        self.lifetime_min_us = self.lifetime_min_us.min(v);
        self.lifetime_max_us = self.lifetime_max_us.max(v);
        let bin = usize::try_from(v / 1000)
            .unwrap_or(usize::MAX)
            .min(LIFETIME_BINS);
        self.lifetime_bins[bin] += 1;
        record(&mut self.hist.lifetime, v);
    }

    /// How the connections ended (a run always has the counters; a merged document
    /// of one written before them does not, and gets them back from here on).
    pub(crate) fn ends_mut(&mut self) -> &mut ends::Ends {
        self.ends.get_or_insert_with(ends::Ends::default)
    }

    /// Connections that ended without a failure; for a document written before the
    /// counters, httperf's population: the connections with a reply.
    pub(crate) fn successful(&self) -> u64 {
        self.ends.as_ref().map_or(self.lifetimes, |e| e.successful)
    }

    /// A connection failed (or timed out) with this classification.
    pub(crate) fn on_error(&mut self, kind: ErrorKind) {
        self.errors[kind.index()] += 1;
    }

    /// A TLS handshake completed, resumed or in full.
    pub(crate) fn on_tls_handshake(&mut self, resumed: bool) {
        self.tls_handshakes[usize::from(resumed)] += 1;
    }

    /// A session ended: `ok` (completed) or failed, after `life`, having had `connects`
    /// connected events and `replies` completed replies.
    pub(crate) fn on_session(&mut self, ok: bool, life: Duration, connects: u64, replies: u64) {
        if ok {
            self.sessions_ok += 1;
            self.session_connects_ok += connects;
            self.session_life_ok_us += us(life);
        } else {
            self.sessions_failed += 1;
            self.session_life_failed_us += us(life);
        }
        let k = usize::try_from(replies).unwrap_or(usize::MAX);
        if self.session_lengths.len() <= k {
            self.session_lengths.resize(k + 1, 0);
        }
        self.session_lengths[k] += 1;
    }

    /// Completed replies with a status class 1–5 (the report's `replies`).
    pub fn replies(&self) -> u64 {
        self.replies_by_class[1..=5].iter().sum()
    }

    /// All completed replies, whatever their class (reply-rate samples count these).
    pub(crate) fn all_replies(&self) -> u64 {
        self.replies_by_class.iter().sum()
    }

    /// Sum of all error counters.
    pub fn total_errors(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Checks that the totals the reports add up (replies of all classes, errors, bytes,
    /// sessions, bins, per-server figures) fit in 64 bits: true for anything measured,
    /// not for numbers read from a document anyone could write. `rshperf merge` calls it
    /// before printing, so no report arithmetic can overflow.
    pub(crate) fn check_totals(&self) -> Result<(), MergeError> {
        fn total<'a>(what: &str, v: impl IntoIterator<Item = &'a u64>) -> Result<(), MergeError> {
            v.into_iter()
                .try_fold(0u64, |t, &x| t.checked_add(x))
                .map(|_| ())
                .ok_or_else(|| MergeError::new("the total overflows 64 bits").within(what))
        }
        total("replies_by_class", &self.replies_by_class)?;
        total("errors", &self.errors)?;
        total(
            "sessions_ok + sessions_failed",
            [&self.sessions_ok, &self.sessions_failed],
        )?;
        total(
            "request_bytes + reply_header_bytes + reply_content_bytes + reply_footer_bytes",
            [
                &self.request_bytes,
                &self.reply_header_bytes,
                &self.reply_content_bytes,
                &self.reply_footer_bytes,
            ],
        )?;
        total("lifetime_bins", &self.lifetime_bins)?;
        total("session_lengths", &self.session_lengths)?;
        for (i, srv) in self.servers.iter().enumerate() {
            let at = |e: MergeError| e.within(&format!("[{i}]")).within("servers");
            total("replies_by_class", &srv.replies_by_class).map_err(at)?;
            total("errors", &srv.errors).map_err(at)?;
        }
        Ok(())
    }

    /// Adds another engine's (or run's) statistics: counters, bins and histograms
    /// summed, extremes combined, rate samples added interval by interval,
    /// `max_concurrent` summed (an upper bound: processes do not share their counts;
    /// the runner replaces the sum over its own engines with the exact peak of their
    /// shared count, and their rate samples with the clock's). Fails, naming the field, when a sum
    /// overflows or a histogram holds values out of range (both possible only with
    /// numbers read from a document); `self` is then partly merged.
    pub(crate) fn merge(&mut self, o: &Stats) -> Result<(), MergeError> {
        merge_fields!(Stats, self, o;
            connections: sum,
            max_concurrent: sum,
            max_burst: max,
            connects: sum,
            connect_sum_us: sum,
            requests: sum,
            request_bytes: sum,
            replies_by_class: sum,
            status_200_302: sum,
            responses: sum,
            response_sum_us: sum,
            transfer_sum_us: sum,
            reply_header_bytes: sum,
            reply_content_bytes: sum,
            reply_footer_bytes: sum,
            lifetimes: sum,
            lifetime_sum_us: sum,
            lifetime_sumsq_us: sum,
            lifetime_min_us: min,
            lifetime_max_us: max,
            lifetime_bins: sum,
            errors: sum,
            rate_samples: sum,
            unroutable: sum,
            connect_timeouts: sum,
            cert_rejected: sum,
            tls_handshakes: sum,
            sessions_ok: sum,
            sessions_failed: sum,
            session_connects_ok: sum,
            session_life_ok_us: sum,
            session_life_failed_us: sum,
            session_lengths: sum,
            servers: sum,
            hist: sum,
            timeline: sum,
            windows: sum,
            client: sum,
            abandoned: sum,
            interrupted: any,
            pacing: sum,
            ab: sum,
            http2: sum,
            http3: sum,
            pool: sum,
            stream: sum,
            ends: both,
        )
    }
}

#[cfg(test)]
pub(crate) mod tests;
