//! The small value types of a `Config`: HTTP version, `--print-*` parts, the session
//! and log workload specifications, `--start-at`.
//!
//! Plain data with no behaviour beyond naming; parsed from text by `config::value`,
//! held by `Config`, read by the workloads and the echo line.

/// HTTP protocol version of the requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HttpVersion {
    /// HTTP/1.0 (requests carry `Connection: keep-alive`).
    V10,
    /// HTTP/1.1 (the default).
    V11,
    /// HTTP/2 (rshperf's own): h2 over TLS with ALPN under `--ssl`, else h2c with
    /// prior knowledge. Each call is a stream.
    V2,
    /// HTTP/3 over QUIC (rshperf's own): always TLS 1.3 (ALPN h3) over UDP. Each call
    /// is a request stream.
    V3,
}

/// Which parts of requests or replies `--print-request`/`--print-reply` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PrintWhat {
    /// Header lines only (`=header`).
    Header,
    /// Body lines only (`=body`).
    Body,
    /// Both (no argument, or anything else).
    Both,
}

/// `--wsess=N1,N2,X`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WsessSpec {
    /// Number of sessions.
    pub(crate) sessions: u64,
    /// Calls per session.
    pub(crate) calls: u64,
    /// Think time between bursts, seconds.
    pub(crate) think: f64,
}

/// `--wsesslog=N,X,F`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WsesslogSpec {
    /// Number of sessions.
    pub(crate) sessions: u64,
    /// Default think time, seconds.
    pub(crate) think: f64,
    /// Session file name as given.
    pub(crate) file: String,
}

/// `--wlog=B,F`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WlogSpec {
    /// Loop at the end of the list (`y`/`Y`).
    pub(crate) repeat: bool,
    /// File name as given.
    pub(crate) file: String,
}

/// `--wset=N,X`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WsetSpec {
    /// Working-set size (number of files).
    pub(crate) files: u64,
    /// Target miss rate in [0, 1].
    pub(crate) miss_rate: f64,
}

/// `--wsesspage=N1,N2,X`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WsesspageSpec {
    /// Number of sessions.
    pub(crate) sessions: u64,
    /// Pages (user requests) per session.
    pub(crate) pages: u64,
    /// Think time between pages, seconds.
    pub(crate) think: f64,
}

/// `--start-at`: an absolute wall-clock time or a delay from now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum StartAt {
    /// Seconds since the Unix epoch.
    Unix(f64),
    /// Seconds from now (`+S`).
    After(f64),
}
