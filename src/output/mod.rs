//! The output layer: turning a run's figures into text and files. The classic httperf
//! report, ab's blocks, JSON, CSV, the timeline, HTML, thresholds, findings and
//! advice. Nothing here measures anything. Imports wire, model and engine only.

pub mod ab;
pub mod advice;
pub mod chart;
pub mod classic;
pub mod csv;
pub mod html;
pub mod json;
pub mod percentiles;
pub mod servers;
pub mod session;
pub mod summary;
pub mod threshold;
pub mod timeline;
