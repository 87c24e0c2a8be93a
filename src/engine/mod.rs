//! The engine layer: running a `Config` on threads. The event loop (`event_loop`), one
//! connection's machine (`conn`), the engines' shared tally, live progress, the
//! Prometheus publisher and what the machine did meanwhile (`machine`). Imports the
//! wire and model layers only.

pub(crate) mod clock;
pub(crate) mod conn;
pub(crate) mod error;
pub(crate) mod event_loop;
pub mod execute;
pub(crate) mod feed;
pub(crate) mod interrupt;
pub(crate) mod machine;
pub(crate) mod metrics;
pub(crate) mod print;
pub(crate) mod progress;
pub(crate) mod reqlog;
pub(crate) mod tally;
