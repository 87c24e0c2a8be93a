//! The socket seam of a connection: what `Conn` reads and writes through.
//!
//! In the engine that is the connection's socket (`wire::stream::Stream`); in the unit
//! tests of `conn` it is `Mem`, bytes in memory played out as reads (with the
//! `WouldBlock`s, end of file and errors a non-blocking socket gives) and writes
//! collected with the room a socket buffer would have. `Conn` is generic over the
//! transport (`Conn<S = Stream>`): the engine's connections are monomorphised for
//! `Stream`, so the seam costs no dynamic dispatch and no allocation. Owns no
//! protocol; the TLS layer takes any `Read + Write` already.

use std::io::{self, Read, Write};

use crate::wire::stream::Stream;
use crate::wire::udp::{Outgoing, Received};

/// A connection's byte stream, and the two checks a non-blocking connect needs.
pub(crate) trait Transport: Read + Write {
    /// The pending socket error (`SO_ERROR`): a failed non-blocking connect reports
    /// itself here.
    fn take_error(&self) -> io::Result<Option<io::Error>>;
    /// Ok once the connection is established (`ENOTCONN` while it is connecting).
    fn check_connected(&self) -> io::Result<()>;

    /// Sends datagrams of `out.segment` bytes (HTTP/3). By default each is written
    /// whole.
    fn send_datagrams(&mut self, out: Outgoing<'_>) -> io::Result<()> {
        for d in out.data.chunks(out.segment.max(1)) {
            self.write_all(d)?;
        }
        Ok(())
    }

    /// Receives datagrams into `buf`, `each` per filled buffer (HTTP/3); Ok(true)
    /// when the transport is known to be empty. By default one `read`, one datagram.
    fn recv_datagrams(
        &mut self,
        buf: &mut [u8],
        each: &mut dyn FnMut(Received<'_>),
    ) -> io::Result<bool> {
        let n = self.read(buf)?;
        each(Received {
            data: &buf[..n],
            stride: n.max(1),
            ecn: 0,
        });
        Ok(false)
    }

    /// How many datagrams one `send_datagrams` may carry. By default one.
    fn max_segments(&self) -> usize {
        1
    }
}

impl Transport for Stream {
    #[inline]
    fn take_error(&self) -> io::Result<Option<io::Error>> {
        Stream::take_error(self)
    }

    #[inline]
    fn check_connected(&self) -> io::Result<()> {
        Stream::check_connected(self)
    }

    #[inline]
    fn send_datagrams(&mut self, out: Outgoing<'_>) -> io::Result<()> {
        Stream::send_datagrams(self, out)
    }

    #[inline]
    fn recv_datagrams(
        &mut self,
        buf: &mut [u8],
        each: &mut dyn FnMut(Received<'_>),
    ) -> io::Result<bool> {
        Stream::recv_datagrams(self, buf, each)
    }

    #[inline]
    fn max_segments(&self) -> usize {
        Stream::max_segments(self)
    }
}

/// What the next read from a `Mem` gives.
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    /// These bytes (as many reads as the reader's buffer needs).
    Bytes(Vec<u8>),
    /// `WouldBlock`: nothing more until the next readiness event.
    Dry,
    /// End of file (the peer closed): every later read gives 0 too.
    Eof,
    /// The read fails with this errno.
    Errno(i32),
}

/// A transport in memory for unit tests: reads play out `input`, writes go to
/// `written` while `room` lasts.
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct Mem {
    /// What the next reads give, in order (empty: `WouldBlock`).
    pub(crate) input: std::collections::VecDeque<Input>,
    /// Everything written so far.
    pub(crate) written: Vec<u8>,
    /// Write calls that wrote something (one `writev` is one call).
    pub(crate) writes: usize,
    /// Bytes the socket buffer still takes (None: unlimited); 0 gives `WouldBlock`.
    pub(crate) room: Option<usize>,
    /// The pending socket error (an errno), taken by `take_error`.
    pub(crate) so_error: std::cell::Cell<Option<i32>>,
    /// The connect has not completed yet (`check_connected` gives `ENOTCONN`).
    pub(crate) connecting: bool,
    /// End of file was read: later reads give 0.
    eof: bool,
    /// Datagrams sent (`send_datagrams`), one entry each.
    pub(crate) datagrams: Vec<Vec<u8>>,
}

#[cfg(test)]
impl Mem {
    /// A connected transport with unlimited room.
    pub(crate) fn new() -> Mem {
        Mem::default()
    }

    /// Queues bytes for reading.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.input.push_back(Input::Bytes(bytes.to_vec()));
    }

    /// Takes what was written so far.
    pub(crate) fn take_written(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.written)
    }
}

#[cfg(test)]
impl Read for Mem {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.eof {
            return Ok(0);
        }
        match self.input.pop_front() {
            None | Some(Input::Dry) => Err(io::ErrorKind::WouldBlock.into()),
            Some(Input::Eof) => {
                self.eof = true;
                Ok(0)
            }
            Some(Input::Errno(e)) => Err(io::Error::from_raw_os_error(e)),
            Some(Input::Bytes(mut b)) => {
                let n = b.len().min(buf.len());
                buf[..n].copy_from_slice(&b[..n]);
                if n < b.len() {
                    self.input.push_front(Input::Bytes(b.split_off(n)));
                }
                Ok(n)
            }
        }
    }
}

#[cfg(test)]
impl Write for Mem {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[io::IoSlice::new(buf)])
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        let n = self.room.map_or(total, |r| r.min(total));
        if n == 0 && total > 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let mut left = n;
        for b in bufs {
            let k = left.min(b.len());
            self.written.extend_from_slice(&b[..k]);
            left -= k;
        }
        if let Some(r) = self.room.as_mut() {
            *r -= n;
        }
        self.writes += usize::from(n > 0);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
impl Transport for Mem {
    fn take_error(&self) -> io::Result<Option<io::Error>> {
        Ok(self.so_error.take().map(io::Error::from_raw_os_error))
    }

    fn check_connected(&self) -> io::Result<()> {
        if self.connecting {
            Err(io::Error::from_raw_os_error(libc::ENOTCONN))
        } else {
            Ok(())
        }
    }

    fn send_datagrams(&mut self, out: Outgoing<'_>) -> io::Result<()> {
        for d in out.data.chunks(out.segment.max(1)) {
            self.datagrams.push(d.to_vec());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_play_out_the_script_and_writes_stop_at_the_room() {
        let mut m = Mem::new();
        m.feed(b"hello");
        m.input.push_back(Input::Dry);
        m.input.push_back(Input::Eof);
        let mut buf = [0u8; 3];
        assert_eq!(m.read(&mut buf).expect("bytes"), 3);
        assert_eq!(&buf, b"hel");
        assert_eq!(m.read(&mut buf).expect("bytes"), 2);
        let dry = m.read(&mut buf).expect_err("dry");
        assert_eq!(dry.kind(), io::ErrorKind::WouldBlock);
        assert_eq!(m.read(&mut buf).expect("eof"), 0);
        assert_eq!(m.read(&mut buf).expect("eof again"), 0);
        m.room = Some(4);
        let n = m
            .write_vectored(&[io::IoSlice::new(b"ab"), io::IoSlice::new(b"cdef")])
            .expect("room for 4");
        assert_eq!((n, m.writes), (4, 1));
        let full = m.write(b"g").expect_err("full");
        assert_eq!(full.kind(), io::ErrorKind::WouldBlock);
        assert_eq!(m.take_written(), b"abcd");
        m.so_error.set(Some(libc::ECONNREFUSED));
        let e = m.take_error().expect("ok").expect("an error");
        assert_eq!(e.raw_os_error(), Some(libc::ECONNREFUSED));
        assert!(m.take_error().expect("ok").is_none());
    }
}
