//! `Config`: the validated, resolved, immutable description of one run.
//!
//! Built once from the parsed command line (`cli::Args`) by `Config::from_args`; nothing
//! after this point re-reads flags. Owns the validation of every option value (httperf's
//! messages, plus stricter checks where httperf accepts nonsense: docs/compatibility.md
//! §1.2 and §7), validation that needs more than one option (conflicts, defaults that
//! depend on `--ssl`), server address resolution and the echo line
//! (`Config::echo_line`, compatibility.md §2.2). Does not open sockets, and does not
//! read the files named by options (`--wlog`, `--wsesslog`, `--servers`,
//! `--add-header-file`): their workloads do. Called by `lib::run`.
//!
//! Longer than the usual 600 lines: about half is the table of option tests (every
//! httperf message and every stricter rule), and the value parsers (C-compatible
//! `strtoul`/`strtod` prefixes, `--period`, session options) live here because the
//! messages they produce are part of the configuration contract. They could move to a
//! `config/value.rs` submodule without API change.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

use crate::front::cli::{self, Args, Command, Opt};
use crate::front::operand::{self, TargetUrl};
use crate::model::workload::rate::Period;
use crate::wire::cfmt;
use crate::wire::error::Error;

/// HTTP protocol version of the requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpVersion {
    /// HTTP/1.0 (requests carry `Connection: keep-alive`).
    V10,
    /// HTTP/1.1 (the default).
    V11,
    /// HTTP/2 (rshperf's own): h2 over TLS with ALPN under `--ssl`, else h2c with
    /// prior knowledge. Each call is a stream.
    V2,
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

/// `--wsesspage=N1,N2,X`.
#[derive(Debug, Clone, PartialEq)]
pub struct WsesspageSpec {
    /// Number of sessions.
    pub sessions: u64,
    /// Pages (user requests) per session.
    pub pages: u64,
    /// Think time between pages, seconds.
    pub think: f64,
}

/// `--ssl-protocol`: the TLS version pinned (min = max), or `Auto` (negotiate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslProtocol {
    /// Negotiate the highest version both sides support.
    Auto,
    /// TLS 1.0 (`TLSv1`, `TLSv1.0`, `TLSv1_0`).
    Tls10,
    /// TLS 1.1.
    Tls11,
    /// TLS 1.2.
    Tls12,
    /// TLS 1.3.
    Tls13,
}

impl SslProtocol {
    /// The name httperf master echoes (`auto`, `TLSv1.0`, …).
    pub fn name(self) -> &'static str {
        match self {
            SslProtocol::Auto => "auto",
            SslProtocol::Tls10 => "TLSv1.0",
            SslProtocol::Tls11 => "TLSv1.1",
            SslProtocol::Tls12 => "TLSv1.2",
            SslProtocol::Tls13 => "TLSv1.3",
        }
    }
}

/// `--start-at`: an absolute wall-clock time or a delay from now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StartAt {
    /// Seconds since the Unix epoch.
    Unix(f64),
    /// Seconds from now (`+S`).
    After(f64),
}

/// The complete, validated configuration of a run.
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
    /// `--ssl-protocol` if given (it implies `--ssl`); None behaves as `Auto`.
    pub ssl_protocol: Option<SslProtocol>,
    /// `--tls-server-name` (SNI host name).
    pub tls_server_name: Option<String>,
    /// `--ssl-certificate` (client certificate, PEM file).
    pub ssl_certificate: Option<String>,
    /// `--ssl-key` (client key, PEM file).
    pub ssl_key: Option<String>,
    /// `--ssl-verify[=yes|no]`: verify the server certificate.
    pub ssl_verify: bool,
    /// `--ssl-ca-file`.
    pub ssl_ca_file: Option<String>,
    /// `--ssl-ca-path`.
    pub ssl_ca_path: Option<String>,
    /// `--use-timer-cache` (accepted and echoed; rshperf's clock needs no cache).
    pub use_timer_cache: bool,
    /// `--concurrency` (rshperf): units in flight in a closed loop; 0 = open loop
    /// (or httperf's sequential mode when there is no rate). See `workload::closed`.
    pub concurrency: u64,
    /// `--overload`, `--spin`, `--pin`, `--realtime` (rshperf).
    pub pacing: crate::model::pacing::Pacing,
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
    /// httperf's defaults (before any option is applied).
    fn defaults() -> Config {
        Config {
            prog: cli::PROG.to_string(),
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
            ssl: false,
            ssl_ciphers: None,
            ssl_no_reuse: false,
            periodic_stats: false,
            threads: 1,
            host: String::new(),
            wsesspage: None,
            servers: None,
            myaddr: Vec::new(),
            add_header_file: None,
            ssl_protocol: None,
            tls_server_name: None,
            ssl_certificate: None,
            ssl_key: None,
            ssl_verify: false,
            ssl_ca_file: None,
            ssl_ca_path: None,
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
            pacing: crate::model::pacing::Pacing::default(),
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

    /// Validates `args` option by option, in command-line order (so the first bad
    /// value is the one reported and later options override earlier ones), applies a
    /// URL argument, then checks combinations, applies defaults and resolves the
    /// server. `--add-header` escape warnings and warnings about ignored arguments are
    /// printed on stderr.
    pub fn from_args(args: Args) -> Result<Config, Error> {
        let mut c = Config::defaults();
        let mut port = None;
        let mut server_given = false;
        for (opt, value) in &args.opts {
            let v = value.as_deref().unwrap_or("");
            match opt {
                Opt::AddHeader => {
                    let (bytes, warnings) = unescape_header(v);
                    for w in warnings {
                        eprintln!("{}: {w}", cli::PROG);
                    }
                    c.add_header = bytes;
                    c.add_header_raw = Some(v.to_string());
                }
                Opt::AddHeaderFile => c.add_header_file = Some(v.to_string()),
                Opt::BurstLength => c.burst_length = BURST_LENGTH.parse(v)?,
                Opt::Client => (c.client_id, c.num_clients) = parse_client(v)?,
                Opt::CloseWithReset => c.close_with_reset = true,
                Opt::Debug => c.debug = to_u32(DEBUG.parse(v)?),
                Opt::FailureStatus => c.failure_status = to_u32(FAILURE_STATUS.parse(v)?),
                Opt::Help | Opt::Version => {}
                Opt::Hog => c.hog = true,
                Opt::HttpVersion => c.http_version = parse_http_version(v)?,
                Opt::MaxConnections => c.max_connections = MAX_CONNECTIONS.parse(v)?,
                Opt::MaxPipedCalls => c.max_piped_calls = MAX_PIPED_CALLS.parse(v)?,
                Opt::Method => {
                    c.method = v.to_string();
                    c.method_given = true;
                }
                Opt::Myaddr => c.myaddr.push(v.to_string()),
                Opt::NoHostHdr => c.no_host_hdr = true,
                Opt::NumCalls => c.num_calls = NUM_CALLS.parse(v)?,
                Opt::NumConns => c.num_conns = NUM_CONNS.parse(v)?,
                Opt::Period => c.period = parse_period(v)?,
                Opt::Port => port = Some(to_u16(PORT.parse(v)?)),
                Opt::PrintReply => c.print_reply = Some(print_what(value.as_deref())),
                Opt::PrintRequest => c.print_request = Some(print_what(value.as_deref())),
                Opt::Rate => c.period = parse_rate(v)?,
                Opt::RecvBuffer => {
                    c.recv_buffer = to_u32(RECV_BUFFER.parse(v)?);
                    c.buffers_given.1 = true;
                }
                Opt::RetryOnFailure => c.retry_on_failure = true,
                Opt::Runtime => c.runtime = RUNTIME.parse(v)?,
                Opt::SendBuffer => {
                    c.send_buffer = to_u32(SEND_BUFFER.parse(v)?);
                    c.buffers_given.0 = true;
                }
                Opt::Server => {
                    c.server = v.to_string();
                    server_given = true;
                }
                Opt::ServerName => c.server_name = Some(v.to_string()),
                Opt::Servers => c.servers = Some(v.to_string()),
                Opt::Uri => c.uri = v.to_string(),
                Opt::SessionCookies => c.session_cookies = true,
                Opt::Ssl => c.ssl = true,
                Opt::SslCiphers => c.ssl_ciphers = Some(v.to_string()),
                Opt::SslNoReuse => c.ssl_no_reuse = true,
                Opt::SslCertificate => c.ssl_certificate = Some(v.to_string()),
                Opt::SslKey => c.ssl_key = Some(v.to_string()),
                Opt::SslVerify => c.ssl_verify = yes_no(value.as_deref()),
                Opt::SslCaFile => c.ssl_ca_file = Some(v.to_string()),
                Opt::SslCaPath => c.ssl_ca_path = Some(v.to_string()),
                Opt::SslProtocol => {
                    c.ssl_protocol = Some(parse_ssl_protocol(v)?);
                    c.ssl = true;
                }
                Opt::TlsServerName => c.tls_server_name = Some(v.to_string()),
                Opt::ThinkTimeout => c.think_timeout = THINK_TIMEOUT.parse(v)?,
                Opt::Threads => c.threads = to_u32(THREADS.parse(v)?),
                Opt::Percentiles => c.percentiles = true,
                Opt::Json => c.json = Some(nonempty(v, "--json")?),
                Opt::Csv => c.csv = Some(nonempty(v, "--csv")?),
                Opt::Timeline => c.timeline = Some(nonempty(v, "--timeline")?),
                Opt::Html => c.html = Some(nonempty(v, "--html")?),
                Opt::FailOn => {
                    crate::output::threshold::parse(v)
                        .map_err(|m| usage(format!("--fail-on: {m}")))?;
                    c.fail_on.push(v.to_string());
                }
                Opt::Progress => c.progress = Some(true),
                Opt::NoProgress => c.progress = Some(false),
                Opt::Partition => c.partition = parse_partition(v)?,
                Opt::StartAt => c.start_at = Some(parse_start_at(v)?),
                Opt::Concurrency => c.concurrency = CONCURRENCY.parse(v)?,
                Opt::Overload => {
                    c.pacing.overload = crate::model::pacing::parse_overload(v).map_err(usage)?
                }
                Opt::Spin => c.pacing.spin = crate::model::pacing::parse_spin(v).map_err(usage)?,
                Opt::Pin => c.pacing.pin = true,
                Opt::Realtime => c.pacing.realtime = true,
                Opt::CallRate => c.call_rate = CALL_RATE.parse(v)?,
                Opt::UnixSocket => c.unix_socket = Some(nonempty(v, "--unix-socket")?),
                Opt::BodyFile => c.body_file = Some(nonempty(v, "--body-file")?),
                Opt::ContentType => c.content_type = Some(parse_content_type(v)?),
                Opt::HeaderFile => c.header_file = Some(nonempty(v, "--header-file")?),
                Opt::MetricsListen => c.metrics_listen = Some(parse_listen(v)?),
                Opt::MetricsLinger => c.metrics_linger = METRICS_LINGER.parse(v)?,
                Opt::Timeout => c.timeout = TIMEOUT.parse(v)?,
                Opt::UseTimerCache => c.use_timer_cache = true,
                Opt::Verbose => c.verbose = c.verbose.saturating_add(1),
                Opt::PeriodicStats => c.periodic_stats = true,
                Opt::Wlog => c.wlog = Some(parse_wlog(v)?),
                Opt::Wsess => {
                    let (sessions, calls, think) = parse_sess3(v, "wsess", WSESS_2ND)?;
                    c.wsess = Some(WsessSpec {
                        sessions,
                        calls,
                        think,
                    });
                }
                Opt::Wsesspage => {
                    let (sessions, pages, think) = parse_sess3(v, "wsesspage", WSESSPAGE_2ND)?;
                    c.wsesspage = Some(WsesspageSpec {
                        sessions,
                        pages,
                        think,
                    });
                }
                Opt::Wsesslog => c.wsesslog = Some(parse_wsesslog(v)?),
                Opt::Wset => c.wset = Some(parse_wset(v)?),
            }
        }
        c.apply_operands(&args, &mut port)?;
        c.check_call_rate(&args)?;
        if server_given {
            check_server_value(&c.server)?;
        }
        c.finish(port, server_given)?;
        c.until_runtime = c.runtime > 0.0
            && !args.given(Opt::NumConns)
            && c.wsess.is_none()
            && c.wsesslog.is_none()
            && c.wsesspage.is_none()
            && c.call_rate == 0.0;
        c.calls_until_runtime = c.call_rate > 0.0 && c.runtime > 0.0 && !args.given(Opt::NumCalls);
        Ok(c)
    }

    /// Non-option arguments: an `http://`/`https://` URL sets the server, port, URI
    /// and TLS (an option error next to `--server`, `--servers` or `--uri`, or next to
    /// `--port` when it has a port of its own); anything else is ignored, as httperf
    /// does, with a warning on stderr.
    fn apply_operands(&mut self, args: &Args, port: &mut Option<u16>) -> Result<(), Error> {
        let mut url: Option<TargetUrl> = None;
        for op in &args.operands {
            match operand::parse_url(&op.text) {
                None => eprintln!("{}: warning: {}", cli::PROG, operand::warning(op)),
                Some(Err(m)) => return Err(usage(m)),
                Some(Ok(_)) if url.is_some() => {
                    return Err(usage(format!(
                        "more than one URL ({} and {}); use --servers FILE for several servers",
                        url.as_ref().map_or("", |u| u.text.as_str()),
                        op.text
                    )))
                }
                Some(Ok(u)) => url = Some(u),
            }
        }
        let Some(u) = url else {
            return Ok(());
        };
        if let Some((opt, _)) = args
            .opts
            .iter()
            .find(|(o, _)| operand::conflicts_with_url(*o))
        {
            return Err(usage(format!(
                "the URL {} names the server, port and URI: give it or {}, not both",
                u.text,
                opt.long_name()
            )));
        }
        if port.is_some() && u.port.is_some() {
            return Err(usage(format!(
                "the URL {} has a port: give it or --port, not both",
                u.text
            )));
        }
        if self.ssl && !u.tls {
            return Err(usage(format!(
                "--ssl with an http:// URL: use https://{}",
                &u.text["http://".len()..]
            )));
        }
        self.server = u.host.clone();
        self.uri = u.uri.clone();
        self.ssl |= u.tls;
        if port.is_none() {
            *port = Some(u.port_or_default());
        }
        Ok(())
    }

    /// Checks between options, defaults that depend on other options, resolution.
    fn finish(&mut self, port: Option<u16>, server_given: bool) -> Result<(), Error> {
        let sessions = [
            self.wsess.is_some(),
            self.wsesslog.is_some(),
            self.wsesspage.is_some(),
        ];
        let n_sessions = sessions.iter().filter(|s| **s).count();
        if n_sessions > 1 {
            return Err(usage(
                "only one of --wsess, --wsesslog, --wsesspage may be given".into(),
            ));
        }
        if self.json.as_deref() == Some("-")
            && (self.print_request.is_some() || self.print_reply.is_some())
        {
            return Err(usage(
                "--json=- cannot be combined with --print-request or --print-reply (both write to stdout)".into(),
            ));
        }
        // httperf's session_init limits: connections per session, and its ring of
        // pending calls per connection (checked in that order).
        if n_sessions > 0 && self.max_connections > SESSION_MAX_CONNS {
            return Err(Error::Getopt(format!(
                "{}.session_init: --max-conns must be <= {SESSION_MAX_CONNS}",
                cli::PROG
            )));
        }
        if n_sessions > 0 && self.max_piped_calls > SESSION_MAX_PIPED {
            return Err(Error::Getopt(format!(
                "{}.session_init: --max-piped-calls must be <= {SESSION_MAX_PIPED}",
                cli::PROG
            )));
        }
        if self.session_cookies && n_sessions == 0 {
            return Err(usage(
                "--session-cookie requires session-oriented workload (e.g., --wsess)".into(),
            ));
        }
        if server_given && self.servers.is_some() {
            return Err(usage("--server S or --servers file, not both".into()));
        }
        self.check_concurrency()?;
        self.check_extensions()?;
        if self.tls_server_name.is_some() && !self.ssl {
            return Err(usage(
                "--tls-server-name requires --ssl (or --ssl-protocol)".into(),
            ));
        }
        if self.body_file.is_some() && !self.method_given {
            // A body is sent with POST unless --method says otherwise (as ab's -p).
            self.method = "POST".to_string();
        }
        self.port = port.unwrap_or(if self.ssl { 443 } else { 80 });
        let host_source = self.server_name.as_deref().unwrap_or(&self.server);
        self.host = host_value(host_source);
        if self.unix_socket.is_some() {
            // Nothing to resolve: the socket path is the address; `--server` only
            // names the Host:. The placeholder keeps `addrs` non-empty.
            self.addrs = vec![SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), self.port)];
        } else if self.servers.is_none() {
            self.addrs = resolve(&self.server, self.port)?;
        }
        Ok(())
    }

    /// `--call-rate R`: sets the call schedule (`--period`'s distribution, whose mean
    /// must then be 1/R, else every 1/R s) and refuses what it cannot be combined with.
    fn check_call_rate(&mut self, args: &Args) -> Result<(), Error> {
        if self.call_rate == 0.0 {
            return Ok(());
        }
        let r = self.call_rate;
        let refuse = |what: &str| {
            Err(usage(format!(
                "--call-rate schedules calls over a pool of --num-conns connections: {what}"
            )))
        };
        if args.given(Opt::Rate) {
            return refuse("--rate (connections per second) does not apply; give one of them");
        }
        if self.concurrency > 0 {
            return refuse("--concurrency (a closed loop) does not apply; give one of them");
        }
        if self.wsess.is_some() || self.wsesslog.is_some() || self.wsesspage.is_some() {
            return refuse("sessions (--wsess, --wsesslog, --wsesspage) are not supported");
        }
        if self.http_version == HttpVersion::V10 {
            return refuse("HTTP/1.0 closes after every reply; use --http-version 1.1 or 2");
        }
        if self.max_connections > 0 {
            return refuse("--max-connections does not apply (the pool is --num-conns)");
        }
        let engines = u64::from(self.threads.max(1)) * u64::from(self.partition.1.max(1));
        if self.num_conns < engines {
            return Err(usage(format!(
                "--call-rate: --num-conns {} is less than the number of engines ({engines}: \
                 --threads times the --partition count); every engine needs a connection",
                self.num_conns
            )));
        }
        if args.given(Opt::Period) {
            let mean = self.period.mean();
            if mean <= 0.0 || (mean * r - 1.0).abs() > 1e-3 {
                return Err(usage(format!(
                    "--call-rate {} and --period: the period's mean must be 1/R = {} s \
                     (it is {} s); e.g. --period e{}",
                    cfmt::g(r),
                    cfmt::g(1.0 / r),
                    cfmt::g(mean),
                    cfmt::g(1.0 / r)
                )));
            }
        } else {
            self.period = Period::Deterministic(1.0 / r);
        }
        Ok(())
    }

    /// Combinations of rshperf's transport, body and metrics options.
    fn check_extensions(&self) -> Result<(), Error> {
        if self.unix_socket.is_some() {
            let clash = [
                (self.servers.is_some(), "--servers"),
                (!self.myaddr.is_empty(), "--myaddr"),
                (self.hog, "--hog"),
            ];
            if let Some((_, opt)) = clash.iter().find(|(given, _)| *given) {
                return Err(usage(format!(
                    "--unix-socket connects to one socket file: not with {opt}"
                )));
            }
        }
        if self.body_file.is_some() && self.wsesspage.is_some() {
            return Err(usage(
                "--body-file with --wsesspage would send the body with every embedded object"
                    .into(),
            ));
        }
        if self.body_file.is_some() && self.wsesslog.is_some() {
            return Err(usage(
                "--body-file with --wsesslog: give each request's body with contents= in the session file"
                    .into(),
            ));
        }
        if self.metrics_linger > 0.0 && self.metrics_listen.is_none() {
            return Err(usage("--metrics-linger needs --metrics-listen".into()));
        }
        Ok(())
    }

    /// `--concurrency` replaces the arrival process and needs a user per engine.
    fn check_concurrency(&self) -> Result<(), Error> {
        if self.concurrency == 0 {
            return Ok(());
        }
        if !matches!(self.period, Period::Sequential) {
            return Err(usage(
                "--concurrency runs a closed loop: give it or --rate/--period, not both".into(),
            ));
        }
        let engines = u64::from(self.threads.max(1)) * u64::from(self.partition.1.max(1));
        if self.concurrency < engines {
            return Err(usage(format!(
                "--concurrency {} is less than the number of engines ({engines}: --threads \
                 times the --partition count); every engine needs at least one user",
                self.concurrency
            )));
        }
        Ok(())
    }

    /// Parses `argv` (program name first) and builds the configuration; `-h` and `-V`
    /// are errors here. A convenience for tests and tools.
    pub fn from_argv(argv: &[&str]) -> Result<Config, Error> {
        let owned: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        match cli::parse(&owned)? {
            Command::Run(args) => Config::from_args(args),
            Command::Help(_) | Command::Version(_) => Err(usage(
                "-h/--help and -V/--version do not describe a run".into(),
            )),
        }
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

    /// The command-line echo printed first (docs/compatibility.md §2.2, httperf 0.9.0
    /// layout plus master items only when their options are given, then ` --threads=N`
    /// if N > 1), without the trailing newline.
    pub fn echo_line(&self) -> String {
        let mut s = self.prog.clone();
        let mut add = |item: String| {
            s.push(' ');
            s.push_str(&item);
        };
        if self.verbose > 0 {
            add("--verbose".into());
        }
        for (what, name) in [
            (self.print_reply, "--print-reply"),
            (self.print_request, "--print-request"),
        ] {
            match what {
                None => {}
                Some(PrintWhat::Header) => add(format!("{name}=header")),
                Some(PrintWhat::Body) => add(format!("{name}=body")),
                Some(PrintWhat::Both) => add(name.to_string()),
            }
        }
        if self.hog {
            add("--hog".into());
        }
        if self.close_with_reset {
            add("--close-with-reset".into());
        }
        if self.think_timeout > 0.0 {
            add(format!("--think-timeout={}", cfmt::g(self.think_timeout)));
        }
        if self.timeout > 0.0 {
            add(format!("--timeout={}", cfmt::g(self.timeout)));
        }
        if self.runtime > 0.0 {
            add(format!("--runtime={}", cfmt::g(self.runtime)));
        }
        add(format!("--client={}/{}", self.client_id, self.num_clients));
        if self.servers.is_none() {
            add(format!("--server={}", self.server));
        }
        if let Some(name) = &self.server_name {
            add(format!("--server_name={name}"));
        }
        if let Some(file) = &self.servers {
            add(format!("--servers={file}"));
        }
        add(format!("--port={}", self.port));
        add(format!("--uri={}", self.uri));
        if self.failure_status != 0 {
            add(format!("--failure-status={}", self.failure_status));
        }
        match self.http_version {
            HttpVersion::V10 => add("--http-version=1.0".into()),
            HttpVersion::V11 => {}
            HttpVersion::V2 => add("--http-version=2".into()),
        }
        if self.max_connections != 0 {
            add(format!("--max-connections={}", self.max_connections));
        }
        if self.max_piped_calls != 0 {
            add(format!("--max-piped-calls={}", self.max_piped_calls));
        }
        match &self.period {
            Period::Sequential => {}
            // `--call-rate R` alone is its own schedule (echoed below).
            Period::Deterministic(_) if self.call_rate > 0.0 => {}
            Period::Deterministic(p) => add(format!("--rate={}", cfmt::g(1.0 / p))),
            Period::Uniform(lo, hi) => {
                add(format!("--period=u{},{}", cfmt::g(*lo), cfmt::g(*hi)));
            }
            Period::Exponential(mean) => add(format!("--period=e{}", cfmt::g(*mean))),
            Period::Variable(pairs) => {
                let list: Vec<String> = pairs
                    .iter()
                    .map(|(t, d)| format!("{},{}", cfmt::g(*t), cfmt::g(*d)))
                    .collect();
                add(format!("--period=v{}", list.join(",")));
            }
        }
        add(format!("--send-buffer={}", self.send_buffer));
        if self.retry_on_failure {
            add("--retry-on-failure".into());
        }
        add(format!("--recv-buffer={}", self.recv_buffer));
        if self.session_cookies {
            add("--session-cookies".into());
        }
        if self.ssl {
            add("--ssl".into());
        }
        if let Some(ciphers) = &self.ssl_ciphers {
            add(format!("--ssl-ciphers={ciphers}"));
        }
        if let Some(name) = &self.tls_server_name {
            add(format!("--tls-server-name={name}"));
        }
        if self.ssl_no_reuse {
            add("--ssl-no-reuse".into());
        }
        if let Some(f) = &self.ssl_certificate {
            add(format!("--ssl-cert={f}"));
        }
        if let Some(f) = &self.ssl_key {
            add(format!("--ssl-key={f}"));
        }
        if let Some(f) = &self.ssl_ca_file {
            add(format!("--ssl-ca-file={f}"));
        }
        if let Some(p) = &self.ssl_ca_path {
            add(format!("--ssl-ca-path={p}"));
        }
        if self.ssl_verify {
            add("--ssl-verify".into());
        }
        if let Some(p) = self.ssl_protocol {
            add(format!("--ssl-protocol={}", p.name()));
        }
        if let Some(raw) = &self.add_header_raw {
            add(format!("--add-header='{raw}'"));
        }
        if let Some(f) = &self.add_header_file {
            add(format!("--add-header-file='{f}'"));
        }
        if self.method_given {
            add(format!("--method={}", self.method));
        }
        if self.use_timer_cache {
            add("--use-timer-cache".into());
        }
        if let Some(w) = &self.wsesslog {
            add(format!(
                "--wsesslog={},{},{}",
                w.sessions,
                cfmt::fixed(w.think, 3),
                w.file
            ));
        } else if let Some(w) = &self.wsesspage {
            add(format!(
                "--wsesspage={},{},{}",
                w.sessions,
                w.pages,
                cfmt::fixed(w.think, 3)
            ));
        } else {
            if let Some(w) = &self.wsess {
                add(format!(
                    "--wsess={},{},{}",
                    w.sessions,
                    w.calls,
                    cfmt::fixed(w.think, 3)
                ));
            } else {
                add(format!("--num-conns={}", self.num_conns));
                add(format!("--num-calls={}", self.num_calls));
            }
            if self.burst_length != 1 {
                add(format!("--burst-length={}", self.burst_length));
            }
            if let Some(w) = &self.wset {
                add(format!(
                    "--wset={},{}",
                    w.files,
                    cfmt::fixed(w.miss_rate, 3)
                ));
            }
        }
        if self.periodic_stats {
            add("--periodic-stats".into());
        }
        if self.partition.1 > 1 {
            add(format!(
                "--partition={}/{}",
                self.partition.0, self.partition.1
            ));
        }
        if self.threads > 1 {
            add(format!("--threads={}", self.threads));
        }
        if self.concurrency > 0 {
            add(format!("--concurrency={}", self.concurrency));
        }
        for item in self.pacing.echo_items() {
            add(item);
        }
        if self.call_rate > 0.0 {
            add(format!("--call-rate={}", cfmt::g(self.call_rate)));
        }
        if let Some(p) = &self.unix_socket {
            add(format!("--unix-socket={p}"));
        }
        if let Some(f) = &self.body_file {
            add(format!("--body-file={f}"));
        }
        if let Some(t) = &self.content_type {
            add(format!("--content-type='{t}'"));
        }
        if let Some(f) = &self.header_file {
            add(format!("--header-file={f}"));
        }
        s
    }
}

fn usage(text: String) -> Error {
    Error::Usage(text)
}

/// A positive number of seconds as a Duration (at least 1 ns, saturating), else None.
fn seconds(x: f64) -> Option<Duration> {
    (x > 0.0).then(|| {
        Duration::try_from_secs_f64(x)
            .unwrap_or(Duration::MAX)
            .max(Duration::from_nanos(1))
    })
}

/// Values come from rules whose maximum fits; saturate rather than panic anyway.
fn to_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn to_u16(v: u64) -> u16 {
    u16::try_from(v).unwrap_or(u16::MAX)
}

/// The `Host:` value for a server string: cut at CR/LF, IPv6 literals bracketed.
fn host_value(s: &str) -> String {
    let s = s.split(['\r', '\n']).next().unwrap_or("");
    let addr_part = s.split('%').next().unwrap_or(s);
    if addr_part.parse::<Ipv6Addr>().is_ok() {
        format!("[{s}]")
    } else {
        s.to_string()
    }
}

/// `--server` takes a host name or address: `127.0.0.1:8080` or a URL is a mistake
/// worth explaining (httperf fails it as an unresolvable name).
fn check_server_value(server: &str) -> Result<(), Error> {
    if operand::parse_url(server).is_some() {
        return Err(usage(format!(
            "--server takes a host name, not a URL: give the URL on its own \
             (rshperf {server} ...) or --server, --port and --uri"
        )));
    }
    let bare = server.strip_prefix('[').and_then(|s| s.split_once(']'));
    let (host, port) = match bare {
        Some((h, rest)) => (h, rest.strip_prefix(':').unwrap_or("")),
        None if server.parse::<Ipv6Addr>().is_ok() => return Ok(()),
        None => server.rsplit_once(':').unwrap_or((server, "")),
    };
    if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
        let shown = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        return Err(usage(format!(
            "--server {server}: --server takes no port; use --server {host} --port {port} \
             (or the URL http://{shown}:{port}/)"
        )));
    }
    Ok(())
}

/// Resolves `server` (host name, IPv4 literal, IPv6 literal with or without brackets)
/// at `port`, keeping every address in resolver order.
fn resolve(server: &str, port: u16) -> Result<Vec<SocketAddr>, Error> {
    let bare = server
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(server);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let fail = |reason: String| {
        Error::Startup(format!(
            "cannot resolve server address '{server}': {reason}"
        ))
    };
    if bare.is_empty() {
        return Err(fail("empty host name".into()));
    }
    let addrs: Vec<SocketAddr> = (bare, port)
        .to_socket_addrs()
        .map_err(|e| fail(e.to_string()))?
        .collect();
    if addrs.is_empty() {
        return Err(fail("no addresses found".into()));
    }
    Ok(addrs)
}

/// `--print-reply`/`--print-request` argument: only the first letter counts.
fn print_what(arg: Option<&str>) -> PrintWhat {
    match arg
        .and_then(|a| a.chars().next())
        .map(|c| c.to_ascii_lowercase())
    {
        Some('h') => PrintWhat::Header,
        Some('b') => PrintWhat::Body,
        _ => PrintWhat::Both,
    }
}

/// `--ssl-verify[=yes|no]`: no argument or `y…` is yes, anything else no.
fn yes_no(arg: Option<&str>) -> bool {
    match arg {
        None => true,
        Some(a) => a.starts_with(['y', 'Y']),
    }
}

fn parse_ssl_protocol(arg: &str) -> Result<SslProtocol, Error> {
    match arg.to_ascii_lowercase().as_str() {
        "auto" => Ok(SslProtocol::Auto),
        "tlsv1" | "tlsv1.0" | "tlsv1_0" => Ok(SslProtocol::Tls10),
        "tlsv1.1" | "tlsv1_1" => Ok(SslProtocol::Tls11),
        "tlsv1.2" | "tlsv1_2" => Ok(SslProtocol::Tls12),
        "tlsv1.3" | "tlsv1_3" => Ok(SslProtocol::Tls13),
        "sslv2" | "sslv3" => Err(usage(format!(
            "illegal SSL protocol {arg} (SSLv2 and SSLv3 are not supported; \
             expected auto, TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3)"
        ))),
        _ => Err(usage(format!("illegal SSL protocol {arg}"))),
    }
}

/// `--http-version`: httperf's `%u.%u`, then only 1.0 and 1.1; and rshperf's `2`
/// (also `2.0`), which httperf rejects as an illegal version number.
fn parse_http_version(arg: &str) -> Result<HttpVersion, Error> {
    if arg == "2" || arg == "2.0" {
        return Ok(HttpVersion::V2);
    }
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let nmaj = digits(arg);
    let after = &arg[nmaj..];
    let minor_text = after.strip_prefix('.').unwrap_or("");
    let nmin = digits(minor_text);
    if nmaj == 0 || !after.starts_with('.') || nmin == 0 {
        return Err(usage(format!("illegal version number {arg}")));
    }
    let num = |s: &str| s.parse::<u64>().unwrap_or(u64::MAX);
    let version = (num(&arg[..nmaj]), num(&minor_text[..nmin]));
    match (version, minor_text.len() == nmin) {
        ((1, 0), true) => Ok(HttpVersion::V10),
        ((1, 1), true) => Ok(HttpVersion::V11),
        _ => Err(usage(format!(
            "unsupported HTTP version {arg} (expected 1.0, 1.1 or 2)"
        ))),
    }
}

/// `--wlog=B,F`: B `y`/`Y` loops; the comma and a file name are required
/// (compatibility.md, bug 20).
fn parse_wlog(arg: &str) -> Result<WlogSpec, Error> {
    let mut chars = arg.chars();
    let flag = chars.next();
    let rest = chars.as_str();
    match (flag, rest.strip_prefix(',')) {
        (Some(b), Some(file)) if !file.is_empty() => Ok(WlogSpec {
            repeat: b == 'y' || b == 'Y',
            file: file.to_string(),
        }),
        _ => Err(usage(format!(
            "illegal --wlog argument {arg} (expected y,FILE or n,FILE)"
        ))),
    }
}

/// `--add-header` escape processing (docs/compatibility.md §1.2): returns the bytes and
/// the warnings (without the program-name prefix) for unknown escapes.
pub fn unescape_header(raw: &str) -> (Vec<u8>, Vec<String>) {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len() + 2);
    let mut warnings = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        match b.get(i) {
            None => {
                warnings.push("ignoring trailing `\\' in --add-header".to_string());
                out.push(b'\\');
            }
            Some(b'\\') => {
                out.push(b'\\');
                i += 1;
            }
            Some(b'a') => {
                out.push(b'\n');
                i += 1;
            }
            Some(b'r') => {
                out.push(b'\r');
                i += 1;
            }
            Some(b'n') => {
                out.extend_from_slice(b"\r\n");
                i += 1;
            }
            Some(b'0'..=b'7') => {
                // strtol(…, 8) over the maximal octal run; the long is stored in a char.
                let mut v: u64 = 0;
                while let Some(d @ b'0'..=b'7') = b.get(i) {
                    v = v.saturating_mul(8).saturating_add(u64::from(d - b'0'));
                    i += 1;
                }
                out.push((v.min(i64::MAX as u64) & 0xff) as u8);
            }
            Some(_) => {
                let c = raw[i..].chars().next().unwrap_or('\\');
                warnings.push(format!(
                    "ignoring unknown escape sequence `\\{c}' in --add-header"
                ));
                out.extend_from_slice(&b[i..i + c.len_utf8()]);
                i += c.len_utf8();
            }
        }
    }
    (out, warnings)
}

// ---------------------------------------------------------------------------------
// Numbers. httperf parses with strtoul/strtod; rshperf is stricter: integers are
// decimal digits only (`--client` and the session options: C base-0 digits only),
// floats are Rust floats and never NaN or infinite. When httperf would have accepted
// a value that rshperf rejects, the message says what is expected; values httperf
// rejects too get httperf's exact message.

/// C `isspace`.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// What `strtoul(s, &end, 10)` with `*end == 0` and no ERANGE yields, if anything.
fn c_strtoul10(s: &str) -> Option<u64> {
    let t = s.trim_start_matches(is_c_space);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v = t.parse::<u64>().ok()?;
    Some(if neg { v.wrapping_neg() } else { v })
}

/// A decimal-integer option: rshperf's range, httperf's range and messages.
struct IntRule {
    /// httperf's message prefix, e.g. `illegal number of connections`.
    what: &'static str,
    /// rshperf's accepted range.
    min: u64,
    max: u64,
    /// httperf's accepted range (empty: an rshperf-only option, always explained).
    c_min: u64,
    c_max: u64,
    /// What is expected, for values httperf accepted.
    expect: &'static str,
}

impl IntRule {
    fn parse(&self, arg: &str) -> Result<u64, Error> {
        let digits = !arg.is_empty() && arg.bytes().all(|b| b.is_ascii_digit());
        if let (true, Ok(v)) = (digits, arg.parse::<u64>()) {
            if (self.min..=self.max).contains(&v) {
                return Ok(v);
            }
        }
        let c_ok = c_strtoul10(arg).is_some_and(|v| (self.c_min..=self.c_max).contains(&v));
        if c_ok || self.c_min > self.c_max {
            Err(usage(format!("{} {arg} ({})", self.what, self.expect)))
        } else {
            Err(usage(format!("{} {arg}", self.what)))
        }
    }
}

const MAX_BUFFER: u64 = (1 << 31) - 1;

const NUM_CONNS: IntRule = IntRule {
    what: "illegal number of connections",
    min: 1,
    max: u64::MAX,
    c_min: 0,
    c_max: u64::MAX,
    expect: "expected an integer >= 1",
};
const NUM_CALLS: IntRule = IntRule {
    what: "illegal number of calls",
    ..NUM_CONNS
};
const BURST_LENGTH: IntRule = IntRule {
    what: "illegal burst-length",
    c_min: 1,
    ..NUM_CONNS
};
const PORT: IntRule = IntRule {
    what: "illegal port number",
    min: 1,
    max: 65535,
    c_min: 0,
    c_max: 65535,
    expect: "expected an integer from 1 to 65535",
};
const SEND_BUFFER: IntRule = IntRule {
    what: "illegal send buffer size",
    min: 1,
    max: MAX_BUFFER,
    c_min: 0,
    c_max: u64::MAX,
    expect: "expected an integer from 1 to 2147483647",
};
const RECV_BUFFER: IntRule = IntRule {
    what: "illegal receive buffer size",
    ..SEND_BUFFER
};
const MAX_CONNECTIONS: IntRule = IntRule {
    what: "illegal max. # of connection",
    min: 0,
    max: u64::MAX,
    c_min: 0,
    c_max: u64::MAX,
    expect: "expected an integer >= 0",
};
/// Most connections of one session (httperf's MAX_CONN).
pub const SESSION_MAX_CONNS: u64 = 4;
/// Most pipelined calls per connection of a session workload (httperf's MAX_PIPED).
pub const SESSION_MAX_PIPED: u64 = 32;

const MAX_PIPED_CALLS: IntRule = IntRule {
    what: "illegal max. # of piped calls",
    ..MAX_CONNECTIONS
};
const FAILURE_STATUS: IntRule = IntRule {
    what: "illegal failure status",
    min: 100,
    max: 999,
    c_min: 1,
    c_max: u64::MAX,
    expect: "expected an HTTP status code from 100 to 999",
};
const DEBUG: IntRule = IntRule {
    what: "illegal debug level",
    max: u32::MAX as u64,
    expect: "expected an integer from 0 to 4294967295",
    ..MAX_CONNECTIONS
};
const THREADS: IntRule = IntRule {
    what: "illegal number of threads",
    min: 1,
    max: 1024,
    c_min: 1,
    c_max: 0,
    expect: "expected an integer from 1 to 1024",
};

const CALL_RATE: FloatRule = FloatRule {
    what: "illegal call rate",
    ok: |v| v > 0.0 && (1.0 / v).is_finite() && v <= 1e9,
    c_ok: any,
    expect: "expected a number of calls per second > 0 and <= 1e9",
};

const CONCURRENCY: IntRule = IntRule {
    what: "illegal concurrency",
    min: 1,
    max: 1_000_000,
    c_min: 1,
    c_max: 0,
    expect: "expected an integer from 1 to 1000000",
};

/// The longest prefix of `s` that C `strtod` would convert (decimal forms, `inf`,
/// `infinity`, `nan`, with an optional sign; no leading blanks, no hex floats), as
/// (value, bytes used); None when nothing converts.
fn strtod_prefix(s: &str) -> Option<(f64, usize)> {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let lower = s[i..].to_ascii_lowercase();
    if lower.starts_with("infinity") {
        i += 8;
    } else if lower.starts_with("inf") || lower.starts_with("nan") {
        i += 3;
    } else {
        let digits = |mut j: usize| {
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            j
        };
        let int_end = digits(i);
        let mut end = int_end;
        let mut frac = 0;
        if b.get(end) == Some(&b'.') {
            let frac_end = digits(end + 1);
            frac = frac_end - (end + 1);
            end = frac_end;
        }
        if int_end == i && frac == 0 {
            return None;
        }
        if matches!(b.get(end), Some(b'e' | b'E')) {
            let mut j = end + 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let exp_end = digits(j);
            if exp_end > j {
                end = exp_end;
            }
        }
        i = end;
    }
    s[..i].parse::<f64>().ok().map(|v| (v, i))
}

/// What `strtod(s, &end)` with `*end == 0` and no ERANGE yields, if anything.
fn c_strtod(s: &str) -> Option<f64> {
    let t = s.trim_start_matches(is_c_space);
    let (v, used) = strtod_prefix(t)?;
    let overflow = v.is_infinite() && !t.to_ascii_lowercase().contains("inf");
    (used == t.len() && !overflow).then_some(v)
}

/// A floating-point option: rshperf's acceptance test, httperf's, and messages.
struct FloatRule {
    what: &'static str,
    ok: fn(f64) -> bool,
    c_ok: fn(f64) -> bool,
    expect: &'static str,
}

impl FloatRule {
    fn parse(&self, arg: &str) -> Result<f64, Error> {
        if let Ok(v) = arg.parse::<f64>() {
            if v.is_finite() && (self.ok)(v) {
                return Ok(v);
            }
        }
        if c_strtod(arg).is_some_and(self.c_ok) {
            Err(usage(format!("{} {arg} ({})", self.what, self.expect)))
        } else {
            Err(usage(format!("{} {arg}", self.what)))
        }
    }
}

fn non_negative(v: f64) -> bool {
    v >= 0.0
}
fn positive(v: f64) -> bool {
    v > 0.0
}
fn any(_: f64) -> bool {
    true
}
/// httperf tests `runtime <= 0`, which lets NaN through.
fn c_runtime_ok(v: f64) -> bool {
    v > 0.0 || v.is_nan()
}

const RATE: FloatRule = FloatRule {
    what: "illegal request rate",
    ok: non_negative,
    c_ok: any,
    expect: "expected a number >= 0; 0 means sequential",
};
const TIMEOUT: FloatRule = FloatRule {
    what: "illegal connect timeout",
    ok: non_negative,
    c_ok: any,
    expect: "expected a number of seconds >= 0; 0 means none",
};
const THINK_TIMEOUT: FloatRule = FloatRule {
    what: "illegal think timeout value",
    expect: "expected a number of seconds >= 0",
    ..TIMEOUT
};
const METRICS_LINGER: FloatRule = FloatRule {
    what: "illegal metrics linger",
    ok: non_negative,
    c_ok: non_negative,
    expect: "expected a number of seconds >= 0",
};
const RUNTIME: FloatRule = FloatRule {
    what: "illegal runtime value",
    ok: positive,
    c_ok: c_runtime_ok,
    expect: "expected a number of seconds > 0",
};

/// `--rate X`: deterministic spacing 1/X; 0 means sequential.
fn parse_rate(arg: &str) -> Result<Period, Error> {
    let rate = RATE.parse(arg)?;
    if rate == 0.0 {
        return Ok(Period::Sequential);
    }
    let period = 1.0 / rate;
    if !period.is_finite() {
        return Err(usage(format!(
            "illegal request rate {arg} ({})",
            RATE.expect
        )));
    }
    Ok(Period::Deterministic(period))
}

/// One seconds value inside `--period`: httperf's message for what httperf rejects
/// (no number, negative), with an explanation for what only rshperf rejects.
fn period_value(text: &str, what: &str, strictly_positive: bool) -> Result<(f64, usize), Error> {
    let base = || usage(format!("{what} {text}"));
    let (v, used) = strtod_prefix(text).ok_or_else(base)?;
    if v < 0.0 {
        return Err(base());
    }
    if !v.is_finite() || (strictly_positive && v == 0.0) {
        let expect = if strictly_positive { ">" } else { ">=" };
        return Err(usage(format!(
            "{what} {text} (expected a number of seconds {expect} 0)"
        )));
    }
    Ok((v, used))
}

/// `--period=[D]T1[,T2]` and master's `vT1,D1,…` (docs/compatibility.md §1.2),
/// stricter: no trailing junk, T2 >= T1 for `u`, positive times and durations for `v`.
fn parse_period(arg: &str) -> Result<Period, Error> {
    let first = arg.chars().next();
    let (dist, rest) = match first {
        Some(c) if c.is_ascii_digit() => ('d', arg),
        Some(c) if matches!(c.to_ascii_lowercase(), 'd' | 'u' | 'e' | 'v') => {
            (c.to_ascii_lowercase(), &arg[1..])
        }
        _ => {
            let c = first.map(String::from).unwrap_or_default();
            return Err(usage(format!(
                "illegal interarrival distribution '{c}' in {arg}"
            )));
        }
    };
    match dist {
        'd' | 'e' => {
            let what = "illegal mean interarrival time";
            let (mean, used) = period_value(rest, what, false)?;
            if used != rest.len() {
                return Err(usage(format!("{what} {rest}")));
            }
            Ok(match (mean > 0.0, dist) {
                (false, _) => Period::Sequential,
                (true, 'd') => Period::Deterministic(mean),
                (true, _) => Period::Exponential(mean),
            })
        }
        'u' => {
            let (lo, used) = period_value(rest, "illegal minimum interarrival time", false)?;
            let after = &rest[used..];
            let Some(max_text) = after.strip_prefix(',') else {
                return Err(usage(format!(
                    "minimum interarrival time not followed by `,MAX_IAT' (rest: `{after}')"
                )));
            };
            let what = "illegal request period";
            let (hi, used) = period_value(max_text, what, false)?;
            if used != max_text.len() {
                return Err(usage(format!("{what} {max_text}")));
            }
            if hi < lo {
                return Err(usage(format!(
                    "{what} {max_text} (expected a maximum >= the minimum {})",
                    cfmt::g(lo)
                )));
            }
            Ok(if lo + hi > 0.0 {
                Period::Uniform(lo, hi)
            } else {
                Period::Sequential
            })
        }
        _ => {
            const NUM_RATES: usize = 16;
            let mut pairs = Vec::new();
            let mut rest = rest;
            loop {
                if pairs.len() >= NUM_RATES {
                    return Err(usage("too many rates".into()));
                }
                let (t, used) = period_value(rest, "illegal minimum interarrival time", true)?;
                let after = &rest[used..];
                let Some(dur_text) = after.strip_prefix(',') else {
                    return Err(usage(format!(
                        "interarrival time not followed by `,duration' (rest: `{after}')"
                    )));
                };
                let (d, used) = period_value(dur_text, "illegal duration", true)?;
                pairs.push((t, d));
                let after = &dur_text[used..];
                if after.is_empty() {
                    return Ok(Period::Variable(pairs));
                }
                match after.strip_prefix(',') {
                    Some(next) => rest = next,
                    None => return Err(usage(format!("illegal duration {dur_text}"))),
                }
            }
        }
    }
}

/// C `strtoul(s, &end, 0)` restricted to digits (no blanks, no sign).
enum Uint0 {
    /// No digits at the start.
    Empty,
    /// Value and bytes used.
    Value(u64, usize),
    /// Too large (ERANGE); bytes of the digit run.
    Overflow(usize),
}

fn uint0_prefix(s: &str) -> Uint0 {
    let b = s.as_bytes();
    let hex =
        b.len() > 2 && b[0] == b'0' && matches!(b[1], b'x' | b'X') && b[2].is_ascii_hexdigit();
    let (radix, start) = match (hex, b.first()) {
        (true, _) => (16, 2),
        (false, Some(b'0')) => (8, 0),
        _ => (10, 0),
    };
    let run = b[start..]
        .iter()
        .take_while(|c| char::from(**c).is_digit(radix))
        .count();
    if run == 0 {
        return Uint0::Empty;
    }
    let end = start + run;
    match u64::from_str_radix(&s[start..end], radix) {
        Ok(v) => Uint0::Value(v, end),
        Err(_) => Uint0::Overflow(end),
    }
}

/// `--client=I/N` with I < N.
fn parse_client(arg: &str) -> Result<(u32, u32), Error> {
    let id = match uint0_prefix(arg) {
        Uint0::Value(v, used) if v <= u64::from(u32::MAX) => Some((v, used)),
        _ => None,
    };
    let Some((id, used)) = id else {
        return Err(usage(format!("bad client id (rest: `{arg}')")));
    };
    let after = &arg[used..];
    let Some(n_text) = after.strip_prefix('/') else {
        return Err(usage(format!(
            "client id not followed by `/' (rest: `{after}')"
        )));
    };
    match uint0_prefix(n_text) {
        Uint0::Value(n, used) if used == n_text.len() && id < n && n <= u64::from(u32::MAX) => {
            Ok((to_u32(id), to_u32(n)))
        }
        _ => Err(usage(format!("bad number of clients (rest: `{n_text}')"))),
    }
}

const ERANGE_TEXT: &str = ": Numerical result out of range";

/// A count inside a session option (base 0, at least 1): value and bytes used, or the
/// error for `reason`, built by `fail(reason, rest, suffix)`.
fn session_count(
    text: &str,
    reason: &str,
    fail: &dyn Fn(&str, &str, &str) -> Error,
) -> Result<(u64, usize), Error> {
    match uint0_prefix(text) {
        Uint0::Empty => Err(fail(reason, text, "")),
        Uint0::Overflow(end) => Err(fail(reason, &text[end..], ERANGE_TEXT)),
        Uint0::Value(0, _) => Err(fail(reason, text, " (expected an integer >= 1)")),
        Uint0::Value(v, used) => Ok((v, used)),
    }
}

/// A think time inside a session option: value and bytes used.
fn session_think(
    text: &str,
    reason: &str,
    fail: &dyn Fn(&str, &str, &str) -> Error,
) -> Result<(f64, usize), Error> {
    match strtod_prefix(text) {
        None => Err(fail(reason, text, "")),
        Some((v, used)) if v < 0.0 => Err(fail(reason, &text[used..], "")),
        Some((v, used)) if !v.is_finite() => Err(fail(
            reason,
            &text[used..],
            " (expected a number of seconds >= 0)",
        )),
        Some(ok) => Ok(ok),
    }
}

const WSESS_2ND: &str = "bad number of calls per session (2nd param)";
const WSESSPAGE_2ND: &str = "bad number of user requests per session (2nd param)";

/// `--wsess=N1,N2,X` / `--wsesspage=N1,N2,X`.
fn parse_sess3(arg: &str, option: &str, second: &str) -> Result<(u64, u64, f64), Error> {
    let fail = |reason: &str, rest: &str, suffix: &str| {
        usage(format!(
            "{reason} in --{option} arg (rest: `{rest}'){suffix}"
        ))
    };
    let (n1, used) = session_count(arg, "bad number of sessions (1st param)", &fail)?;
    let after = &arg[used..];
    let Some(text) = after.strip_prefix(',') else {
        return Err(fail(second, after, ""));
    };
    let (n2, used) = session_count(text, second, &fail)?;
    let third = "bad user think time (3rd param)";
    let after = &text[used..];
    let Some(text) = after.strip_prefix(',') else {
        return Err(fail(third, after, ""));
    };
    let (think, used) = session_think(text, third, &fail)?;
    let after = &text[used..];
    if !after.is_empty() {
        return Err(fail("extraneous parameter", after, ""));
    }
    Ok((n1, n2, think))
}

/// `--wsesslog=N,X,F`.
fn parse_wsesslog(arg: &str) -> Result<WsesslogSpec, Error> {
    let fail = |reason: &str, rest: &str, suffix: &str| {
        usage(format!(
            "{reason} in --wsesslog arg (rest: `{rest}'){suffix}"
        ))
    };
    let (sessions, used) = session_count(arg, "bad number of sessions (1st param)", &fail)?;
    let second = "bad user think time (2nd param)";
    let after = &arg[used..];
    let Some(text) = after.strip_prefix(',') else {
        return Err(fail(second, after, ""));
    };
    let (think, used) = session_think(text, second, &fail)?;
    let third = "bad session filename (3rd param)";
    let after = &text[used..];
    let Some(text) = after.strip_prefix(',') else {
        return Err(fail(third, after, ""));
    };
    let (file, extra) = match text.split_once(',') {
        Some((f, rest)) => (f, Some(rest)),
        None => (text, None),
    };
    if file.is_empty() {
        return Err(fail(third, text, " (expected a file name)"));
    }
    if let Some(rest) = extra {
        return Err(fail("extraneous parameter", rest, ""));
    }
    Ok(WsesslogSpec {
        sessions,
        think,
        file: file.to_string(),
    })
}

/// `--wset=N,X` (the message quotes the text from the current parameter on).
fn parse_wset(arg: &str) -> Result<WsetSpec, Error> {
    let fail = |reason: &str, rest: &str, suffix: &str| {
        usage(format!("{reason} in --wset arg (rest: `{rest}'){suffix}"))
    };
    let first = "bad working set size (1st parameter)";
    let (files, used) = match uint0_prefix(arg) {
        Uint0::Empty => return Err(fail(first, arg, "")),
        Uint0::Overflow(_) => return Err(fail(first, arg, ERANGE_TEXT)),
        Uint0::Value(0, _) => return Err(fail(first, arg, " (expected an integer >= 1)")),
        Uint0::Value(v, used) => (v, used),
    };
    let second = "bad target miss rate (2nd parameter)";
    let Some(text) = arg[used..].strip_prefix(',') else {
        return Err(fail(second, arg, ""));
    };
    let (miss_rate, used) = match strtod_prefix(text) {
        Some((v, used)) if (0.0..=1.0).contains(&v) => (v, used),
        Some((v, _)) if v.is_nan() => {
            return Err(fail(second, text, " (expected a number from 0 to 1)"))
        }
        _ => return Err(fail(second, text, "")),
    };
    if used != text.len() {
        return Err(fail("extraneous parameter", text, ""));
    }
    Ok(WsetSpec { files, miss_rate })
}

/// A file-name argument that must not be empty.
/// `--content-type`: one header value, without line breaks.
fn parse_content_type(v: &str) -> Result<String, Error> {
    if v.trim().is_empty() || v.contains(['\r', '\n']) {
        return Err(usage(format!(
            "--content-type: '{}' is not a header value (one line, not empty)",
            v.escape_debug()
        )));
    }
    Ok(v.trim().to_string())
}

/// `--metrics-listen ADDR:PORT` (a host name is resolved, first address).
fn parse_listen(v: &str) -> Result<SocketAddr, Error> {
    let bad = || {
        usage(format!(
            "--metrics-listen: '{v}' is not ADDR:PORT (e.g. 127.0.0.1:9464)"
        ))
    };
    if let Ok(a) = v.parse::<SocketAddr>() {
        return Ok(a);
    }
    if !v.contains(':') {
        return Err(bad());
    }
    v.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(bad)
}

fn nonempty(v: &str, opt: &str) -> Result<String, Error> {
    if v.is_empty() {
        return Err(usage(format!("{opt} needs a file name (or - for stdout)")));
    }
    Ok(v.to_string())
}

/// `--partition=I/N`: decimal I < N, N from 1 to 1,000,000.
fn parse_partition(v: &str) -> Result<(u32, u32), Error> {
    let bad = || {
        usage(format!(
            "illegal partition {v} (expected I/N with 0 <= I < N, e.g. 0/4)"
        ))
    };
    let (i, n) = v.split_once('/').ok_or_else(bad)?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(i) || !digits(n) {
        return Err(bad());
    }
    let i: u32 = i.parse().map_err(|_| bad())?;
    let n: u32 = n.parse().map_err(|_| bad())?;
    if n == 0 || i >= n || n > 1_000_000 {
        return Err(bad());
    }
    Ok((i, n))
}

/// `--start-at=UNIX_SECONDS` or `+SECONDS`.
fn parse_start_at(v: &str) -> Result<StartAt, Error> {
    let bad = || {
        usage(format!(
            "illegal start time {v} (expected UNIX_SECONDS or +SECONDS)"
        ))
    };
    let (rel, num) = match v.strip_prefix('+') {
        Some(rest) => (true, rest),
        None => (false, v),
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(bad());
    }
    let x: f64 = num.parse().map_err(|_| bad())?;
    if !x.is_finite() || (rel && x > 86_400.0 * 7.0) {
        return Err(bad());
    }
    Ok(if rel {
        StartAt::After(x)
    } else {
        StartAt::Unix(x)
    })
}

#[cfg(test)]
mod rshperf_option_tests {
    use super::*;

    #[test]
    fn partition_and_start_at_parse_and_validate() {
        assert_eq!(parse_partition("0/4"), Ok((0, 4)));
        assert_eq!(parse_partition("3/4"), Ok((3, 4)));
        for bad in ["4/4", "1", "a/2", "-1/2", "1/0", "1/2x", ""] {
            assert!(parse_partition(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_start_at("+2"), Ok(StartAt::After(2.0)));
        assert_eq!(
            parse_start_at("1700000000.5"),
            Ok(StartAt::Unix(1_700_000_000.5))
        );
        for bad in ["", "+", "x", "+-1", "nan", "+inf", "+1e9"] {
            assert!(parse_start_at(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rshperf_options_reach_the_config() {
        let c = Config::from_argv(&[
            "rshperf",
            "--server",
            "127.0.0.1",
            "--percentiles",
            "--json=-",
            "--csv",
            "r.csv",
            "--fail-on",
            "errors>0",
            "--fail-on=p99>5ms",
            "--no-progress",
            "--partition=1/4",
            "--start-at=+1",
        ])
        .expect("valid");
        assert!(c.percentiles);
        assert_eq!(c.json.as_deref(), Some("-"));
        assert_eq!(c.csv.as_deref(), Some("r.csv"));
        assert_eq!(
            c.fail_on,
            vec!["errors>0".to_string(), "p99>5ms".to_string()]
        );
        assert_eq!(c.progress, Some(false));
        assert_eq!(c.partition, (1, 4));
        assert_eq!(c.start_at, Some(StartAt::After(1.0)));
        assert!(c.echo_line().ends_with(" --partition=1/4"));
    }

    #[test]
    fn call_rate_sets_the_schedule_and_refuses_what_does_not_fit() {
        let ok = |args: &[&str]| {
            let mut argv = vec!["rshperf", "--server", "127.0.0.1"];
            argv.extend_from_slice(args);
            Config::from_argv(&argv).expect("valid")
        };
        let c = ok(&["--call-rate", "250", "--num-conns", "5"]);
        assert_eq!(c.call_rate, 250.0);
        assert_eq!(c.period, Period::Deterministic(0.004));
        assert!(!c.calls_until_runtime && !c.until_runtime);
        assert!(c.echo_line().ends_with(" --num-calls=1 --call-rate=250"));
        assert!(!c.echo_line().contains("--rate"));
        let c = ok(&["--call-rate", "100", "--period", "e0.01", "--runtime", "5"]);
        assert_eq!(c.period, Period::Exponential(0.01));
        assert!(c.calls_until_runtime);
        assert!(c.echo_line().contains(" --period=e0.01 "));
        let c = ok(&["--call-rate", "100", "--runtime", "5", "--num-calls", "7"]);
        assert!(!c.calls_until_runtime);
        let bad = |args: &[&str]| {
            let mut argv = vec!["rshperf", "--server", "127.0.0.1"];
            argv.extend_from_slice(args);
            Config::from_argv(&argv).expect_err("refused").to_string()
        };
        assert!(bad(&["--call-rate", "10", "--rate", "5"]).contains("--rate"));
        assert!(bad(&["--call-rate", "10", "--period", "u0.1,0.3"])
            .contains("the period's mean must be 1/R = 0.1 s (it is 0.2 s)"));
        assert!(bad(&["--call-rate", "10", "--wsesslog", "1,0,/dev/null"]).contains("sessions"));
        assert!(bad(&["--call-rate", "10", "--max-connections", "3"]).contains("--max-connections"));
        assert!(bad(&["--call-rate", "-1"]).contains("illegal call rate -1"));
        assert!(bad(&["--call-rate", "x"]).contains("illegal call rate x"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(args: &[&str]) -> Config {
        let mut argv = vec!["rshperf"];
        argv.extend_from_slice(args);
        match Config::from_argv(&argv) {
            Ok(c) => c,
            Err(e) => panic!("{args:?}: {e}"),
        }
    }

    /// The full message as `main` prints it.
    fn err(args: &[&str]) -> String {
        let mut argv = vec!["rshperf"];
        argv.extend_from_slice(args);
        match Config::from_argv(&argv) {
            Ok(c) => panic!("{args:?} accepted: {c:?}"),
            Err(e) => e.to_string(),
        }
    }

    /// Splits a shell-like command line on spaces (single-quoted parts kept whole).
    fn words(cmd: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut quoted = false;
        for c in cmd.chars() {
            match c {
                '\'' => quoted = !quoted,
                ' ' if !quoted => {
                    if !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                }
                _ => cur.push(c),
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }

    fn echo(cmd: &str) -> String {
        let w = words(cmd);
        let args: Vec<&str> = w.iter().map(String::as_str).collect();
        cfg(&args).echo_line()
    }

    /// The echo lines of the golden runs of docs/compatibility.md appendix A.
    #[test]
    fn echo_lines_of_the_golden_outputs() {
        let cases = [
            // A.1
            (
                "--server 127.0.0.1 --port 18080 --uri /1k.html --num-conns 200 --rate 100",
                "rshperf --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=100 --send-buffer=4096 --recv-buffer=16384 --num-conns=200 --num-calls=1",
            ),
            // A.2
            (
                "--server 127.0.0.1 --port 18080 --uri /1k.html --num-conns 20 --rate 10 --num-calls 5 --http-version 1.1",
                "rshperf --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=10 --send-buffer=4096 --recv-buffer=16384 --num-conns=20 --num-calls=5",
            ),
            // A.3
            (
                "--server 127.0.0.1 --port 18081 --num-conns 5 --rate 10",
                "rshperf --client=0/1 --server=127.0.0.1 --port=18081 --uri=/ --rate=10 --send-buffer=4096 --recv-buffer=16384 --num-conns=5 --num-calls=1",
            ),
            // A.5
            (
                "-v -v --server 127.0.0.1 --port 18080 --uri /1k.html --num-conns 60 --rate 10 --num-calls 2",
                "rshperf --verbose --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=10 --send-buffer=4096 --recv-buffer=16384 --num-conns=60 --num-calls=2",
            ),
            // A.6
            (
                "-v --server 127.0.0.1 --port 18080 --uri /1k.html --num-conns 110 --rate 10 --client=0/2",
                "rshperf --verbose --client=0/2 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=10 --send-buffer=4096 --recv-buffer=16384 --num-conns=110 --num-calls=1",
            ),
            // A.7
            (
                r"--server 127.0.0.1 --port 18080 --uri /echo --print-request --print-reply --add-header 'X-Test: a\\b\101\n' --num-conns 1 --num-calls 2",
                r"rshperf --print-reply --print-request --client=0/1 --server=127.0.0.1 --port=18080 --uri=/echo --send-buffer=4096 --recv-buffer=16384 --add-header='X-Test: a\\b\101\n' --num-conns=1 --num-calls=2",
            ),
            // A.8 (four runs)
            (
                "--server 127.0.0.1 --port 18090 --uri /chunked --print-reply --timeout 3",
                "rshperf --print-reply --timeout=3 --client=0/1 --server=127.0.0.1 --port=18090 --uri=/chunked --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
            ),
            (
                "--server 127.0.0.1 --port 18090 --uri /close --print-reply --timeout 3",
                "rshperf --print-reply --timeout=3 --client=0/1 --server=127.0.0.1 --port=18090 --uri=/close --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
            ),
            (
                "--server 127.0.0.1 --port 18090 --uri /continue --print-reply --timeout 3",
                "rshperf --print-reply --timeout=3 --client=0/1 --server=127.0.0.1 --port=18090 --uri=/continue --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
            ),
            (
                "--server 127.0.0.1 --port 18090 --uri /badstatus --print-reply --timeout 3",
                "rshperf --print-reply --timeout=3 --client=0/1 --server=127.0.0.1 --port=18090 --uri=/badstatus --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
            ),
            // A.9
            (
                "--server 127.0.0.1 --port 18080 --uri /1k.html --wsess=10,4,0.2 --burst-length 2 --rate 5",
                "rshperf --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=5 --send-buffer=4096 --recv-buffer=16384 --wsess=10,4,0.200 --burst-length=2",
            ),
            // A.9b
            (
                "-v --server 127.0.0.1 --port 18080 --uri /1k.html --wsess=30,3,0.05 --burst-length 3 --rate 5 --max-connections 2 --max-piped-calls 1 --http-version 1.0",
                "rshperf --verbose --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --http-version=1.0 --max-connections=2 --max-piped-calls=1 --rate=5 --send-buffer=4096 --recv-buffer=16384 --wsess=30,3,0.050 --burst-length=3",
            ),
            // A.9c
            (
                "--server 127.0.0.1 --port 18090 --wsesslog=3,0.1,sess.log --rate 2 --print-request --print-reply",
                "rshperf --print-reply --print-request --client=0/1 --server=127.0.0.1 --port=18090 --uri=/ --rate=2 --send-buffer=4096 --recv-buffer=16384 --wsesslog=3,0.100,sess.log",
            ),
            // A.9d
            (
                "--server 127.0.0.1 --port 18090 --uri /cookie --wsess=1,3,0 --session-cookies --print-request=header",
                "rshperf --print-request=header --client=0/1 --server=127.0.0.1 --port=18090 --uri=/cookie --send-buffer=4096 --recv-buffer=16384 --session-cookies --wsess=1,3,0.000",
            ),
            // A.10
            (
                "--server 127.0.0.1 --port 18080 --uri /1k.html --num-conns 1000 --rate 50",
                "rshperf --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=50 --send-buffer=4096 --recv-buffer=16384 --num-conns=1000 --num-calls=1",
            ),
            // A.11 (master; rshperf prints --ssl-protocol only when given)
            (
                "--server 127.0.0.1 --port 18080 --uri /1k.html --num-conns 100000 --rate 50 --runtime 2.5 --periodic-stats -v",
                "rshperf --verbose --runtime=2.5 --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=50 --send-buffer=4096 --recv-buffer=16384 --num-conns=100000 --num-calls=1 --periodic-stats",
            ),
            // A.12 0.9.0, then master with --print-reply=body --http-version 1.0
            (
                "--server 127.0.0.1 --port 18080 --uri /echo --no-host-hdr --print-request=header --print-reply=header --timeout 2",
                "rshperf --print-reply=header --print-request=header --timeout=2 --client=0/1 --server=127.0.0.1 --port=18080 --uri=/echo --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
            ),
            (
                "--server 127.0.0.1 --port 18080 --uri /echo --no-host-hdr --print-request=header --print-reply=header --timeout 2 --print-reply=body --http-version 1.0",
                "rshperf --print-reply=body --print-request=header --timeout=2 --client=0/1 --server=127.0.0.1 --port=18080 --uri=/echo --http-version=1.0 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
            ),
            // A.13
            (
                "--ssl --server 127.0.0.1 --port 18443 --uri /1k.html --num-conns 10 --rate 20 --num-calls 2",
                "rshperf --client=0/1 --server=127.0.0.1 --port=18443 --uri=/1k.html --rate=20 --send-buffer=4096 --recv-buffer=16384 --ssl --num-conns=10 --num-calls=2",
            ),
            // A.15 (without -V, which stops rshperf)
            (
                "--server 127.0.0.1 --port 18080",
                "rshperf --client=0/1 --server=127.0.0.1 --port=18080 --uri=/ --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
            ),
        ];
        for (cmd, want) in cases {
            assert_eq!(echo(cmd), want, "{cmd}");
        }
    }

    #[test]
    fn echo_formats_numbers_with_percent_g() {
        let base = "--server 127.0.0.1 --port 1";
        let tail = "--client=0/1 --server=127.0.0.1 --port=1 --uri=/";
        assert_eq!(
            echo(&format!("{base} --timeout 0.00001 --think-timeout 2.50")),
            format!("rshperf --think-timeout=2.5 --timeout=1e-05 {tail} --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
        );
        assert_eq!(
            echo(&format!("{base} --period e0.05")),
            format!("rshperf {tail} --period=e0.05 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
        );
        assert_eq!(
            echo(&format!("{base} --period=u1,2")),
            format!("rshperf {tail} --period=u1,2 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
        );
        assert_eq!(
            echo(&format!("{base} --period=V0.1,2,0.005,1e7")),
            format!("rshperf {tail} --period=v0.1,2,0.005,1e+07 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
        );
        assert_eq!(
            echo(&format!("{base} --period 0.25")),
            format!("rshperf {tail} --rate=4 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
        );
        assert_eq!(
            echo(&format!("{base} --rate 1234567 --rate=0.3")),
            format!("rshperf {tail} --rate=0.3 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
        );
        assert_eq!(
            echo(&format!("{base} --rate 1234567")),
            format!("rshperf {tail} --rate=1.23457e+06 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
        );
        // Rate 0 and --period d0 are sequential: nothing is echoed.
        assert_eq!(
            echo(&format!("{base} --rate 5 --rate 0")),
            echo(&format!("{base} --period d5 --period d0"))
        );
        assert_eq!(
            echo(&format!("{base} --wset 1000,0.25 --runtime 1e-3")),
            format!("rshperf --runtime=0.001 {tail} --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1 --wset=1000,0.250")
        );
    }

    #[test]
    fn echo_of_every_other_option_in_order() {
        let c = cfg(&[
            "--hog",
            "--close-with-reset",
            "--server=::1",
            "--server-name=example.org",
            "--failure-status=503",
            "--retry-on-failure",
            "--ssl-protocol=tlsv1_3",
            "--ssl-ciphers=ALL",
            "--tls-server-name=sni.example",
            "--ssl-no-reuse",
            "--ssl-certificate=c.pem",
            "--ssl-key=k.pem",
            "--ssl-ca-file=ca.pem",
            "--ssl-ca-path=/etc/ssl",
            "--ssl-verify",
            "--add-header-file=h.txt",
            "--method=POST",
            "--use-timer-cache",
            "--wsesspage=2,3,1.5",
            "--burst-length=4",
            "--threads=8",
            "-n",
            "--myaddr=10.0.0.1",
            "--no-host-hdr",
            "-d3",
            "--wlog=y,f",
        ]);
        assert_eq!(
            c.echo_line(),
            "rshperf --hog --close-with-reset --client=0/1 --server=::1 \
             --server_name=example.org --port=443 --uri=/ --failure-status=503 \
             --send-buffer=4096 --retry-on-failure --recv-buffer=16384 --ssl \
             --ssl-ciphers=ALL --tls-server-name=sni.example --ssl-no-reuse \
             --ssl-cert=c.pem --ssl-key=k.pem --ssl-ca-file=ca.pem --ssl-ca-path=/etc/ssl \
             --ssl-verify --ssl-protocol=TLSv1.3 --add-header-file='h.txt' --method=POST \
             --use-timer-cache --wsesspage=2,3,1.500 --periodic-stats --threads=8"
        );
        let c = cfg(&["--servers", "list", "--method", "GET", "--threads", "1"]);
        assert_eq!(
            c.echo_line(),
            "rshperf --client=0/1 --servers=list --port=80 --uri=/ --send-buffer=4096 \
             --recv-buffer=16384 --method=GET --num-conns=1 --num-calls=1"
        );
        assert!(c.addrs.is_empty());
    }

    #[test]
    fn option_errors_of_httperf() {
        // docs/compatibility.md A.16 (the getopt ones are tested in cli.rs, and here
        // end to end).
        let cases: [(&[&str], &str); 17] = [
            (
                &["--ser", "127.0.0.1", "--port", "18080", "--num-conns", "1"],
                "rshperf: option '--ser' is ambiguous; possibilities: '--server' '--server-name' '--servers'",
            ),
            (&["--bogus", "--port", "18080"], "rshperf: unrecognized option '--bogus'"),
            (&["--hog=1", "--port", "18080"], "rshperf: option '--hog' doesn't allow an argument"),
            (&["-x", "--port", "18080"], "rshperf: invalid option -- 'x'"),
            (&["--rate", "abc", "--port", "18080"], "rshperf: illegal request rate abc"),
            (
                &["--num-conns", "5x", "--port", "18080", "--num-conns", "1"],
                "rshperf: illegal number of connections 5x",
            ),
            (&["--port", "70000", "--port", "18080"], "rshperf: illegal port number 70000"),
            (&["--http-version", "3"], "rshperf: illegal version number 3"),
            (&["--burst-length", "0"], "rshperf: illegal burst-length 0"),
            (&["--client", "2/2"], "rshperf: bad number of clients (rest: `2')"),
            (&["--client", "1"], "rshperf: client id not followed by `/' (rest: `')"),
            (
                &["--wsess", "1,2"],
                "rshperf: bad user think time (3rd param) in --wsess arg (rest: `')",
            ),
            (
                &["--wset", "10,2"],
                "rshperf: bad target miss rate (2nd parameter) in --wset arg (rest: `2')",
            ),
            (&["--period", "x1"], "rshperf: illegal interarrival distribution 'x' in x1"),
            (
                &["--period", "u1"],
                "rshperf: minimum interarrival time not followed by `,MAX_IAT' (rest: `')",
            ),
            (&["--failure-status", "0"], "rshperf: illegal failure status 0"),
            (
                &["--session-cookies", "--port", "18080"],
                "rshperf: --session-cookie requires session-oriented workload (e.g., --wsess)",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args:?}");
        }
        assert!(err(&["--server", "--port", "18080"])
            .starts_with("rshperf: cannot resolve server address '--port': "));
        assert!(err(&["--server", "nonexistent.invalid"])
            .starts_with("rshperf: cannot resolve server address 'nonexistent.invalid': "));
        let e = Config::from_argv(&["rshperf", "--server", "nonexistent.invalid"]);
        assert!(matches!(e, Err(Error::Startup(_))));
        assert!(matches!(
            Config::from_argv(&["rshperf", "--rate", "x"]),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn other_httperf_messages() {
        let cases: [(&[&str], &str); 31] = [
            (&["--num-calls", "x"], "rshperf: illegal number of calls x"),
            (&["--send-buffer", ""], "rshperf: illegal send buffer size "),
            (&["--recv-buffer", "1k"], "rshperf: illegal receive buffer size 1k"),
            (&["--max-connections", "a"], "rshperf: illegal max. # of connection a"),
            (&["--max-piped-calls", "2b"], "rshperf: illegal max. # of piped calls 2b"),
            (&["-d", "x"], "rshperf: illegal debug level x"),
            (&["--timeout", "1s"], "rshperf: illegal connect timeout 1s"),
            (&["--think-timeout", ""], "rshperf: illegal think timeout value "),
            (&["--runtime", "0"], "rshperf: illegal runtime value 0"),
            (&["--runtime", "-1"], "rshperf: illegal runtime value -1"),
            (&["--client", "x/2"], "rshperf: bad client id (rest: `x/2')"),
            (&["--client", "1-2"], "rshperf: client id not followed by `/' (rest: `-2')"),
            (&["--period", "d-1"], "rshperf: illegal mean interarrival time -1"),
            (&["--period", "e"], "rshperf: illegal mean interarrival time "),
            (&["--period", "ux,1"], "rshperf: illegal minimum interarrival time x,1"),
            (&["--period", "u1,"], "rshperf: illegal request period "),
            (&["--period", "v1"], "rshperf: interarrival time not followed by `,duration' (rest: `')"),
            (&["--period", "v1,x"], "rshperf: illegal duration x"),
            (&["--period", ".5"], "rshperf: illegal interarrival distribution '.' in .5"),
            (&["--period", ""], "rshperf: illegal interarrival distribution '' in "),
            (
                &["--wsess", "x"],
                "rshperf: bad number of sessions (1st param) in --wsess arg (rest: `x')",
            ),
            (
                &["--wsess", "1;2,3"],
                "rshperf: bad number of calls per session (2nd param) in --wsess arg (rest: `;2,3')",
            ),
            (
                &["--wsess", "1,2,3x"],
                "rshperf: extraneous parameter in --wsess arg (rest: `x')",
            ),
            (
                &["--wsess", "1,2,-3"],
                "rshperf: bad user think time (3rd param) in --wsess arg (rest: `')",
            ),
            (
                &["--wsesspage", "1,x,3"],
                "rshperf: bad number of user requests per session (2nd param) in --wsesspage arg (rest: `x,3')",
            ),
            (
                &["--wsesslog", "1,0.5"],
                "rshperf: bad session filename (3rd param) in --wsesslog arg (rest: `')",
            ),
            (
                &["--wsesslog", "1,,f"],
                "rshperf: bad user think time (2nd param) in --wsesslog arg (rest: `,f')",
            ),
            (
                &["--wsesslog", "1,1,f,g"],
                "rshperf: extraneous parameter in --wsesslog arg (rest: `g')",
            ),
            (
                &["--wset", "x,1"],
                "rshperf: bad working set size (1st parameter) in --wset arg (rest: `x,1')",
            ),
            (
                &["--wset", "10,0.5x"],
                "rshperf: extraneous parameter in --wset arg (rest: `0.5x')",
            ),
            (&["--ssl-protocol", "tls2"], "rshperf: illegal SSL protocol tls2"),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args:?}");
        }
        assert_eq!(
            err(&["--wsess", "99999999999999999999,1,1"]),
            "rshperf: bad number of sessions (1st param) in --wsess arg (rest: `,1,1'): Numerical result out of range"
        );
    }

    #[test]
    fn stricter_than_httperf() {
        let cases: [(&[&str], &str); 33] = [
            (&["--num-conns", "-1"], "rshperf: illegal number of connections -1 (expected an integer >= 1)"),
            (&["--num-conns", "0"], "rshperf: illegal number of connections 0 (expected an integer >= 1)"),
            (&["--num-calls", "0"], "rshperf: illegal number of calls 0 (expected an integer >= 1)"),
            (&["--num-calls", "+2"], "rshperf: illegal number of calls +2 (expected an integer >= 1)"),
            (&["--num-conns", " 2"], "rshperf: illegal number of connections  2 (expected an integer >= 1)"),
            (&["--port", "0"], "rshperf: illegal port number 0 (expected an integer from 1 to 65535)"),
            (&["--port", "-1"], "rshperf: illegal port number -1"),
            (&["--send-buffer", "0"], "rshperf: illegal send buffer size 0 (expected an integer from 1 to 2147483647)"),
            (&["--recv-buffer", "2147483648"], "rshperf: illegal receive buffer size 2147483648 (expected an integer from 1 to 2147483647)"),
            (&["--failure-status", "5000"], "rshperf: illegal failure status 5000 (expected an HTTP status code from 100 to 999)"),
            (&["--threads", "0"], "rshperf: illegal number of threads 0 (expected an integer from 1 to 1024)"),
            (&["--threads", "1025"], "rshperf: illegal number of threads 1025 (expected an integer from 1 to 1024)"),
            (&["--threads", "x"], "rshperf: illegal number of threads x (expected an integer from 1 to 1024)"),
            (&["--rate", "-5"], "rshperf: illegal request rate -5 (expected a number >= 0; 0 means sequential)"),
            (&["--rate", "nan"], "rshperf: illegal request rate nan (expected a number >= 0; 0 means sequential)"),
            (&["--rate", "inf"], "rshperf: illegal request rate inf (expected a number >= 0; 0 means sequential)"),
            (&["--rate", "1e-320"], "rshperf: illegal request rate 1e-320 (expected a number >= 0; 0 means sequential)"),
            (&["--timeout", "-1"], "rshperf: illegal connect timeout -1 (expected a number of seconds >= 0; 0 means none)"),
            (&["--timeout", "NaN"], "rshperf: illegal connect timeout NaN (expected a number of seconds >= 0; 0 means none)"),
            (&["--think-timeout", "-0.5"], "rshperf: illegal think timeout value -0.5 (expected a number of seconds >= 0)"),
            (&["--runtime", "nan"], "rshperf: illegal runtime value nan (expected a number of seconds > 0)"),
            (&["--runtime", "infinity"], "rshperf: illegal runtime value infinity (expected a number of seconds > 0)"),
            (&["--http-version", "1.2"], "rshperf: unsupported HTTP version 1.2 (expected 1.0, 1.1 or 2)"),
            (&["--http-version", "3.0"], "rshperf: unsupported HTTP version 3.0 (expected 1.0, 1.1 or 2)"),
            (&["--http-version", "1.1x"], "rshperf: unsupported HTTP version 1.1x (expected 1.0, 1.1 or 2)"),
            (&["--period", "u2,1"], "rshperf: illegal request period 1 (expected a maximum >= the minimum 2)"),
            (&["--period", "einf"], "rshperf: illegal mean interarrival time inf (expected a number of seconds >= 0)"),
            (&["--period", "d1x"], "rshperf: illegal mean interarrival time 1x"),
            (&["--period", "v0,1"], "rshperf: illegal minimum interarrival time 0,1 (expected a number of seconds > 0)"),
            (&["--period", "v1,0"], "rshperf: illegal duration 0 (expected a number of seconds > 0)"),
            (&["--wlog", "yfile"], "rshperf: illegal --wlog argument yfile (expected y,FILE or n,FILE)"),
            (&["--wlog", "y,"], "rshperf: illegal --wlog argument y, (expected y,FILE or n,FILE)"),
            (&["--wsess", "1,1,1", "--wsesslog", "1,1,f"], "rshperf: only one of --wsess, --wsesslog, --wsesspage may be given"),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), want, "{args:?}");
        }
        let more: [(&[&str], &str); 12] = [
            (&["--wsess", "0,1,1"], "rshperf: bad number of sessions (1st param) in --wsess arg (rest: `0,1,1') (expected an integer >= 1)"),
            (&["--wsess", "1,0,1"], "rshperf: bad number of calls per session (2nd param) in --wsess arg (rest: `0,1') (expected an integer >= 1)"),
            (&["--wsess", "1,1,nan"], "rshperf: bad user think time (3rd param) in --wsess arg (rest: `') (expected a number of seconds >= 0)"),
            (&["--wsesslog", "1,1,"], "rshperf: bad session filename (3rd param) in --wsesslog arg (rest: `') (expected a file name)"),
            (&["--wset", "0,0.5"], "rshperf: bad working set size (1st parameter) in --wset arg (rest: `0,0.5') (expected an integer >= 1)"),
            (&["--wset", "10,nan"], "rshperf: bad target miss rate (2nd parameter) in --wset arg (rest: `nan') (expected a number from 0 to 1)"),
            (&["--client", "0/2x"], "rshperf: bad number of clients (rest: `2x')"),
            (&["--client", "-1/2"], "rshperf: bad client id (rest: `-1/2')"),
            (&["--wsesspage", "1,1,1", "--wsess", "1,1,1"], "rshperf: only one of --wsess, --wsesslog, --wsesspage may be given"),
            (&["--session-cookies", "--wlog=y,f"], "rshperf: --session-cookie requires session-oriented workload (e.g., --wsess)"),
            (&["--server", "a", "--servers", "f"], "rshperf: --server S or --servers file, not both"),
            (&["--tls-server-name", "x"], "rshperf: --tls-server-name requires --ssl (or --ssl-protocol)"),
        ];
        for (args, want) in more {
            assert_eq!(err(args), want, "{args:?}");
        }
        assert_eq!(
            err(&["--ssl-protocol", "SSLv3"]),
            "rshperf: illegal SSL protocol SSLv3 (SSLv2 and SSLv3 are not supported; expected auto, TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3)"
        );
        let mut many = String::from("v");
        for _ in 0..17 {
            many.push_str("1,1,");
        }
        many.pop();
        assert_eq!(err(&["--period", &many]), "rshperf: too many rates");
    }

    #[test]
    fn first_bad_value_in_order_is_reported() {
        assert_eq!(
            err(&["--port", "70000", "--rate", "x"]),
            "rshperf: illegal port number 70000"
        );
        assert_eq!(
            err(&["--rate", "x", "--port", "70000"]),
            "rshperf: illegal request rate x"
        );
    }

    #[test]
    fn socket_buffers_http2_only_when_given() {
        let base = ["--server", "127.0.0.1"];
        assert_eq!(cfg(&base).socket_buffers(), (4096, 16384));
        let h2 = cfg(&["--server", "127.0.0.1", "--http-version", "2"]);
        assert_eq!((h2.send_buffer, h2.recv_buffer), (4096, 16384));
        assert_eq!(h2.socket_buffers(), (0, 0));
        let given = cfg(&[
            "--server",
            "127.0.0.1",
            "--http-version",
            "2",
            "--recv-buffer",
            "65536",
        ]);
        assert_eq!(given.socket_buffers(), (0, 65536));
        let both = cfg(&[
            "--server",
            "127.0.0.1",
            "--http-version",
            "2",
            "--send-buffer",
            "4096",
            "--recv-buffer",
            "16384",
        ]);
        assert_eq!(both.socket_buffers(), (4096, 16384));
    }

    #[test]
    fn defaults() {
        let c = cfg(&["--server", "127.0.0.1"]);
        assert_eq!(c.prog, "rshperf");
        assert_eq!(c.port, 80);
        assert_eq!(c.uri, "/");
        assert_eq!(c.method, "GET");
        assert!(!c.method_given);
        assert_eq!(c.http_version, HttpVersion::V11);
        assert_eq!((c.send_buffer, c.recv_buffer), (4096, 16384));
        assert_eq!((c.client_id, c.num_clients), (0, 1));
        assert_eq!((c.num_conns, c.num_calls, c.burst_length), (1, 1, 1));
        assert_eq!(c.period, Period::Sequential);
        assert_eq!(c.threads, 1);
        assert_eq!(c.timeout_duration(), None);
        assert_eq!(c.think_timeout_duration(), None);
        assert_eq!(c.unsupported(), None);
        assert_eq!(c.addrs, vec!["127.0.0.1:80".parse::<SocketAddr>().unwrap()]);
        let c = cfg(&[]);
        assert_eq!(c.server, "localhost");
        assert_eq!(c.host_header(), "localhost");
        assert!(!c.addrs.is_empty());
        assert!(c
            .addrs
            .iter()
            .all(|a| a.port() == 80 && a.ip().is_loopback()));
    }

    #[test]
    fn port_defaults_follow_ssl() {
        assert_eq!(cfg(&["--server=127.0.0.1"]).port, 80);
        assert_eq!(cfg(&["--server=127.0.0.1", "--ssl"]).port, 443);
        let c = cfg(&["--server=127.0.0.1", "--ssl-protocol=TLSv1.2"]);
        assert_eq!((c.port, c.ssl), (443, true));
        assert_eq!(c.ssl_protocol, Some(SslProtocol::Tls12));
        assert_eq!(c.addrs[0].port(), 443);
        assert_eq!(
            cfg(&["--server=127.0.0.1", "--port=8443", "--ssl"]).port,
            8443
        );
        assert_eq!(cfg(&["--port=1", "--ssl", "--server=127.0.0.1"]).port, 1);
        for (name, want) in [
            ("AUTO", SslProtocol::Auto),
            ("TLSv1", SslProtocol::Tls10),
            ("tlsv1.0", SslProtocol::Tls10),
            ("TLSv1_1", SslProtocol::Tls11),
            ("TLSv1.3", SslProtocol::Tls13),
        ] {
            let c = cfg(&["--server=127.0.0.1", "--ssl-protocol", name]);
            assert_eq!(c.ssl_protocol, Some(want), "{name}");
        }
    }

    #[test]
    fn ipv6_literal_servers() {
        for server in ["::1", "[::1]"] {
            let c = cfg(&["--server", server, "--port", "8080"]);
            assert_eq!(c.addrs, vec!["[::1]:8080".parse::<SocketAddr>().unwrap()]);
            assert_eq!(c.host_header(), "[::1]");
            assert!(c.echo_line().contains(&format!(" --server={server} ")));
        }
        let c = cfg(&["--server", "::1", "--server-name", "example.org:8080"]);
        assert_eq!(c.host_header(), "example.org:8080");
        let c = cfg(&["--server", "127.0.0.1", "--server-name", "::2"]);
        assert_eq!(c.host_header(), "[::2]");
    }

    #[test]
    fn host_header_is_cut_at_cr_or_lf() {
        let c = cfg(&[
            "--server",
            "127.0.0.1",
            "--server-name",
            "a.example\r\nX-Evil: 1",
        ]);
        assert_eq!(c.host_header(), "a.example");
        let c = cfg(&["--server", "127.0.0.1", "--server-name", "b\nc"]);
        assert_eq!(c.host_header(), "b");
        assert_eq!(cfg(&["--server", "127.0.0.1"]).host_header(), "127.0.0.1");
    }

    #[test]
    fn add_header_escapes() {
        let (b, w) = unescape_header(r"X-Test: a\\b\101\n");
        assert_eq!(b, b"X-Test: a\\bA\r\n");
        assert!(w.is_empty());
        let (b, w) = unescape_header(r"A\aB\rC\0D\777\1011\q\");
        // The octal run is maximal (`\1011` = 0o1011 = 521) and kept modulo 256.
        assert_eq!(b, b"A\nB\rC\0D\xff\x09q\\");
        assert_eq!(
            w,
            vec![
                "ignoring unknown escape sequence `\\q' in --add-header".to_string(),
                "ignoring trailing `\\' in --add-header".to_string(),
            ]
        );
        let (b, _) = unescape_header(r"\é");
        assert_eq!(b, "é".as_bytes());
        let c = cfg(&["--server=127.0.0.1", "--add-header", r"X: 1\nY: 2\n"]);
        assert_eq!(c.add_header, b"X: 1\r\nY: 2\r\n");
        assert_eq!(c.add_header_raw.as_deref(), Some(r"X: 1\nY: 2\n"));
    }

    #[test]
    fn values_are_stored() {
        let c = cfg(&[
            "--server=127.0.0.1",
            "--client=0x2/010",
            "--timeout=2.5",
            "--think-timeout=0.5",
            "--num-conns=7",
            "--num-calls=3",
            "--burst-length=3",
            "--http-version=1.0",
            "--uri=/x?y",
            "--send-buffer=2147483647",
            "--recv-buffer=1",
            "--max-connections=4",
            "--max-piped-calls=0",
            "--failure-status=503",
            "--print-reply=Body",
            "--print-request=hx",
            "--wsess=010,0x10,1e-1",
            "--wset=5,1",
            "--wlog=n,urls",
            "--myaddr=10.0.0.1",
            "--myaddr=10.0.0.2-10.0.0.9",
            "--ssl-verify=no",
            "-vvv",
            "--debug=4",
            "--threads=1024",
            "--runtime=3",
        ]);
        assert_eq!((c.client_id, c.num_clients), (2, 8));
        assert_eq!(c.timeout_duration(), Some(Duration::from_millis(2500)));
        assert_eq!(c.think_timeout_duration(), Some(Duration::from_millis(500)));
        assert_eq!((c.num_conns, c.num_calls, c.burst_length), (7, 3, 3));
        assert_eq!(c.http_version, HttpVersion::V10);
        assert_eq!(c.uri, "/x?y");
        assert_eq!((c.send_buffer, c.recv_buffer), (2_147_483_647, 1));
        assert_eq!((c.max_connections, c.max_piped_calls), (4, 0));
        assert_eq!(c.failure_status, 503);
        assert_eq!(c.print_reply, Some(PrintWhat::Body));
        assert_eq!(c.print_request, Some(PrintWhat::Header));
        assert_eq!(
            c.wsess,
            Some(WsessSpec {
                sessions: 8,
                calls: 16,
                think: 0.1
            })
        );
        assert_eq!(
            c.wset,
            Some(WsetSpec {
                files: 5,
                miss_rate: 1.0
            })
        );
        assert_eq!(
            c.wlog,
            Some(WlogSpec {
                repeat: false,
                file: "urls".into()
            })
        );
        assert_eq!(c.myaddr, vec!["10.0.0.1", "10.0.0.2-10.0.0.9"]);
        assert!(!c.ssl_verify);
        assert_eq!((c.verbose, c.debug, c.threads), (3, 4, 1024));
        assert_eq!(c.runtime, 3.0);
        let c = cfg(&["--wsesslog=0x3,0,a b.log", "--wlog=Y,u", "--print-reply"]);
        assert_eq!(
            c.wsesslog,
            Some(WsesslogSpec {
                sessions: 3,
                think: 0.0,
                file: "a b.log".into()
            })
        );
        assert_eq!(c.wlog.map(|w| w.repeat), Some(true));
        assert_eq!(c.print_reply, Some(PrintWhat::Both));
        assert_eq!(c.burst_length, 1);
    }

    #[test]
    fn every_option_is_supported() {
        let c = cfg(&["--server=127.0.0.1", "--wsesspage=1,1,0"]);
        assert_eq!(c.unsupported(), None);
        let c = cfg(&[
            "--server=127.0.0.1",
            "--wsess=1,1,0",
            "--session-cookies",
            "-n",
        ]);
        assert_eq!(c.unsupported(), None);
        let c = cfg(&[
            "--server=127.0.0.1",
            "--hog",
            "--close-with-reset",
            "--no-host-hdr",
            "--add-header=X: 1\\n",
            "--method=HEAD",
            "--period=e0.1",
            "--runtime=2",
            "--threads=4",
            "--use-timer-cache",
            "--ssl-verify=no",
            "--max-connections=0",
            "-d1",
            "-v",
        ]);
        assert_eq!(c.unsupported(), None);
    }

    #[test]
    fn later_rate_or_period_wins() {
        let p = |args: &[&str]| cfg(args).period;
        let ip = ["--server=127.0.0.1"];
        assert_eq!(
            p(&[ip[0], "--rate", "5", "--period", "e1"]),
            Period::Exponential(1.0)
        );
        assert_eq!(
            p(&[ip[0], "--period", "e1", "--rate", "4"]),
            Period::Deterministic(0.25)
        );
        assert_eq!(p(&[ip[0], "--period", "u0,0"]), Period::Sequential);
        assert_eq!(p(&[ip[0], "--period", "U0,1"]), Period::Uniform(0.0, 1.0));
        assert_eq!(
            p(&[ip[0], "--period", "v0.5,10,1,20"]),
            Period::Variable(vec![(0.5, 10.0), (1.0, 20.0)])
        );
        assert_eq!(p(&[ip[0], "--period", "2"]), Period::Deterministic(2.0));
        assert_eq!(p(&[ip[0], "--period", "D2"]), Period::Deterministic(2.0));
        assert_eq!(p(&[ip[0], "--rate", "+1e1"]), Period::Deterministic(0.1));
        assert_eq!(p(&[ip[0], "--rate", "0.0"]), Period::Sequential);
        assert_eq!(
            p(&[ip[0], "--port", "1", "--port", "2"]),
            Period::Sequential
        );
        assert_eq!(cfg(&[ip[0], "--port", "1", "--port", "2"]).port, 2);
    }

    #[test]
    fn help_and_version_are_not_runs() {
        assert!(matches!(
            Config::from_argv(&["rshperf", "-h"]),
            Err(Error::Usage(_))
        ));
        assert!(matches!(
            Config::from_argv(&["rshperf", "--server=127.0.0.1", "-V"]),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn huge_timeouts_saturate() {
        let c = cfg(&[
            "--server=127.0.0.1",
            "--timeout=1e300",
            "--think-timeout=1e-12",
        ]);
        assert_eq!(c.timeout_duration(), Some(Duration::MAX));
        assert_eq!(c.think_timeout_duration(), Some(Duration::from_nanos(1)));
    }

    #[test]
    fn strtod_prefix_matches_c() {
        assert_eq!(strtod_prefix("1.5e3x"), Some((1500.0, 5)));
        assert_eq!(strtod_prefix("1e"), Some((1.0, 1)));
        assert_eq!(strtod_prefix("1e+"), Some((1.0, 1)));
        assert_eq!(strtod_prefix(".5,"), Some((0.5, 2)));
        assert_eq!(strtod_prefix("5."), Some((5.0, 2)));
        assert_eq!(strtod_prefix("-2"), Some((-2.0, 2)));
        assert_eq!(strtod_prefix("."), None);
        assert_eq!(strtod_prefix(""), None);
        assert_eq!(strtod_prefix("x"), None);
        assert_eq!(strtod_prefix("INFINITY,"), Some((f64::INFINITY, 8)));
        assert!(strtod_prefix("nan").is_some_and(|(v, n)| v.is_nan() && n == 3));
        assert_eq!(c_strtod(" 1"), Some(1.0));
        assert_eq!(c_strtod("1e999"), None);
        assert_eq!(c_strtoul10("-1"), Some(u64::MAX));
        assert_eq!(c_strtoul10("1x"), None);
    }

    #[test]
    fn a_url_argument_is_server_port_uri_and_tls() {
        let c = cfg(&["http://127.0.0.1:8080/foo?x=1", "--rate", "100"]);
        assert_eq!(
            (c.server.as_str(), c.port, c.uri.as_str()),
            ("127.0.0.1", 8080, "/foo?x=1")
        );
        assert!(!c.ssl);
        assert_eq!(
            c.echo_line(),
            "rshperf --client=0/1 --server=127.0.0.1 --port=8080 --uri=/foo?x=1 --rate=100 \
             --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1"
        );
        let c = cfg(&["--num-conns", "3", "https://[::1]/"]);
        assert_eq!(
            (c.server.as_str(), c.port, c.uri.as_str()),
            ("::1", 443, "/")
        );
        assert!(c.ssl);
        assert_eq!(c.host_header(), "[::1]");
        assert_eq!(c.addrs, vec!["[::1]:443".parse().expect("addr")]);
        // --port fills in a URL without a port; options that are not the target stay.
        let c = cfg(&["http://localhost/x", "--port", "8081", "--ssl-verify=no"]);
        assert_eq!((c.port, c.uri.as_str()), (8081, "/x"));
        let c = cfg(&["https://127.0.0.1:8443/", "--ssl-protocol", "TLSv1.2"]);
        assert!(c.ssl && c.port == 8443);
        let cases: &[(&[&str], &str)] = &[
            (
                &["http://127.0.0.1/", "--server", "h"],
                "rshperf: the URL http://127.0.0.1/ names the server, port and URI: give it or --server, not both",
            ),
            (
                &["--ur", "/x", "http://127.0.0.1/"],
                "rshperf: the URL http://127.0.0.1/ names the server, port and URI: give it or --uri, not both",
            ),
            (
                &["http://127.0.0.1/", "--servers", "f"],
                "rshperf: the URL http://127.0.0.1/ names the server, port and URI: give it or --servers, not both",
            ),
            (
                &["http://127.0.0.1:80/", "--port", "81"],
                "rshperf: the URL http://127.0.0.1:80/ has a port: give it or --port, not both",
            ),
            (
                &["--ssl", "http://127.0.0.1/"],
                "rshperf: --ssl with an http:// URL: use https://127.0.0.1/",
            ),
            (
                &["http://a/", "http://b/"],
                "rshperf: more than one URL (http://a/ and http://b/); use --servers FILE for several servers",
            ),
            (&["http://h:99999/"], "rshperf: URL http://h:99999/: illegal port number 99999"),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), *want, "{args:?}");
        }
    }

    #[test]
    fn server_with_a_port_or_a_url_is_explained() {
        let cases: &[(&[&str], &str)] = &[
            (
                &["--server", "127.0.0.1:8080"],
                "rshperf: --server 127.0.0.1:8080: --server takes no port; use --server 127.0.0.1 --port 8080 (or the URL http://127.0.0.1:8080/)",
            ),
            (
                &["--server=localhost:80"],
                "rshperf: --server localhost:80: --server takes no port; use --server localhost --port 80 (or the URL http://localhost:80/)",
            ),
            (
                &["--server", "[::1]:8080"],
                "rshperf: --server [::1]:8080: --server takes no port; use --server ::1 --port 8080 (or the URL http://[::1]:8080/)",
            ),
            (
                &["--server", "http://127.0.0.1:8080/"],
                "rshperf: --server takes a host name, not a URL: give the URL on its own (rshperf http://127.0.0.1:8080/ ...) or --server, --port and --uri",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), *want, "{args:?}");
        }
        // IPv6 literals, bracketed or not, are addresses, not host:port.
        assert_eq!(cfg(&["--server", "::1"]).port, 80);
        assert_eq!(cfg(&["--server", "[::1]"]).port, 80);
        assert_eq!(cfg(&["--server", "fe80::1:8080"]).server, "fe80::1:8080");
    }

    #[test]
    fn runtime_without_num_conns_runs_until_the_runtime() {
        assert!(cfg(&["--runtime", "30", "--rate", "10"]).until_runtime);
        assert!(cfg(&["--runtime", "30"]).until_runtime);
        // --num-conns (even 1, the default) keeps it a cap; sessions have their count.
        assert!(!cfg(&["--runtime", "30", "--num-conns", "1"]).until_runtime);
        assert!(!cfg(&["--runtime", "30", "--wsess", "5,2,0"]).until_runtime);
        assert!(!cfg(&["--rate", "10"]).until_runtime);
        // The echo line is httperf's for the same command line.
        assert_eq!(
            cfg(&["--server", "127.0.0.1", "--runtime", "30", "--rate", "10"]).echo_line(),
            "rshperf --runtime=30 --client=0/1 --server=127.0.0.1 --port=80 --uri=/ --rate=10 \
             --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1"
        );
    }
}
