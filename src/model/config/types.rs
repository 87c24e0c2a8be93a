//! The small value types of a `Config`: HTTP version, `--print-*` parts, the session
//! and log workload specifications, a replay's, `--start-at`.
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

/// `--body-order`: which line of `--body-lines` a call sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum BodyOrder {
    /// Call k of the run sends line k mod n (`round-robin`, the default).
    #[default]
    RoundRobin,
    /// Call k sends a line drawn from a generator seeded with this and k
    /// (`random:SEED`): the same calls get the same lines on every run and machine.
    Random(u64),
}

impl BodyOrder {
    /// The option's value that gives this order.
    pub(crate) fn name(self) -> String {
        match self {
            BodyOrder::RoundRobin => "round-robin".into(),
            BodyOrder::Random(seed) => format!("random:{seed}"),
        }
    }

    /// The line (of `n`, n > 0) that call number `k` of the run sends.
    pub(crate) fn pick(self, k: u64, n: u64) -> u64 {
        match self {
            BodyOrder::RoundRobin => k % n,
            // splitmix64 of (seed, k): uniform enough, and no state per engine.
            BodyOrder::Random(seed) => {
                let mut z = seed
                    .wrapping_add(k.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                    .wrapping_add(0x9E37_79B9_7F4A_7C15);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                (z ^ (z >> 31)) % n
            }
        }
    }
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

/// Which connection a replayed call takes (`--replay-connections`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplayConnections {
    /// Each client (the log's client address) on a connection of its own, one call
    /// at a time.
    PerClient,
    /// A new connection for every call, closed after its reply.
    PerRequest,
    /// The `--call-rate` pool of `--num-conns` connections.
    Pool,
}

impl ReplayConnections {
    /// The mode named `name` on the command line.
    pub(crate) fn parse(name: &str) -> Option<ReplayConnections> {
        match name {
            "per-client" => Some(ReplayConnections::PerClient),
            "per-request" => Some(ReplayConnections::PerRequest),
            "pool" => Some(ReplayConnections::Pool),
            _ => None,
        }
    }

    /// Its name on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ReplayConnections::PerClient => "per-client",
            ReplayConnections::PerRequest => "per-request",
            ReplayConnections::Pool => "pool",
        }
    }
}

frozen! {
    /// `rshperf replay FILE --speed X --replay-connections MODE`.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct ReplaySpec [pub(in crate::model::config)] {
        /// The log, as given.
        file: String => &str as borrow;
        /// `--speed`.
        speed: f64 => f64 as copy;
        /// Which connection a call takes: the mode given, or the log's default.
        connections: ReplayConnections => ReplayConnections as copy;
    }
}

impl ReplaySpec {
    /// The specification of these values.
    pub(crate) fn new(
        file: impl Into<String>,
        speed: f64,
        connections: ReplayConnections,
    ) -> ReplaySpec {
        ReplaySpec {
            file: file.into(),
            speed,
            connections,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_modes_are_named_as_on_the_command_line() {
        for c in [
            ReplayConnections::PerClient,
            ReplayConnections::PerRequest,
            ReplayConnections::Pool,
        ] {
            assert_eq!(ReplayConnections::parse(c.name()), Some(c));
        }
        assert_eq!(
            ReplayConnections::parse("per-client"),
            Some(ReplayConnections::PerClient)
        );
        assert_eq!(
            ReplayConnections::parse("per-request"),
            Some(ReplayConnections::PerRequest)
        );
        assert_eq!(
            ReplayConnections::parse("pool"),
            Some(ReplayConnections::Pool)
        );
        assert_eq!(ReplayConnections::parse("Pool"), None);
        assert_eq!(ReplayConnections::parse(""), None);
    }
}
