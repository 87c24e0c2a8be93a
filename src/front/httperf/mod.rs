//! httperf's command line onto `ConfigBuilder`: the front end of `rshperf [options]`.
//!
//! Owns the mapping of every parsed httperf option (`cli::Args`, in command-line order,
//! so the first bad value is the one reported and later options override earlier
//! ones) onto the builder's typed setters, through the value parsers of
//! `model::config::value` (httperf's messages); then the operands: an
//! `http://`/`https://` URL is the target (`ConfigBuilder::url`), a server named
//! without a scheme is refused with its URL, anything else is ignored with a warning
//! (`front::operand`). Prints the warnings `build` returns
//! (unknown `--add-header` escapes, ignored operands) on stderr before the run or the
//! error. Called by `crate::run`, `demo` and `sweep`; `from_argv` is for tests and tools.

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_echo;
#[cfg(test)]
mod tests_values;

use crate::front::cli::{self, Args, Command, Opt};
use crate::front::error::Error;
use crate::front::operand;
use crate::model::config::auto_partition;
use crate::model::config::number::{self as rule};
use crate::model::config::value::{self, nonempty};
use crate::model::config::{self, Built, Config, ConfigBuilder, ConfigError, Rejected, Warning};
use crate::model::pacing;

/// Maps `args` onto `b`, option by option in command-line order, then the operands.
/// The first bad value is the error; warnings go to the builder.
pub(crate) fn apply(b: &mut ConfigBuilder, args: &Args) -> Result<(), ConfigError> {
    for (opt, value) in &args.opts {
        apply_option(b, *opt, value.as_deref())?;
    }
    apply_operands(b, args)
}

/// One option occurrence onto the builder.
fn apply_option(b: &mut ConfigBuilder, opt: Opt, value: Option<&str>) -> Result<(), ConfigError> {
    let v = value.unwrap_or("");
    let to_u32 = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    match opt {
        Opt::AddHeader => b.add_header(v),
        Opt::AddHeaderFile => b.add_header_file(v),
        Opt::BurstLength => b.burst_length(rule::BURST_LENGTH.parse(v)?),
        Opt::Client => {
            let (id, of) = value::parse_client(v)?;
            b.client(id, of)
        }
        Opt::CloseWithReset => b.close_with_reset(true),
        Opt::Debug => b.debug(to_u32(rule::DEBUG.parse(v)?)),
        Opt::FailureStatus => b.failure_status(to_u32(rule::FAILURE_STATUS.parse(v)?)),
        Opt::Help | Opt::Version => b,
        Opt::Hog => b.hog(true),
        Opt::HttpVersion => b.http_version(value::parse_http_version(v)?),
        Opt::MaxConnections => b.max_connections(rule::MAX_CONNECTIONS.parse(v)?),
        Opt::MaxPipedCalls => b.max_piped_calls(rule::MAX_PIPED_CALLS.parse(v)?),
        Opt::Method => b.method(v),
        Opt::Myaddr => b.myaddr(v),
        Opt::NoHostHdr => b.no_host_hdr(true),
        Opt::NumCalls => b.num_calls(rule::NUM_CALLS.parse(v)?),
        Opt::NumConns => b.num_conns(rule::NUM_CONNS.parse(v)?),
        Opt::Period => b.period(config::parse_period(v)?),
        Opt::Port => {
            let port = u16::try_from(rule::PORT.parse(v)?).unwrap_or(u16::MAX);
            b.port(port)
        }
        Opt::PrintReply => b.print_reply(value::print_what(value)),
        Opt::PrintRequest => b.print_request(value::print_what(value)),
        Opt::Rate => b.rate_period(config::parse_rate(v)?),
        Opt::RecvBuffer => b.recv_buffer(to_u32(rule::RECV_BUFFER.parse(v)?)),
        Opt::RetryOnFailure => b.retry_on_failure(true),
        Opt::Runtime => b.runtime(rule::RUNTIME.parse(v)?),
        Opt::SendBuffer => b.send_buffer(to_u32(rule::SEND_BUFFER.parse(v)?)),
        Opt::Server => b.server(v),
        Opt::ServerName => b.server_name(v),
        Opt::Servers => b.servers(v),
        Opt::Uri => b.uri(v),
        Opt::SessionCookies => b.session_cookies(true),
        Opt::Ssl => b.tls(),
        Opt::SslCiphers => b.tls_ciphers(v),
        Opt::SslNoReuse => b.tls_no_reuse(),
        Opt::Quic0rtt => b.quic_0rtt(),
        Opt::QuicIdleTimeout => b.quic_idle_timeout(rule::QUIC_IDLE_TIMEOUT.parse(v)?),
        Opt::SslCertificate => b.tls_certificate(v),
        Opt::SslKey => b.tls_key(v),
        Opt::SslVerify => b.tls_verify(value::yes_no(value)),
        Opt::SslCaFile => b.tls_ca_file(v),
        Opt::SslCaPath => b.tls_ca_path(v),
        Opt::SslProtocol => b.tls_protocol(value::parse_ssl_protocol(v)?),
        Opt::TlsServerName => b.tls_server_name(v),
        Opt::ThinkTimeout => b.think_timeout(rule::THINK_TIMEOUT.parse(v)?),
        Opt::Threads => b.threads(to_u32(rule::THREADS.parse(v)?)),
        Opt::Percentiles => b.percentiles(true),
        Opt::Json => b.json(nonempty(v, "--json")?),
        Opt::Csv => b.csv(nonempty(v, "--csv")?),
        Opt::Timeline => b.timeline(nonempty(v, "--timeline")?),
        Opt::RequestLog => b.request_log(nonempty(v, "--request-log")?),
        Opt::RequestLogFormat => b.request_log_format(value::parse_request_log_format(v)?),
        Opt::Html => b.html(nonempty(v, "--html")?),
        Opt::Junit => b.junit(nonempty(v, "--junit")?),
        Opt::FailOn => b.fail_on(crate::model::threshold::parse(v).map_err(ConfigError::from)?),
        Opt::Progress => b.progress(Some(true)),
        Opt::NoProgress => b.progress(Some(false)),
        Opt::Partition => {
            let (i, n) = match auto_count(v)? {
                Some(given) => auto_partition::resolve(&auto_partition::process_env, given)
                    .map_err(|e| ConfigError::Malformed {
                        option: "--partition",
                        message: e.to_string(),
                    })?,
                None => value::parse_partition(v)?,
            };
            b.partition(i, n)
        }
        Opt::StartAt => b.start_at(Some(value::parse_start_at(v)?)),
        Opt::Concurrency => b.concurrency(rule::CONCURRENCY.parse(v)?),
        Opt::Overload => b.overload(pacing::parse_overload(v).map_err(ConfigError::from)?),
        Opt::Spin => b.spin(pacing::parse_spin(v).map_err(ConfigError::from)?),
        Opt::Io => b.io(pacing::parse_io(v).map_err(ConfigError::from)?),
        Opt::Pin => b.pin(),
        Opt::Realtime => b.realtime(),
        Opt::CallRate if v == "profile" => b.call_rate_profile(),
        Opt::CallRate => b.call_rate(rule::CALL_RATE.parse(v)?),
        Opt::RateProfile => b.rate_profile(config::parse_rate_profile(v)?),
        Opt::UnixSocket => b.unix_socket(nonempty(v, "--unix-socket")?),
        Opt::BodyFile => b.body_file(nonempty(v, "--body-file")?),
        Opt::BodyLines => b.body_lines(nonempty(v, "--body-lines")?),
        Opt::BodyOrder => b.body_order(value::parse_body_order(v)?),
        Opt::ContentType => b.content_type(value::parse_content_type(v)?),
        Opt::HeaderFile => b.header_file(nonempty(v, "--header-file")?),
        Opt::MetricsListen => b.metrics_listen(value::parse_listen(v)?),
        Opt::Stream => b.stream(Some(value::parse_stream(v)?)),
        Opt::StreamGapTimeout => b.stream_gap_timeout(rule::STREAM_GAP_TIMEOUT.parse(v)?),
        Opt::MetricsLinger => b.metrics_linger(rule::METRICS_LINGER.parse(v)?),
        Opt::Timeout => b.timeout(rule::TIMEOUT.parse(v)?),
        Opt::UseTimerCache => b.use_timer_cache(true),
        Opt::Verbose => b.verbose(),
        Opt::PeriodicStats => b.periodic_stats(true),
        Opt::Wlog => b.wlog(Some(value::parse_wlog(v)?)),
        Opt::Wsess => b.wsess(Some(value::parse_wsess(v)?)),
        Opt::Wsesspage => b.wsesspage(Some(value::parse_wsesspage(v)?)),
        Opt::Wsesslog => b.wsesslog(Some(value::parse_wsesslog(v)?)),
        Opt::Wset => b.wset(Some(value::parse_wset(v)?)),
    };
    Ok(())
}

/// Non-option arguments: a URL is the target (a second one ends the scan: `build`
/// refuses it); a server named without a scheme is an error that gives the URL;
/// anything else is ignored, as httperf does, with a warning.
fn apply_operands(b: &mut ConfigBuilder, args: &Args) -> Result<(), ConfigError> {
    let mut urls = 0;
    for op in &args.operands {
        match operand::parse_url(&op.text) {
            None => {
                if let Some(url) = operand::target_url(op) {
                    return Err(ConfigError::OperandIsTarget {
                        operand: op.text.clone(),
                        url,
                    });
                }
                b.warn(Warning::IgnoredOperand(operand::warning(op)));
            }
            Some(Err(m)) => return Err(ConfigError::BadUrl(m)),
            Some(Ok(u)) => {
                b.url(u);
                urls += 1;
                if urls > 1 {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// Builds the configuration of `args`; the warnings come with the result.
pub fn build(args: &Args) -> Result<Built, Rejected> {
    build_with(Config::builder(), args)
}

/// Maps `args` onto `b` (which may hold a front end's own settings, as `demo`'s
/// server) and builds.
pub(crate) fn build_with(mut b: ConfigBuilder, args: &Args) -> Result<Built, Rejected> {
    map(&mut b, args)?;
    b.build()
}

/// Maps `args` onto `b` (`apply`); a bad value is refused with the warnings found
/// before it, as `build` refuses.
pub(crate) fn map(b: &mut ConfigBuilder, args: &Args) -> Result<(), Rejected> {
    apply(b, args).map_err(|error| Rejected {
        error,
        warnings: b.warnings().to_vec(),
    })
}

/// Prints `warnings` on stderr, one line each.
pub(crate) fn print_warnings(warnings: &[Warning]) {
    for w in warnings {
        crate::wire::note::note!("{w}");
    }
}

/// Builds the configuration of `args`, printing the warnings on stderr first.
pub(crate) fn config(args: &Args) -> Result<Config, Error> {
    finish(build(args))
}

/// Prints the warnings of a build and gives its configuration or fatal error.
pub(crate) fn finish(result: Result<Built, Rejected>) -> Result<Config, Error> {
    match result {
        Ok(built) => {
            print_warnings(&built.warnings);
            Ok(built.config)
        }
        Err(rejected) => Err(refused(rejected)),
    }
}

/// Prints the warnings of a refused build and gives its fatal error.
pub(crate) fn refused(rejected: Rejected) -> Error {
    print_warnings(&rejected.warnings);
    rejected.error.into()
}

/// Parses `argv` (program name first) and builds the configuration; None for `-h`
/// and `-V`, which describe no run. A convenience for tests and tools.
pub fn from_argv(argv: &[&str]) -> Result<Option<Config>, Error> {
    let owned: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    match cli::parse(&owned)? {
        Command::Run(args) => config(&args).map(Some),
        Command::Help(_) | Command::Version(_) => Ok(None),
    }
}

/// `--partition=auto` (Some(None)) or `auto/N` (Some(Some(N))); None for `I/N`.
fn auto_count(v: &str) -> Result<Option<Option<u32>>, ConfigError> {
    let Some(rest) = v.strip_prefix("auto") else {
        return Ok(None);
    };
    if rest.is_empty() {
        return Ok(Some(None));
    }
    let n = rest
        .strip_prefix('/')
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse::<u32>().ok())
        .ok_or_else(|| ConfigError::Malformed {
            option: "--partition",
            message: format!("illegal partition {v} (expected I/N, auto or auto/N)"),
        })?;
    Ok(Some(Some(n)))
}
