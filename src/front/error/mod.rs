//! `Error`: everything that stops rshperf before or instead of a run, as `main` prints
//! it.
//!
//! Owns the top-level error enum, one variant per source: each layer's and each front
//! end's typed error (`ConfigError`, `WorkloadError`, the engine's `StartupError`,
//! `OutputError`, and the errors of `sweep`, `merge`, `compare`, `serve` and `demo`)
//! converts into it with `From`, plus getopt's diagnostics and clap's refusals of a
//! subcommand's command line. Owns the printed text of each (the `rshperf: ` prefix,
//! the subcommand's name after it) and the exit status. Per-connection failures are not
//! errors in this sense: they are counted by `stats::ErrorKind`. Used by every front
//! end; `crate::run` and the subcommands' `main`s print it and exit with `exit_code()`.
//! The subcommands' own error enums live here too (`compare`, `merge`, `serve`,
//! `sweep`, `sweep_merge`; each front end re-exports its own), so that this module
//! imports no front end and the front ends import it.

pub(crate) mod compare;
pub(crate) mod merge;
pub(crate) mod serve;
pub(crate) mod sweep;
pub(crate) mod sweep_merge;

use crate::engine::error::StartupError;
use crate::model::config::ConfigError;
use crate::model::workload::error::WorkloadError;
use crate::output::error::OutputError;
use compare::CompareError;
use merge::MergeError;
use serve::ServeError;
use sweep::SweepError;
use sweep_merge::SweepMergeError;

/// The program name every message starts with.
const PROG: &str = "rshperf";

/// A fatal error that ends the program before (or instead of) a test run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration `ConfigBuilder::build` (or a value parser) refused:
    /// `rshperf: <text>`, or httperf's `rshperf.session_init: <text>` for its session
    /// limits.
    #[error("{}", config_text(.0))]
    Config(#[from] ConfigError),
    /// The workload's files or TLS options cannot be used: `rshperf: <text>`.
    #[error("{PROG}: {0}")]
    Workload(#[from] WorkloadError),
    /// The engines cannot start or finish: `rshperf: <text>`.
    #[error("{PROG}: {0}")]
    Engine(#[from] StartupError),
    /// An output file or stream cannot be written: `rshperf: <text>`.
    #[error("{PROG}: {0}")]
    Output(#[from] OutputError),
    /// A getopt-style diagnostic that carries its own prefix, printed verbatim, e.g.
    /// `rshperf: unrecognized option '--bogus'` (byte-compatible with getopt_long's).
    #[error("{0}")]
    Getopt(String),
    /// A subcommand's command line that clap refused: `rshperf: NAME: <clap's text>`.
    #[error("{PROG}: {name}: {text}")]
    Subcommand {
        /// The subcommand, e.g. `merge`.
        name: String,
        /// clap's message without its `error: ` prefix.
        text: String,
    },
    /// `rshperf sweep`: `rshperf: sweep: <text>`.
    #[error("{PROG}: sweep: {0}")]
    Sweep(#[from] SweepError),
    /// `rshperf merge` of run documents: `rshperf: merge: <text>`.
    #[error("{PROG}: merge: {0}")]
    Merge(#[from] MergeError),
    /// `rshperf merge` of sweep documents: `rshperf: merge: <text>`.
    #[error("{PROG}: merge: {0}")]
    SweepMerge(#[from] SweepMergeError),
    /// `rshperf compare`: `rshperf: compare: <text>`.
    #[error("{PROG}: compare: {0}")]
    Compare(#[from] CompareError),
    /// `rshperf serve` or `rshperf demo`: `rshperf: serve: <text>` or
    /// `rshperf: demo: <text>`.
    #[error("{PROG}: {command}: {0}", command = .0.command())]
    Serve(#[from] ServeError),
}

impl Error {
    /// The process exit status for this error: 1 for every one (httperf's 255 cases
    /// are option errors here too).
    pub(crate) fn exit_code(&self) -> i32 {
        1
    }
}

impl PartialEq for Error {
    /// The same variant printing the same text (the causes are not comparable).
    fn eq(&self, other: &Error) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

/// A configuration error's line: httperf's `session_init` limits keep httperf's prefix.
fn config_text(e: &ConfigError) -> String {
    match e {
        ConfigError::SessionLimit { .. } => format!("{PROG}.session_init: {e}"),
        e => format!("{PROG}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;
    use crate::model::config::CallRateClash;
    use crate::wire::tls::TlsOptionError;

    #[test]
    fn each_source_prints_with_its_prefix() {
        let io = || io::Error::from(io::ErrorKind::PermissionDenied);
        let cases: Vec<(Error, &str)> = vec![
            (
                ConfigError::CallRateWith {
                    clash: CallRateClash::Rate,
                }
                .into(),
                "rshperf: ",
            ),
            (
                ConfigError::SessionLimit {
                    option: "--max-conns",
                    max: 4,
                }
                .into(),
                "rshperf.session_init: --max-conns must be <= 4",
            ),
            (
                ConfigError::ServerAndServers.into(),
                "rshperf: --server S or --servers file, not both",
            ),
            (
                WorkloadError::Tls(TlsOptionError::NoTrustedRoots).into(),
                "rshperf: ",
            ),
            (
                StartupError::EnginePanicked.into(),
                "rshperf: an engine thread panicked",
            ),
            (OutputError::Stdout(io()).into(), "rshperf: "),
            (
                Error::Getopt("rshperf: unrecognized option '--x'".into()),
                "rshperf: unrecognized option '--x'",
            ),
            (
                Error::Subcommand {
                    name: "probe".into(),
                    text: "unexpected argument 'x' found".into(),
                },
                "rshperf: probe: unexpected argument 'x' found",
            ),
            (
                SweepError::PastKnee.into(),
                "rshperf: sweep: --past-knee must be at least 1",
            ),
            (
                StartupError::Signals(io()).into(),
                "rshperf: cannot catch SIGINT and SIGTERM: permission denied",
            ),
            (MergeError::NoInputs.into(), "rshperf: merge: "),
            (
                CompareError::Usage("x".into()).into(),
                "rshperf: compare: x",
            ),
            (
                ServeError::Delay.into(),
                "rshperf: serve: expected milliseconds",
            ),
            (ServeError::DemoServerOption.into(), "rshperf: demo: "),
        ];
        for (e, start) in cases {
            let text = e.to_string();
            assert!(
                text.starts_with(start),
                "{text} does not start with {start}"
            );
            assert_eq!(e.exit_code(), 1, "{text}");
        }
    }

    #[test]
    fn lower_layers_texts_follow_the_prefix_unchanged() {
        let w = WorkloadError::NoServers { file: "s".into() };
        let text = w.to_string();
        assert_eq!(Error::from(w).to_string(), format!("rshperf: {text}"));
        let c = ConfigError::ConcurrencyAndRate;
        let text = c.to_string();
        assert_eq!(Error::from(c).to_string(), format!("rshperf: {text}"));
        let o = OutputError::Table(io::Error::from(io::ErrorKind::NotFound));
        let text = o.to_string();
        assert_eq!(Error::from(o).to_string(), format!("rshperf: {text}"));
    }
}
