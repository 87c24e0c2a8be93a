//! The typed parts of a `Config`: target, requests, load, sessions, sockets, outputs
//! (TLS is `wire::tls::TlsOptions`, pacing `model::pacing::Pacing`).
//!
//! Plain data with httperf's defaults (`Default`); filled by `ConfigBuilder`, read by
//! the workload, the engine and the outputs.

use std::net::{IpAddr, SocketAddr};

use crate::wire::events::Choice;

use super::{
    HttpVersion, Period, PrintWhat, StartAt, WlogSpec, WsessSpec, WsesslogSpec, WsesspageSpec,
    WsetSpec,
};

/// Where the load goes: the server, its port and addresses, the URI, local addresses.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TargetOptions {
    /// `--server` as given (echo line; `Host:` unless `--server-name`); `localhost` by
    /// default. Unused (and not echoed) with `--servers`.
    pub(crate) server: String,
    /// `--server-name`, the `Host:` value.
    pub(crate) server_name: Option<String>,
    /// Resolved addresses of the server at `port`, in resolver order (IPv4 and IPv6);
    /// the first is used. Empty with `--servers`.
    pub(crate) addrs: Vec<SocketAddr>,
    /// Server port (default 80, or 443 with `--ssl`).
    pub(crate) port: u16,
    /// `--uri` as given.
    pub(crate) uri: String,
    /// The `Host:` header value: `--server-name`, else `--server` (an IPv6 literal in
    /// brackets), cut at the first CR or LF. See `host_header`.
    pub(crate) host: String,
    /// `--servers=F`: file of host names used round-robin (master).
    pub(crate) servers: Option<String>,
    /// `--myaddr` values in order (local address pool, master), unparsed.
    pub(crate) myaddr: Vec<String>,
    /// The `--myaddr` pool resolved and ranges expanded (source addresses, used
    /// round-robin).
    pub(crate) local_addrs: Vec<IpAddr>,
    /// `--unix-socket=PATH` (rshperf): connect here instead of TCP; `--server` still
    /// names the `Host:`.
    pub(crate) unix_socket: Option<String>,
}

impl Default for TargetOptions {
    /// httperf's defaults.
    fn default() -> Self {
        TargetOptions {
            server: "localhost".to_string(),
            server_name: None,
            addrs: Vec::new(),
            port: 80,
            uri: "/".to_string(),
            host: String::new(),
            servers: None,
            myaddr: Vec::new(),
            local_addrs: Vec::new(),
            unix_socket: None,
        }
    }
}

/// What each request is: HTTP version, method, headers, body, and the URI lists of `--wlog`/`--wset`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RequestOptions {
    /// `--http-version`.
    pub(crate) http_version: HttpVersion,
    /// `--method` (default `GET`).
    pub(crate) method: String,
    /// Whether `--method` was given (httperf echoes it only then, even `GET`).
    pub(crate) method_given: bool,
    /// `--add-header` as typed (for the echo line), if given.
    pub(crate) add_header_raw: Option<String>,
    /// `--add-header` after escape processing (bytes appended after `Host:`).
    pub(crate) add_header: Vec<u8>,
    /// `--add-header-file=F`: header block file (used verbatim, master).
    pub(crate) add_header_file: Option<String>,
    /// `--no-host-hdr`.
    pub(crate) no_host_hdr: bool,
    /// `--body-file=F` (rshperf): the body of every request (read once, shared).
    pub(crate) body_file: Option<String>,
    /// `--content-type=T` (rshperf): a `Content-Type: T` line in every request.
    pub(crate) content_type: Option<String>,
    /// `--header-file=F` (rshperf): `Name: value` lines added to every request
    /// (checked at start by `workload::headers`).
    pub(crate) header_file: Option<String>,
    /// `--wlog`.
    pub(crate) wlog: Option<WlogSpec>,
    /// `--wset`.
    pub(crate) wset: Option<WsetSpec>,
    /// `--stream=sse|ndjson|lines|auto` (rshperf): split reply bodies into events.
    pub(crate) stream: Option<Choice>,
    /// `--stream-gap-timeout=S` (rshperf): a longer gap makes a stream stalled; 0: none.
    pub(crate) stream_gap_timeout: f64,
}

impl Default for RequestOptions {
    /// httperf's defaults.
    fn default() -> Self {
        RequestOptions {
            http_version: HttpVersion::V11,
            method: "GET".to_string(),
            method_given: false,
            add_header_raw: None,
            add_header: Vec::new(),
            add_header_file: None,
            no_host_hdr: false,
            body_file: None,
            content_type: None,
            header_file: None,
            wlog: None,
            wset: None,
            stream: None,
            stream_gap_timeout: 0.0,
        }
    }
}

/// How much load and when: connections, calls, the arrival process, the run's length, closed loop and call rate, striping over clients, partitions and threads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LoadOptions {
    /// `--num-conns`.
    pub(crate) num_conns: u64,
    /// `--num-calls`.
    pub(crate) num_calls: u64,
    /// `--burst-length`.
    pub(crate) burst_length: u64,
    /// Arrival process from `--rate`/`--period` (`Period::Sequential` when rate ≤ 0).
    pub(crate) period: Period,
    /// `--runtime`, seconds (0 = none).
    pub(crate) runtime: f64,
    /// `--runtime` without `--num-conns` and without a session workload: arrivals go
    /// on at `--rate` until the runtime is over (httperf would stop after its one
    /// default connection). The echo line still says `--num-conns=1`, as httperf's.
    pub(crate) until_runtime: bool,
    /// `--concurrency` (rshperf): units in flight in a closed loop; 0 = open loop
    /// (or httperf's sequential mode when there is no rate). See `workload::closed`.
    pub(crate) concurrency: u64,
    /// `--call-rate` (rshperf): calls per second over the `--num-conns` connections of
    /// a pool (`engine/pool.rs`); 0 = not given. Its schedule is `period`.
    pub(crate) call_rate: f64,
    /// `--call-rate` with `--runtime` and without `--num-calls`: calls go on until the
    /// runtime is over (else the run makes `--num-conns` × `--num-calls` calls).
    pub(crate) calls_until_runtime: bool,
    /// `--client=I/N`: (I, N).
    pub(crate) client_id: u32,
    /// `--client=I/N`: N.
    pub(crate) num_clients: u32,
    /// `--partition=I/N`: (I, N); this process runs arrivals k ≡ I (mod N).
    pub(crate) partition: (u32, u32),
    /// `--threads` (engines), default 1.
    pub(crate) threads: u32,
    /// `--start-at`: when the run begins.
    pub(crate) start_at: Option<StartAt>,
    /// `--max-connections` (0 = default).
    pub(crate) max_connections: u64,
    /// `--max-piped-calls` (0 = default).
    pub(crate) max_piped_calls: u64,
}

impl Default for LoadOptions {
    /// httperf's defaults.
    fn default() -> Self {
        LoadOptions {
            num_conns: 1,
            num_calls: 1,
            burst_length: 1,
            period: Period::Sequential,
            runtime: 0.0,
            until_runtime: false,
            concurrency: 0,
            call_rate: 0.0,
            calls_until_runtime: false,
            client_id: 0,
            num_clients: 1,
            partition: (0, 1),
            threads: 1,
            start_at: None,
            max_connections: 0,
            max_piped_calls: 0,
        }
    }
}

/// Session workloads (`--wsess`, `--wsesslog`, `--wsesspage`) and what decides a session's fate.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SessionOptions {
    /// `--wsess`.
    pub(crate) wsess: Option<WsessSpec>,
    /// `--wsesslog`.
    pub(crate) wsesslog: Option<WsesslogSpec>,
    /// `--wsesspage`.
    pub(crate) wsesspage: Option<WsesspageSpec>,
    /// `--session-cookies`.
    pub(crate) session_cookies: bool,
    /// `--think-timeout`, seconds (0 = none).
    pub(crate) think_timeout: f64,
    /// `--failure-status` (0 = none).
    pub(crate) failure_status: u32,
    /// `--retry-on-failure`.
    pub(crate) retry_on_failure: bool,
}

impl Default for SessionOptions {
    /// httperf's defaults.
    fn default() -> Self {
        SessionOptions {
            wsess: None,
            wsesslog: None,
            wsesspage: None,
            session_cookies: false,
            think_timeout: 0.0,
            failure_status: 0,
            retry_on_failure: false,
        }
    }
}

/// Per-socket settings: buffer sizes, port use, closing, the timeout.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SocketOptions {
    /// `--send-buffer` (SO_SNDBUF), bytes.
    pub(crate) send_buffer: u32,
    /// `--recv-buffer` (SO_RCVBUF), bytes.
    pub(crate) recv_buffer: u32,
    /// Whether `--send-buffer` / `--recv-buffer` were given (HTTP/2 keeps the kernel's
    /// autotuned buffers unless they were: `Config::socket_buffers`).
    pub(crate) buffers_given: (bool, bool),
    /// `--hog`.
    pub(crate) hog: bool,
    /// `--close-with-reset`.
    pub(crate) close_with_reset: bool,
    /// `--timeout`, seconds (0 = none).
    pub(crate) timeout: f64,
}

impl Default for SocketOptions {
    /// httperf's defaults.
    fn default() -> Self {
        SocketOptions {
            send_buffer: 4096,
            recv_buffer: 16384,
            buffers_given: (false, false),
            hog: false,
            close_with_reset: false,
            timeout: 0.0,
        }
    }
}

/// What is printed or written, and where: verbosity, traces, reports, files, progress, metrics.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OutputOptions {
    /// Number of `-v`.
    pub(crate) verbose: u32,
    /// `-d N`.
    pub(crate) debug: u32,
    /// `--print-reply`.
    pub(crate) print_reply: Option<PrintWhat>,
    /// `--print-request`.
    pub(crate) print_request: Option<PrintWhat>,
    /// `--periodic-stats` / `-n`.
    pub(crate) periodic_stats: bool,
    /// `--percentiles`: print the percentile block after the classic report.
    pub(crate) percentiles: bool,
    /// `--json=FILE` (`-` = stdout instead of the text report).
    pub(crate) json: Option<String>,
    /// `--csv=FILE`: append one row per run.
    pub(crate) csv: Option<String>,
    /// `--timeline=FILE`: per-second CSV of the run.
    pub(crate) timeline: Option<String>,
    /// `--html=FILE`: one-file HTML report with charts.
    pub(crate) html: Option<String>,
    /// `--junit=FILE`: JUnit XML, one test case per `--fail-on` threshold.
    pub(crate) junit: Option<String>,
    /// `--fail-on=EXPR`, as typed, in order.
    pub(crate) fail_on: Vec<crate::model::threshold::Threshold>,
    /// `--progress` (Some(true)) / `--no-progress` (Some(false)); None = when stderr is
    /// a terminal.
    pub(crate) progress: Option<bool>,
    /// `--metrics-listen=ADDR:PORT` (rshperf): serve Prometheus metrics there.
    pub(crate) metrics_listen: Option<SocketAddr>,
    /// `--metrics-linger=S` (rshperf): seconds the metrics stay served after the run.
    pub(crate) metrics_linger: f64,
    /// `--use-timer-cache` (accepted and echoed; rshperf's clock needs no cache).
    pub(crate) use_timer_cache: bool,
}

impl Default for OutputOptions {
    /// httperf's defaults.
    fn default() -> Self {
        OutputOptions {
            verbose: 0,
            debug: 0,
            print_reply: None,
            print_request: None,
            periodic_stats: false,
            percentiles: false,
            json: None,
            csv: None,
            timeline: None,
            html: None,
            junit: None,
            fail_on: Vec::new(),
            progress: None,
            metrics_listen: None,
            metrics_linger: 0.0,
            use_timer_cache: false,
        }
    }
}
