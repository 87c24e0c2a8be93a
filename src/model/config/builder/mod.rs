//! `ConfigBuilder`: the one way to make a `Config`, for every front end.
//!
//! A front end maps its options onto typed setters (`num_conns(20)`, `rate(100.0)`,
//! `tls_protocol(SslProtocol::Tls13)`, `url(…)`), in its own order (later calls
//! override earlier ones, as later options do), then calls `build`. `build` does every
//! validation: the typed values against httperf's rules (the same messages as if they
//! had been typed), the URL operand against the options that name the server,
//! combinations of options, defaults that depend on other options (the port on TLS,
//! the method on `--body-file`, `--call-rate`'s schedule, run-until-runtime), TLS's
//! server name and ALPN, and server resolution. It prints nothing: warnings are
//! returned (`Built::warnings`, `Rejected::warnings`) for the front end to print.
//! Value parsing from text is not here: httperf's syntax is `config::value`'s, used
//! by `front::httperf`. `build` and its checks are in `check`. The example below
//! (crate-private, so not a doctest) runs as the unit test `the_module_example_holds`.
//!
//! ```ignore
//! use crate::model::config::{Config, ConfigError, HttpVersion};
//!
//! let mut b = Config::builder();
//! b.server("127.0.0.1")
//!     .port(8080)
//!     .uri("/index.html")
//!     .num_conns(100)
//!     .rate(50.0)
//!     .http_version(HttpVersion::V11);
//! let built = b.build().expect("a valid configuration");
//! assert!(built.warnings.is_empty());
//! assert_eq!(built.config.load.num_conns, 100);
//! assert!(built.config.echo_line().contains(" --rate=50 "));
//!
//! let mut b = Config::builder();
//! b.server("127.0.0.1").concurrency(8).rate(10.0);
//! let refused = b.build().expect_err("a closed loop has no rate");
//! assert_eq!(refused.error, ConfigError::ConcurrencyAndRate);
//! ```

mod check;

use std::net::SocketAddr;

use super::error::{ConfigError, Warning};
use super::value::unescape_header;
use super::{
    Config, HttpVersion, Period, PrintWhat, RateProfile, ReplaySpec, SslProtocol, StartAt,
    WlogSpec, WsessSpec, WsesslogSpec, WsesspageSpec, WsetSpec,
};
use crate::model::pacing::{Io, Overload, Spin};
use crate::wire::events::Choice;
use crate::wire::url::TargetUrl;

/// A configuration under construction: httperf's defaults plus what was set.
#[derive(Debug, Clone)]
pub(crate) struct ConfigBuilder {
    /// The configuration so far (resolved fields are filled by `build`; `c.given` says
    /// which options were set).
    c: Config,
    /// The URL operands, in order.
    urls: Vec<TargetUrl>,
    /// The first of `--server`, `--servers`, `--uri` set (a URL names them all).
    url_clash: Option<&'static str>,
    /// What the addresses of `c` were resolved from, when `c` came from a built
    /// `Config` (`to_builder`): `build` resolves them again only if that changed.
    resolved: Option<Resolution>,
    /// Warnings so far.
    warnings: Vec<Warning>,
    /// Where `build` reads `RSHPERF_IO` (the process's environment; none in unit
    /// tests, which inject one).
    env: Env,
}

/// A lookup of environment variables.
pub(crate) type Env = fn(&str) -> Option<String>;

/// The environment `build` reads: the process's, except in unit tests (which
/// stay the same whatever the shell running them sets).
fn default_env() -> Env {
    if cfg!(test) {
        |_| None
    } else {
        super::auto_partition::process_env
    }
}

/// Which options were set, as `build` needs to know beyond their values (defaults that
/// depend on them, combinations). Kept in the built `Config`, so that a builder made
/// from it (`Config::to_builder`) starts where the first build started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Given {
    /// `port` if set (or the URL's).
    pub(in crate::model::config) port: Option<u16>,
    /// Whether `server` was called.
    pub(in crate::model::config) server: bool,
    /// Whether `num_conns` was called.
    pub(in crate::model::config) num_conns: bool,
    /// Whether `num_calls` was called.
    pub(in crate::model::config) num_calls: bool,
    /// Whether `rate` was called (`--call-rate` refuses it).
    pub(in crate::model::config) rate: bool,
    /// Whether `period` was called (`--call-rate` takes its schedule from it).
    pub(in crate::model::config) period: bool,
    /// Whether `call_rate_profile` was called (`--call-rate=profile`).
    pub(in crate::model::config) call_rate_profile: bool,
}

/// The options a configuration's addresses are resolved from (`--server`, `--port`,
/// `--servers`, `--unix-socket`, `--myaddr`).
#[derive(Debug, Clone, PartialEq)]
pub(in crate::model::config) struct Resolution {
    server: String,
    port: u16,
    servers: Option<String>,
    unix_socket: Option<String>,
    myaddr: Vec<String>,
}

impl Resolution {
    /// The options `c`'s addresses come from.
    pub(in crate::model::config) fn of(c: &Config) -> Resolution {
        Resolution {
            server: c.target.server.clone(),
            port: c.target.port,
            servers: c.target.servers.clone(),
            unix_socket: c.target.unix_socket.clone(),
            myaddr: c.target.myaddr.clone(),
        }
    }
}

/// A built configuration and the warnings to print before the run.
#[derive(Debug, Clone)]
pub struct Built {
    /// The configuration.
    pub(crate) config: Config,
    /// Warnings, in the order the options were given.
    pub warnings: Vec<Warning>,
}

/// A refused configuration: the error, and the warnings to print before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// Why.
    pub error: ConfigError,
    /// Warnings found before the error.
    pub warnings: Vec<Warning>,
}

/// Setters that store one value.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty => $($field:ident).+;)*) => {
        $(
            $(#[$doc])*
            pub(crate) fn $name(&mut self, value: $ty) -> &mut Self {
                self.c.$($field).+ = value;
                self
            }
        )*
    };
}

/// Setters of optional texts (file names, names).
macro_rules! text_setters {
    ($($(#[$doc:meta])* $name:ident => $($field:ident).+;)*) => {
        $(
            $(#[$doc])*
            pub(crate) fn $name(&mut self, value: impl Into<String>) -> &mut Self {
                self.c.$($field).+ = Some(value.into());
                self
            }
        )*
    };
}

impl Default for ConfigBuilder {
    fn default() -> Self {
        ConfigBuilder::new()
    }
}

impl ConfigBuilder {
    /// httperf's defaults (`Config::builder()`).
    pub(crate) fn new() -> ConfigBuilder {
        ConfigBuilder {
            c: Config::defaults(),
            urls: Vec::new(),
            url_clash: None,
            resolved: None,
            warnings: Vec::new(),
            env: default_env(),
        }
    }

    /// A builder that starts from `built` as its own build left it: its values and
    /// which options were set, its addresses already resolved. Changing a value and
    /// building again runs every check of `build` on the result (`Config::to_builder`).
    pub(crate) fn from_config(built: &Config) -> ConfigBuilder {
        ConfigBuilder {
            c: built.clone(),
            urls: Vec::new(),
            url_clash: None,
            resolved: Some(Resolution::of(built)),
            warnings: Vec::new(),
            env: default_env(),
        }
    }

    /// The warnings so far (a front end that fails before `build` prints them first).
    pub(crate) fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Adds a warning of the front end's (e.g. an ignored operand), kept in order.
    pub(crate) fn warn(&mut self, warning: Warning) -> &mut Self {
        self.warnings.push(warning);
        self
    }

    /// Records that `option` names the server or URI (a URL operand then clashes).
    fn names_target(&mut self, option: &'static str) {
        self.url_clash.get_or_insert(option);
    }

    // --- target -------------------------------------------------------------------

    /// `--server`: host name or address (no port, no URL).
    pub(crate) fn server(&mut self, host: impl Into<String>) -> &mut Self {
        self.c.target.server = host.into();
        self.c.given.server = true;
        self.names_target("--server");
        self
    }

    /// `--servers=F`: a file of servers used round-robin.
    pub(crate) fn servers(&mut self, file: impl Into<String>) -> &mut Self {
        self.c.target.servers = Some(file.into());
        self.names_target("--servers");
        self
    }

    /// `--uri`.
    pub(crate) fn uri(&mut self, uri: impl Into<String>) -> &mut Self {
        self.c.target.uri = uri.into();
        self.names_target("--uri");
        self
    }

    /// `--port` (default 80, or 443 with TLS).
    pub(crate) fn port(&mut self, port: u16) -> &mut Self {
        self.c.given.port = Some(port);
        self
    }

    /// A URL operand: server, port, URI and TLS at once. A second URL is an error.
    pub(crate) fn url(&mut self, url: TargetUrl) -> &mut Self {
        self.urls.push(url);
        self
    }

    /// `--method` (echoed when given, even `GET`).
    pub(crate) fn method(&mut self, method: impl Into<String>) -> &mut Self {
        self.c.request.method = method.into();
        self.c.request.method_given = true;
        self
    }

    /// `--add-header` as typed: escapes are processed now (unknown ones warned about).
    pub(crate) fn add_header(&mut self, raw: &str) -> &mut Self {
        let (bytes, warnings) = unescape_header(raw);
        self.warnings
            .extend(warnings.into_iter().map(Warning::HeaderEscape));
        self.c.request.add_header = bytes;
        self.c.request.add_header_raw = Some(raw.to_string());
        self
    }

    /// `--myaddr` (repeatable): a local address of the pool.
    pub(crate) fn myaddr(&mut self, addr: impl Into<String>) -> &mut Self {
        self.c.target.myaddr.push(addr.into());
        self
    }

    /// `--send-buffer` (SO_SNDBUF); 0 keeps the kernel's default (ab's and lb's).
    pub(crate) fn send_buffer(&mut self, bytes: u32) -> &mut Self {
        self.c.sockets.send_buffer = bytes;
        self.c.sockets.buffers_given.0 = true;
        self
    }

    /// `--recv-buffer` (SO_RCVBUF); 0 keeps the kernel's default (ab's and lb's).
    pub(crate) fn recv_buffer(&mut self, bytes: u32) -> &mut Self {
        self.c.sockets.recv_buffer = bytes;
        self.c.sockets.buffers_given.1 = true;
        self
    }

    /// `--metrics-listen`.
    pub(crate) fn metrics_listen(&mut self, addr: SocketAddr) -> &mut Self {
        self.c.output.metrics_listen = Some(addr);
        self
    }

    /// `--print-reply`.
    pub(crate) fn print_reply(&mut self, what: PrintWhat) -> &mut Self {
        self.c.output.print_reply = Some(what);
        self
    }

    /// `--print-request`.
    pub(crate) fn print_request(&mut self, what: PrintWhat) -> &mut Self {
        self.c.output.print_request = Some(what);
        self
    }

    /// `--fail-on=EXPR`, parsed by `model::threshold::parse`.
    pub(crate) fn fail_on(&mut self, threshold: crate::model::threshold::Threshold) -> &mut Self {
        self.c.output.fail_on.push(threshold);
        self
    }

    /// The verbosity (the number of `-v`): a front end that prints its own text (the
    /// sweep's table) sets 0.
    pub(crate) fn verbosity(&mut self, level: u32) -> &mut Self {
        self.c.output.verbose = level;
        self
    }

    /// `-v`: one more level of verbosity.
    pub(crate) fn verbose(&mut self) -> &mut Self {
        self.c.output.verbose = self.c.output.verbose.saturating_add(1);
        self
    }

    // --- load ---------------------------------------------------------------------

    /// `--num-conns`.
    pub(crate) fn num_conns(&mut self, n: u64) -> &mut Self {
        self.c.load.num_conns = n;
        self.c.given.num_conns = true;
        self
    }

    /// `--num-calls`.
    pub(crate) fn num_calls(&mut self, n: u64) -> &mut Self {
        self.c.load.num_calls = n;
        self.c.given.num_calls = true;
        self
    }

    /// `--rate X`: connections per second, deterministic; 0 means sequential.
    #[cfg(test)]
    pub(crate) fn rate(&mut self, per_second: f64) -> &mut Self {
        self.c.given.rate = true;
        self.c.load.period = if per_second > 0.0 && (1.0 / per_second).is_finite() {
            Period::Deterministic(1.0 / per_second)
        } else {
            Period::Sequential
        };
        self
    }

    /// `--rate` already turned into its schedule (`value`'s `parse_rate`).
    pub(crate) fn rate_period(&mut self, period: Period) -> &mut Self {
        self.c.given.rate = true;
        self.c.load.period = period;
        self
    }

    /// `--period`: the inter-arrival process.
    pub(crate) fn period(&mut self, period: Period) -> &mut Self {
        self.c.given.period = true;
        self.c.load.period = period;
        self
    }

    /// `--overload`.
    pub(crate) fn overload(&mut self, overload: Overload) -> &mut Self {
        self.c.pacing.set_overload(overload);
        self
    }

    /// `--spin`.
    pub(crate) fn spin(&mut self, spin: Spin) -> &mut Self {
        self.c.pacing.set_spin(spin);
        self
    }

    /// `--io` (without it, `build` takes `RSHPERF_IO`, else epoll).
    pub(crate) fn io(&mut self, io: Io) -> &mut Self {
        self.c.pacing.set_io(io).set_io_given(true);
        self
    }

    /// The environment `build` reads `RSHPERF_IO` from (unit tests inject one).
    #[cfg(test)]
    pub(crate) fn environment(&mut self, env: Env) -> &mut Self {
        self.env = env;
        self
    }

    /// `--pin`.
    pub(crate) fn pin(&mut self) -> &mut Self {
        self.c.pacing.set_pin(true);
        self
    }

    /// `--realtime`.
    pub(crate) fn realtime(&mut self) -> &mut Self {
        self.c.pacing.set_realtime(true);
        self
    }

    /// `--client=I/N`.
    pub(crate) fn client(&mut self, id: u32, of: u32) -> &mut Self {
        (self.c.load.client_id, self.c.load.num_clients) = (id, of);
        self
    }

    /// `--rate-profile`: the rate over time; the run lasts the profile.
    pub(crate) fn rate_profile(&mut self, profile: RateProfile) -> &mut Self {
        self.c.load.rate_profile = Some(profile);
        self
    }

    /// `rshperf replay`: the log replayed, at `--call-rate`'s mean rate.
    pub(crate) fn replay(&mut self, spec: ReplaySpec) -> &mut Self {
        self.c.load.replay = Some(spec);
        self
    }

    /// `--call-rate=profile`: calls over the pool at `--rate-profile`'s rate.
    pub(crate) fn call_rate_profile(&mut self) -> &mut Self {
        self.c.given.call_rate_profile = true;
        self
    }

    /// `--partition=I/N`.
    pub(crate) fn partition(&mut self, index: u32, of: u32) -> &mut Self {
        self.c.load.partition = (index, of);
        self
    }

    setters! {
        /// `--burst-length`.
        burst_length: u64 => load.burst_length;
        /// `--timeout`, seconds (0: none).
        timeout: f64 => sockets.timeout;
        /// `--think-timeout`, seconds (0: none).
        think_timeout: f64 => sessions.think_timeout;
        /// `--runtime`, seconds (0: none).
        runtime: f64 => load.runtime;
        /// `--max-connections` (0: default).
        max_connections: u64 => load.max_connections;
        /// `--max-piped-calls` (0: default).
        max_piped_calls: u64 => load.max_piped_calls;
        /// `--failure-status` (0: none).
        failure_status: u32 => sessions.failure_status;
        /// `--threads` (engines).
        threads: u32 => load.threads;
        /// `--concurrency` (0: open loop).
        concurrency: u64 => load.concurrency;
        /// `--call-rate`, calls per second (0: none).
        call_rate: f64 => load.call_rate;
        /// `-d N`.
        debug: u32 => output.debug;
        /// `--http-version`.
        http_version: HttpVersion => request.http_version;
        /// `--start-at`.
        start_at: Option<StartAt> => load.start_at;
        /// `--wsess`.
        wsess: Option<WsessSpec> => sessions.wsess;
        /// `--wsesspage`.
        wsesspage: Option<WsesspageSpec> => sessions.wsesspage;
        /// `--wsesslog`.
        wsesslog: Option<WsesslogSpec> => sessions.wsesslog;
        /// `--wlog`.
        wlog: Option<WlogSpec> => request.wlog;
        /// `--wset`.
        wset: Option<WsetSpec> => request.wset;
        /// `--stream`.
        stream: Option<Choice> => request.stream;
        /// `--stream-gap-timeout`, seconds (0: none).
        stream_gap_timeout: f64 => request.stream_gap_timeout;
        /// `--body-order`.
        body_order: crate::model::config::BodyOrder => request.body_order;
        /// `--metrics-linger`, seconds.
        metrics_linger: f64 => output.metrics_linger;
        /// `--request-log-format` (None: from the file's name).
        request_log_format: Option<crate::model::config::RequestLogFormat> => output.request_log_format;
        /// `--progress` (true) / `--no-progress` (false); unset: when stderr is a
        /// terminal.
        progress: Option<bool> => output.progress;
        /// `--hog`.
        hog: bool => sockets.hog;
        /// `--close-with-reset`.
        close_with_reset: bool => sockets.close_with_reset;
        /// `--no-host-hdr`.
        no_host_hdr: bool => request.no_host_hdr;
        /// `--retry-on-failure`.
        retry_on_failure: bool => sessions.retry_on_failure;
        /// `--session-cookies`.
        session_cookies: bool => sessions.session_cookies;
        /// `--periodic-stats`.
        periodic_stats: bool => output.periodic_stats;
        /// `--percentiles`.
        percentiles: bool => output.percentiles;
        /// `--use-timer-cache` (accepted and echoed).
        use_timer_cache: bool => output.use_timer_cache;
    }

    text_setters! {
        /// `--server-name`: the `Host:` value.
        server_name => target.server_name;
        /// `--add-header-file`.
        add_header_file => request.add_header_file;
        /// `--json=FILE` (`-`: stdout).
        json => output.json;
        /// `--csv=FILE`.
        csv => output.csv;
        /// `--timeline=FILE`.
        timeline => output.timeline;
        /// `--request-log=FILE`.
        request_log => output.request_log;
        /// `--html=FILE`.
        html => output.html;
        /// `--junit=FILE`.
        junit => output.junit;
        /// `--unix-socket=PATH`.
        unix_socket => target.unix_socket;
        /// `--body-file=F`.
        body_file => request.body_file;
        /// `--body-lines=F`.
        body_lines => request.body_lines;
        /// `--content-type=T` (one line).
        content_type => request.content_type;
        /// `--header-file=F`.
        header_file => request.header_file;
    }

    // --- TLS ------------------------------------------------------------------------

    /// `--ssl-ciphers`.
    pub(crate) fn tls_ciphers(&mut self, list: impl Into<String>) -> &mut Self {
        self.c.tls.set_ciphers(Some(list.into()));
        self
    }

    /// `--tls-server-name` (SNI).
    pub(crate) fn tls_server_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.c.tls.set_server_name(Some(name.into()));
        self
    }

    /// `--ssl-certificate` (client certificate, PEM).
    pub(crate) fn tls_certificate(&mut self, file: impl Into<String>) -> &mut Self {
        self.c.tls.set_certificate(Some(file.into()));
        self
    }

    /// `--ssl-key` (client key, PEM).
    pub(crate) fn tls_key(&mut self, file: impl Into<String>) -> &mut Self {
        self.c.tls.set_key(Some(file.into()));
        self
    }

    /// `--ssl-ca-file`.
    pub(crate) fn tls_ca_file(&mut self, file: impl Into<String>) -> &mut Self {
        self.c.tls.set_ca_file(Some(file.into()));
        self
    }

    /// `--ssl-ca-path`.
    pub(crate) fn tls_ca_path(&mut self, path: impl Into<String>) -> &mut Self {
        self.c.tls.set_ca_path(Some(path.into()));
        self
    }

    /// `--ssl`.
    pub(crate) fn tls(&mut self) -> &mut Self {
        self.c.tls.set_enabled(true);
        self
    }

    /// `--ssl-protocol` (implies `--ssl`).
    pub(crate) fn tls_protocol(&mut self, protocol: SslProtocol) -> &mut Self {
        self.c.tls.set_protocol(Some(protocol));
        self.c.tls.set_enabled(true);
        self
    }

    /// `--quic-0rtt`: HTTP/3 requests go as 0-RTT data when a resumed session allows.
    pub(crate) fn quic_0rtt(&mut self) -> &mut Self {
        self.c.tls.set_early_data(true);
        self
    }

    /// `--quic-idle-timeout`, seconds (0: none from our side).
    pub(crate) fn quic_idle_timeout(&mut self, seconds: f64) -> &mut Self {
        self.c.tls.set_quic_idle_timeout(Some(seconds));
        self
    }

    /// `--ssl-no-reuse`.
    pub(crate) fn tls_no_reuse(&mut self) -> &mut Self {
        self.c.tls.set_no_reuse(true);
        self
    }

    /// `--ssl-verify[=yes|no]`.
    pub(crate) fn tls_verify(&mut self, verify: bool) -> &mut Self {
        self.c.tls.set_verify(verify);
        self
    }
}
