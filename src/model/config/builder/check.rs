//! `ConfigBuilder::build`: every validation of a configuration, and the values it
//! derives.
//!
//! Runs, in httperf's order: the typed values against httperf's rules, the URL operand
//! against the options that name the server, `--call-rate`'s combinations and
//! schedule, the `--server` value, the other combinations (sessions, `--json=-`,
//! httperf's `session_init` limits, `--unix-socket`, `--body-file`, metrics, TLS),
//! then the defaults that depend on other options and server resolution, then how
//! far ahead `--start-at` lies and the combinations not implemented yet. Each refusal
//! is one `ConfigError` variant (tested in `tests`).

#[cfg(test)]
mod tests;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{Built, ConfigBuilder, Rejected, Resolution};
use crate::model::config::error::{CallRateClash, ConfigError};
use crate::model::config::number::{self, SESSION_MAX_CONNS, SESSION_MAX_PIPED};
use crate::model::config::{Config, HttpVersion, Period, StartAt, TlsOptions, MAX_START_DELAY};
use crate::model::pacing::{parse_io, Io, IO_ENV};
use crate::wire::url::parse_url;

/// Most arrivals of a profile with random spacing (`--period u`, `e`, `v`): the
/// workload counts them by drawing the schedule once before the run.
pub(crate) const MAX_COUNTED: u64 = 100_000_000;

impl ConfigBuilder {
    /// Validates and resolves: the `Config`, or the first error (with the warnings
    /// found before it). Checks run in httperf's order: typed values, the URL, the
    /// call rate, the `--server` value, combinations, then resolution.
    pub(crate) fn build(mut self) -> Result<Built, Rejected> {
        match self.finish() {
            Ok(()) => Ok(Built {
                config: self.c,
                warnings: self.warnings,
            }),
            Err(error) => Err(Rejected {
                error,
                warnings: self.warnings,
            }),
        }
    }

    /// Everything `build` checks and derives, in order.
    fn finish(&mut self) -> Result<(), ConfigError> {
        self.check_values()?;
        self.apply_url()?;
        self.check_profile()?;
        self.check_call_rate()?;
        if self.c.given.server {
            check_server_value(&self.c.target.server)?;
        }
        self.check_combinations()?;
        self.derive()?;
        check_start_at(self.c.load.start_at, SystemTime::now())?;
        check_unsupported(&self.c)
    }

    /// The typed values against httperf's rules (a front end that parsed them from
    /// text has checked them already; the others get the same messages).
    fn check_values(&self) -> Result<(), ConfigError> {
        let c = &self.c;
        number::NUM_CONNS.check(c.load.num_conns)?;
        number::NUM_CALLS.check(c.load.num_calls)?;
        number::BURST_LENGTH.check(c.load.burst_length)?;
        if let Some(port) = self.c.given.port {
            number::PORT.check(u64::from(port))?;
        }
        for (rule, size) in [
            (&number::SEND_BUFFER, c.sockets.send_buffer),
            (&number::RECV_BUFFER, c.sockets.recv_buffer),
        ] {
            if size != 0 {
                rule.check(u64::from(size))?;
            }
        }
        if c.sessions.failure_status != 0 {
            number::FAILURE_STATUS.check(u64::from(c.sessions.failure_status))?;
        }
        number::THREADS.check(u64::from(c.load.threads))?;
        if c.load.concurrency != 0 {
            number::CONCURRENCY.check(c.load.concurrency)?;
        }
        if c.load.call_rate != 0.0 {
            number::CALL_RATE.check(c.load.call_rate)?;
        }
        number::TIMEOUT.check(c.sockets.timeout)?;
        number::THINK_TIMEOUT.check(c.sessions.think_timeout)?;
        if c.load.runtime != 0.0 {
            number::RUNTIME.check(c.load.runtime)?;
        }
        number::METRICS_LINGER.check(c.output.metrics_linger)?;
        Ok(())
    }

    /// A URL operand sets the server, port, URI and TLS (an error next to an option
    /// naming them, or next to `--port` when it has a port of its own).
    fn apply_url(&mut self) -> Result<(), ConfigError> {
        let mut urls = self.urls.iter();
        let Some(u) = urls.next() else {
            return Ok(());
        };
        if let Some(second) = urls.next() {
            return Err(ConfigError::MoreThanOneUrl {
                first: u.text.clone(),
                second: second.text.clone(),
            });
        }
        if let Some(option) = self.url_clash {
            return Err(ConfigError::UrlAndOption {
                url: u.text.clone(),
                option,
            });
        }
        if self.c.given.port.is_some() && u.port.is_some() {
            return Err(ConfigError::UrlAndPort {
                url: u.text.clone(),
            });
        }
        if self.c.tls.enabled() && !u.tls {
            return Err(ConfigError::SslWithHttpUrl {
                url: u.text.clone(),
            });
        }
        self.c.target.server = u.host.clone();
        self.c.target.uri = u.uri.clone();
        let on = self.c.tls.enabled() | u.tls;
        self.c.tls.set_enabled(on);
        if self.c.given.port.is_none() {
            self.c.given.port = Some(u.port_or_default());
        }
        Ok(())
    }

    /// `--rate-profile`: refuses the options that set the rate another way, rescales
    /// the spacing (`--period`'s shape, deterministic by default) to the profile's
    /// peak, and gives `--call-rate=profile` the profile's mean rate.
    fn check_profile(&mut self) -> Result<(), ConfigError> {
        let c = &mut self.c;
        let Some((peak, expected, seconds)) = c
            .load
            .rate_profile
            .as_ref()
            .map(|p| (p.peak(), p.expected_arrivals(), p.duration().as_secs_f64()))
        else {
            if c.given.call_rate_profile {
                return Err(ConfigError::CallRateProfileWithout);
            }
            return Ok(());
        };
        let clash = [
            (
                c.given.rate,
                "--rate",
                "give it or --rate, not both (--period still chooses the spacing: d, u, e or v)",
            ),
            (
                c.load.concurrency > 0,
                "--concurrency",
                "--concurrency runs a closed loop, which has no schedule; give one of them",
            ),
            (
                c.load.call_rate > 0.0 && !c.given.call_rate_profile,
                "--call-rate",
                "write --call-rate=profile for calls at the profile's rate",
            ),
        ];
        if let Some(&(_, option, advice)) = clash.iter().find(|(yes, _, _)| *yes) {
            return Err(ConfigError::RateProfileWith { option, advice });
        }
        c.load.period = c.load.period.with_mean(1.0 / peak);
        if c.given.call_rate_profile {
            c.load.call_rate = expected / seconds;
        }
        let counted = c.profile_cap().map_or(expected, |n| expected.min(n as f64));
        if !matches!(c.load.period, Period::Deterministic(_)) && counted > MAX_COUNTED as f64 {
            return Err(ConfigError::ProfileTooMany {
                expected: expected as u64,
                max: MAX_COUNTED,
            });
        }
        Ok(())
    }

    /// `--call-rate R`: sets the call schedule (`--period`'s distribution, whose mean
    /// must then be 1/R, else every 1/R s) and refuses what it cannot be combined with.
    fn check_call_rate(&mut self) -> Result<(), ConfigError> {
        let c = &mut self.c;
        if c.load.call_rate == 0.0 {
            return Ok(());
        }
        let r = c.load.call_rate;
        let sessions = c.sessions.wsess.is_some()
            || c.sessions.wsesslog.is_some()
            || c.sessions.wsesspage.is_some();
        let clash = [
            (c.given.rate, CallRateClash::Rate),
            (c.load.concurrency > 0, CallRateClash::Concurrency),
            (sessions, CallRateClash::Sessions),
            (
                c.request.http_version == HttpVersion::V10,
                CallRateClash::Http10,
            ),
            (c.load.max_connections > 0, CallRateClash::MaxConnections),
        ];
        if let Some((_, clash)) = clash.iter().find(|(yes, _)| *yes) {
            return Err(ConfigError::CallRateWith { clash: *clash });
        }
        let engines = engines(c);
        if c.load.num_conns < engines {
            return Err(ConfigError::CallRateConns {
                num_conns: c.load.num_conns,
                engines,
            });
        }
        if c.load.rate_profile.is_some() {
            // The profile set the schedule (`check_profile`).
        } else if c.given.period {
            let mean = c.load.period.mean();
            if mean <= 0.0 || (mean * r - 1.0).abs() > 1e-3 {
                return Err(ConfigError::CallRatePeriod { rate: r, mean });
            }
        } else {
            c.load.period = Period::Deterministic(1.0 / r);
        }
        Ok(())
    }

    /// Checks between options.
    fn check_combinations(&self) -> Result<(), ConfigError> {
        let c = &self.c;
        let n_sessions = [
            c.sessions.wsess.is_some(),
            c.sessions.wsesslog.is_some(),
            c.sessions.wsesspage.is_some(),
        ]
        .iter()
        .filter(|s| **s)
        .count();
        if n_sessions > 1 {
            return Err(ConfigError::SessionWorkloads);
        }
        if c.output.json.as_deref() == Some("-")
            && (c.output.print_request.is_some() || c.output.print_reply.is_some())
        {
            return Err(ConfigError::JsonStdoutAndPrint);
        }
        // httperf's session_init limits: connections per session, and its ring of
        // pending calls per connection (checked in that order).
        if n_sessions > 0 && c.load.max_connections > SESSION_MAX_CONNS {
            return Err(ConfigError::SessionLimit {
                option: "--max-conns",
                max: SESSION_MAX_CONNS,
            });
        }
        if n_sessions > 0 && c.load.max_piped_calls > SESSION_MAX_PIPED {
            return Err(ConfigError::SessionLimit {
                option: "--max-piped-calls",
                max: SESSION_MAX_PIPED,
            });
        }
        if c.sessions.session_cookies && n_sessions == 0 {
            return Err(ConfigError::CookiesWithoutSessions);
        }
        if c.given.server && c.target.servers.is_some() {
            return Err(ConfigError::ServerAndServers);
        }
        check_concurrency(c)?;
        check_extensions(c)?;
        if c.tls.server_name().is_some() && !c.tls.enabled() {
            return Err(ConfigError::ServerNameWithoutTls);
        }
        Ok(())
    }

    /// Defaults that depend on other options, the `Host:` value, TLS's name and ALPN,
    /// the server's addresses.
    fn derive(&mut self) -> Result<(), ConfigError> {
        let c = &mut self.c;
        let bodies = c.request.body_file.is_some() || c.request.body_lines.is_some();
        if bodies && !c.request.method_given {
            // A body is sent with POST unless --method says otherwise (as ab's -p).
            c.request.method = "POST".to_string();
        }
        if c.request.http_version == HttpVersion::V3 {
            // HTTP/3 is always TLS 1.3 (over QUIC).
            c.tls.set_enabled(true);
            c.tls.set_quic(true);
        }
        c.target.port = c
            .given
            .port
            .unwrap_or(if c.tls.enabled() { 443 } else { 80 });
        let host_source = c.target.server_name.as_deref().unwrap_or(&c.target.server);
        c.target.host = host_value(host_source);
        c.tls.set_fallback_name(TlsOptions::fallback_for(
            c.target.server_name.as_deref(),
            &c.target.server,
        ));
        c.tls.set_alpn_h2(c.request.http_version == HttpVersion::V2);
        if self.resolved.as_ref() != Some(&Resolution::of(c)) {
            if c.target.unix_socket.is_some() {
                // Nothing to resolve: the socket path is the address; `--server` only
                // names the Host:. The placeholder keeps `addrs` non-empty.
                c.target.addrs = vec![SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), c.target.port)];
            } else if c.target.servers.is_none() {
                c.target.addrs = resolve(&c.target.server, c.target.port)?;
            }
            c.target.local_addrs = local_addresses(&c.target.myaddr)?;
        }
        let profiled = c.load.rate_profile.is_some();
        c.load.until_runtime = c.load.runtime > 0.0
            && !profiled
            && !c.given.num_conns
            && c.sessions.wsess.is_none()
            && c.sessions.wsesslog.is_none()
            && c.sessions.wsesspage.is_none()
            && c.load.call_rate == 0.0;
        c.load.calls_until_runtime =
            c.load.call_rate > 0.0 && c.load.runtime > 0.0 && !c.given.num_calls && !profiled;
        if !c.pacing.io_given() {
            // `RSHPERF_IO` stands for `--io` when it is not given (to run a test
            // suite on either backend); the echo line still names only options.
            let io = match (self.env)(IO_ENV).filter(|v| !v.is_empty()) {
                Some(v) => parse_io(&v).map_err(|_| ConfigError::IoEnv { value: v })?,
                None => Io::Epoll,
            };
            c.pacing.set_io(io);
        }
        Ok(())
    }
}

/// `--start-at` at most `MAX_START_DELAY` after `now` (a time already past is fine:
/// the run starts at once).
fn check_start_at(start: Option<StartAt>, now: SystemTime) -> Result<(), ConfigError> {
    let secs = match start {
        None => return Ok(()),
        Some(StartAt::After(s)) => s,
        Some(StartAt::Unix(t)) => {
            t - now
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs_f64()
        }
    };
    match Duration::try_from_secs_f64(secs.max(0.0)) {
        Ok(d) if d <= MAX_START_DELAY => Ok(()),
        _ => Err(ConfigError::StartTooLate {
            max_secs: MAX_START_DELAY.as_secs(),
        }),
    }
}

/// The first combination whose feature rshperf does not implement yet. Every httperf
/// option is implemented now; the check stays for options added before their feature.
fn check_unsupported(c: &Config) -> Result<(), ConfigError> {
    // The page scan reads one reply at a time; HTTP/2 and HTTP/3 multiplex them.
    let version = c.request.http_version;
    let page = c.sessions.wsesspage.is_some();
    let checks = [
        (
            page && version == HttpVersion::V2,
            "--wsesspage with --http-version 2",
        ),
        (
            page && version == HttpVersion::V3,
            "--wsesspage with --http-version 3",
        ),
        (
            c.target.unix_socket.is_some() && version == HttpVersion::V3,
            "--unix-socket with --http-version 3",
        ),
    ];
    match checks.iter().find(|(given, _)| *given) {
        Some((_, option)) => Err(ConfigError::Unsupported { option }),
        None => Ok(()),
    }
}

/// `--body-lines` replaces the fixed request's body, a line per call: it needs the
/// fixed `--uri` (not a URI generator or a session file) and no other body.
fn check_body_lines(c: &Config) -> Result<(), ConfigError> {
    let bad = |message: &str| ConfigError::Malformed {
        option: "--body-lines",
        message: message.to_string(),
    };
    if c.request.body_lines.is_none() {
        if c.request.body_order != crate::model::config::BodyOrder::RoundRobin {
            return Err(ConfigError::Malformed {
                option: "--body-order",
                message: "--body-order needs --body-lines FILE (the bodies it orders)".into(),
            });
        }
        return Ok(());
    }
    let clash = [
        (
            c.request.body_file.is_some(),
            "--body-lines with --body-file: give one of them (--body-file: one body for every call)",
        ),
        (
            c.request.wlog.is_some() || c.request.wset.is_some(),
            "--body-lines with --wlog or --wset: the bodies vary per call on the fixed --uri",
        ),
        (
            c.sessions.wsesslog.is_some(),
            "--body-lines with --wsesslog: give each request's body with contents= in the session file",
        ),
        (
            c.sessions.wsesspage.is_some(),
            "--body-lines with --wsesspage would send a body with every embedded object",
        ),
    ];
    match clash.iter().find(|(given, _)| *given) {
        Some((_, message)) => Err(bad(message)),
        None => Ok(()),
    }
}

/// Engines of the run: `--threads` times the `--partition` count.
fn engines(c: &Config) -> u64 {
    u64::from(c.load.threads.max(1)) * u64::from(c.load.partition.1.max(1))
}

/// `--concurrency` replaces the arrival process and needs a user per engine.
fn check_concurrency(c: &Config) -> Result<(), ConfigError> {
    if c.load.concurrency == 0 {
        return Ok(());
    }
    if !matches!(c.load.period, Period::Sequential) {
        return Err(ConfigError::ConcurrencyAndRate);
    }
    let engines = engines(c);
    if c.load.concurrency < engines {
        return Err(ConfigError::TooFewUsers {
            concurrency: c.load.concurrency,
            engines,
        });
    }
    Ok(())
}

/// Combinations of rshperf's transport, body and metrics options.
fn check_extensions(c: &Config) -> Result<(), ConfigError> {
    if c.target.unix_socket.is_some() {
        let clash = [
            (c.target.servers.is_some(), "--servers"),
            (!c.target.myaddr.is_empty(), "--myaddr"),
            (c.sockets.hog, "--hog"),
        ];
        if let Some((_, option)) = clash.iter().find(|(given, _)| *given) {
            return Err(ConfigError::UnixSocketWith { option });
        }
    }
    if c.request.body_file.is_some() && c.sessions.wsesspage.is_some() {
        return Err(ConfigError::BodyFileWithSessions {
            with_sesslog: false,
        });
    }
    if c.request.body_file.is_some() && c.sessions.wsesslog.is_some() {
        return Err(ConfigError::BodyFileWithSessions { with_sesslog: true });
    }
    check_body_lines(c)?;
    if c.output.metrics_linger > 0.0 && c.output.metrics_listen.is_none() {
        return Err(ConfigError::LingerWithoutListen);
    }
    if c.output.request_log.as_deref() == Some("-") {
        return Err(ConfigError::Malformed {
            option: "--request-log",
            message: "--request-log - : stdout carries the report; name a file".into(),
        });
    }
    if c.output.request_log_format.is_some() && c.output.request_log.is_none() {
        return Err(ConfigError::Malformed {
            option: "--request-log-format",
            message: "--request-log-format needs --request-log FILE".into(),
        });
    }
    Ok(())
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
fn check_server_value(server: &str) -> Result<(), ConfigError> {
    if parse_url(server).is_some() {
        return Err(ConfigError::ServerIsUrl {
            server: server.to_string(),
        });
    }
    let bare = server.strip_prefix('[').and_then(|s| s.split_once(']'));
    let (host, port) = match bare {
        Some((h, rest)) => (h, rest.strip_prefix(':').unwrap_or("")),
        None if server.parse::<Ipv6Addr>().is_ok() => return Ok(()),
        None => server.rsplit_once(':').unwrap_or((server, "")),
    };
    if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ConfigError::ServerWithPort {
            server: server.to_string(),
            host: host.to_string(),
            port: port.to_string(),
        });
    }
    Ok(())
}

/// Resolves `server` (host name, IPv4 literal, IPv6 literal with or without brackets)
/// at `port`, keeping every address in resolver order.
fn resolve(server: &str, port: u16) -> Result<Vec<SocketAddr>, ConfigError> {
    let bare = server
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(server);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let fail = |reason: String| ConfigError::Unresolvable {
        server: server.to_string(),
        reason,
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

/// Most source addresses `--myaddr` ranges may expand to.
pub(crate) const MAX_LOCAL: usize = 65_536;

/// The `--myaddr` pool: each entry an address or host name, or an inclusive IPv4
/// range `a.b.c.d-e.f.g.h` (httperf master's syntax).
fn local_addresses(entries: &[String]) -> Result<Vec<IpAddr>, ConfigError> {
    let mut out = Vec::new();
    for e in entries {
        match e.split_once('-') {
            Some((a, b)) if a.parse::<Ipv4Addr>().is_ok() || b.parse::<Ipv4Addr>().is_ok() => {
                let bound = |text: &str, first: bool| {
                    text.parse::<Ipv4Addr>()
                        .map_err(|_| ConfigError::MyaddrBound {
                            entry: e.clone(),
                            first,
                            address: text.to_string(),
                        })
                };
                let (s, t) = (u32::from(bound(a, true)?), u32::from(bound(b, false)?));
                if t < s || (t - s) as usize >= MAX_LOCAL {
                    return Err(ConfigError::MyaddrRange { entry: e.clone() });
                }
                out.extend((s..=t).map(|x| IpAddr::V4(x.into())));
            }
            _ => {
                let ip = match e.trim_matches(['[', ']']).parse::<IpAddr>() {
                    Ok(ip) => ip,
                    Err(_) => (e.as_str(), 0)
                        .to_socket_addrs()
                        .ok()
                        .and_then(|mut a| a.next())
                        .map(|a| a.ip())
                        .ok_or_else(|| ConfigError::MyaddrUnknown { entry: e.clone() })?,
                };
                out.push(ip);
            }
        }
        if out.len() > MAX_LOCAL {
            return Err(ConfigError::MyaddrTooMany);
        }
    }
    Ok(out)
}
