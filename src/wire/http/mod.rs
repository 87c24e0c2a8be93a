//! HTTP/1.x: the incremental reply parser, Set-Cookie scanning and `--wsesspage`
//! page scanning (requests are rendered by `call`).

pub mod cookie;
pub mod html;
pub mod lines;
pub mod response;
pub mod utf8;
