//! Fatal errors: everything that stops rshperf before or instead of a run.
//!
//! Owns the `Error` enum and its messages. Per-connection failures are not errors in
//! this sense: they are classified and counted by `stats::ErrorKind`. `main` prints
//! `rshperf: <message>` (or the raw getopt-style text) and exits with `exit_code()`.

use std::fmt;

/// A fatal error that ends the program before (or instead of) a test run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A bad command line or option value; the text follows `rshperf: `.
    Usage(String),
    /// A getopt-style diagnostic that already carries its own prefix (argv[0] as typed),
    /// printed verbatim, e.g. `rshperf: unrecognized option '--bogus'`.
    Getopt(String),
    /// Start-up failure (address resolution, rlimits, files); the text follows `rshperf: `.
    Startup(String),
}

impl Error {
    /// The process exit status for this error (always 1: httperf's 255 cases are option
    /// errors here too).
    pub(crate) fn exit_code(&self) -> i32 {
        1
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) | Error::Startup(m) => write!(f, "rshperf: {m}"),
            Error::Getopt(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}
