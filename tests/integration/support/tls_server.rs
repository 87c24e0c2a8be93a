//! An in-process HTTPS/1.1 server on 127.0.0.1:0 (rustls, one thread per connection)
//! and the test PKI it serves, made by rcgen at test time.
//!
//! The server does the handshake, records what was negotiated (full or resumed,
//! protocol version, cipher suite, SNI, client certificate), then answers every request
//! on the connection with `200` and a 5-byte body until the client closes. Failed
//! handshakes are recorded with rustls' reason. Tests compare these records with
//! rshperf's report.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{
    CipherSuite, HandshakeKind, ProtocolVersion, RootCertStore, ServerConfig, ServerConnection,
};

/// The reply to every request.
pub const REPLY: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

/// A test PKI in a private directory (removed on drop): `ca.pem` (the CA), a leaf for
/// `localhost` signed by it, `client.pem`/`client.key` (a client certificate signed by
/// it), and `self-ca.pem`, a self-signed `localhost` certificate with CA:TRUE.
pub struct Pki {
    dir: PathBuf,
    ca: CertificateDer<'static>,
    leaf: (CertificateDer<'static>, Vec<u8>),
    self_ca: (CertificateDer<'static>, Vec<u8>),
}

impl Pki {
    /// Generates the certificates and writes the PEM files.
    pub fn new() -> Pki {
        static SEQ: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "rshperf-it-tls-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let ca_key = KeyPair::generate().expect("key");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "rshperf integration CA");
        let ca = ca_params.self_signed(&ca_key).expect("CA");
        let issuer = Issuer::from_params(&ca_params, &ca_key);
        let signed = |name: &str| {
            let key = KeyPair::generate().expect("key");
            let cert = CertificateParams::new(vec![name.to_string()])
                .expect("params")
                .signed_by(&key, &issuer)
                .expect("signed");
            (cert, key)
        };
        let (leaf, leaf_key) = signed("localhost");
        let (client, client_key) = signed("client.test");
        let self_key = KeyPair::generate().expect("key");
        let mut self_params = CertificateParams::new(vec!["localhost".into()]).expect("params");
        self_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let self_ca = self_params.self_signed(&self_key).expect("self-signed");
        let pki = Pki {
            dir,
            ca: ca.der().clone(),
            leaf: (leaf.der().clone(), leaf_key.serialize_der()),
            self_ca: (self_ca.der().clone(), self_key.serialize_der()),
        };
        pki.write("ca.pem", &ca.pem());
        pki.write("client.pem", &client.pem());
        pki.write("client.key", &client_key.serialize_pem());
        pki.write("self-ca.pem", &self_ca.pem());
        pki
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.dir.join(name), text).expect("write PEM");
    }

    /// The path of one of the PEM files.
    pub fn path(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }

    /// A server (TLS 1.2 and 1.3, ALPN http/1.1) presenting the CA-signed `localhost`
    /// leaf; with `client_auth`, it requires a client certificate signed by the CA.
    pub fn server_config(&self, client_auth: bool) -> ServerConfig {
        let client_ca = client_auth.then_some(&self.ca);
        server_config(&self.leaf.0, &self.leaf.1, client_ca)
    }

    /// A server presenting the self-signed CA:TRUE `localhost` certificate.
    pub fn self_signed_server_config(&self) -> ServerConfig {
        server_config(&self.self_ca.0, &self.self_ca.1, None)
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn server_config(
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

/// One completed server-side handshake.
#[derive(Clone, Debug)]
pub struct Handshake {
    /// Full or resumed.
    pub kind: Option<HandshakeKind>,
    /// Negotiated protocol version.
    pub version: Option<ProtocolVersion>,
    /// Negotiated cipher suite.
    pub suite: Option<CipherSuite>,
    /// SNI sent by the client.
    pub sni: Option<String>,
    /// Whether the client presented a certificate.
    pub client_cert: bool,
    /// Requests answered on this connection.
    pub requests: u64,
}

/// What the server saw.
#[derive(Default, Debug)]
pub struct Seen {
    /// Accepted TCP connections.
    pub connections: AtomicU64,
    /// Requests answered.
    pub requests: AtomicU64,
    /// Completed handshakes, in completion order.
    pub handshakes: Mutex<Vec<Handshake>>,
    /// Failed handshakes: rustls' (or the socket's) reason.
    pub failures: Mutex<Vec<String>>,
}

/// A running HTTPS test server.
pub struct TlsServer {
    /// Its address.
    pub addr: SocketAddr,
    /// What it saw.
    pub seen: Arc<Seen>,
    stop: Arc<AtomicBool>,
}

impl TlsServer {
    /// Starts a server with `cfg` on 127.0.0.1:0.
    pub fn start(cfg: ServerConfig) -> TlsServer {
        TlsServer::start_slow(cfg, Duration::ZERO)
    }

    /// Starts a server with `cfg` on 127.0.0.1:0 that waits `delay` on each new
    /// connection before it answers the client's hello: every handshake takes at
    /// least that long.
    pub fn start_slow(cfg: ServerConfig, delay: Duration) -> TlsServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind TLS test server");
        let addr = listener.local_addr().expect("local addr");
        let seen = Arc::new(Seen::default());
        let stop = Arc::new(AtomicBool::new(false));
        let cfg = Arc::new(cfg);
        let (s, st) = (Arc::clone(&seen), Arc::clone(&stop));
        thread::spawn(move || {
            for stream in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                s.connections.fetch_add(1, Ordering::SeqCst);
                let (s, cfg) = (Arc::clone(&s), Arc::clone(&cfg));
                thread::spawn(move || {
                    thread::sleep(delay);
                    serve(stream, cfg, &s)
                });
            }
        });
        TlsServer { addr, seen, stop }
    }

    /// Starts a server with `cfg` on the unix socket `path` (for `--unix-socket
    /// --ssl`); the caller removes the socket file. `addr` is unused (0.0.0.0:0).
    pub fn start_unix(cfg: ServerConfig, path: &str) -> TlsServer {
        let _ = std::fs::remove_file(path);
        let listener = std::os::unix::net::UnixListener::bind(path).expect("bind unix TLS server");
        let seen = Arc::new(Seen::default());
        let stop = Arc::new(AtomicBool::new(false));
        let cfg = Arc::new(cfg);
        let s = Arc::clone(&seen);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                s.connections.fetch_add(1, Ordering::SeqCst);
                let (s, cfg) = (Arc::clone(&s), Arc::clone(&cfg));
                thread::spawn(move || serve_stream(stream, cfg, &s));
            }
        });
        TlsServer {
            addr: SocketAddr::from(([0, 0, 0, 0], 0)),
            seen,
            stop,
        }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.seen.requests.load(Ordering::SeqCst)
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.seen.connections.load(Ordering::SeqCst)
    }

    /// The completed handshakes so far.
    pub fn handshakes(&self) -> Vec<Handshake> {
        self.seen.handshakes.lock().expect("lock").clone()
    }

    /// The failed handshakes so far.
    pub fn failures(&self) -> Vec<String> {
        self.seen.failures.lock().expect("lock").clone()
    }

    /// (full, resumed) handshakes completed so far.
    pub fn kinds(&self) -> (usize, usize) {
        let h = self.handshakes();
        let count = |k| h.iter().filter(|h| h.kind == Some(k)).count();
        (count(HandshakeKind::Full), count(HandshakeKind::Resumed))
    }

    /// Waits (up to 10 s) until every accepted connection has finished or failed its
    /// handshake: rshperf may exit before the server has read its last alert or FIN.
    pub fn settle(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let done = {
                let h = self.seen.handshakes.lock().expect("lock").len();
                let f = self.seen.failures.lock().expect("lock").len();
                (h + f) as u64
            };
            if done >= self.connections() || Instant::now() > deadline {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if self.addr.port() == 0 {
            // A unix-socket server: its accept thread ends with the process.
            return;
        }
        let _ = TcpStream::connect(self.addr);
    }
}

/// One connection: handshake, record it, then answer requests until the client closes.
fn serve(sock: TcpStream, cfg: Arc<ServerConfig>, seen: &Seen) {
    let _ = sock.set_read_timeout(Some(Duration::from_secs(10)));
    serve_stream(sock, cfg, seen);
}

/// `serve` over any blocking stream (TCP, or a unix socket: `start_unix`).
fn serve_stream<S: Read + Write>(mut sock: S, cfg: Arc<ServerConfig>, seen: &Seen) {
    let mut conn = ServerConnection::new(cfg).expect("server connection");
    if let Err(e) = handshake(&mut conn, &mut sock) {
        seen.failures.lock().expect("lock").push(e.to_string());
        return;
    }
    let index = {
        let mut hs = seen.handshakes.lock().expect("lock");
        hs.push(Handshake {
            kind: conn.handshake_kind(),
            version: conn.protocol_version(),
            suite: conn.negotiated_cipher_suite().map(|s| s.suite()),
            sni: conn.server_name().map(str::to_string),
            client_cert: conn.peer_certificates().is_some(),
            requests: 0,
        });
        hs.len() - 1
    };
    let mut tls = rustls::Stream::new(&mut conn, &mut sock);
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            pending.drain(..end + 4);
            seen.requests.fetch_add(1, Ordering::SeqCst);
            seen.handshakes.lock().expect("lock")[index].requests += 1;
            if tls.write_all(REPLY).and_then(|()| tls.flush()).is_err() {
                return;
            }
        }
        match tls.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    }
}

/// Completes the server handshake over a blocking socket.
fn handshake<S: Read + Write>(conn: &mut ServerConnection, sock: &mut S) -> io::Result<()> {
    while conn.is_handshaking() {
        if conn.complete_io(sock)? == (0, 0) && conn.is_handshaking() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    }
    Ok(())
}
