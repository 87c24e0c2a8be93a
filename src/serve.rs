//! The built-in target: `rshperf serve` (a small, fast HTTP/1.1 server for smoke tests
//! and for measuring rshperf's own ceiling) and `rshperf demo` (that server on a
//! loopback ephemeral port in this process, with a workload run against it).
//!
//! Owns the two subcommands' option parsing, usage texts and exit statuses, and the
//! public API (`ServeOptions`, `spawn`, `ServeHandle`) that tests and tools use to run
//! the server in-process. The event loop is in `server.rs`, request heads in
//! `request.rs`, pre-rendered replies in `reply.rs`. Called by `lib::run` when argv[1]
//! is `serve` or `demo`.

mod reply;
mod request;
mod server;

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::cli::{self, Command, Opt};
use crate::config::Config;
use crate::error::Error;

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
        }
    }
}

/// The `rshperf serve -h` text.
pub const SERVE_USAGE: &str = "\
Usage: rshperf serve [--port N] [--address A] [--body-size N] [--delay MS]
\t[--chunked] [--close] [--threads N]

A small, fast HTTP/1.1 server for smoke tests and for measuring rshperf itself.
Every request (any method, any path) is answered 200 with a body of N bytes of 'a'
(HEAD: headers only). Keep-alive, pipelining and HTTP/1.0 are supported; request
bodies are read and discarded. Runs until SIGINT or SIGTERM, then exits 0.

  --port N        port to listen on (default 8080; 0 picks a free port, printed)
  --address A     address to listen on (default 127.0.0.1)
  --body-size N   reply body size in bytes (default 1024)
  --delay MS      answer each request MS milliseconds after it arrives (default 0)
  --chunked       send bodies with Transfer-Encoding: chunked (HTTP/1.1 requests)
  --close         answer with Connection: close and close every connection
  --threads N     event-loop threads (default 1)
";

/// The `rshperf demo -h` text.
pub const DEMO_USAGE: &str = "\
Usage: rshperf demo [workload options]

Starts the built-in server (`rshperf serve` with its defaults: 1024-byte replies) on a
loopback ephemeral port in this process and runs the workload against it, e.g.
`rshperf demo --rate 2000 --num-conns 10000`. Takes every rshperf option except
--server, --servers and --port, which demo chooses.
";

impl ServeOptions {
    /// Parses `rshperf serve` options; `args[0]` is `serve`. `Ok(None)` for `-h`.
    pub fn from_args(args: &[String]) -> Result<Option<ServeOptions>, Error> {
        let mut opts = ServeOptions::default();
        let mut host = opts.addr.ip().to_string();
        let mut port = opts.addr.port();
        let mut i = 1;
        while i < args.len() {
            let arg = args[i].as_str();
            i += 1;
            if arg == "-h" || arg == "--help" {
                return Ok(None);
            }
            let Some(body) = arg.strip_prefix("--") else {
                return Err(serve_err(format!("unexpected argument '{arg}'")));
            };
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            if matches!(name, "chunked" | "close") {
                if inline.is_some() {
                    return Err(serve_err(format!(
                        "option '--{name}' doesn't allow an argument"
                    )));
                }
                if name == "chunked" {
                    opts.chunked = true;
                } else {
                    opts.close = true;
                }
                continue;
            }
            if !matches!(name, "port" | "address" | "body-size" | "delay" | "threads") {
                return Err(serve_err(format!("unrecognized option '{arg}'")));
            }
            let value = match inline {
                Some(v) => v,
                None if i < args.len() => {
                    i += 1;
                    args[i - 1].as_str()
                }
                None => return Err(serve_err(format!("option '--{name}' requires an argument"))),
            };
            let bad = || serve_err(format!("invalid --{name} value '{value}'"));
            match name {
                "port" => port = value.parse().map_err(|_| bad())?,
                "address" => host = value.trim_matches(['[', ']']).to_string(),
                "body-size" => opts.body_size = value.parse().map_err(|_| bad())?,
                "delay" => {
                    let ms: f64 = value.parse().map_err(|_| bad())?;
                    if !(0.0..=1e9).contains(&ms) {
                        return Err(bad());
                    }
                    opts.delay = Duration::from_secs_f64(ms / 1000.0);
                }
                _ => {
                    opts.threads = value.parse().map_err(|_| bad())?;
                    if !(1..=1024).contains(&opts.threads) {
                        return Err(bad());
                    }
                }
            }
        }
        opts.addr = (host.as_str(), port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| serve_err(format!("cannot resolve address '{host}'")))?;
        Ok(Some(opts))
    }
}

fn serve_err(msg: String) -> Error {
    Error::Usage(format!("serve: {msg}"))
}

/// `rshperf serve …` (`args[0]` is `serve`): serves until SIGINT or SIGTERM; returns
/// the exit status.
pub fn serve_main(args: &[String]) -> i32 {
    let opts = match ServeOptions::from_args(args) {
        Ok(Some(o)) => o,
        Ok(None) => {
            print_stdout(SERVE_USAGE);
            return 0;
        }
        Err(e) => {
            eprintln!("{e}");
            return e.exit_code();
        }
    };
    // Registered before the server starts, so a signal never finds the default action.
    let mut signals = match Signals::new([SIGINT, SIGTERM]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rshperf: serve: cannot handle signals: {e}");
            return 1;
        }
    };
    let addr = opts.addr;
    let handle = match spawn(opts) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("rshperf: serve: cannot listen on {addr}: {e}");
            return 1;
        }
    };
    eprintln!("rshperf serve: listening on http://{}/", handle.addr());
    let _ = signals.forever().next();
    match handle.stop() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("rshperf: serve: {e}");
            1
        }
    }
}

/// `rshperf demo [workload options]` (`args[0]` is `demo`): runs the workload against
/// an in-process server; returns the exit status.
pub fn demo_main(args: &[String]) -> i32 {
    match try_demo(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            e.exit_code()
        }
    }
}

fn try_demo(args: &[String]) -> Result<i32, Error> {
    let mut argv = vec!["rshperf".to_string()];
    argv.extend_from_slice(args.get(1..).unwrap_or_default());
    match cli::parse(&argv)? {
        Command::Help(_) => {
            print_stdout(DEMO_USAGE);
            return Ok(0);
        }
        Command::Version(text) => {
            print_stdout(&text);
            return Ok(0);
        }
        Command::Run(a) => {
            if a.given(Opt::Server) || a.given(Opt::Servers) || a.given(Opt::Port) {
                return Err(Error::Usage(
                    "demo: --server/--port are chosen by demo".into(),
                ));
            }
        }
    }
    let server = spawn(ServeOptions {
        addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        ..ServeOptions::default()
    })
    .map_err(|e| Error::Startup(format!("demo: cannot start the server: {e}")))?;
    let port = server.addr().port().to_string();
    let mut full = vec!["rshperf", "--server", "127.0.0.1", "--port", &port];
    full.extend(argv[1..].iter().map(String::as_str));
    let cfg = Config::from_argv(&full)?;
    if let Some(opt) = cfg.unsupported() {
        return Err(Error::Usage(format!("{opt} is not supported yet")));
    }
    let result = crate::runner::run(&cfg);
    let stopped = server.stop();
    let code = result?;
    stopped.map_err(|e| Error::Startup(format!("demo: server: {e}")))?;
    Ok(code)
}

/// Writes `text` to stdout, ignoring a closed stdout.
fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<ServeOptions>, Error> {
        let mut v = vec!["serve".to_string()];
        v.extend(args.iter().map(|s| s.to_string()));
        ServeOptions::from_args(&v)
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
    fn every_option_both_forms() {
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
        let o = parse(&["--port=9", "--address=[127.0.0.2]"])
            .unwrap()
            .unwrap();
        assert_eq!(o.addr, "127.0.0.2:9".parse().unwrap());
    }

    #[test]
    fn errors() {
        let cases: &[(&[&str], &str)] = &[
            (&["--port", "x"], "rshperf: serve: invalid --port value 'x'"),
            (
                &["--port", "70000"],
                "rshperf: serve: invalid --port value '70000'",
            ),
            (
                &["--delay", "-1"],
                "rshperf: serve: invalid --delay value '-1'",
            ),
            (
                &["--delay", "nan"],
                "rshperf: serve: invalid --delay value 'nan'",
            ),
            (
                &["--threads", "0"],
                "rshperf: serve: invalid --threads value '0'",
            ),
            (
                &["--body-size"],
                "rshperf: serve: option '--body-size' requires an argument",
            ),
            (
                &["--close=1"],
                "rshperf: serve: option '--close' doesn't allow an argument",
            ),
            (
                &["--bogus"],
                "rshperf: serve: unrecognized option '--bogus'",
            ),
            (&["extra"], "rshperf: serve: unexpected argument 'extra'"),
        ];
        for (args, want) in cases {
            assert_eq!(err(args), *want, "{args:?}");
        }
    }
}
