//! HTTP/1.x: the incremental reply parser, Set-Cookie scanning and `--wsesspage`
//! page scanning (requests are rendered by `call`).

pub(crate) mod cookie;
pub mod html;
pub(crate) mod lines;
pub mod response;
pub(crate) mod utf8;
