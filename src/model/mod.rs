//! The model layer: what a run is and what it measured. The typed `Config`, the
//! workload generators, requests (`call`), `Stats` with its exact merge, the
//! table of figures (`figure`) and the report derived from it. Imports only the wire
//! layer.

pub(crate) mod blocks;
pub(crate) mod call;
pub(crate) mod compare;
pub mod config;
pub(crate) mod figure;
pub(crate) mod judge;
pub(crate) mod pacing;
pub(crate) mod profile;
pub(crate) mod replay;
pub(crate) mod report;
pub(crate) mod reqlog;
pub(crate) mod run;
pub(crate) mod significance;
pub mod stats;
pub(crate) mod summary;
pub(crate) mod threshold;
pub(crate) mod validity;
pub mod workload;
