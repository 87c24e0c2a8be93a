//! `Config`: the validated, resolved, immutable description of one run.
//!
//! Built once from the parsed command line (`cli::Args`) by `Config::from_args`; nothing
//! after this point re-reads flags. Owns option validation that needs more than one
//! option (conflicts, defaults that depend on `--ssl`), server address resolution and
//! the echo line (`Config::echo_line`). Does not open sockets or files other than the
//! ones named by options.

use std::net::SocketAddr;

use crate::workload::rate::Period;

/// HTTP protocol version of the requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpVersion {
    /// HTTP/1.0 (requests carry `Connection: keep-alive`).
    V10,
    /// HTTP/1.1 (the default).
    V11,
}

/// Which parts of requests or replies `--print-request`/`--print-reply` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrintWhat {
    /// Header lines only (`=header`).
    Header,
    /// Body lines only (`=body`).
    Body,
    /// Both (no argument, or anything else).
    Both,
}

/// `--wsess=N1,N2,X`.
#[derive(Debug, Clone, PartialEq)]
pub struct WsessSpec {
    /// Number of sessions.
    pub sessions: u64,
    /// Calls per session.
    pub calls: u64,
    /// Think time between bursts, seconds.
    pub think: f64,
}

/// `--wsesslog=N,X,F`.
#[derive(Debug, Clone, PartialEq)]
pub struct WsesslogSpec {
    /// Number of sessions.
    pub sessions: u64,
    /// Default think time, seconds.
    pub think: f64,
    /// Session file name as given.
    pub file: String,
}

/// `--wlog=B,F`.
#[derive(Debug, Clone, PartialEq)]
pub struct WlogSpec {
    /// Loop at the end of the list (`y`/`Y`).
    pub repeat: bool,
    /// File name as given.
    pub file: String,
}

/// `--wset=N,X`.
#[derive(Debug, Clone, PartialEq)]
pub struct WsetSpec {
    /// Working-set size (number of files).
    pub files: u64,
    /// Target miss rate in [0, 1].
    pub miss_rate: f64,
}

/// The complete, validated configuration of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Program name used in the echo line and messages (`rshperf`).
    pub prog: String,
    /// `--server` as given (echo line; `Host:` unless `--server-name`).
    pub server: String,
    /// `--server-name`, the `Host:` value.
    pub server_name: Option<String>,
    /// Resolved addresses of the server at `port`, in resolver order; the first is used.
    pub addrs: Vec<SocketAddr>,
    /// Server port (default 80, or 443 with `--ssl`).
    pub port: u16,
    /// `--uri` as given.
    pub uri: String,
    /// `--http-version`.
    pub http_version: HttpVersion,
    /// `--method` (default `GET`).
    pub method: String,
    /// `--add-header` as typed (for the echo line), if given.
    pub add_header_raw: Option<String>,
    /// `--add-header` after escape processing (bytes appended after `Host:`).
    pub add_header: Vec<u8>,
    /// `--no-host-hdr`.
    pub no_host_hdr: bool,
    /// `--send-buffer` (SO_SNDBUF), bytes.
    pub send_buffer: u32,
    /// `--recv-buffer` (SO_RCVBUF), bytes.
    pub recv_buffer: u32,
    /// `--hog`.
    pub hog: bool,
    /// `--close-with-reset`.
    pub close_with_reset: bool,
    /// `--client=I/N`: (I, N).
    pub client_id: u32,
    /// `--client=I/N`: N.
    pub num_clients: u32,
    /// `--timeout`, seconds (0 = none).
    pub timeout: f64,
    /// `--think-timeout`, seconds (0 = none).
    pub think_timeout: f64,
    /// `--num-conns`.
    pub num_conns: u64,
    /// `--num-calls`.
    pub num_calls: u64,
    /// `--burst-length`.
    pub burst_length: u64,
    /// Arrival process from `--rate`/`--period` (`Period::Sequential` when rate ≤ 0).
    pub period: Period,
    /// `--runtime`, seconds (0 = none).
    pub runtime: f64,
    /// Number of `-v`.
    pub verbose: u32,
    /// `-d N`.
    pub debug: u32,
    /// `--max-connections` (0 = default).
    pub max_connections: u64,
    /// `--max-piped-calls` (0 = default).
    pub max_piped_calls: u64,
    /// `--failure-status` (0 = none).
    pub failure_status: u32,
    /// `--retry-on-failure`.
    pub retry_on_failure: bool,
    /// `--session-cookies`.
    pub session_cookies: bool,
    /// `--print-reply`.
    pub print_reply: Option<PrintWhat>,
    /// `--print-request`.
    pub print_request: Option<PrintWhat>,
    /// `--wsess`.
    pub wsess: Option<WsessSpec>,
    /// `--wsesslog`.
    pub wsesslog: Option<WsesslogSpec>,
    /// `--wlog`.
    pub wlog: Option<WlogSpec>,
    /// `--wset`.
    pub wset: Option<WsetSpec>,
    /// `--ssl` (or implied by `--ssl-protocol`).
    pub ssl: bool,
    /// `--ssl-ciphers`.
    pub ssl_ciphers: Option<String>,
    /// `--ssl-no-reuse`.
    pub ssl_no_reuse: bool,
    /// `--periodic-stats` / `-n`.
    pub periodic_stats: bool,
    /// `--threads` (engines), default 1.
    pub threads: u32,
}
