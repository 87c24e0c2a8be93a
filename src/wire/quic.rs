//! The glue between quinn-proto's sans-I/O QUIC (`Endpoint`, `Connection`) and one
//! connected, non-blocking UDP socket: datagrams in, datagrams out, the connection's
//! timer, and the events HTTP/3 reads its streams from.
//!
//! One `Quic` is one client connection with an endpoint of its own (the socket is
//! connected to the server, so nothing needs routing between connections). It owns no
//! socket: `receive` reads datagrams through a `recv` function (batches of buffers,
//! each holding one or more datagrams of one size: `udp::Received`) and `flush`
//! writes them through a `send` function (`udp::Outgoing`: quinn-proto packs up to
//! `segments` datagrams for one GSO send), keeping the batch that found the socket
//! full for next time. Used by `engine::conn` for `--http-version 3` and by the tests, which
//! drive it with `wire::http3::conn::H3` against an in-process server.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use quinn_proto::crypto::rustls::QuicClientConfig;
use quinn_proto::{
    ClientConfig, Connection, ConnectionHandle, DatagramEvent, EcnCodepoint, Endpoint,
    EndpointConfig, Event, IdleTimeout, TransportConfig, VarInt,
};

use crate::wire::udp::{Outgoing, Received};

/// The ALPN protocol of HTTP/3.
pub(crate) const ALPN_H3: &[u8] = b"h3";

/// Largest UDP payload read or written.
pub const MAX_DATAGRAM: usize = 65_527;

/// The largest UDP payload we accept (transport parameter max_udp_payload_size): the
/// engine reads datagrams into a small stack buffer.
pub(crate) const MAX_UDP_PAYLOAD: u16 = 1472;

/// The size of `rx`: several replies' worth of datagrams.
const RX_BUFFER: usize = 16 * 1024;

/// The QUIC idle timeout our connections offer without `--quic-idle-timeout` (the
/// engine's own `--timeout` watchdogs decide before QUIC gives up on a call).
pub(crate) const DEFAULT_IDLE: Duration = Duration::from_secs(30);

/// The transport settings of our client connections: the server may open a few
/// unidirectional streams (control, QPACK) and no bidirectional ones; large receive
/// windows (replies are never buffered beyond what a read hands out); `idle` is the
/// QUIC idle timeout offered (None: none from our side; the smaller of the two
/// peers' applies).
pub fn transport(idle: Option<Duration>) -> Arc<TransportConfig> {
    let mut t = TransportConfig::default();
    t.max_concurrent_bidi_streams(VarInt::from_u32(0))
        .max_concurrent_uni_streams(VarInt::from_u32(16))
        .stream_receive_window(VarInt::from_u32(1 << 24))
        .receive_window(VarInt::from_u32(1 << 30))
        .max_idle_timeout(idle.and_then(|d| IdleTimeout::try_from(d).ok()))
        .enable_segmentation_offload(true);
    Arc::new(t)
}

/// A QUIC client configuration from a rustls one (which must offer ALPN `h3` and TLS
/// 1.3 with TLS_AES_128_GCM_SHA256); None when rustls cannot do QUIC with it.
pub fn client_config(
    tls: Arc<rustls::ClientConfig>,
    transport: &Arc<TransportConfig>,
) -> Option<ClientConfig> {
    let crypto = QuicClientConfig::try_from(tls).ok()?;
    let mut c = ClientConfig::new(Arc::new(crypto));
    c.transport_config(Arc::clone(transport));
    Some(c)
}

/// One client connection and its endpoint (see the module header).
#[derive(Debug)]
pub struct Quic {
    endpoint: Endpoint,
    handle: ConnectionHandle,
    conn: Connection,
    remote: SocketAddr,
    /// The datagram being sent: `out[..out_len]` (0: none pending).
    out: Vec<u8>,
    out_len: usize,
    /// The pending send's datagram size and ECN bits.
    out_segment: usize,
    out_ecn: u8,
    /// Scratch for the endpoint's stateless responses (never used by a client).
    scratch: Vec<u8>,
    /// Received datagrams are copied here and handed to QUIC as parts of it, while
    /// it has room; once QUIC has dropped every part (their stream data was read),
    /// `reserve` takes the whole buffer back instead of allocating (else it
    /// allocates one of at least `RX_BUFFER`).
    rx: BytesMut,
    /// Datagrams sent and received.
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    /// Send calls (one carries up to `segments` datagrams).
    pub(crate) sends: u64,
}

impl Quic {
    /// Starts a connection to `remote` (its Initial packet is ready to `flush`).
    /// `server_name` is SNI and the verification name.
    pub fn connect(
        now: Instant,
        config: ClientConfig,
        remote: SocketAddr,
        server_name: &str,
    ) -> Result<Quic, quinn_proto::ConnectError> {
        let mut ec = EndpointConfig::default();
        // Valid (1200..=65527): cannot fail.
        let _ = ec.max_udp_payload_size(MAX_UDP_PAYLOAD);
        let mut endpoint = Endpoint::new(Arc::new(ec), None, true, None);
        let (handle, conn) = endpoint.connect(now, config, remote, server_name)?;
        Ok(Quic {
            endpoint,
            handle,
            conn,
            remote,
            out: Vec::with_capacity(MAX_DATAGRAM),
            out_len: 0,
            out_segment: 0,
            out_ecn: 0,
            scratch: Vec::new(),
            rx: BytesMut::with_capacity(RX_BUFFER),
            datagrams_sent: 0,
            datagrams_received: 0,
            sends: 0,
        })
    }

    /// The connection, for streams and state.
    pub fn conn(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// The connection, read only.
    pub(crate) fn conn_ref(&self) -> &Connection {
        &self.conn
    }

    /// The next application event of the connection.
    pub fn poll(&mut self) -> Option<Event> {
        self.conn.poll()
    }

    /// Feeds one received buffer: datagrams of `stride` bytes (GRO), copied once
    /// (into `rx`).
    pub(crate) fn on_received(&mut self, now: Instant, r: Received<'_>) {
        let ecn = EcnCodepoint::from_bits(r.ecn);
        self.rx.reserve(r.data.len());
        self.rx.extend_from_slice(r.data);
        let mut data = self.rx.split();
        while !data.is_empty() {
            // The last (or only) datagram takes the buffer itself: splitting it off
            // would share the buffer (an allocation) for nothing.
            let one = if data.len() <= r.stride {
                std::mem::take(&mut data)
            } else {
                data.split_to(r.stride)
            };
            self.datagrams_received += 1;
            let event = self
                .endpoint
                .handle(now, self.remote, None, ecn, one, &mut self.scratch);
            if let Some(DatagramEvent::ConnectionEvent(h, e)) = event {
                if h == self.handle {
                    self.conn.handle_event(e);
                }
            }
        }
        self.endpoint_events();
    }

    /// Passes the connection's endpoint events (connection IDs retired, drained) and
    /// the endpoint's answers back.
    fn endpoint_events(&mut self) {
        while let Some(e) = self.conn.poll_endpoint_events() {
            if let Some(back) = self.endpoint.handle_event(self.handle, e) {
                self.conn.handle_event(back);
            }
        }
    }

    /// When `on_timeout` must next be called.
    pub fn timeout(&mut self) -> Option<Instant> {
        self.conn.poll_timeout()
    }

    /// The connection's timer fired (idle timeout, loss detection, ACK delay, …).
    pub fn on_timeout(&mut self, now: Instant) {
        self.conn.handle_timeout(now);
        self.endpoint_events();
    }

    /// Reads datagrams with `recv` until the socket is empty, feeding each. `recv`
    /// fills `buf` and calls its callback per filled buffer (several datagrams of
    /// one size with GRO, several buffers with `recvmmsg`), and returns Ok(true)
    /// when it knows the socket is empty, Ok(false) when it may hold more, and
    /// `WouldBlock` when it held nothing. Returns how many receive calls read
    /// something; an error other than `WouldBlock` is returned (a connected UDP
    /// socket reports ICMP errors, `ECONNREFUSED`, this way).
    pub fn receive(
        &mut self,
        now: Instant,
        mut recv: impl FnMut(&mut [u8], &mut dyn FnMut(Received<'_>)) -> io::Result<bool>,
        buf: &mut [u8],
    ) -> io::Result<usize> {
        let mut n = 0;
        loop {
            match recv(buf, &mut |r| self.on_received(now, r)) {
                Ok(empty) => {
                    n += 1;
                    if empty {
                        return Ok(n);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Writes everything the connection has to send with `send`, up to `segments`
    /// datagrams a call (GSO); Ok(false) when the socket filled up first (the
    /// datagrams are kept: call again when writable).
    pub fn flush(
        &mut self,
        now: Instant,
        segments: usize,
        mut send: impl FnMut(Outgoing<'_>) -> io::Result<()>,
    ) -> io::Result<bool> {
        loop {
            if self.out_len == 0 {
                self.out.clear();
                match self.conn.poll_transmit(now, segments.max(1), &mut self.out) {
                    Some(t) => {
                        self.out_len = t.size;
                        self.out_segment = t.segment_size.unwrap_or(t.size);
                        self.out_ecn = t.ecn.map_or(0, |e| e as u8);
                    }
                    None => return Ok(true),
                }
            }
            let out = Outgoing {
                data: &self.out[..self.out_len],
                segment: self.out_segment,
                ecn: self.out_ecn,
            };
            match send(out) {
                Ok(()) => {
                    self.datagrams_sent += self.out_len.div_ceil(self.out_segment.max(1)) as u64;
                    self.sends += 1;
                    self.out_len = 0;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // A lost datagram is QUIC's business; the error (ICMP unreachable
                    // on a connected socket) is the caller's.
                    self.out_len = 0;
                    return Err(e);
                }
            }
        }
    }
}
