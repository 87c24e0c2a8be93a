//! `ServeError`: what `rshperf serve` and `rshperf demo` refuse or cannot start.
//!
//! Owns the texts printed after `rshperf: serve: ` or `rshperf: demo: ` (option
//! values, the listener, signals, the in-process server) and `--delay`'s value error
//! (shown by clap). Made by `front::serve`; `front::error::Error` prints it after
//! the subcommand `command` names.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

use thiserror::Error as ThisError;

/// Why the server (or the demo around it) cannot run.
#[derive(Debug, ThisError)]
pub enum ServeError {
    /// `--delay` out of range (clap prints it after the option).
    #[error(
        "expected milliseconds from 0 to 1000000000 (or a duration with its unit: 250us, 1.5s)"
    )]
    Delay,
    /// `--address` does not resolve.
    #[error("cannot resolve address '{host}'")]
    Resolve {
        /// The host as given.
        host: String,
    },
    /// SIGINT/SIGTERM cannot be handled.
    #[error("cannot handle signals: {0}")]
    Signals(#[source] io::Error),
    /// The listener cannot be set up.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The server did not stop cleanly.
    #[error("{0}")]
    Stop(#[source] io::Error),
    /// `--event-log` cannot be written.
    #[error("--event-log {}: {source}", path.display())]
    EventLog {
        /// The path as given.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// `demo` given `--server`, `--servers` or `--port`.
    #[error("--server/--port are chosen by demo")]
    DemoServerOption,
    /// `demo` given a URL.
    #[error(
        "{url} names a server, but demo loads its own; give only workload \
         options (rshperf demo --rate 100 --num-conns 500), or run \
         rshperf {url} ... to load that server"
    )]
    DemoUrl {
        /// The URL as typed.
        url: String,
    },
    /// `demo`'s server cannot start.
    #[error("cannot start the server: {0}")]
    DemoStart(#[source] io::Error),
    /// `demo`'s server did not stop cleanly.
    #[error("server: {0}")]
    DemoStop(#[source] io::Error),
}

impl ServeError {
    /// The subcommand whose error this is: `demo` for the demo's own, else `serve`.
    pub(crate) fn command(&self) -> &'static str {
        match self {
            ServeError::DemoServerOption
            | ServeError::DemoUrl { .. }
            | ServeError::DemoStart(_)
            | ServeError::DemoStop(_) => "demo",
            _ => "serve",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::error::Error;

    #[test]
    fn texts_with_their_prefix() {
        let io = || io::Error::from(io::ErrorKind::AddrInUse);
        let cases = [
            (
                ServeError::Delay,
                "rshperf: serve: expected milliseconds from 0 to 1000000000 (or a duration with \
                 its unit: 250us, 1.5s)",
            ),
            (
                ServeError::Resolve { host: "x".into() },
                "rshperf: serve: cannot resolve address 'x'",
            ),
            (
                ServeError::Signals(io()),
                "rshperf: serve: cannot handle signals: address in use",
            ),
            (
                ServeError::Listen {
                    addr: "127.0.0.1:80".parse().expect("addr"),
                    source: io(),
                },
                "rshperf: serve: cannot listen on 127.0.0.1:80: address in use",
            ),
            (ServeError::Stop(io()), "rshperf: serve: address in use"),
            (
                ServeError::EventLog {
                    path: "/x/log.csv".into(),
                    source: io(),
                },
                "rshperf: serve: --event-log /x/log.csv: address in use",
            ),
            (
                ServeError::DemoServerOption,
                "rshperf: demo: --server/--port are chosen by demo",
            ),
            (
                ServeError::DemoUrl {
                    url: "http://h/".into(),
                },
                "rshperf: demo: http://h/ names a server, but demo loads its own; give only \
                 workload options (rshperf demo --rate 100 --num-conns 500), or run rshperf \
                 http://h/ ... to load that server",
            ),
            (
                ServeError::DemoStart(io()),
                "rshperf: demo: cannot start the server: address in use",
            ),
            (
                ServeError::DemoStop(io()),
                "rshperf: demo: server: address in use",
            ),
        ];
        for (e, text) in cases {
            let top = Error::from(e);
            assert_eq!(top.to_string(), text);
            assert_eq!(top.exit_code(), 1);
        }
    }
}
