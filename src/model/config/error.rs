//! `ConfigError` and `Warning`: what building a `Config` can refuse or remark.
//!
//! Owns the typed errors of the configuration path (a bad value of one option, a
//! combination of options that does not fit, an unresolvable server) and their texts:
//! `Display` gives the message httperf (or rshperf, where it is stricter) prints after
//! `rshperf: `, byte for byte (docs/compatibility.md §1–§2). Each variant names the
//! option(s) it is about, so a front end with other option letters (ab, lb) can word
//! the message itself by matching the variant; `front::error::Error` prints it. Made by
//! `config::value`, `config::period` and `ConfigBuilder::build`; matched by the front
//! ends.

use thiserror::Error as ThisError;

use crate::model::pacing::PacingError;
use crate::model::profile::ProfileError;
use crate::model::threshold::ThresholdError;
use crate::wire::url::UrlError;

/// Why a configuration cannot be built. Every variant's text is the one printed after
/// `rshperf: ` (except `SessionLimit`, printed with httperf's own prefix).
#[derive(Debug, Clone, PartialEq, ThisError)]
pub enum ConfigError {
    /// A value httperf's rule for `option` rejects: `illegal number of connections 0`,
    /// followed by what is expected when httperf itself would have taken it.
    #[error("{what} {value}{}", expected.map(|e| format!(" ({e})")).unwrap_or_default())]
    Illegal {
        /// The long option, e.g. `--num-conns`.
        option: &'static str,
        /// httperf's message prefix, e.g. `illegal number of connections`.
        what: &'static str,
        /// The value as typed.
        value: String,
        /// What is expected (rshperf's explanation), when httperf accepted the value.
        expected: Option<&'static str>,
    },
    /// A structured value of `option` (`--period`, `--client`, `--wsess`, `--wset`,
    /// `--wlog`, `--ssl-protocol`, …) whose part `message` describes is wrong.
    #[error("{message}")]
    Malformed {
        /// The long option.
        option: &'static str,
        /// The full message (it quotes the offending part, as httperf's does).
        message: String,
    },
    /// A file-name option given an empty value.
    #[error("{option} needs a file name (or - for stdout)")]
    EmptyFileName {
        /// The long option.
        option: &'static str,
    },
    /// A URL operand that is not a valid URL.
    #[error("{0}")]
    BadUrl(#[from] UrlError),
    /// An operand that names a server (`host:port`, `host:port/path`, `localhost/x`)
    /// without a scheme: refused rather than ignored, so the run cannot test another
    /// server than the one meant.
    #[error("{operand} names a server but is not a URL: give the URL: {url}")]
    OperandIsTarget {
        /// The operand as typed.
        operand: String,
        /// The URL it stands for (`http://` added, `/` when it had no path).
        url: String,
    },
    /// Two URL operands.
    #[error("more than one URL ({first} and {second}); use --servers FILE for several servers")]
    MoreThanOneUrl {
        /// The first URL as typed.
        first: String,
        /// The second URL as typed.
        second: String,
    },
    /// A URL operand and an option that names the server or URI.
    #[error("the URL {url} names the server, port and URI: give it or {option}, not both")]
    UrlAndOption {
        /// The URL as typed.
        url: String,
        /// `--server`, `--servers` or `--uri`.
        option: &'static str,
    },
    /// A URL operand with a port of its own, and `--port`.
    #[error("the URL {url} has a port: give it or --port, not both")]
    UrlAndPort {
        /// The URL as typed.
        url: String,
    },
    /// `--ssl` with an `http://` URL.
    #[error("--ssl with an http:// URL: use https://{}", url.get("http://".len()..).unwrap_or(url))]
    SslWithHttpUrl {
        /// The URL as typed.
        url: String,
    },
    /// `--server` given a URL.
    #[error("--server takes a host name, not a URL: give the URL on its own (rshperf {server} ...) or --server, --port and --uri")]
    ServerIsUrl {
        /// The `--server` value.
        server: String,
    },
    /// `--server host:port`.
    #[error("--server {server}: --server takes no port; use --server {host} --port {port} (or the URL http://{}:{port}/)", bracketed(host))]
    ServerWithPort {
        /// The `--server` value.
        server: String,
        /// Its host part.
        host: String,
        /// Its port part.
        port: String,
    },
    /// More than one of `--wsess`, `--wsesslog`, `--wsesspage`.
    #[error("only one of --wsess, --wsesslog, --wsesspage may be given")]
    SessionWorkloads,
    /// `--json=-` and a `--print-*` option both write to stdout.
    #[error(
        "--json=- cannot be combined with --print-request or --print-reply (both write to stdout)"
    )]
    JsonStdoutAndPrint,
    /// httperf's `session_init` limits (`--max-conns` ≤ 4, `--max-piped-calls` ≤ 32);
    /// printed after httperf's `rshperf.session_init: ` prefix.
    #[error("{option} must be <= {max}")]
    SessionLimit {
        /// `--max-conns` or `--max-piped-calls` (httperf's spelling).
        option: &'static str,
        /// The limit.
        max: u64,
    },
    /// `--session-cookies` without a session workload.
    #[error("--session-cookie requires session-oriented workload (e.g., --wsess)")]
    CookiesWithoutSessions,
    /// `--server` and `--servers`.
    #[error("--server S or --servers file, not both")]
    ServerAndServers,
    /// `--unix-socket` with an option that needs TCP or several servers.
    #[error("--unix-socket connects to one socket file: not with {option}")]
    UnixSocketWith {
        /// `--servers`, `--myaddr` or `--hog`.
        option: &'static str,
    },
    /// `--body-file` with a page or session-log workload.
    #[error("{}", body_file_text(*with_sesslog))]
    BodyFileWithSessions {
        /// True for `--wsesslog`, false for `--wsesspage`.
        with_sesslog: bool,
    },
    /// `--metrics-linger` without `--metrics-listen`.
    #[error("--metrics-linger needs --metrics-listen")]
    LingerWithoutListen,
    /// `--tls-server-name` without TLS.
    #[error("--tls-server-name requires --ssl (or --ssl-protocol)")]
    ServerNameWithoutTls,
    /// `--start-at` further ahead than a run may wait.
    #[error("--start-at: the start time is more than 7 days ({max_secs} s) away")]
    StartTooLate {
        /// The longest wait, in seconds.
        max_secs: u64,
    },
    /// A combination of options whose feature rshperf does not implement yet
    /// (`build`'s last check).
    #[error("{option} is not supported yet")]
    Unsupported {
        /// The options, e.g. `--wsesspage with --http-version 2`.
        option: &'static str,
    },
    /// `--concurrency` with `--rate`/`--period`.
    #[error("--concurrency runs a closed loop: give it or --rate/--period, not both")]
    ConcurrencyAndRate,
    /// Fewer `--concurrency` users than engines.
    #[error("--concurrency {concurrency} is less than the number of engines ({engines}: --threads times the --partition count); every engine needs at least one user")]
    TooFewUsers {
        /// `--concurrency`.
        concurrency: u64,
        /// `--threads` × partition count.
        engines: u64,
    },
    /// `--call-rate` with something it cannot be combined with.
    #[error("--call-rate schedules calls over a pool of --num-conns connections: {}", clash.text())]
    CallRateWith {
        /// What clashes.
        clash: CallRateClash,
    },
    /// `--call-rate` with fewer connections than engines.
    #[error("--call-rate: --num-conns {num_conns} is less than the number of engines ({engines}: --threads times the --partition count); every engine needs a connection")]
    CallRateConns {
        /// `--num-conns`.
        num_conns: u64,
        /// `--threads` × partition count.
        engines: u64,
    },
    /// `--call-rate R` and a `--period` whose mean is not 1/R.
    #[error("--call-rate {} and --period: the period's mean must be 1/R = {} s (it is {} s); e.g. --period e{}", g(*rate), g(1.0 / rate), g(*mean), g(1.0 / rate))]
    CallRatePeriod {
        /// `--call-rate`.
        rate: f64,
        /// The mean of `--period`.
        mean: f64,
    },
    /// `--rate-profile` with an option that sets the rate another way.
    #[error("--rate-profile sets the rate over time: {advice}")]
    RateProfileWith {
        /// The other option.
        option: &'static str,
        /// What to do instead.
        advice: &'static str,
    },
    /// `--call-rate=profile` without `--rate-profile`.
    #[error("--call-rate=profile takes the call rate from --rate-profile, which is not given")]
    CallRateProfileWithout,
    /// A profile with random spacing whose arrivals are too many to count before the
    /// run.
    #[error("--rate-profile: about {expected} arrivals with --period u, e or v; at most {max} (deterministic spacing has no limit; --num-conns caps the count)")]
    ProfileTooMany {
        /// The profile's expected arrivals.
        expected: u64,
        /// The most allowed.
        max: u64,
    },
    /// A `--fail-on` expression that does not parse.
    #[error("--fail-on: {0}")]
    FailOn(#[from] ThresholdError),
    /// `--overload` given something other than a policy.
    #[error("--overload: `{value}' is not a policy (expected degrade or queue)")]
    Overload {
        /// The value as typed.
        value: String,
    },
    /// `--spin` given something other than `auto`, `off` or microseconds in range.
    #[error("--spin: `{value}' is not auto, off or a number of microseconds from 0 to {}", crate::model::pacing::SPIN_MAX.as_micros())]
    Spin {
        /// The value as typed.
        value: String,
    },
    /// `--io` given something other than a backend.
    #[error("--io: `{value}' is not a backend (expected epoll, uring or auto)")]
    Io {
        /// The value as typed.
        value: String,
    },
    /// `RSHPERF_IO` (which stands for `--io`) set to something other than a backend.
    #[error(
        "RSHPERF_IO: `{value}' is not a backend (expected epoll, uring or auto; \
         or unset it and give --io)"
    )]
    IoEnv {
        /// The variable's value.
        value: String,
    },
    /// A bound of a `--myaddr` range that is not an IPv4 address.
    #[error("invalid {} address {address} in --myaddr {entry}", if *first { "starting" } else { "ending" })]
    MyaddrBound {
        /// The `--myaddr` entry.
        entry: String,
        /// True for the start of the range.
        first: bool,
        /// The bound as typed.
        address: String,
    },
    /// A `--myaddr` range that is descending or too long.
    #[error("invalid address list {entry} (an ascending range of at most 65536)")]
    MyaddrRange {
        /// The `--myaddr` entry.
        entry: String,
    },
    /// A `--myaddr` entry that is not an address and does not resolve.
    #[error("invalid address list {entry} (not an address or host name)")]
    MyaddrUnknown {
        /// The `--myaddr` entry.
        entry: String,
    },
    /// More `--myaddr` addresses than rshperf keeps.
    #[error("--myaddr: more than 65536 addresses")]
    MyaddrTooMany,
    /// The server name does not resolve.
    #[error("cannot resolve server address '{server}': {reason}")]
    Unresolvable {
        /// The server as given.
        server: String,
        /// The resolver's reason.
        reason: String,
    },
}

/// What `--call-rate` cannot be combined with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallRateClash {
    /// `--rate`.
    Rate,
    /// `--concurrency`.
    Concurrency,
    /// A session workload.
    Sessions,
    /// `--http-version 1.0`.
    Http10,
    /// `--max-connections`.
    MaxConnections,
}

impl CallRateClash {
    /// The explanation after the colon.
    fn text(self) -> &'static str {
        match self {
            CallRateClash::Rate => {
                "--rate (connections per second) does not apply; give one of them"
            }
            CallRateClash::Concurrency => {
                "--concurrency (a closed loop) does not apply; give one of them"
            }
            CallRateClash::Sessions => {
                "sessions (--wsess, --wsesslog, --wsesspage) are not supported"
            }
            CallRateClash::Http10 => {
                "HTTP/1.0 closes after every reply; use --http-version 1.1 or 2"
            }
            CallRateClash::MaxConnections => {
                "--max-connections does not apply (the pool is --num-conns)"
            }
        }
    }
}

impl ConfigError {
    /// The option the error is about, when it is about one (the first named).
    #[cfg(test)]
    pub(crate) fn option(&self) -> Option<&'static str> {
        match self {
            ConfigError::Illegal { option, .. }
            | ConfigError::Malformed { option, .. }
            | ConfigError::EmptyFileName { option }
            | ConfigError::SessionLimit { option, .. }
            | ConfigError::UrlAndOption { option, .. } => Some(option),
            ConfigError::UrlAndPort { .. } => Some("--port"),
            ConfigError::ServerIsUrl { .. } | ConfigError::ServerWithPort { .. } => {
                Some("--server")
            }
            ConfigError::ServerAndServers => Some("--servers"),
            ConfigError::UnixSocketWith { .. } => Some("--unix-socket"),
            ConfigError::BodyFileWithSessions { .. } => Some("--body-file"),
            ConfigError::LingerWithoutListen => Some("--metrics-linger"),
            ConfigError::ServerNameWithoutTls => Some("--tls-server-name"),
            ConfigError::StartTooLate { .. } => Some("--start-at"),
            ConfigError::CookiesWithoutSessions => Some("--session-cookies"),
            ConfigError::ConcurrencyAndRate | ConfigError::TooFewUsers { .. } => {
                Some("--concurrency")
            }
            ConfigError::CallRateWith { .. }
            | ConfigError::CallRateConns { .. }
            | ConfigError::CallRatePeriod { .. } => Some("--call-rate"),
            ConfigError::RateProfileWith { .. } | ConfigError::ProfileTooMany { .. } => {
                Some("--rate-profile")
            }
            ConfigError::CallRateProfileWithout => Some("--call-rate"),
            ConfigError::FailOn(_) => Some("--fail-on"),
            ConfigError::Overload { .. } => Some("--overload"),
            ConfigError::MyaddrBound { .. }
            | ConfigError::MyaddrRange { .. }
            | ConfigError::MyaddrUnknown { .. }
            | ConfigError::MyaddrTooMany => Some("--myaddr"),
            ConfigError::Spin { .. } => Some("--spin"),
            ConfigError::Io { .. } | ConfigError::IoEnv { .. } => Some("--io"),
            ConfigError::SslWithHttpUrl { .. } => Some("--ssl"),
            ConfigError::JsonStdoutAndPrint => Some("--json"),
            ConfigError::SessionWorkloads
            | ConfigError::BadUrl(_)
            | ConfigError::OperandIsTarget { .. }
            | ConfigError::MoreThanOneUrl { .. }
            | ConfigError::Unsupported { .. }
            | ConfigError::Unresolvable { .. } => None,
        }
    }
}

impl From<PacingError> for ConfigError {
    /// The same refusal, as the configuration's error.
    fn from(e: PacingError) -> ConfigError {
        match e {
            PacingError::Overload { value } => ConfigError::Overload { value },
            PacingError::Spin { value } => ConfigError::Spin { value },
            PacingError::Io { value } => ConfigError::Io { value },
        }
    }
}

impl From<ProfileError> for ConfigError {
    /// `--rate-profile`'s malformed value, with the grammar's message.
    fn from(e: ProfileError) -> ConfigError {
        ConfigError::Malformed {
            option: "--rate-profile",
            message: e.0,
        }
    }
}

/// Something worth telling the user that does not stop the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// An unknown or trailing escape in `--add-header` (the text says which).
    HeaderEscape(String),
    /// A non-option argument that is not a URL, ignored as httperf does (the text
    /// names it, with a hint where one fits).
    IgnoredOperand(String),
}

impl std::fmt::Display for Warning {
    /// The line printed on stderr (without the newline).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::HeaderEscape(t) => write!(f, "{}: {t}", super::PROG),
            Warning::IgnoredOperand(t) => write!(f, "{}: warning: {t}", super::PROG),
        }
    }
}

/// `%g` of a number, for messages.
fn g(x: f64) -> String {
    crate::wire::cfmt::g(x)
}

/// An IPv6 host in brackets, for a URL.
fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// The `--body-file` refusal for a page (`false`) or session-log (`true`) workload.
fn body_file_text(with_sesslog: bool) -> &'static str {
    if with_sesslog {
        "--body-file with --wsesslog: give each request's body with contents= in the session file"
    } else {
        "--body-file with --wsesspage would send the body with every embedded object"
    }
}
