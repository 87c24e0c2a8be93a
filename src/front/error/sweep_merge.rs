//! `SweepMergeError`: why `rshperf merge` refuses the documents of a partitioned sweep.
//!
//! Owns the texts printed after `rshperf: merge: ` for sweep documents (a sweep that
//! was not partitioned, sweeps of different parameters, a step without its run
//! document, a mix of sweep and run documents, `--html` for runs). Made by
//! `front::sweep_merge`; `front::error::Error` prints it after `rshperf: merge: `.

use std::io;

use thiserror::Error as ThisError;

use crate::model::threshold::ThresholdError;

/// Why sweep documents cannot be merged.
#[derive(Debug, ThisError)]
pub enum SweepMergeError {
    /// Sweep documents and run documents together.
    #[error("{sweep} is a sweep document but {run} is not: merge the partitions of one sweep, or of one run")]
    Mixed {
        /// A sweep document.
        sweep: String,
        /// A document that is not.
        run: String,
    },
    /// `--html` for run documents.
    #[error("--html is for the documents of a partitioned sweep")]
    HtmlForRuns,
    /// `--fail-on` for sweep documents (a sweep's criteria are its own options).
    #[error(
        "--fail-on is for run documents: a merged sweep is judged by the sweep's own criteria"
    )]
    FailOnForSweeps,
    /// The document of a sweep in one run (`--in-one-run`), which is not partitioned.
    #[error(
        "{file}: a sweep in one run (--in-one-run) has no partitions to merge; merge the \
         --json documents of its profile's partitioned runs (rshperf --rate-profile … \
         --partition I/N) instead"
    )]
    OneRun {
        /// The file.
        file: String,
    },
    /// A sweep document without the members a partitioned sweep writes.
    #[error("{file}: not a partitioned sweep ({member} missing): run rshperf sweep with --partition and --json")]
    NotPartitioned {
        /// The file.
        file: String,
        /// The first missing member.
        member: &'static str,
    },
    /// A sweep document whose `parameters` (or a step's run `config`) do not read as
    /// a sweep's.
    #[error("{file}: {member}.{path}: {source}")]
    BadMember {
        /// The file.
        file: String,
        /// `parameters`, or the step's run `config`.
        member: &'static str,
        /// The path inside it.
        path: String,
        /// serde's reason.
        #[source]
        source: serde_json::Error,
    },
    /// A sweep document whose `--slo` does not parse.
    #[error("{file}: parameters.slo: {source}")]
    Slo {
        /// The file.
        file: String,
        /// Why (boxed: the largest of its variants would double this enum's size).
        #[source]
        source: Box<ThresholdError>,
    },
    /// Sweeps whose parameters differ.
    #[error(
        "{first} and {other} are partitions of different sweeps: parameters.{member} {a} vs {b}"
    )]
    Different {
        /// The first input.
        first: String,
        /// The input that differs.
        other: String,
        /// The parameter.
        member: String,
        /// Its value in `first`.
        a: String,
        /// Its value in `other`.
        b: String,
    },
    /// A step whose run document is missing.
    #[error("{file}: step {step} has no run document")]
    NoRun {
        /// The file.
        file: String,
        /// The step, from 1.
        step: usize,
    },
    /// A sweep document with no steps in common with the others.
    #[error("no step is in every input ({file} has none)")]
    NoSteps {
        /// The input without steps.
        file: String,
    },
    /// The merged `--json` or `--html` file cannot be written.
    #[error("cannot write {option} {path}: {source}")]
    Write {
        /// The option.
        option: &'static str,
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
}
