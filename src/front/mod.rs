//! The front ends: command lines onto `Config`, then a run and its outputs. httperf's
//! getopt_long, the URL operand, `ab`, `lb`, `sweep`, `merge`, `serve`, `demo`, help
//! and the subcommand dispatch. The top layer: may import every layer below.

pub mod ab;
pub mod cli;
pub mod help;
pub mod httperf;
pub mod merge;
pub mod operand;
pub mod runner;
pub mod serve;
pub mod subcommand;
pub mod sweep;
