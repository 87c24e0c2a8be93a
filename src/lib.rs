//! rshperf: an httperf-compatible open-loop HTTP load generator.
//!
//! Data flows one way: `cli::Args → config::Config → engine(s) → stats::Stats →
//! report::summary::Summary → report::classic`. `run` is the whole program; `main.rs`
//! only passes it the command line.

#![deny(unsafe_code)]

pub mod ab;
pub mod advice;
pub mod call;
pub mod cfmt;
pub mod cli;
pub mod config;
pub mod conn;
pub mod engine;
pub mod error;
pub mod help;
pub mod http;
pub mod http2;
pub mod merge;
pub mod metrics;
// The only module with `unsafe`: small syscall wrappers, each with a SAFETY comment.
#[allow(unsafe_code)]
pub mod net;
pub mod operand;
pub mod pacing;
pub mod progress;
pub mod report;
pub mod runner;
pub mod serve;
pub mod stats;
pub mod stream;
pub mod subcommand;
pub mod sweep;
pub mod table;
pub mod tally;
pub mod threshold;
pub mod timer;
pub mod tls;
pub mod workload;

use std::io::Write;

use cli::Command;
use config::Config;
use error::Error;

/// Runs rshperf with `argv` (program name first) and returns the exit status.
pub fn run(argv: Vec<String>) -> i32 {
    if let Some(code) = subcommand::dispatch(&argv) {
        return code;
    }
    match try_run(&argv) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            e.exit_code()
        }
    }
}

fn try_run(argv: &[String]) -> Result<i32, Error> {
    let args = match cli::parse(argv)? {
        Command::Help(text) | Command::Version(text) => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
            return Ok(0);
        }
        Command::Run(args) => args,
    };
    let cfg = Config::from_args(args)?;
    if let Some(opt) = cfg.unsupported() {
        return Err(Error::Usage(format!("{opt} is not supported yet")));
    }
    runner::run(&cfg)
}
