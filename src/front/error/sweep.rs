//! `SweepError`: what `rshperf sweep` refuses on its command line.
//!
//! Owns the texts printed after `rshperf: sweep: ` (option checks, options a sweep
//! cannot take, `--slo`). Made by `sweep::args`; `front::error::Error` prints it.

use thiserror::Error as ThisError;

use crate::model::threshold::ThresholdError;

/// Why a sweep cannot run.
#[derive(Debug, ThisError)]
pub enum SweepError {
    /// clap refused the sweep's own options.
    #[error("{0}")]
    Clap(#[from] clap::Error),
    /// A run operand that looks like an option.
    #[error("unexpected argument '{0}'")]
    UnexpectedArgument(String),
    /// `-h` or `-V` among the run options.
    #[error("-h and -V are not per-run options; see rshperf sweep --help")]
    HelpInRun,
    /// A run option a sweep cannot take.
    #[error("{option} cannot be used with sweep: {why}")]
    Refused {
        /// The option's long name.
        option: String,
        /// Why.
        why: &'static str,
    },
    /// A value that must be a positive number.
    #[error("{0} must be a positive number")]
    NotPositive(&'static str),
    /// `--high-rate` below `--low-rate`.
    #[error("--high-rate must not be below --low-rate")]
    HighBelowLow,
    /// Neither `--rate-step` nor `--find-max`.
    #[error("give --rate-step (the walk) or --find-max (the search)")]
    NoWalk,
    /// `--const-test-time` and `--num-conns`.
    #[error("--const-test-time sets --num-conns from the rate: give one of them")]
    ConstTimeAndConns,
    /// A negative `--cool-down`.
    #[error("--cool-down must be 0 or more seconds")]
    CoolDown,
    /// `--min-achieved` out of range.
    #[error("--min-achieved must be a percentage above 0 and at most 100")]
    MinAchieved,
    /// `--precision` out of range.
    #[error("--precision must be a percentage between 0 and 100")]
    Precision,
    /// `--past-knee 0`.
    #[error("--past-knee must be at least 1")]
    PastKnee,
    /// `--find-max` with `--partition`.
    #[error(
        "--find-max cannot be used with --partition: the search picks each rate from the \
         results of the steps before it, which no partition has alone; walk with --rate-step"
    )]
    FindMaxPartition,
    /// `--partition` without `--start-at`.
    #[error(
        "--partition needs --start-at: every partition must start each step at the same \
         moment"
    )]
    PartitionWithoutStart,
    /// `--partitions` without `--partition auto`.
    #[error("--partitions goes with --partition auto")]
    PartitionsAlone,
    /// `--start-at` without `--partition`.
    #[error("--start-at goes with --partition (a sweep in one process starts at once)")]
    StartAtAlone,
    /// A malformed `--partition auto/N`.
    #[error("--partition: illegal partition {0} (expected I/N, auto or auto/N)")]
    BadPartition(String),
    /// `--partition auto/N` and `--partitions M` with M ≠ N.
    #[error("--partition auto/{0} and --partitions {1} disagree")]
    PartitionsDiffer(u32, u32),
    /// `--partition auto` found no usable partition in the environment.
    #[error("{0}")]
    AutoPartition(#[from] crate::model::config::auto_partition::AutoPartitionError),
    /// `--stop-after-step 0`.
    #[error("--stop-after-step must be at least 1")]
    StopAfterStep,
    /// A `--slo` expression that does not parse.
    #[error("--slo: {0}")]
    Slo(#[from] ThresholdError),
    /// An option `--in-one-run` cannot be combined with.
    #[error("{option} cannot be used with --in-one-run: {why}")]
    InOneRun {
        /// The option as the user names it.
        option: &'static str,
        /// Why, and what to do.
        why: &'static str,
    },
    /// `--in-one-run` without the walk's `--rate-step` and `--const-test-time`.
    #[error("--in-one-run runs the walk as one profile: give --rate-step and --const-test-time")]
    InOneRunNeedsWalk,
    /// `--in-one-run` with levels shorter than a second.
    #[error(
        "--in-one-run needs --const-test-time of at least 1 s: each level is judged from \
         whole seconds of the run's per-second timeline"
    )]
    InOneRunShort,
    /// `--in-one-run` with a walk longer than the timeline keeps single seconds.
    #[error(
        "--in-one-run: the walk lasts {0} s; the run's timeline keeps single seconds for \
         its first hour only (fewer levels, a shorter --const-test-time, or the walk \
         without --in-one-run)"
    )]
    InOneRunLong(String),
    /// A `--slo` on a figure the per-second timeline does not carry.
    #[error(
        "--slo '{0}': with --in-one-run each level is judged from the per-second timeline, \
         which has {1}"
    )]
    InOneRunSlo(String, &'static str),
    /// The walk's profile does not parse (a rate beyond the profile's range).
    #[error("--in-one-run: {0}")]
    InOneRunProfile(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::error::Error;

    #[test]
    fn texts_with_their_prefix() {
        let cases = [
            (
                SweepError::UnexpectedArgument("-x".into()),
                "rshperf: sweep: unexpected argument '-x'",
            ),
            (
                SweepError::HelpInRun,
                "rshperf: sweep: -h and -V are not per-run options; see rshperf sweep --help",
            ),
            (
                SweepError::Refused {
                    option: "--hog".into(),
                    why: "a sweep runs in one process",
                },
                "rshperf: sweep: --hog cannot be used with sweep: a sweep runs in one process",
            ),
            (
                SweepError::NotPositive("--low-rate"),
                "rshperf: sweep: --low-rate must be a positive number",
            ),
            (
                SweepError::HighBelowLow,
                "rshperf: sweep: --high-rate must not be below --low-rate",
            ),
            (
                SweepError::NoWalk,
                "rshperf: sweep: give --rate-step (the walk) or --find-max (the search)",
            ),
            (
                SweepError::ConstTimeAndConns,
                "rshperf: sweep: --const-test-time sets --num-conns from the rate: give one of them",
            ),
            (
                SweepError::CoolDown,
                "rshperf: sweep: --cool-down must be 0 or more seconds",
            ),
            (
                SweepError::MinAchieved,
                "rshperf: sweep: --min-achieved must be a percentage above 0 and at most 100",
            ),
            (
                SweepError::Precision,
                "rshperf: sweep: --precision must be a percentage between 0 and 100",
            ),
            (
                SweepError::PastKnee,
                "rshperf: sweep: --past-knee must be at least 1",
            ),
            (
                SweepError::Slo(ThresholdError::NoValue { expr: "p99>".into() }),
                "rshperf: sweep: --slo: no value in 'p99>'",
            ),
        ];
        for (e, text) in cases {
            let top = Error::from(e);
            assert_eq!(top.to_string(), text);
            assert_eq!(top.exit_code(), 1);
        }
    }
}
