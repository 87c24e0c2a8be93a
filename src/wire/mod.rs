//! The wire layer: bytes and sockets. HTTP/1 reply parsing, events inside streamed
//! bodies (SSE, NDJSON, lines), HTTP/2 frames, HPACK and the connection state machine,
//! TLS configuration, sockets and syscalls, the timer wheel and C-style number
//! formatting. Sans I/O where it can be; imports nothing from the layers above (model,
//! engine, output, front).

pub(crate) mod cfmt;
pub mod events;
pub(crate) mod frozen;
pub mod http;
pub mod http2;
pub mod http3;
pub(crate) mod note;
// The only modules with `unsafe`: small syscall and libc wrappers, each with a SAFETY
// comment.
#[allow(unsafe_code)]
pub mod net;
#[allow(unsafe_code)]
pub(crate) mod nss;
pub mod quic;
pub(crate) mod stream;
pub(crate) mod table;
pub(crate) mod timer;
pub(crate) mod tls;
pub mod udp;
pub(crate) mod url;
// io_uring's submissions are unsafe (an operation's memory must outlive it): the
// ring, its buffer ring and sockets, each `unsafe` block with a SAFETY comment.
#[allow(unsafe_code)]
pub(crate) mod uring;
