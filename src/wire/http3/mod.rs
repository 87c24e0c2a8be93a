//! HTTP/3 (RFC 9114) and QPACK (RFC 9204), client side, sans I/O: frames, QPACK
//! without a dynamic table, and the connection over quinn-proto's QUIC streams.
pub mod conn;
pub mod frame;
pub mod qpack;
pub(crate) mod varint;
