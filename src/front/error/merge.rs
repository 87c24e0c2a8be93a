//! `MergeError`: why `rshperf merge` refuses its inputs or cannot finish.
//!
//! Owns the texts printed after `rshperf: merge: ` (unreadable or malformed documents,
//! inputs that are not partitions of one workload, sums out of range, the `--json`
//! file). Made by `front::merge`; `front::error::Error` prints it after `rshperf: merge: `.

use std::io;

use thiserror::Error as ThisError;

use crate::model::stats::MergeError as StatsMergeError;
use crate::output::error::DocError;

/// Why the inputs cannot be merged.
#[derive(Debug, ThisError)]
pub enum MergeError {
    /// An input file cannot be read.
    #[error("cannot read {file}: {source}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// An input that is not JSON.
    #[error("{file}: not a JSON document: {source}")]
    NotJson {
        /// The file.
        file: String,
        /// serde's reason.
        #[source]
        source: serde_json::Error,
    },
    /// An input whose statistics cannot be read back.
    #[error("{file}: {source}")]
    Doc {
        /// The file.
        file: String,
        /// Why.
        #[source]
        source: DocError,
    },
    /// An input without its `config` object.
    #[error("{file}: missing config")]
    MissingConfig {
        /// The file.
        file: String,
    },
    /// An input whose `config` member does not read as a configuration.
    #[error("{file}: config.{path}: {source}")]
    BadConfig {
        /// The file.
        file: String,
        /// The member's path inside `config`, e.g. `client`.
        path: String,
        /// serde's reason.
        #[source]
        source: serde_json::Error,
    },
    /// A member of an input that is not what it should be.
    #[error("{file}: {member} is not {expected}")]
    BadMember {
        /// The file.
        file: String,
        /// The member's path, e.g. `run.partition`.
        member: &'static str,
        /// What it should be, e.g. `[I, N] with I < N`.
        expected: &'static str,
    },
    /// An input naming another number of servers than its statistics hold.
    #[error("{file}: servers names {named} servers but raw.servers holds {held}")]
    ServerCount {
        /// The file.
        file: String,
        /// How many names.
        named: usize,
        /// How many servers' statistics.
        held: usize,
    },
    /// No input at all.
    #[error("no input files")]
    NoInputs,
    /// Two inputs of different workloads.
    #[error("{first} and {other} are runs of different workloads: {key} {a} vs {b}")]
    DifferentWorkloads {
        /// The first input.
        first: String,
        /// The input that differs.
        other: String,
        /// The configuration member that differs.
        key: &'static str,
        /// Its value in the first input (JSON, or `(none)`).
        a: String,
        /// Its value in the other.
        b: String,
    },
    /// Two inputs against different servers.
    #[error("{first} and {other} are runs against different servers: [{}] vs [{}]", a.join(", "), b.join(", "))]
    DifferentServers {
        /// The first input.
        first: String,
        /// The input that differs.
        other: String,
        /// The first input's servers.
        a: Vec<String>,
        /// The other's.
        b: Vec<String>,
    },
    /// Two inputs split into a different number of partitions (or clients).
    #[error(
        "{file} is {what} {}/{} but {first} is {what} {}/{}: inputs must split the \
         workload the same way",
        mine.0, mine.1, theirs.0, theirs.1
    )]
    DifferentSplit {
        /// The input that differs.
        file: String,
        /// `partition` or `client`.
        what: &'static str,
        /// Its I/N.
        mine: (u32, u32),
        /// The first input.
        first: String,
        /// The first input's I/N.
        theirs: (u32, u32),
    },
    /// The same partition twice.
    #[error(
        "{other} and {file} are both partition {}/{}{}: each partition may be merged once",
        partition.0, partition.1, client_suffix(*client)
    )]
    Duplicate {
        /// The input seen first.
        other: String,
        /// The input seen again.
        file: String,
        /// Its partition I/N.
        partition: (u32, u32),
        /// Its client I/N.
        client: (u32, u32),
    },
    /// An input whose figures cannot be added to the others'.
    #[error("cannot add {file}: {source}")]
    CannotAdd {
        /// The file.
        file: String,
        /// Which sum overflows.
        #[source]
        source: StatsMergeError,
    },
    /// Merged totals that do not fit.
    #[error("the merged figures are out of range: {0}")]
    OutOfRange(#[source] StatsMergeError),
    /// The `--json` file cannot be written.
    #[error("cannot write --json file {dest}: {source}")]
    WriteJson {
        /// The file (or `-`).
        dest: String,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// ` client I/N` when the workload was also split with `--client`, else nothing (in
/// messages and `merge`'s text).
pub(crate) fn client_suffix((i, n): (u32, u32)) -> String {
    if n > 1 {
        format!(" client {i}/{n}")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::error::Error;

    #[test]
    fn texts() {
        let io = || io::Error::from(io::ErrorKind::NotFound);
        let cases = [
            (
                MergeError::Read {
                    file: "a".into(),
                    source: io(),
                },
                "cannot read a: entity not found",
            ),
            (
                MergeError::MissingConfig { file: "a".into() },
                "a: missing config",
            ),
            (
                MergeError::BadMember {
                    file: "a".into(),
                    member: "start.unix",
                    expected: "a number",
                },
                "a: start.unix is not a number",
            ),
            (
                MergeError::ServerCount {
                    file: "a".into(),
                    named: 1,
                    held: 2,
                },
                "a: servers names 1 servers but raw.servers holds 2",
            ),
            (MergeError::NoInputs, "no input files"),
            (
                MergeError::DifferentServers {
                    first: "a".into(),
                    other: "b".into(),
                    a: vec!["x".into(), "y".into()],
                    b: vec![],
                },
                "a and b are runs against different servers: [x, y] vs []",
            ),
            (
                MergeError::DifferentSplit {
                    file: "b".into(),
                    what: "client",
                    mine: (1, 4),
                    first: "a".into(),
                    theirs: (0, 3),
                },
                "b is client 1/4 but a is client 0/3: inputs must split the workload the same way",
            ),
            (
                MergeError::Duplicate {
                    other: "a".into(),
                    file: "b".into(),
                    partition: (1, 2),
                    client: (0, 2),
                },
                "a and b are both partition 1/2 client 0/2: each partition may be merged once",
            ),
            (
                MergeError::WriteJson {
                    dest: "o".into(),
                    source: io(),
                },
                "cannot write --json file o: entity not found",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
            let top = Error::from(e);
            assert_eq!(top.to_string(), format!("rshperf: merge: {text}"));
            assert_eq!(top.exit_code(), 1);
        }
    }
}
