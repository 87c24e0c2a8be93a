//! The small value types of a `Config`: HTTP version, `--print-*` parts, the session
//! and log workload specifications, `--start-at`.
//!
//! Plain data with no behaviour beyond naming; parsed from text by `config::value`,
//! held by `Config`, read by the workloads and the echo line.

use crate::wire::frozen::frozen;

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

/// The file format of `--request-log` (its encodings are `model::reqlog`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RequestLogFormat {
    /// One JSON object per line.
    Jsonl,
    /// A header line, then one row per call.
    Csv,
    /// The compact binary form (`model::reqlog::MAGIC`, varints).
    Binary,
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

frozen! {
    /// `--wsess=N1,N2,X`.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct WsessSpec [pub(in crate::model::config)] {
        /// Number of sessions.
        sessions: u64 => u64 as copy;
        /// Calls per session.
        calls: u64 => u64 as copy;
        /// Think time between bursts, seconds.
        think: f64 => f64 as copy;
    }
}

impl WsessSpec {
    /// The specification of these values.
    pub(crate) fn new(sessions: u64, calls: u64, think: f64) -> WsessSpec {
        WsessSpec {
            sessions,
            calls,
            think,
        }
    }

    /// The same sessions, `sessions` of them.
    pub(crate) fn with_sessions(&self, sessions: u64) -> WsessSpec {
        WsessSpec { sessions, ..*self }
    }
}

frozen! {
    /// `--wsesslog=N,X,F`.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct WsesslogSpec [pub(in crate::model::config)] {
        /// Number of sessions.
        sessions: u64 => u64 as copy;
        /// Default think time, seconds.
        think: f64 => f64 as copy;
        /// Session file name as given.
        file: String => &str as borrow;
    }
}

impl WsesslogSpec {
    /// The specification of these values.
    pub(crate) fn new(sessions: u64, think: f64, file: impl Into<String>) -> WsesslogSpec {
        WsesslogSpec {
            sessions,
            think,
            file: file.into(),
        }
    }

    /// The same sessions, `sessions` of them.
    pub(crate) fn with_sessions(&self, sessions: u64) -> WsesslogSpec {
        WsesslogSpec {
            sessions,
            ..self.clone()
        }
    }
}

frozen! {
    /// `--wlog=B,F`.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct WlogSpec [pub(in crate::model::config)] {
        /// Loop at the end of the list (`y`/`Y`).
        repeat: bool => bool as copy;
        /// File name as given.
        file: String => &str as borrow;
    }
}

impl WlogSpec {
    /// The specification of these values.
    pub(crate) fn new(repeat: bool, file: impl Into<String>) -> WlogSpec {
        WlogSpec {
            repeat,
            file: file.into(),
        }
    }
}

frozen! {
    /// `--wset=N,X`.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct WsetSpec [pub(in crate::model::config)] {
        /// Working-set size (number of files).
        files: u64 => u64 as copy;
        /// Target miss rate in [0, 1].
        miss_rate: f64 => f64 as copy;
    }
}

impl WsetSpec {
    /// The specification of these values.
    pub(crate) fn new(files: u64, miss_rate: f64) -> WsetSpec {
        WsetSpec { files, miss_rate }
    }
}

frozen! {
    /// `--wsesspage=N1,N2,X`.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct WsesspageSpec [pub(in crate::model::config)] {
        /// Number of sessions.
        sessions: u64 => u64 as copy;
        /// Pages (user requests) per session.
        pages: u64 => u64 as copy;
        /// Think time between pages, seconds.
        think: f64 => f64 as copy;
    }
}

impl WsesspageSpec {
    /// The specification of these values.
    pub(crate) fn new(sessions: u64, pages: u64, think: f64) -> WsesspageSpec {
        WsesspageSpec {
            sessions,
            pages,
            think,
        }
    }
}

/// `--start-at`: an absolute wall-clock time or a delay from now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum StartAt {
    /// Seconds since the Unix epoch.
    Unix(f64),
    /// Seconds from now (`+S`).
    After(f64),
}
