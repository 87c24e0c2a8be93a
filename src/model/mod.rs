//! The model layer: what a run is and what it measured. The typed `Config`, the
//! workload generators, requests (`call`), `Stats` with its exact merge, and the
//! report schema. Imports only the wire layer.

pub mod call;
pub mod config;
pub mod pacing;
pub mod report;
pub mod run;
pub mod stats;
pub mod summary;
pub mod threshold;
pub mod workload;
