//! The engine layer: running a `Config` on threads. The event loop (`event_loop`), one
//! connection's machine (`conn`), the engines' shared tally, live progress and the
//! Prometheus publisher. Imports the wire and model layers only.

pub(crate) mod clock;
pub mod conn;
pub mod event_loop;
pub mod execute;
pub mod metrics;
pub mod print;
pub mod progress;
pub mod tally;
