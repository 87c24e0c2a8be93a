//! HTTP/1.x: request rendering and the incremental reply parser.

pub mod request;
pub mod response;
