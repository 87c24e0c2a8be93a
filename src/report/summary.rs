//! `Summary`: the figures of the classic httperf report, derived from `Stats`.
//!
//! Owns every computation of reference §2.3.2 (rates, averages, sample stddev, x.5
//! median from 1-ms bins, integer-truncated sizes, reply-rate sample statistics, CPU
//! percentages, Net I/O). Pure and deterministic; the formatter in `classic` only
//! prints these numbers.

use crate::stats::Stats;

/// Facts about the run that `Stats` does not hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunInfo {
    /// Test duration (delta), seconds.
    pub duration: f64,
    /// User CPU seconds used during the run.
    pub cpu_user: f64,
    /// System CPU seconds used during the run.
    pub cpu_system: f64,
}
