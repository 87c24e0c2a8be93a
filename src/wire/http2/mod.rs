//! HTTP/2 (RFC 9113), client side, sans I/O.
pub mod conn;
pub(crate) mod encoder;
pub mod frame;
pub mod hpack;
pub mod huffman;
