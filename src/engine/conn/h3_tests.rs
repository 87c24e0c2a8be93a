//! Unit tests of the HTTP/3 side of the connection machine (`h3.rs`) on simulated
//! time: a `Conn<Mem>` whose datagrams go to and come from a quinn-proto server
//! endpoint in memory, every `now` chosen by the test. The handshake's end and its
//! time, QUIC's timer (`wake`) against the `--timeout` watchdog while the server is
//! silent, the idle timeout as `client-timo`, the reply watchdog of an opened
//! stream, and a request resent after a rejected 0-RTT counted once.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use mio::Token;
use quinn_proto::{
    Connection, ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig, ServerConfig,
};

use super::transport::Mem;
use super::*;
use crate::model::call::{Body, CallRef, RequestParts, Requests};
use crate::wire::quic::{client_config, transport};

use super::tests::{ms, rig_ctx, REPLY_TIMEOUT, TIMEOUT};

/// The client's QUIC idle timeout in these tests.
const IDLE: Duration = Duration::from_secs(5);

/// A server endpoint in memory with its one connection.
struct Server {
    endpoint: Endpoint,
    conn: Option<(ConnectionHandle, Connection)>,
    client: SocketAddr,
}

impl Server {
    fn new(tls: rustls::ServerConfig) -> Server {
        let crypto =
            quinn_proto::crypto::rustls::QuicServerConfig::try_from(Arc::new(tls)).expect("quic");
        let cfg = ServerConfig::with_crypto(Arc::new(crypto));
        Server {
            endpoint: Endpoint::new(
                Arc::new(EndpointConfig::default()),
                Some(Arc::new(cfg)),
                true,
                None,
            ),
            conn: None,
            client: "127.0.0.1:40000".parse().expect("addr"),
        }
    }

    /// Takes the client's datagrams at `now`; returns the server's answers.
    fn exchange(&mut self, now: Instant, datagrams: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let mut scratch = Vec::new();
        for d in datagrams {
            match self.endpoint.handle(
                now,
                self.client,
                None,
                None,
                BytesMut::from(&d[..]),
                &mut scratch,
            ) {
                Some(DatagramEvent::NewConnection(incoming)) => {
                    let (h, c) = self
                        .endpoint
                        .accept(incoming, now, &mut scratch, None)
                        .expect("accept");
                    self.conn = Some((h, c));
                }
                Some(DatagramEvent::ConnectionEvent(h, e)) => {
                    if let Some((ch, c)) = self.conn.as_mut() {
                        if *ch == h {
                            c.handle_event(e);
                        }
                    }
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        if let Some((h, c)) = self.conn.as_mut() {
            while let Some(e) = c.poll_endpoint_events() {
                if let Some(back) = self.endpoint.handle_event(*h, e) {
                    c.handle_event(back);
                }
            }
            while c.poll().is_some() {}
            let mut buf = Vec::new();
            while let Some(t) = c.poll_transmit(now, 1, &mut buf) {
                out.push(buf[..t.size].to_vec());
                buf.clear();
            }
        }
        out
    }
}

/// A client connection on `Mem`, the server, and the engine-side state.
struct Rig {
    conn: Conn<Mem>,
    server: Server,
    stats: Stats,
    completions: Vec<Completion>,
    requests: Requests,
    t0: Instant,
}

/// TLS for a server named localhost and a client trusting it (ALPN h3).
fn tls_pair() -> (rustls::ServerConfig, rustls::ClientConfig) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("cert");
    let cert = ck.cert.der().clone();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
        ck.signing_key.serialize_der(),
    ));
    let mut server = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("tls13")
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .expect("server tls");
    server.alpn_protocols = vec![b"h3".to_vec()];
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).expect("root");
    let mut client = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("tls13")
        .with_root_certificates(roots)
        .with_no_client_auth();
    client.alpn_protocols = vec![b"h3".to_vec()];
    (server, client)
}

impl Rig {
    /// A connection whose socket is connected at `t0`, QUIC not started yet.
    fn new() -> Rig {
        let t0 = Instant::now();
        let (server_tls, client_tls) = tls_pair();
        let id = ConnId::from_token(Token(0));
        let mut pool = BufPool::new();
        let mut conn = Conn::new(id, t0);
        conn.reset(id, t0, Owner::Orphan, Some(TIMEOUT), false, &mut pool);
        conn.reset_h3(true, &mut pool);
        let cfg = client_config(Arc::new(client_tls), &transport(Some(IDLE))).expect("config");
        let remote: SocketAddr = "127.0.0.1:443".parse().expect("addr");
        conn.set_quic(
            cfg,
            crate::wire::tls::Resumed::never(),
            remote,
            "localhost".into(),
        );
        conn.stream = Some(Mem::new());
        Rig {
            conn,
            server: Server::new(server_tls),
            stats: Stats::new(),
            completions: Vec::new(),
            requests: Requests::from_parts(RequestParts {
                method: "GET".into(),
                uri: "/".into(),
                head: b" HTTP/1.1\r\n".to_vec(),
                tail: Vec::new(),
                body: Body::from(&[][..]),
                send_host: true,
            }),
            t0,
        }
    }

    fn at(&self, d: Duration) -> Instant {
        self.t0 + d
    }

    fn with<R>(&mut self, f: impl FnOnce(&mut Conn<Mem>, &mut Ctx<'_>) -> R) -> R {
        let mut ctx = rig_ctx(&mut self.stats, &mut self.completions);
        f(&mut self.conn, &mut ctx)
    }

    /// The client's datagrams written so far.
    fn sent(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.conn.stream.as_mut().expect("mem").datagrams)
    }

    /// The client's datagrams reach the server at `now`; its answers are queued for
    /// the client to read.
    fn deliver(&mut self, now: Instant) -> usize {
        let out = self.sent();
        let back = self.server.exchange(now, out);
        let n = back.len();
        let mem = self.conn.stream.as_mut().expect("mem");
        for d in back {
            mem.feed(&d);
        }
        n
    }

    /// Runs the handshake: the Initial at `t0`, the server's answer read at `t0` +
    /// `rtt`. Returns whether the client counts as connected then.
    fn handshake(&mut self, rtt: Duration) -> bool {
        let t0 = self.t0;
        let first = self.with(|c, ctx| c.on_connect_clean(t0, ctx));
        assert_eq!(first, Ok(false), "QUIC needs a round trip");
        let half = self.at(rtt / 2);
        assert!(self.deliver(half) > 0, "the server answers the Initial");
        let now = self.at(rtt);
        self.with(|c, ctx| c.on_handshake_ready(now, ctx))
            .expect("handshake")
    }

    /// Exchanges datagrams both ways at `now` until neither side has more.
    fn settle(&mut self, now: Instant) {
        for _ in 0..10 {
            let _ = self.with(|c, ctx| c.writable_h3(now, ctx));
            if self.deliver(now) == 0 {
                return;
            }
            let step = self.with(|c, ctx| c.readable_h3(now, ctx));
            assert_eq!(step, Step::Continue);
        }
    }
}

#[test]
fn the_handshake_ends_after_one_round_trip_and_its_time_is_counted() {
    let mut r = Rig::new();
    // Before any answer: QUIC's retransmission timer is due before the watchdog.
    let t0 = r.t0;
    assert_eq!(r.with(|c, ctx| c.on_connect_clean(t0, ctx)), Ok(false));
    let initial = r.sent();
    assert_eq!(initial.len(), 1, "one Initial datagram");
    assert!(initial[0].len() >= 1200, "padded to 1200 bytes");
    assert_eq!(
        r.conn.deadline(),
        Some(r.at(TIMEOUT)),
        "the --timeout watchdog"
    );
    let back = r.server.exchange(r.at(ms(15)), initial);
    for d in back {
        r.conn.stream.as_mut().expect("mem").feed(&d);
    }
    let now = r.at(ms(30));
    assert_eq!(r.with(|c, ctx| c.on_handshake_ready(now, ctx)), Ok(true));
    assert_eq!(r.conn.connected, now);
    assert_eq!(r.stats.http3.connections, 1);
    assert_eq!(r.stats.http3.handshakes, 1);
    assert_eq!(
        r.stats.http3.handshake_sum_us, 30_000,
        "exactly the simulated time"
    );
    assert_eq!(r.stats.http3.zero_rtt_sent, 0);
}

#[test]
fn a_silent_server_gets_retransmissions_until_the_watchdog() {
    let mut r = Rig::new();
    let t0 = r.t0;
    assert_eq!(r.with(|c, ctx| c.on_connect_clean(t0, ctx)), Ok(false));
    assert_eq!(r.sent().len(), 1);
    // QUIC's probe timer (initial RTT 333 ms: PTO 999 ms) comes first.
    let wake = r.conn.wake().expect("a QUIC timer");
    assert_eq!(wake, r.at(ms(999)));
    assert_eq!(r.conn.timer_due(), Some(wake));
    // Early: nothing happens.
    assert_eq!(
        r.with(|c, ctx| c.on_timer_h3(r_at(t0, 500), ctx)),
        Step::Continue
    );
    assert!(r.sent().is_empty());
    // Due: the Initial goes again; the watchdog deadline has not moved.
    assert_eq!(r.with(|c, ctx| c.on_timer_h3(wake, ctx)), Step::Continue);
    assert!(!r.sent().is_empty(), "a probe after the PTO");
    assert_eq!(r.conn.deadline(), Some(r.at(TIMEOUT)));
    assert_eq!(
        r.conn.timer_due(),
        Some(r.at(TIMEOUT)),
        "the next PTO is later"
    );
    assert_eq!(r.stats.http3.handshakes, 0);
}

fn r_at(t0: Instant, n: u64) -> Instant {
    t0 + ms(n)
}

#[test]
fn an_idle_connection_ends_quietly_at_the_idle_timeout() {
    let mut r = Rig::new();
    assert!(r.handshake(ms(20)));
    let quiet = r.at(ms(40));
    r.settle(quiet);
    // Run QUIC's timers as the engine would, until one fails the connection.
    let mut now = quiet;
    let failed = loop {
        let due = r.conn.wake().expect("the idle timer at least");
        assert!(due >= now, "timers move forward");
        now = due;
        match r.with(|c, ctx| c.on_timer_h3(now, ctx)) {
            Step::Continue => {
                assert!(now < quiet + IDLE, "nothing but the idle timer so late");
                // Whatever a timer sent (acks, probes) gets no answer.
                r.sent();
            }
            step => break step,
        }
    };
    // No call in flight or queued: the connection ends as a TCP server's close of
    // an idle keep-alive connection does, not as an error.
    assert_eq!(failed, Step::PeerClosed);
    assert!(now >= quiet + IDLE - ms(40), "{:?}", now - quiet);
    assert!(now <= quiet + IDLE + ms(1000), "{:?}", now - quiet);
}

#[test]
fn an_opened_stream_arms_the_reply_watchdog() {
    let mut r = Rig::new();
    assert!(r.handshake(ms(20)));
    let now = r.at(ms(50));
    r.settle(now);
    let (len, head) = r.conn.stage_h3(&r.requests, CallRef::Fixed, "h", None);
    assert!(len > 0 && head == len, "a GET: a field section only");
    let call = Call {
        id: 0,
        what: CallRef::Fixed,
        len,
        head_len: head,
        head: false,
        send_start: now,
        written: None,
        due: now,
        retries: 0,
        stream: 0,
        sent: 0,
        begun: false,
    };
    r.conn.queue(call, now, Some(TIMEOUT));
    let open = r.at(ms(60));
    assert_eq!(r.with(|c, ctx| c.writable_h3(open, ctx)), Step::Continue);
    assert_eq!(r.conn.in_flight_h3(), 1);
    assert_eq!(r.stats.http3.streams, 1);
    assert_eq!(r.stats.requests, 1);
    assert!(!r.sent().is_empty(), "the request went out");
    assert_eq!(r.conn.deadline(), Some(open + REPLY_TIMEOUT));
}
