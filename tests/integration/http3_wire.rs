//! `wire::quic` and `wire::http3` driven by hand over a mio UDP socket against the
//! in-process HTTP/3 server (quinn + h3): the handshake, SETTINGS both ways, request
//! streams answered in any order, resets and GOAWAY, with every event accounted for.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Events as MioEvents, Interest, Poll, Token};
use rshperf::wire::http2::conn::{Events, Reply};
use rshperf::wire::http3::conn::{put_request, H3};
use rshperf::wire::http3::frame;
use rshperf::wire::quic::{client_config, transport, Quic, MAX_DATAGRAM};
use rshperf::wire::udp::Received;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

use crate::support::h3_server::{H3Server, Opts};
use crate::support::tls_server::Pki;

/// What the client saw.
#[derive(Debug, Default)]
struct Seen {
    written: u64,
    statuses: Vec<u16>,
    done: Vec<(u32, Reply)>,
    resets: Vec<(u32, u32)>,
    refused: Vec<u32>,
}

impl Events<u32> for Seen {
    fn written(&mut self, _tag: &mut u32, _bytes: u64) {
        self.written += 1;
    }
    fn status(&mut self, _tag: &mut u32, status: u16) {
        self.statuses.push(status);
    }
    fn done(&mut self, tag: u32, reply: &Reply) {
        self.done.push((tag, *reply));
    }
    fn reset(&mut self, tag: u32, code: u32) {
        self.resets.push((tag, code));
    }
    fn refused(&mut self, tag: u32) {
        self.refused.push(tag);
    }
}

fn tls(pki: &Pki) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(pki.path("ca.pem")).expect("ca"))
        .expect("root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut c = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    c.alpn_protocols = vec![b"h3".to_vec()];
    Arc::new(c)
}

/// Runs `calls` GET requests, `depth` in flight, on one connection; returns what the
/// client saw and the connection's H3 counters.
fn run(server: &H3Server, pki: &Pki, calls: u32, depth: usize) -> (Seen, u64, bool) {
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    let remote = format!("127.0.0.1:{}", server.port())
        .parse()
        .expect("addr");
    sock.connect(remote).expect("connect");
    sock.set_nonblocking(true).expect("nonblocking");
    let mut sock = mio::net::UdpSocket::from_std(sock);
    let mut poll = Poll::new().expect("poll");
    poll.registry()
        .register(&mut sock, Token(0), Interest::READABLE)
        .expect("register");
    let t = transport(Some(Duration::from_secs(10)));
    let cfg = client_config(tls(pki), &t).expect("quic config");
    let mut q = Quic::connect(Instant::now(), cfg, remote, "localhost").expect("connect");
    let mut h3: H3<u32> = H3::new();
    let mut seen = Seen::default();
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut next = 0u32;
    let mut section = Vec::new();
    let mut connected = false;
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut events = MioEvents::with_capacity(8);
    loop {
        let now = Instant::now();
        assert!(now < deadline, "stuck: {seen:?}");
        while let Some(e) = q.poll() {
            match e {
                quinn_proto::Event::Connected => {
                    connected = true;
                    h3.start(q.conn()).expect("start");
                }
                quinn_proto::Event::Stream(se) => {
                    h3.on_stream_event(q.conn(), se, &mut seen).expect("h3");
                }
                quinn_proto::Event::ConnectionLost { reason } => {
                    panic!(
                        "lost: {reason} sent {} received {}",
                        q.datagrams_sent, q.datagrams_received
                    )
                }
                _ => {}
            }
        }
        h3.refuse_beyond_goaway(q.conn(), &mut seen);
        while next < calls && h3.in_flight() < depth && h3.can_open() {
            section.clear();
            put_request(
                &mut section,
                b"GET",
                Some(b"localhost"),
                b"/x",
                &[(b"user-agent", b"t")],
            );
            if h3
                .open(q.conn(), next, frame::request(&section, b""), &mut seen)
                .is_err()
            {
                break;
            }
            next += 1;
        }
        let finished = seen.done.len() + seen.resets.len() + seen.refused.len();
        if finished == calls as usize || (h3.going_away() && h3.in_flight() == 0) {
            break;
        }
        q.flush(now, 1, |out| sock.send(out.data).map(|_| ()))
            .expect("send");
        let wait = q
            .timeout()
            .map(|t| t.saturating_duration_since(Instant::now()));
        poll.poll(&mut events, wait.or(Some(Duration::from_secs(1))))
            .expect("poll");
        let now = Instant::now();
        if q.timeout().is_some_and(|t| t <= now) {
            q.on_timeout(now);
        }
        q.receive(
            now,
            |b, each| {
                let n = sock.recv(b)?;
                each(Received {
                    data: &b[..n],
                    stride: n.max(1),
                    ecn: 0,
                });
                Ok(false)
            },
            &mut buf,
        )
        .expect("recv");
    }
    (seen, h3.counts.streams, connected)
}

#[test]
fn requests_as_streams_against_h3_server() {
    let pki = Pki::new();
    let server = H3Server::start(
        pki.server_config(false),
        Opts {
            body: 1024,
            ..Opts::default()
        },
    );
    let (seen, streams, connected) = run(&server, &pki, 200, 10);
    assert!(connected);
    assert_eq!(streams, 200);
    assert_eq!(seen.written, 200);
    assert_eq!(seen.done.len(), 200, "{seen:?}");
    assert!(seen.resets.is_empty() && seen.refused.is_empty());
    assert_eq!(seen.statuses, vec![200; 200]);
    let mut tags: Vec<u32> = seen.done.iter().map(|d| d.0).collect();
    tags.sort_unstable();
    assert_eq!(tags, (0..200).collect::<Vec<_>>());
    for (_, r) in &seen.done {
        assert_eq!(r.status, 200);
        assert_eq!(r.content_bytes, 1024);
        assert_eq!(r.footer_bytes, 0);
        assert!(r.header_bytes >= 10, "{r:?}");
    }
    assert_eq!(server.requests(), 200);
    assert_eq!(server.connections(), 1);
}

#[test]
fn resets_fail_their_call_only() {
    let pki = Pki::new();
    let server = H3Server::start(
        pki.server_config(false),
        Opts {
            body: 10,
            reset_every: Some(4),
            ..Opts::default()
        },
    );
    let (seen, _, _) = run(&server, &pki, 40, 5);
    assert_eq!(seen.resets.len(), 10, "{seen:?}");
    assert_eq!(seen.done.len(), 30);
    assert!(seen.resets.iter().all(|&(_, c)| c == 0x102));
}
