//! rshperf: an httperf-compatible open-loop HTTP load generator.
//!
//! Data flows one way: the command line (`front::cli::Args`, or a subcommand's options)
//! → `model::config::Config` → the engines (`engine::execute`) → `model::stats::Stats`
//! → `model::report::Report` and `model::summary::Summary` → the outputs
//! (`output::classic`, `output::json`, …). The layers, and where a new option, figure,
//! protocol or output goes: docs/architecture.md. `run` is the whole program;
//! `main.rs` only passes it the command line.

#![deny(unsafe_code)]
// `pub` only on what the binary, tests/ and fuzz/ reach: everything else is `pub(crate)`.
#![warn(unreachable_pub)]

pub mod engine;
pub mod front;
pub mod model;
pub mod output;
pub mod wire;

use front::cli::Command;
use front::error::Error;

/// Runs rshperf with `argv` (program name first) and returns the exit status.
pub fn run(argv: Vec<String>) -> i32 {
    wire::nss::builtin_host_lookups_only();
    if let Some(code) = front::dispatch::dispatch(&argv) {
        return code;
    }
    // An httperf-style run: SIGINT and SIGTERM end it with a report from now on.
    if let Err(e) = front::runner::catch_signals() {
        return front::subcommand::exit_status(Err(e));
    }
    front::subcommand::exit_status(try_run(&argv))
}

fn try_run(argv: &[String]) -> Result<i32, Error> {
    let args = match front::cli::parse(argv)? {
        Command::Help(_) => {
            front::subcommand::print_stdout(&front::dispatch::help_text());
            return Ok(0);
        }
        Command::Version(text) => {
            front::subcommand::print_stdout(&text);
            return Ok(0);
        }
        Command::Run(args) => args,
    };
    let cfg = front::httperf::config(&args)?;
    front::runner::run(&cfg)
}
