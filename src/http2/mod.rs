//! HTTP/2 (RFC 9113), client side, sans I/O.
pub mod frame;
pub mod hpack;
pub mod huffman;
pub mod conn;
