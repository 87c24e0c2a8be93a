//! `Config`: the validated, resolved, immutable description of one run.
//!
//! Built once, by `ConfigBuilder::build` (`Config::builder()`), from typed values that
//! every front end maps its own options onto: httperf's command line
//! (`front::httperf`), the URL operand, `demo`, `ab` and `lb`. Nothing after `build`
//! re-reads flags or re-parses text. Owns the configuration's types (`types`), the
//! parsers of httperf's option values and their messages (`value`, `number`,
//! `period`: a front end that takes httperf's syntax uses them), the validation that
//! needs more than one option (`builder`), the typed errors and warnings (`error`) and
//! the echo line (`echo`, compatibility.md §2.2). Does not open sockets, and does not
//! read the files named by options (`--wlog`, `--wsesslog`, `--servers`,
//! `--add-header-file`): their workloads do. Called by the front ends; read by the
//! workload, the engine and the outputs.

mod builder;
mod echo;
mod error;
pub(crate) mod number;
mod period;
mod types;
pub(crate) mod value;

use std::net::SocketAddr;
use std::time::Duration;

pub use crate::wire::tls::{SslProtocol, TlsOptions};
pub use builder::{Built, ConfigBuilder, Rejected};
pub use error::{CallRateClash, ConfigError, Warning};
pub use number::{SESSION_MAX_CONNS, SESSION_MAX_PIPED};
pub use period::Period;
pub(crate) use period::{parse_period, parse_rate};
pub use types::{
    HttpVersion, PrintWhat, StartAt, WlogSpec, WsessSpec, WsesslogSpec, WsesspageSpec, WsetSpec,
};

use crate::model::pacing::Pacing;

/// The program name used in the echo line and in messages.
pub const PROG: &str = "rshperf";

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Program name used in the echo line and messages (`rshperf`).
    pub prog: String,
    /// `--server` as given (echo line; `Host:` unless `--server-name`); `localhost` by
    /// default. Unused (and not echoed) with `--servers`.
    pub server: String,
    /// `--server-name`, the `Host:` value.
    pub server_name: Option<String>,
    /// Resolved addresses of the server at `port`, in resolver order (IPv4 and IPv6);
    /// the first is used. Empty with `--servers`.
    pub addrs: Vec<SocketAddr>,
    /// Server port (default 80, or 443 with `--ssl`).
    pub port: u16,
    /// `--uri` as given.
    pub uri: String,
    /// `--http-version`.
    pub http_version: HttpVersion,
    /// `--method` (default `GET`).
    pub method: String,
    /// Whether `--method` was given (httperf echoes it only then, even `GET`).
    pub method_given: bool,
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
    /// Whether `--send-buffer` / `--recv-buffer` were given (HTTP/2 keeps the kernel's
    /// autotuned buffers unless they were: `Config::socket_buffers`).
    pub buffers_given: (bool, bool),
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
    /// `--runtime` without `--num-conns` and without a session workload: arrivals go
    /// on at `--rate` until the runtime is over (httperf would stop after its one
    /// default connection). The echo line still says `--num-conns=1`, as httperf's.
    pub until_runtime: bool,
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
    /// The TLS options (`--ssl`, `--ssl-*`, `--tls-server-name`); `tls.enabled` is
    /// `--ssl` (or implied by `--ssl-protocol` or an `https://` URL).
    pub tls: TlsOptions,
    /// `--periodic-stats` / `-n`.
    pub periodic_stats: bool,
    /// `--threads` (engines), default 1.
    pub threads: u32,
    /// `--percentiles`: print the percentile block after the classic report.
    pub percentiles: bool,
    /// `--json=FILE` (`-` = stdout instead of the text report).
    pub json: Option<String>,
    /// `--csv=FILE`: append one row per run.
    pub csv: Option<String>,
    /// `--timeline=FILE`: per-second CSV of the run.
    pub timeline: Option<String>,
    /// `--html=FILE`: one-file HTML report with charts.
    pub html: Option<String>,
    /// `--fail-on=EXPR`, as typed, in order.
    pub fail_on: Vec<String>,
    /// `--progress` (Some(true)) / `--no-progress` (Some(false)); None = when stderr is
    /// a terminal.
    pub progress: Option<bool>,
    /// `--partition=I/N`: (I, N); this process runs arrivals k ≡ I (mod N).
    pub partition: (u32, u32),
    /// `--start-at`: when the run begins.
    pub start_at: Option<StartAt>,
    /// The `Host:` header value: `--server-name`, else `--server` (an IPv6 literal in
    /// brackets), cut at the first CR or LF. See `host_header`.
    pub host: String,
    /// `--wsesspage`.
    pub wsesspage: Option<WsesspageSpec>,
    /// `--servers=F`: file of host names used round-robin (master).
    pub servers: Option<String>,
    /// `--myaddr` values in order (local address pool, master), unparsed.
    pub myaddr: Vec<String>,
    /// `--add-header-file=F`: header block file (used verbatim, master).
    pub add_header_file: Option<String>,
    /// `--use-timer-cache` (accepted and echoed; rshperf's clock needs no cache).
    pub use_timer_cache: bool,
    /// `--concurrency` (rshperf): units in flight in a closed loop; 0 = open loop
    /// (or httperf's sequential mode when there is no rate). See `workload::closed`.
    pub concurrency: u64,
    /// `--overload`, `--spin`, `--pin`, `--realtime` (rshperf).
    pub pacing: Pacing,
    /// `--call-rate` (rshperf): calls per second over the `--num-conns` connections of
    /// a pool (`engine/pool.rs`); 0 = not given. Its schedule is `period`.
    pub call_rate: f64,
    /// `--call-rate` with `--runtime` and without `--num-calls`: calls go on until the
    /// runtime is over (else the run makes `--num-conns` × `--num-calls` calls).
    pub calls_until_runtime: bool,
    /// `--unix-socket=PATH` (rshperf): connect here instead of TCP; `--server` still
    /// names the `Host:`.
    pub unix_socket: Option<String>,
    /// `--body-file=F` (rshperf): the body of every request (read once, shared).
    pub body_file: Option<String>,
    /// `--content-type=T` (rshperf): a `Content-Type: T` line in every request.
    pub content_type: Option<String>,
    /// `--header-file=F` (rshperf): `Name: value` lines added to every request
    /// (checked at start by `workload::headers`).
    pub header_file: Option<String>,
    /// `--metrics-listen=ADDR:PORT` (rshperf): serve Prometheus metrics there.
    pub metrics_listen: Option<SocketAddr>,
    /// `--metrics-linger=S` (rshperf): seconds the metrics stay served after the run.
    pub metrics_linger: f64,
}

impl Config {
    /// A builder with httperf's defaults: the one way to make a `Config`.
    pub fn builder() -> ConfigBuilder {
        ConfigBuilder::new()
    }

    /// httperf's defaults (before any option is applied).
    pub(crate) fn defaults() -> Config {
        Config {
            prog: PROG.to_string(),
            server: "localhost".to_string(),
            server_name: None,
            addrs: Vec::new(),
            port: 80,
            uri: "/".to_string(),
            http_version: HttpVersion::V11,
            method: "GET".to_string(),
            method_given: false,
            buffers_given: (false, false),
            add_header_raw: None,
            add_header: Vec::new(),
            no_host_hdr: false,
            send_buffer: 4096,
            recv_buffer: 16384,
            hog: false,
            close_with_reset: false,
            client_id: 0,
            num_clients: 1,
            timeout: 0.0,
            think_timeout: 0.0,
            num_conns: 1,
            num_calls: 1,
            burst_length: 1,
            period: Period::Sequential,
            runtime: 0.0,
            until_runtime: false,
            verbose: 0,
            debug: 0,
            max_connections: 0,
            max_piped_calls: 0,
            failure_status: 0,
            retry_on_failure: false,
            session_cookies: false,
            print_reply: None,
            print_request: None,
            wsess: None,
            wsesslog: None,
            wlog: None,
            wset: None,
            tls: TlsOptions::default(),
            periodic_stats: false,
            threads: 1,
            host: String::new(),
            wsesspage: None,
            servers: None,
            myaddr: Vec::new(),
            add_header_file: None,
            use_timer_cache: false,
            percentiles: false,
            json: None,
            csv: None,
            timeline: None,
            html: None,
            fail_on: Vec::new(),
            progress: None,
            partition: (0, 1),
            start_at: None,
            concurrency: 0,
            pacing: Pacing::default(),
            call_rate: 0.0,
            calls_until_runtime: false,
            unix_socket: None,
            body_file: None,
            content_type: None,
            header_file: None,
            metrics_listen: None,
            metrics_linger: 0.0,
        }
    }

    /// Parses `argv` (program name first) with httperf's options and builds the
    /// configuration (warnings are printed); `-h` and `-V` are errors here. For tests:
    /// the front end is `front::httperf::from_argv`.
    #[cfg(test)]
    pub(crate) fn from_argv(argv: &[&str]) -> Result<Config, crate::wire::error::Error> {
        crate::front::httperf::from_argv(argv)
    }

    /// The `Host:` header value (see the `host` field).
    pub fn host_header(&self) -> &str {
        &self.host
    }

    /// `--timeout` as a Duration, None when 0 (no timeout).
    pub fn timeout_duration(&self) -> Option<Duration> {
        seconds(self.timeout)
    }

    /// `--think-timeout` as a Duration, None when 0.
    pub fn think_timeout_duration(&self) -> Option<Duration> {
        seconds(self.think_timeout)
    }

    /// SO_SNDBUF and SO_RCVBUF to set on each socket, in bytes (0: leave the kernel's
    /// default and its autotuning). HTTP/1.x always sets `--send-buffer` and
    /// `--recv-buffer` (defaults 4096 and 16384, as httperf). HTTP/2 sets only the
    /// ones given on the command line: one connection carries many streams, and the
    /// small httperf defaults would cut every window of replies into small segments.
    pub fn socket_buffers(&self) -> (usize, usize) {
        let h2 = self.http_version == HttpVersion::V2;
        let pick = |size: u32, given: bool| if h2 && !given { 0 } else { size as usize };
        (
            pick(self.send_buffer, self.buffers_given.0),
            pick(self.recv_buffer, self.buffers_given.1),
        )
    }

    /// The first given option whose feature rshperf does not implement yet (the caller
    /// prints `rshperf: <option> is not supported yet`). Every httperf option is
    /// implemented now; the hook stays for options added before their feature.
    pub fn unsupported(&self) -> Option<&'static str> {
        // The page scan reads one reply at a time; HTTP/2 multiplexes them.
        let checks = [(
            self.wsesspage.is_some() && self.http_version == HttpVersion::V2,
            "--wsesspage with --http-version 2",
        )];
        checks
            .iter()
            .find(|(given, _)| *given)
            .map(|(_, name)| *name)
    }
}

/// A positive number of seconds as a Duration (at least 1 ns, saturating), else None.
fn seconds(x: f64) -> Option<Duration> {
    (x > 0.0).then(|| {
        Duration::try_from_secs_f64(x)
            .unwrap_or(Duration::MAX)
            .max(Duration::from_nanos(1))
    })
}
