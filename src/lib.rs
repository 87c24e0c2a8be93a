//! rshperf: an httperf-compatible open-loop HTTP load generator.
//!
//! Data flows one way: `cli::Args → config::Config → engine(s) → stats::Stats →
//! report::summary::Summary → report::classic`. `run` is the whole program; `main.rs`
//! only passes it the command line.

pub mod cfmt;
pub mod cli;
pub mod config;
pub mod error;
pub mod http;
pub mod report;
pub mod stats;
pub mod timer;
pub mod workload;

/// Runs rshperf with `argv` (program name first) and returns the exit status.
pub fn run(_argv: Vec<String>) -> i32 {
    0
}
