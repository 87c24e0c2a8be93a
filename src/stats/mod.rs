//! `Stats`: everything a run measures, fed by engine events, mergeable exactly.
//!
//! Owns counters, sums and latency histograms (µs, `hdrhistogram`), the 1-ms lifetime
//! bins behind httperf's median, reply-rate samples, and the errno → error-counter
//! classification. Does not format anything (see `report`) and does not read clocks:
//! callers pass durations. One `Stats` per engine; `merge` adds another engine's.

pub mod h2;

use std::time::Duration;

use hdrhistogram::Histogram;

/// Per-connection failure classes, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
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
pub const ERROR_KINDS: usize = 8;

/// Error counter names as the report prints them, in `ErrorKind` order.
pub const ERROR_NAMES: [&str; ERROR_KINDS] = [
    "client-timo",
    "socket-timo",
    "connrefused",
    "connreset",
    "fd-unavail",
    "addrunavail",
    "ftab-full",
    "other",
];

/// The same names as JSON keys (`_` for `-`), in `ErrorKind` order.
pub const ERROR_KEYS: [&str; ERROR_KINDS] = [
    "client_timo",
    "socket_timo",
    "connrefused",
    "connreset",
    "fd_unavail",
    "addrunavail",
    "ftab_full",
    "other",
];

impl ErrorKind {
    /// Classifies an errno from a failed socket operation (reference §3.1, with
    /// EADDRNOTAVAIL as `addrunavail`).
    pub fn from_errno(errno: i32) -> ErrorKind {
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

    /// Index into `Stats::errors`.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Number of 1-ms lifetime bins (0–100 s), as httperf.
pub const LIFETIME_BINS: usize = 100_000;

/// Highest value tracked by the latency histograms, µs (1 hour).
const HIST_MAX_US: u64 = 3_600_000_000;

/// Latency histograms in microseconds.
#[derive(Debug, Clone)]
pub struct Histograms {
    /// Connect time (connecting → connected), successful connects.
    pub connect: Histogram<u64>,
    /// Response time (send start → final status line).
    pub response: Histogram<u64>,
    /// Transfer time (status line → reply complete).
    pub transfer: Histogram<u64>,
    /// Lifetime of connections with at least one reply.
    pub lifetime: Histogram<u64>,
    /// Arrival lateness: actual connect start minus scheduled time.
    pub lateness: Histogram<u64>,
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_US, 3).expect("static histogram bounds are valid")
}

impl Histograms {
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

/// Per-server figures of a `--servers` run (lb-style per-server report).
#[derive(Debug, Clone)]
pub struct ServerStats {
    /// Connections that reached the connecting stage.
    pub connections: u64,
    /// Requests completely written.
    pub requests: u64,
    /// Completed replies by status class.
    pub replies_by_class: [u64; 10],
    /// Error counters, indexed by `ErrorKind::index`.
    pub errors: [u64; ERROR_KINDS],
    /// Response times (send start → status line), µs.
    pub response: Histogram<u64>,
    /// Sum of response times, µs.
    pub response_sum_us: u64,
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

    fn merge(&mut self, o: &ServerStats) {
        self.connections += o.connections;
        self.requests += o.requests;
        for (a, b) in self
            .replies_by_class
            .iter_mut()
            .zip(o.replies_by_class.iter())
        {
            *a += b;
        }
        for (a, b) in self.errors.iter_mut().zip(o.errors.iter()) {
            *a += b;
        }
        let _ = self.response.add(&o.response);
        self.response_sum_us += o.response_sum_us;
    }
}

/// One reply-rate sample: replies completed in the interval and its length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateSample {
    /// Replies completed during the interval.
    pub replies: u64,
    /// Completed (successful) sessions during the interval.
    pub sessions: u64,
    /// Interval length, seconds.
    pub seconds: f64,
}

/// Everything measured by one engine (or merged from several).
#[derive(Debug, Clone)]
pub struct Stats {
    /// Connections that reached the connecting stage.
    pub connections: u64,
    /// Most connection objects alive at once.
    pub max_concurrent: u64,
    /// Most connects started in one event-loop iteration (see `note_connect_burst`).
    pub max_burst: u64,
    /// Successful connects ("connected" events).
    pub connects: u64,
    /// Sum of connect times, µs.
    pub connect_sum_us: u64,
    /// Requests completely written.
    pub requests: u64,
    /// Bytes of those requests.
    pub request_bytes: u64,
    /// Completed replies by status class (index = status / 100, 0..=9).
    pub replies_by_class: [u64; 10],
    /// Completed replies with status 200 and 302 (`--periodic-stats`).
    pub status_200_302: [u64; 2],
    /// Final status lines seen (response-time events).
    pub responses: u64,
    /// Sum of response times, µs.
    pub response_sum_us: u64,
    /// Sum of transfer times over completed replies, µs.
    pub transfer_sum_us: u64,
    /// Header bytes over completed replies.
    pub reply_header_bytes: u64,
    /// Content bytes over completed replies.
    pub reply_content_bytes: u64,
    /// Footer bytes over completed replies.
    pub reply_footer_bytes: u64,
    /// Connections with at least one reply, at their end.
    pub lifetimes: u64,
    /// Sum of their lifetimes, µs.
    pub lifetime_sum_us: u64,
    /// Sum of squared lifetimes, µs².
    pub lifetime_sumsq_us: u128,
    /// Shortest lifetime, µs (u64::MAX when none).
    pub lifetime_min_us: u64,
    /// Longest lifetime, µs.
    pub lifetime_max_us: u64,
    /// Lifetimes per 1-ms bin; lifetimes of 100 s and more are in the last element.
    pub lifetime_bins: Vec<u64>,
    /// Error counters, indexed by `ErrorKind::index`.
    pub errors: [u64; ERROR_KINDS],
    /// Reply-rate samples (every 5 s, the first offset by client id).
    pub rate_samples: Vec<RateSample>,
    /// TLS handshakes completed in full / resumed.
    pub tls_handshakes: [u64; 2],
    /// Sessions that completed successfully.
    pub sessions_ok: u64,
    /// Sessions that failed.
    pub sessions_failed: u64,
    /// "Connected" events on connections of successful sessions.
    pub session_connects_ok: u64,
    /// Sum of lifetimes of successful sessions, µs.
    pub session_life_ok_us: u64,
    /// Sum of lifetimes of failed sessions, µs.
    pub session_life_failed_us: u64,
    /// Sessions (successful and failed) by number of completed replies.
    pub session_lengths: Vec<u64>,
    /// Per-server figures (`--servers` with more than one server; else empty).
    pub servers: Vec<ServerStats>,
    /// Latency histograms.
    pub hist: Histograms,
    /// HTTP/2 figures (all zero without `--http-version 2`).
    pub http2: h2::H2Stats,
}

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl Default for Stats {
    fn default() -> Self {
        Self::new()
    }
}

impl Stats {
    /// Empty statistics.
    pub fn new() -> Self {
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
            tls_handshakes: [0; 2],
            sessions_ok: 0,
            sessions_failed: 0,
            session_connects_ok: 0,
            session_life_ok_us: 0,
            session_life_failed_us: 0,
            session_lengths: Vec::new(),
            servers: Vec::new(),
            hist: Histograms::new(),
            http2: h2::H2Stats::default(),
        }
    }

    /// A connection reached the connecting stage.
    pub fn on_connecting(&mut self) {
        self.connections += 1;
    }

    /// A connection became established after `d` (TLS: handshake done).
    pub fn on_connected(&mut self, d: Duration) {
        let v = us(d);
        self.connects += 1;
        self.connect_sum_us += v;
        let _ = self.hist.connect.record(v.max(1));
    }

    /// An arrival started `late` after its scheduled time.
    pub fn on_lateness(&mut self, late: Duration) {
        let _ = self.hist.lateness.record(us(late).max(1));
    }

    /// A request of `bytes` bytes was completely written.
    pub fn on_request_sent(&mut self, bytes: u64) {
        self.requests += 1;
        self.request_bytes += bytes;
    }

    /// The final status line of a reply arrived `d` after its send start.
    pub fn on_response(&mut self, d: Duration) {
        let v = us(d);
        self.responses += 1;
        self.response_sum_us += v;
        let _ = self.hist.response.record(v.max(1));
    }

    /// A reply completed; `transfer` = status line → completion.
    pub fn on_reply(
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
        let _ = self.hist.transfer.record(v.max(1));
    }

    /// A connection that completed at least one reply ended after `d`.
    pub fn on_lifetime(&mut self, d: Duration) {
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
        let _ = self.hist.lifetime.record(v.max(1));
    }

    /// A connection failed (or timed out) with this classification.
    pub fn on_error(&mut self, kind: ErrorKind) {
        self.errors[kind.index()] += 1;
    }

    /// A TLS handshake completed, resumed or in full.
    pub fn on_tls_handshake(&mut self, resumed: bool) {
        self.tls_handshakes[usize::from(resumed)] += 1;
    }

    /// A session ended: `ok` (completed) or failed, after `life`, having had `connects`
    /// connected events and `replies` completed replies.
    pub fn on_session(&mut self, ok: bool, life: Duration, connects: u64, replies: u64) {
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
    pub fn all_replies(&self) -> u64 {
        self.replies_by_class.iter().sum()
    }

    /// Sum of all error counters.
    pub fn total_errors(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Adds another engine's statistics: counters and histograms summed, extremes
    /// combined, rate samples added interval by interval.
    pub fn merge(&mut self, o: &Stats) {
        self.connections += o.connections;
        self.max_concurrent += o.max_concurrent;
        self.max_burst = self.max_burst.max(o.max_burst);
        self.connects += o.connects;
        self.connect_sum_us += o.connect_sum_us;
        self.requests += o.requests;
        self.request_bytes += o.request_bytes;
        for (a, b) in self
            .replies_by_class
            .iter_mut()
            .zip(o.replies_by_class.iter())
        {
            *a += b;
        }
        self.status_200_302[0] += o.status_200_302[0];
        self.status_200_302[1] += o.status_200_302[1];
        self.responses += o.responses;
        self.response_sum_us += o.response_sum_us;
        self.transfer_sum_us += o.transfer_sum_us;
        self.reply_header_bytes += o.reply_header_bytes;
        self.reply_content_bytes += o.reply_content_bytes;
        self.reply_footer_bytes += o.reply_footer_bytes;
        self.lifetimes += o.lifetimes;
        self.lifetime_sum_us += o.lifetime_sum_us;
        self.lifetime_sumsq_us += o.lifetime_sumsq_us;
        self.lifetime_min_us = self.lifetime_min_us.min(o.lifetime_min_us);
        self.lifetime_max_us = self.lifetime_max_us.max(o.lifetime_max_us);
        for (a, b) in self.lifetime_bins.iter_mut().zip(o.lifetime_bins.iter()) {
            *a += b;
        }
        for (a, b) in self.errors.iter_mut().zip(o.errors.iter()) {
            *a += b;
        }
        for (i, s) in o.rate_samples.iter().enumerate() {
            match self.rate_samples.get_mut(i) {
                Some(mine) => {
                    mine.replies += s.replies;
                    mine.sessions += s.sessions;
                }
                None => self.rate_samples.push(*s),
            }
        }
        self.tls_handshakes[0] += o.tls_handshakes[0];
        self.tls_handshakes[1] += o.tls_handshakes[1];
        self.sessions_ok += o.sessions_ok;
        self.sessions_failed += o.sessions_failed;
        self.session_connects_ok += o.session_connects_ok;
        self.session_life_ok_us += o.session_life_ok_us;
        self.session_life_failed_us += o.session_life_failed_us;
        if self.session_lengths.len() < o.session_lengths.len() {
            self.session_lengths.resize(o.session_lengths.len(), 0);
        }
        for (a, b) in self
            .session_lengths
            .iter_mut()
            .zip(o.session_lengths.iter())
        {
            *a += b;
        }
        if self.servers.len() < o.servers.len() {
            self.servers
                .resize_with(o.servers.len(), ServerStats::default);
        }
        for (a, b) in self.servers.iter_mut().zip(o.servers.iter()) {
            a.merge(b);
        }
        let h = &mut self.hist;
        let _ = h.connect.add(&o.hist.connect);
        let _ = h.response.add(&o.hist.response);
        let _ = h.transfer.add(&o.hist.transfer);
        let _ = h.lifetime.add(&o.hist.lifetime);
        let _ = h.lateness.add(&o.hist.lateness);
        self.http2.merge(&o.http2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_classification_follows_reference_with_fixes() {
        let cases = [
            (libc::EMFILE, ErrorKind::FdUnavail),
            (libc::EINVAL, ErrorKind::FdUnavail),
            (libc::ENFILE, ErrorKind::FtabFull),
            (libc::ECONNREFUSED, ErrorKind::ConnRefused),
            (libc::ETIMEDOUT, ErrorKind::SocketTimo),
            (libc::ECONNRESET, ErrorKind::ConnReset),
            (libc::EPIPE, ErrorKind::ConnReset),
            (libc::EADDRNOTAVAIL, ErrorKind::AddrUnavail),
            (libc::EADDRINUSE, ErrorKind::Other),
            (libc::EHOSTUNREACH, ErrorKind::Other),
            (libc::ENETUNREACH, ErrorKind::Other),
        ];
        for (errno, kind) in cases {
            assert_eq!(ErrorKind::from_errno(errno), kind, "errno {errno}");
        }
    }

    #[test]
    fn lifetimes_fill_bins_and_extremes() {
        let mut s = Stats::new();
        s.on_lifetime(Duration::from_micros(400));
        s.on_lifetime(Duration::from_micros(1_500));
        s.on_lifetime(Duration::from_secs(200));
        assert_eq!(s.lifetimes, 3);
        assert_eq!(s.lifetime_bins[0], 1);
        assert_eq!(s.lifetime_bins[1], 1);
        assert_eq!(s.lifetime_bins[LIFETIME_BINS], 1);
        assert_eq!(s.lifetime_min_us, 400);
        assert_eq!(s.lifetime_max_us, 200_000_000);
    }

    #[test]
    fn merge_adds_counters_and_samples() {
        let mut a = Stats::new();
        let mut b = Stats::new();
        a.on_connecting();
        a.on_reply(200, 10, 20, 0, Duration::from_micros(5));
        a.rate_samples.push(RateSample {
            replies: 3,
            sessions: 0,
            seconds: 5.0,
        });
        b.on_connecting();
        b.on_reply(404, 1, 2, 0, Duration::from_micros(7));
        b.on_error(ErrorKind::ConnReset);
        b.rate_samples.push(RateSample {
            replies: 4,
            sessions: 0,
            seconds: 5.0,
        });
        b.rate_samples.push(RateSample {
            replies: 1,
            sessions: 0,
            seconds: 5.0,
        });
        b.max_burst = 4;
        a.merge(&b);
        assert_eq!(a.connections, 2);
        assert_eq!(a.replies(), 2);
        assert_eq!(a.replies_by_class[2], 1);
        assert_eq!(a.replies_by_class[4], 1);
        assert_eq!(a.reply_content_bytes, 22);
        assert_eq!(a.total_errors(), 1);
        assert_eq!(a.rate_samples.len(), 2);
        assert_eq!(a.rate_samples[0].replies, 7);
        assert_eq!(a.max_burst, 4);
        assert_eq!(a.hist.transfer.len(), 2);
    }

    #[test]
    fn sessions_are_counted_and_merged() {
        let mut a = Stats::new();
        a.on_session(true, Duration::from_millis(200), 1, 4);
        a.on_session(false, Duration::from_millis(50), 2, 1);
        let mut b = Stats::new();
        b.on_session(true, Duration::from_millis(100), 3, 6);
        a.merge(&b);
        assert_eq!((a.sessions_ok, a.sessions_failed), (2, 1));
        assert_eq!(a.session_connects_ok, 4);
        assert_eq!(a.session_life_ok_us, 300_000);
        assert_eq!(a.session_life_failed_us, 50_000);
        assert_eq!(a.session_lengths, vec![0, 1, 0, 0, 1, 0, 1]);
    }
}
