//! The typed parts of a `Config`: target, requests, load, sessions, sockets, outputs
//! (TLS is `wire::tls::TlsOptions`, pacing `model::pacing::Pacing`).
//!
//! Plain data with httperf's defaults (`Default`); filled by `ConfigBuilder`, read by
//! the workload, the engine and the outputs.

use std::net::{IpAddr, SocketAddr};

use crate::wire::events::Choice;
use crate::wire::frozen::frozen;

use super::{
    BodyOrder, HttpVersion, Period, PrintWhat, RateProfile, ReplaySpec, StartAt, WlogSpec,
    WsessSpec, WsesslogSpec, WsesspageSpec, WsetSpec,
};

frozen! {
    /// Where the load goes: the server, its port and addresses, the URI, local addresses.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct TargetOptions [pub(in crate::model::config)] {
        /// `--server` as given (echo line; `Host:` unless `--server-name`); `localhost` by
        /// default. Unused (and not echoed) with `--servers`.
        server: String => &str as borrow;
        /// `--server-name`, the `Host:` value.
        server_name: Option<String> => Option<&str> as deref;
        /// Resolved addresses of the server at `port`, in resolver order (IPv4 and IPv6);
        /// the first is used. Empty with `--servers`.
        addrs: Vec<SocketAddr> => &[SocketAddr] as borrow;
        /// Server port (default 80, or 443 with `--ssl`).
        port: u16 => u16 as copy;
        /// `--uri` as given.
        uri: String => &str as borrow;
        /// The `Host:` header value: `--server-name`, else `--server` (an IPv6 literal in
        /// brackets), cut at the first CR or LF. See `host_header`.
        host: String => &str as borrow;
        /// `--servers=F`: file of host names used round-robin (master).
        servers: Option<String> => Option<&str> as deref;
        /// `--myaddr` values in order (local address pool, master), unparsed.
        myaddr: Vec<String> => &[String] as borrow;
        /// The `--myaddr` pool resolved and ranges expanded (source addresses, used
        /// round-robin).
        local_addrs: Vec<IpAddr> => &[IpAddr] as borrow;
        /// `--unix-socket=PATH` (rshperf): connect here instead of TCP; `--server` still
        /// names the `Host:`.
        unix_socket: Option<String> => Option<&str> as deref;
    }
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

frozen! {
    /// What each request is: HTTP version, method, headers, body, and the URI lists of `--wlog`/`--wset`.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct RequestOptions [pub(in crate::model::config)] {
        /// `--http-version`.
        http_version: HttpVersion => HttpVersion as copy;
        /// `--method` (default `GET`).
        method: String => &str as borrow;
        /// Whether `--method` was given (httperf echoes it only then, even `GET`).
        method_given: bool => bool as copy;
        /// `--add-header` as typed (for the echo line), if given.
        add_header_raw: Option<String> => Option<&str> as deref;
        /// `--add-header` after escape processing (bytes appended after `Host:`).
        add_header: Vec<u8> => &[u8] as borrow;
        /// `--add-header-file=F`: header block file (used verbatim, master).
        add_header_file: Option<String> => Option<&str> as deref;
        /// `--no-host-hdr`.
        no_host_hdr: bool => bool as copy;
        /// `--body-file=F` (rshperf): the body of every request (read once, shared).
        body_file: Option<String> => Option<&str> as deref;
        /// `--body-lines=F` (rshperf): one body per line (each a JSON value), a line
        /// per call in `body_order` (checked at start by `workload::headers`).
        body_lines: Option<String> => Option<&str> as deref;
        /// `--body-order=round-robin|random:SEED` (rshperf).
        body_order: BodyOrder => BodyOrder as copy;
        /// `--content-type=T` (rshperf): a `Content-Type: T` line in every request.
        content_type: Option<String> => Option<&str> as deref;
        /// `--header-file=F` (rshperf): `Name: value` lines added to every request
        /// (checked at start by `workload::headers`).
        header_file: Option<String> => Option<&str> as deref;
        /// `--wlog`.
        wlog: Option<WlogSpec> => Option<&WlogSpec> as as_ref;
        /// `--wset`.
        wset: Option<WsetSpec> => Option<&WsetSpec> as as_ref;
        /// `--stream=sse|ndjson|jsonl|lines|auto` (rshperf): split reply bodies into events.
        stream: Option<Choice> => Option<Choice> as copy;
        /// `--stream-gap-timeout=S` (rshperf): a longer gap makes a stream stalled; 0: none.
        stream_gap_timeout: f64 => f64 as copy;
    }
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
            body_lines: None,
            body_order: BodyOrder::RoundRobin,
            content_type: None,
            header_file: None,
            wlog: None,
            wset: None,
            stream: None,
            stream_gap_timeout: 0.0,
        }
    }
}

frozen! {
    /// How much load and when: connections, calls, the arrival process, the run's length, closed loop and call rate, striping over clients, partitions and threads.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct LoadOptions [pub(in crate::model::config)] {
        /// `--num-conns`.
        num_conns: u64 => u64 as copy;
        /// `--num-calls`.
        num_calls: u64 => u64 as copy;
        /// `--burst-length`.
        burst_length: u64 => u64 as copy;
        /// Arrival process from `--rate`/`--period` (`Period::Sequential` when rate ≤ 0).
        period: Period => &Period as borrow;
        /// `--runtime`, seconds (0 = none).
        runtime: f64 => f64 as copy;
        /// `--runtime` without `--num-conns` and without a session workload: arrivals go
        /// on at `--rate` until the runtime is over (httperf would stop after its one
        /// default connection). The echo line still says `--num-conns=1`, as httperf's.
        until_runtime: bool => bool as copy;
        /// `--concurrency` (rshperf): units in flight in a closed loop; 0 = open loop
        /// (or httperf's sequential mode when there is no rate). See `workload::closed`.
        concurrency: u64 => u64 as copy;
        /// `--call-rate` (rshperf): calls per second over the `--num-conns` connections of
        /// a pool (`engine/pool.rs`); 0 = not given. Its schedule is `period`.
        call_rate: f64 => f64 as copy;
        /// `--call-rate` with `--runtime` and without `--num-calls`: calls go on until the
        /// runtime is over (else the run makes `--num-conns` × `--num-calls` calls).
        calls_until_runtime: bool => bool as copy;
        /// `--client=I/N`: (I, N).
        client_id: u32 => u32 as copy;
        /// `--client=I/N`: N.
        num_clients: u32 => u32 as copy;
        /// `--rate-profile`: the rate over time (then `period` gives only the spacing's
        /// shape, its mean rescaled to the profile's peak), and the run lasts the
        /// profile.
        rate_profile: Option<RateProfile> => Option<&RateProfile> as as_ref;
        /// `rshperf replay`: the log and how it is replayed (the schedule is the log's;
        /// `call_rate` is its mean rate).
        replay: Option<ReplaySpec> => Option<&ReplaySpec> as as_ref;
        /// `--partition=I/N`: (I, N); this process runs arrivals k ≡ I (mod N).
        partition: (u32, u32) => (u32, u32) as copy;
        /// `--threads` (engines), default 1.
        threads: u32 => u32 as copy;
        /// `--start-at`: when the run begins.
        start_at: Option<StartAt> => Option<StartAt> as copy;
        /// `--max-connections` (0 = default).
        max_connections: u64 => u64 as copy;
        /// `--max-piped-calls` (0 = default).
        max_piped_calls: u64 => u64 as copy;
    }
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
            rate_profile: None,
            replay: None,
            partition: (0, 1),
            threads: 1,
            start_at: None,
            max_connections: 0,
            max_piped_calls: 0,
        }
    }
}

frozen! {
    /// Session workloads (`--wsess`, `--wsesslog`, `--wsesspage`) and what decides a session's fate.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct SessionOptions [pub(in crate::model::config)] {
        /// `--wsess`.
        wsess: Option<WsessSpec> => Option<&WsessSpec> as as_ref;
        /// `--wsesslog`.
        wsesslog: Option<WsesslogSpec> => Option<&WsesslogSpec> as as_ref;
        /// `--wsesspage`.
        wsesspage: Option<WsesspageSpec> => Option<&WsesspageSpec> as as_ref;
        /// `--session-cookies`.
        session_cookies: bool => bool as copy;
        /// `--think-timeout`, seconds (0 = none).
        think_timeout: f64 => f64 as copy;
        /// `--failure-status` (0 = none).
        failure_status: u32 => u32 as copy;
        /// `--retry-on-failure`.
        retry_on_failure: bool => bool as copy;
    }
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

frozen! {
    /// Per-socket settings: buffer sizes, port use, closing, the timeout.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct SocketOptions [pub(in crate::model::config)] {
        /// `--send-buffer` (SO_SNDBUF), bytes.
        send_buffer: u32 => u32 as copy;
        /// `--recv-buffer` (SO_RCVBUF), bytes.
        recv_buffer: u32 => u32 as copy;
        /// Whether `--send-buffer` / `--recv-buffer` were given (HTTP/2 keeps the kernel's
        /// autotuned buffers unless they were: `Config::socket_buffers`).
        buffers_given: (bool, bool) => (bool, bool) as copy;
        /// `--hog`.
        hog: bool => bool as copy;
        /// `--close-with-reset`.
        close_with_reset: bool => bool as copy;
        /// `--timeout`, seconds (0 = none).
        timeout: f64 => f64 as copy;
    }
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

frozen! {
    /// What is printed or written, and where: verbosity, traces, reports, files, progress, metrics.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct OutputOptions [pub(in crate::model::config)] {
        /// Number of `-v`.
        verbose: u32 => u32 as copy;
        /// `-d N`.
        debug: u32 => u32 as copy;
        /// `--print-reply`.
        print_reply: Option<PrintWhat> => Option<PrintWhat> as copy;
        /// `--print-request`.
        print_request: Option<PrintWhat> => Option<PrintWhat> as copy;
        /// `--periodic-stats` / `-n`.
        periodic_stats: bool => bool as copy;
        /// `--percentiles`: print the percentile block after the classic report.
        percentiles: bool => bool as copy;
        /// `--json=FILE` (`-` = stdout instead of the text report).
        json: Option<String> => Option<&str> as deref;
        /// `--csv=FILE`: append one row per run.
        csv: Option<String> => Option<&str> as deref;
        /// `--timeline=FILE`: per-second CSV of the run.
        timeline: Option<String> => Option<&str> as deref;
        /// `--request-log=FILE`: one record per call.
        request_log: Option<String> => Option<&str> as deref;
        /// `--request-log-format=FORMAT` (None: from the file's name).
        request_log_format: Option<crate::model::config::RequestLogFormat> => Option<crate::model::config::RequestLogFormat> as copy;
        /// `--html=FILE`: one-file HTML report with charts.
        html: Option<String> => Option<&str> as deref;
        /// `--junit=FILE`: JUnit XML, one test case per `--fail-on` threshold.
        junit: Option<String> => Option<&str> as deref;
        /// `--fail-on=EXPR`, as typed, in order.
        fail_on: Vec<crate::model::threshold::Threshold> => &[crate::model::threshold::Threshold] as borrow;
        /// `--progress` (Some(true)) / `--no-progress` (Some(false)); None = when stderr is
        /// a terminal.
        progress: Option<bool> => Option<bool> as copy;
        /// `--metrics-listen=ADDR:PORT` (rshperf): serve Prometheus metrics there.
        metrics_listen: Option<SocketAddr> => Option<SocketAddr> as copy;
        /// `--metrics-linger=S` (rshperf): seconds the metrics stay served after the run.
        metrics_linger: f64 => f64 as copy;
        /// `--use-timer-cache` (accepted and echoed; rshperf's clock needs no cache).
        use_timer_cache: bool => bool as copy;
    }
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
            request_log: None,
            request_log_format: None,
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
