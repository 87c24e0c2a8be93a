//! Fatal errors: everything that stops rshperf before or instead of a run.
//!
//! Owns the top-level `Error` enum `main` prints, and its exit codes. Each layer has its
//! own typed errors (`ConfigError`, `WorkloadError`, `engine::error::StartupError`,
//! `output::error::*`, the front ends' errors); they convert into `Error` with `From`,
//! which sorts them into a usage or a start-up failure and keeps the typed cause (this
//! layer cannot name the upper layers' types, so the cause is a boxed error that a front
//! end can `downcast_ref` to match). Per-connection failures are not errors in this
//! sense: they are classified and counted by `stats::ErrorKind`. `main` prints
//! `rshperf: <message>` (or the raw getopt-style text) and exits with `exit_code()`.

use std::fmt;

use crate::wire::tls::TlsOptionError;

/// The typed cause of a usage or start-up error (a layer's own error enum).
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A fatal error that ends the program before (or instead of) a test run.
#[derive(Debug)]
pub enum Error {
    /// A bad command line, option value or input file; the cause's text follows
    /// `rshperf: `.
    Usage(Cause),
    /// A getopt-style diagnostic that already carries its own prefix (argv[0] as typed),
    /// printed verbatim, e.g. `rshperf: unrecognized option '--bogus'` (the text is
    /// byte-compatible with getopt_long's output).
    Getopt(String),
    /// A subcommand's command line that clap refused: `rshperf: NAME: <clap's text>`.
    Subcommand {
        /// The subcommand, e.g. `probe`.
        name: String,
        /// clap's message without its `error: ` prefix.
        text: String,
    },
    /// `-h` or `-V` where a run's options are wanted (`httperf::from_argv`).
    NotARun,
    /// An option rshperf parses but does not implement yet.
    Unsupported {
        /// The option as named in the message, e.g. `--hog`.
        option: String,
    },
    /// A TLS option that cannot be used (`--ssl-certificate`, `--ssl-ciphers`, …).
    Tls(TlsOptionError),
    /// A start-up failure (address resolution, rlimits, files, listeners); the cause's
    /// text follows `rshperf: `.
    Startup(Cause),
}

impl Error {
    /// A usage error caused by `e`.
    pub(crate) fn usage(e: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error::Usage(Box::new(e))
    }

    /// A start-up error caused by `e`.
    pub(crate) fn startup(e: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error::Startup(Box::new(e))
    }

    /// The process exit status for this error (all 1: httperf's 255 cases are option
    /// errors here too).
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_)
            | Error::Getopt(_)
            | Error::Subcommand { .. }
            | Error::NotARun
            | Error::Unsupported { .. }
            | Error::Tls(_) => 1,
            Error::Startup(_) => 1,
        }
    }

    /// The typed cause of a usage or start-up error, if it is a `T`.
    pub fn cause<T: std::error::Error + 'static>(&self) -> Option<&T> {
        match self {
            Error::Usage(c) | Error::Startup(c) => c.downcast_ref::<T>(),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(c) | Error::Startup(c) => write!(f, "rshperf: {c}"),
            Error::Getopt(m) => f.write_str(m),
            Error::Subcommand { name, text } => write!(f, "rshperf: {name}: {text}"),
            Error::NotARun => {
                f.write_str("rshperf: -h/--help and -V/--version do not describe a run")
            }
            Error::Unsupported { option } => write!(f, "rshperf: {option} is not supported yet"),
            Error::Tls(e) => write!(f, "rshperf: {e}"),
        }
    }
}

impl PartialEq for Error {
    /// The same variant printing the same text (the causes are not comparable).
    fn eq(&self, other: &Error) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Usage(c) | Error::Startup(c) => Some(c.as_ref()),
            Error::Tls(e) => Some(e),
            _ => None,
        }
    }
}

/// A subcommand's error: its text after `NAME: ` (`rshperf: merge: …`).
#[derive(Debug, thiserror::Error)]
#[error("{command}: {cause}")]
pub struct InCommand<E: std::error::Error + 'static> {
    /// The subcommand, e.g. `merge`.
    pub command: &'static str,
    /// What went wrong.
    #[source]
    pub cause: E,
}

impl From<TlsOptionError> for Error {
    /// An option error: `rshperf: <text>`.
    fn from(e: TlsOptionError) -> Error {
        Error::Tls(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cause for the tests.
    #[derive(Debug, thiserror::Error)]
    #[error("cannot do it")]
    struct Cannot;

    #[test]
    fn display_of_each_variant() {
        assert_eq!(Error::usage(Cannot).to_string(), "rshperf: cannot do it");
        assert_eq!(Error::startup(Cannot).to_string(), "rshperf: cannot do it");
        assert_eq!(
            Error::Getopt("rshperf: unrecognized option '--x'".into()).to_string(),
            "rshperf: unrecognized option '--x'"
        );
        let sub = Error::Subcommand {
            name: "probe".into(),
            text: "unexpected argument 'x' found".into(),
        };
        assert_eq!(
            sub.to_string(),
            "rshperf: probe: unexpected argument 'x' found"
        );
        let hog = Error::Unsupported {
            option: "--hog".into(),
        };
        assert_eq!(hog.to_string(), "rshperf: --hog is not supported yet");
        assert_eq!(
            Error::NotARun.to_string(),
            "rshperf: -h/--help and -V/--version do not describe a run"
        );
        assert_eq!(
            Error::from(TlsOptionError::NoTrustedRoots).to_string(),
            format!("rshperf: {}", TlsOptionError::NoTrustedRoots)
        );
    }

    #[test]
    fn exit_codes_and_causes() {
        for e in [
            Error::usage(Cannot),
            Error::startup(Cannot),
            Error::Getopt(String::new()),
            Error::NotARun,
            Error::Unsupported {
                option: "--x".into(),
            },
            Error::Tls(TlsOptionError::NoTrustedRoots),
        ] {
            assert_eq!(e.exit_code(), 1, "{e}");
        }
        assert!(Error::usage(Cannot).cause::<Cannot>().is_some());
        assert_eq!(Error::usage(Cannot), Error::usage(Cannot));
        assert_ne!(Error::usage(Cannot), Error::startup(Cannot));
        assert!(Error::Getopt(String::new()).cause::<Cannot>().is_none());
        let merge = Error::startup(InCommand {
            command: "merge",
            cause: Cannot,
        });
        assert_eq!(merge.to_string(), "rshperf: merge: cannot do it");
        assert!(merge.cause::<InCommand<Cannot>>().is_some());
    }
}
