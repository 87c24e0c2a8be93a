//! `CompareError`: why `rshperf compare` cannot answer.
//!
//! Owns the texts printed after `rshperf: compare: ` (bad option values, unreadable
//! inputs, runs of different workloads or invalid runs without `--force`, the
//! `--junit` file). Made by
//! `front::compare`; `front::error::Error` prints it after `rshperf: compare: `.

use crate::output::error::OutputError;

/// Why `compare` could not answer.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A bad option value (a gate, too few files).
    #[error("{0}")]
    Usage(String),
    /// An input that cannot be read or is not a run of this schema.
    #[error("{0}")]
    Input(String),
    /// Runs of different workloads without `--force`.
    #[error("{0} (--force compares them anyway)")]
    Workload(String),
    /// Runs whose documents say they are invalid, without `--force`: one line each
    /// (`model::compare::invalid::Invalid::text`).
    #[error(
        "{} (--force compares them anyway and marks them)",
        .0.join(". ")
    )]
    Invalid(Vec<String>),
    /// The `--junit` file cannot be written.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The JSON form of the comparison cannot be made.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}
