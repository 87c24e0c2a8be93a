//! The built-in target: `rshperf serve` (a small, fast HTTP/1.1 server for smoke tests
//! and for measuring rshperf's own ceiling) and `rshperf demo` (that server on a
//! loopback ephemeral port in this process, with a workload run against it).
//!
//! Owns the two subcommands' options (`serve`: clap, with `subcommand`'s conventions;
//! `demo`: httperf's options), usage texts and exit statuses, and the public API
//! (`ServeOptions`, `spawn`, `ServeHandle`) that tests and tools use to run the server
//! in-process. The event loop is in `server.rs`, request heads in
//! `request.rs`, pre-rendered replies in `reply.rs`. Called by `crate::run` when argv[1]
//! is `serve` or `demo`.

mod log;
mod reply;
mod request;
mod server;
mod spec;
mod stream;

use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::front::cli::{self, Command, Opt};
pub use crate::front::error::serve::ServeError;
use crate::front::error::Error;
use crate::front::httperf;
use crate::front::subcommand;
use crate::model::config::{duration, Config};

pub use server::{spawn, ServeHandle};

/// How the built-in server behaves (`rshperf serve` options).
#[derive(Debug, Clone, PartialEq)]
pub struct ServeOptions {
    /// Where to listen (`--address`, `--port`); port 0 picks a free port.
    pub addr: SocketAddr,
    /// Bytes of body in every reply (`--body-size`), all `a`.
    pub body_size: usize,
    /// Time between a request's arrival and its reply (`--delay`, milliseconds).
    pub delay: Duration,
    /// Send HTTP/1.1 bodies with `Transfer-Encoding: chunked`, in one chunk (`--chunked`).
    pub chunked: bool,
    /// Answer every request with `Connection: close` and close (`--close`).
    pub close: bool,
    /// Event-loop threads sharing the listening socket (`--threads`).
    pub threads: usize,
    /// Where to log when each stream item was written (`--event-log`).
    pub event_log: Option<PathBuf>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 8080)),
            body_size: 1024,
            delay: Duration::ZERO,
            chunked: false,
            close: false,
            threads: 1,
            event_log: None,
        }
    }
}

/// Largest `--body-size`: every reply variant is rendered once, in memory, at start.
pub(crate) const MAX_BODY_SIZE: usize = 256 << 20;

/// The options of `rshperf serve`, as typed (clap); `into_options` checks and resolves
/// them into `ServeOptions`.
#[derive(Debug, Clone, PartialEq, clap::Parser)]
#[command(
    name = "serve",
    about = "A small, fast HTTP/1.1 server for smoke tests and for measuring rshperf itself.",
    long_about = "A small, fast HTTP/1.1 server for smoke tests and for measuring rshperf \
itself. Every request (any method, any path but the two below) is answered 200 with a body \
of N bytes of 'a' (HEAD: headers only). Keep-alive, pipelining and HTTP/1.0 are supported; \
request bodies are read and discarded (a request is answered once its body has arrived). \
Two paths stream on a schedule set in the query: \
/stream?events=N&first=TIME&gap=TIME&size=N&format=sse|ndjson|lines&done=1 writes N events \
(server-sent events by default), the first TIME after the request and then one every gap; \
/v1/chat/completions answers like an OpenAI-compatible server (with \"stream\": true in the \
JSON body, chat.completion.chunk events and data: [DONE]; tokens from max_tokens or \
?tokens=N). Other parameters make hostile streams (cut, reset, stall, after, trail); \
see man rshperf. Prints 'rshperf serve: listening on http://ADDRESS:PORT/' on stderr and \
runs until SIGINT or SIGTERM, then exits 0."
)]
pub(crate) struct ServeArgs {
    /// Port to listen on (0 picks a free port, printed)
    #[arg(long, value_name = "N", default_value_t = 8080)]
    pub(crate) port: u16,
    /// Address to listen on
    #[arg(long, value_name = "A", default_value = "127.0.0.1")]
    pub(crate) address: String,
    /// Reply body size in bytes (at most 268435456, 256 MiB)
    #[arg(long, value_name = "N", default_value_t = 1024,
          value_parser = clap::value_parser!(u64).range(..=MAX_BODY_SIZE as u64))]
    pub(crate) body_size: u64,
    /// Answer each request MS milliseconds after it arrives (or a duration with its
    /// unit: 250us, 1.5s)
    #[arg(long, value_name = "MS", default_value_t = 0.0, value_parser = parse_delay_ms,
          allow_hyphen_values = true)]
    pub(crate) delay: f64,
    /// Send bodies with Transfer-Encoding: chunked (HTTP/1.1 requests)
    #[arg(long)]
    pub(crate) chunked: bool,
    /// Answer with Connection: close and close every connection
    #[arg(long)]
    pub(crate) close: bool,
    /// Event-loop threads
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub(crate) threads: u16,
    /// Write when each stream event was sent to FILE (CSV: stream,event,us)
    #[arg(long, value_name = "FILE")]
    pub(crate) event_log: Option<PathBuf>,
}

/// `--delay`: milliseconds from 0 to 10^9 (about 11.6 days); a plain number is
/// milliseconds, a number with a unit is that duration (`250us`, `5ms`, `1.5s`).
fn parse_delay_ms(v: &str) -> Result<f64, ServeError> {
    let ms = v
        .parse::<f64>()
        .ok()
        .or_else(|| duration::seconds(v).map(|s| s * 1e3));
    match ms {
        Some(ms) if (0.0..=1e9).contains(&ms) => Ok(ms),
        _ => Err(ServeError::Delay),
    }
}

impl ServeArgs {
    /// The server options: the address resolved, sizes and times converted.
    pub(crate) fn into_options(self) -> Result<ServeOptions, Error> {
        let host = self.address.trim_matches(['[', ']']);
        let addr = (host, self.port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| ServeError::Resolve {
                host: host.to_string(),
            })?;
        Ok(ServeOptions {
            addr,
            body_size: usize::try_from(self.body_size)
                .expect("--body-size is at most MAX_BODY_SIZE, a usize"),
            delay: Duration::from_secs_f64(self.delay / 1000.0),
            chunked: self.chunked,
            close: self.close,
            threads: usize::from(self.threads),
            event_log: self.event_log,
        })
    }
}

/// The `rshperf demo -h` text.
pub(crate) const DEMO_USAGE: &str = "\
Usage: rshperf demo [workload options]

Starts the built-in server (`rshperf serve` with its defaults: 1024-byte replies) on a
loopback ephemeral port in this process and runs the workload against it, e.g.
`rshperf demo --rate 2000 --num-conns 10000`. Takes every rshperf option except
--server, --servers and --port, which demo chooses.
";

/// `rshperf serve …` (`args[0]` is `serve`): serves until SIGINT or SIGTERM; returns
/// the exit status.
pub(crate) fn serve_main(args: &[String]) -> i32 {
    crate::front::subcommand::run::<ServeArgs>(args, |a| serve(a.into_options()?))
}

fn serve(opts: ServeOptions) -> Result<i32, Error> {
    // Registered before the server starts, so a signal never finds the default action.
    let mut signals = Signals::new([SIGINT, SIGTERM]).map_err(ServeError::Signals)?;
    if let Some(path) = &opts.event_log {
        // Said here with the path; `spawn` creates it again for the threads.
        std::fs::File::create(path).map_err(|source| ServeError::EventLog {
            path: path.clone(),
            source,
        })?;
    }
    let addr = opts.addr;
    let handle = spawn(opts).map_err(|source| ServeError::Listen { addr, source })?;
    crate::wire::note::note!("rshperf serve: listening on http://{}/", handle.addr());
    let _ = signals.forever().next();
    handle.stop().map_err(ServeError::Stop)?;
    Ok(0)
}

/// `rshperf demo [workload options]` (`args[0]` is `demo`): runs the workload against
/// an in-process server; returns the exit status.
pub(crate) fn demo_main(args: &[String]) -> i32 {
    subcommand::exit_status(try_demo(args))
}

fn try_demo(args: &[String]) -> Result<i32, Error> {
    let mut argv = vec!["rshperf".to_string()];
    argv.extend_from_slice(args.get(1..).unwrap_or_default());
    let args = match cli::parse(&argv)? {
        Command::Help(_) => {
            subcommand::print_stdout(DEMO_USAGE);
            return Ok(0);
        }
        Command::Version(text) => {
            subcommand::print_stdout(&text);
            return Ok(0);
        }
        Command::Run(a) => {
            if a.given(Opt::Server) || a.given(Opt::Servers) || a.given(Opt::Port) {
                return Err(ServeError::DemoServerOption.into());
            }
            if let Some(url) = a
                .operands
                .iter()
                .find(|o| crate::front::operand::parse_url(&o.text).is_some())
            {
                return Err(ServeError::DemoUrl {
                    url: url.text.clone(),
                }
                .into());
            }
            a
        }
    };
    // SIGINT/SIGTERM end the run with its report from now on (the server stops after).
    crate::front::runner::catch_signals()?;
    let server = spawn(ServeOptions {
        addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        ..ServeOptions::default()
    })
    .map_err(ServeError::DemoStart)?;
    let mut builder = Config::builder();
    builder.server("127.0.0.1").port(server.addr().port());
    let cfg = httperf::finish(httperf::build_with(builder, &args))?;
    let result = crate::front::runner::run(&cfg);
    let stopped = server.stop();
    let code = result?;
    stopped.map_err(ServeError::DemoStop)?;
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::subcommand::{parse as parse_args, Parsed};

    fn parse(args: &[&str]) -> Result<Option<ServeOptions>, Error> {
        let mut v = vec!["serve".to_string()];
        v.extend(args.iter().map(|s| s.to_string()));
        match parse_args::<ServeArgs>(&v)? {
            Parsed::Run(a) => a.into_options().map(Some),
            Parsed::Help(_) => Ok(None),
        }
    }

    fn err(args: &[&str]) -> String {
        parse(args).expect_err("an error").to_string()
    }

    #[test]
    fn defaults() {
        assert_eq!(parse(&[]).unwrap(), Some(ServeOptions::default()));
        assert_eq!(parse(&["-h"]).unwrap(), None);
        assert_eq!(parse(&["--port", "1", "--help"]).unwrap(), None);
    }

    #[test]
    fn a_delay_is_milliseconds_or_a_duration_with_its_unit() {
        let delay = |v: &str| parse(&["--delay", v]).map(|o| o.expect("a run").delay);
        assert_eq!(delay("5").ok(), Some(Duration::from_millis(5)));
        assert_eq!(delay("5ms").ok(), Some(Duration::from_millis(5)));
        assert_eq!(delay("250us").ok(), Some(Duration::from_micros(250)));
        assert_eq!(delay("1.5s").ok(), Some(Duration::from_millis(1500)));
        assert!(delay("5x").is_err());
        assert!(delay("12d").is_err());
    }

    #[test]
    fn every_option_both_forms_and_prefixes() {
        let o = parse(&[
            "--port",
            "0",
            "--body-size=10",
            "--delay",
            "2.5",
            "--chunked",
            "--close",
            "--threads=3",
            "--address",
            "::1",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(o.addr, "[::1]:0".parse().unwrap());
        assert_eq!(o.body_size, 10);
        assert_eq!(o.delay, Duration::from_micros(2500));
        assert!(o.chunked && o.close);
        assert_eq!(o.threads, 3);
        let o = parse(&[
            "--port=9",
            "--address=[127.0.0.2]",
            "--body=268435456",
            "--ch",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(o.addr, "127.0.0.2:9".parse().unwrap());
        assert_eq!(o.body_size, MAX_BODY_SIZE);
        assert!(o.chunked);
    }

    #[test]
    fn errors() {
        let cases: &[(&[&str], &str)] = &[
            (
                &["--port", "x"],
                "rshperf: serve: invalid value 'x' for '--port <N>': invalid digit found in string",
            ),
            (
                &["--port", "70000"],
                "rshperf: serve: invalid value '70000' for '--port <N>': 70000 is not in 0..=65535",
            ),
            (
                &["--delay", "-1"],
                "rshperf: serve: invalid value '-1' for '--delay <MS>': expected milliseconds",
            ),
            (
                &["--delay", "nan"],
                "rshperf: serve: invalid value 'nan' for '--delay <MS>': expected milliseconds",
            ),
            (
                &["--threads", "0"],
                "rshperf: serve: invalid value '0' for '--threads <N>': 0 is not in 1..=1024",
            ),
            (
                &["--body-size", "99999999999999999"],
                "rshperf: serve: invalid value '99999999999999999' for '--body-size <N>': \
                 99999999999999999 is not in 0..=268435456",
            ),
            (
                &["--body-size"],
                "rshperf: serve: a value is required for '--body-size <N>' but none was supplied",
            ),
            (
                &["--close=1"],
                "rshperf: serve: unexpected value '1' for '--close' found; no more were expected",
            ),
            (
                &["--bogus"],
                "rshperf: serve: unexpected argument '--bogus' found",
            ),
            (&["--c"], "rshperf: serve: unexpected argument '--c' found"),
            (
                &["extra"],
                "rshperf: serve: unexpected argument 'extra' found",
            ),
            (
                &["--address", "no such host.invalid"],
                "rshperf: serve: cannot resolve address 'no such host.invalid'",
            ),
        ];
        for (args, want) in cases {
            let e = err(args);
            assert!(e.starts_with(want), "{args:?}: {e}");
        }
    }
}
