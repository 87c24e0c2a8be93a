//! The front ends: command lines onto `Config`, then a run and its outputs. httperf's
//! getopt_long, the URL operand, `ab`, `lb`, `sweep`, `merge`, `serve`, `demo`, help
//! and the subcommand dispatch. The top layer: may import every layer below.

pub(crate) mod ab;
pub mod cli;
pub(crate) mod compare;
pub(crate) mod completions;
pub mod dispatch;
pub mod error;
pub(crate) mod getopt;
pub(crate) mod habits;
pub(crate) mod help;
pub mod httperf;
pub(crate) mod log;
pub(crate) mod merge;
pub(crate) mod operand;
pub(crate) mod replay;
pub(crate) mod runner;
pub mod serve;
pub(crate) mod subcommand;
pub(crate) mod sweep;
pub(crate) mod sweep_merge;
