//! `StartupError`: what stops the engine layer from starting or finishing a run.
//!
//! Owns the typed errors of `execute` (rlimits, real-time scheduling, core pinning,
//! the signal handlers, the engine and clock threads, merging the
//! engines' statistics) and of the metrics listener, with their texts (printed after
//! `rshperf: `). The engine's public entry points return it; the front ends wrap it
//! in `front::error::Error`.

use std::io;
use std::net::SocketAddr;

use thiserror::Error as ThisError;

use crate::model::stats::MergeError;

/// Why a run cannot start (or its results cannot be put together).
#[derive(Debug, ThisError)]
pub enum StartupError {
    /// The open-file limit cannot be read or raised.
    #[error("failed to get number of open file limit: {0}")]
    Rlimit(#[source] io::Error),
    /// `--realtime` without the right to SCHED_FIFO.
    #[error(
        "--realtime: cannot run the engines with SCHED_FIFO: {0} \
         (it needs root, CAP_SYS_NICE or an RLIMIT_RTPRIO above 0; or leave out --realtime)"
    )]
    Realtime(#[source] io::Error),
    /// `--pin` cannot read the cores the process may run on.
    #[error("--pin: cannot read the allowed cores: {0}")]
    PinCores(#[source] io::Error),
    /// SIGINT and SIGTERM cannot be caught.
    #[error("cannot catch SIGINT and SIGTERM: {0}")]
    Signals(#[source] io::Error),
    /// `--io uring` where io_uring may not be used.
    #[error("--io uring: {0}")]
    IoRefused(crate::wire::uring::probe::Refusal),
    /// An engine's event loop cannot be set up.
    #[error("cannot start the event loop: {0}")]
    EventLoop(#[source] io::Error),
    /// An engine thread panicked.
    #[error("an engine thread panicked")]
    EnginePanicked,
    /// The clock thread panicked.
    #[error("the clock thread panicked")]
    ClockPanicked,
    /// The engines' statistics do not merge.
    #[error("cannot merge the engines' statistics: {0}")]
    MergeStats(#[source] MergeError),
    /// `--metrics-listen` cannot bind its address.
    #[error("--metrics-listen: cannot listen on {addr}: {source}")]
    MetricsBind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The metrics listener's address cannot be read.
    #[error("--metrics-listen: {0}")]
    MetricsAddr(#[source] io::Error),
    /// The metrics responder thread cannot start.
    #[error("--metrics-listen: cannot start: {0}")]
    MetricsThread(#[source] io::Error),
    /// `RSHPERF_TEST_MACHINE` cannot be read (the text says where).
    #[error("{0}")]
    MachineSpec(String),
    /// The machine's sampling thread panicked.
    #[error("the machine's sampling thread panicked")]
    SamplerPanicked,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io() -> io::Error {
        io::Error::from(io::ErrorKind::PermissionDenied)
    }

    #[test]
    fn display_is_the_printed_text() {
        let cases = [
            (
                StartupError::Rlimit(io()),
                "failed to get number of open file limit: permission denied",
            ),
            (
                StartupError::Realtime(io()),
                "--realtime: cannot run the engines with SCHED_FIFO: permission denied \
                 (it needs root, CAP_SYS_NICE or an RLIMIT_RTPRIO above 0; or leave out --realtime)",
            ),
            (
                StartupError::PinCores(io()),
                "--pin: cannot read the allowed cores: permission denied",
            ),
            (
                StartupError::EventLoop(io()),
                "cannot start the event loop: permission denied",
            ),
            (
                StartupError::Signals(io()),
                "cannot catch SIGINT and SIGTERM: permission denied",
            ),
            (StartupError::EnginePanicked, "an engine thread panicked"),
            (StartupError::ClockPanicked, "the clock thread panicked"),
            (
                StartupError::MetricsBind {
                    addr: "127.0.0.1:9".parse().expect("addr"),
                    source: io(),
                },
                "--metrics-listen: cannot listen on 127.0.0.1:9: permission denied",
            ),
            (
                StartupError::MetricsAddr(io()),
                "--metrics-listen: permission denied",
            ),
            (
                StartupError::MetricsThread(io()),
                "--metrics-listen: cannot start: permission denied",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
        }
    }
}
