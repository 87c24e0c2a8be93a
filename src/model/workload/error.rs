//! `WorkloadError`: why the files and checks of a workload refuse it.
//!
//! Owns the typed errors of building a `Workload` (header and body files, `--wlog`,
//! `--servers` and `--wsesslog` files, the page URI, the TLS settings) and their texts,
//! byte for byte the ones printed after `rshperf: ` (by `front::error::Error`). Made by the `workload` modules; matched
//! by the front ends.

use std::io;

use thiserror::Error as ThisError;

use crate::wire::tls::TlsOptionError;

/// Why a workload cannot be built.
#[derive(Debug, ThisError)]
pub enum WorkloadError {
    /// `--add-header-file` cannot be read.
    #[error("failed to open header file {file}: {source}")]
    AddHeaderFile {
        /// The file name.
        file: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// `--header-file` or `--body-file` cannot be read.
    #[error("{option} {file}: cannot read it: {source}")]
    Unreadable {
        /// The option, `--header-file` or `--body-file`.
        option: &'static str,
        /// The file name.
        file: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A line of the `--header-file` that is not a header.
    #[error("--header-file {file}: line {line}: {cause}: '{}'", text.escape_debug())]
    HeaderLine {
        /// The file name.
        file: String,
        /// The line number (from 1).
        line: usize,
        /// What is wrong with it.
        cause: &'static str,
        /// The line as read.
        text: String,
    },
    /// `--uri` is not an absolute path (with a page workload).
    #[error("URI specified with --uri must be absolute")]
    RelativePageUri,
    /// A `--wlog`, `--servers` or `--wsesslog` file that cannot be opened.
    #[error("can't open {file}: {source}")]
    Open {
        /// The file name.
        file: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// An empty `--wlog` file.
    #[error("file {file} is empty")]
    EmptyLog {
        /// The file name.
        file: String,
    },
    /// A `--wlog` entry that is not UTF-8.
    #[error("{file}: entry {entry} is not valid UTF-8")]
    LogEntryNotUtf8 {
        /// The file name.
        file: String,
        /// The entry number (from 1).
        entry: usize,
    },
    /// A `--wlog` file with no URI.
    #[error("{file} does not contain any valid URIs")]
    NoUris {
        /// The file name.
        file: String,
    },
    /// No server address to connect to.
    #[error("no server address")]
    NoServerAddress,
    /// A `--servers` entry that is not `host` or `host:port`.
    #[error("{file}: entry {entry}: bad server '{server}' (expected host or host:port)")]
    BadServer {
        /// The file name.
        file: String,
        /// The entry number (from 1).
        entry: usize,
        /// The entry as read.
        server: String,
    },
    /// A `--servers` host that does not resolve.
    #[error("{file}: cannot resolve server address '{host}'")]
    Unresolvable {
        /// The file name.
        file: String,
        /// The host.
        host: String,
    },
    /// A `--servers` file without servers.
    #[error("{file}: no servers found")]
    NoServers {
        /// The file name.
        file: String,
    },
    /// A `--wsesslog` file without sessions.
    #[error("{file}: no sessions found")]
    NoSessions {
        /// The file name.
        file: String,
    },
    /// A line of a `--wsesslog` file that does not parse.
    #[error("{file}:{line}: {cause}")]
    SessionLine {
        /// The file name.
        file: String,
        /// The line number (from 1).
        line: usize,
        /// What is wrong with it (the parser's diagnostic).
        cause: String,
    },
    /// The TLS options cannot be used.
    #[error(transparent)]
    Tls(#[from] TlsOptionError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io() -> io::Error {
        io::Error::from(io::ErrorKind::NotFound)
    }

    #[test]
    fn display_is_the_printed_text() {
        let cases: Vec<(WorkloadError, &str)> = vec![
            (
                WorkloadError::AddHeaderFile {
                    file: "h".into(),
                    source: io(),
                },
                "failed to open header file h: entity not found",
            ),
            (
                WorkloadError::Unreadable {
                    option: "--body-file",
                    file: "b".into(),
                    source: io(),
                },
                "--body-file b: cannot read it: entity not found",
            ),
            (
                WorkloadError::HeaderLine {
                    file: "h".into(),
                    line: 3,
                    cause: "empty header name",
                    text: ": x\t".into(),
                },
                "--header-file h: line 3: empty header name: ': x\\t'",
            ),
            (
                WorkloadError::RelativePageUri,
                "URI specified with --uri must be absolute",
            ),
            (
                WorkloadError::Open {
                    file: "f".into(),
                    source: io(),
                },
                "can't open f: entity not found",
            ),
            (
                WorkloadError::EmptyLog { file: "f".into() },
                "file f is empty",
            ),
            (
                WorkloadError::LogEntryNotUtf8 {
                    file: "f".into(),
                    entry: 2,
                },
                "f: entry 2 is not valid UTF-8",
            ),
            (
                WorkloadError::NoUris { file: "f".into() },
                "f does not contain any valid URIs",
            ),
            (WorkloadError::NoServerAddress, "no server address"),
            (
                WorkloadError::BadServer {
                    file: "s".into(),
                    entry: 1,
                    server: "a:b".into(),
                },
                "s: entry 1: bad server 'a:b' (expected host or host:port)",
            ),
            (
                WorkloadError::Unresolvable {
                    file: "s".into(),
                    host: "h".into(),
                },
                "s: cannot resolve server address 'h'",
            ),
            (
                WorkloadError::NoServers { file: "s".into() },
                "s: no servers found",
            ),
            (
                WorkloadError::NoSessions { file: "l".into() },
                "l: no sessions found",
            ),
            (
                WorkloadError::SessionLine {
                    file: "l".into(),
                    line: 4,
                    cause: "bad".into(),
                },
                "l:4: bad",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
        }
    }
}
