//! A connected UDP socket for QUIC with the kernel's batching: segmentation offload
//! on send (GSO: one `sendmsg` carries several datagrams), receive offload (GRO:
//! one buffer holds several datagrams of one size) and `recvmmsg` (several buffers a
//! call), ECN bits both ways, all from the quinn-udp crate (well kept, and the I/O
//! layer quinn itself uses) where the kernel offers them; one datagram a call where
//! it does not.
//!
//! `Received` and `Outgoing` are what `quic::Quic` exchanges with its socket; `UdpSock`
//! is the engine's socket (`stream::Stream::Udp`).

use std::io::{self, IoSliceMut};
use std::net::SocketAddr;

use quinn_udp::{EcnCodepoint, RecvMeta, Transmit, UdpSocketState};

/// Buffers filled by one receive call (`recvmmsg`'s batch).
pub(crate) const RECV_BATCH: usize = 8;

/// Bytes of one receive buffer: room for the largest GRO batch the kernel builds (64
/// segments) of our largest UDP payload (`quic::MAX_UDP_PAYLOAD`, 1472 bytes).
pub(crate) const RECV_SLOT: usize = 64 * 1472;

/// The most datagrams one send carries (quinn's own limit for GSO batches).
pub(crate) const MAX_SEGMENTS: usize = 10;

/// One filled receive buffer: datagrams of `stride` bytes (the last may be
/// shorter), with their ECN bits (0: not ECN-capable).
#[derive(Debug, Clone, Copy)]
pub struct Received<'a> {
    /// The datagrams, back to back.
    pub data: &'a [u8],
    /// The size of each datagram but the last.
    pub stride: usize,
    /// The IP header's ECN bits.
    pub ecn: u8,
}

/// One send: datagrams of `segment` bytes (the last may be shorter), with the ECN
/// bits to mark them with (0: none).
#[derive(Debug, Clone, Copy)]
pub struct Outgoing<'a> {
    /// The datagrams, back to back.
    pub data: &'a [u8],
    /// The size of each datagram but the last.
    pub(crate) segment: usize,
    /// The ECN bits to set.
    pub(crate) ecn: u8,
}

/// A connected, non-blocking UDP socket and its offload state.
#[derive(Debug)]
pub(crate) struct UdpSock {
    socket: mio::net::UdpSocket,
    state: UdpSocketState,
    peer: SocketAddr,
}

impl UdpSock {
    /// Wraps a connected socket: turns on GRO, ECN and packet-info reception and
    /// finds out whether GSO works (quinn-udp probes it).
    pub(crate) fn new(socket: std::net::UdpSocket) -> io::Result<UdpSock> {
        let peer = socket.peer_addr()?;
        let state = UdpSocketState::new((&socket).into())?;
        Ok(UdpSock {
            socket: mio::net::UdpSocket::from_std(socket),
            state,
            peer,
        })
    }

    /// The mio source, for registration.
    pub(crate) fn source(&mut self) -> &mut mio::net::UdpSocket {
        &mut self.socket
    }

    /// The socket itself.
    pub(crate) fn socket(&self) -> &mio::net::UdpSocket {
        &self.socket
    }

    /// How many datagrams one `send` may carry.
    pub(crate) fn max_segments(&self) -> usize {
        self.state.max_gso_segments().clamp(1, MAX_SEGMENTS)
    }

    /// Sends `out` in one `sendmsg` (GSO when it holds several datagrams). Every
    /// error is returned (`WouldBlock` when the socket buffer is full; an ICMP error
    /// as `ECONNREFUSED`).
    pub(crate) fn send(&self, out: Outgoing<'_>) -> io::Result<()> {
        let t = Transmit {
            destination: self.peer,
            ecn: EcnCodepoint::from_bits(out.ecn),
            contents: out.data,
            segment_size: (out.data.len() > out.segment).then_some(out.segment),
            src_ip: None,
        };
        self.state.try_send((&self.socket).into(), &t)
    }

    /// Receives what the socket holds, up to `RECV_BATCH` buffers of `buf` (which
    /// should be `RECV_BATCH * RECV_SLOT` bytes; a smaller one is cut in fewer or
    /// smaller slots), calling `each` per filled buffer. Ok(true) when the socket
    /// was emptied (fewer buffers filled than offered); `WouldBlock` when it held
    /// nothing.
    pub(crate) fn recv(
        &self,
        buf: &mut [u8],
        each: &mut dyn FnMut(Received<'_>),
    ) -> io::Result<bool> {
        let slot = RECV_SLOT.min(buf.len()).max(1);
        let offered = buf.len().div_ceil(slot).clamp(1, RECV_BATCH);
        let mut chunks = buf.chunks_mut(slot);
        let mut slices: [IoSliceMut<'_>; RECV_BATCH] =
            std::array::from_fn(|_| IoSliceMut::new(chunks.next().unwrap_or(&mut [])));
        let mut meta = [RecvMeta::default(); RECV_BATCH];
        let n = self.state.recv(
            (&self.socket).into(),
            &mut slices[..offered],
            &mut meta[..offered],
        )?;
        for (s, m) in slices.iter().zip(meta.iter()).take(n) {
            each(Received {
                data: &s[..m.len],
                stride: m.stride.max(1),
                ecn: m.ecn.map_or(0, |e| e as u8),
            });
        }
        Ok(n < offered)
    }
}
