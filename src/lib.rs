//! rshperf: an httperf-compatible open-loop HTTP load generator.
//!
//! Data flows one way: `cli::Args → config::Config → engine(s) → stats::Stats →
//! report::summary::Summary → report::classic`. `run` is the whole program; `main.rs`
//! only passes it the command line.

#![deny(unsafe_code)]

pub mod engine;
pub mod front;
pub mod model;
pub mod output;
pub mod wire;

use std::io::Write;

use front::cli::Command;
use wire::error::Error;

/// Runs rshperf with `argv` (program name first) and returns the exit status.
pub fn run(argv: Vec<String>) -> i32 {
    wire::nss::builtin_host_lookups_only();
    if let Some(code) = front::dispatch::dispatch(&argv) {
        return code;
    }
    // An httperf-style run: SIGINT and SIGTERM end it with a report from now on.
    if let Err(e) = front::runner::catch_signals() {
        eprintln!("{e}");
        return e.exit_code();
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
    let args = match front::cli::parse(argv)? {
        Command::Help(_) => {
            front::subcommand::print_stdout(&front::dispatch::help_text());
            return Ok(0);
        }
        Command::Version(text) => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
            return Ok(0);
        }
        Command::Run(args) => args,
    };
    let cfg = front::httperf::config(&args)?;
    if let Some(opt) = cfg.unsupported() {
        return Err(Error::Unsupported {
            option: opt.to_string(),
        });
    }
    front::runner::run(&cfg)
}
