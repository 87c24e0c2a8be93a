//! Command-line parsing with glibc `getopt_long` rules (docs/compatibility.md §1.1).
//!
//! Owns the option table (names, argument kinds, table order), the long-option lookup
//! on the scanner httperf shares with `lb` (`front::getopt`), the diagnostics (plus a
//! `did you mean --NAME?` line after glibc's for a misspelt option, or what ab's,
//! wrk's or oha's letter is here: `habits`), httperf's usage lines (`usage`; `-h`
//! returns them and the caller, `dispatch::help_text`, adds the rest of `--help` from
//! `help`) and the `-V` version text. It does not interpret option values (but for a `-d`
//! value that is wrk's duration, refused with the hint): `Args` keeps every
//! option occurrence raw and in command-line order, and `front::httperf` maps them onto
//! `ConfigBuilder`. Called by `crate::run` (and by `front::httperf::from_argv`).
//!
//! Rules reproduced from glibc: unique-prefix abbreviations (an exact match wins; an
//! ambiguous prefix lists the candidates in table order), `--opt=value` and
//! `--opt value` (the next element is taken unconditionally), optional arguments only
//! in the `=` form, grouped short options (`-vv`, `-d3`, `-d 3`), permutation (stray
//! operands are collected, with the option before each, for `operand`) and `--` ending
//! option processing. Diagnostics carry the program name `rshperf`, whatever argv[0]
//! is. Edit distances for suggestions come from `strsim` (Damerau–Levenshtein).

use crate::front::error::Error;
use crate::front::getopt::{Getopt, GetoptError, Item, Operands};
use crate::front::habits;
use crate::model::config::number::DEBUG;

/// One long option of rshperf (httperf 0.9.0 and master, plus `--threads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Opt {
    /// `--add-header=S`.
    AddHeader,
    /// `--add-header-file=F` (master).
    AddHeaderFile,
    /// `--burst-length=N`.
    BurstLength,
    /// `--client=I/N`.
    Client,
    /// `--close-with-reset`.
    CloseWithReset,
    /// `--debug=N`, `-d N`.
    Debug,
    /// `--failure-status=N`.
    FailureStatus,
    /// `--help`, `-h`.
    Help,
    /// `--hog`.
    Hog,
    /// `--http-version=S`.
    HttpVersion,
    /// `--max-connections=N`.
    MaxConnections,
    /// `--max-piped-calls=N`.
    MaxPipedCalls,
    /// `--method=S`.
    Method,
    /// `--myaddr=S` (master, repeatable).
    Myaddr,
    /// `--no-host-hdr`.
    NoHostHdr,
    /// `--num-calls=N`.
    NumCalls,
    /// `--num-conns=N`.
    NumConns,
    /// `--period=[D]T1[,T2]…`.
    Period,
    /// `--port=N`.
    Port,
    /// `--print-reply[=header|body]`.
    PrintReply,
    /// `--print-request[=header|body]`.
    PrintRequest,
    /// `--rate=X`.
    Rate,
    /// `--recv-buffer=N`.
    RecvBuffer,
    /// `--retry-on-failure`.
    RetryOnFailure,
    /// `--runtime=X` (master).
    Runtime,
    /// `--send-buffer=N`.
    SendBuffer,
    /// `--server=S`.
    Server,
    /// `--server-name=S`.
    ServerName,
    /// `--servers=F` (master).
    Servers,
    /// `--uri=S`.
    Uri,
    /// `--session-cookies`.
    SessionCookies,
    /// `--ssl`.
    Ssl,
    /// `--ssl-ciphers=L`.
    SslCiphers,
    /// `--ssl-no-reuse`.
    SslNoReuse,
    /// `--quic-0rtt`.
    Quic0rtt,
    /// `--quic-idle-timeout=S`.
    QuicIdleTimeout,
    /// `--ssl-certificate=F` (master).
    SslCertificate,
    /// `--ssl-key=F` (master).
    SslKey,
    /// `--ssl-verify[=yes|no]` (master).
    SslVerify,
    /// `--ssl-ca-file=F` (master).
    SslCaFile,
    /// `--ssl-ca-path=P` (master).
    SslCaPath,
    /// `--ssl-protocol=S` (master).
    SslProtocol,
    /// `--tls-server-name=S` (master).
    TlsServerName,
    /// `--think-timeout=X`.
    ThinkTimeout,
    /// `--threads=N` (rshperf).
    Threads,
    /// `--percentiles` (rshperf).
    Percentiles,
    /// `--json=FILE` (rshperf).
    Json,
    /// `--csv=FILE` (rshperf).
    Csv,
    /// `--timeline=FILE` (rshperf).
    Timeline,
    /// `--html=FILE` (rshperf).
    Html,
    /// `--junit=FILE` (rshperf).
    Junit,
    /// `--fail-on=EXPR` (rshperf, repeatable).
    FailOn,
    /// `--progress` (rshperf).
    Progress,
    /// `--no-progress` (rshperf).
    NoProgress,
    /// `--partition=I/N` (rshperf).
    Partition,
    /// `--start-at=T` (rshperf).
    StartAt,
    /// `--concurrency=C` (rshperf): closed loop.
    Concurrency,
    /// `--overload=degrade|queue` (rshperf).
    Overload,
    /// `--spin=auto|off|USEC` (rshperf).
    Spin,
    /// `--io=epoll|uring|auto` (rshperf).
    Io,
    /// `--pin` (rshperf).
    Pin,
    /// `--realtime` (rshperf).
    Realtime,
    /// `--call-rate=R` (rshperf): open-loop calls over a pool of connections.
    CallRate,
    /// `--rate-profile=SEGMENTS` (rshperf): the rate over time (ramp, hold, step,
    /// sine); the run lasts the profile.
    RateProfile,
    /// `--unix-socket=PATH` (rshperf): connect to a unix domain socket.
    UnixSocket,
    /// `--body-file=F` (rshperf): request body from a file.
    BodyFile,
    /// `--body-lines=F` (rshperf): a request body per call, one JSON per line.
    BodyLines,
    /// `--body-order=round-robin|random:SEED` (rshperf): which line a call sends.
    BodyOrder,
    /// `--content-type=T` (rshperf): the body's `Content-Type`.
    ContentType,
    /// `--header-file=F` (rshperf): `Name: value` lines added to every request.
    HeaderFile,
    /// `--metrics-listen=ADDR:PORT` (rshperf): serve Prometheus metrics.
    MetricsListen,
    /// `--metrics-linger=S` (rshperf): keep serving them after the run.
    MetricsLinger,
    /// `--stream=sse|ndjson|lines|auto` (rshperf): split reply bodies into events.
    Stream,
    /// `--stream-gap-timeout=S` (rshperf): a longer gap between events is a stall.
    StreamGapTimeout,
    /// `--request-log=FILE` (rshperf): one record per call.
    RequestLog,
    /// `--request-log-format=FORMAT` (rshperf): jsonl, csv or binary.
    RequestLogFormat,
    /// `--timeout=X`.
    Timeout,
    /// `--use-timer-cache` (master).
    UseTimerCache,
    /// `--verbose`, `-v`.
    Verbose,
    /// `--version`, `-V`.
    Version,
    /// `--periodic-stats`, `-n` (master).
    PeriodicStats,
    /// `--wlog=B,F`.
    Wlog,
    /// `--wsess=N1,N2,X`.
    Wsess,
    /// `--wsesslog=N,X,F`.
    Wsesslog,
    /// `--wsesspage=N1,N2,X`.
    Wsesspage,
    /// `--wset=N,X`.
    Wset,
}

/// Whether a long option takes an argument (getopt's `has_arg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HasArg {
    /// A flag: `--opt=x` is an error.
    No,
    /// `--opt=x` or `--opt x`.
    Required,
    /// Only `--opt=x`; plain `--opt` has no argument.
    Optional,
}

/// One row of the long-option table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OptSpec {
    /// Long name without the dashes.
    pub(crate) name: &'static str,
    /// Which option this is.
    pub(crate) opt: Opt,
    /// Argument kind.
    pub(crate) has_arg: HasArg,
}

const fn spec(name: &'static str, opt: Opt, has_arg: HasArg) -> OptSpec {
    OptSpec { name, opt, has_arg }
}

/// The long options in httperf master's table order (which is the order glibc lists
/// ambiguous candidates in), with `--tls-server-name` and `--threads` inserted.
pub(crate) const OPTIONS: &[OptSpec] = &[
    spec("add-header", Opt::AddHeader, HasArg::Required),
    spec("add-header-file", Opt::AddHeaderFile, HasArg::Required),
    spec("burst-length", Opt::BurstLength, HasArg::Required),
    spec("client", Opt::Client, HasArg::Required),
    spec("close-with-reset", Opt::CloseWithReset, HasArg::No),
    spec("debug", Opt::Debug, HasArg::Required),
    spec("failure-status", Opt::FailureStatus, HasArg::Required),
    spec("help", Opt::Help, HasArg::No),
    spec("hog", Opt::Hog, HasArg::No),
    spec("http-version", Opt::HttpVersion, HasArg::Required),
    spec("max-connections", Opt::MaxConnections, HasArg::Required),
    spec("max-piped-calls", Opt::MaxPipedCalls, HasArg::Required),
    spec("method", Opt::Method, HasArg::Required),
    spec("myaddr", Opt::Myaddr, HasArg::Required),
    spec("no-host-hdr", Opt::NoHostHdr, HasArg::No),
    spec("num-calls", Opt::NumCalls, HasArg::Required),
    spec("num-conns", Opt::NumConns, HasArg::Required),
    spec("period", Opt::Period, HasArg::Required),
    spec("port", Opt::Port, HasArg::Required),
    spec("print-reply", Opt::PrintReply, HasArg::Optional),
    spec("print-request", Opt::PrintRequest, HasArg::Optional),
    spec("rate", Opt::Rate, HasArg::Required),
    spec("recv-buffer", Opt::RecvBuffer, HasArg::Required),
    spec("retry-on-failure", Opt::RetryOnFailure, HasArg::No),
    spec("runtime", Opt::Runtime, HasArg::Required),
    spec("send-buffer", Opt::SendBuffer, HasArg::Required),
    spec("server", Opt::Server, HasArg::Required),
    spec("server-name", Opt::ServerName, HasArg::Required),
    spec("servers", Opt::Servers, HasArg::Required),
    spec("uri", Opt::Uri, HasArg::Required),
    spec("session-cookies", Opt::SessionCookies, HasArg::No),
    spec("ssl", Opt::Ssl, HasArg::No),
    spec("ssl-ciphers", Opt::SslCiphers, HasArg::Required),
    spec("ssl-no-reuse", Opt::SslNoReuse, HasArg::No),
    spec("quic-0rtt", Opt::Quic0rtt, HasArg::No),
    spec("quic-idle-timeout", Opt::QuicIdleTimeout, HasArg::Required),
    spec("ssl-certificate", Opt::SslCertificate, HasArg::Required),
    spec("ssl-key", Opt::SslKey, HasArg::Required),
    spec("ssl-verify", Opt::SslVerify, HasArg::Optional),
    spec("ssl-ca-file", Opt::SslCaFile, HasArg::Required),
    spec("ssl-ca-path", Opt::SslCaPath, HasArg::Required),
    spec("ssl-protocol", Opt::SslProtocol, HasArg::Required),
    spec("tls-server-name", Opt::TlsServerName, HasArg::Required),
    spec("think-timeout", Opt::ThinkTimeout, HasArg::Required),
    spec("threads", Opt::Threads, HasArg::Required),
    spec("timeout", Opt::Timeout, HasArg::Required),
    spec("use-timer-cache", Opt::UseTimerCache, HasArg::No),
    spec("verbose", Opt::Verbose, HasArg::No),
    spec("version", Opt::Version, HasArg::No),
    spec("periodic-stats", Opt::PeriodicStats, HasArg::No),
    spec("wlog", Opt::Wlog, HasArg::Required),
    spec("wsess", Opt::Wsess, HasArg::Required),
    spec("wsesslog", Opt::Wsesslog, HasArg::Required),
    spec("wsesspage", Opt::Wsesspage, HasArg::Required),
    spec("wset", Opt::Wset, HasArg::Required),
    spec("percentiles", Opt::Percentiles, HasArg::No),
    spec("json", Opt::Json, HasArg::Required),
    spec("csv", Opt::Csv, HasArg::Required),
    spec("timeline", Opt::Timeline, HasArg::Required),
    spec("html", Opt::Html, HasArg::Required),
    spec("junit", Opt::Junit, HasArg::Required),
    spec("fail-on", Opt::FailOn, HasArg::Required),
    spec("progress", Opt::Progress, HasArg::No),
    spec("no-progress", Opt::NoProgress, HasArg::No),
    spec("partition", Opt::Partition, HasArg::Required),
    spec("start-at", Opt::StartAt, HasArg::Required),
    spec("concurrency", Opt::Concurrency, HasArg::Required),
    spec("overload", Opt::Overload, HasArg::Required),
    spec("spin", Opt::Spin, HasArg::Required),
    spec("io", Opt::Io, HasArg::Required),
    spec("pin", Opt::Pin, HasArg::No),
    spec("realtime", Opt::Realtime, HasArg::No),
    spec("call-rate", Opt::CallRate, HasArg::Required),
    spec("rate-profile", Opt::RateProfile, HasArg::Required),
    spec("unix-socket", Opt::UnixSocket, HasArg::Required),
    spec("body-file", Opt::BodyFile, HasArg::Required),
    spec("body-lines", Opt::BodyLines, HasArg::Required),
    spec("body-order", Opt::BodyOrder, HasArg::Required),
    spec("content-type", Opt::ContentType, HasArg::Required),
    spec("header-file", Opt::HeaderFile, HasArg::Required),
    spec("metrics-listen", Opt::MetricsListen, HasArg::Required),
    spec("metrics-linger", Opt::MetricsLinger, HasArg::Required),
    spec("stream", Opt::Stream, HasArg::Required),
    spec(
        "stream-gap-timeout",
        Opt::StreamGapTimeout,
        HasArg::Required,
    ),
    spec("request-log", Opt::RequestLog, HasArg::Required),
    spec(
        "request-log-format",
        Opt::RequestLogFormat,
        HasArg::Required,
    ),
];

impl Opt {
    /// True for options httperf itself has; false for rshperf's own. An abbreviation
    /// that is unique among httperf's options keeps its httperf meaning even when it
    /// also prefixes one of ours, so every httperf command line parses as before.
    pub(crate) fn is_httperf(self) -> bool {
        !matches!(
            self,
            Opt::Threads
                | Opt::Percentiles
                | Opt::Json
                | Opt::Csv
                | Opt::Timeline
                | Opt::Html
                | Opt::Junit
                | Opt::FailOn
                | Opt::Progress
                | Opt::NoProgress
                | Opt::Partition
                | Opt::StartAt
                | Opt::Concurrency
                | Opt::Overload
                | Opt::Spin
                | Opt::Io
                | Opt::Pin
                | Opt::Realtime
                | Opt::CallRate
                | Opt::RateProfile
                | Opt::UnixSocket
                | Opt::BodyFile
                | Opt::BodyLines
                | Opt::BodyOrder
                | Opt::ContentType
                | Opt::HeaderFile
                | Opt::MetricsListen
                | Opt::MetricsLinger
                | Opt::Stream
                | Opt::StreamGapTimeout
                | Opt::RequestLog
                | Opt::RequestLogFormat
        )
    }

    /// The long name with its dashes, e.g. `--num-conns`.
    pub(crate) fn long_name(self) -> String {
        let name = OPTIONS
            .iter()
            .find(|s| s.opt == self)
            .map_or("?", |s| s.name);
        format!("--{name}")
    }
}

/// The program name used in every diagnostic and in the echo line.
pub(crate) const PROG: &str = "rshperf";

/// The parsed command line: every option occurrence, raw and in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    /// Options in command-line order with their argument as typed (`None` for flags,
    /// and for optional-argument options given without `=`). Short options appear as
    /// their long equivalents (`-v` → `Verbose`, `-d3` → `Debug` with `"3"`,
    /// `-n` → `PeriodicStats`).
    pub(crate) opts: Vec<(Opt, Option<String>)>,
    /// Non-option arguments, including everything after `--`. httperf ignores them;
    /// rshperf takes an `http://`/`https://` URL as the target and warns about the
    /// rest (`operand`).
    pub(crate) operands: Vec<Operand>,
}

/// One non-option argument and what came just before it (for hints such as
/// `--print-reply header` → `did you mean --print-reply=header?`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Operand {
    /// The argument as typed.
    pub(crate) text: String,
    /// The long option of the previous argument when that option took no value from
    /// this one (a flag, or an optional argument without `=`); None otherwise.
    pub(crate) after: Option<Opt>,
}

impl Args {
    /// Whether `opt` occurs at least once.
    pub(crate) fn given(&self, opt: Opt) -> bool {
        self.opts.iter().any(|(o, _)| *o == opt)
    }

    /// How many times `opt` occurs (e.g. the `-v` level).
    #[cfg(test)]
    pub(crate) fn count(&self, opt: Opt) -> usize {
        self.opts.iter().filter(|(o, _)| *o == opt).count()
    }

    /// The argument of the last occurrence of `opt` (outer `None`: not given).
    #[cfg(test)]
    pub(crate) fn last(&self, opt: Opt) -> Option<Option<&str>> {
        self.opts
            .iter()
            .rev()
            .find(|(o, _)| *o == opt)
            .map(|(_, v)| v.as_deref())
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `-h`/`--help`: httperf's usage lines (`usage`). The caller prints the whole help
    /// (`dispatch::help_text`, which starts with these lines) on stdout and exits 0;
    /// this module does not know the rest of the help, so it imports nothing above it.
    Help(String),
    /// `-V`/`--version`: print this line on stdout and exit 0.
    Version(String),
    /// Run a test with these options.
    Run(Args),
}

/// httperf master's usage lines (with `rshperf`, and the master options its usage
/// omits), as `usage` starts with them.
const HTTPERF_USAGE: &str = "\
Usage: rshperf [-hdvVn] [--add-header S] [--burst-length N] [--client N/N]
\t[--close-with-reset] [--debug N] [--failure-status N]
\t[--help] [--hog] [--http-version S] [--max-connections N]
\t[--max-piped-calls N] [--method S] [--no-host-hdr]
\t[--num-calls N] [--num-conns N] [--session-cookies]
\t[--period [d|u|e]T1[,T2]|[v]T1,D1[,T2,D2]...[,Tn,Dn]
\t[--print-reply [header|body]] [--print-request [header|body]]
\t[--rate X] [--recv-buffer N] [--retry-on-failure] [--send-buffer N]
\t[--server S|--servers file] [--server-name S] [--port N] [--uri S] [--myaddr S]
\t[--ssl] [--ssl-ciphers L] [--ssl-no-reuse]
\t[--ssl-certificate file] [--ssl-key file]
\t[--ssl-ca-file file] [--ssl-ca-path path]
\t[--ssl-verify [yes|no]] [--ssl-protocol S] [--tls-server-name S]
\t[--think-timeout X] [--timeout X] [--verbose] [--version]
\t[--wlog y|n,file] [--wsess N,N,X] [--wsesslog N,X,file]
\t[--wsesspage N,N,X] [--wset N,X]
\t[--runtime X]
\t[--use-timer-cache]
\t[--periodic-stats]
\t[--add-header-file file]
";

/// How wide a generated usage line may grow (the tab counts as 8).
const USAGE_WIDTH: usize = 80;

/// The usage lines that start the `-h` text (`dispatch::help_text`): httperf master's
/// usage (`HTTPERF_USAGE`), then every other option of `OPTIONS` in table order,
/// generated, so a new option is listed when it is added to the table. Scripts may
/// grep them: they only ever grow. Ends with a newline.
pub fn usage() -> String {
    let mut text = HTTPERF_USAGE.to_string();
    let mut line = String::new();
    for spec in OPTIONS {
        let name = format!("--{}", spec.name);
        if mentions(HTTPERF_USAGE, &name) {
            continue;
        }
        let item = match spec.has_arg {
            HasArg::No => format!("[{name}]"),
            _ => format!("[{name} {}]", metavar(spec.opt)),
        };
        if !line.is_empty() && 8 + line.len() + 1 + item.len() > USAGE_WIDTH {
            text.push_str(&format!("\t{line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&item);
    }
    if !line.is_empty() {
        text.push_str(&format!("\t{line}\n"));
    }
    text
}

/// Whether `text` names the option `name` (`--ssl` in `[--ssl]`, not in `[--ssl-key`).
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        matches!(before, Some('[' | '|')) && matches!(after, Some(' ' | ']' | '|'))
    })
}

/// The value an option of rshperf's own takes, as the usage lines name it.
fn metavar(opt: Opt) -> &'static str {
    match opt {
        Opt::QuicIdleTimeout | Opt::MetricsLinger | Opt::StreamGapTimeout => "S",
        Opt::Threads => "N",
        Opt::Partition => "I/N",
        Opt::StartAt => "T|+S",
        Opt::Concurrency => "C",
        Opt::Json | Opt::Csv | Opt::Timeline | Opt::Html | Opt::Junit => "file",
        Opt::BodyFile | Opt::BodyLines | Opt::HeaderFile | Opt::RequestLog => "file",
        Opt::BodyOrder => "round-robin|random:SEED",
        Opt::RequestLogFormat => "jsonl|csv|binary",
        Opt::FailOn => "EXPR",
        Opt::Overload => "degrade|queue",
        Opt::Spin => "auto|off|USEC",
        Opt::Io => "epoll|uring|auto",
        Opt::CallRate => "R|profile",
        Opt::RateProfile => "SEGMENTS",
        Opt::UnixSocket => "path",
        Opt::ContentType => "T",
        Opt::MetricsListen => "addr:port",
        Opt::Stream => "sse|ndjson|jsonl|lines|auto",
        _ => "X",
    }
}

/// The `-V` line, newline included.
pub(crate) fn version() -> String {
    format!(
        "{PROG}: {PROG}-{} (httperf 0.9.0 compatible)\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// Parses `argv` (argv[0] is the program name and is skipped) with getopt_long rules.
/// Stops at the first `-h`/`-V` (returning `Help`/`Version`) or at the first getopt
/// diagnostic (`Error::Getopt`, full text without a newline).
pub fn parse(argv: &[String]) -> Result<Command, Error> {
    let mut args = Args::default();
    let words = argv.get(1..).unwrap_or_default();
    let mut scan = Getopt::new(words, LETTERS, Operands::Anywhere).with_long();
    // The option of the previous argument, if it left the next argument alone.
    let mut prev: Option<Opt> = None;
    while let Some(item) = scan.next() {
        let after = prev.take();
        let item = match item {
            Ok(item) => item,
            Err(GetoptError::Unknown(letter)) => {
                return Err(unknown_letter(letter, scan.word(), argv))
            }
            Err(e) => return Err(getopt(e.glibc_text())),
        };
        match item {
            Item::Long(body) => {
                let (name, inline) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (body, None),
                };
                let spec = lookup(name, body)?;
                let value = match spec.has_arg {
                    HasArg::No => {
                        if inline.is_some() {
                            return Err(getopt(format!(
                                "option '--{}' doesn't allow an argument",
                                spec.name
                            )));
                        }
                        None
                    }
                    HasArg::Optional => inline.map(str::to_string),
                    HasArg::Required => match inline.or_else(|| scan.value()) {
                        Some(v) => Some(v.to_string()),
                        None => {
                            return Err(getopt(format!(
                                "option '--{}' requires an argument",
                                spec.name
                            )))
                        }
                    },
                };
                if spec.has_arg != HasArg::Required && inline.is_none() {
                    prev = Some(spec.opt);
                }
                match spec.opt {
                    Opt::Help => return Ok(Command::Help(usage())),
                    Opt::Version => return Ok(Command::Version(version())),
                    opt => args.opts.push((opt, value)),
                }
            }
            Item::Opt('h', _) => return Ok(Command::Help(usage())),
            Item::Opt('V', _) => return Ok(Command::Version(version())),
            Item::Opt('v', _) => args.opts.push((Opt::Verbose, None)),
            Item::Opt('n', _) => {
                args.opts.push((Opt::PeriodicStats, None));
                // `-n 100` (ab's habit): the operand's warning says what -n is.
                if scan.ended_word() {
                    prev = Some(Opt::PeriodicStats);
                }
            }
            Item::Opt(_, value) => {
                // `-d`, the one letter with a value (LETTERS).
                let value = value.unwrap_or_default().to_string();
                // `-d 30s`: wrk's duration; the level's error says so.
                if let (Err(e), Some(hint)) = (DEBUG.parse(&value), habits::debug_value(&value)) {
                    return Err(Error::Getopt(format!("{PROG}: {e}\n{PROG}: {hint}")));
                }
                args.opts.push((Opt::Debug, Some(value)));
            }
            Item::Operand(text) => args.operands.push(Operand {
                text: text.to_string(),
                after: after.filter(|_| !scan.options_ended()),
            }),
            Item::Word(_) => unreachable!("the scanner is asked for no special words"),
        }
    }
    Ok(Command::Run(args))
}

/// httperf's option letters (`Getopt`'s table): `-d` takes the debug level.
const LETTERS: &str = "hVvnd:";

/// The error for an option letter httperf does not have, in `word`: glibc's text and,
/// where one fits, what was meant (`-rate 5`: a long option typed with one dash;
/// `-c 10`: another tool's option).
fn unknown_letter(letter: char, word: &str, argv: &[String]) -> Error {
    let text = format!("invalid option -- '{letter}'");
    let group = word.get(1..).unwrap_or_default();
    let long = group.split('=').next().unwrap_or(group);
    match suggest(long) {
        Some(name) => getopt_hint(text, Some(name)),
        None => match habits::short_option(letter, argv) {
            Some(hint) => Error::Getopt(format!("{PROG}: {text}\n{PROG}: {hint}")),
            None => getopt(text),
        },
    }
}

/// Finds the option named (or abbreviated) `name`; `typed` is everything after `--`
/// (glibc quotes it, `=value` included, in "unrecognized" and "ambiguous").
fn lookup(name: &str, typed: &str) -> Result<&'static OptSpec, Error> {
    if let Some(exact) = OPTIONS.iter().find(|s| s.name == name) {
        return Ok(exact);
    }
    let candidates: Vec<&OptSpec> = OPTIONS
        .iter()
        .filter(|s| s.name.starts_with(name))
        .collect();
    let httperf: Vec<&&OptSpec> = candidates.iter().filter(|s| s.opt.is_httperf()).collect();
    match candidates.as_slice() {
        [] => Err(getopt_hint(
            format!("unrecognized option '--{typed}'"),
            suggest(name),
        )),
        [one] => Ok(one),
        _ if httperf.len() == 1 => Ok(httperf[0]),
        many => {
            let list: Vec<String> = many.iter().map(|s| format!("'--{}'", s.name)).collect();
            Err(getopt(format!(
                "option '--{typed}' is ambiguous; possibilities: {}",
                list.join(" ")
            )))
        }
    }
}

fn getopt(text: String) -> Error {
    Error::Getopt(format!("{PROG}: {text}"))
}

/// glibc's diagnostic on the first line, then `rshperf: did you mean --NAME?` when
/// there is a suggestion (scripts that match the first line keep working).
fn getopt_hint(text: String, hint: Option<&'static str>) -> Error {
    match hint {
        Some(name) => Error::Getopt(format!("{PROG}: {text}\n{PROG}: did you mean --{name}?")),
        None => getopt(text),
    }
}

/// The one long option `typed` (without dashes) is probably a misspelling of: the
/// option at the smallest edit distance (Damerau–Levenshtein, `strsim`), when that
/// distance is small for the name's length and no other option is as close.
pub(crate) fn suggest(typed: &str) -> Option<&'static str> {
    if typed.is_empty() {
        return None;
    }
    // One edit for short names, two from 5 characters, three from 10.
    let limit = match typed.chars().count() {
        0..=4 => 1,
        5..=9 => 2,
        _ => 3,
    };
    habits::closest(typed, OPTIONS.iter().map(|s| s.name), limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Command, Error> {
        let mut argv = vec!["./target/rshperf".to_string()];
        argv.extend(args.iter().map(|s| s.to_string()));
        parse(&argv)
    }

    fn opts(args: &[&str]) -> Vec<(Opt, Option<String>)> {
        match run(args) {
            Ok(Command::Run(a)) => a.opts,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn err(args: &[&str]) -> String {
        match run(args) {
            Err(Error::Getopt(m)) => m,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn one(opt: Opt, v: &str) -> (Opt, Option<String>) {
        (opt, Some(v.to_string()))
    }

    #[test]
    fn table_is_complete_and_unique() {
        let mut names: Vec<&str> = OPTIONS.iter().map(|s| s.name).collect();
        assert_eq!(names.len(), 86);
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 86);
        assert_eq!(Opt::NumConns.long_name(), "--num-conns");
        assert_eq!(Opt::Threads.long_name(), "--threads");
    }

    #[test]
    fn unique_prefixes_abbreviate() {
        let cases = [
            ("--ra", Opt::Rate),
            ("--num-con", Opt::NumConns),
            ("--num-cal", Opt::NumCalls),
            ("--burst", Opt::BurstLength),
            ("--server-n", Opt::ServerName),
            ("--thr", Opt::Threads),
            ("--th", Opt::ThinkTimeout),
            ("--fai", Opt::FailureStatus),
            ("--fail-", Opt::FailOn),
            ("--js", Opt::Json),
            ("--part", Opt::Partition),
            ("--thi", Opt::ThinkTimeout),
            ("--ti", Opt::Timeout),
            ("--wsessl", Opt::Wsesslog),
            ("--wsessp", Opt::Wsesspage),
            ("--ssl-ca-f", Opt::SslCaFile),
        ];
        for (typed, opt) in cases {
            assert_eq!(opts(&[typed, "1"]), vec![one(opt, "1")], "{typed}");
        }
        assert_eq!(
            opts(&["--session-cookie", "--no-h"]),
            vec![(Opt::SessionCookies, None), (Opt::NoHostHdr, None)]
        );
        assert_eq!(
            opts(&["--perc", "--no-p"]),
            vec![(Opt::Percentiles, None), (Opt::NoProgress, None)]
        );
    }

    #[test]
    fn exact_match_wins_over_longer_names() {
        assert_eq!(opts(&["--server", "h"]), vec![one(Opt::Server, "h")]);
        assert_eq!(opts(&["--wsess", "1,1,0"]), vec![one(Opt::Wsess, "1,1,0")]);
        assert_eq!(opts(&["--ssl"]), vec![(Opt::Ssl, None)]);
        assert_eq!(opts(&["--period=e1"]), vec![one(Opt::Period, "e1")]);
        assert_eq!(opts(&["--add-header", "x"]), vec![one(Opt::AddHeader, "x")]);
    }

    #[test]
    fn ambiguous_prefixes_list_candidates_in_table_order() {
        assert_eq!(
            err(&["--ser", "127.0.0.1", "--port", "18080"]),
            "rshperf: option '--ser' is ambiguous; possibilities: '--server' '--server-name' '--servers'"
        );
        assert_eq!(
            err(&["--nu", "1"]),
            "rshperf: option '--nu' is ambiguous; possibilities: '--num-calls' '--num-conns'"
        );
        assert_eq!(
            err(&["--print-re"]),
            "rshperf: option '--print-re' is ambiguous; possibilities: '--print-reply' '--print-request'"
        );
        assert_eq!(
            err(&["--r=5"]),
            "rshperf: option '--r=5' is ambiguous; possibilities: '--rate' '--recv-buffer' '--retry-on-failure' '--runtime' '--realtime' '--rate-profile' '--request-log' '--request-log-format'"
        );
        assert_eq!(
            err(&["--wsess"]),
            "rshperf: option '--wsess' requires an argument"
        );
        assert_eq!(
            err(&["--pr"]),
            "rshperf: option '--pr' is ambiguous; possibilities: '--print-reply' '--print-request' '--progress'"
        );
        assert_eq!(
            err(&["--p"]),
            "rshperf: option '--p' is ambiguous; possibilities: '--period' '--port' '--print-reply' '--print-request' '--periodic-stats' '--percentiles' '--progress' '--partition' '--pin'"
        );
    }

    #[test]
    fn getopt_diagnostics() {
        assert_eq!(
            err(&["--bogus", "--port", "18080"]),
            "rshperf: unrecognized option '--bogus'"
        );
        assert_eq!(
            err(&["--bogus=3"]),
            "rshperf: unrecognized option '--bogus=3'"
        );
        assert_eq!(
            err(&["--hog=1", "--port", "18080"]),
            "rshperf: option '--hog' doesn't allow an argument"
        );
        assert_eq!(
            err(&["--ho="]),
            "rshperf: option '--hog' doesn't allow an argument"
        );
        assert_eq!(
            err(&["--port", "1", "--server"]),
            "rshperf: option '--server' requires an argument"
        );
        assert_eq!(
            err(&["--ra"]),
            "rshperf: option '--rate' requires an argument"
        );
        assert_eq!(
            err(&["-x", "--port", "18080"]),
            "rshperf: invalid option -- 'x'"
        );
        assert_eq!(err(&["-vx"]), "rshperf: invalid option -- 'x'");
        assert_eq!(err(&["-d"]), "rshperf: option requires an argument -- 'd'");
        assert_eq!(err(&["-vd"]), "rshperf: option requires an argument -- 'd'");
        // A single dash does not introduce long options.
        assert_eq!(
            err(&["-server"]),
            "rshperf: invalid option -- 's'\nrshperf: did you mean --server?"
        );
    }

    #[test]
    fn equals_and_separate_forms() {
        assert_eq!(opts(&["--rate=5"]), vec![one(Opt::Rate, "5")]);
        assert_eq!(opts(&["--rate", "5"]), vec![one(Opt::Rate, "5")]);
        assert_eq!(opts(&["--uri="]), vec![one(Opt::Uri, "")]);
        assert_eq!(opts(&["--uri=/a=b"]), vec![one(Opt::Uri, "/a=b")]);
        assert_eq!(opts(&["--ur", "/x"]), vec![one(Opt::Uri, "/x")]);
    }

    #[test]
    fn next_argument_is_taken_unconditionally() {
        assert_eq!(
            opts(&["--rate", "--server", "x"]),
            vec![one(Opt::Rate, "--server")]
        );
        assert_eq!(
            opts(&["--server", "--port"]),
            vec![one(Opt::Server, "--port")]
        );
        assert_eq!(opts(&["--uri", "--"]), vec![one(Opt::Uri, "--")]);
        assert_eq!(opts(&["-d", "-v"]), vec![one(Opt::Debug, "-v")]);
    }

    #[test]
    fn optional_arguments_only_with_equals() {
        assert_eq!(
            opts(&["--print-reply", "header", "--print-request=body"]),
            vec![(Opt::PrintReply, None), one(Opt::PrintRequest, "body")]
        );
        assert_eq!(opts(&["--print-rep="]), vec![one(Opt::PrintReply, "")]);
        assert_eq!(opts(&["--ssl-verify", "no"]), vec![(Opt::SslVerify, None)]);
        assert_eq!(opts(&["--ssl-verify=no"]), vec![one(Opt::SslVerify, "no")]);
        match run(&["--print-reply", "header"]) {
            Ok(Command::Run(a)) => assert_eq!(
                a.operands,
                vec![Operand {
                    text: "header".into(),
                    after: Some(Opt::PrintReply)
                }]
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn short_options_and_groups() {
        assert_eq!(
            opts(&["-vv", "-v", "--verbose"]),
            vec![(Opt::Verbose, None); 4]
        );
        assert_eq!(opts(&["-d3"]), vec![one(Opt::Debug, "3")]);
        assert_eq!(opts(&["-d", "3"]), vec![one(Opt::Debug, "3")]);
        assert_eq!(
            opts(&["-vd3", "-n"]),
            vec![
                (Opt::Verbose, None),
                one(Opt::Debug, "3"),
                (Opt::PeriodicStats, None)
            ]
        );
        assert_eq!(opts(&["-dv"]), vec![one(Opt::Debug, "v")]);
        assert_eq!(opts(&["--debug=2"]), vec![one(Opt::Debug, "2")]);
        let a = match run(&["-vvv"]) {
            Ok(Command::Run(a)) => a,
            other => panic!("{other:?}"),
        };
        assert_eq!(a.count(Opt::Verbose), 3);
        assert!(a.given(Opt::Verbose));
        assert!(!a.given(Opt::Hog));
    }

    #[test]
    fn help_and_version_stop_parsing() {
        let help = usage();
        assert_eq!(run(&["-h", "--bogus"]), Ok(Command::Help(help.clone())));
        assert_eq!(run(&["--he"]), Ok(Command::Help(help.clone())));
        assert_eq!(run(&["-vh"]), Ok(Command::Help(help)));
        assert_eq!(run(&["-V", "--bogus"]), Ok(Command::Version(version())));
        assert_eq!(run(&["--vers"]), Ok(Command::Version(version())));
        assert_eq!(
            version(),
            format!(
                "rshperf: rshperf-{} (httperf 0.9.0 compatible)\n",
                env!("CARGO_PKG_VERSION")
            )
        );
        // Errors before -h still win, as in httperf.
        assert!(run(&["--bogus", "-h"]).is_err());
        let u = usage();
        assert!(u.starts_with(&format!("Usage: {PROG} [-hdvVn] [--add-header S]")));
        assert!(u.starts_with(HTTPERF_USAGE));
        assert!(u.ends_with('\n'));
    }

    #[test]
    fn usage_names_every_option_of_the_table() {
        let u = usage();
        for spec in OPTIONS {
            assert!(mentions(&u, &format!("--{}", spec.name)), "--{}", spec.name);
        }
        assert!(!mentions("[--ssl-key file]", "--ssl"));
        assert!(mentions("[--server S|--servers file]", "--servers"));
        // rshperf's own options, generated after httperf's lines, in table order.
        assert_eq!(
            &u[HTTPERF_USAGE.len()..],
            "\t[--quic-0rtt] [--quic-idle-timeout S] [--threads N] [--percentiles]\n\
             \t[--json file] [--csv file] [--timeline file] [--html file]\n\
             \t[--junit file] [--fail-on EXPR] [--progress] [--no-progress]\n\
             \t[--partition I/N] [--start-at T|+S] [--concurrency C]\n\
             \t[--overload degrade|queue] [--spin auto|off|USEC]\n\
             \t[--io epoll|uring|auto] [--pin] [--realtime] [--call-rate R|profile]\n\
             \t[--rate-profile SEGMENTS] [--unix-socket path] [--body-file file]\n\
             \t[--body-lines file] [--body-order round-robin|random:SEED]\n\
             \t[--content-type T] [--header-file file] [--metrics-listen addr:port]\n\
             \t[--metrics-linger S] [--stream sse|ndjson|jsonl|lines|auto]\n\
             \t[--stream-gap-timeout S] [--request-log file]\n\
             \t[--request-log-format jsonl|csv|binary]\n"
        );
        for line in u[HTTPERF_USAGE.len()..].lines() {
            assert!(8 + line.len() - 1 <= USAGE_WIDTH, "{line}");
        }
    }

    #[test]
    fn operands_ignored_and_double_dash_ends_options() {
        let a = match run(&["foo", "--hog", "-", "--", "--bogus", "-x"]) {
            Ok(Command::Run(a)) => a,
            other => panic!("{other:?}"),
        };
        assert_eq!(a.opts, vec![(Opt::Hog, None)]);
        let texts: Vec<&str> = a.operands.iter().map(|o| o.text.as_str()).collect();
        assert_eq!(texts, ["foo", "-", "--bogus", "-x"]);
        let after: Vec<Option<Opt>> = a.operands.iter().map(|o| o.after).collect();
        assert_eq!(after, [None, Some(Opt::Hog), None, None]);
        // An option that took its value, or a value given with `=`, leaves the next
        // operand unattributed.
        let a = match run(&["--rate", "5", "x", "--print-reply=header", "y", "-v", "z"]) {
            Ok(Command::Run(a)) => a,
            other => panic!("{other:?}"),
        };
        assert!(a.operands.iter().all(|o| o.after.is_none()), "{a:?}");
    }

    #[test]
    fn repeated_options_keep_order() {
        let a = match run(&["--port", "1", "--rate", "2", "--port", "3"]) {
            Ok(Command::Run(a)) => a,
            other => panic!("{other:?}"),
        };
        assert_eq!(a.last(Opt::Port), Some(Some("3")));
        assert_eq!(a.last(Opt::Server), None);
        assert_eq!(a.opts.len(), 3);
    }

    #[test]
    fn misspelt_options_get_one_suggestion_after_glibcs_line() {
        assert_eq!(
            err(&["--numconns", "5"]),
            "rshperf: unrecognized option '--numconns'\nrshperf: did you mean --num-conns?"
        );
        assert_eq!(
            err(&["--num_calls=5"]),
            "rshperf: unrecognized option '--num_calls=5'\nrshperf: did you mean --num-calls?"
        );
        assert_eq!(
            err(&["--rtae", "5"]),
            "rshperf: unrecognized option '--rtae'\nrshperf: did you mean --rate?"
        );
        assert_eq!(
            err(&["--timout", "5"]),
            "rshperf: unrecognized option '--timout'\nrshperf: did you mean --timeout?"
        );
        // Nothing close, or two options equally close: glibc's line alone.
        assert_eq!(err(&["--bogus"]), "rshperf: unrecognized option '--bogus'");
        assert_eq!(err(&["--xyz"]), "rshperf: unrecognized option '--xyz'");
        assert_eq!(suggest("num-callz"), Some("num-calls"));
        assert_eq!(suggest("num-cols"), None, "num-calls and num-conns tie");
        // A long option typed with one dash.
        assert_eq!(
            err(&["-rate", "5"]),
            "rshperf: invalid option -- 'r'\nrshperf: did you mean --rate?"
        );
        assert_eq!(
            err(&["-server=x"]),
            "rshperf: invalid option -- 's'\nrshperf: did you mean --server?"
        );
        assert_eq!(err(&["-x"]), "rshperf: invalid option -- 'x'");
    }

    #[test]
    fn other_tools_habits_get_the_rshperf_option() {
        // ab's line: glibc's diagnostic first, then what -c is and the ab line.
        assert_eq!(
            err(&["-n", "100", "-c", "10", "http://127.0.0.1:8080/"]),
            "rshperf: invalid option -- 'c'\nrshperf: -c (connections: ab, wrk, oha, hey) is \
             --concurrency N here (N requests in flight, a closed loop), or --rate R for \
             httperf's open loop; ab's whole command line runs as `rshperf ab -n 100 -c 10 \
             http://127.0.0.1:8080/`"
        );
        // wrk's -d is httperf's debug level; a duration is not one.
        assert_eq!(
            err(&["-d", "30s", "http://h/"]),
            "rshperf: illegal debug level 30s\nrshperf: -d is httperf's --debug (a level); \
             wrk's -d 30s (duration) is --runtime 30 here"
        );
        assert_eq!(opts(&["-d", "30"]), vec![one(Opt::Debug, "30")]);
        // -n stays httperf's flag; the number after it is an operand whose warning
        // knows what came before it.
        match run(&["-n", "100", "-vn", "x"]) {
            Ok(Command::Run(a)) => {
                assert_eq!(
                    a.opts,
                    vec![
                        (Opt::PeriodicStats, None),
                        (Opt::Verbose, None),
                        (Opt::PeriodicStats, None)
                    ]
                );
                let after: Vec<_> = a.operands.iter().map(|o| o.after).collect();
                assert_eq!(after, [Some(Opt::PeriodicStats), Some(Opt::PeriodicStats)]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn empty_long_name_is_ambiguous_with_everything() {
        let m = err(&["--=x"]);
        assert!(m.starts_with("rshperf: option '--=x' is ambiguous; possibilities: '--add-header' '--add-header-file'"));
    }
}
