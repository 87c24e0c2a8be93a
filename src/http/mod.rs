//! HTTP/1.x: the incremental reply parser and Set-Cookie scanning (requests are
//! rendered by `call`).

pub mod cookie;
pub mod response;
