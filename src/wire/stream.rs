//! A connection's socket: TCP, a unix domain socket (`--unix-socket`), a connected
//! UDP socket (`--http-version 3`), or either stream socket on the engine's io_uring
//! (`--io uring`: `wire::uring`).
//!
//! Owns the one enum the connection machine reads and writes through, so that
//! everything above it (HTTP/1.x, HTTP/2, TLS, the watchdogs) is the same for both
//! transports. Implements `Read`, `Write` (with `write_vectored`, a real `writev`)
//! and mio's `Source`; the pending-error and "connected yet?" checks the engine needs
//! after a non-blocking connect. Created by `net::connect_prepared` /
//! `net::start_connect_unix` (and `uring::Ring::connect` / `adopt`); held by
//! `conn::Conn`.

use std::io::{self, IoSlice, Read, Write};

use mio::event::Source;
use mio::{Interest, Registry, Token};

use crate::wire::udp::{Outgoing, Received, UdpSock};
use crate::wire::uring::UringSock;

/// A connected (or connecting) client socket.
#[derive(Debug)]
pub(crate) enum Stream {
    /// TCP (`--server`/`--port`, `--servers`).
    Tcp(mio::net::TcpStream),
    /// A unix domain stream socket (`--unix-socket`).
    Unix(mio::net::UnixStream),
    /// A connected UDP socket (`--http-version 3`): a read is one datagram, a write
    /// sends one; `send_datagrams` and `recv_datagrams` batch them.
    Udp(Box<UdpSock>),
    /// A TCP or unix socket whose I/O goes through the engine's io_uring; never in
    /// an epoll set.
    Uring(UringSock),
}

impl Stream {
    /// `SO_ERROR`: a failed non-blocking connect reports itself here.
    pub(crate) fn take_error(&self) -> io::Result<Option<io::Error>> {
        match self {
            Stream::Tcp(s) => s.take_error(),
            Stream::Unix(s) => s.take_error(),
            Stream::Udp(s) => s.socket().take_error(),
            Stream::Uring(s) => s.take_error(),
        }
    }

    /// Ok when the connection is established (`ENOTCONN` while it is still
    /// connecting).
    pub(crate) fn check_connected(&self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.peer_addr().map(|_| ()),
            Stream::Unix(s) => s.peer_addr().map(|_| ()),
            Stream::Udp(s) => s.socket().peer_addr().map(|_| ()),
            Stream::Uring(s) => s.check_connected(),
        }
    }

    /// Sends datagrams (one `sendmsg`, GSO for several); `Unsupported` on a stream
    /// socket.
    pub(crate) fn send_datagrams(&mut self, out: Outgoing<'_>) -> io::Result<()> {
        match self {
            Stream::Udp(s) => s.send(out),
            _ => Err(io::ErrorKind::Unsupported.into()),
        }
    }

    /// Receives datagrams (`recvmmsg` with GRO, see `UdpSock::recv`); Ok(true) when
    /// the socket is known to be empty; `Unsupported` on a stream socket.
    pub(crate) fn recv_datagrams(
        &mut self,
        buf: &mut [u8],
        each: &mut dyn FnMut(Received<'_>),
    ) -> io::Result<bool> {
        match self {
            Stream::Udp(s) => s.recv(buf, each),
            _ => Err(io::ErrorKind::Unsupported.into()),
        }
    }

    /// How many datagrams one `send_datagrams` may carry.
    pub(crate) fn max_segments(&self) -> usize {
        match self {
            Stream::Udp(s) => s.max_segments(),
            _ => 1,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Udp(s) => s.socket().recv(buf),
            Stream::Uring(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Udp(s) => s.socket().send(buf),
            Stream::Uring(s) => s.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write_vectored(bufs),
            Stream::Unix(s) => s.write_vectored(bufs),
            // Datagrams are never gathered: the first non-empty slice is one.
            Stream::Udp(s) => s
                .socket()
                .send(bufs.iter().find(|b| !b.is_empty()).map_or(&[][..], |b| b)),
            Stream::Uring(s) => s.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
            Stream::Udp(_) | Stream::Uring(_) => Ok(()),
        }
    }
}

impl Source for Stream {
    fn register(&mut self, r: &Registry, token: Token, interests: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.register(r, token, interests),
            Stream::Unix(s) => s.register(r, token, interests),
            Stream::Udp(s) => s.source().register(r, token, interests),
            Stream::Uring(_) => Err(io::ErrorKind::Unsupported.into()),
        }
    }

    fn reregister(&mut self, r: &Registry, token: Token, interests: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.reregister(r, token, interests),
            Stream::Unix(s) => s.reregister(r, token, interests),
            Stream::Udp(s) => s.source().reregister(r, token, interests),
            Stream::Uring(_) => Err(io::ErrorKind::Unsupported.into()),
        }
    }

    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.deregister(r),
            Stream::Unix(s) => s.deregister(r),
            Stream::Udp(s) => s.source().deregister(r),
            Stream::Uring(_) => Err(io::ErrorKind::Unsupported.into()),
        }
    }
}
