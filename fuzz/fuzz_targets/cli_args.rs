//! Fuzz target: command-line parsing and validation (`rshperf::front::cli::parse` and
//! `rshperf::front::httperf::build`, the mapping onto `ConfigBuilder`).
//!
//! The input is split on NUL bytes into arguments (invalid UTF-8 replaced, as `main`
//! does). `--server=127.0.0.1` goes first so the configuration never needs DNS, and
//! inputs that could set another server (an argument starting with `--server` as the
//! full option name) are skipped. Nothing may panic, and every error must be exactly
//! one line (unless an argument itself holds a line break)
//! starting with `rshperf: ` (what `main` prints before exiting 1).

#![no_main]

use libfuzzer_sys::fuzz_target;
use rshperf::front::cli::{self, Command};
use rshperf::front::httperf;
use rshperf::front::error::Error;

/// Could this argument set `--server` (and so make the configuration resolve a name)?
fn sets_server(arg: &str) -> bool {
    arg == "--server" || arg.starts_with("--server=")
}

fuzz_target!(|input: &[u8]| {
    let mut argv = vec!["rshperf".to_string(), "--server=127.0.0.1".to_string()];
    if !input.is_empty() {
        argv.extend(
            input
                .split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned()),
        );
    }
    if argv[2..].iter().any(|a| sets_server(a)) {
        return;
    }
    let err = match cli::parse(&argv) {
        Ok(Command::Run(args)) => match httperf::build(&args) {
            Ok(_) => return,
            Err(rejected) => Error::from(rejected.error),
        },
        Ok(Command::Help(_) | Command::Version(_)) => return,
        Err(e) => e,
    };
    let text = err.to_string();
    assert!(text.starts_with("rshperf: "), "{text:?}");
    // A value with a line break is echoed in the message; otherwise it is one line.
    if !argv.iter().any(|a| a.contains(['\n', '\r'])) {
        assert!(!text.contains(['\n', '\r']), "{text:?}");
    }
});
