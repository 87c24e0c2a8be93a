//! Tests of `tls`: option errors, and real handshakes against an in-process rustls
//! server on 127.0.0.1 (certificates made by rcgen at test time), driven by a small
//! mio loop over non-blocking client sockets exactly as the engine drives them. One
//! file because every live test shares the same server and client harness.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{CipherSuite, HandshakeKind, ProtocolVersion, ServerConfig, ServerConnection};

use super::*;

// ---------------------------------------------------------------- certificates

/// A test PKI: a CA, a leaf for "localhost" and a client certificate signed by it, a
/// self-signed "localhost" certificate, and all of them as PEM files in a private
/// directory (removed on drop).
struct Pki {
    dir: PathBuf,
    ca_der: CertificateDer<'static>,
    leaf: (CertificateDer<'static>, Vec<u8>),
    self_signed: (CertificateDer<'static>, Vec<u8>),
}

impl Pki {
    fn new() -> Pki {
        static SEQ: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "rshperf-tls-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let ca_key = KeyPair::generate().expect("key");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "rshperf test CA");
        let ca = ca_params.self_signed(&ca_key).expect("CA");
        let issuer = Issuer::from_params(&ca_params, &ca_key);
        let signed = |sans: Vec<String>| {
            let key = KeyPair::generate().expect("key");
            let cert = CertificateParams::new(sans)
                .expect("params")
                .signed_by(&key, &issuer)
                .expect("signed");
            (cert, key)
        };
        let (leaf, leaf_key) = signed(vec!["localhost".into()]);
        let (client, client_key) = signed(vec!["client.test".into()]);
        let ss = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("self");
        let pki = Pki {
            dir,
            ca_der: ca.der().clone(),
            leaf: (leaf.der().clone(), leaf_key.serialize_der()),
            self_signed: (ss.cert.der().clone(), ss.signing_key.serialize_der()),
        };
        pki.write("ca.pem", &ca.pem());
        pki.write("client.pem", &client.pem());
        pki.write("client.key", &client_key.serialize_pem());
        pki.write("both.pem", &(client.pem() + &client_key.serialize_pem()));
        pki.write(
            "other.key",
            &KeyPair::generate().expect("key").serialize_pem(),
        );
        pki.write("garbage.pem", "not a certificate\n");
        std::fs::create_dir_all(pki.dir.join("capath")).expect("capath");
        pki.write("capath/ca.pem", &ca.pem());
        pki.write("capath/README", "not PEM\n");
        pki
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.dir.join(name), text).expect("write PEM");
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }

    /// A server configuration presenting the CA-signed leaf (or the self-signed one).
    fn server(&self, self_signed: bool) -> ServerConfig {
        let (cert, key) = if self_signed {
            &self.self_signed
        } else {
            &self.leaf
        };
        self.server_with(cert, key, None)
    }

    fn server_with(
        &self,
        cert: &CertificateDer<'static>,
        key: &[u8],
        client_ca: Option<&CertificateDer<'static>>,
    ) -> ServerConfig {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .expect("versions");
        let builder = match client_ca {
            None => builder.with_no_client_auth(),
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                roots.add(ca.clone()).expect("root");
                let verifier = WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .expect("client verifier");
                builder.with_client_cert_verifier(verifier)
            }
        };
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.to_vec()));
        let mut cfg = builder
            .with_single_cert(vec![cert.clone()], key)
            .expect("server cert");
        cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
        cfg
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

// ---------------------------------------------------------------- server

/// What the server saw on one connection.
#[derive(Debug)]
struct Seen {
    result: Result<(), String>,
    kind: Option<HandshakeKind>,
    alpn: Option<Vec<u8>>,
    sni: Option<String>,
    version: Option<ProtocolVersion>,
    suite: Option<CipherSuite>,
    client_cert: bool,
    body_len: usize,
}

/// How the server ends its replies.
#[derive(Clone, Copy, PartialEq)]
enum Close {
    /// close_notify, then TCP close.
    Notify,
    /// TCP close only (close-delimited body, abrupt end).
    TcpOnly,
}

/// Serves `n` connections one at a time: reads a request head (and a Content-Length
/// body), replies `HTTP/1.1 200 OK` with a body of the size in the request path
/// (`/N`, default 5 bytes "hello"), then closes. Returns what it saw per connection.
fn serve(cfg: ServerConfig, n: usize, close: Close) -> (SocketAddr, JoinHandle<Vec<Seen>>) {
    serve_gated(cfg, n, close, None)
}

/// `serve`, whose server waits after each request head until `gate` says go (or 10 s
/// pass) before it reads the body: the client's writes then meet a full socket.
fn serve_gated(
    cfg: ServerConfig,
    n: usize,
    close: Close,
    gate: Option<std::sync::mpsc::Receiver<()>>,
) -> (SocketAddr, JoinHandle<Vec<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let cfg = Arc::new(cfg);
    let handle = std::thread::spawn(move || {
        (0..n)
            .map(|_| {
                let (mut sock, _) = listener.accept().expect("accept");
                sock.set_read_timeout(Some(Duration::from_secs(10)))
                    .expect("timeout");
                let mut conn = ServerConnection::new(Arc::clone(&cfg)).expect("server conn");
                let result = serve_one(&mut conn, &mut sock, close, gate.as_ref());
                let body_len = result.as_ref().map_or(0, |&n| n);
                Seen {
                    result: result.map(|_| ()).map_err(|e| e.to_string()),
                    kind: conn.handshake_kind(),
                    alpn: conn.alpn_protocol().map(<[u8]>::to_vec),
                    sni: conn.server_name().map(str::to_string),
                    version: conn.protocol_version(),
                    suite: conn.negotiated_cipher_suite().map(|s| s.suite()),
                    client_cert: conn.peer_certificates().is_some(),
                    body_len,
                }
            })
            .collect()
    });
    (addr, handle)
}

/// One exchange on the server side; returns the request body length.
fn serve_one(
    conn: &mut ServerConnection,
    sock: &mut std::net::TcpStream,
    close: Close,
    gate: Option<&std::sync::mpsc::Receiver<()>>,
) -> io::Result<usize> {
    let mut tls = rustls::Stream::new(conn, sock);
    let mut req = Vec::new();
    let mut buf = [0u8; 16384];
    let head_end = loop {
        let n = tls.read(&mut buf)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        req.extend_from_slice(&buf[..n]);
        if let Some(i) = req.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&req[..head_end]).into_owned();
    let content_length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .map_or(0, |v| v.trim().parse().expect("length"));
    let mut body = req.len() - head_end;
    if let Some(gate) = gate {
        let _ = gate.recv_timeout(Duration::from_secs(10));
    }
    while body < content_length {
        let n = tls.read(&mut buf)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        body += n;
    }
    let reply_len: usize = head
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.strip_prefix('/'))
        .and_then(|p| p.parse().ok())
        .unwrap_or(5);
    let reply = if reply_len == 5 {
        b"hello".to_vec()
    } else {
        vec![b'x'; reply_len]
    };
    let mut out = format!("HTTP/1.1 200 OK\r\nContent-Length: {reply_len}\r\n\r\n").into_bytes();
    out.extend_from_slice(&reply);
    tls.write_all(&out)?;
    if close == Close::Notify {
        tls.conn.send_close_notify();
    }
    tls.flush()?;
    Ok(body)
}

// ---------------------------------------------------------------- client

/// What the client got from one exchange.
#[derive(Debug)]
struct Got {
    reply: Vec<u8>,
    resumed: bool,
    version: Option<ProtocolVersion>,
    suite: Option<CipherSuite>,
    /// Plaintext bytes `write` accepted before the first WouldBlock.
    first_burst: usize,
    /// Whether the handshake completed with the client's last flight still queued.
    flight_pending: bool,
    /// Socket writes made by the first `write` (the request).
    request_writes: usize,
}

/// A socket wrapper that counts write calls.
struct Counted<'a> {
    sock: &'a mut TcpStream,
    writes: usize,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.sock.read(buf)
    }
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writes += 1;
        self.sock.write(buf)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.writes += 1;
        self.sock.write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sock.flush()
    }
}

/// Waits until the socket is ready for `interest` (5 s at most).
fn wait(poll: &mut Poll, sock: &mut TcpStream, interest: Interest) -> io::Result<()> {
    poll.registry().reregister(sock, Token(0), interest)?;
    let mut events = Events::with_capacity(4);
    poll.poll(&mut events, Some(Duration::from_secs(5)))?;
    if events.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "test poll timed out",
        ));
    }
    Ok(())
}

/// The interest a `TlsConn` needs, as the engine derives it.
fn interest(tls: &TlsConn) -> Interest {
    match (tls.wants_read(), tls.wants_write()) {
        (_, false) => Interest::READABLE,
        (false, true) => Interest::WRITABLE,
        (true, true) => Interest::READABLE | Interest::WRITABLE,
    }
}

/// Connects (non-blocking), handshakes, sends `GET /<reply_len>` with a `body_len`
/// body, and reads the reply to end of stream.
fn exchange_sized(
    settings: &TlsSettings,
    cache: Option<&SessionCache>,
    addr: SocketAddr,
    reply_len: usize,
    body_len: usize,
    on_block: Option<&std::sync::mpsc::Sender<()>>,
) -> io::Result<Got> {
    let mut poll = Poll::new()?;
    let mut sock = TcpStream::connect(addr)?;
    poll.registry()
        .register(&mut sock, Token(0), Interest::WRITABLE)?;
    wait(&mut poll, &mut sock, Interest::WRITABLE)?;
    if let Some(e) = sock.take_error()? {
        return Err(e);
    }
    let mut tls = settings.new_connection(cache)?;
    while !tls.handshake(&mut sock)? {
        let i = interest(&tls);
        wait(&mut poll, &mut sock, i)?;
    }
    let flight_pending = tls.wants_write();
    let mut request_writes = 0;
    let mut req = format!("GET /{reply_len} HTTP/1.1\r\nHost: localhost\r\n").into_bytes();
    if body_len > 0 {
        req.extend_from_slice(format!("Content-Length: {body_len}\r\n").as_bytes());
    }
    req.extend_from_slice(b"\r\n");
    req.resize(req.len() + body_len, b'b');
    let (mut off, mut first_burst, mut blocked) = (0, 0, false);
    while off < req.len() {
        let mut counted = Counted {
            sock: &mut sock,
            writes: 0,
        };
        let wrote = tls.write(&mut counted, &req[off..]);
        if off == 0 {
            request_writes = counted.writes;
        }
        match wrote {
            Ok(n) => off += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if !blocked {
                    blocked = true;
                    first_burst = off;
                    if let Some(tx) = on_block {
                        let _ = tx.send(());
                    }
                }
                wait(&mut poll, &mut sock, Interest::WRITABLE)?;
            }
            Err(e) => return Err(e),
        }
    }
    if !blocked {
        first_burst = off;
    }
    while tls.wants_write() {
        tls.flush(&mut sock)?;
        if tls.wants_write() {
            wait(&mut poll, &mut sock, Interest::WRITABLE)?;
        }
    }
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tls.read(&mut sock, &mut buf) {
            Ok(0) => break,
            Ok(n) => reply.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let i = interest(&tls) | Interest::READABLE;
                wait(&mut poll, &mut sock, i)?;
                tls.flush(&mut sock)?;
            }
            Err(e) => return Err(e),
        }
    }
    let conn = tls.connection();
    Ok(Got {
        reply,
        resumed: tls.resumed(),
        version: conn.protocol_version(),
        suite: conn.negotiated_cipher_suite().map(|s| s.suite()),
        first_burst,
        flight_pending,
        request_writes,
    })
}

fn exchange(
    settings: &TlsSettings,
    cache: Option<&SessionCache>,
    addr: SocketAddr,
) -> io::Result<Got> {
    exchange_sized(settings, cache, addr, 5, 0, None)
}

/// The TLS options of `rshperf --ssl` (server `localhost`), as the configuration
/// fills them; a test changes the fields its options set.
fn ssl() -> TlsOptions {
    TlsOptions {
        enabled: true,
        fallback_name: TlsOptions::fallback_for(None, "localhost"),
        ..TlsOptions::default()
    }
}

/// `ssl()` with `--ssl-verify`, then `edit`.
fn verify(edit: impl FnOnce(&mut TlsOptions)) -> TlsOptions {
    let mut o = TlsOptions {
        verify: true,
        ..ssl()
    };
    edit(&mut o);
    o
}

/// `ssl()` with `--ssl-protocol`.
fn pinned(protocol: SslProtocol) -> TlsOptions {
    TlsOptions {
        protocol: Some(protocol),
        ..ssl()
    }
}

fn settings(options: &TlsOptions) -> TlsSettings {
    TlsSettings::from_options(options)
        .expect("valid TLS options")
        .expect("--ssl given")
}

fn usage_text(options: &TlsOptions) -> String {
    match TlsSettings::from_options(options) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected an option error"),
    }
}

const OK_REPLY: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

// ---------------------------------------------------------------- tests

#[test]
fn no_ssl_means_no_settings() {
    let plain = TlsOptions {
        fallback_name: TlsOptions::fallback_for(None, "localhost"),
        ..TlsOptions::default()
    };
    assert!(TlsSettings::from_options(&plain).expect("ok").is_none());
}

#[test]
fn request_reply_with_alpn_and_sni() {
    let pki = Pki::new();
    let (addr, server) = serve(pki.server(false), 1, Close::Notify);
    let got = exchange(&settings(&ssl()), None, addr).expect("exchange");
    assert_eq!(got.reply, OK_REPLY);
    assert!(!got.resumed);
    let seen = server.join().expect("server");
    assert_eq!(seen[0].result, Ok(()));
    assert_eq!(seen[0].alpn.as_deref(), Some(&b"http/1.1"[..]));
    assert_eq!(seen[0].sni.as_deref(), Some("localhost"));
    assert_eq!(seen[0].kind, Some(HandshakeKind::Full));
    assert_eq!(seen[0].version, Some(ProtocolVersion::TLSv1_3));
}

#[test]
fn tcp_eof_without_close_notify_ends_the_stream() {
    let pki = Pki::new();
    let (addr, server) = serve(pki.server(false), 1, Close::TcpOnly);
    let got = exchange(&settings(&ssl()), None, addr).expect("exchange");
    assert_eq!(got.reply, OK_REPLY);
    server.join().expect("server");
}

#[test]
fn large_request_and_reply_with_backpressure() {
    let pki = Pki::new();
    // The server reads the 16 MiB body only once the client's `write` has pushed back
    // (or after 10 s): 16 MiB cannot all fit in socket buffers plus rustls' bounded
    // send buffer, so `write` must push back.
    let (tx, rx) = std::sync::mpsc::channel();
    let (addr, server) = serve_gated(pki.server(false), 1, Close::Notify, Some(rx));
    let body = 16 << 20;
    let got =
        exchange_sized(&settings(&ssl()), None, addr, 3 << 20, body, Some(&tx)).expect("exchange");
    assert!(
        got.first_burst < body,
        "accepted {} at once",
        got.first_burst
    );
    let head = b"HTTP/1.1 200 OK\r\nContent-Length: 3145728\r\n\r\n";
    assert_eq!(got.reply.len(), head.len() + (3 << 20));
    assert!(got.reply.starts_with(head));
    assert_eq!(server.join().expect("server")[0].body_len, body);
}

#[test]
fn session_cache_resumes_within_a_session_only() {
    for proto in [None, Some(SslProtocol::Tls12)] {
        let pki = Pki::new();
        let (addr, server) = serve(pki.server(false), 5, Close::Notify);
        let s = settings(&TlsOptions {
            protocol: proto,
            ..ssl()
        });
        let session = s.session_cache().expect("reuse is the default");
        let other = s.session_cache().expect("reuse is the default");
        let first = exchange(&s, Some(&session), addr).expect("first");
        let second = exchange(&s, Some(&session), addr).expect("second");
        let third = exchange(&s, Some(&session), addr).expect("third");
        let independent = exchange(&s, Some(&other), addr).expect("other session");
        let uncached = exchange(&s, None, addr).expect("no cache");
        let resumed: Vec<bool> = [first, second, third, independent, uncached]
            .iter()
            .map(|g| g.resumed)
            .collect();
        assert_eq!(resumed, [false, true, true, false, false], "{proto:?}");
        let kinds: Vec<_> = server
            .join()
            .expect("server")
            .iter()
            .map(|s| s.kind)
            .collect();
        let (f, r) = (Some(HandshakeKind::Full), Some(HandshakeKind::Resumed));
        assert_eq!(kinds, [f, r, r, f, f], "{proto:?}");
    }
}

#[test]
fn last_handshake_flight_leaves_with_the_request() {
    // TLS 1.3 (full and resumed) and resumed TLS 1.2 end with the client's Finished:
    // it must share one writev with the request, or Nagle holds the request back a
    // delayed-ACK time (40 ms) on sockets without TCP_NODELAY.
    for proto in [SslProtocol::Tls13, SslProtocol::Tls12] {
        let pki = Pki::new();
        let (addr, server) = serve(pki.server(false), 2, Close::Notify);
        let s = settings(&pinned(proto));
        let cache = s.session_cache().expect("reuse");
        let first = exchange(&s, Some(&cache), addr).expect("first");
        let second = exchange(&s, Some(&cache), addr).expect("second");
        assert!(second.resumed, "{proto:?}");
        assert_eq!(
            first.flight_pending,
            proto == SslProtocol::Tls13,
            "{proto:?}"
        );
        assert!(second.flight_pending, "{proto:?}");
        assert_eq!(
            (first.request_writes, second.request_writes),
            (1, 1),
            "{proto:?}"
        );
        server.join().expect("server");
    }
}

#[test]
fn ssl_no_reuse_gives_no_session_cache() {
    let s = settings(&TlsOptions {
        no_reuse: true,
        ..ssl()
    });
    assert!(s.session_cache().is_none());
}

#[test]
fn verification_with_ca_file_and_ca_path_succeeds() {
    let pki = Pki::new();
    for options in [
        verify(|o| o.ca_file = Some(pki.path("ca.pem"))),
        verify(|o| o.ca_path = Some(pki.path("capath"))),
    ] {
        let (addr, server) = serve(pki.server(false), 1, Close::Notify);
        let s = settings(&options);
        let got = exchange(&s, None, addr).expect("verified exchange");
        assert_eq!(got.reply, OK_REPLY);
        server.join().expect("server");
    }
}

#[test]
fn verification_without_the_ca_fails_with_unknown_issuer() {
    let pki = Pki::new();
    match TlsSettings::from_options(&verify(|_| {})) {
        Ok(Some(s)) => {
            let (addr, server) = serve(pki.server(false), 1, Close::Notify);
            let err = exchange(&s, None, addr).expect_err("must fail");
            assert_eq!(err.kind(), io::ErrorKind::InvalidData);
            assert_eq!(err.to_string(), "invalid peer certificate: UnknownIssuer");
            assert!(super::is_certificate_rejection(&err.to_string()));
            assert!(server.join().expect("server")[0].result.is_err());
        }
        // A machine without a system trust store: nothing to verify against.
        Err(e) => assert_eq!(e, TlsOptionError::NoTrustedRoots),
        other => panic!("{other:?}"),
    }
}

#[test]
fn verification_checks_the_name() {
    let pki = Pki::new();
    let (addr, server) = serve(pki.server(false), 1, Close::Notify);
    let s = settings(&verify(|o| {
        o.ca_file = Some(pki.path("ca.pem"));
        o.server_name = Some("other.test".to_string());
    }));
    let err = exchange(&s, None, addr).expect_err("wrong name");
    assert!(
        err.to_string()
            .contains("not valid for name \"other.test\""),
        "{err}"
    );
    assert_eq!(
        server.join().expect("server")[0].sni.as_deref(),
        Some("other.test")
    );
}

#[test]
fn verification_off_accepts_a_self_signed_certificate() {
    let pki = Pki::new();
    let (addr, server) = serve(pki.server(true), 1, Close::Notify);
    let got = exchange(&settings(&ssl()), None, addr).expect("exchange");
    assert_eq!(got.reply, OK_REPLY);
    server.join().expect("server");
    // The same server with verification on fails.
    let (addr, server) = serve(pki.server(true), 1, Close::Notify);
    let ca = verify(|o| o.ca_file = Some(pki.path("ca.pem")));
    let err = exchange(&settings(&ca), None, addr).expect_err("self-signed must fail verification");
    assert!(
        err.to_string().starts_with("invalid peer certificate"),
        "{err}"
    );
    server.join().expect("server");
}

#[test]
fn self_signed_ca_server_certificate_listed_in_ca_file_is_trusted_by_name() {
    // webpki alone rejects a CA:TRUE certificate as an end entity; `TrustedOrWebPki`
    // trusts it when --ssl-ca-file lists it (as OpenSSL does), still checking the name.
    let pki = Pki::new();
    let key = KeyPair::generate().expect("key");
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).expect("self-signed CA");
    pki.write("self-ca.pem", &cert.pem());
    let (der, key) = (cert.der().clone(), key.serialize_der());
    let listed = pki.path("self-ca.pem");
    let unlisted = pki.path("ca.pem");

    let (addr, server) = serve(pki.server_with(&der, &key, None), 1, Close::Notify);
    let s = settings(&verify(|o| o.ca_file = Some(listed.clone())));
    let got = exchange(&s, None, addr).expect("listed and named: trusted");
    assert_eq!(got.reply, OK_REPLY);
    assert_eq!(server.join().expect("server")[0].result, Ok(()));

    let (addr, server) = serve(pki.server_with(&der, &key, None), 1, Close::Notify);
    let s = settings(&verify(|o| {
        o.ca_file = Some(listed.clone());
        o.server_name = Some("other.test".to_string());
    }));
    let err = exchange(&s, None, addr).expect_err("listed but misnamed");
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    assert!(
        err.to_string()
            .contains("not valid for name \"other.test\""),
        "{err}"
    );
    assert!(server.join().expect("server")[0].result.is_err());

    let (addr, server) = serve(pki.server_with(&der, &key, None), 1, Close::Notify);
    let s = settings(&verify(|o| o.ca_file = Some(unlisted)));
    let err = exchange(&s, None, addr).expect_err("not listed");
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    assert!(
        err.to_string().starts_with("invalid peer certificate"),
        "{err}"
    );
    assert!(server.join().expect("server")[0].result.is_err());
}

#[test]
fn client_certificate_is_sent_and_required() {
    let pki = Pki::new();
    let separate = TlsOptions {
        certificate: Some(pki.path("client.pem")),
        key: Some(pki.path("client.key")),
        ..ssl()
    };
    let both = TlsOptions {
        certificate: Some(pki.path("both.pem")),
        ..ssl()
    };
    for options in [separate, both] {
        let server_cfg = pki.server_with(&pki.leaf.0, &pki.leaf.1, Some(&pki.ca_der));
        let (addr, server) = serve(server_cfg, 1, Close::Notify);
        let got = exchange(&settings(&options), None, addr).expect("client auth");
        assert_eq!(got.reply, OK_REPLY);
        let seen = server.join().expect("server");
        assert_eq!(seen[0].result, Ok(()));
        assert!(seen[0].client_cert);
    }
    for proto in [SslProtocol::Tls13, SslProtocol::Tls12] {
        let server_cfg = pki.server_with(&pki.leaf.0, &pki.leaf.1, Some(&pki.ca_der));
        let (addr, server) = serve(server_cfg, 1, Close::Notify);
        let s = settings(&pinned(proto));
        let err = exchange(&s, None, addr).expect_err("no client certificate");
        assert!(err.to_string().contains("alert"), "{proto:?}: {err}");
        assert!(server.join().expect("server")[0].result.is_err());
    }
}

#[test]
fn pinned_protocols_and_ciphers_are_negotiated() {
    let pki = Pki::new();
    let ciphers = |list: &str| TlsOptions {
        ciphers: Some(list.to_string()),
        ..ssl()
    };
    let cases = [
        (pinned(SslProtocol::Tls12), ProtocolVersion::TLSv1_2, None),
        (pinned(SslProtocol::Tls13), ProtocolVersion::TLSv1_3, None),
        (
            ciphers("ECDHE-ECDSA-CHACHA20-POLY1305"),
            ProtocolVersion::TLSv1_2,
            Some(CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256),
        ),
        (
            ciphers("TLS_CHACHA20_POLY1305_SHA256:ECDHE-RSA-AES128-GCM-SHA256"),
            ProtocolVersion::TLSv1_3,
            Some(CipherSuite::TLS13_CHACHA20_POLY1305_SHA256),
        ),
    ];
    for (opts, version, suite) in cases {
        let (addr, server) = serve(pki.server(false), 1, Close::Notify);
        let got = exchange(&settings(&opts), None, addr).expect("exchange");
        assert_eq!(got.version, Some(version), "{opts:?}");
        let seen = server.join().expect("server");
        assert_eq!(seen[0].version, Some(version), "{opts:?}");
        if suite.is_some() {
            assert_eq!(got.suite, suite, "{opts:?}");
            assert_eq!(seen[0].suite, suite, "{opts:?}");
        }
    }
}

#[test]
fn ip_literal_server_sends_no_sni() {
    let pki = Pki::new();
    let (addr, server) = serve(pki.server(false), 1, Close::Notify);
    let s = settings(&TlsOptions {
        fallback_name: TlsOptions::fallback_for(None, "127.0.0.1"),
        ..ssl()
    });
    assert!(matches!(s.server_name(), ServerName::IpAddress(_)));
    exchange(&s, None, addr).expect("exchange");
    assert_eq!(server.join().expect("server")[0].sni, None);
}

#[test]
fn server_name_precedence() {
    // (--tls-server-name, --server-name) with --server localhost.
    let options = |tls: Option<&str>, www: Option<&str>| TlsOptions {
        server_name: tls.map(str::to_string),
        fallback_name: TlsOptions::fallback_for(www, "localhost"),
        ..ssl()
    };
    let name = |tls, www| format!("{:?}", settings(&options(tls, www)).server_name());
    assert!(name(None, None).contains("\"localhost\""));
    assert!(name(None, Some("www.test:8443")).contains("\"www.test\""));
    assert!(name(Some("sni.test"), Some("www.test")).contains("\"sni.test\""));
    assert!(name(None, Some("[::1]:8443")).contains("IpAddress"));
    assert_eq!(
        usage_text(&options(Some("bad name"), None)),
        "--tls-server-name bad name: not a valid TLS server name"
    );
}

#[test]
fn old_protocols_are_option_errors() {
    for (arg, name) in [
        (SslProtocol::Tls10, "TLSv1.0"),
        (SslProtocol::Tls11, "TLSv1.1"),
    ] {
        assert_eq!(
            usage_text(&pinned(arg)),
            format!(
                "--ssl-protocol {name} is not offered by rustls (use auto, TLSv1.2 or TLSv1.3)"
            )
        );
    }
}

#[test]
fn cipher_list_errors() {
    assert_eq!(
        usage_text(&TlsOptions {
            ciphers: Some("RC4-MD5:DES-CBC3-SHA".to_string()),
            ..ssl()
        }),
        "--ssl-ciphers: no supported cipher suite in 'RC4-MD5:DES-CBC3-SHA' \
         (unsupported: RC4-MD5, DES-CBC3-SHA)"
    );
    assert_eq!(
        usage_text(&TlsOptions {
            ciphers: Some("ECDHE-RSA-AES128-GCM-SHA256".to_string()),
            ..pinned(SslProtocol::Tls13)
        }),
        "--ssl-ciphers: no cipher suite in 'ECDHE-RSA-AES128-GCM-SHA256' can be used \
         with --ssl-protocol TLSv1.3"
    );
    // TLS 1.2 suites with TLS 1.2 pinned are fine.
    settings(&TlsOptions {
        ciphers: Some("ECDHE-RSA-AES128-GCM-SHA256".to_string()),
        ..pinned(SslProtocol::Tls12)
    });
}

#[test]
fn certificate_and_key_file_errors() {
    let pki = Pki::new();
    // `--ssl-certificate` and `--ssl-key` of these files.
    let files = |cert: Option<&str>, key: Option<&str>| TlsOptions {
        certificate: cert.map(|f| pki.path(f)),
        key: key.map(|f| pki.path(f)),
        ..ssl()
    };
    assert_eq!(
        usage_text(&files(Some("client.pem"), Some("other.key"))),
        format!(
            "--ssl-certificate {} and --ssl-key {} do not match (SSL certificate and key \
             failed consistency check)",
            pki.path("client.pem"),
            pki.path("other.key")
        )
    );
    let missing = usage_text(&files(Some("missing.pem"), None));
    assert!(
        missing.starts_with(&format!("--ssl-certificate {}: ", pki.path("missing.pem"))),
        "{missing}"
    );
    let nokey = usage_text(&files(Some("client.pem"), None));
    assert!(
        nokey.starts_with(&format!(
            "--ssl-key {}: no PEM private key",
            pki.path("client.pem")
        )),
        "{nokey}"
    );
    let garbage = usage_text(&files(Some("garbage.pem"), None));
    assert!(garbage.contains("no PEM certificate"), "{garbage}");
    assert_eq!(
        usage_text(&files(None, Some("client.key"))),
        "--ssl-key requires --ssl-certificate"
    );
    let ca = usage_text(&verify(|o| o.ca_file = Some(pki.path("missing.pem"))));
    assert!(ca.starts_with("--ssl-ca-file "), "{ca}");
    let capath = usage_text(&verify(|o| o.ca_path = Some(pki.path("nodir"))));
    assert!(capath.starts_with("--ssl-ca-path "), "{capath}");
}

#[test]
fn only_certificate_errors_are_rejections() {
    use rustls::{CertificateError, Error};
    for e in [
        Error::InvalidCertificate(CertificateError::UnknownIssuer),
        Error::InvalidCertificate(CertificateError::Expired),
        Error::InvalidCertificate(CertificateError::NotValidForName),
    ] {
        assert!(super::is_certificate_rejection(&e.to_string()), "{e}");
    }
    for e in [
        Error::NoApplicationProtocol,
        Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType),
        Error::AlertReceived(rustls::AlertDescription::HandshakeFailure),
    ] {
        assert!(!super::is_certificate_rejection(&e.to_string()), "{e}");
    }
}
